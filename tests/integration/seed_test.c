/*
 * seed_test.c - the original HBase Weibo scenario, end to end through
 * libwarble on a real cluster:
 *
 *   users 0001, 0008, 0009 (u0001, u0008, u0009)
 *   0001 publishes; 0008 and 0009 publish -> each home = one's own posts
 *   0001 follows 0008 and 0009      -> home = theirs and its own, newest first
 *   0001 unfollows 0009             -> 0009's posts leave 0001's home
 *   0008 publishes again            -> reaches 0001's home
 *   0001's own timeline, profile counts, following and fans lists exact
 */
#include "it.h"
#include "wb_id.h"

enum { U1, U8, U9, NU };

static const char    *seed_names[NU] = { "u0001", "u0008", "u0009" };
static warble_client *seed_c[NU];
static uint64_t       seed_uid[NU];

/* seed_post publishes text as user i and returns the post id. */
static uint64_t
seed_post(int i, const char *text)
{
	uint64_t id = 0;
	int      rc = warble_post(seed_c[i], text, &id);

	cr_assert_eq(rc, WARBLE_OK, "%s post: %s", seed_names[i], warble_errmsg(seed_c[i]));
	cr_assert_gt(id, 0);
	return id;
}

/*
 * seed_home checks user i's whole home timeline is exactly want, with
 * their authors, newest first: by id, which orders by the ms and, within
 * one, by the author's slot group (want is given in publishing order
 * reversed, and sorted here).
 */
static void
seed_home(int i, const uint64_t *want, const uint64_t *want_author, size_t n)
{
	uint64_t ids[64], authors[64], sorted[64], by[64];

	cr_assert_leq(n, 64);
	for (size_t k = 0; k < n; k++) { /* insertion sort of (id, author), largest id first */
		size_t j = k;
		for (; j > 0 && sorted[j - 1] < want[k]; j--) {
			sorted[j] = sorted[j - 1];
			by[j] = by[j - 1];
		}
		sorted[j] = want[k];
		by[j] = want_author[k];
	}
	it_wait_inbox(20000);
	long got = it_home_all(seed_c[i], seed_names[i], ids, authors, 64);
	cr_assert(it_same_ids(seed_names[i], "home", ids, got, sorted, n));
	for (size_t k = 0; k < n; k++) {
		cr_assert_eq(authors[k], by[k], "home[%zu] author", k);
	}
}

/* seed_text checks that page p holds post id with text, by the user name. */
static void
seed_text(const warble_posts_t *p, uint64_t id, const char *text, const char *name)
{
	for (size_t k = 0; k < p->n; k++) {
		if (p->posts[k].id == id) {
			cr_assert_str_eq(p->posts[k].text, text);
			cr_assert_str_eq(p->posts[k].author_name, name);
			return;
		}
	}
	cr_assert_fail("post %llu not on the page", (unsigned long long)id);
}

/* seed_list checks name's following (fans = false) or fans list is exactly want (any order). */
static void
seed_list(int i, bool fans, const uint64_t *want, size_t n)
{
	uint64_t got[16], sorted[16];

	long k = it_users_all(seed_c[U1], seed_names[i], fans, got, 16);
	if (n > 0) {
		memcpy(sorted, want, n * sizeof(*want));
		qsort(sorted, n, sizeof(*sorted), it_cmp_asc);
	}
	if (k > 0) {
		qsort(got, (size_t)k, sizeof(*got), it_cmp_asc);
	}
	cr_assert(it_same_ids(seed_names[i], fans ? "fans" : "following", got, k, sorted, n));
}

Test(seed, hbase_weibo_scenario, .fini = it_fini, .timeout = 90)
{
	it_start(NULL);
	for (int i = 0; i < NU; i++) {
		seed_c[i] = it_client();
		cr_assert_eq(
		    warble_register(seed_c[i], seed_names[i], "password-0000", &seed_uid[i]),
		    WARBLE_OK, "%s", warble_errmsg(seed_c[i]));
		uint64_t uid = 0;
		cr_assert_eq(
		    warble_login(seed_c[i], seed_names[i], "password-0000", &uid), WARBLE_OK);
		cr_assert_eq(uid, seed_uid[i]);
	}

	uint64_t a1 = seed_post(U1, "0001: first post");
	uint64_t p8 = seed_post(U8, "0008: hello from 0008");
	uint64_t p9 = seed_post(U9, "0009: hello from 0009");
	uint64_t q9 = seed_post(U9, "0009: second from 0009");
	/* ids order by millisecond; within one, by the author's slot group */
	cr_assert(wb_id_ms(a1) <= wb_id_ms(p8) && wb_id_ms(p8) <= wb_id_ms(p9) && p9 < q9,
	    "ids are time-ordered");

	/* nobody followed yet: 0001's home is its own post alone */
	{
		uint64_t want[] = { a1 }, by[] = { seed_uid[U1] };
		seed_home(U1, want, by, 1);
	}

	cr_assert_eq(
	    warble_follow(seed_c[U1], "u0008"), WARBLE_OK, "%s", warble_errmsg(seed_c[U1]));
	cr_assert_eq(
	    warble_follow(seed_c[U1], "u0009"), WARBLE_OK, "%s", warble_errmsg(seed_c[U1]));
	{
		uint64_t want[] = { q9, p9, p8, a1 },
		         by[] = { seed_uid[U9], seed_uid[U9], seed_uid[U8], seed_uid[U1] };
		seed_home(U1, want, by, 4);
		warble_posts_t *p = NULL;
		cr_assert_eq(warble_home(seed_c[U1], 0, 0, &p), WARBLE_OK);
		cr_assert_eq(p->n, 4);
		seed_text(p, q9, "0009: second from 0009", "u0009");
		seed_text(p, p8, "0008: hello from 0008", "u0008");
		seed_text(p, a1, "0001: first post", "u0001");
		warble_posts_free(p);
	}
	/* 0008 and 0009 follow nobody: their homes are their own posts */
	{
		uint64_t want8[] = { p8 }, by8[] = { seed_uid[U8] };
		uint64_t want9[] = { q9, p9 }, by9[] = { seed_uid[U9], seed_uid[U9] };
		seed_home(U8, want8, by8, 1);
		seed_home(U9, want9, by9, 2);
	}

	/* following twice changes nothing */
	cr_assert_eq(warble_follow(seed_c[U1], "u0008"), WARBLE_OK);
	cr_assert(it_profile_counts(seed_c[U1], "u0001", 2, 0));
	cr_assert(it_profile_counts(seed_c[U1], "u0008", 0, 1));
	cr_assert(it_profile_counts(seed_c[U1], "u0009", 0, 1));
	{
		uint64_t f1[] = { seed_uid[U8], seed_uid[U9] }, fan[] = { seed_uid[U1] };
		seed_list(U1, false, f1, 2);
		seed_list(U1, true, NULL, 0);
		seed_list(U8, true, fan, 1);
		seed_list(U9, true, fan, 1);
		seed_list(U8, false, NULL, 0);
	}

	cr_assert_eq(
	    warble_unfollow(seed_c[U1], "u0009"), WARBLE_OK, "%s", warble_errmsg(seed_c[U1]));
	{
		uint64_t want[] = { p8, a1 }, by[] = { seed_uid[U8], seed_uid[U1] };
		seed_home(U1, want, by, 2);
	}
	cr_assert(it_profile_counts(seed_c[U1], "u0001", 1, 0));
	cr_assert(it_profile_counts(seed_c[U1], "u0009", 0, 0));
	{
		uint64_t f1[] = { seed_uid[U8] };
		seed_list(U1, false, f1, 1);
		seed_list(U9, true, NULL, 0);
	}

	/* posts after the follow arrive by fan-out, 0001's own too; 0009's do not */
	uint64_t r8 = seed_post(U8, "0008: after the follow");
	uint64_t r9 = seed_post(U9, "0009: nobody of 0001's sees this");
	uint64_t b1 = seed_post(U1, "0001: second post");
	{
		uint64_t want[] = { b1, r8, p8, a1 },
		         by[] = { seed_uid[U1], seed_uid[U8], seed_uid[U8], seed_uid[U1] };
		seed_home(U1, want, by, 4);
	}

	/* 0008 follows 0001 back: backfill brings 0001's two posts beside 0008's own */
	cr_assert_eq(warble_follow(seed_c[U8], "u0001"), WARBLE_OK);
	{
		uint64_t want[] = { b1, r8, p8, a1 },
		         by[] = { seed_uid[U1], seed_uid[U8], seed_uid[U8], seed_uid[U1] };
		seed_home(U8, want, by, 4);
	}
	/* 0009 is followed by nobody and follows nobody: its own posts alone */
	{
		uint64_t want[] = { r9, q9, p9 },
		         by[] = { seed_uid[U9], seed_uid[U9], seed_uid[U9] };
		seed_home(U9, want, by, 3);
	}
	cr_assert(it_profile_counts(seed_c[U9], "u0001", 1, 1));
	cr_assert(it_profile_counts(seed_c[U9], "u0008", 1, 1));
	{
		uint64_t f8[] = { seed_uid[U1] }, fan1[] = { seed_uid[U8] };
		seed_list(U8, false, f8, 1);
		seed_list(U1, true, fan1, 1);
	}

	/* own timelines, newest first, exact ids */
	uint64_t ids[16];
	long     n;
	{
		uint64_t want[] = { b1, a1 };
		n = it_timeline_all(seed_c[U1], "u0001", ids, 16);
		cr_assert(it_same_ids("u0001", "timeline", ids, n, want, 2));
	}
	{
		uint64_t want[] = { r9, q9, p9 };
		n = it_timeline_all(seed_c[U8], "u0009", ids, 16);
		cr_assert(it_same_ids("u0009", "timeline", ids, n, want, 3));
	}
	{
		uint64_t want[] = { r8, p8 };
		n = it_timeline_all(seed_c[U8], "u0008", ids, 16);
		cr_assert(it_same_ids("u0008", "timeline", ids, n, want, 2));
	}
	cr_assert_eq(it_failures(), 0);

	for (int i = 0; i < NU; i++) {
		warble_close(seed_c[i]);
	}
	cr_assert_eq(wbt_cluster_stop(&it_cl, 10000), 0, "a daemon did not stop cleanly");
}
