/*
 * block_test.c - blocks and suggestions through the public API (the
 * SDK), on a whole cluster (five daemons, or one warble process under
 * WARBLE_TEST_MODE=one).
 *
 * `rules`: a block ends the follows both ways, the blocked user cannot
 * follow the blocker (BLOCKED, saying why) nor the blocker the blocked,
 * each one's posts leave the other's home (purged) and do not reach it
 * after, neither reads the other's timeline or a post of theirs; the
 * blocker's list names the blocked; an unblock lets them follow again.
 *
 * `race`: RACE_PAIRS pairs that follow each other, each taken in turn by
 * four threads at once (a barrier a pair): the blocker blocks, the
 * blocked follows the blocker again and again, the blocker follows the
 * blocked again and again, and both publish.  Once the inbox has
 * applied everything: no follow between any pair either way, and no
 * post of either in the other's home, while each keeps its own.
 *
 * `list_paged`: seven blocks listed three a page, the cursor walked, each
 * once in uid order; blocking again, oneself or nobody; an unblock
 * leaves the list; blocked_by on the other side, which lists nothing.
 *
 * `suggestions::friends_of_friends`: accounts followed by 3, 2 and 1 of
 * the reader's follows come first in that order with followed_by; never
 * the reader, an account it follows, one it blocks or one blocking it; a
 * limit; a follow takes one out; a new account gets the most followed;
 * no token, no suggestions.
 */
#include "it.h"

#define RACE_PAIRS   100
#define RACE_THREADS 4
#define RACE_TRIES   4 /* follows each way, and posts each, per pair */
#define HOME_CAP     (RACE_PAIRS * RACE_TRIES * 4 + 64)

typedef struct bt_user {
	char     name[24];
	char    *token;
	uint64_t uid;
} bt_user;

static bt_user           bt_a[RACE_PAIRS], bt_b[RACE_PAIRS];
static pthread_barrier_t bt_bar;
static atomic_ulong      bt_refused, bt_followed_late;

/* bt_home_count reads c's whole home and counts the posts by author in it (-1 on a failure). */
static long
bt_home_count(warble_client *c, const char *who, uint64_t author)
{
	static uint64_t ids[HOME_CAP], authors[HOME_CAP];
	long            n = it_home_all(c, who, ids, authors, HOME_CAP), k = 0;

	for (long i = 0; i < n; i++) {
		k += authors[i] == author;
	}
	return n < 0 ? -1 : k;
}

/* bt_wait_home waits until c's home holds want posts by author (fan-out, purges are async). */
static void
bt_wait_home(warble_client *c, const char *who, uint64_t author, long want)
{
	long long deadline = wbt_now_ms() + wbt_ms(15000);
	long      k;

	while ((k = bt_home_count(c, who, author)) != want) {
		cr_assert_lt(wbt_now_ms(), deadline, "%s's home holds %ld posts of %llu, want %ld",
		    who, k, (unsigned long long)author, want);
		wbt_sleep_ms(30);
	}
}

Test(block, rules, .fini = wbt_cleanup, .timeout = 180)
{
	warble_client  *a, *b;
	warble_posts_t *p;
	warble_users_t *us;
	warble_user_t  *u;
	uint64_t        ua, ub, pa, pb, id;

	it_start(NULL);
	a = it_client();
	b = it_client();
	free(it_join(a, "blocker", "password1", &ua));
	free(it_join(b, "blocked", "password1", &ub));
	cr_assert_eq(warble_follow(a, "blocked"), WARBLE_OK);
	cr_assert_eq(warble_follow(b, "blocker"), WARBLE_OK);
	cr_assert_eq(warble_post(a, "from the blocker", &pa), WARBLE_OK);
	cr_assert_eq(warble_post(b, "from the blocked", &pb), WARBLE_OK);
	bt_wait_home(a, "blocker", ub, 1);
	bt_wait_home(b, "blocked", ua, 1);

	cr_assert_eq(warble_block(a, "blocked"), WARBLE_OK, "%s", warble_errmsg(a));
	/* the follows end both ways at once; the homes lose each other's posts */
	cr_assert_eq(warble_profile(a, "blocked", &u), WARBLE_OK);
	cr_assert(!u->followed && u->blocking && !u->blocked_by);
	cr_assert_eq(u->followers, 0);
	cr_assert_eq(u->following, 0);
	warble_user_free(u);
	bt_wait_home(a, "blocker", ub, 0);
	bt_wait_home(b, "blocked", ua, 0);
	bt_wait_home(a, "blocker", ua, 1);
	bt_wait_home(b, "blocked", ub, 1);

	/* no follow either way while it stands, with the reason */
	cr_assert_eq(warble_follow(b, "blocker"), WARBLE_EBLOCKED);
	cr_assert_str_eq(warble_errmsg(b), "this user blocks you: you cannot follow them");
	cr_assert_eq(warble_follow(a, "blocked"), WARBLE_EBLOCKED);
	cr_assert_str_eq(warble_errmsg(a), "you block this user: unblock them to follow them");

	/* new posts reach neither home; timelines and posts hidden both ways */
	cr_assert_eq(warble_post(b, "after the block", &id), WARBLE_OK);
	cr_assert_eq(warble_post(a, "the blocker again", &id), WARBLE_OK);
	it_wait_inbox(wbt_ms(15000));
	cr_assert_eq(bt_home_count(a, "blocker", ub), 0);
	cr_assert_eq(bt_home_count(b, "blocked", ua), 0);
	cr_assert_eq(warble_timeline(a, "blocked", 0, 0, &p), WARBLE_OK);
	cr_assert_eq(p->n, 0);
	cr_assert_eq(p->next, 0);
	warble_posts_free(p);
	cr_assert_eq(warble_timeline(b, "blocker", 0, 0, &p), WARBLE_OK);
	cr_assert_eq(p->n, 0);
	warble_posts_free(p);
	cr_assert_eq(warble_post_get(a, pb, &(warble_post_t *) { NULL }), WARBLE_ENOPOST);
	cr_assert_eq(warble_post_get(b, pa, &(warble_post_t *) { NULL }), WARBLE_ENOPOST);

	/* others still read both */
	warble_client *c = it_client();
	warble_post_t *one;
	cr_assert_eq(warble_timeline(c, "blocked", 0, 0, &p), WARBLE_OK);
	cr_assert_eq(p->n, 2);
	warble_posts_free(p);
	cr_assert_eq(warble_post_get(c, pa, &one), WARBLE_OK);
	warble_post_free(one);

	cr_assert_eq(warble_blocks(a, 0, 0, &us), WARBLE_OK);
	cr_assert_eq(us->n, 1);
	cr_assert_eq(us->users[0].uid, ub);
	warble_users_free(us);

	/* lifted: following works again, and brings the posts back */
	cr_assert_eq(warble_unblock(a, "blocked"), WARBLE_OK);
	cr_assert_eq(warble_follow(b, "blocker"), WARBLE_OK, "%s", warble_errmsg(b));
	bt_wait_home(b, "blocked", ua, 2);
	cr_assert_eq(warble_timeline(a, "blocked", 0, 0, &p), WARBLE_OK);
	cr_assert_eq(p->n, 2);
	warble_posts_free(p);
	warble_close(a);
	warble_close(b);
	warble_close(c);
}

/* bt_race_job is thread t's part of every pair, in turn. */
static void
bt_race_job(warble_client *c, int t)
{
	char text[64];

	for (int i = 0; i < RACE_PAIRS; i++) {
		bt_user *a = &bt_a[i], *b = &bt_b[i];
		int      rc;

		pthread_barrier_wait(&bt_bar);
		switch (t) {
		case 0: /* the block */
			warble_set_token(c, a->token);
			if ((rc = warble_block(c, b->name)) != WARBLE_OK) {
				it_fail("%s blocks %s: %s: %s", a->name, b->name,
				    warble_errname(rc), warble_errmsg(c));
			}
			break;
		case 1: /* the blocked follows the blocker again */
		case 2: /* the blocker follows the blocked again */
			warble_set_token(c, t == 1 ? b->token : a->token);
			for (int k = 0; k < RACE_TRIES; k++) {
				const char *whom = t == 1 ? a->name : b->name;
				/* a new edge each time: undone again, but the last one is left
				 * for the block to end (or refuse) */
				if ((rc = warble_follow(c, whom)) == WARBLE_OK) {
					atomic_fetch_add(&bt_followed_late, 1);
					rc = k + 1 < RACE_TRIES ? warble_unfollow(c, whom) : rc;
				} else if (rc == WARBLE_EBLOCKED) {
					atomic_fetch_add(&bt_refused, 1);
					rc = WARBLE_OK;
				}
				if (rc != WARBLE_OK) {
					it_fail("pair %d: %s: %s", i, warble_errname(rc),
					    warble_errmsg(c));
				}
			}
			break;
		default: /* both publish */
			for (int k = 0; k < RACE_TRIES; k++) {
				bt_user *u = k % 2 == 0 ? a : b;
				warble_set_token(c, u->token);
				snprintf(
				    text, sizeof(text), "pair %d post %d by %s", i, k, u->name);
				if ((rc = warble_post(c, text, NULL)) != WARBLE_OK) {
					it_fail("%s: %s", text, warble_errname(rc));
				}
			}
			break;
		}
	}
}

Test(block, race, .fini = wbt_cleanup, .timeout = 300)
{
	warble_client *c;
	uint64_t       uids[8];

	it_start(NULL);
	c = it_client();
	for (int i = 0; i < RACE_PAIRS; i++) {
		snprintf(bt_a[i].name, sizeof(bt_a[i].name), "race_a%d", i);
		snprintf(bt_b[i].name, sizeof(bt_b[i].name), "race_b%d", i);
		bt_a[i].token = it_join(c, bt_a[i].name, "password1", &bt_a[i].uid);
		cr_assert_eq(warble_post(c, "before", NULL), WARBLE_OK);
		bt_b[i].token = it_join(c, bt_b[i].name, "password1", &bt_b[i].uid);
		cr_assert_eq(warble_post(c, "before", NULL), WARBLE_OK);
		cr_assert_eq(warble_follow(c, bt_a[i].name), WARBLE_OK);
		warble_set_token(c, bt_a[i].token);
		cr_assert_eq(warble_follow(c, bt_b[i].name), WARBLE_OK);
	}
	cr_assert_eq(it_failures(), 0);
	cr_assert_eq(pthread_barrier_init(&bt_bar, NULL, RACE_THREADS), 0);
	double secs = it_run(RACE_THREADS, bt_race_job);
	pthread_barrier_destroy(&bt_bar);
	fprintf(stderr,
	    "block race: %d pairs in %.1f s; follows refused %lu, taken "
	    "%lu\n",
	    RACE_PAIRS, secs, atomic_load(&bt_refused), atomic_load(&bt_followed_late));
	cr_assert_eq(it_failures(), 0);

	it_wait_inbox(wbt_ms(30000));
	for (int i = 0; i < RACE_PAIRS; i++) {
		bt_user *a = &bt_a[i], *b = &bt_b[i];

		cr_assert_eq(
		    it_users_all(c, a->name, false, uids, 8), 0, "%s follows someone", a->name);
		cr_assert_eq(
		    it_users_all(c, b->name, false, uids, 8), 0, "%s follows someone", b->name);
		cr_assert_eq(it_users_all(c, a->name, true, uids, 8), 0, "%s has a fan", a->name);
		warble_set_token(c, a->token);
		cr_assert_eq(bt_home_count(c, a->name, b->uid), 0, "a post of %s in %s's home",
		    b->name, a->name);
		cr_assert_eq(bt_home_count(c, a->name, a->uid), 1 + RACE_TRIES / 2);
		warble_set_token(c, b->token);
		cr_assert_eq(bt_home_count(c, b->name, a->uid), 0, "a post of %s in %s's home",
		    a->name, b->name);
		cr_assert_eq(bt_home_count(c, b->name, b->uid), 1 + RACE_TRIES / 2);
		cr_assert_eq(warble_follow(c, a->name), WARBLE_EBLOCKED);
	}
	cr_assert_eq(it_failures(), 0);
	warble_close(c);
}

Test(block, list_paged, .fini = wbt_cleanup, .timeout = 120)
{
	enum { N = 7 };
	warble_client  *a;
	warble_users_t *us;
	uint64_t        ua, want[N], got[N + 1], after = 0;
	char            name[24];
	size_t          n = 0;
	int             pages = 0;

	it_start(NULL);
	a = it_client();
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "target%d", i);
		free(it_join(a, name, "password1", &want[i]));
	}
	free(it_join(a, "lister", "password1", &ua));
	for (int i = N - 1; i >= 0; i--) {
		snprintf(name, sizeof(name), "target%d", i);
		cr_assert_eq(warble_block(a, name), WARBLE_OK, "%s", warble_errmsg(a));
	}
	cr_assert_eq(warble_block(a, "target3"), WARBLE_OK, "blocking again changes nothing");
	cr_assert_eq(warble_block(a, "lister"), WARBLE_EINVAL, "blocking oneself");
	cr_assert_eq(warble_block(a, "nobody_here"), WARBLE_ENOUSER);

	/* three a page, the cursor walked: each once, ascending by uid */
	do {
		cr_assert_eq(warble_blocks(a, after, 3, &us), WARBLE_OK, "%s", warble_errmsg(a));
		cr_assert_leq(us->n, 3);
		for (size_t i = 0; i < us->n; i++) {
			cr_assert_lt(n, N, "more blocks listed than made");
			got[n++] = us->users[i].uid;
			cr_assert_not_null(us->users[i].name);
		}
		after = us->next;
		warble_users_free(us);
		cr_assert_lt(++pages, 10, "the list never ends");
	} while (after != 0);
	cr_assert_eq(n, N);
	qsort(want, N, sizeof(want[0]), it_cmp_asc);
	for (size_t i = 0; i < N; i++) {
		cr_assert_eq(got[i], want[i], "block %zu: %llu, want %llu", i,
		    (unsigned long long)got[i], (unsigned long long)want[i]);
	}

	/* an unblock leaves the list; a second is harmless */
	cr_assert_eq(warble_unblock(a, "target3"), WARBLE_OK);
	cr_assert_eq(warble_unblock(a, "target3"), WARBLE_OK);
	cr_assert_eq(warble_blocks(a, 0, 0, &us), WARBLE_OK);
	cr_assert_eq(us->n, N - 1);
	for (size_t i = 0; i < us->n; i++) {
		cr_assert_str_neq(us->users[i].name, "target3");
	}
	warble_users_free(us);

	/* the blocked side sees blocked_by, and nothing in its own list */
	warble_user_t *u;
	free(it_join(a, "target9", "password1", &got[0]));
	cr_assert_eq(warble_block(a, "lister"), WARBLE_OK);
	warble_set_token(a, NULL);
	cr_assert_eq(warble_login(a, "target0", "password1", &got[0]), WARBLE_OK);
	cr_assert_eq(warble_profile(a, "lister", &u), WARBLE_OK);
	cr_assert(u->blocked_by && !u->blocking);
	warble_user_free(u);
	cr_assert_eq(warble_blocks(a, 0, 0, &us), WARBLE_OK);
	cr_assert_eq(us->n, 0);
	warble_users_free(us);

	/* a block of the lister (by target9) is not in the lister's own list */
	cr_assert_eq(warble_login(a, "lister", "password1", &got[0]), WARBLE_OK);
	cr_assert_eq(warble_blocks(a, 0, 0, &us), WARBLE_OK);
	cr_assert_eq(us->n, N - 1);
	for (size_t i = 0; i < us->n; i++) {
		cr_assert_str_neq(us->users[i].name, "target9");
	}
	warble_users_free(us);
	warble_close(a);
}

/* st_join registers name on c and returns its token (freed by the caller). */
static char *
st_join(warble_client *c, const char *name, uint64_t *uid)
{
	char *t = it_join(c, name, "password1", uid);

	cr_assert_not_null(t, "%s did not join", name);
	return t;
}

/* st_follow makes the user of token follow each of the NULL-ended names. */
static void
st_follow(warble_client *c, const char *token, ...)
{
	va_list     ap;
	const char *whom;

	warble_set_token(c, token);
	va_start(ap, token);
	while ((whom = va_arg(ap, const char *)) != NULL) {
		cr_assert_eq(
		    warble_follow(c, whom), WARBLE_OK, "follow %s: %s", whom, warble_errmsg(c));
	}
	va_end(ap);
}

Test(suggestions, friends_of_friends, .fini = wbt_cleanup, .timeout = 120)
{
	static const char *const never[] = { "reader", "friend1", "friend2", "friend3", "known",
		"blockee", "blocker2" };
	warble_client           *c;
	warble_users_t          *us;
	uint64_t                 uid, ux, uy, uz;
	char                    *tr, *t1, *t2, *t3, *tb;

	it_start(NULL);
	c = it_client();
	tr = st_join(c, "reader", &uid);
	t1 = st_join(c, "friend1", &uid);
	t2 = st_join(c, "friend2", &uid);
	t3 = st_join(c, "friend3", &uid);
	free(st_join(c, "cand_x", &ux));
	free(st_join(c, "cand_y", &uy));
	free(st_join(c, "cand_z", &uz));
	free(st_join(c, "known", &uid));
	free(st_join(c, "blockee", &uid));
	tb = st_join(c, "blocker2", &uid);

	/* cand_x is followed by all three friends, cand_y by two, cand_z by one; the
	 * friends also follow the reader, each other, one the reader follows,
	 * one the reader blocks and one who blocks the reader */
	st_follow(c, tr, "friend1", "friend2", "friend3", "known", NULL);
	st_follow(
	    c, t1, "cand_x", "cand_y", "cand_z", "reader", "friend2", "known", "blockee", NULL);
	st_follow(c, t2, "cand_x", "cand_y", "reader", "friend3", "blockee", "blocker2", NULL);
	st_follow(c, t3, "cand_x", "reader", "friend1", "blocker2", NULL);
	warble_set_token(c, tr);
	cr_assert_eq(warble_block(c, "blockee"), WARBLE_OK);
	warble_set_token(c, tb);
	cr_assert_eq(warble_block(c, "reader"), WARBLE_OK);

	warble_set_token(c, tr);
	cr_assert_eq(warble_suggestions(c, 0, &us), WARBLE_OK, "%s", warble_errmsg(c));
	cr_assert_geq(us->n, 3, "suggestions: %zu", us->n);
	cr_assert_leq(us->n, 20);
	cr_assert_eq(us->users[0].uid, ux);
	cr_assert_eq(us->users[0].followed_by, 3);
	cr_assert_str_eq(us->users[0].name, "cand_x");
	cr_assert_eq(us->users[1].uid, uy);
	cr_assert_eq(us->users[1].followed_by, 2);
	cr_assert_eq(us->users[2].uid, uz);
	cr_assert_eq(us->users[2].followed_by, 1);
	for (size_t i = 0; i < us->n; i++) {
		for (size_t k = 0; k < sizeof(never) / sizeof(never[0]); k++) {
			cr_assert_str_neq(us->users[i].name, never[k], "%s suggested", never[k]);
		}
		for (size_t k = 0; k < i; k++) {
			cr_assert_neq(us->users[i].uid, us->users[k].uid, "suggested twice");
		}
	}
	warble_users_free(us);

	/* a limit; a follow takes one out */
	cr_assert_eq(warble_suggestions(c, 2, &us), WARBLE_OK);
	cr_assert_eq(us->n, 2);
	warble_users_free(us);
	cr_assert_eq(warble_follow(c, "cand_x"), WARBLE_OK);
	cr_assert_eq(warble_suggestions(c, 0, &us), WARBLE_OK);
	cr_assert_eq(us->users[0].uid, uy);
	for (size_t i = 0; i < us->n; i++) {
		cr_assert_neq(us->users[i].uid, ux, "a followed account suggested");
	}
	warble_users_free(us);

	/* a new account follows nobody: the most followed, never itself */
	free(st_join(c, "newcomer", &uid));
	cr_assert_eq(warble_suggestions(c, 0, &us), WARBLE_OK);
	cr_assert_gt(us->n, 0, "a new account is suggested nobody");
	for (size_t i = 0; i < us->n; i++) {
		cr_assert_neq(us->users[i].uid, uid, "oneself suggested");
		cr_assert_eq(us->users[i].followed_by, 0);
	}
	warble_users_free(us);

	/* logged out: refused */
	warble_set_token(c, NULL);
	cr_assert_eq(warble_suggestions(c, 0, &us), WARBLE_EAUTH);
	free(tr), free(t1), free(t2), free(t3), free(tb);
	warble_close(c);
}
