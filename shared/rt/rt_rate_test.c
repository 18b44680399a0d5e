/* rt_rate_test.c - the login failure limiter: lock at max_fails, window, cooldown, reset. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "rt_rate.h"
#include "wb_errors.h"

Test(rt_rate, locks_after_max_fails_then_cools_down)
{
	rt_rate *r;
	uint64_t retry;

	cr_assert_eq(rt_rate_open(&r, 3, 1000, 5000), WB_OK);
	for (int i = 0; i < 2; i++) {
		rt_rate_fail(r, "alice", 5, 100 + (uint64_t)i);
		cr_assert_eq(rt_rate_check(r, "alice", 5, 200, &retry), WB_OK);
	}
	rt_rate_fail(r, "alice", 5, 300);
	cr_assert_eq(rt_rate_check(r, "alice", 5, 301, &retry), WB_ERATE);
	cr_assert_eq(retry, 4999);
	cr_assert_eq(rt_rate_check(r, "bob", 3, 301, &retry), WB_OK, "another key is not locked");
	cr_assert_eq(rt_rate_check(r, "alicex", 6, 301, &retry), WB_OK);
	cr_assert_eq(rt_rate_check(r, "alice", 5, 5299, &retry), WB_ERATE);
	cr_assert_eq(rt_rate_check(r, "alice", 5, 5300, &retry), WB_OK, "cooled down");
	rt_rate_close(r);
}

Test(rt_rate, window_and_success_reset)
{
	rt_rate *r;
	uint64_t retry;

	cr_assert_eq(rt_rate_open(&r, 3, 1000, 5000), WB_OK);
	rt_rate_fail(r, "k", 1, 0);
	rt_rate_fail(r, "k", 1, 10);
	rt_rate_fail(r, "k", 1, 1010); /* the window restarted: 1 failure */
	cr_assert_eq(rt_rate_check(r, "k", 1, 1011, &retry), WB_OK);
	rt_rate_fail(r, "k", 1, 1020);
	rt_rate_success(r, "k", 1); /* a success forgets them */
	rt_rate_fail(r, "k", 1, 1030);
	cr_assert_eq(rt_rate_check(r, "k", 1, 1031, &retry), WB_OK);
	rt_rate_close(r);
}

Test(rt_rate, many_keys_bounded_and_long_keys)
{
	rt_rate *r;
	uint64_t retry;
	char     key[32], big[200];

	cr_assert_eq(rt_rate_open(&r, 1, 1000, 100000), WB_OK);
	rt_rate_fail(r, "victim", 6, 0);
	for (int i = 0; i < 100000; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		rt_rate_fail(r, key, strlen(key), 1);
	}
	cr_assert_eq(
	    rt_rate_check(r, "victim", 6, 2, &retry), WB_ERATE, "a live lock is never evicted");
	rt_rate_close(r);

	cr_assert_eq(rt_rate_open(&r, 1, 1000, 100000), WB_OK);
	memset(big, 'x', sizeof(big));
	rt_rate_fail(r, big, sizeof(big), 3);
	cr_assert_eq(rt_rate_check(r, big, sizeof(big), 4, &retry), WB_ERATE);
	rt_rate_close(r);

	cr_assert_eq(rt_rate_open(&r, 0, 1000, 1000), WB_OK);
	rt_rate_fail(r, "x", 1, 0);
	cr_assert_eq(rt_rate_check(r, "x", 1, 1, &retry), WB_OK, "0 disables the limiter");
	rt_rate_close(r);
}
