/* rt_rate_test.c - the failure limiter: free failures, growing waits, window, success, known keys. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "rt_rate.h"
#include "wb_errors.h"

static rt_rate *
limiter(unsigned free, uint64_t window, uint64_t wait, uint64_t wait_max, uint64_t remember)
{
	rt_rate_opts o = { free, window, wait, wait_max, remember, 0 };
	rt_rate     *r;

	cr_assert_eq(rt_rate_open(&r, &o), WB_OK);
	return r;
}

Test(rt_rate, waits_grow_past_the_free_failures)
{
	rt_rate *r = limiter(3, 100000, 1000, 4000, 0);
	uint64_t retry;

	for (int i = 0; i < 3; i++) {
		cr_assert_eq(
		    rt_rate_fail(r, "alice", 5, 100 + (uint64_t)i), 0, "free failure %d", i);
		cr_assert_eq(rt_rate_check(r, "alice", 5, 200, &retry), WB_OK);
	}
	cr_assert_eq(rt_rate_fail(r, "alice", 5, 300), 1000);
	cr_assert_eq(rt_rate_check(r, "alice", 5, 301, &retry), WB_ERATE);
	cr_assert_eq(retry, 999);
	cr_assert_eq(rt_rate_check(r, "bob", 3, 301, &retry), WB_OK, "another key does not wait");
	cr_assert_eq(rt_rate_check(r, "alicex", 6, 301, &retry), WB_OK);
	cr_assert_eq(rt_rate_check(r, "alice", 5, 1300, &retry), WB_OK, "the wait is over");
	cr_assert_eq(rt_rate_fail(r, "alice", 5, 1300), 2000, "the next wait is twice as long");
	cr_assert_eq(rt_rate_fail(r, "alice", 5, 3300), 4000);
	cr_assert_eq(rt_rate_fail(r, "alice", 5, 7300), 4000, "no wait is longer than wait_max");
	cr_assert_eq(rt_rate_check(r, "alice", 5, 11299, &retry), WB_ERATE);
	cr_assert_eq(retry, 1);
	rt_rate_close(r);
}

Test(rt_rate, window_and_success_reset)
{
	rt_rate *r = limiter(2, 1000, 5000, 5000, 0);
	uint64_t retry;

	rt_rate_fail(r, "k", 1, 0);
	rt_rate_fail(r, "k", 1, 10);
	cr_assert_eq(rt_rate_fail(r, "k", 1, 1010), 0, "the window restarted: 1 failure");
	cr_assert_eq(rt_rate_check(r, "k", 1, 1011, &retry), WB_OK);
	rt_rate_fail(r, "k", 1, 1020);
	rt_rate_success(r, "k", 1, 1025); /* a success forgets them */
	cr_assert_eq(rt_rate_fail(r, "k", 1, 1030), 0);
	cr_assert_eq(rt_rate_check(r, "k", 1, 1031, &retry), WB_OK);
	cr_assert_not(rt_rate_known(r, "k", 1, 1031), "remember_ms 0 keeps no mark");
	rt_rate_close(r);
}

Test(rt_rate, a_plain_rate_limit)
{
	rt_rate *r = limiter(3, 60000, 60000, 60000, 0);
	uint64_t retry;

	for (int i = 0; i < 3; i++) {
		cr_assert_eq(rt_rate_check(r, "u", 1, (uint64_t)i, &retry), WB_OK);
		rt_rate_fail(r, "u", 1, (uint64_t)i);
	}
	cr_assert_eq(rt_rate_check(r, "u", 1, 3, &retry), WB_OK);
	cr_assert_eq(rt_rate_fail(r, "u", 1, 3), 60000, "the fourth in a window waits");
	cr_assert_eq(rt_rate_check(r, "u", 1, 4, &retry), WB_ERATE);
	rt_rate_close(r);
}

Test(rt_rate, success_marks_a_key_known)
{
	rt_rate *r = limiter(1, 1000, 1000, 1000, 50000);
	uint64_t retry;

	cr_assert_not(rt_rate_known(r, "pair", 4, 0));
	rt_rate_success(r, "pair", 4, 10);
	cr_assert(rt_rate_known(r, "pair", 4, 20));
	cr_assert_not(rt_rate_known(r, "pai", 3, 20));
	rt_rate_fail(r, "pair", 4, 30);
	rt_rate_fail(r, "pair", 4, 40);
	cr_assert_eq(rt_rate_check(r, "pair", 4, 41, &retry), WB_ERATE, "a known key still waits");
	cr_assert(rt_rate_known(r, "pair", 4, 41), "its own failures keep the mark");
	cr_assert_not(rt_rate_known(r, "pair", 4, 50010), "the mark lasts remember_ms");
	rt_rate_close(r);
}

Test(rt_rate, many_keys_bounded_and_long_keys)
{
	rt_rate *r = limiter(1, 1000, 100000, 100000, 0);
	uint64_t retry;
	char     key[32], big[200];

	rt_rate_fail(r, "victim", 6, 0);
	rt_rate_fail(r, "victim", 6, 0);
	for (int i = 0; i < 100000; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		rt_rate_fail(r, key, strlen(key), 1);
		rt_rate_success(r, key, strlen(key), 1);
	}
	cr_assert_eq(
	    rt_rate_check(r, "victim", 6, 2, &retry), WB_ERATE, "a live wait is never evicted");
	rt_rate_close(r);

	r = limiter(1, 1000, 100000, 100000, 0);
	memset(big, 'x', sizeof(big));
	rt_rate_fail(r, big, sizeof(big), 3);
	rt_rate_fail(r, big, sizeof(big), 3);
	cr_assert_eq(rt_rate_check(r, big, sizeof(big), 4, &retry), WB_ERATE);
	rt_rate_close(r);

	r = limiter(0, 1000, 1000, 1000, 0);
	rt_rate_fail(r, "x", 1, 0);
	rt_rate_fail(r, "x", 1, 0);
	cr_assert_eq(rt_rate_check(r, "x", 1, 1, &retry), WB_OK, "free 0 disables the limiter");
	rt_rate_close(r);
}
