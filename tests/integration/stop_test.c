/*
 * stop_test.c - every daemon exits promptly on SIGTERM, whatever else is
 * already stopped: each one stopped last after the other four, all five
 * at once, and the gateway with a request in flight to a service that no
 * longer answers (the request is answered, with an error, before exit).
 *
 * The bound is 1 s in a release build, times WARBLE_TEST_SLOW (sanitizer
 * builds set it: their daemons run several times slower).
 */
#include <signal.h>

#include "it.h"

#define STOP_BOUND_MS 1000

/* stop_bound_ms is the exit deadline of this build. */
static long long
stop_bound_ms(void)
{
	return wbt_ms(STOP_BOUND_MS);
}

/* stop_time sends SIGTERM to d and returns how long it took to exit 0 (fails the test otherwise). */
static long long
stop_time(wbt_daemon *d)
{
	long long t0 = wbt_now_ms();
	int       st = wbt_stop(d, SIGTERM, 15000);
	long long ms = wbt_now_ms() - t0;

	cr_assert_eq(st, 0, "%s exited with %d", d->name, st);
	return ms;
}

/* stop_last stops every daemon but *last, then *last, which must exit within the bound. */
static void
stop_last(wbt_daemon **last)
{
	wbt_daemon **all[] = { &it_cl.gateway, &it_cl.inbox, &it_cl.content, &it_cl.relation,
		&it_cl.user };

	it_start_as(NULL, WBT_FIVE); /* each daemon stops alone */
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (all[i] != last) {
			stop_time(*all[i]);
		}
	}
	long long ms = stop_time(*last);
	fprintf(stderr, "stop: %s stopped last in %lld ms\n", (*last)->name, ms);
	cr_assert_leq(
	    ms, stop_bound_ms(), "%s took %lld ms to exit with the others gone", (*last)->name, ms);
}

Test(stop, user_last, .fini = it_fini, .timeout = 120)
{
	stop_last(&it_cl.user);
}

Test(stop, relation_last, .fini = it_fini, .timeout = 120)
{
	stop_last(&it_cl.relation);
}

Test(stop, content_last, .fini = it_fini, .timeout = 120)
{
	stop_last(&it_cl.content);
}

Test(stop, inbox_last, .fini = it_fini, .timeout = 120)
{
	stop_last(&it_cl.inbox);
}

Test(stop, gateway_last, .fini = it_fini, .timeout = 120)
{
	stop_last(&it_cl.gateway);
}

Test(stop, all_at_once, .fini = it_fini, .timeout = 120)
{
	wbt_daemon *all[] = { it_cl.gateway, it_cl.inbox, it_cl.content, it_cl.relation,
		it_cl.user };

	it_start_as(NULL, WBT_FIVE); /* each daemon stops alone */
	all[0] = it_cl.gateway, all[1] = it_cl.inbox, all[2] = it_cl.content;
	all[3] = it_cl.relation, all[4] = it_cl.user;
	long long t0 = wbt_now_ms();
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(kill(all[i]->pid, SIGTERM), 0);
	}
	for (int i = 0; i < 5; i++) {
		cr_assert_eq(wbt_wait_exit(all[i], 15000), 0, "%s", all[i]->name);
	}
	long long ms = wbt_now_ms() - t0;
	fprintf(stderr, "stop: all five stopped in %lld ms\n", ms);
	cr_assert_leq(ms, stop_bound_ms(), "stopping all five took %lld ms", ms);
}

Test(stop, one_process, .fini = it_fini, .timeout = 120)
{
	warble_client *c;

	it_start_as(NULL, WBT_ONE);
	c = it_client();
	cr_assert_eq(warble_register(c, "stopper", "password-0000", NULL), WARBLE_OK);
	warble_close(c);
	long long ms = stop_time(it_cl.gateway);
	fprintf(stderr, "stop: warble (every service) stopped in %lld ms\n", ms);
	cr_assert_leq(ms, stop_bound_ms(), "stopping warble took %lld ms", ms);
}

typedef struct stop_home {
	warble_client *c;
	int            rc;
	long long      answered_ms;
} stop_home;

static void *
stop_home_main(void *arg)
{
	stop_home      *h = arg;
	warble_posts_t *p = NULL;

	h->rc = warble_home(h->c, 0, 10, &p);
	h->answered_ms = wbt_now_ms();
	warble_posts_free(p);
	return NULL;
}

Test(stop, gateway_answers_a_request_stuck_downstream, .fini = it_fini, .timeout = 120)
{
	stop_home h = { 0 };
	pthread_t th;

	it_start_as(NULL, WBT_FIVE); /* each daemon stops alone */
	h.c = it_client();
	cr_assert_eq(warble_register(h.c, "stopper", "password-0000", NULL), WARBLE_OK);
	cr_assert_eq(warble_login(h.c, "stopper", "password-0000", NULL), WARBLE_OK);
	/* a stopped (not dead) inbox keeps its connection: the call hangs */
	cr_assert_eq(wbt_pause(it_cl.inbox), 0);
	cr_assert_eq(pthread_create(&th, NULL, stop_home_main, &h), 0);
	wbt_sleep_ms(300); /* the home read is now waiting on the inbox */
	long long ms = stop_time(it_cl.gateway);
	pthread_join(th, NULL);
	wbt_resume(it_cl.inbox);
	fprintf(stderr, "stop: gateway with a request stuck downstream stopped in %lld ms (%s)\n",
	    ms, warble_strerror(h.rc));
	cr_assert_neq(h.rc, WARBLE_OK, "the home read cannot have succeeded");
	cr_assert(h.rc == WARBLE_ECLOSED || h.rc == WARBLE_EUNAVAIL || h.rc == WARBLE_ETIMEDOUT,
	    "the stuck request was answered with %s", warble_strerror(h.rc));
	cr_assert_leq(ms, stop_bound_ms(), "the gateway took %lld ms to exit", ms);
	warble_close(h.c);
}
