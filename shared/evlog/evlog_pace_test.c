/*
 * evlog_pace_test.c - the producers' pace: a commit waits while a
 * consumer heard from lately is behind, goes on once it reports, and is
 * held by no consumer that went silent.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <time.h>

#include "evlog.h"
#include "wb_clock.h"
#include "wbt.h"

enum { FAM_LOG = 0, FAM_N };

typedef struct pace_log {
	hb_table *t;
	evlog    *l;
} pace_log;

static void
pace_open(pace_log *p, const char *name)
{
	char           path[256];
	hb_family_opts fams[FAM_N] = { [FAM_LOG] = evlog_family("log") };

	cr_assert_eq(wbt_path(path, sizeof(path), name), 0);
	cr_assert_eq(hb_open(&p->t, path, fams, FAM_N, NULL), WB_OK);
	cr_assert_eq(evlog_open(&p->l, p->t, FAM_LOG, "test", NULL), WB_OK);
}

static void
pace_close(pace_log *p)
{
	evlog_close(p->l);
	hb_close(p->t);
}

/* pace_commit commits one post event and returns its seq. */
static uint64_t
pace_commit(pace_log *p)
{
	hb_batch *b = NULL;
	wb_obj   *ev = wb_msg_new();
	uint64_t  seq = 0;

	cr_assert(ev != NULL);
	cr_assert_eq(hb_batch_new(&b), WB_OK);
	wb_set_cstr(ev, WB_F_TYPE, "post");
	wb_set_u64(ev, WB_F_UID, 7);
	wb_set_u64(ev, WB_F_ID, 70);
	cr_assert_eq(evlog_commit(p->l, b, ev, &seq), WB_OK);
	hb_batch_free(b);
	wb_msg_free(ev);
	return seq;
}

/* pace_report reports, as consumer "inbox/0", that applied is applied, through the log's read. */
static void
pace_report(evlog *l, uint64_t applied)
{
	wb_obj *req = wb_request(WB_OP_POST_LOG), *rep = wb_msg_new();

	cr_assert(req != NULL && rep != NULL);
	wb_set_u64(req, WB_F_FROM, UINT64_MAX);
	wb_set_cstr(req, WB_F_CONSUMER, "inbox/0");
	wb_set_u64(req, WB_F_APPLIED, applied);
	cr_assert_eq(evlog_serve(l, req, rep), WB_OK);
	wb_msg_free(req);
	wb_msg_free(rep);
}

/* pace_stat reads one of the log's gauges. */
static uint64_t
pace_stat(evlog *l, const char *name)
{
	rt_server *s = NULL;
	wb_obj    *rep = wb_msg_new();

	cr_assert_eq(
	    rt_server_open(&s, &(rt_server_opts) { .name = "t", .url = "tcp://127.0.0.1:0" }),
	    WB_OK);
	cr_assert_eq(evlog_gauges(l, s), WB_OK);
	cr_assert_eq(rt_server_stats(s, rep), WB_OK);
	uint64_t v = wbt_gauge(rep, name);
	wb_msg_free(rep);
	rt_server_close(s);
	return v;
}

typedef struct reporter {
	evlog   *l;
	uint64_t applied, after_ms;
} reporter;

static void *
reporter_main(void *arg)
{
	reporter *r = arg;

	wbt_sleep_ms((int)r->after_ms);
	pace_report(r->l, r->applied);
	return NULL;
}

Test(evlog_pace, waits_until_the_consumer_reports)
{
	pace_log  p;
	pthread_t th;

	pace_open(&p, "pace-wait");
	evlog_pace_set(p.l, &(evlog_pace) { .lag_ms = 20, .wait_ms = 30000 });
	uint64_t first = pace_commit(&p);
	pace_report(p.l, first - 1); /* heard from, one event behind */
	wbt_sleep_ms(60);
	cr_assert_geq(evlog_behind_ms(p.l, wb_now_ms()), 50, "the event is 60 ms old, unapplied");

	reporter r = { p.l, first, 150 };
	cr_assert_eq(pthread_create(&th, NULL, reporter_main, &r), 0);
	evlog_pace_wait(p.l); /* held until the report: far short of wait_ms */
	pthread_join(th, NULL);
	cr_assert_eq(evlog_behind_ms(p.l, wb_now_ms()), 0);
	cr_assert_eq(pace_stat(p.l, "log_paced"), 1);
	cr_assert_eq(pace_stat(p.l, "log_pace_over"), 0, "the wait ended on the report");
	cr_assert_geq(pace_stat(p.l, "log_paced_ms"), 100, "it waited for the report");

	evlog_pace_wait(p.l); /* caught up: no wait */
	cr_assert_eq(pace_stat(p.l, "log_paced"), 1);
	pace_close(&p);
}

Test(evlog_pace, goes_on_after_wait_ms)
{
	pace_log p;

	pace_open(&p, "pace-over");
	evlog_pace_set(p.l, &(evlog_pace) { .lag_ms = 10, .wait_ms = 100 });
	uint64_t s = pace_commit(&p);
	pace_report(p.l, s - 1);
	wbt_sleep_ms(30);
	evlog_pace_wait(p.l); /* the consumer never catches up */
	cr_assert_eq(pace_stat(p.l, "log_paced"), 1);
	cr_assert_eq(pace_stat(p.l, "log_pace_over"), 1);
	pace_close(&p);
}

Test(evlog_pace, a_silent_consumer_holds_nobody)
{
	pace_log p;

	pace_open(&p, "pace-silent");
	evlog_pace_set(p.l, &(evlog_pace) { .lag_ms = 10, .wait_ms = 30000 });
	uint64_t s = pace_commit(&p);
	pace_report(p.l, s - 1);
	wbt_sleep_ms(1200); /* a second without a report: stopped, or rebuilding */
	pace_commit(&p);
	cr_assert_eq(evlog_behind_ms(p.l, wb_now_ms()), 0);
	evlog_pace_wait(p.l);
	cr_assert_eq(pace_stat(p.l, "log_paced"), 0);

	evlog_pace_set(p.l, &(evlog_pace) { 0 }); /* off: never waits, however far behind */
	pace_report(p.l, 0);
	wbt_sleep_ms(30);
	cr_assert_geq(evlog_behind_ms(p.l, wb_now_ms()), 20);
	evlog_pace_wait(p.l);
	cr_assert_eq(pace_stat(p.l, "log_paced"), 0);
	pace_close(&p);
}
