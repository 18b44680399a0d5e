/*
 * pace_test.c - publishes wait while the inbox is behind (evlog_pace.c),
 * against the real daemons: with the inbox paused (SIGSTOP) a publish
 * is held until the inbox has been silent for a second, then goes on;
 * resumed, the inbox applies every post; running, it keeps the content
 * log's lag under the bound.  Five daemons (the inbox paused alone).
 */
#include <signal.h>

#include "it.h"

#define PT_LAG_MS  "30"
#define PT_WAIT_MS "20000" /* far past the second a silent inbox holds a publish */

/* pt_post publishes text as c's user; returns the post's id. */
static uint64_t
pt_post(warble_client *c, const char *text)
{
	uint64_t id = 0;

	cr_assert_eq(warble_post(c, text, &id), WARBLE_OK, "%s", warble_errmsg(c));
	return id;
}

Test(pace, a_paused_inbox_holds_publishes_a_second, .timeout = 120)
{
	static const char *const env[] = { "WARBLE_PUBLISH_LAG=" PT_LAG_MS,
		"WARBLE_PUBLISH_WAIT=" PT_WAIT_MS, NULL };
	warble_client           *alice = NULL, *bob = NULL;
	uint64_t                 ua, ub, ids[3], home[8];
	char                    *ta, *tb;

	it_start_as(env, WBT_FIVE);
	alice = it_client();
	bob = it_client();
	ta = it_join(alice, "pace_alice", "password1", &ua);
	tb = it_join(bob, "pace_bob", "password1", &ub);
	cr_assert(ta != NULL && tb != NULL);
	cr_assert_eq(warble_follow(bob, "pace_alice"), WARBLE_OK);
	ids[0] = pt_post(alice, "before the pause");
	it_wait_inbox(wbt_ms(10000));
	cr_assert_eq(it_gauge(it_cl.content_url, "log_behind_ms"), 0, "caught up: nothing behind");

	/* the inbox's last report (within INBOX_REPORT_BUSY_MS of its apply) names the last seq */
	uint64_t last = it_gauge(it_cl.content_url, "log_last_seq");
	for (int i = 0; i < 100 && it_gauge(it_cl.content_url,
	                               "log_consumer_applied{consumer=inbox/0}") != last;
	     i++) {
		wbt_sleep_ms(20);
	}
	cr_assert_eq(kill(it_cl.inbox->pid, SIGSTOP), 0);
	ids[1] = pt_post(alice, "the first while paused: nothing was behind");
	wbt_sleep_ms(2 * atoi(PT_LAG_MS));
	long long t0 = wbt_now_ms();
	ids[2] = pt_post(alice, "the second: held while the inbox may still answer");
	long long held = wbt_now_ms() - t0;
	uint64_t  paced = it_gauge(it_cl.content_url, "log_paced");
	uint64_t  over = it_gauge(it_cl.content_url, "log_pace_over");
	cr_assert_eq(kill(it_cl.inbox->pid, SIGCONT), 0);

	cr_assert_geq(
	    paced, 1, "the second publish was held (log_paced %llu)", (unsigned long long)paced);
	cr_assert_eq(over, 0, "it went on once the inbox fell silent, not at publish-wait");
	cr_assert_lt(held, atoi(PT_WAIT_MS), "held %lld ms", held);

	/* resumed, the inbox applies both; bob's home holds every post, newest first */
	it_wait_inbox(wbt_ms(10000));
	long n = it_home_all(bob, "pace_bob", home, NULL, 8);
	cr_assert_eq(n, 3);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(home[i], ids[2 - i]);
	}

	/* running, the inbox keeps up with a burst: nothing is left behind once it settles */
	for (int i = 0; i < 50; i++) {
		char text[32];
		snprintf(text, sizeof(text), "burst %d", i);
		pt_post(alice, text);
	}
	it_wait_inbox(wbt_ms(10000));
	for (int i = 0; i < 100 && it_gauge(it_cl.content_url, "log_behind_ms") != 0; i++) {
		wbt_sleep_ms(20);
	}
	cr_assert_eq(it_gauge(it_cl.content_url, "log_behind_ms"), 0);
	cr_assert_eq(it_gauge(it_cl.content_url, "log_pace_over"), 0);

	free(ta);
	free(tb);
	warble_close(alice);
	warble_close(bob);
	it_fini();
}
