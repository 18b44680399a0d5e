/*
 * home_bench.c - how fast the gateway serves hydrated timelines.
 *
 * Starts a real cluster (tests/support/wbt_cluster.h), creates USERS
 * accounts (user.register_many), a skewed follow graph (each user follows
 * 20-80 others, popular accounts picked more often; rel.follow_many per
 * followee) and POSTS posts per user (post.publish on the content service),
 * waits until the inbox has applied every event, logs READERS users in,
 * then runs closed-loop phases of SECONDS each from THREADS client threads:
 *
 *   ping      a bare round trip through the gateway (no downstream call):
 *             the same-run yardstick, so "home / ping" shows what the
 *             hydration costs whatever the machine's load
 *   home      warble_home(limit 20) for a random logged-in reader
 *   timeline  warble_timeline(limit 20) of a random user
 *
 * and prints req/s and p50/p99/p99.9 per phase, and each phase's p50 and
 * throughput relative to ping.
 *
 *   build/bench/home_bench [users (2000)] [seconds (5)] [threads (8)]
 *
 * HOME_BENCH_ENV="K=V K=V" reaches every daemon (e.g. WARBLE_WORKERS=4);
 * HOME_BENCH_GATEWAY_B=PATH also runs that warble-gateway binary against
 * the same services and alternates the phases between the two (A B A B):
 * an A/B comparison under the same machine load;
 * HOME_BENCH_READERS=N logs N readers in (256; with more readers than
 * home reads per second, most reads find their token's cache entry
 * expired and re-check it);
 * HOME_BENCH_PHASES="home" runs only the named phases (ping is always run);
 * HOME_BENCH_KEEP=1 keeps the cluster's logs (WBT_KEEP).
 */
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_client.h"
#include "warble.h"
#include "wbt_cluster.h"
#include "wb_clock.h"

#define HB_PASSWORD  "home-bench-password"
#define HB_PREFIX    "hb"
#define HB_READERS   256 /* logged-in readers (HOME_BENCH_READERS) */
#define HB_WARMUP_MS 500
#define HB_MAX_ENV   16

static uint64_t  nusers = 2000, seconds = 5, nthreads = 8, posts_per = 4;
static uint64_t *uids;
static char (*tokens)[128]; /* session tokens: 64 characters today */
static uint32_t   *readers; /* user index of each logged-in reader */
static size_t      nreaders, maxreaders = HB_READERS;
static wbt_cluster cl;
static const char *gw_url;                /* the gateway the phase runs against */
static char        gw_url_b[WBT_URL_MAX]; /* HOME_BENCH_GATEWAY_B's */

static double
hb_unit(uint64_t *s)
{
	return (double)(wbt_rand(s) >> 11) / (double)(1ULL << 53);
}

/* hb_follow builds the graph: user i follows 20-80 others, skewed towards low indexes. */
static int
hb_follow(rt_client *rel, uint64_t *nedges)
{
	uint64_t  seed = 0x5eed5eedULL;
	uint32_t *cnt = calloc(nusers, sizeof(uint32_t));
	uint32_t *off = calloc(nusers + 1, sizeof(uint32_t));
	uint32_t *edge_from = NULL, *edge_to = NULL, *fans = NULL;
	uint64_t *page = NULL;
	size_t    ne = 0, cap = nusers * 80;
	int       rc = -1;

	edge_from = malloc(cap * sizeof(uint32_t));
	edge_to = malloc(cap * sizeof(uint32_t));
	if (cnt == NULL || off == NULL || edge_from == NULL || edge_to == NULL) {
		goto out;
	}
	for (uint32_t i = 0; i < nusers; i++) {
		uint32_t k = 20 + (uint32_t)(wbt_rand(&seed) % 61), picked[80];
		uint32_t np = 0;

		for (uint32_t tries = 0; np < k && tries < 10 * k; tries++) {
			double   u = hb_unit(&seed);
			uint32_t t = (uint32_t)((double)nusers * u * u * u);
			bool     dup = t == i || t >= nusers;

			for (uint32_t j = 0; j < np && !dup; j++) {
				dup = picked[j] == t;
			}
			if (!dup) {
				picked[np++] = t;
				edge_from[ne] = i;
				edge_to[ne++] = t;
				cnt[t]++;
			}
		}
	}
	for (uint32_t t = 0; t < nusers; t++) {
		off[t + 1] = off[t] + cnt[t];
	}
	fans = malloc(ne * sizeof(uint32_t));
	page = malloc((ne > 0 ? ne : 1) * sizeof(uint64_t));
	if (fans == NULL || page == NULL) {
		goto out;
	}
	memset(cnt, 0, nusers * sizeof(uint32_t));
	for (size_t e = 0; e < ne; e++) {
		fans[off[edge_to[e]] + cnt[edge_to[e]]++] = edge_from[e];
	}
	for (uint32_t t = 0; t < nusers; t++) {
		for (uint32_t a = off[t]; a < off[t + 1]; a += 10000) {
			uint32_t n = off[t + 1] - a < 10000 ? off[t + 1] - a : 10000;
			wb_obj  *req = wb_request(WB_OP_REL_FOLLOW_MANY), *rep = NULL;
			int      r;

			for (uint32_t j = 0; j < n; j++) {
				page[j] = uids[fans[a + j]];
			}
			wb_set_u64(req, WB_F_TARGET, uids[t]);
			wb_set_u64s(req, WB_F_UIDS, page, n);
			if ((r = wbt_call(rel, req, &rep)) != WB_OK) {
				fprintf(stderr, "home_bench: follow_many: %s\n", wb_strerror(r));
				wb_msg_free(rep);
				goto out;
			}
			wb_msg_free(rep);
		}
	}
	*nedges = ne;
	rc = 0;
out:
	free(cnt);
	free(off);
	free(edge_from);
	free(edge_to);
	free(fans);
	free(page);
	return rc;
}

typedef struct hb_pub {
	rt_client *content;
	uint64_t   first, step;
	int        rc;
} hb_pub;

static void *
hb_publish_run(void *arg)
{
	hb_pub *p = arg;
	char    text[160];

	for (uint64_t k = p->first; k < nusers * posts_per && p->rc == 0; k += p->step) {
		uint64_t u = k % nusers;
		wb_obj  *req = wb_request(WB_OP_POST_PUBLISH), *rep = NULL;
		int      rc;

		snprintf(text, sizeof(text),
		    "post %llu of %s%llu: a line of ordinary length for a timeline, "
		    "about a hundred characters or so.",
		    (unsigned long long)(k / nusers), HB_PREFIX, (unsigned long long)u);
		wb_set_u64(req, WB_F_UID, uids[u]);
		wb_set_cstr(req, WB_F_TEXT, text);
		if ((rc = wbt_call(p->content, req, &rep)) != WB_OK) {
			fprintf(stderr, "home_bench: publish: %s\n", wb_strerror(rc));
			p->rc = -1;
		}
		wb_msg_free(rep);
	}
	return NULL;
}

static int
hb_publish(rt_client *content)
{
	hb_pub    p[4];
	pthread_t t[4];
	int       rc = 0;

	for (int i = 0; i < 4; i++) {
		p[i] = (hb_pub) { content, (uint64_t)i, 4, 0 };
		pthread_create(&t[i], NULL, hb_publish_run, &p[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		rc |= p[i].rc;
	}
	return rc;
}

/* hb_wait_inbox waits until the inbox applied every post event and has nothing queued. */
static int
hb_wait_inbox(rt_client *inbox, uint64_t nposts)
{
	uint64_t end = wb_mono_us() + 600u * 1000000u;

	while (wb_mono_us() < end) {
		uint64_t applied = wbt_stat(inbox, "content_applied");
		uint64_t behind = wbt_stat(inbox, "events_behind");
		uint64_t busy = wbt_stat(inbox, "fanout_in_progress");

		if (applied != UINT64_MAX && applied >= nposts && behind == 0 && busy == 0) {
			return 0;
		}
		struct timespec ts = { 0, 100 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "home_bench: the inbox did not catch up in 600 s\n");
	return -1;
}

static int
hb_login(void)
{
	warble_client *c;
	uint64_t       seed = 0x10c1ULL;
	char           name[32];

	if (warble_open(&c, cl.gateway_url, 30000) != WARBLE_OK) {
		return -1;
	}
	nreaders = nusers < maxreaders ? nusers : maxreaders;
	for (size_t i = 0; i < nreaders; i++) {
		uint32_t u = (uint32_t)(wbt_rand(&seed) % nusers);
		int      rc;

		readers[i] = u;
		snprintf(name, sizeof(name), "%s%u", HB_PREFIX, u);
		if ((rc = warble_login(c, name, HB_PASSWORD, NULL)) != WARBLE_OK) {
			fprintf(stderr, "home_bench: login %s: %s\n", name, warble_errmsg(c));
			warble_close(c);
			return -1;
		}
		if (snprintf(tokens[i], sizeof(tokens[i]), "%s", warble_token(c)) >=
		    (int)sizeof(tokens[i])) {
			fprintf(stderr, "home_bench: the token of %s is too long\n", name);
			warble_close(c);
			return -1;
		}
	}
	warble_close(c);
	return 0;
}

typedef enum hb_kind { HB_PING, HB_HOME, HB_TIMELINE } hb_kind;

static const char *hb_kind_names[] = { "ping", "home", "timeline" };

typedef struct hb_worker {
	hb_kind   kind;
	int       id;
	uint64_t  start, stop; /* record from start to stop (us) */
	uint32_t *lat;         /* us */
	size_t    n, cap;
	uint64_t  errors, posts;
	pthread_t t;
} hb_worker;

static void
hb_record(hb_worker *w, uint64_t t0, uint64_t t1)
{
	if (t0 < w->start) {
		return;
	}
	if (w->n == w->cap) {
		size_t    cap = w->cap ? 2 * w->cap : 65536;
		uint32_t *l = realloc(w->lat, cap * sizeof(uint32_t));

		if (l == NULL) {
			return;
		}
		w->lat = l;
		w->cap = cap;
	}
	w->lat[w->n++] = (uint32_t)(t1 - t0);
}

static void *
hb_worker_run(void *arg)
{
	hb_worker     *w = arg;
	uint64_t       seed = 0x9e3779b97f4a7c15ULL * (uint64_t)(w->id + 1);
	warble_client *c = NULL;
	rt_client     *rc = NULL;
	rt_client_opts o = { .timeout_ms = 10000 };
	char           name[32];

	if (w->kind == HB_PING ? rt_client_open(&rc, gw_url, &o) != WB_OK
	                       : warble_open(&c, gw_url, 10000) != WARBLE_OK) {
		w->errors++;
		return NULL;
	}
	for (;;) {
		uint64_t        t0 = wb_mono_us(), t1;
		warble_posts_t *p = NULL;
		wb_obj         *rep = NULL;
		int             r;

		if (t0 >= w->stop) {
			break;
		}
		switch (w->kind) {
		case HB_PING:
			r = wbt_call(rc, wb_request(WB_OP_PING), &rep);
			wb_msg_free(rep);
			break;
		case HB_HOME:
			warble_set_token(c, tokens[wbt_rand(&seed) % nreaders]);
			r = warble_home(c, 0, 20, &p);
			break;
		default:
			snprintf(name, sizeof(name), "%s%llu", HB_PREFIX,
			    (unsigned long long)(wbt_rand(&seed) % nusers));
			r = warble_timeline(c, name, 0, 20, &p);
			break;
		}
		t1 = wb_mono_us();
		if (r != WARBLE_OK) {
			w->errors++;
			if (w->errors < 3) {
				fprintf(stderr, "home_bench: %s: %s\n", hb_kind_names[w->kind],
				    c != NULL ? warble_errmsg(c) : warble_strerror(r));
			}
		} else if (t0 >= w->start) {
			hb_record(w, t0, t1);
			w->posts += p != NULL ? p->n : 0;
		}
		warble_posts_free(p);
	}
	warble_close(c);
	rt_client_close(rc);
	return NULL;
}

static int
hb_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

typedef struct hb_result {
	double rps, p50, p99, p999, posts;
} hb_result;

static pid_t hb_gw_pid; /* the gateway the phase runs against */

static hb_result
hb_phase(hb_kind kind, const char *tag)
{
	hb_worker *w = calloc(nthreads, sizeof(hb_worker));
	uint64_t   now = wb_mono_us(), total = 0, errors = 0, posts = 0;
	uint32_t  *all;
	hb_result  res = { 0 };
	pid_t      pids[4] = { hb_gw_pid, cl.inbox->pid, cl.content->pid, cl.user->pid };
	uint64_t   cpu0[4], cpu1[4], t_begin = 0, t_end;

	for (uint64_t i = 0; i < nthreads; i++) {
		w[i].kind = kind;
		w[i].id = (int)i;
		w[i].start = now + HB_WARMUP_MS * 1000u;
		w[i].stop = w[i].start + seconds * 1000000u;
		pthread_create(&w[i].t, NULL, hb_worker_run, &w[i]);
	}
	/* CPU is read over the recorded window only (after the warm-up) */
	while ((t_begin = wb_mono_us()) < now + HB_WARMUP_MS * 1000u) {
		struct timespec ts = { 0, 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < 4; i++) {
		cpu0[i] = wbt_cpu_us(pids[i]);
	}
	while ((t_end = wb_mono_us()) < now + HB_WARMUP_MS * 1000u + seconds * 1000000u) {
		struct timespec ts = { 0, 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < 4; i++) {
		cpu1[i] = wbt_cpu_us(pids[i]);
	}
	for (uint64_t i = 0; i < nthreads; i++) {
		pthread_join(w[i].t, NULL);
		total += w[i].n;
		errors += w[i].errors;
		posts += w[i].posts;
	}
	all = malloc((total > 0 ? total : 1) * sizeof(uint32_t));
	for (uint64_t i = 0, k = 0; i < nthreads; i++) {
		memcpy(&all[k], w[i].lat, w[i].n * sizeof(uint32_t));
		k += w[i].n;
		free(w[i].lat);
	}
	qsort(all, total, sizeof(uint32_t), hb_cmp_u32);
	if (total > 0) {
		res.rps = (double)total / (double)seconds;
		res.p50 = all[total / 2] / 1000.0;
		res.p99 = all[(size_t)((double)total * 0.99)] / 1000.0;
		res.p999 = all[(size_t)((double)total * 0.999)] / 1000.0;
		res.posts = (double)posts / (double)total;
	}
	printf("%s%-9s %9.0f req/s  p50 %7.3f ms  p99 %7.3f ms  p99.9 %7.3f ms  (%llu calls, %llu "
	       "errors, %.1f posts/reply)\n",
	    tag, hb_kind_names[kind], res.rps, res.p50, res.p99, res.p999,
	    (unsigned long long)total, (unsigned long long)errors, res.posts);
	if (total > 0) {
		double per =
		    (double)total * (double)(t_end - t_begin) / (double)(seconds * 1000000u);

		printf("%s%-9s CPU per call: gateway %.0f us, inbox %.0f us, content %.0f us, user "
		       "%.0f us\n",
		    tag, hb_kind_names[kind], (double)(cpu1[0] - cpu0[0]) / per,
		    (double)(cpu1[1] - cpu0[1]) / per, (double)(cpu1[2] - cpu0[2]) / per,
		    (double)(cpu1[3] - cpu0[3]) / per);
	}
	fflush(stdout);
	free(all);
	free(w);
	return res;
}

/* hb_gateway_b starts path as a second gateway on the same services; its pid, or -1. */
static pid_t
hb_gateway_b(const char *path)
{
	char        bufs[16][WBT_URL_MAX + 32], gw[WBT_URL_MAX + 32];
	const char *env[16];
	pid_t       pid;
	int         n = wbt_cluster_env(&cl, bufs, env, 16);

	if (wbt_ipc_url(gw_url_b, sizeof(gw_url_b), "gb") != 0) {
		return -1;
	}
	snprintf(gw, sizeof(gw), "%s", gw_url_b);
	if ((pid = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (int i = 0; i < n; i++) {
			putenv((char *)env[i]);
		}
		setenv("WARBLE_GATEWAY_URL", gw, 1);
		setenv("WARBLE_HTTP_URL", "http://127.0.0.1:0", 1);
		setenv("WARBLE_LOG_LEVEL", "warn", 1);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; pid > 0 && i < 200; i++) {
		if (wbt_ping(gw_url_b, 200) == WB_OK) {
			return pid;
		}
	}
	fprintf(stderr, "home_bench: %s does not answer\n", path);
	return -1;
}

/* hb_step prints how long a setup step took (on stderr); returns false so it chains in ||. */
static bool
hb_step(const char *what, uint64_t *since)
{
	uint64_t now = wb_mono_us();

	fprintf(stderr, "home_bench: %s %.1f s\n", what, (double)(now - *since) / 1e6);
	*since = now;
	return false;
}

static bool
hb_phase_wanted(const char *name)
{
	const char *want = getenv("HOME_BENCH_PHASES");

	return want == NULL || want[0] == '\0' || strstr(want, name) != NULL;
}

int
main(int argc, char **argv)
{
	static char    envbuf[1024], http[64];
	const char    *env[HB_MAX_ENV + 2];
	rt_client     *user = NULL, *rel = NULL, *content = NULL, *inbox = NULL;
	rt_client_opts o = { .timeout_ms = 120000 };
	uint64_t       t0, t1, nedges = 0;
	hb_result      ping, r;
	int            ne = 0, rc = 1;
	pid_t          pid_b = 0;

	if (argc > 1) {
		nusers = strtoull(argv[1], NULL, 10);
	}
	if (argc > 2) {
		seconds = strtoull(argv[2], NULL, 10);
	}
	if (argc > 3) {
		nthreads = strtoull(argv[3], NULL, 10);
	}
	if (nusers < 100 || nusers > 1000000 || seconds < 1 || seconds > 3600 || nthreads < 1 ||
	    nthreads > 256) {
		fprintf(
		    stderr, "usage: home_bench [users 100-1000000] [seconds] [threads 1-256]\n");
		return 2;
	}
	if (getenv("HOME_BENCH_KEEP") != NULL) {
		setenv("WBT_KEEP", "1", 1);
	}
	snprintf(http, sizeof(http), "WARBLE_HTTP_URL=http://127.0.0.1:%d", wbt_free_port());
	env[ne++] = http;
	env[ne++] = "WARBLE_LOG_LEVEL=warn";
	if (getenv("HOME_BENCH_ENV") != NULL) {
		snprintf(envbuf, sizeof(envbuf), "%s", getenv("HOME_BENCH_ENV"));
		for (char *save = NULL, *tok = strtok_r(envbuf, " ", &save);
		     tok != NULL && ne < HB_MAX_ENV; tok = strtok_r(NULL, " ", &save)) {
			env[ne++] = tok;
		}
	}
	env[ne] = NULL;

	uids = calloc(nusers, sizeof(uint64_t));
	if (getenv("HOME_BENCH_READERS") != NULL) {
		maxreaders = strtoull(getenv("HOME_BENCH_READERS"), NULL, 10);
		maxreaders = maxreaders < 1 ? 1 : maxreaders > 100000 ? 100000 : maxreaders;
	}
	tokens = calloc(maxreaders, sizeof(*tokens));
	readers = calloc(maxreaders, sizeof(*readers));
	if (uids == NULL || tokens == NULL || readers == NULL) {
		return 1;
	}
	if (wbt_cluster_start(&cl, env) != 0) {
		return 1;
	}
	if (rt_client_open(&user, cl.user_url, &o) != WB_OK ||
	    rt_client_open(&rel, cl.relation_url, &o) != WB_OK ||
	    rt_client_open(&content, cl.content_url, &o) != WB_OK ||
	    rt_client_open(&inbox, cl.inbox_url, &o) != WB_OK) {
		goto out;
	}
	t0 = t1 = wb_mono_us();
	if (wbt_register_many(user, HB_PREFIX, HB_PASSWORD, uids, nusers) != 0 ||
	    hb_step("register", &t1) || hb_follow(rel, &nedges) != 0 || hb_step("follow", &t1) ||
	    hb_publish(content) != 0 || hb_step("publish", &t1) ||
	    hb_wait_inbox(inbox, nusers * posts_per) != 0 || hb_step("fan-out", &t1) ||
	    hb_login() != 0 || hb_step("login", &t1)) {
		goto out;
	}
	printf("home_bench: %llu users, %llu follows, %llu posts, set up in %.1f s; "
	       "%llu threads x %llu s per phase\n",
	    (unsigned long long)nusers, (unsigned long long)nedges,
	    (unsigned long long)(nusers * posts_per), (double)(wb_mono_us() - t0) / 1e6,
	    (unsigned long long)nthreads, (unsigned long long)seconds);
	fflush(stdout);

	gw_url = cl.gateway_url;
	if (getenv("HOME_BENCH_GATEWAY_B") != NULL &&
	    (pid_b = hb_gateway_b(getenv("HOME_BENCH_GATEWAY_B"))) < 0) {
		goto out;
	}
	for (int round = 0; round < (pid_b > 0 ? 2 : 1); round++) {
		for (int b = 0; b < (pid_b > 0 ? 2 : 1); b++) {
			const char *tag = pid_b <= 0 ? "" : b ? "B " : "A ";

			gw_url = b ? gw_url_b : cl.gateway_url;
			hb_gw_pid = b ? pid_b : cl.gateway->pid;
			ping = hb_phase(HB_PING, tag);
			for (hb_kind k = HB_HOME; k <= HB_TIMELINE; k++) {
				if (!hb_phase_wanted(hb_kind_names[k])) {
					continue;
				}
				r = hb_phase(k, tag);
				if (ping.p50 > 0 && r.rps > 0) {
					printf(
					    "%s%-9s vs ping: p50 x%.2f, p99 x%.2f, req/s x%.2f\n",
					    tag, hb_kind_names[k], r.p50 / ping.p50,
					    r.p99 / ping.p99, r.rps / ping.rps);
				}
			}
		}
	}
	rc = 0;
out:
	rt_client_close(user);
	rt_client_close(rel);
	rt_client_close(content);
	rt_client_close(inbox);
	if (pid_b > 0) {
		kill(pid_b, SIGTERM);
		waitpid(pid_b, NULL, 0);
	}
	if (wbt_cluster_stop(&cl, 30000) != 0) {
		rc = 1;
	}
	free(uids);
	free(tokens);
	free(readers);
	return rc;
}
