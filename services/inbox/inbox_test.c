/*
 * inbox_test.c - fan-out end to end: user, relation, content and inbox as
 * real daemons on ipc://.  Fan-out is exact (every fan, and the author in
 * their own home), follow backfills, unfollow purges, delete removes,
 * and the inbox ends exactly right after a SIGKILL mid fan-out, a
 * SIGSTOP while posts flow, or a late start.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_client.h"
#include "wbt.h"

enum { SVC_USER, SVC_REL, SVC_CONTENT, SVC_INBOX, SVC_N };

static const char *svc_bin[SVC_N] = { "warble-user", "warble-relation", "warble-content",
	"warble-inbox" };
static char        svc_url[SVC_N][128];
static char        rel_pub[128], content_pub[128], user_pub[128], data[256];
static wbt_daemon *svc_d[SVC_N];
static rt_client  *svc_c[SVC_N];
static const char *inbox_extra[8]; /* extra inbox flags for a test */

/* spawn starts service i and connects its client. */
static void
spawn(int i)
{
	const char *args[40];
	int         n = 0;
#define ARG(k, v) (args[n++] = (k), args[n++] = (v))
	ARG("--data", data);
	ARG("--log-level", "warn");
	switch (i) {
	case SVC_USER:
		ARG("--user-url", svc_url[SVC_USER]);
		ARG("--user-pub-url", user_pub);
		ARG("--pwhash-ops", "1");
		ARG("--pwhash-mem", "8192");
		break;
	case SVC_REL:
		ARG("--user-url", svc_url[SVC_USER]);
		ARG("--relation-url", svc_url[SVC_REL]);
		ARG("--relation-pub-url", rel_pub);
		ARG("--user-pub-url", user_pub);
		break;
	case SVC_CONTENT:
		ARG("--content-url", svc_url[SVC_CONTENT]);
		ARG("--content-pub-url", content_pub);
		ARG("--user-url", svc_url[SVC_USER]);
		ARG("--user-pub-url", user_pub);
		break;
	case SVC_INBOX:
		ARG("--inbox-url", svc_url[SVC_INBOX]);
		ARG("--content-url", svc_url[SVC_CONTENT]);
		ARG("--relation-url", svc_url[SVC_REL]);
		ARG("--content-pub-url", content_pub);
		ARG("--relation-pub-url", rel_pub);
		ARG("--user-url", svc_url[SVC_USER]);
		ARG("--user-pub-url", user_pub);
		ARG("--inbox-poll-ms", "200");
		for (int k = 0; inbox_extra[k] && inbox_extra[k + 1]; k += 2) {
			ARG(inbox_extra[k], inbox_extra[k + 1]);
		}
		break;
	}
#undef ARG
	args[n] = NULL;
	svc_d[i] = wbt_spawn(svc_bin[i], args, NULL);
	cr_assert(svc_d[i] != NULL);
	cr_assert_eq(wbt_wait_ready(svc_d[i], svc_url[i], 20000), 0, "%s not ready", svc_bin[i]);
	rt_client_opts o = { .timeout_ms = 20000 };
	cr_assert_eq(rt_client_open(&svc_c[i], svc_url[i], &o), WB_OK);
}

/* kill_svc stops service i with sig and closes its client. */
static void
kill_svc(int i, int sig)
{
	rt_client_close(svc_c[i]);
	svc_c[i] = NULL;
	int st = wbt_stop(svc_d[i], sig, 20000);
	cr_assert(st == 0 || st == 128 + sig, "%s stopped with %d", svc_bin[i], st);
}

static void
setup_urls(void)
{
	static const char *names[SVC_N] = { "user", "rel", "content", "inbox" };
	for (int i = 0; i < SVC_N; i++) {
		cr_assert_eq(wbt_ipc_url(svc_url[i], sizeof(svc_url[i]), names[i]), 0);
	}
	cr_assert_eq(wbt_ipc_url(rel_pub, sizeof(rel_pub), "rel-pub"), 0);
	cr_assert_eq(wbt_ipc_url(content_pub, sizeof(content_pub), "content-pub"), 0);
	cr_assert_eq(wbt_ipc_url(user_pub, sizeof(user_pub), "user-pub"), 0);
	cr_assert_eq(wbt_path(data, sizeof(data), "data"), 0);
}

static void
start_all(void)
{
	setup_urls();
	for (int i = 0; i < SVC_N; i++) {
		spawn(i);
	}
}

static void
stop_all(void)
{
	for (int i = 0; i < SVC_N; i++) {
		rt_client_close(svc_c[i]);
		svc_c[i] = NULL;
	}
	wbt_cleanup();
}

/* call sends req (freed) to service i; returns the code, *rep the reply (caller frees) if rep. */
static int
call(int i, wb_obj *req, wb_obj **rep)
{
	wb_obj *r = NULL;
	int     rc = rt_call(svc_c[i], req, &r);
	wb_msg_free(req);
	if (rep) {
		*rep = r;
	} else {
		wb_msg_free(r);
	}
	return rc;
}

static uint64_t
reg(const char *name)
{
	wb_obj *req = wb_request(WB_OP_USER_REGISTER), *rep = NULL;
	wb_set_cstr(req, WB_F_NAME, name);
	wb_set_cstr(req, WB_F_PASSWORD, "password123");
	int rc = call(SVC_USER, req, &rep);
	cr_assert_eq(rc, WB_OK, "register %s: %s", name, wb_strerror(rc));
	uint64_t uid = wb_u64(rep, WB_F_UID, 0);
	wb_msg_free(rep);
	cr_assert(uid != 0);
	return uid;
}

/* reg_many registers n users prefix0..prefixN-1 into uids. */
static void
reg_many(const char *prefix, uint64_t *uids, int n)
{
	char name[32];
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%d", prefix, i);
		uids[i] = reg(name);
	}
}

static void
rel(wb_op op, uint64_t uid, uint64_t target)
{
	wb_obj *req = wb_request(op);
	wb_set_u64(req, WB_F_UID, uid);
	wb_set_u64(req, WB_F_TARGET, target);
	int rc = call(SVC_REL, req, NULL);
	cr_assert_eq(rc, WB_OK, "%s %llu -> %llu: %s", wb_op_name(op), (unsigned long long)uid,
	    (unsigned long long)target, wb_strerror(rc));
}

static uint64_t
post(uint64_t uid, const char *text)
{
	wb_obj *req = wb_request(WB_OP_POST_PUBLISH), *rep = NULL;
	wb_set_u64(req, WB_F_UID, uid);
	wb_set_cstr(req, WB_F_TEXT, text);
	cr_assert_eq(call(SVC_CONTENT, req, &rep), WB_OK);
	uint64_t id = wb_u64(rep, WB_F_ID, 0);
	wb_msg_free(rep);
	return id;
}

static void
del(uint64_t uid, uint64_t id)
{
	wb_obj *req = wb_request(WB_OP_POST_DELETE);
	wb_set_u64(req, WB_F_UID, uid);
	wb_set_u64(req, WB_F_ID, id);
	cr_assert_eq(call(SVC_CONTENT, req, NULL), WB_OK);
}

/* log_last asks service i (content or relation) for its last seq. */
static uint64_t
log_last(int i)
{
	wb_obj *req = wb_request(i == SVC_CONTENT ? WB_OP_POST_LOG : WB_OP_REL_LOG), *rep = NULL;
	wb_set_u64(req, WB_F_FROM, UINT64_MAX / 2);
	cr_assert_eq(call(i, req, &rep), WB_OK);
	uint64_t last = wb_u64(rep, WB_F_LAST, 0);
	wb_msg_free(rep);
	return last;
}

/* gauge reads a named gauge from the inbox's stats (UINT64_MAX if absent or unreachable). */
static uint64_t
gauge(const char *name)
{
	wb_obj  *rep = NULL;
	uint64_t v = call(SVC_INBOX, wb_request(WB_OP_STATS), &rep) == WB_OK ? wbt_gauge(rep, name)
	                                                                     : UINT64_MAX;

	wb_msg_free(rep);
	return v;
}

/* wait_caught_up waits until the inbox has applied both logs to their current ends. */
static void
wait_caught_up(int timeout_ms)
{
	uint64_t  c = log_last(SVC_CONTENT), r = log_last(SVC_REL);
	long long dl = wbt_now_ms() + timeout_ms;
	for (;;) {
		uint64_t ca = gauge("content_applied"), ra = gauge("relation_applied");
		if (ca != UINT64_MAX && ca >= c && ra >= r) {
			return;
		}
		cr_assert(wbt_now_ms() < dl, "inbox behind: content %llu/%llu relation %llu/%llu",
		    (unsigned long long)ca, (unsigned long long)c, (unsigned long long)ra,
		    (unsigned long long)r);
		wbt_sleep_ms(20);
	}
}

/* home reads uid's whole inbox (every page) into ids/authors; returns the count. */
static size_t
home(uint64_t uid, uint64_t *ids, uint64_t *authors, size_t cap)
{
	uint64_t before = 0;
	size_t   n = 0;
	for (int pages = 0; pages < 100; pages++) {
		wb_obj *req = wb_request(WB_OP_INBOX_HOME), *rep = NULL;
		wb_set_u64(req, WB_F_UID, uid);
		wb_set_u64(req, WB_F_LIMIT, 100);
		if (before) {
			wb_set_u64(req, WB_F_BEFORE, before);
		}
		cr_assert_eq(call(SVC_INBOX, req, &rep), WB_OK);
		const wb_obj *p = NULL;
		size_t        m = 0;
		(void)wb_get_objs(rep, WB_F_POSTS, &p, &m);
		for (size_t i = 0; i < m; i++) {
			cr_assert(n < cap);
			ids[n] = wb_u64(&p[i], WB_F_ID, 0);
			if (authors) {
				authors[n] = wb_u64(&p[i], WB_F_AUTHOR, 0);
			}
			if (n > 0) {
				cr_assert_lt(ids[n], ids[n - 1], "newest first");
			}
			n++;
		}
		bool more = wb_get_u64(rep, WB_F_NEXT, &before);
		wb_msg_free(rep);
		if (!more) {
			return n;
		}
	}
	cr_assert_fail("too many pages");
	return n;
}

/* expect_home checks uid's inbox is exactly want[0..n) (newest first). */
static void
expect_home(uint64_t uid, const uint64_t *want, size_t n)
{
	uint64_t got[1000];
	size_t   m = home(uid, got, NULL, 1000);
	cr_assert_eq(m, n, "uid %llu: %zu posts, want %zu", (unsigned long long)uid, m, n);
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(got[i], want[i], "uid %llu post %zu", (unsigned long long)uid, i);
	}
}

/* desc orders ids from the largest. */
static int
desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x > y ? -1 : x < y;
}

/* newest_first copies ids[0..n) newest first: by id, which orders by the ms and, within one,
 * by the author's slot group (not by the order they were published in). */
static void
newest_first(const uint64_t *ids, size_t n, uint64_t *out)
{
	memcpy(out, ids, n * sizeof(*ids));
	qsort(out, n, sizeof(*out), desc);
}

Test(inbox, fanout_is_exact, .init = start_all, .fini = stop_all, .timeout = 240)
{
	enum { FANS = 2000, POSTS = 3 };
	static uint64_t fans[FANS];
	uint64_t        author = reg("author"), loner = reg("loner"), ids[POSTS], want[POSTS];
	reg_many("fan", fans, FANS);
	for (int i = 0; i < FANS; i++) {
		rel(WB_OP_REL_FOLLOW, fans[i], author);
	}
	for (int i = 0; i < POSTS; i++) {
		ids[i] = post(author, "to all my fans");
	}
	wait_caught_up(60000);
	newest_first(ids, POSTS, want);
	uint64_t got[8], authors[8];
	for (int i = 0; i < FANS; i++) {
		size_t n = home(fans[i], got, authors, 8);
		cr_assert_eq(n, POSTS, "fan %d has %zu", i, n);
		for (size_t k = 0; k < n; k++) {
			cr_assert_eq(got[k], want[k]);
			cr_assert_eq(authors[k], author);
		}
	}
	expect_home(author, want, POSTS); /* one's own posts are in one's home */
	expect_home(loner, NULL, 0);
	cr_assert_geq(gauge("cells_written"), (FANS + 1) * POSTS);
	cr_assert_eq(gauge("events_behind"), 0);
	cr_assert_eq(gauge("fanout_in_progress"), 0);
}

static void
small_backfill(void)
{
	inbox_extra[0] = "--backfill";
	inbox_extra[1] = "4";
	inbox_extra[2] = NULL;
	start_all();
}

Test(inbox, follow_unfollow_delete, .init = small_backfill, .fini = stop_all, .timeout = 120)
{
	uint64_t a = reg("alice"), b = reg("bob"), c = reg("carol"), d = reg("dave");
	uint64_t pa[6], pc[3], want[16];
	for (int i = 0; i < 6; i++) {
		pa[i] = post(a, "alice says");
	}
	wait_caught_up(30000);       /* else alice's fan-out may already see bob */
	rel(WB_OP_REL_FOLLOW, b, a); /* backfill: alice's newest 4 */
	rel(WB_OP_REL_FOLLOW, d, b); /* dave follows bob, who posts nothing */
	wait_caught_up(30000);
	newest_first(pa + 2, 4, want);
	expect_home(b, want, 4);
	expect_home(d, NULL, 0);

	for (int i = 0; i < 3; i++) {
		pc[i] = post(c, "carol says");
	}
	wait_caught_up(30000);
	rel(WB_OP_REL_FOLLOW, b, c);
	uint64_t pa6 = post(a, "alice again");
	wait_caught_up(30000);
	/* b: alice's 4 backfilled + alice's new one + carol's 3, newest first */
	uint64_t all[] = { pa6, pc[2], pc[1], pc[0], pa[5], pa[4], pa[3], pa[2] };
	expect_home(b, all, 8);

	rel(WB_OP_REL_UNFOLLOW, b, a); /* purge alice's posts */
	wait_caught_up(30000);
	uint64_t only_c[] = { pc[2], pc[1], pc[0] };
	expect_home(b, only_c, 3);

	del(c, pc[1]); /* gone from every fan's inbox */
	wait_caught_up(30000);
	uint64_t after_del[] = { pc[2], pc[0] };
	expect_home(b, after_del, 2);

	rel(WB_OP_REL_FOLLOW, b, a); /* refollow: alice's newest 4 again */
	wait_caught_up(30000);
	uint64_t refollow[] = { pa6, pc[2], pc[0], pa[5], pa[4], pa[3] };
	expect_home(b, refollow, 6);

	/* each author's own posts are in their home, all of them (not the
	 * backfill's 4), less the deleted one; bob and dave post nothing */
	uint64_t own_a[] = { pa6, pa[5], pa[4], pa[3], pa[2], pa[1], pa[0] };
	expect_home(a, own_a, 7);
	expect_home(c, after_del, 2);
	expect_home(d, NULL, 0);
}

/*
 * The author is a reader of their own posts: a post lands in the
 * author's home with or without fans, a delete takes it out, and
 * following, unfollowing or being unfollowed never touch one's own posts.
 */
Test(inbox, own_posts_in_own_home, .init = start_all, .fini = stop_all, .timeout = 120)
{
	uint64_t a = reg("alice"), b = reg("bob");
	uint64_t p1 = post(a, "nobody follows me yet"), p2 = post(a, "still nobody");
	wait_caught_up(30000);
	uint64_t two[] = { p2, p1 };
	expect_home(a, two, 2);

	rel(WB_OP_REL_FOLLOW, b, a); /* bob's home: alice's posts; alice's: unchanged */
	rel(WB_OP_REL_FOLLOW, a, b); /* alice follows bob, who posts nothing */
	uint64_t q1 = post(b, "bob at last");
	wait_caught_up(30000);
	uint64_t a_home[] = { q1, p2, p1 }, b_home[] = { q1, p2, p1 };
	expect_home(a, a_home, 3);
	expect_home(b, b_home, 3);

	rel(WB_OP_REL_UNFOLLOW, a, b); /* alice loses bob's post, not her own */
	rel(WB_OP_REL_UNFOLLOW, b, a); /* bob loses alice's posts, not his own */
	wait_caught_up(30000);
	expect_home(a, two, 2);
	uint64_t only_q1[] = { q1 };
	expect_home(b, only_q1, 1);

	del(a, p2); /* gone from the author's own home too */
	wait_caught_up(30000);
	uint64_t only_p1[] = { p1 };
	expect_home(a, only_p1, 1);
}

/* lag reads inbox.home's lag_ms for uid (UINT64_MAX if absent). */
static uint64_t
lag(uint64_t uid)
{
	wb_obj *req = wb_request(WB_OP_INBOX_HOME), *rep = NULL;
	wb_set_u64(req, WB_F_UID, uid);
	cr_assert_eq(call(SVC_INBOX, req, &rep), WB_OK);
	uint64_t v = wb_u64(rep, WB_F_LAG, UINT64_MAX);
	wb_msg_free(rep);
	return v;
}

/* inbox.home says how old a delete may be and still not applied: small
 * while the content log is followed (quiet, then with a post every 100
 * ms, when the inbox does not pull), growing while content is stopped. */
Test(inbox, home_tells_its_lag_behind_content, .init = start_all, .fini = stop_all, .timeout = 120)
{
	uint64_t a = reg("author"), f = reg("fan");
	rel(WB_OP_REL_FOLLOW, f, a);
	(void)post(a, "hello");
	wait_caught_up(30000);
	cr_assert_lt(lag(f), 3000, "a quiet log is pulled every 500 ms");
	for (int i = 0; i < 30; i++) { /* 3 s of events, never quiet for 500 ms */
		(void)post(a, "flowing");
		wbt_sleep_ms(100);
	}
	cr_assert_lt(lag(f), 1500, "events applied as they come keep the lag short");
	cr_assert_eq(wbt_pause(svc_d[SVC_CONTENT]), 0);
	wbt_sleep_ms(3500);
	uint64_t behind = lag(f);
	cr_assert_eq(wbt_resume(svc_d[SVC_CONTENT]), 0);
	cr_assert_geq(
	    behind, 3000, "content stopped 3.5 s, yet lag %llu ms", (unsigned long long)behind);
	long long dl = wbt_now_ms() + 30000;
	while (lag(f) >= 3000) {
		cr_assert_lt(wbt_now_ms(), dl, "lag never fell once content came back");
		wbt_sleep_ms(50);
	}
}

static void
small_cap(void)
{
	inbox_extra[0] = "--inbox-max";
	inbox_extra[1] = "4";
	inbox_extra[2] = NULL;
	start_all();
}

/*
 * An inbox row may hold more cells than the cap for a while (the inbox
 * lags, follows backfill): reads show the newest inbox-max, and the rest
 * come back once newer cells are deleted.  An unfollow must purge those
 * too, or the followee's oldest posts reappear in the home later.
 */
Test(inbox, unfollow_purges_beyond_the_cap, .init = small_cap, .fini = stop_all, .timeout = 120)
{
	uint64_t a = reg("alice"), b = reg("bob"), c = reg("carol");
	uint64_t pa[3], pc[3];
	for (int i = 0; i < 3; i++) {
		pa[i] = post(a, "alice says");
	}
	for (int i = 0; i < 3; i++) {
		pc[i] = post(c, "carol says");
	}
	wait_caught_up(30000);
	rel(WB_OP_REL_FOLLOW, b, a);
	rel(WB_OP_REL_FOLLOW, b, c);
	wait_caught_up(30000);
	/* six cells in bob's row; the newest four are read */
	uint64_t capped[] = { pc[2], pc[1], pc[0], pa[2] };
	expect_home(b, capped, 4);

	rel(WB_OP_REL_UNFOLLOW, b, a); /* purges alice's three, two of them beyond the cap */
	wait_caught_up(30000);
	uint64_t only_c[] = { pc[2], pc[1], pc[0] };
	expect_home(b, only_c, 3);
	del(c, pc[0]);
	del(c, pc[1]);
	wait_caught_up(30000);
	uint64_t last[] = { pc[2] };
	expect_home(b, last, 1); /* not alice's pa[1], pa[0] back from under the cap */
	expect_home(c, last, 1); /* carol's own home, under the same cap */
	uint64_t own_a[] = { pa[2], pa[1], pa[0] };
	expect_home(a, own_a, 3);
}

/* page reads one page of uid's inbox: the newest limit posts (no cursor:
 * the cache may answer), or those before `before` (always the store);
 * returns the count, with *next the reply's cursor (0: none). */
static size_t
page(
    uint64_t uid, uint64_t limit, uint64_t before, uint64_t *ids, uint64_t *authors, uint64_t *next)
{
	wb_obj       *req = wb_request(WB_OP_INBOX_HOME), *rep = NULL;
	const wb_obj *p = NULL;
	size_t        m = 0;

	wb_set_u64(req, WB_F_UID, uid);
	wb_set_u64(req, WB_F_LIMIT, limit);
	if (before) {
		wb_set_u64(req, WB_F_BEFORE, before);
	}
	cr_assert_eq(call(SVC_INBOX, req, &rep), WB_OK);
	(void)wb_get_objs(rep, WB_F_POSTS, &p, &m);
	cr_assert_leq(m, limit);
	for (size_t i = 0; i < m; i++) {
		ids[i] = wb_u64(&p[i], WB_F_ID, 0);
		authors[i] = wb_u64(&p[i], WB_F_AUTHOR, 0);
	}
	*next = wb_u64(rep, WB_F_NEXT, 0);
	wb_msg_free(rep);
	return m;
}

/*
 * cache_matches_store posts, deletes, follows and unfollows at random
 * among a few users and after each step reads every reader's first page
 * at a random limit twice without a cursor (the cache's to answer: the
 * first read may fill it, the second finds it) and once with a cursor
 * past every id (the store's): all three must be the same page.
 */
static void
cache_matches_store(void)
{
	enum { USERS = 6, STEPS = 80, MAXP = 64 };
	uint64_t u[USERS], posts[USERS][MAXP];
	size_t   np[USERS] = { 0 };
	bool     follows[USERS][USERS] = { { false } };
	uint64_t hits = gauge("home_cache_hits");

	reg_many("reader", u, USERS);
	srand(11);
	for (int step = 0; step < STEPS; step++) {
		int a = rand() % USERS, b = rand() % USERS, what = rand() % 10;

		if (what < 5 && np[a] < MAXP) {
			posts[a][np[a]++] = post(u[a], "a post");
		} else if (what < 7 && np[a] > 0) {
			size_t k = (size_t)rand() % np[a];
			del(u[a], posts[a][k]);
			posts[a][k] = posts[a][--np[a]];
		} else if (a != b) {
			rel(follows[a][b] ? WB_OP_REL_UNFOLLOW : WB_OP_REL_FOLLOW, u[a], u[b]);
			follows[a][b] = !follows[a][b];
		}
		wait_caught_up(30000);
		for (int r = 0; r < USERS; r++) {
			/* half the reads small enough for a cache under a cap of 4 */
			uint64_t limit = 1 + (uint64_t)(rand() % (rand() % 2 ? 3 : 22));
			uint64_t ids[3][32], au[3][32], next[3];
			size_t   n[3];

			n[0] = page(u[r], limit, 0, ids[0], au[0], &next[0]);
			n[1] = page(u[r], limit, 0, ids[1], au[1], &next[1]);
			n[2] = page(u[r], limit, UINT64_MAX, ids[2], au[2], &next[2]);
			for (int k = 0; k < 2; k++) {
				cr_assert_eq(n[k], n[2],
				    "step %d reader %d read %d: %zu posts, the store %zu", step, r,
				    k, n[k], n[2]);
				cr_assert_eq(next[k], next[2], "step %d reader %d read %d: next",
				    step, r, k);
				for (size_t i = 0; i < n[2]; i++) {
					cr_assert_eq(ids[k][i], ids[2][i],
					    "step %d reader %d post %zu", step, r, i);
					cr_assert_eq(au[k][i], au[2][i],
					    "step %d reader %d author %zu", step, r, i);
				}
			}
		}
	}
	cr_assert_gt(gauge("home_cache_hits"), hits + STEPS, "the cache answered too few reads");
	cr_assert_gt(gauge("home_cache_misses"), 0);
}

Test(inbox, cached_home_equals_the_store, .init = start_all, .fini = stop_all, .timeout = 240)
{
	cache_matches_store();
}

/* with an inbox cap of 4, the cache keeps 4 cells and deletes uncover capped ones */
Test(inbox, cached_home_equals_the_store_under_a_small_cap, .init = small_cap, .fini = stop_all,
    .timeout = 240)
{
	cache_matches_store();
}

static void
small_pages(void)
{
	inbox_extra[0] = "--inbox-fanout-page";
	inbox_extra[1] = "97";
	inbox_extra[2] = "--inbox-fanout-run"; /* runs of three pages and a bit */
	inbox_extra[3] = "300";
	inbox_extra[4] = NULL;
	start_all();
}

/* fans_expect checks every fan's inbox holds exactly ids[0..n) (oldest first). */
static void
fans_expect(const uint64_t *fans, int nfans, const uint64_t *ids, size_t n)
{
	uint64_t want[200];
	cr_assert(n <= 200);
	newest_first(ids, n, want);
	for (int i = 0; i < nfans; i++) {
		expect_home(fans[i], want, n);
	}
}

Test(inbox, sigkill_during_fanout, .init = small_pages, .fini = stop_all, .timeout = 240)
{
	enum { FANS = 2000, POSTS = 40 };
	static uint64_t fans[FANS], ids[POSTS];
	uint64_t        author = reg("author");
	reg_many("fan", fans, FANS);
	for (int i = 0; i < FANS; i++) {
		rel(WB_OP_REL_FOLLOW, fans[i], author);
	}
	wait_caught_up(60000);
	for (int i = 0; i < POSTS; i++) {
		ids[i] = post(author, "many batches each");
	}
	/* kill the inbox once fan-out is under way but not done */
	long long dl = wbt_now_ms() + 30000;
	uint64_t  applied;
	while ((applied = gauge("content_applied")) < 1 || gauge("cells_written") == 0) {
		cr_assert(wbt_now_ms() < dl, "fan-out never started");
	}
	kill_svc(SVC_INBOX, SIGKILL);
	cr_assert_lt(applied, (uint64_t)POSTS, "killed too late to prove anything");
	spawn(SVC_INBOX);
	wait_caught_up(120000);
	fans_expect(fans, FANS, ids, POSTS);
	fans_expect(&author, 1, ids, POSTS); /* and the author's own home */
}

Test(inbox, a_backlog_of_posts_lands_exactly, .init = small_pages, .fini = stop_all, .timeout = 240)
{
	/* posts that queue up while the inbox is stopped are written together;
	 * an author with more than a page (97) of fans, and a delete, end such
	 * a run, and every inbox must end as if each event came alone */
	enum { FANS = 150, ROUNDS = 30, MAXP = 3 * ROUNDS + 4 };
	static uint64_t fans[FANS];
	uint64_t        a[3] = { reg("wide"), reg("mid"), reg("narrow") };
	uint64_t        ids[MAXP], authors[MAXP], merged = gauge("posts_merged");
	bool            gone[MAXP] = { false };
	int             n = 0, deletes = 0;
	reg_many("fan", fans, FANS);
	for (int i = 0; i < FANS; i++) {
		rel(WB_OP_REL_FOLLOW, fans[i], a[0]); /* two pages of fans */
		if (i < 40) {
			rel(WB_OP_REL_FOLLOW, fans[i], a[1]);
		}
		if (i >= 100 && i < 105) {
			rel(WB_OP_REL_FOLLOW, fans[i], a[2]);
		}
	}
	wait_caught_up(60000);
	uint64_t applied = gauge("events_applied");
	cr_assert_eq(wbt_pause(svc_d[SVC_INBOX]), 0);
	for (int r = 0; r < ROUNDS; r++) {
		for (int k = 0; k < 3; k++) {
			if (k == 0 && r % 5 != 0) {
				continue;
			}
			authors[n] = a[k];
			ids[n++] = post(a[k], "queued");
		}
		if (r % 7 == 6) {
			del(authors[n - 2], ids[n - 2]);
			gone[n - 2] = true;
			deletes++;
		}
	}
	/* a run that ends with the wide author's post, then one it splits */
	const int tail[4] = { 0, 1, 0, 2 };
	for (int k = 0; k < 4; k++) {
		authors[n] = a[tail[k]];
		ids[n++] = post(a[tail[k]], "queued last");
		if (k == 0) {
			del(authors[1], ids[1]);
			gone[1] = true;
			deletes++;
		}
	}
	cr_assert_eq(wbt_resume(svc_d[SVC_INBOX]), 0);
	wait_caught_up(120000);
	cr_assert_gt(gauge("posts_merged"), merged, "no posts were written together");
	cr_assert_eq(gauge("events_applied") - applied, (uint64_t)(n + deletes),
	    "each event applied once, none again");
	for (int i = 0; i < FANS; i++) {
		uint64_t want[MAXP];
		size_t   m = 0;
		for (int p = n - 1; p >= 0; p--) {
			bool follows = authors[p] == a[0] || (authors[p] == a[1] && i < 40) ||
			               (authors[p] == a[2] && i >= 100 && i < 105);
			if (follows && !gone[p]) {
				want[m++] = ids[p];
			}
		}
		qsort(want, m, sizeof(*want), desc); /* by id: ms, then slot group */
		expect_home(fans[i], want, m);
	}
	/* each author's own posts: the wide one's written with its first page,
	 * the others' among the sorted cells of a merged run */
	for (int k = 0; k < 3; k++) {
		uint64_t want[MAXP];
		size_t   m = 0;
		for (int p = n - 1; p >= 0; p--) {
			if (authors[p] == a[k] && !gone[p]) {
				want[m++] = ids[p];
			}
		}
		qsort(want, m, sizeof(*want), desc);
		expect_home(a[k], want, m);
	}
}

typedef struct poster {
	uint64_t  author;
	uint64_t *ids;
	int       n;
} poster;

static void *
poster_main(void *arg)
{
	poster *p = arg;
	for (int i = 0; i < p->n; i++) {
		p->ids[i] = post(p->author, "while you were stopped");
	}
	return NULL;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

Test(inbox, sigstop_then_catch_up, .init = start_all, .fini = stop_all, .timeout = 240)
{
	/* posts pile up in the socket and queue buffers (or are dropped)
	 * while the inbox is stopped; it must end exactly right either way */
	enum { FANS = 20, POSTS = 4000, THREADS = 4 };
	static uint64_t fans[FANS], ids[POSTS];
	uint64_t        author = reg("author");
	reg_many("fan", fans, FANS);
	for (int i = 0; i < FANS; i++) {
		rel(WB_OP_REL_FOLLOW, fans[i], author);
	}
	wait_caught_up(60000);
	cr_assert_eq(wbt_pause(svc_d[SVC_INBOX]), 0);
	poster    p[THREADS];
	pthread_t th[THREADS];
	for (int i = 0; i < THREADS; i++) {
		p[i] = (poster) { author, ids + i * (POSTS / THREADS), POSTS / THREADS };
		cr_assert_eq(pthread_create(&th[i], NULL, poster_main, &p[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
	}
	qsort(ids, POSTS, sizeof(ids[0]), cmp_u64);
	cr_assert_eq(wbt_resume(svc_d[SVC_INBOX]), 0);
	wait_caught_up(120000);
	cr_log_info("seq gaps %llu, log pulls %llu", (unsigned long long)gauge("seq_gaps"),
	    (unsigned long long)gauge("log_pulls"));
	/* inboxes keep the newest 800 (WARBLE_INBOX_MAX), the author's own too */
	for (int i = 0; i <= FANS; i++) {
		uint64_t got[1000];
		size_t   n = home(i < FANS ? fans[i] : author, got, NULL, 1000);
		cr_assert_eq(n, 800, "reader %d has %zu", i, n);
		for (size_t k = 0; k < n; k++) {
			cr_assert_eq(got[k], ids[POSTS - 1 - k]);
		}
	}
}

Test(inbox, late_start_catches_up, .fini = stop_all, .timeout = 240)
{
	enum { FANS = 30, POSTS = 25 };
	uint64_t fans[FANS], ids[POSTS];
	setup_urls();
	spawn(SVC_USER);
	spawn(SVC_REL);
	spawn(SVC_CONTENT);
	uint64_t author = reg("author");
	reg_many("fan", fans, FANS);
	for (int i = 0; i < FANS; i++) {
		rel(WB_OP_REL_FOLLOW, fans[i], author);
	}
	for (int i = 0; i < POSTS; i++) {
		ids[i] = post(author, "before the inbox existed");
	}
	del(author, ids[7]);
	rel(WB_OP_REL_UNFOLLOW, fans[0], author);
	spawn(SVC_INBOX);
	wait_caught_up(60000);
	uint64_t kept[POSTS];
	size_t   n = 0;
	for (int i = 0; i < POSTS; i++) {
		if (i != 7) {
			kept[n++] = ids[i];
		}
	}
	fans_expect(fans + 1, FANS - 1, kept, n);
	expect_home(fans[0], NULL, 0);
	fans_expect(&author, 1, kept, n);
	/* and it keeps up with live events after catching up */
	uint64_t live = post(author, "live");
	kept[n++] = live;
	wait_caught_up(30000);
	fans_expect(fans + 1, FANS - 1, kept, n);
	fans_expect(&author, 1, kept, n);
}

static void
deaf_inbox(void)
{
	static char nowhere[128];
	cr_assert_eq(wbt_ipc_url(nowhere, sizeof(nowhere), "nobody-publishes-here"), 0);
	inbox_extra[0] = "--content-pub-url";
	inbox_extra[1] = nowhere;
	inbox_extra[2] = NULL;
	start_all();
}

Test(inbox, quiet_source_is_polled, .init = deaf_inbox, .fini = stop_all, .timeout = 120)
{
	/* the inbox hears no content events at all: polling the log after
	 * each quiet interval must still deliver every post */
	enum { FANS = 10, POSTS = 30 };
	uint64_t fans[FANS], ids[POSTS];
	uint64_t author = reg("author");
	reg_many("fan", fans, FANS);
	for (int i = 0; i < FANS; i++) {
		rel(WB_OP_REL_FOLLOW, fans[i], author);
	}
	wait_caught_up(30000);
	uint64_t pulls = gauge("log_pulls");
	for (int i = 0; i < POSTS; i++) {
		ids[i] = post(author, "heard only through the log");
	}
	wait_caught_up(30000);
	fans_expect(fans, FANS, ids, POSTS);
	fans_expect(&author, 1, ids, POSTS);
	cr_assert_gt(gauge("log_pulls"), pulls);
}
