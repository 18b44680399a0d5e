/*
 * http_guard_test.c - the connection guard's idle rule on its own.  The
 * guard reads the clock once per scan, then a request on a connection may
 * finish (done_ms) after that reading; the age was once computed as
 * now - done_ms, which wrapped around and closed a busy keep-alive
 * connection as "idle for 18446744073709551615 ms" with requests in it
 * unanswered.
 */
#include <criterion/criterion.h>
#include <stdint.h>

#include "http_int.h"

Test(http_guard, a_completion_after_now_is_not_idle)
{
	uint64_t now = 1000000;

	cr_assert_not(http_guard_idle(now, now + 1, 250), "finished 1 ms after now");
	cr_assert_not(http_guard_idle(now, now + 5000, 250), "finished 5 s after now");
	cr_assert_not(http_guard_idle(now, UINT64_MAX, 250));
}

Test(http_guard, idle_only_past_the_deadline)
{
	uint64_t now = 1000000;

	cr_assert_not(http_guard_idle(now, now, 250));
	cr_assert_not(http_guard_idle(now, now - 249, 250));
	cr_assert(http_guard_idle(now, now - 250, 250));
	cr_assert(http_guard_idle(now, 0, 250));
}
