/*
 * login_bench.c - how many logins a second one user process carries.
 *
 * Starts five daemons (tests/support/wbt_cluster.h) with the production
 * password cost (argon2id "interactive": 2 passes over 64 MiB, unless
 * LOGIN_BENCH_ENV says otherwise), registers ACCOUNTS accounts with
 * user.register_many, then runs THREADS client threads that log in
 * through the gateway with the SDK for SECONDS, each a random account,
 * and prints logins/s, p50/p99 latency and the user and gateway
 * processes' CPU per login (their process_cpu_us gauges).
 *
 *   build/bench/login_bench [seconds (10)] [threads (8)] [accounts (1000)]
 *
 * LOGIN_BENCH_ENV="K=V K=V" reaches every daemon (e.g. WARBLE_WORKERS=2).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_client.h"
#include "warble.h"
#include "wbt_cluster.h"
#include "wb_clock.h"

#define LB_PASSWORD "login-bench-password"
#define LB_PREFIX   "lb"
#define LB_MAX_ENV  16
#define LB_SAMPLES  100000 /* latencies kept per thread */

static uint64_t      seconds = 10, nthreads = 8, naccounts = 1000;
static wbt_cluster   cl;
static atomic_bool   stop;
static atomic_size_t failures;

typedef struct lb_worker {
	pthread_t th;
	uint64_t  seed;
	uint32_t *lat_us;
	size_t    n;
} lb_worker;

/* lb_gauge reads one gauge of a service's stats (UINT64_MAX if absent). */
static uint64_t
lb_gauge(const char *url, const char *name)
{
	rt_client     *c = NULL;
	rt_client_opts o = { .timeout_ms = 10000 };
	wb_obj        *rep = NULL;
	const wb_obj  *g;
	size_t         n = 0;
	uint64_t       v = UINT64_MAX;

	if (rt_client_open(&c, url, &o) == WB_OK &&
	    rt_call(c, wb_request(WB_OP_STATS), &rep) == WB_OK &&
	    wb_get_objs(rep, WB_F_GAUGES, &g, &n)) {
		for (size_t i = 0; i < n; i++) {
			if (strcmp(wb_str(&g[i], WB_F_NAME, ""), name) == 0) {
				v = wb_u64(&g[i], WB_F_VALUE, UINT64_MAX);
			}
		}
	}
	wb_msg_free(rep);
	rt_client_close(c);
	return v;
}

static int
lb_register(void)
{
	rt_client     *c = NULL;
	rt_client_opts o = { .timeout_ms = 120000 };
	wb_obj        *req = wb_request(WB_OP_USER_REGISTER_MANY), *rep = NULL;
	int            rc = WB_ENOMEM;

	if (req != NULL && (rc = rt_client_open(&c, cl.user_url, &o)) == WB_OK) {
		wb_set_cstr(req, WB_F_NAME, LB_PREFIX);
		wb_set_u64(req, WB_F_FROM, 0);
		wb_set_u64(req, WB_F_LIMIT, naccounts);
		wb_set_cstr(req, WB_F_PASSWORD, LB_PASSWORD);
		rc = rt_call(c, req, &rep);
	}
	if (rc != WB_OK) {
		fprintf(stderr, "login_bench: register_many: %s\n", wb_strerror(rc));
	}
	wb_msg_free(req);
	wb_msg_free(rep);
	rt_client_close(c);
	return rc == WB_OK ? 0 : -1;
}

static void *
lb_run(void *arg)
{
	lb_worker     *w = arg;
	warble_client *c = NULL;
	char           name[32];

	if (warble_open(&c, cl.gateway_url, 30000) != WARBLE_OK) {
		atomic_fetch_add(&failures, 1);
		return NULL;
	}
	while (!atomic_load(&stop)) {
		snprintf(name, sizeof(name), LB_PREFIX "%llu",
		    (unsigned long long)(wbt_rand(&w->seed) % naccounts));
		uint64_t t0 = wb_mono_us();
		if (warble_login(c, name, LB_PASSWORD, NULL) != WARBLE_OK) {
			atomic_fetch_add(&failures, 1);
			continue;
		}
		if (!atomic_load(&stop) && w->n < LB_SAMPLES) {
			w->lat_us[w->n++] = (uint32_t)(wb_mono_us() - t0);
		}
	}
	warble_close(c);
	return NULL;
}

static int
lb_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	static char envbuf[1024];
	const char *env[LB_MAX_ENV + 4];
	lb_worker  *w;
	int         ne = 0;

	if (argc > 1) {
		seconds = strtoull(argv[1], NULL, 10);
	}
	if (argc > 2) {
		nthreads = strtoull(argv[2], NULL, 10);
	}
	if (argc > 3) {
		naccounts = strtoull(argv[3], NULL, 10);
	}
	if (seconds < 1 || seconds > 3600 || nthreads < 1 || nthreads > 256 || naccounts < 1 ||
	    naccounts > 10000) {
		fprintf(stderr, "usage: login_bench [seconds 1-3600] [threads 1-256] "
		                "[accounts 1-10000]\n");
		return 2;
	}
	env[ne++] = "WARBLE_PWHASH_OPS=interactive";
	env[ne++] = "WARBLE_PWHASH_MEM=interactive";
	env[ne++] = "WARBLE_LOG_LEVEL=warn";
	if (getenv("LOGIN_BENCH_ENV") != NULL) {
		snprintf(envbuf, sizeof(envbuf), "%s", getenv("LOGIN_BENCH_ENV"));
		for (char *save = NULL, *tok = strtok_r(envbuf, " ", &save);
		     tok != NULL && ne < LB_MAX_ENV; tok = strtok_r(NULL, " ", &save)) {
			env[ne++] = tok;
		}
	}
	env[ne] = NULL;
	if ((w = calloc(nthreads, sizeof(*w))) == NULL ||
	    wbt_cluster_start_as(&cl, env, WBT_FIVE)) {
		return 1;
	}
	int rc = lb_register();
	for (uint64_t i = 0; rc == 0 && i < nthreads; i++) {
		w[i].seed = 0x10c1ULL + i * 7919;
		if ((w[i].lat_us = calloc(LB_SAMPLES, sizeof(uint32_t))) == NULL) {
			rc = -1;
		}
	}
	if (rc == 0) {
		uint64_t user0 = lb_gauge(cl.user_url, "process_cpu_us");
		uint64_t gw0 = lb_gauge(cl.gateway_url, "process_cpu_us");
		uint64_t t0 = wb_mono_us();
		for (uint64_t i = 0; i < nthreads; i++) {
			pthread_create(&w[i].th, NULL, lb_run, &w[i]);
		}
		wbt_sleep_ms((int)(seconds * 1000));
		atomic_store(&stop, true);
		uint64_t t1 = wb_mono_us();
		for (uint64_t i = 0; i < nthreads; i++) {
			pthread_join(w[i].th, NULL);
		}
		uint64_t user1 = lb_gauge(cl.user_url, "process_cpu_us");
		uint64_t gw1 = lb_gauge(cl.gateway_url, "process_cpu_us");
		size_t   n = 0;
		for (uint64_t i = 0; i < nthreads; i++) {
			n += w[i].n;
		}
		uint32_t *all = calloc(n + 1, sizeof(uint32_t));
		size_t    k = 0;
		for (uint64_t i = 0; all != NULL && i < nthreads; i++) {
			memcpy(all + k, w[i].lat_us, w[i].n * sizeof(uint32_t));
			k += w[i].n;
		}
		if (all == NULL || n == 0) {
			fprintf(stderr, "login_bench: no login succeeded (%zu failures)\n",
			    atomic_load(&failures));
			rc = -1;
		} else {
			qsort(all, n, sizeof(uint32_t), lb_cmp);
			double secs = (double)(t1 - t0) / 1e6;
			printf("login_bench: %llu threads, %.1f s: %zu logins, %.1f logins/s, "
			       "p50 %.1f ms, p99 %.1f ms, %zu failed\n",
			    (unsigned long long)nthreads, secs, n, (double)n / secs,
			    all[n / 2] / 1000.0, all[n * 99 / 100] / 1000.0,
			    atomic_load(&failures));
			printf("login_bench: cpu per login: user %.2f ms, gateway %.2f ms\n",
			    (double)(user1 - user0) / 1000.0 / (double)n,
			    (double)(gw1 - gw0) / 1000.0 / (double)n);
		}
		free(all);
	}
	for (uint64_t i = 0; i < nthreads; i++) {
		free(w[i].lat_us);
	}
	free(w);
	if (wbt_cluster_stop(&cl, 30000) != 0) {
		rc = -1;
	}
	return rc == 0 ? 0 : 1;
}
