/*
 * rt_pool_test.c - every queued task runs, close drains the queue.
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <time.h>

#include "rt_pool.h"
#include "wb_errors.h"

static atomic_int ran;
static atomic_int gate; /* tasks wait while 0 */

static void
task_count(void *arg)
{
	(void)arg;
	atomic_fetch_add(&ran, 1);
}

static void
task_gated(void *arg)
{
	struct timespec ts = { 0, 1000 * 1000 };
	(void)arg;
	for (int i = 0; i < 20000 && !atomic_load(&gate); i++) {
		nanosleep(&ts, NULL);
	}
	atomic_fetch_add(&ran, 1);
}

Test(rt_pool, close_drains_queue, .timeout = 30)
{
	rt_pool *p;

	atomic_store(&ran, 0);
	atomic_store(&gate, 0);
	cr_assert_eq(rt_pool_open(&p, 2), WB_OK);
	/* two gated tasks hold both workers, so the rest stays queued */
	cr_assert_eq(rt_pool_submit(p, task_gated, NULL), WB_OK);
	cr_assert_eq(rt_pool_submit(p, task_gated, NULL), WB_OK);
	for (int i = 0; i < 1000; i++) {
		cr_assert_eq(rt_pool_submit(p, task_count, NULL), WB_OK);
	}
	cr_assert_geq(rt_pool_pending(p), 998);
	atomic_store(&gate, 1);
	rt_pool_close(p);
	cr_assert_eq(atomic_load(&ran), 1002);
}

Test(rt_pool, many_threads_many_tasks, .timeout = 30)
{
	rt_pool *p;

	atomic_store(&ran, 0);
	cr_assert_eq(rt_pool_open(&p, 8), WB_OK);
	for (int i = 0; i < 100000; i++) {
		cr_assert_eq(rt_pool_submit(p, task_count, NULL), WB_OK);
	}
	rt_pool_close(p);
	cr_assert_eq(atomic_load(&ran), 100000);
	rt_pool_close(NULL);
}

Test(rt_pool, bad_sizes)
{
	rt_pool *p;
	cr_assert_eq(rt_pool_open(&p, 0), WB_EINVAL);
	cr_assert_eq(rt_pool_open(&p, -3), WB_EINVAL);
	cr_assert_eq(rt_pool_open(&p, 100000), WB_EINVAL);
}
