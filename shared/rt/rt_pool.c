/*
 * rt_pool.c - a fixed set of worker threads around one FIFO queue
 * (mutex + condition variable).  Closing stops new submissions, lets the
 * workers drain what is queued, then joins them.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "rt_pool.h"
#include "wb_errors.h"

#define RT_POOL_MAX_THREADS 256

typedef struct rt_task {
	struct rt_task *next;
	rt_task_fn      fn;
	void           *arg;
} rt_task;

struct rt_pool {
	pthread_mutex_t mtx;
	pthread_cond_t  cv;
	rt_task        *head, *tail;
	size_t          pending;
	bool            closing;
	int             nthreads;
	pthread_t      *threads;
};

static void *
rt_pool_worker_main(void *arg)
{
	rt_pool *p = arg;

	pthread_mutex_lock(&p->mtx);
	for (;;) {
		rt_task *t;

		while (p->head == NULL && !p->closing) {
			pthread_cond_wait(&p->cv, &p->mtx);
		}
		if ((t = p->head) == NULL) {
			break; /* closing and drained */
		}
		p->head = t->next;
		if (p->head == NULL) {
			p->tail = NULL;
		}
		p->pending--;
		pthread_mutex_unlock(&p->mtx);
		t->fn(t->arg);
		free(t);
		pthread_mutex_lock(&p->mtx);
	}
	pthread_mutex_unlock(&p->mtx);
	return NULL;
}

/* rt_pool_open starts nthreads workers. */
int
rt_pool_open(rt_pool **out, int nthreads)
{
	rt_pool *p;

	if (nthreads < 1 || nthreads > RT_POOL_MAX_THREADS) {
		return WB_EINVAL;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		return WB_ENOMEM;
	}
	if ((p->threads = calloc((size_t)nthreads, sizeof(pthread_t))) == NULL) {
		free(p);
		return WB_ENOMEM;
	}
	pthread_mutex_init(&p->mtx, NULL);
	pthread_cond_init(&p->cv, NULL);
	for (int i = 0; i < nthreads; i++) {
		if (pthread_create(&p->threads[i], NULL, rt_pool_worker_main, p) != 0) {
			p->nthreads = i;
			rt_pool_close(p);
			return WB_ENOMEM;
		}
	}
	p->nthreads = nthreads;
	*out = p;
	return WB_OK;
}

/* rt_pool_submit queues fn(arg); never blocks; WB_ECLOSED after rt_pool_close began. */
int
rt_pool_submit(rt_pool *p, rt_task_fn fn, void *arg)
{
	rt_task *t;

	if ((t = malloc(sizeof(*t))) == NULL) {
		return WB_ENOMEM;
	}
	t->next = NULL;
	t->fn = fn;
	t->arg = arg;
	pthread_mutex_lock(&p->mtx);
	if (p->closing) {
		pthread_mutex_unlock(&p->mtx);
		free(t);
		return WB_ECLOSED;
	}
	if (p->tail != NULL) {
		p->tail->next = t;
	} else {
		p->head = t;
	}
	p->tail = t;
	p->pending++;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mtx);
	return WB_OK;
}

/* rt_pool_pending returns the number of queued, not yet started tasks. */
size_t
rt_pool_pending(rt_pool *p)
{
	size_t n;

	pthread_mutex_lock(&p->mtx);
	n = p->pending;
	pthread_mutex_unlock(&p->mtx);
	return n;
}

/* rt_pool_close runs every queued task to completion, joins the workers and frees the pool. */
void
rt_pool_close(rt_pool *p)
{
	if (p == NULL) {
		return;
	}
	pthread_mutex_lock(&p->mtx);
	p->closing = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mtx);
	for (int i = 0; i < p->nthreads; i++) {
		pthread_join(p->threads[i], NULL);
	}
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mtx);
	free(p->threads);
	free(p);
}
