/*
 * lg_sweep.c - one reader's home timeline read over and over, closed loop,
 * on several connections: the measurement of the follow-count sweep.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lg.h"

#define LG_SWEEP_MAX_THREADS 256

typedef struct lg_sweep_job {
	const lg_backend *b;
	uint32_t          u;
	size_t            want;
	uint64_t          deadline_us;
	lg_hist           h;
	uint64_t          bad; /* failed reads, and homes shorter than want */
} lg_sweep_job;

static void *
lg_sweep_main(void *arg)
{
	lg_sweep_job *j = arg;
	lg_conn      *c = j->b->conn_open(j->b->ctx);

	if (c == NULL) {
		j->bad++;
		return NULL;
	}
	while (lg_now_us() < j->deadline_us) {
		uint64_t t0 = lg_now_us();
		size_t   n = 0;
		int      rc = j->b->home(c, j->u, &n);

		lg_hist_add(&j->h, lg_now_us() - t0);
		j->bad += rc != 0 || n < j->want;
	}
	j->b->conn_close(c);
	return NULL;
}

int
lg_sweep_home(const lg_backend *b, uint32_t u, size_t want, uint32_t threads, double secs,
    lg_hist *h, double *per_s)
{
	pthread_t     th[LG_SWEEP_MAX_THREADS];
	lg_sweep_job *jobs;
	uint64_t      t0 = lg_now_us(), bad = 0;
	uint32_t      started = 0;

	threads = threads < 1 ? 1 : threads > LG_SWEEP_MAX_THREADS ? LG_SWEEP_MAX_THREADS : threads;
	if ((jobs = calloc(threads, sizeof(*jobs))) == NULL) {
		return -1;
	}
	memset(h, 0, sizeof(*h));
	for (uint32_t i = 0; i < threads; i++) {
		jobs[i] = (lg_sweep_job) {
			.b = b, .u = u, .want = want, .deadline_us = t0 + (uint64_t)(secs * 1e6)
		};
		if (pthread_create(&th[i], NULL, lg_sweep_main, &jobs[i]) != 0) {
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
