/*
 * suggest_bench.c - what whom-to-follow costs (GET /api/v1/me/suggestions,
 * warble_suggestions) for a reader following 5,000 accounts.
 *
 * Starts a real cluster (tests/support/wbt_cluster.h), creates USERS
 * accounts (user.register_many) and a skewed follow graph among them
 * (each follows 10-40 others, popular accounts picked more often), then
 * SB_READERS readers that follow 5,000 of them each and as many that
 * follow 50 (rel.follow_many per followee), waits until the inbox has
 * applied the follows, logs the readers in, and runs closed-loop phases
 * of SECONDS each from THREADS client threads:
 *
 *   ping       a bare round trip through the gateway: the same-run yardstick
 *   suggest5k  warble_suggestions(20) for a random reader following 5,000
 *   suggest50  the same for a reader following 50: the bound of
 *              services/gateway/gw_suggest.c makes the two cost alike
 *
 * and prints req/s, p50/p99/p99.9 and the CPU per call of the gateway and
 * the relation service for each phase.
 *
 *   build/bench/suggest_bench [users (10000)] [seconds (5)] [threads (4)]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rt_client.h"
#include "warble.h"
#include "wb_clock.h"
#include "wbt_cluster.h"

#define SB_PASSWORD  "suggest-bench-password"
#define SB_PREFIX    "sb"
#define SB_READERS   16   /* readers of each size */
#define SB_BIG       5000 /* follows of a big reader */
#define SB_SMALL     50   /* follows of a small reader */
#define SB_WARMUP_MS 500
#define SB_PAGE      10000 /* uids per bulk call */

static uint64_t    nusers = 10000, seconds = 5, nthreads = 4;
static uint64_t   *uids; /* nusers accounts, then 2 x SB_READERS readers */
static char        tokens[2 * SB_READERS][160];
static wbt_cluster cl;

/*
 * sb_follow builds the graph: account i follows 10-40 other accounts
 * (skewed towards low indexes), reader r 5,000 or 50 distinct accounts;
 * then one rel.follow_many per followee (fans grouped by target).
 */
static int
sb_follow(rt_client *rel, uint64_t *nedges)
{
	uint64_t  seed = 0x5b5eedULL, total = nusers + 2 * SB_READERS;
	size_t    cap = nusers * 40 + SB_READERS * (SB_BIG + SB_SMALL), ne = 0;
	uint32_t *from = malloc(cap * sizeof(uint32_t)), *to = malloc(cap * sizeof(uint32_t));
	uint32_t *cnt = calloc(total + 1, sizeof(uint32_t)), *off = calloc(total + 1, 4);
	uint32_t *fans = NULL;
	uint8_t  *seen = calloc(nusers, 1);
	uint64_t *page = malloc(SB_PAGE * sizeof(uint64_t));
	int       rc = -1;

	if (from == NULL || to == NULL || cnt == NULL || off == NULL || seen == NULL ||
	    page == NULL) {
		goto out;
	}
	for (uint32_t i = 0; i < total; i++) {
		bool     reader = i >= nusers;
		uint32_t k = !reader                   ? 10 + (uint32_t)(wbt_rand(&seed) % 31)
		             : i - nusers < SB_READERS ? SB_BIG
		                                       : SB_SMALL;
		size_t   first = ne;

		for (uint32_t tries = 0, np = 0; np < k && tries < 20 * k; tries++) {
			double   u = (double)(wbt_rand(&seed) >> 11) / (double)(1ULL << 53);
			uint32_t t = reader ? (uint32_t)(wbt_rand(&seed) % nusers)
			                    : (uint32_t)((double)nusers * u * u * u);

			if (t == i || t >= nusers || seen[t]) {
				continue;
			}
			seen[t] = 1;
			from[ne] = i;
			to[ne++] = t;
			cnt[t]++;
			np++;
		}
		for (size_t e = first; e < ne; e++) {
			seen[to[e]] = 0;
		}
	}
	for (uint32_t t = 0; t < total; t++) {
		off[t + 1] = off[t] + cnt[t];
	}
	if ((fans = malloc((ne > 0 ? ne : 1) * sizeof(uint32_t))) == NULL) {
		goto out;
	}
	memset(cnt, 0, (total + 1) * sizeof(uint32_t));
	for (size_t e = 0; e < ne; e++) {
		fans[off[to[e]] + cnt[to[e]]++] = from[e];
	}
	for (uint32_t t = 0; t < nusers; t++) {
		for (uint32_t a = off[t]; a < off[t + 1]; a += SB_PAGE) {
			uint32_t n = off[t + 1] - a < SB_PAGE ? off[t + 1] - a : SB_PAGE;
			wb_obj  *req = wb_request(WB_OP_REL_FOLLOW_MANY), *rep = NULL;
			int      r;

			for (uint32_t j = 0; j < n; j++) {
				page[j] = uids[fans[a + j]];
			}
			wb_set_u64(req, WB_F_TARGET, uids[t]);
			wb_set_u64s(req, WB_F_UIDS, page, n);
			if ((r = wbt_call(rel, req, &rep)) != WB_OK) {
				fprintf(stderr, "suggest_bench: follow_many: %s\n", wb_strerror(r));
				wb_msg_free(rep);
				goto out;
			}
			wb_msg_free(rep);
		}
	}
	*nedges = ne;
	rc = 0;
out:
	free(from);
	free(to);
	free(cnt);
	free(off);
	free(fans);
	free(seen);
	free(page);
	return rc;
}

/* sb_wait_inbox waits until the inbox has nothing behind and nothing in progress, twice in a row
 * with the relation events applied unchanged between. */
static int
sb_wait_inbox(rt_client *inbox)
{
	uint64_t end = wb_mono_us() + 600u * 1000000u, last = UINT64_MAX;
	int      calm = 0;

	while (wb_mono_us() < end) {
		uint64_t applied = wbt_stat(inbox, "relation_applied");
		bool     idle = wbt_stat(inbox, "events_behind") == 0 &&
		            wbt_stat(inbox, "fanout_in_progress") == 0;

		calm = idle && applied == last ? calm + 1 : 0;
		if (calm >= 2) {
			return 0;
		}
		last = applied;
		struct timespec ts = { 0, 500 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "suggest_bench: the inbox did not catch up in 600 s\n");
	return -1;
}

/* sb_login logs every reader in and keeps their tokens. */
static int
sb_login(void)
{
	warble_client *c;
	char           name[32];

	if (warble_open(&c, cl.gateway_url, 30000) != WARBLE_OK) {
		return -1;
	}
	for (int r = 0; r < 2 * SB_READERS; r++) {
		snprintf(name, sizeof(name), "%s%llu", SB_PREFIX, (unsigned long long)nusers + r);
		if (warble_login(c, name, SB_PASSWORD, NULL) != WARBLE_OK ||
		    snprintf(tokens[r], sizeof(tokens[r]), "%s", warble_token(c)) >=
		        (int)sizeof(tokens[r])) {
			fprintf(stderr, "suggest_bench: login %s: %s\n", name, warble_errmsg(c));
			warble_close(c);
			return -1;
		}
	}
	warble_close(c);
	return 0;
}

typedef enum sb_kind { SB_PING, SB_SUGGEST_BIG, SB_SUGGEST_SMALL } sb_kind;

static const char *sb_kind_names[] = { "ping", "suggest5k", "suggest50" };

typedef struct sb_worker {
	sb_kind   kind;
	int       id;
	uint64_t  start, stop; /* record from start to stop (us) */
	uint32_t *lat;         /* us */
	size_t    n, cap;
	uint64_t  errors, shown, fof;
	pthread_t t;
} sb_worker;

/* sb_record keeps one latency. */
static void
sb_record(sb_worker *w, uint64_t us)
{
	if (w->n == w->cap) {
		size_t    cap = w->cap ? 2 * w->cap : 16384;
		uint32_t *l = realloc(w->lat, cap * sizeof(uint32_t));

		if (l == NULL) {
			return;
		}
		w->lat = l;
		w->cap = cap;
	}
	w->lat[w->n++] = (uint32_t)us;
}

/* sb_worker_run calls its phase's operation until stop. */
static void *
sb_worker_run(void *arg)
{
	sb_worker     *w = arg;
	uint64_t       seed = 0x9e3779b97f4a7c15ULL * (uint64_t)(w->id + 1);
	warble_client *c = NULL;
	rt_client     *rc = NULL;
	rt_client_opts o = { .timeout_ms = 10000 };

	if (w->kind == SB_PING ? rt_client_open(&rc, cl.gateway_url, &o) != WB_OK
	                       : warble_open(&c, cl.gateway_url, 10000) != WARBLE_OK) {
		w->errors++;
		return NULL;
	}
	for (;;) {
		uint64_t        t0 = wb_mono_us(), t1;
		warble_users_t *u = NULL;
		wb_obj         *rep = NULL;
		int             r;

		if (t0 >= w->stop) {
			break;
		}
		if (w->kind == SB_PING) {
			r = wbt_call(rc, wb_request(WB_OP_PING), &rep);
			wb_msg_free(rep);
		} else {
			int k = (int)(wbt_rand(&seed) % SB_READERS);
			warble_set_token(c, tokens[w->kind == SB_SUGGEST_BIG ? k : SB_READERS + k]);
			r = warble_suggestions(c, 20, &u);
		}
		t1 = wb_mono_us();
		if (r != WARBLE_OK) {
			if (w->errors++ < 3) {
				fprintf(stderr, "suggest_bench: %s: %s\n", sb_kind_names[w->kind],
				    c != NULL ? warble_errmsg(c) : warble_strerror(r));
			}
		} else if (t0 >= w->start) {
			sb_record(w, t1 - t0);
			for (size_t i = 0; u != NULL && i < u->n; i++) {
				w->shown++;
				w->fof += u->users[i].followed_by > 0;
			}
		}
		warble_users_free(u);
	}
	warble_close(c);
	rt_client_close(rc);
	return NULL;
}

static int
sb_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* sb_sleep_until sleeps until the monotonic clock reaches t (us). */
static void
sb_sleep_until(uint64_t t)
{
	while (wb_mono_us() < t) {
		struct timespec ts = { 0, 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

/* sb_phase runs one phase and prints its figures; its p50 in ms. */
static double
sb_phase(sb_kind kind)
{
	sb_worker *w = calloc(nthreads, sizeof(sb_worker));
	uint64_t   now = wb_mono_us(), total = 0, errors = 0, shown = 0, fof = 0;
	uint64_t   start = now + SB_WARMUP_MS * 1000u, stop = start + seconds * 1000000u;
	pid_t      pids[2] = { cl.gateway->pid, cl.relation->pid };
	uint64_t   cpu0[2], cpu1[2];
	uint32_t  *all;
	double     p50 = 0;

	for (uint64_t i = 0; i < nthreads; i++) {
		w[i] = (sb_worker) { .kind = kind, .id = (int)i, .start = start, .stop = stop };
		pthread_create(&w[i].t, NULL, sb_worker_run, &w[i]);
	}
	sb_sleep_until(start);
	for (int i = 0; i < 2; i++) {
		cpu0[i] = wbt_cpu_us(pids[i]);
	}
	sb_sleep_until(stop);
	for (int i = 0; i < 2; i++) {
		cpu1[i] = wbt_cpu_us(pids[i]);
	}
	for (uint64_t i = 0; i < nthreads; i++) {
		pthread_join(w[i].t, NULL);
		total += w[i].n;
		errors += w[i].errors;
		shown += w[i].shown;
		fof += w[i].fof;
	}
	all = malloc((total > 0 ? total : 1) * sizeof(uint32_t));
	for (uint64_t i = 0, k = 0; i < nthreads; i++) {
		memcpy(&all[k], w[i].lat, w[i].n * sizeof(uint32_t));
		k += w[i].n;
		free(w[i].lat);
	}
	qsort(all, total, sizeof(uint32_t), sb_cmp_u32);
	if (total > 0) {
		p50 = all[total / 2] / 1000.0;
		printf("%-9s %8.0f req/s  p50 %7.3f ms  p99 %7.3f ms  p99.9 %7.3f ms  (%llu calls, "
		       "%llu errors",
		    sb_kind_names[kind], (double)total / (double)seconds, p50,
		    all[(size_t)((double)total * 0.99)] / 1000.0,
		    all[(size_t)((double)total * 0.999)] / 1000.0, (unsigned long long)total,
		    (unsigned long long)errors);
		if (kind != SB_PING) {
			printf(", %.1f accounts a reply, %.1f of them friends of friends",
			    (double)shown / (double)total, (double)fof / (double)total);
		}
		printf(")\n%-9s CPU per call: gateway %.0f us, relation %.0f us\n",
		    sb_kind_names[kind], (double)(cpu1[0] - cpu0[0]) / (double)total,
		    (double)(cpu1[1] - cpu0[1]) / (double)total);
	} else {
		printf("%-9s no call answered (%llu errors)\n", sb_kind_names[kind],
		    (unsigned long long)errors);
	}
	fflush(stdout);
	free(all);
	free(w);
	return errors > 0 || total == 0 ? -1 : p50;
}

int
main(int argc, char **argv)
{
	static char    http[64];
	const char    *env[3];
	rt_client     *user = NULL, *rel = NULL, *inbox = NULL;
	rt_client_opts o = { .timeout_ms = 120000 };
	uint64_t       t0, nedges = 0;
	int            rc = 1;

	if (argc > 1) {
		nusers = strtoull(argv[1], NULL, 10);
	}
	if (argc > 2) {
		seconds = strtoull(argv[2], NULL, 10);
	}
	if (argc > 3) {
		nthreads = strtoull(argv[3], NULL, 10);
	}
	if (nusers < 2 * SB_BIG || nusers > 1000000 || seconds < 1 || seconds > 3600 ||
	    nthreads < 1 || nthreads > 256) {
		fprintf(stderr,
		    "usage: suggest_bench [users 10000-1000000] [seconds] [threads 1-256]\n");
		return 2;
	}
	snprintf(http, sizeof(http), "WARBLE_HTTP_URL=http://127.0.0.1:%d", wbt_free_port());
	env[0] = http;
	env[1] = "WARBLE_LOG_LEVEL=warn";
	env[2] = NULL;
	if ((uids = calloc(nusers + 2 * SB_READERS, sizeof(uint64_t))) == NULL) {
		return 1;
	}
	if (wbt_cluster_start_as(&cl, env, WBT_FIVE) != 0) {
		return 1;
	}
	t0 = wb_mono_us();
	if (rt_client_open(&user, cl.user_url, &o) != WB_OK ||
	    rt_client_open(&rel, cl.relation_url, &o) != WB_OK ||
	    rt_client_open(&inbox, cl.inbox_url, &o) != WB_OK ||
	    wbt_register_many(user, SB_PREFIX, SB_PASSWORD, uids, nusers + 2 * SB_READERS) != 0 ||
	    sb_follow(rel, &nedges) != 0 || sb_wait_inbox(inbox) != 0 || sb_login() != 0) {
		goto out;
	}
	printf("suggest_bench: %llu accounts, %d readers following %d and %d following %d, "
	       "%llu follows, set up in %.1f s; %llu threads x %llu s per phase\n",
	    (unsigned long long)nusers, SB_READERS, SB_BIG, SB_READERS, SB_SMALL,
	    (unsigned long long)nedges, (double)(wb_mono_us() - t0) / 1e6,
	    (unsigned long long)nthreads, (unsigned long long)seconds);
	fflush(stdout);
	rc =
	    sb_phase(SB_PING) < 0 || sb_phase(SB_SUGGEST_BIG) < 0 || sb_phase(SB_SUGGEST_SMALL) < 0;
out:
	rt_client_close(user);
	rt_client_close(rel);
	rt_client_close(inbox);
	if (wbt_cluster_stop(&cl, 30000) != 0) {
		rc = 1;
	}
	free(uids);
	return rc;
}
