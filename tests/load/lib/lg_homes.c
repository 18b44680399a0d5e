/*
 * lg_homes.c - home timelines read over and over, closed loop, on several
 * connections: the follow-count sweep (one reader) and the HTTP/msgpack
 * comparison (every graph user).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lg.h"

#define LG_HOMES_MAX_THREADS 256

typedef struct lg_homes_job {
	const lg_backend *b;
	uint32_t          u0, nu; /* users read: u0 .. u0 + nu - 1, at random */
	uint64_t          seed;
	size_t            want;
	uint64_t          deadline_us;
	lg_hist           h;
	uint64_t          bad; /* failed reads, and homes shorter than want */
} lg_homes_job;

static void *
lg_homes_main(void *arg)
{
	lg_homes_job *j = arg;
	lg_conn      *c = j->b->conn_open(j->b->ctx);

	if (c == NULL) {
		j->bad++;
		return NULL;
	}
	while (lg_now_us() < j->deadline_us) {
		uint32_t u = j->u0 + (j->nu > 1 ? (uint32_t)(lg_rand(&j->seed) % j->nu) : 0);
		uint64_t t0 = lg_now_us();
		size_t   n = 0;
		int      rc = j->b->home(c, u, NULL, &n);

		lg_hist_add(&j->h, lg_now_us() - t0);
		if ((rc != 0 || n < j->want) && j->bad++ == 0) {
			fprintf(stderr, "warble-load: %s: home of user %u: %d, %zu posts of %zu\n",
			    j->b->name, u, rc, n, j->want);
		}
	}
	j->b->conn_close(c);
	return NULL;
}

int
lg_homes_run(const lg_backend *b, uint32_t u0, uint32_t nu, size_t want, uint32_t threads,
    double secs, lg_hist *h, double *per_s)
{
	pthread_t     th[LG_HOMES_MAX_THREADS];
	lg_homes_job *jobs;
	uint64_t      t0 = lg_now_us(), bad = 0;
	uint32_t      started = 0;

	threads = threads < 1 ? 1 : threads > LG_HOMES_MAX_THREADS ? LG_HOMES_MAX_THREADS : threads;
	if ((jobs = calloc(threads, sizeof(*jobs))) == NULL) {
		return -1;
	}
	memset(h, 0, sizeof(*h));
	for (uint32_t i = 0; i < threads; i++) {
		jobs[i] = (lg_homes_job) { .b = b,
			.u0 = u0,
			.nu = nu,
			.seed = 7919 * (i + 1),
			.want = want,
			.deadline_us = t0 + (uint64_t)(secs * 1e6) };
		if (pthread_create(&th[i], NULL, lg_homes_main, &jobs[i]) != 0) {
			bad++;
			break;
		}
		started++;
	}
	for (uint32_t i = 0; i < started; i++) {
		pthread_join(th[i], NULL);
		lg_hist_merge(h, &jobs[i].h);
		bad += jobs[i].bad;
	}
	*per_s = h->n / ((lg_now_us() - t0) / 1e6);
	free(jobs);
	return bad == 0 ? 0 : -1;
}
