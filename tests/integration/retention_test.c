/*
 * retention_test.c - the event logs' retention against the real daemons:
 * the logs are trimmed below what the inbox applied once events pass
 * WARBLE_LOG_RETENTION (1 s here), a lagging consumer holds the trim
 * until WARBLE_LOG_MAX_AGE and is then trimmed past and forgotten, its
 * position survives a restart of the source, and an inbox that comes
 * back behind the trim point (its store lost, or down past the max age)
 * rebuilds from the stores and ends with every home equal to the model.
 * Each runs in the shape the test run names (make test-one: one warble
 * process), but the inbox down alone, which needs five daemons.
 */
#include <ftw.h>
#include <signal.h>
#include <stdio.h>

#include "it.h"

#define RT_USERS 6 /* user i follows i+1 and i+2 (mod RT_USERS) */
#define RT_POSTS 4 /* posts of each user per round */

static uint64_t rt_uid[RT_USERS];
static char    *rt_token[RT_USERS];
static uint64_t rt_ids[RT_USERS][3 * RT_POSTS]; /* each user's live posts */
static size_t   rt_nids[RT_USERS];

/* rt_name writes user i's name. */
static void
rt_name(char *buf, size_t n, int i)
{
	snprintf(buf, n, "ret%d", i);
}

/* rt_setup registers the users and the follows (user i follows i+1 and i+2). */
static void
rt_setup(warble_client *c)
{
	char name[32];

	memset(rt_nids, 0, sizeof(rt_nids));
	for (int i = 0; i < RT_USERS; i++) {
		rt_name(name, sizeof(name), i);
		rt_token[i] = it_join(c, name, "password123", &rt_uid[i]);
		cr_assert_not_null(rt_token[i]);
	}
	for (int i = 0; i < RT_USERS; i++) {
		cr_assert_eq(warble_set_token(c, rt_token[i]), WARBLE_OK);
		for (int k = 1; k <= 2; k++) {
			rt_name(name, sizeof(name), (i + k) % RT_USERS);
			cr_assert_eq(warble_follow(c, name), WARBLE_OK, "%s", warble_errmsg(c));
		}
	}
}

/* rt_round has every user publish RT_POSTS posts, and user 0 delete its oldest live one. */
static void
rt_round(warble_client *c, int round)
{
	char text[64];

	for (int i = 0; i < RT_USERS; i++) {
		cr_assert_eq(warble_set_token(c, rt_token[i]), WARBLE_OK);
		for (int p = 0; p < RT_POSTS; p++) {
			uint64_t id = 0;
			snprintf(text, sizeof(text), "round %d post %d of %d", round, p, i);
			cr_assert_eq(warble_post(c, text, &id), WARBLE_OK, "%s", warble_errmsg(c));
			rt_ids[i][rt_nids[i]++] = id;
		}
	}
	cr_assert_eq(warble_set_token(c, rt_token[0]), WARBLE_OK);
	cr_assert_eq(warble_delete(c, rt_ids[0][0]), WARBLE_OK);
	memmove(&rt_ids[0][0], &rt_ids[0][1], (rt_nids[0] - 1) * sizeof(uint64_t));
	rt_nids[0]--;
}

/* rt_check_homes compares every user's home with the model: the live posts of itself and of
 * whom it follows, newest first. */
static void
rt_check_homes(warble_client *c)
{
	uint64_t want[3 * 3 * RT_POSTS], got[3 * 3 * RT_POSTS + 1];
	char     who[32];

	for (int i = 0; i < RT_USERS; i++) {
		size_t n = 0;
		for (int k = 0; k <= 2; k++) {
			int a = (i + k) % RT_USERS;
			memcpy(want + n, rt_ids[a], rt_nids[a] * sizeof(uint64_t));
			n += rt_nids[a];
		}
		qsort(want, n, sizeof(*want), it_cmp_desc);
		rt_name(who, sizeof(who), i);
		cr_assert_eq(warble_set_token(c, rt_token[i]), WARBLE_OK);
		long k = it_home_all(c, who, got, NULL, sizeof(got) / sizeof(got[0]));
		cr_assert(it_same_ids(who, "home", got, k, want, n), "%s's home", who);
	}
}

/* rt_gauge reads a gauge of a service, failing the test if it has none. */
static uint64_t
rt_gauge(const char *url, const char *name)
{
	uint64_t v = it_gauge(url, name);

	cr_assert_neq(v, UINT64_MAX, "%s: no gauge %s", url, name);
	return v;
}

/* rt_wait_gauge waits until a gauge of url is at least min (or at most max, when below). */
static uint64_t
rt_wait_gauge(const char *url, const char *name, uint64_t lo, uint64_t hi, int timeout_ms)
{
	long long deadline = wbt_now_ms() + wbt_ms(timeout_ms);
	uint64_t  v;

	while ((v = it_gauge(url, name)) == UINT64_MAX || v < lo || v > hi) {
		cr_assert_lt(wbt_now_ms(), deadline, "%s: %s is %llu, not in [%llu, %llu]", url,
		    name, (unsigned long long)v, (unsigned long long)lo, (unsigned long long)hi);
		wbt_sleep_ms(100);
	}
	return v;
}

/* rt_read reads a log as a consumer (name NULL: none): from, applied; returns FIRST and the
 * first event's seq (0: none). */
static uint64_t
rt_read(const char *url, wb_op op, uint64_t from, const char *name, uint64_t applied, uint64_t *ev0)
{
	wb_obj       *req = wb_request(op), *rep = NULL;
	const wb_obj *evs = NULL;
	size_t        n = 0;
	uint64_t      first = 0;

	cr_assert_not_null(req);
	wb_set_u64(req, WB_F_FROM, from);
	wb_set_u64(req, WB_F_LIMIT, 10);
	if (name != NULL) {
		wb_set_cstr(req, WB_F_CONSUMER, name);
		wb_set_u64(req, WB_F_APPLIED, applied);
	}
	int rc = it_call(url, req, &rep);
	cr_assert_eq(rc, WB_OK, "%s: %s", wb_op_name(op), wb_err_name(rc));
	cr_assert(wb_get_u64(rep, WB_F_FIRST, &first), "a log read says its first seq");
	*ev0 = wb_get_objs(rep, WB_F_EVENTS, &evs, &n) && n > 0 ? wb_u64(&evs[0], WB_F_SEQ, 0) : 0;
	wb_msg_free(rep);
	return first;
}

/* rt_consumer_gauge names a consumer's gauge as the stats list it. */
static const char *
rt_consumer_gauge(char *buf, size_t n, const char *what, const char *consumer)
{
	snprintf(buf, n, "log_consumer_%s{consumer=%s}", what, consumer);
	return buf;
}

Test(retention, trims_below_the_inbox, .fini = wbt_cleanup, .timeout = 300)
{
	static const char *const env[] = { "WARBLE_LOG_RETENTION=1", NULL };
	warble_client           *c;
	char                     g[96];

	it_start(env);
	c = it_client();
	rt_setup(c);
	rt_round(c, 0);
	it_wait_inbox(wbt_ms(20000));
	/* the inbox reports within 2 s; a pass a second trims what is 1 s old below it */
	uint64_t last = it_log_last(it_cl.content_url, WB_OP_POST_LOG);
	rt_wait_gauge(it_cl.content_url, "log_first_seq", 2, UINT64_MAX, 20000);
	rt_wait_gauge(it_cl.relation_url, "log_first_seq", 2, UINT64_MAX, 20000);
	cr_assert_eq(rt_gauge(it_cl.content_url, "log_consumers"), 1, "the inbox alone");
	uint64_t applied =
	    rt_gauge(it_cl.content_url, rt_consumer_gauge(g, sizeof(g), "applied", "inbox/0"));
	cr_assert_geq(applied, rt_gauge(it_cl.content_url, "log_first_seq"),
	    "never trimmed above what the inbox applied");
	cr_assert_leq(applied, last);
	cr_assert_lt(
	    rt_gauge(it_cl.content_url, rt_consumer_gauge(g, sizeof(g), "age_ms", "inbox/0")),
	    (uint64_t)wbt_ms(15000));
	/* first moves before the rows go, the count after: wait for the pass to end */
	rt_wait_gauge(it_cl.content_url, "log_trimmed", 1, UINT64_MAX, 10000);
	cr_assert_eq(rt_gauge(it_cl.content_url, "log_last_seq"), last);
	cr_assert_eq(
	    rt_gauge(it_cl.inbox_url, "trim_rebuilds"), 0, "a live inbox never falls behind");

	/* more events still flow to the inbox through a trimmed log */
	rt_round(c, 1);
	it_wait_inbox(wbt_ms(20000));
	rt_check_homes(c);
	cr_assert_eq(rt_gauge(it_cl.inbox_url, "trim_rebuilds"), 0);
	warble_close(c);
	cr_assert_eq(wbt_cluster_stop(&it_cl, 10000), 0);
}

Test(retention, lagging_consumer_holds_until_the_max_age, .fini = wbt_cleanup, .timeout = 300)
{
	static const char *const env[] = { "WARBLE_LOG_RETENTION=1", "WARBLE_LOG_MAX_AGE=10",
		NULL };
	warble_client           *c;
	uint64_t                 ev0, first;
	char                     g[96];

	it_start(env);
	c = it_client();
	rt_setup(c);
	rt_round(c, 0);
	/* a consumer of the content log that applied seq 2 and then goes silent */
	first = rt_read(it_cl.content_url, WB_OP_POST_LOG, 3, "test/lag", 2, &ev0);
	cr_assert(first == 1 && ev0 == 3, "first %llu, event %llu", (unsigned long long)first,
	    (unsigned long long)ev0);
	long long t_report = wbt_now_ms();
	rt_round(c, 1);
	it_wait_inbox(wbt_ms(20000));

	/* past the retention, not the max age: held at its applied event */
	wbt_sleep_ms(3000);
	cr_assert_eq(rt_gauge(it_cl.content_url, "log_first_seq"), 2, "held by test/lag");
	cr_assert_eq(rt_gauge(it_cl.content_url, "log_consumers"), 2);

	/* its position survives a restart of the source (killed, not stopped) */
	cr_assert_eq(wbt_cluster_restart(&it_cl, &it_cl.content, SIGKILL), 0);
	cr_assert_eq(
	    rt_gauge(it_cl.content_url, rt_consumer_gauge(g, sizeof(g), "applied", "test/lag")), 2,
	    "known at once after the restart");
	wbt_sleep_ms(2000);
	if (wbt_now_ms() - t_report < wbt_ms(8000)) {
		cr_assert_eq(rt_gauge(it_cl.content_url, "log_first_seq"), 2, "still held");
	}

	/* the max age trims past it, and it is forgotten: the inbox alone is left */
	rt_wait_gauge(it_cl.content_url, "log_first_seq", 3, UINT64_MAX, 30000);
	rt_wait_gauge(it_cl.content_url, "log_consumers", 1, 1, 30000);
	cr_assert_geq(wbt_now_ms() - t_report, 9000, "not before its max age");
	/* coming back, it reads a first seq above what it asks: trimmed, not gone back in time */
	first = rt_read(it_cl.content_url, WB_OP_POST_LOG, 3, NULL, 0, &ev0);
	cr_assert(first > 3 && ev0 == first, "first %llu, event %llu", (unsigned long long)first,
	    (unsigned long long)ev0);
	cr_assert_geq(it_log_last(it_cl.content_url, WB_OP_POST_LOG), first);
	it_wait_inbox(wbt_ms(20000));
	rt_check_homes(c);
	warble_close(c);
	cr_assert_eq(wbt_cluster_stop(&it_cl, 10000), 0);
}

/* rt_rm_entry removes one file or folder (nftw's callback). */
static int
rt_rm_entry(const char *p, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb, (void)type, (void)ftw;
	return remove(p);
}

/* rt_logged fails the test unless d's log holds what. */
static void
rt_logged(const wbt_daemon *d, const char *what)
{
	char *log = wbt_read_file(d->log);

	cr_assert_not_null(log, "%s", d->log);
	cr_assert(strstr(log, what) != NULL, "%s does not say \"%s\"", d->log, what);
	free(log);
}

Test(retention, inbox_behind_the_trim_point_rebuilds, .fini = wbt_cleanup, .timeout = 300)
{
	static const char *const env[] = { "WARBLE_LOG_RETENTION=1", NULL };
	warble_client           *c;
	char                     dir[WBT_URL_MAX + 16];

	it_start(env);
	c = it_client();
	rt_setup(c);
	rt_round(c, 0);
	it_wait_inbox(wbt_ms(20000));
	rt_wait_gauge(it_cl.content_url, "log_first_seq", 2, UINT64_MAX, 20000);
	rt_wait_gauge(it_cl.relation_url, "log_first_seq", 2, UINT64_MAX, 20000);
	warble_close(c);

	/* the inbox's store lost: it comes back with nothing applied, the logs start later */
	cr_assert_eq(wbt_stop(it_cl.inbox, SIGKILL, 10000), 128 + SIGKILL);
	snprintf(dir, sizeof(dir), "%s/inbox", it_cl.data);
	cr_assert_eq(nftw(dir, rt_rm_entry, 16, FTW_DEPTH | FTW_PHYS), 0, "%s", dir);
	cr_assert_eq(wbt_cluster_restart(&it_cl, &it_cl.inbox, 0), 0);
	rt_wait_gauge(it_cl.inbox_url, "trim_rebuilds", 1, 1, 20000);
	rt_wait_gauge(it_cl.inbox_url, "rebuild_state", 3, 3, 60000); /* done */
	rt_logged(it_cl.inbox, "trimmed past what this inbox applied");

	c = it_client();
	rt_round(c, 1);
	it_wait_inbox(wbt_ms(20000));
	rt_check_homes(c);
	cr_assert_eq(rt_gauge(it_cl.inbox_url, "trim_rebuilds"), 1, "once");
	warble_close(c);
	cr_assert_eq(wbt_cluster_stop(&it_cl, 10000), 0);
}

Test(retention, inbox_down_past_the_max_age_rebuilds, .fini = wbt_cleanup, .timeout = 300)
{
	static const char *const env[] = { "WARBLE_LOG_RETENTION=1", "WARBLE_LOG_MAX_AGE=4", NULL };
	warble_client           *c;

	it_start_as(env, WBT_FIVE);
	c = it_client();
	rt_setup(c);
	rt_round(c, 0);
	it_wait_inbox(wbt_ms(20000));

	/* the inbox is down while writes go on (their events published to nobody); past the max
	 * age the logs go on without it, and forget it */
	cr_assert_eq(wbt_stop(it_cl.inbox, SIGKILL, 10000), 128 + SIGKILL);
	rt_round(c, 1);
	uint64_t clast = it_log_last(it_cl.content_url, WB_OP_POST_LOG);
	uint64_t rlast = it_log_last(it_cl.relation_url, WB_OP_REL_LOG);
	rt_wait_gauge(it_cl.content_url, "log_first_seq", clast, clast, 30000);
	rt_wait_gauge(it_cl.relation_url, "log_first_seq", rlast, rlast, 30000);
	rt_wait_gauge(it_cl.content_url, "log_consumers", 0, 0, 30000);

	/* back with its store: what it applied is below the logs' first seqs */
	cr_assert_eq(wbt_cluster_restart(&it_cl, &it_cl.inbox, 0), 0);
	rt_wait_gauge(it_cl.inbox_url, "trim_rebuilds", 1, 1, 20000);
	rt_wait_gauge(it_cl.inbox_url, "rebuild_state", 3, 3, 60000);
	rt_logged(it_cl.inbox, "trimmed past what this inbox applied");
	rt_logged(it_cl.content, "consumer inbox/0 forgotten");
	rt_round(c, 2);
	it_wait_inbox(wbt_ms(20000));
	rt_check_homes(c);
	rt_wait_gauge(it_cl.content_url, "log_consumers", 1, 1, 20000); /* it reports again */
	warble_close(c);
	cr_assert_eq(wbt_cluster_stop(&it_cl, 10000), 0);
}
