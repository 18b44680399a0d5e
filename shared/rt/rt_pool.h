/*
 * rt_pool.h - a fixed pool of worker threads for blocking work (RocksDB,
 * downstream calls, fan-out), so that nng callbacks never block.
 */
#ifndef RT_POOL_H
#define RT_POOL_H

#include <stddef.h>

typedef struct rt_pool rt_pool;
typedef void (*rt_task_fn)(void *arg);

/* rt_pool_open starts nthreads workers. */
int rt_pool_open(rt_pool **out, int nthreads);

/* rt_pool_submit queues fn(arg); never blocks; WB_ECLOSED after rt_pool_close began. */
int rt_pool_submit(rt_pool *p, rt_task_fn fn, void *arg);

/* rt_pool_pending returns the number of queued, not yet started tasks. */
size_t rt_pool_pending(rt_pool *p);

/* rt_pool_close runs every queued task to completion, joins the workers and frees the pool. */
void rt_pool_close(rt_pool *p);

#endif
