/*
 * hybrid_bench.c - what hybrid fan-out saves on write and costs on read.
 *
 * Starts a real cluster (five daemons, tests/support/wbt_cluster.h) with
 * WARBLE_FANOUT_LIMIT = limit, and makes with the bulk operations
 * (user.register_many, rel.follow_many):
 *
 *   big0..big4   FANS followers each (over the limit: big)
 *   mid          limit followers (at the limit: fanned out)
 *   small0..19   no followers but the two readers
 *   reader A     follows big0..big4 and small0..19
 *   reader B     follows small0..19 (no big account)
 *
 * Each big account posts once (that fan-out finds it over the limit),
 * then POSTS posts each by the big accounts, by mid and by the small
 * ones, published straight to content; after each group the inbox's
 * cells_written tells the cells a post wrote.  Then inbox.home {limit 20}
 * is asked READS times for A and for B, alternating in runs of 100 on one
 * connection, straight from the inbox (the merge is there), and p50, p99
 * and max of each are printed.  Publish-to-visible: 20 posts of big0 and
 * of mid, one at a time, each timed from the publish until 100 sampled
 * followers' newest home post is it (polled straight from the inbox).
 *
 *   build/bench/hybrid_bench [fans (20000)] [limit (10000)] [reads (20000)] [posts (40)]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_client.h"
#include "wbt.h"
#include "wbt_cluster.h"
#include "wb_clock.h"

#define HY_BIG   5
#define HY_SMALL 20
#define HY_RUN   100 /* reads of one reader before switching to the other */

static uint64_t    nfans = 20000, limit = 10000, nreads = 20000, nposts = 40;
static wbt_cluster cl;
static uint64_t    npublished; /* content log seq: posts published */

/* hy_caught_up waits until the inbox has applied every post and every relation event. */
static int
hy_caught_up(rt_client *in, double *secs)
{
	long long t0 = wbt_now_ms();

	for (;;) {
		uint64_t ca = wbt_stat(in, "content_applied"),
		         behind = wbt_stat(in, "events_behind");
		if (ca != UINT64_MAX && ca >= npublished && behind == 0) {
			*secs = (double)(wbt_now_ms() - t0) / 1000.0;
			/* the applied seq is stored with an event's last cells, and
			 * cells_written counted just after: wait until it holds still */
			for (uint64_t c0 = UINT64_MAX, c1;; c0 = c1) {
				wbt_sleep_ms(50);
				if ((c1 = wbt_stat(in, "cells_written")) == c0) {
					return 0;
				}
			}
		}
		if (wbt_now_ms() - t0 > 600000) {
			fprintf(stderr, "hybrid_bench: the inbox never caught up\n");
			return -1;
		}
		wbt_sleep_ms(5);
	}
}

/* hy_publish publishes one post by uid straight to content (its id in *id, if not NULL). */
static int
hy_publish_id(rt_client *content, uint64_t uid, uint64_t *id)
{
	wb_obj *req = wb_request(WB_OP_POST_PUBLISH), *rep = NULL;
	char    text[64];
	int     rc;

	snprintf(text, sizeof(text), "post %llu", (unsigned long long)npublished);
	wb_set_u64(req, WB_F_UID, uid);
	wb_set_cstr(req, WB_F_TEXT, text);
	rc = wbt_call(content, req, &rep);
	if (rc == WB_OK && id != NULL) {
		*id = wb_u64(rep, WB_F_ID, 0);
	}
	wb_msg_free(rep);
	if (rc != WB_OK) {
		fprintf(stderr, "hybrid_bench: post.publish: %s\n", wb_strerror(rc));
		return -1;
	}
	npublished++;
	return 0;
}

static int
hy_publish(rt_client *content, uint64_t uid)
{
	return hy_publish_id(content, uid, NULL);
}

/* hy_follow makes uids[0..n) follow target (rel.follow_many, 10,000 a call). */
static int
hy_follow(rt_client *rel, uint64_t target, const uint64_t *uids, size_t n)
{
	for (size_t a = 0; a < n; a += 10000) {
		size_t  k = n - a < 10000 ? n - a : 10000;
		wb_obj *req = wb_request(WB_OP_REL_FOLLOW_MANY), *rep = NULL;
		int     rc;

		wb_set_u64(req, WB_F_TARGET, target);
		wb_set_u64s(req, WB_F_UIDS, uids + a, k);
		rc = wbt_call(rel, req, &rep);
		wb_msg_free(rep);
		if (rc != WB_OK) {
			fprintf(stderr, "hybrid_bench: follow_many: %s\n", wb_strerror(rc));
			return -1;
		}
	}
	return 0;
}

/* hy_group publishes nposts posts by each of uids[0..n) and prints the cells a post wrote. */
static int
hy_group(rt_client *content, rt_client *in, const char *what, const uint64_t *uids, size_t n)
{
	double   secs;
	uint64_t c0 = wbt_stat(in, "cells_written"), c1;

	for (uint64_t p = 0; p < nposts; p++) {
		for (size_t i = 0; i < n; i++) {
			if (hy_publish(content, uids[i]) != 0) {
				return -1;
			}
		}
	}
	if (hy_caught_up(in, &secs) != 0) {
		return -1;
	}
	c1 = wbt_stat(in, "cells_written");
	printf("hybrid_bench: %-34s %6llu posts, %10.1f cells a post (inbox done %.2f s after)\n",
	    what, (unsigned long long)(nposts * n), (double)(c1 - c0) / (double)(nposts * n), secs);
	return 0;
}

static int
hy_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int hy_cmp_u64(const void *a, const void *b);

/* hy_visible publishes HY_VIS posts by author, each once the last is seen, and prints the
 * publish-to-visible times: until each of HY_SAMPLE fans' newest home post is it. */
#define HY_VIS    20
#define HY_SAMPLE 100
static int
hy_visible(rt_client *content, rt_client *in, const char *what, uint64_t author,
    const uint64_t *fans, size_t nf)
{
	uint64_t us[HY_VIS];
	bool     seen[HY_SAMPLE];

	for (int p = 0; p < HY_VIS; p++) {
		uint64_t id = 0, t0 = wb_mono_us();
		size_t   left = HY_SAMPLE;
		if (hy_publish_id(content, author, &id) != 0) {
			return -1;
		}
		memset(seen, 0, sizeof(seen));
		while (left > 0) {
			for (size_t i = 0; i < HY_SAMPLE; i++) {
				wb_obj       *req = wb_request(WB_OP_INBOX_HOME), *rep = NULL;
				const wb_obj *posts = NULL;
				size_t        np = 0;
				if (seen[i]) {
					continue;
				}
				wb_set_u64(req, WB_F_UID, fans[(i * 7919) % nf]);
				wb_set_u64(req, WB_F_LIMIT, 1);
				if (wbt_call(in, req, &rep) == WB_OK &&
				    wb_get_objs(rep, WB_F_POSTS, &posts, &np) && np == 1 &&
				    wb_u64(&posts[0], WB_F_ID, 0) == id) {
					seen[i] = true;
					left--;
				}
				wb_msg_free(rep);
			}
			if (wb_mono_us() - t0 > 60000000) {
				fprintf(stderr, "hybrid_bench: a post never became visible\n");
				return -1;
			}
		}
		us[p] = wb_mono_us() - t0;
	}
	/* one sweep of the sampled homes, the post long visible: the figures' floor */
	uint64_t t0 = wb_mono_us();
	for (size_t i = 0; i < HY_SAMPLE; i++) {
		wb_obj *req = wb_request(WB_OP_INBOX_HOME), *rep = NULL;
		wb_set_u64(req, WB_F_UID, fans[(i * 7919) % nf]);
		wb_set_u64(req, WB_F_LIMIT, 1);
		(void)wbt_call(in, req, &rep);
		wb_msg_free(rep);
	}
	qsort(us, HY_VIS, sizeof(us[0]), hy_cmp_u64);
	printf("hybrid_bench: publish-to-visible, %-22s p50 %6.2f ms, max %6.2f ms "
	       "(%d posts, %d sampled followers each; one sweep of them %.2f ms)\n",
	    what, us[HY_VIS / 2] / 1e3, us[HY_VIS - 1] / 1e3, HY_VIS, HY_SAMPLE,
	    (wb_mono_us() - t0) / 1e3);
	return 0;
}

/* hy_reads times inbox.home {uid, limit 20} for readers a and b, alternating in runs. */
static int
hy_reads(rt_client *in, uint64_t a, uint64_t b, uint64_t *na_posts, uint64_t *nb_posts)
{
	uint64_t *lat[2];
	uint64_t  uid[2] = { a, b };
	size_t    n[2] = { 0, 0 };
	int       rc = 0;

	lat[0] = malloc(nreads * sizeof(uint64_t));
	lat[1] = malloc(nreads * sizeof(uint64_t));
	if (lat[0] == NULL || lat[1] == NULL) {
		return -1;
	}
	for (uint64_t k = 0; rc == 0 && (n[0] < nreads || n[1] < nreads); k++) {
		int      who = (int)((k / HY_RUN) % 2);
		wb_obj  *req = wb_request(WB_OP_INBOX_HOME), *rep = NULL;
		uint64_t t0 = wb_mono_us();

		if (n[who] >= nreads) {
			continue;
		}
		wb_set_u64(req, WB_F_UID, uid[who]);
		wb_set_u64(req, WB_F_LIMIT, 20);
		if (wbt_call(in, req, &rep) != WB_OK) {
			fprintf(stderr, "hybrid_bench: inbox.home failed\n");
			rc = -1;
		} else {
			const wb_obj *posts = NULL;
			size_t        np = 0;
			lat[who][n[who]++] = wb_mono_us() - t0;
			(void)wb_get_objs(rep, WB_F_POSTS, &posts, &np);
			*(who == 0 ? na_posts : nb_posts) = np;
		}
		wb_msg_free(rep);
	}
	for (int w = 0; rc == 0 && w < 2; w++) {
		qsort(lat[w], n[w], sizeof(uint64_t), hy_cmp_u64);
		printf("hybrid_bench: home of %-30s p50 %4llu us, p99 %4llu us, max %5llu us "
		       "(%zu reads)\n",
		    w == 0 ? "a reader of 5 big + 20 small" : "a reader of 20 small, no big",
		    (unsigned long long)lat[w][n[w] / 2],
		    (unsigned long long)lat[w][n[w] * 99 / 100],
		    (unsigned long long)lat[w][n[w] - 1], n[w]);
	}
	free(lat[0]);
	free(lat[1]);
	return rc;
}

int
main(int argc, char **argv)
{
	uint64_t *argp[] = { &nfans, &limit, &nreads, &nposts };
	char      limit_env[64];
	double    secs;

	for (int i = 1; i < argc && i <= 4; i++) {
		*argp[i - 1] = strtoull(argv[i], NULL, 10);
	}
	if (nfans <= limit || limit == 0 || nreads == 0) {
		fprintf(stderr, "usage: hybrid_bench [fans > limit] [limit > 0] [reads] [posts]\n");
		return 2;
	}
	snprintf(
	    limit_env, sizeof(limit_env), "WARBLE_FANOUT_LIMIT=%llu", (unsigned long long)limit);
	const char *env[] = { limit_env, NULL };
	if (wbt_cluster_start_as(&cl, env, WBT_FIVE) != 0) {
		return 1;
	}
	rt_client     *user = NULL, *rel = NULL, *content = NULL, *in = NULL;
	rt_client_opts o = { .timeout_ms = 60000 };
	int            rc = rt_client_open(&user, cl.user_url, &o) != WB_OK ||
	         rt_client_open(&rel, cl.relation_url, &o) != WB_OK ||
	         rt_client_open(&content, cl.content_url, &o) != WB_OK ||
	         rt_client_open(&in, cl.inbox_url, &o) != WB_OK;

	/* users: big0..4, mid, small0..19, A, B, then the fans */
	size_t          nusers = HY_BIG + 1 + HY_SMALL + 2 + nfans;
	wb_obj         *req = NULL, *rep = NULL;
	const uint64_t *u = NULL;
	size_t          nu = 0;
	uint64_t       *uids = malloc(nusers * sizeof(uint64_t));
	long long       t0 = wbt_now_ms();
	for (size_t from = 0; rc == 0 && from < nusers; from += 10000) {
		size_t n = nusers - from < 10000 ? nusers - from : 10000;
		req = wb_request(WB_OP_USER_REGISTER_MANY);
		wb_set_cstr(req, WB_F_NAME, "hyb");
		wb_set_u64(req, WB_F_FROM, from);
		wb_set_u64(req, WB_F_LIMIT, n);
		wb_set_cstr(req, WB_F_PASSWORD, "hybrid-bench-password");
		rc = wbt_call(user, req, &rep) != WB_OK || !wb_get_u64s(rep, WB_F_UIDS, &u, &nu) ||
		     nu != n;
		if (rc == 0) {
			memcpy(&uids[from], u, n * sizeof(uint64_t));
		}
		wb_msg_free(rep);
		rep = NULL;
	}
	const uint64_t *big = uids, *mid = uids + HY_BIG, *small = mid + 1;
	uint64_t        a = small[HY_SMALL], b = small[HY_SMALL + 1];
	const uint64_t *fans = small + HY_SMALL + 2;
	uint64_t        ab[2] = { a, b };
	for (int i = 0; rc == 0 && i < HY_BIG; i++) {
		rc = hy_follow(rel, big[i], fans, nfans) || hy_follow(rel, big[i], &a, 1);
	}
	rc = rc || hy_follow(rel, mid[0], fans, limit);
	for (int i = 0; rc == 0 && i < HY_SMALL; i++) {
		rc = hy_follow(rel, small[i], ab, 2);
	}
	rc = rc || hy_caught_up(in, &secs);
	if (rc == 0) {
		printf(
		    "hybrid_bench: %zu users, 5 x %llu + %llu fans, limit %llu: made in %.1f s\n",
		    nusers, (unsigned long long)nfans, (unsigned long long)limit,
		    (unsigned long long)limit, (double)(wbt_now_ms() - t0) / 1000.0);
	}
	/* one post each: its fan-out finds the big accounts over the limit */
	for (int i = 0; rc == 0 && i < HY_BIG; i++) {
		rc = hy_publish(content, big[i]);
	}
	rc = rc || hy_caught_up(in, &secs);
	rc = rc || hy_group(content, in, "big account (over the limit)", big, HY_BIG);
	rc = rc || hy_group(content, in, "mid account (at the limit, fanned)", mid, 1);
	rc = rc || hy_group(content, in, "small account (2 fans)", small, HY_SMALL);
	if (rc == 0) {
		printf("hybrid_bench: big accounts %llu, posts to outboxes %llu\n",
		    (unsigned long long)wbt_stat(in, "big_accounts"),
		    (unsigned long long)wbt_stat(in, "outbox_posts"));
	}
	rc = rc || hy_visible(content, in, "big account:", big[0], fans, nfans);
	rc = rc || hy_visible(content, in, "mid account (fanned):", mid[0], fans, limit);
	uint64_t na = 0, nb = 0;
	rc = rc || hy_reads(in, a, b, &na, &nb);
	if (rc == 0) {
		printf("hybrid_bench: pages of %llu and %llu posts\n", (unsigned long long)na,
		    (unsigned long long)nb);
	}
	rt_client_close(user);
	rt_client_close(rel);
	rt_client_close(content);
	rt_client_close(in);
	free(uids);
	wbt_cluster_stop(&cl, 10000);
	wbt_cleanup();
	return rc;
}
