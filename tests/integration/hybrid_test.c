/*
 * hybrid_test.c - hybrid fan-out end to end, with WARBLE_FANOUT_LIMIT=3 so
 * that an account with four followers is big: its posts go to its outbox
 * and are merged into its followers' homes when read
 * (services/inbox/inbox_hybrid.c).
 *
 * Every home is compared, whole and page by page, with one recomputed from
 * what was acknowledged: the posts, not deleted, of whom the reader follows
 * now, and the reader's own, newest first.  Homes are read straight from
 * the inbox (ids exactly as it lists them; the gateway would hide deleted
 * posts by itself) and through the public API.
 *
 *   merged_home          two big accounts, a small one and the reader's own
 *                        posts; pages of 3 and 100; deletes of outbox and
 *                        fanned-out posts; an unfollow; crossing down and
 *                        up again, checked by the inbox's gauges
 *   crossings_under_load four writers post, delete, follow and unfollow so
 *                        that accounts cross the limit both ways while
 *                        posts are in flight; the inbox is killed (-9) in
 *                        the middle of it and restarted, twice; every home
 *                        exact after each
 *   block_and_erase      a big account blocked by one of its followers, then
 *                        deleted: its merged posts leave the blocker's home
 *                        with the block, and everyone's with the erasure,
 *                        which also drops its outbox (the account's gone
 *                        from the shard's big accounts)
 *   crossing_killed      an account of 20,000 fans (5,000 sanitized) in its
 *                        outbox, then under a raised limit: the inbox is
 *                        killed (-9) once the crossing down has copied the
 *                        outbox to a page of 2,000 fans; after the restart every
 *                        fan's home holds every post exactly once
 */
#include <signal.h>

#include "it.h"

#define HY_LIMIT "WARBLE_FANOUT_LIMIT=3"
#define HY_CAP   2048 /* entries a home may hold in these tests */

typedef struct hy_user {
	char     name[24];
	char    *token;
	uint64_t uid;
} hy_user;

typedef struct hy_post {
	uint64_t id;
	int      author; /* index of its author */
	bool     deleted;
} hy_post;

/* The model: users, their posts and who follows whom (follows[r][a]). */
#define HY_USERS 16
#define HY_POSTS 1024

static hy_user         hy_u[HY_USERS];
static int             hy_nu;
static hy_post         hy_p[HY_POSTS];
static int             hy_np;
static bool            hy_follows[HY_USERS][HY_USERS];
static pthread_mutex_t hy_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_int      hy_seq; /* makes each post's text unique */

/* hy_join registers and logs in a user of the model; returns its index. */
static int
hy_join(warble_client *c, const char *name)
{
	int i = hy_nu++;

	cr_assert_lt(i, HY_USERS);
	snprintf(hy_u[i].name, sizeof(hy_u[i].name), "%s", name);
	hy_u[i].token = it_join(c, name, "password-hybrid", &hy_u[i].uid);
	cr_assert_not_null(hy_u[i].token, "%s could not join", name);
	return i;
}

/* hy_follow makes r follow (or unfollow) a, and records it; false (after it_fail) on failure. */
static bool
hy_follow(warble_client *c, int r, int a, bool on)
{
	int rc;

	if (warble_set_token(c, hy_u[r].token) != WARBLE_OK) {
		it_fail("set_token");
		return false;
	}
	rc = on ? warble_follow(c, hy_u[a].name) : warble_unfollow(c, hy_u[a].name);
	if (rc != WARBLE_OK) {
		it_fail("%s %s %s: %s: %s", hy_u[r].name, on ? "follow" : "unfollow", hy_u[a].name,
		    warble_errname(rc), warble_errmsg(c));
		return false;
	}
	pthread_mutex_lock(&hy_mu);
	hy_follows[r][a] = on;
	pthread_mutex_unlock(&hy_mu);
	return true;
}

/* hy_post_as publishes a post by a and records it; its index in the model, or -1 after it_fail. */
static int
hy_post_as(warble_client *c, int a)
{
	char     text[64];
	uint64_t id = 0;
	int      rc, k;

	if (warble_set_token(c, hy_u[a].token) != WARBLE_OK) {
		it_fail("set_token");
		return -1;
	}
	snprintf(text, sizeof(text), "post %d of %s", atomic_fetch_add(&hy_seq, 1), hy_u[a].name);
	if ((rc = warble_post(c, text, &id)) != WARBLE_OK) {
		it_fail("%s: post: %s: %s", hy_u[a].name, warble_errname(rc), warble_errmsg(c));
		return -1;
	}
	pthread_mutex_lock(&hy_mu);
	k = hy_np < HY_POSTS ? hy_np++ : -1;
	if (k >= 0) {
		hy_p[k] = (hy_post) { id, a, false };
	}
	pthread_mutex_unlock(&hy_mu);
	if (k < 0) {
		it_fail("model full");
	}
	return k;
}

/* hy_delete deletes post k (by its author) and records it. */
static bool
hy_delete(warble_client *c, int k)
{
	int rc;

	if (warble_set_token(c, hy_u[hy_p[k].author].token) != WARBLE_OK) {
		it_fail("set_token");
		return false;
	}
	if ((rc = warble_delete(c, hy_p[k].id)) != WARBLE_OK) {
		it_fail("delete %llu: %s: %s", (unsigned long long)hy_p[k].id, warble_errname(rc),
		    warble_errmsg(c));
		return false;
	}
	pthread_mutex_lock(&hy_mu);
	hy_p[k].deleted = true;
	pthread_mutex_unlock(&hy_mu);
	return true;
}

/* hy_expect recomputes r's home: ids newest first; returns the count. */
static size_t
hy_expect(int r, uint64_t *ids)
{
	size_t n = 0;

	pthread_mutex_lock(&hy_mu);
	for (int k = 0; k < hy_np; k++) {
		int a = hy_p[k].author;
		if (!hy_p[k].deleted && (a == r || hy_follows[r][a])) {
			ids[n++] = hy_p[k].id;
		}
	}
	pthread_mutex_unlock(&hy_mu);
	qsort(ids, n, sizeof(*ids), it_cmp_desc);
	return n;
}

/* hy_inbox_home reads r's whole home straight from the inbox, page pages; the count or -1. */
static long
hy_inbox_home(int r, unsigned page, uint64_t *ids, size_t cap)
{
	uint64_t before = 0;
	size_t   n = 0;

	for (int pages = 0; pages < 10000; pages++) {
		wb_obj       *req = wb_request(WB_OP_INBOX_HOME), *rep = NULL;
		const wb_obj *posts = NULL;
		size_t        np = 0;
		uint64_t      next = 0;
		wb_set_u64(req, WB_F_UID, hy_u[r].uid);
		wb_set_u64(req, WB_F_LIMIT, page);
		if (before != 0) {
			wb_set_u64(req, WB_F_BEFORE, before);
		}
		int rc = it_call(it_cl.inbox_url, req, &rep);
		if (rc != WB_OK) {
			it_fail("%s: inbox.home: %s", hy_u[r].name, wb_err_name(rc));
			wb_msg_free(rep);
			return -1;
		}
		(void)wb_get_objs(rep, WB_F_POSTS, &posts, &np);
		if (np > page || n + np > cap) {
			it_fail("%s: a page of %zu posts (asked %u)", hy_u[r].name, np, page);
			wb_msg_free(rep);
			return -1;
		}
		for (size_t i = 0; i < np; i++) {
			ids[n++] = wb_u64(&posts[i], WB_F_ID, 0);
		}
		bool more = wb_get_u64(rep, WB_F_NEXT, &next) && next != 0;
		if (more && np != page) {
			it_fail("%s: a short page (%zu of %u) with a next", hy_u[r].name, np, page);
		}
		wb_msg_free(rep);
		if (!more) {
			return (long)n;
		}
		before = next;
	}
	it_fail("%s: home never ended", hy_u[r].name);
	return -1;
}

/* hy_api_home reads r's whole home through the gateway, page posts a page; the count or -1. */
static long
hy_api_home(warble_client *c, int r, unsigned page, uint64_t *ids, size_t cap)
{
	uint64_t before = 0;
	size_t   n = 0;

	if (warble_set_token(c, hy_u[r].token) != WARBLE_OK) {
		return -1;
	}
	for (int pages = 0; pages < 10000; pages++) {
		warble_posts_t *p = NULL;
		int             rc = warble_home(c, before, page, &p);
		if (rc != WARBLE_OK) {
			it_fail(
			    "%s: home: %s: %s", hy_u[r].name, warble_errname(rc), warble_errmsg(c));
			return -1;
		}
		for (size_t i = 0; i < p->n && n < cap; i++) {
			ids[n++] = p->posts[i].id;
		}
		before = p->next;
		bool more = p->next != 0 && p->n > 0;
		warble_posts_free(p);
		if (!more) {
			return (long)n;
		}
	}
	it_fail("%s: home never ended", hy_u[r].name);
	return -1;
}

/* hy_check compares r's home, from the inbox in pages of page and through the API, with the
 * model. */
static bool
hy_check(warble_client *c, int r, unsigned page)
{
	static uint64_t want[HY_CAP], got[HY_CAP];
	size_t          nw = hy_expect(r, want);
	char            what[48];

	snprintf(what, sizeof(what), "inbox home (pages of %u)", page);
	if (!it_same_ids(hy_u[r].name, what, got, hy_inbox_home(r, page, got, HY_CAP), want, nw)) {
		return false;
	}
	if (c != NULL) {
		long n = hy_api_home(c, r, page, got, HY_CAP);
		return it_same_ids(hy_u[r].name, "home through the gateway", got, n, want, nw);
	}
	return true;
}

/* hy_gauge reads one of the inbox's gauges. */
static uint64_t
hy_gauge(const char *name)
{
	return it_gauge(it_cl.inbox_url, name);
}

/* hy_check_all checks every user's home in pages of 3 and 100 (and through c, if not NULL). */
static void
hy_check_all(warble_client *c, const char *when)
{
	unsigned long before = it_failures();

	for (int r = 0; r < hy_nu; r++) {
		if (hy_u[r].token != NULL) { /* NULL: the account was deleted */
			hy_check(c, r, 3);
			hy_check(NULL, r, 100);
		}
	}
	cr_assert_eq(it_failures(), before, "%s: homes differ from the model (see stderr)", when);
}

Test(hybrid, merged_home, .fini = it_fini, .timeout = 240)
{
	const char    *env[] = { HY_LIMIT, NULL };
	warble_client *c;

	it_start(env);
	c = it_client();
	int b1 = hy_join(c, "hy_big1"), b2 = hy_join(c, "hy_big2"), s = hy_join(c, "hy_small");
	int r[5];
	for (int i = 0; i < 5; i++) {
		char name[24];
		snprintf(name, sizeof(name), "hy_reader%d", i);
		r[i] = hy_join(c, name);
		cr_assert(hy_follow(c, r[i], b1, true));
		cr_assert(hy_follow(c, r[i], b2, true));
	}
	cr_assert(hy_follow(c, r[0], s, true));

	/* the first posts are fanned out, and show the inbox five fans of each */
	cr_assert_geq(hy_post_as(c, b1), 0);
	cr_assert_geq(hy_post_as(c, b2), 0);
	it_wait_inbox(wbt_ms(20000));
	cr_assert_eq(hy_gauge("big_accounts"), 0);
	int first_b1 = 0, outboxed_b1 = -1;
	for (int round = 0; round < 6; round++) {
		int k = hy_post_as(c, b1);
		outboxed_b1 = outboxed_b1 < 0 ? k : outboxed_b1;
		cr_assert_geq(hy_post_as(c, s), 0);
		cr_assert_geq(hy_post_as(c, b2), 0);
		cr_assert_geq(hy_post_as(c, r[0]), 0);
	}
	it_wait_inbox(wbt_ms(20000));
	cr_assert_eq(hy_gauge("big_accounts"), 2, "both big accounts crossed");
	cr_assert_eq(hy_gauge("outbox_posts"), 12, "their posts went to their outboxes");
	cr_assert_eq(hy_gauge("fanout_crossed_up"), 2);
	hy_check_all(c, "merged");

	/* deletes: one post in the outbox, one fanned out before the crossing */
	cr_assert(hy_delete(c, outboxed_b1));
	cr_assert(hy_delete(c, first_b1));
	it_wait_inbox(wbt_ms(20000));
	hy_check_all(c, "after deletes");

	/* an unfollow hides the big account's posts as soon as it is applied */
	cr_assert(hy_follow(c, r[0], b2, false));
	it_wait_inbox(wbt_ms(20000));
	hy_check_all(c, "after an unfollow");

	/* b1 down to two followers: its next post crosses down, its outbox copied */
	for (int i = 1; i <= 3; i++) {
		cr_assert(hy_follow(c, r[i], b1, false));
	}
	cr_assert_geq(hy_post_as(c, b1), 0);
	it_wait_inbox(wbt_ms(20000));
	cr_assert_eq(hy_gauge("fanout_crossed_down"), 1);
	cr_assert_eq(hy_gauge("big_accounts"), 1);
	hy_check_all(c, "after crossing down");
	cr_assert_geq(hy_post_as(c, b1), 0);
	cr_assert(
	    hy_delete(c, outboxed_b1 + 4)); /* copied from the outbox, deleted as fanned out */
	it_wait_inbox(wbt_ms(20000));
	hy_check_all(c, "fanned out again");

	/* and up again: two follow back (backfilled); its next post finds four followers */
	cr_assert(hy_follow(c, r[1], b1, true));
	cr_assert(hy_follow(c, r[2], b1, true));
	cr_assert_geq(hy_post_as(c, b1), 0);
	cr_assert_geq(hy_post_as(c, b1), 0);
	it_wait_inbox(wbt_ms(20000));
	cr_assert_eq(hy_gauge("fanout_crossed_up"), 3);
	cr_assert_eq(hy_gauge("big_accounts"), 2);
	hy_check_all(c, "crossed up again");

	/* a restart keeps the big accounts and their outboxes */
	cr_assert_eq(wbt_cluster_restart(&it_cl, &it_cl.inbox, SIGTERM), 0);
	cr_assert_eq(hy_gauge("big_accounts"), 2);
	hy_check_all(c, "after a restart");
	warble_close(c);
	cr_assert_eq(wbt_cluster_stop(&it_cl, 10000), 0, "a daemon did not stop cleanly");
}

/* Under load: writer t owns authors t and t + HY_W, and the follows of readers r with r % HY_W
 * == t. */
#define HY_W       4
#define HY_AUTHORS (2 * HY_W)
#define HY_READERS 8
#define HY_PER \
	45 /* posts an author makes at most: under WARBLE_BACKFILL (50), so that a
                        * follow's backfill brings every post back */

static _Atomic bool hy_stop;
static int          hy_nposts[HY_AUTHORS]; /* each written by its author's writer alone */
static int          hy_cap;                /* posts an author may have made by the round's end */

/* hy_job is one writer: posts, deletes, follows and unfollows, and merged reads. */
static void
hy_job(warble_client *c, int t)
{
	uint64_t seed = 0x9e3779b97f4a7c15ULL * (uint64_t)(t + 1) + (uint64_t)wbt_now_ms();

	for (int op = 0; op < 100000 && !hy_stop && it_failures() == 0; op++) {
		uint64_t x = it_rand(&seed) % 100;
		int      a = t + (int)(it_rand(&seed) % 2) * HY_W;
		wbt_sleep_ms(2 + (int)(it_rand(&seed) % 7)); /* spread over the kill */
		if (x < 45 && hy_nposts[a] < hy_cap) {
			hy_nposts[a] += hy_post_as(c, a) >= 0;
		} else if (x < 55) {
			int pick = -1;
			pthread_mutex_lock(&hy_mu);
			for (int k = hy_np - 1; k >= 0 && pick < 0; k--) {
				if (hy_p[k].author == a && !hy_p[k].deleted &&
				    it_rand(&seed) % 3 == 0) {
					pick = k;
				}
			}
			pthread_mutex_unlock(&hy_mu);
			if (pick >= 0) {
				(void)hy_delete(c, pick);
			}
		} else if (x < 92) {
			int r = HY_AUTHORS + t + HY_W * (int)(it_rand(&seed) % (HY_READERS / HY_W));
			int to = (int)(it_rand(&seed) % HY_AUTHORS);
			pthread_mutex_lock(&hy_mu);
			bool on = !hy_follows[r][to];
			pthread_mutex_unlock(&hy_mu);
			(void)hy_follow(c, r, to, on);
		} else {
			/* a merged read while all this goes on (the inbox may be down) */
			warble_posts_t *p = NULL;
			if (warble_set_token(c, hy_u[HY_AUTHORS + t].token) == WARBLE_OK &&
			    warble_home(c, 0, 5, &p) == WARBLE_OK) {
				warble_posts_free(p);
			}
		}
	}
}

static void *
hy_load_main(void *arg)
{
	double *secs = arg;
	*secs = it_run(HY_W, hy_job);
	return NULL;
}

Test(hybrid, crossings_under_load, .fini = it_fini, .timeout = 300)
{
	const char    *env[] = { HY_LIMIT, NULL };
	warble_client *c;
	uint64_t       seed = 42;

	it_start_as(env, WBT_FIVE); /* the inbox alone is killed */
	c = it_client();
	for (int i = 0; i < HY_AUTHORS; i++) {
		char name[24];
		snprintf(name, sizeof(name), "hy_author%d", i);
		hy_join(c, name);
	}
	for (int i = 0; i < HY_READERS; i++) {
		char name[24];
		snprintf(name, sizeof(name), "hy_fan%d", i);
		int r = hy_join(c, name);
		for (int a = 0; a < HY_AUTHORS; a++) {
			if (it_rand(&seed) % 3 != 0) {
				cr_assert(hy_follow(c, r, a, true));
			}
		}
	}
	/* one post each: the fan-out shows the inbox who is near the limit */
	for (int a = 0; a < HY_AUTHORS; a++) {
		cr_assert_geq(hy_post_as(c, a), 0);
	}
	it_wait_inbox(wbt_ms(20000));

	for (int round = 0; round < 2; round++) {
		pthread_t th;
		double    secs = 0;
		hy_stop = false;
		hy_cap = HY_PER * (round + 1) / 2;
		cr_assert_eq(pthread_create(&th, NULL, hy_load_main, &secs), 0);
		wbt_sleep_ms(150);
		cr_assert_eq(wbt_cluster_restart(&it_cl, &it_cl.inbox, SIGKILL), 0,
		    "the inbox did not come back");
		wbt_sleep_ms(400);
		hy_stop = true;
		pthread_join(th, NULL);
		cr_assert_eq(it_failures(), 0, "a write failed (see stderr)");
		long long waited = it_wait_inbox(wbt_ms(60000));
		fprintf(stderr,
		    "hybrid: round %d: %d posts, load %.2f s, inbox caught up in %lld ms; "
		    "big %llu, outbox posts %llu, crossed up %llu, down %llu since the kill\n",
		    round, hy_np, secs, waited, (unsigned long long)hy_gauge("big_accounts"),
		    (unsigned long long)hy_gauge("outbox_posts"),
		    (unsigned long long)hy_gauge("fanout_crossed_up"),
		    (unsigned long long)hy_gauge("fanout_crossed_down"));
		hy_check_all(round == 1 ? c : NULL, "after the load and the kill");
	}
	cr_assert_gt(hy_gauge("big_accounts") + hy_gauge("fanout_crossed_down"), 0,
	    "no account crossed the limit: the test tested nothing");
	warble_close(c);
	cr_assert_eq(wbt_cluster_stop(&it_cl, 10000), 0, "a daemon did not stop cleanly");
}

/* hy_wait_erased waits, bounded, until relation, content and the inbox have applied the user
 * service's whole log of deletions, and the inbox what relation logged for them. */
static void
hy_wait_erased(void)
{
	long long   end = wbt_now_ms() + wbt_ms(30000);
	uint64_t    last = it_log_last(it_cl.user_url, WB_OP_USER_LOG);
	const char *urls[] = { it_cl.relation_url, it_cl.content_url, it_cl.inbox_url };

	for (size_t i = 0; i < 3; i++) {
		while (it_gauge(urls[i], "user_applied") < last) {
			cr_assert_lt(wbt_now_ms(), end, "%s has not applied the deletion", urls[i]);
			wbt_sleep_ms(20);
		}
	}
	it_wait_inbox(wbt_ms(30000));
}

Test(hybrid, block_and_erase, .fini = it_fini, .timeout = 240)
{
	const char    *env[] = { HY_LIMIT, NULL };
	warble_client *c;
	int            r[5];

	it_start(env);
	c = it_client();
	int b = hy_join(c, "hy_bigb");
	for (int i = 0; i < 5; i++) {
		char name[24];
		snprintf(name, sizeof(name), "hy_fan%d", i);
		r[i] = hy_join(c, name);
		cr_assert(hy_follow(c, r[i], b, true));
	}
	cr_assert(hy_follow(c, b, r[1], true)); /* the block ends this one too */
	cr_assert_geq(hy_post_as(c, b), 0);     /* fanned out: shows the inbox five fans */
	it_wait_inbox(wbt_ms(20000));
	for (int i = 0; i < 4; i++) {
		cr_assert_geq(hy_post_as(c, b), 0);
		cr_assert_geq(hy_post_as(c, r[1]), 0);
	}
	it_wait_inbox(wbt_ms(20000));
	cr_assert_eq(hy_gauge("big_accounts"), 1, "five followers: big");
	cr_assert_gt(hy_gauge("outbox_posts"), 0);
	hy_check_all(c, "merged");

	/* a follower blocks it: the follows end both ways, its merged posts leave that home */
	cr_assert_eq(warble_set_token(c, hy_u[r[1]].token), WARBLE_OK);
	cr_assert_eq(warble_block(c, hy_u[b].name), WARBLE_OK, "%s", warble_errmsg(c));
	hy_follows[r[1]][b] = hy_follows[b][r[1]] = false;
	it_wait_inbox(wbt_ms(20000));
	hy_check_all(c, "after the block");

	/* then it deletes itself: its posts leave every home, its outbox goes */
	cr_assert_eq(warble_set_token(c, hy_u[b].token), WARBLE_OK);
	cr_assert_eq(
	    warble_delete_account(c, "password-hybrid"), WARBLE_OK, "%s", warble_errmsg(c));
	for (int i = 0; i < 5; i++) {
		hy_follows[r[i]][b] = false;
	}
	for (int k = 0; k < hy_np; k++) {
		hy_p[k].deleted = hy_p[k].deleted || hy_p[k].author == b;
	}
	free(hy_u[b].token);
	hy_u[b].token = NULL;
	hy_wait_erased();
	hy_check_all(c, "after the erasure");
	cr_assert_eq(hy_gauge("big_accounts"), 0, "the deleted account is no longer big");
	warble_close(c);
	cr_assert_eq(wbt_cluster_stop(&it_cl, 10000), 0, "a daemon did not stop cleanly");
}

/* The crash in the middle of a crossing: an account of HY_KFANS followers over the limit, then
 * under a raised one, whose crossing down (its outbox copied into every fan's row) is killed. */
#define HY_KFANS  (wbt_ms(1) > 1 ? 5000 : 20000)
#define HY_KPOSTS 40

static char hy_limit_env[64];

/* hy_bulk makes n fans (user.register_many) follow target (rel.follow_many); their uids in out. */
static void
hy_bulk(uint64_t target, uint64_t *out, size_t n)
{
	for (size_t from = 0; from < n; from += 10000) {
		size_t          k = n - from < 10000 ? n - from : 10000;
		wb_obj         *req = wb_request(WB_OP_USER_REGISTER_MANY), *rep = NULL;
		const uint64_t *u = NULL;
		size_t          nu = 0;
		wb_set_cstr(req, WB_F_NAME, "hykf");
		wb_set_u64(req, WB_F_FROM, from);
		wb_set_u64(req, WB_F_LIMIT, k);
		wb_set_cstr(req, WB_F_PASSWORD, "password-hybrid");
		cr_assert_eq(it_call(it_cl.user_url, req, &rep), WB_OK, "register_many");
		cr_assert(wb_get_u64s(rep, WB_F_UIDS, &u, &nu) && nu == k);
		memcpy(out + from, u, k * sizeof(*u));
		wb_msg_free(rep);
		req = wb_request(WB_OP_REL_FOLLOW_MANY);
		wb_set_u64(req, WB_F_TARGET, target);
		wb_set_u64s(req, WB_F_UIDS, out + from, k);
		cr_assert_eq(it_call(it_cl.relation_url, req, &rep), WB_OK, "follow_many");
		wb_msg_free(rep);
	}
}

/* hy_fans_check reads every fan's home straight from the inbox: exactly want[0..nw), newest
 * first; returns the fans that differ. */
static size_t
hy_fans_check(const uint64_t *fans, size_t n, const uint64_t *want, size_t nw)
{
	rt_client     *c = NULL;
	rt_client_opts o = { .timeout_ms = wbt_ms(10000) };
	size_t         bad = 0;

	cr_assert_eq(rt_client_open(&c, it_cl.inbox_url, &o), WB_OK);
	for (size_t i = 0; i < n; i++) {
		wb_obj       *req = wb_request(WB_OP_INBOX_HOME), *rep = NULL;
		const wb_obj *posts = NULL;
		size_t        np = 0;
		bool          same;
		wb_set_u64(req, WB_F_UID, fans[i]);
		wb_set_u64(req, WB_F_LIMIT, 100);
		same = rt_call(c, req, &rep) == WB_OK &&
		       wb_get_objs(rep, WB_F_POSTS, &posts, &np) && np == nw;
		for (size_t k = 0; same && k < np; k++) {
			same = wb_u64(&posts[k], WB_F_ID, 0) == want[k];
		}
		if (!same && bad++ < 3) {
			fprintf(stderr, "hybrid: fan %llu: %zu posts in the home, want %zu\n",
			    (unsigned long long)fans[i], np, nw);
		}
		wb_msg_free(req);
		wb_msg_free(rep);
	}
	rt_client_close(c);
	return bad;
}

Test(hybrid, crossing_killed, .fini = it_fini, .timeout = 300)
{
	/* pages of 2,000 fans: the kill lands after the first of several, also sanitized */
	const char    *env[] = { hy_limit_env, "WARBLE_INBOX_FANOUT_PAGE=2000", NULL };
	size_t         nfans = HY_KFANS;
	uint64_t      *fans = malloc(nfans * sizeof(*fans)), ids[HY_KPOSTS + 1];
	warble_client *c;

	cr_assert_not_null(fans);
	snprintf(hy_limit_env, sizeof(hy_limit_env), "WARBLE_FANOUT_LIMIT=%zu", nfans / 2);
	it_start_as(env, WBT_FIVE); /* the inbox alone is killed */
	c = it_client();
	int x = hy_join(c, "hy_celebrity");
	hy_bulk(hy_u[x].uid, fans, nfans);
	it_wait_inbox(wbt_ms(120000));
	/* the first post is fanned out and finds the fans; the rest go to the outbox */
	for (int k = 0; k < HY_KPOSTS; k++) {
		cr_assert_geq(hy_post_as(c, x), 0);
		if (k == 0) {
			it_wait_inbox(wbt_ms(60000));
		}
	}
	it_wait_inbox(wbt_ms(60000));
	cr_assert_eq(hy_gauge("big_accounts"), 1);
	cr_assert_eq(hy_gauge("outbox_posts"), HY_KPOSTS - 1);
	size_t nw = hy_expect(x, ids);
	cr_assert_eq(hy_fans_check(fans, nfans, ids, nw), 0, "homes differ before the crossing");

	/* the limit raised over the count: the next post crosses down, copying 40 posts to
	 * every fan; the inbox is killed while it does */
	snprintf(hy_limit_env, sizeof(hy_limit_env), "WARBLE_FANOUT_LIMIT=%zu", nfans * 2);
	cr_assert_eq(wbt_cluster_restart(&it_cl, &it_cl.inbox, SIGTERM), 0);
	cr_assert_eq(hy_gauge("big_accounts"), 1, "the big account is kept across a restart");
	cr_assert_geq(hy_post_as(c, x), 0);
	/* a page of fans written, the crossing not over */
	long long deadline = wbt_now_ms() + wbt_ms(20000);
	uint64_t  during = 0, down = 0;
	while ((during = hy_gauge("cells_written")) == 0 &&
	       (down = hy_gauge("fanout_crossed_down")) == 0) {
		cr_assert_lt(wbt_now_ms(), deadline, "the crossing never began");
		wbt_sleep_ms(2);
	}
	down = hy_gauge("fanout_crossed_down");
	cr_assert_eq(wbt_cluster_restart(&it_cl, &it_cl.inbox, SIGKILL), 0);
	fprintf(stderr, "hybrid: killed %s the crossing down (%llu of %zu cells written)\n",
	    down == 0 ? "during" : "after", (unsigned long long)during, nfans * (HY_KPOSTS - 1));
	it_wait_inbox(wbt_ms(120000));
	cr_assert_eq(hy_gauge("big_accounts"), 0, "the account did not cross down");
	nw = hy_expect(x, ids);
	cr_assert_eq(nw, HY_KPOSTS + 1);
	cr_assert_eq(hy_fans_check(fans, nfans, ids, nw), 0, "homes differ after the crossing");
	hy_check_all(c, "the celebrity's own home");
	warble_close(c);
	free(fans);
	cr_assert_eq(wbt_cluster_stop(&it_cl, 10000), 0, "a daemon did not stop cleanly");
}
