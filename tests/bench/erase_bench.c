/*
 * erase_bench.c - how long deleting an account with a million fans takes,
 * from the deletion's reply to the last fan's inbox purged.
 *
 * Runs the five daemons (wbt_cluster), registers the account and its fans
 * with user.register_many, makes them follow it with rel.follow_many (the
 * setup's follows backfill nothing: WARBLE_BACKFILL=0, which the erasure
 * does not use), lets the account post, waits until every post is in
 * every fan's inbox, and deletes it through the gateway.  Then it watches
 * the services' stats and prints when each part was done, counted from
 * the deletion: relation (every edge removed, one "unfollow" a fan),
 * content, and the inbox (every fan's inbox purged: relation's log all
 * applied), the CPU each process spent on it, and a check of a sample of
 * the fans' inboxes and counts.
 *
 *   build/bench/erase_bench [fans (default 1000000)] [posts (default 3)]
 *
 * ERASE_BENCH_ENV="K=V ..." adds to the daemons' environment.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_client.h"
#include "warble.h"
#include "wb_clock.h"
#include "wbt.h"
#include "wbt_cluster.h"

#define EB_BULK    10000
#define EB_PASS    "erase-bench-1"
#define EB_MAX_ENV 16
#define EB_SAMPLE  1000 /* fans whose inbox and counts are checked at the end */

static wbt_cluster cl;

/* eb_call sends req (freed) to url with a long deadline; the reply, or NULL after a message. */
static wb_obj *
eb_call(const char *url, wb_obj *req)
{
	rt_client_opts o = { .timeout_ms = 600000 };
	rt_client     *c = NULL;
	wb_obj        *rep = NULL;
	int            rc = rt_client_open(&c, url, &o);

	if (rc == WB_OK) {
		rc = rt_call(c, req, &rep);
		rt_client_close(c);
	}
	if (rc != WB_OK) {
		fprintf(stderr, "erase_bench: %s on %s: %s\n", wb_op_name(wb_op_of(req)), url,
		    wb_err_name(rc));
		wb_msg_free(rep);
		rep = NULL;
	}
	wb_msg_free(req);
	return rep;
}

/* eb_gauge reads a gauge of the service at url (UINT64_MAX if it does not answer or lacks it). */
static uint64_t
eb_gauge(const char *url, const char *name)
{
	wb_obj  *rep = eb_call(url, wb_request(WB_OP_STATS));
	uint64_t v = rep != NULL ? wbt_gauge(rep, name) : UINT64_MAX;

	wb_msg_free(rep);
	return v;
}

/* eb_caught_up tells whether the inbox has applied every event of content's and relation's logs. */
static bool
eb_caught_up(void)
{
	return eb_gauge(cl.inbox_url, "content_applied") >=
	           eb_gauge(cl.content_url, "log_last_seq") &&
	       eb_gauge(cl.inbox_url, "relation_applied") >=
	           eb_gauge(cl.relation_url, "log_last_seq");
}

/* eb_loadavg reads the 1-minute load average. */
static double
eb_loadavg(void)
{
	double l = -1;
	FILE  *f = fopen("/proc/loadavg", "r");

	if (f != NULL) {
		if (fscanf(f, "%lf", &l) != 1) {
			l = -1;
		}
		fclose(f);
	}
	return l;
}

int
main(int argc, char **argv)
{
	uint64_t    nfans = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	uint64_t    nposts = argc > 2 ? strtoull(argv[2], NULL, 10) : 3;
	const char *env[EB_MAX_ENV + 1];
	char        envbuf[1024];
	int         ne = 0, rc = 1;
	uint64_t   *fans = NULL, x = 0;

	if (nfans < EB_BULK || nfans % EB_BULK != 0 || nfans > 10000000 || nposts < 1 ||
	    nposts > 100) {
		fprintf(
		    stderr, "usage: erase_bench [fans: a multiple of %d] [posts 1-100]\n", EB_BULK);
		return 2;
	}
	env[ne++] = "WARBLE_LOG_LEVEL=warn";
	env[ne++] = "WARBLE_BACKFILL=0";
	if (getenv("ERASE_BENCH_ENV") != NULL) {
		snprintf(envbuf, sizeof(envbuf), "%s", getenv("ERASE_BENCH_ENV"));
		for (char *save = NULL, *tok = strtok_r(envbuf, " ", &save);
		     tok != NULL && ne < EB_MAX_ENV; tok = strtok_r(NULL, " ", &save)) {
			env[ne++] = tok;
		}
	}
	env[ne] = NULL;
	if ((fans = calloc(nfans, sizeof(*fans))) == NULL ||
	    wbt_cluster_start_as(&cl, env, WBT_FIVE) != 0) {
		free(fans);
		return 1;
	}
	warble_client *c = NULL;
	long long      t0 = wbt_now_ms();
	if (warble_open(&c, cl.gateway_url, 600000) != WARBLE_OK ||
	    warble_register(c, "erasebench", EB_PASS, &x) != WARBLE_OK) {
		fprintf(stderr, "erase_bench: cannot register the account\n");
		goto out;
	}
	for (uint64_t off = 0; off < nfans; off += EB_BULK) {
		wb_obj         *req = wb_request(WB_OP_USER_REGISTER_MANY), *rep;
		const uint64_t *v = NULL;
		size_t          nv = 0;
		wb_set_cstr(req, WB_F_NAME, "ebfan");
		wb_set_u64(req, WB_F_FROM, off);
		wb_set_u64(req, WB_F_LIMIT, EB_BULK);
		wb_set_cstr(req, WB_F_PASSWORD, EB_PASS);
		if ((rep = eb_call(cl.user_url, req)) == NULL ||
		    !wb_get_u64s(rep, WB_F_UIDS, &v, &nv) || nv != EB_BULK) {
			wb_msg_free(rep);
			goto out;
		}
		memcpy(&fans[off], v, EB_BULK * sizeof(*fans));
		wb_msg_free(rep);
		req = wb_request(WB_OP_REL_FOLLOW_MANY);
		wb_set_u64(req, WB_F_TARGET, x);
		wb_set_u64s(req, WB_F_UIDS, &fans[off], EB_BULK);
		if ((rep = eb_call(cl.relation_url, req)) == NULL) {
			goto out;
		}
		wb_msg_free(rep);
	}
	if (warble_login(c, "erasebench", EB_PASS, NULL) != WARBLE_OK) {
		goto out;
	}
	for (uint64_t p = 0; p < nposts; p++) {
		if (warble_post(c, "a post of an account about to go", NULL) != WARBLE_OK) {
			goto out;
		}
	}
	while (!eb_caught_up()) {
		wbt_sleep_ms(200);
	}
	long long setup_ms = wbt_now_ms() - t0;

	/* the deletion, and each service's part of the erasure, timed from the request */
	static const char *const procs[] = { "user", "relation", "content", "inbox", "gateway" };
	const char *urls[] = { cl.user_url, cl.relation_url, cl.content_url, cl.inbox_url,
		cl.gateway_url };
	uint64_t    cpu0[5], cpu1[5], edges0 = eb_gauge(cl.relation_url, "erased_edges");
	uint64_t    cells0 = eb_gauge(cl.inbox_url, "cells_deleted");
	double      load = eb_loadavg();
	for (int i = 0; i < 5; i++) {
		cpu0[i] = eb_gauge(urls[i], "process_cpu_us");
	}
	fprintf(stderr, "erase_bench: set up; deleting the account\n");
	long long td = wbt_now_ms(), closed = -1, rel = -1, content = -1, inbox_row = -1, all = -1;
	if (warble_delete_account(c, EB_PASS) != WARBLE_OK) {
		fprintf(stderr, "erase_bench: delete: %s\n", warble_errmsg(c));
		goto out;
	}
	closed = wbt_now_ms() - td;
	while (all < 0) {
		long long now = wbt_now_ms() - td;
		if (rel < 0 && eb_gauge(cl.relation_url, "user_applied") >= 1) {
			rel = now;
		}
		if (content < 0 && eb_gauge(cl.content_url, "user_applied") >= 1) {
			content = now;
		}
		if (inbox_row < 0 && eb_gauge(cl.inbox_url, "user_applied") >= 1) {
			inbox_row = now;
		}
		if (rel >= 0 && content >= 0 && inbox_row >= 0 && eb_caught_up()) {
			all = now;
		}
		wbt_sleep_ms(20);
	}
	for (int i = 0; i < 5; i++) {
		cpu1[i] = eb_gauge(urls[i], "process_cpu_us");
	}
	uint64_t edges = eb_gauge(cl.relation_url, "erased_edges") - edges0;
	uint64_t cells = eb_gauge(cl.inbox_url, "cells_deleted") - cells0;

	/* a sample of the fans: no post of it left, following nobody */
	size_t bad = 0;
	for (uint64_t i = 0; i < nfans; i += nfans / EB_SAMPLE) {
		wb_obj       *req = wb_request(WB_OP_INBOX_HOME), *rep;
		const wb_obj *posts = NULL;
		size_t        np = 0;
		wb_set_u64(req, WB_F_UID, fans[i]);
		if ((rep = eb_call(cl.inbox_url, req)) == NULL) {
			goto out;
		}
		(void)wb_get_objs(rep, WB_F_POSTS, &posts, &np);
		bad += np != 0;
		wb_msg_free(rep);
		req = wb_request(WB_OP_REL_COUNTS);
		wb_set_u64s(req, WB_F_UIDS, &fans[i], 1);
		const wb_obj *u = NULL;
		size_t        nu = 0;
		if ((rep = eb_call(cl.relation_url, req)) == NULL) {
			goto out;
		}
		bad += !wb_get_objs(rep, WB_F_USERS, &u, &nu) || nu != 1 ||
		       wb_u64(&u[0], WB_F_FOLLOWING, 1) != 0;
		wb_msg_free(rep);
	}
	printf("erase_bench: %llu fans, %llu posts each in their inboxes (set up in %.1f s); load "
	       "%.2f before\n",
	    (unsigned long long)nfans, (unsigned long long)nposts, (double)setup_ms / 1000.0, load);
	printf("erase_bench: deleted: reply %lld ms; relation done %.2f s (%llu edges); content "
	       "%.2f s; its inbox row %.2f s; every fan's inbox purged %.2f s (%llu cells)\n",
	    closed, (double)rel / 1000.0, (unsigned long long)edges, (double)content / 1000.0,
	    (double)inbox_row / 1000.0, (double)all / 1000.0, (unsigned long long)cells);
	printf("erase_bench: CPU s:");
	for (int i = 0; i < 5; i++) {
		printf(" %s %.2f", procs[i], (double)(cpu1[i] - cpu0[i]) / 1e6);
	}
	printf("; sample of %d fans: %zu not erased\n", EB_SAMPLE, bad);
	rc = bad == 0 && edges == nfans && cells == nfans * nposts ? 0 : 1;
out:
	warble_close(c);
	free(fans);
	if (wbt_cluster_stop(&cl, 60000) != 0) {
		rc = 1;
	}
	return rc;
}
