/*
 * errors_test.c - what an application sees when it gets things wrong,
 * end to end through libwarble on a real cluster: each mistake gives its
 * own error code and a message that says what went wrong, and nothing is
 * half done (a refused post is not published, a refused follow not made).
 */
#include "it.h"

static warble_client *er_c;

/* er_err checks a call's code and that warble_errmsg explains it (containing hint, if not NULL). */
#define er_err(call, want, hint)                                                         \
	do {                                                                             \
		int er_rc_ = (call);                                                     \
		cr_assert_eq(er_rc_, (want), "%s: got %s (%s), want %s", #call,          \
		    warble_errname(er_rc_), warble_errmsg(er_c), warble_errname(want));  \
		const char *er_m_ = warble_errmsg(er_c);                                 \
		cr_assert_neq(er_m_[0], '\0', "%s: no message", #call);                  \
		cr_assert((hint) == NULL || strstr(er_m_, (hint) ? (hint) : "") != NULL, \
		    "%s: message \"%s\" does not mention \"%s\"", #call, er_m_, (hint)); \
	} while (0)

static void
er_setup(const char *const *env)
{
	it_start(env);
	er_c = it_client();
}

static void
er_fini(void)
{
	warble_close(er_c);
	er_c = NULL;
	it_fini();
}

/* er_timeline_len counts user name's posts. */
static long
er_timeline_len(const char *name)
{
	uint64_t ids[32];

	return it_timeline_all(er_c, name, ids, 32);
}

Test(errors, accounts_and_tokens, .fini = er_fini, .timeout = 60)
{
	uint64_t uid = 0, uid2 = 0;

	er_setup(NULL);
	cr_assert_eq(warble_register(er_c, "dup_user", "password-1", &uid), WARBLE_OK);

	/* duplicate names, compared case-insensitively */
	er_err(warble_register(er_c, "dup_user", "password-2", &uid2), WARBLE_EEXIST, "taken");
	er_err(warble_register(er_c, "DUP_USER", "password-2", &uid2), WARBLE_EEXIST, "taken");
	er_err(warble_register(er_c, "Dup_User", "password-2", &uid2), WARBLE_EEXIST, "taken");
	/* bad names and passwords */
	er_err(warble_register(er_c, "no", "password-2", NULL), WARBLE_EBADNAME, "username");
	er_err(
	    warble_register(er_c, "white space", "password-2", NULL), WARBLE_EBADNAME, "username");
	er_err(warble_register(er_c, "fine_name", "short", NULL), WARBLE_EBADPASS, "password");

	/* wrong password, unknown user: the same refusal, revealing nothing */
	er_err(warble_login(er_c, "dup_user", "password-2", NULL), WARBLE_ELOGIN, "password");
	er_err(warble_login(er_c, "nobody_here", "password-1", NULL), WARBLE_ELOGIN, "password");
	cr_assert_null(warble_token(er_c), "a refused login leaves no token");
	/* the name matches whatever its case */
	cr_assert_eq(warble_login(er_c, "DUP_User", "password-1", &uid2), WARBLE_OK, "%s",
	    warble_errmsg(er_c));
	cr_assert_eq(uid2, uid);

	/* bad tokens: garbage, well-formed but unknown, logged out */
	char *good = strdup(warble_token(er_c));
	cr_assert_not_null(good);
	warble_user_t *u = NULL;
	cr_assert_eq(warble_whoami(er_c, &u), WARBLE_OK);
	cr_assert_str_eq(u->name, "dup_user");
	warble_user_free(u);

	warble_set_token(er_c, "not a token");
	er_err(warble_whoami(er_c, &u), WARBLE_EAUTH, "token");
	er_err(warble_post(er_c, "hello", NULL), WARBLE_EAUTH, "token");
	char *forged = strdup(good);
	forged[0] = forged[0] == 'A' ? 'B' : 'A';
	warble_set_token(er_c, forged);
	er_err(warble_whoami(er_c, &u), WARBLE_EAUTH, "token");
	er_err(warble_follow(er_c, "dup_user"), WARBLE_EAUTH, "token");
	free(forged);

	warble_set_token(er_c, good);
	cr_assert_eq(warble_logout(er_c), WARBLE_OK);
	warble_set_token(er_c, good);
	long long deadline = wbt_now_ms() + 5000; /* the gateway may trust a token up to 1 s */
	int       rc;
	while ((rc = warble_whoami(er_c, &u)) == WARBLE_OK) {
		warble_user_free(u);
		cr_assert_lt(wbt_now_ms(), deadline, "a logged-out token still works");
		wbt_sleep_ms(50);
	}
	er_err(rc, WARBLE_EAUTH, "token");
	free(good);
	cr_assert_eq(er_timeline_len("dup_user"), 0, "nothing was published");
	cr_assert_eq(it_failures(), 0);
}

Test(errors, expired_token, .fini = er_fini, .timeout = 60)
{
	const char    *env[] = { "WARBLE_SESSION_TTL=1", NULL };
	warble_user_t *u = NULL;

	er_setup(env);
	cr_assert_eq(warble_register(er_c, "shortlived", "password-1", NULL), WARBLE_OK);
	long long t0 = wbt_now_ms();
	cr_assert_eq(warble_login(er_c, "shortlived", "password-1", NULL), WARBLE_OK);
	cr_assert_eq(
	    warble_whoami(er_c, &u), WARBLE_OK, "a fresh session works: %s", warble_errmsg(er_c));
	warble_user_free(u);
	cr_assert_eq(warble_post(er_c, "before expiry", NULL), WARBLE_OK);

	long long deadline = t0 + 10000;
	int       rc;
	while ((rc = warble_whoami(er_c, &u)) == WARBLE_OK) {
		warble_user_free(u);
		cr_assert_lt(wbt_now_ms(), deadline, "a session with a 1 s TTL never expired");
		wbt_sleep_ms(50);
	}
	long long took = wbt_now_ms() - t0;
	er_err(rc, WARBLE_EAUTH, "token");
	cr_assert_geq(took, 500, "session ended after %lld ms, long before its 1 s TTL", took);
	er_err(warble_post(er_c, "after expiry", NULL), WARBLE_EAUTH, "token");
	er_err(warble_home(er_c, 0, 0, &(warble_posts_t *) { NULL }), WARBLE_EAUTH, "token");
	cr_assert_eq(er_timeline_len("shortlived"), 1, "only the post made in time exists");

	/* logging in again gives a working session */
	cr_assert_eq(warble_login(er_c, "shortlived", "password-1", NULL), WARBLE_OK);
	cr_assert_eq(warble_whoami(er_c, &u), WARBLE_OK, "%s", warble_errmsg(er_c));
	warble_user_free(u);
	cr_assert_eq(it_failures(), 0);
}

Test(errors, posts, .fini = er_fini, .timeout = 60)
{
	uint64_t id = 0;

	er_setup(NULL);
	cr_assert_eq(warble_register(er_c, "writer", "password-1", NULL), WARBLE_OK);
	cr_assert_eq(warble_login(er_c, "writer", "password-1", NULL), WARBLE_OK);

	/* 280 characters pass and 281 do not, counted in code points, not bytes */
	static const struct {
		const char *ch; /* one code point of this many bytes */
		int         bytes;
	} cps[] = { { "a", 1 }, { "\xc3\xa9", 2 }, { "\xe5\xbe\xae", 3 },
		{ "\xf0\x9f\x90\xa6", 4 } };
	long ok = 0;
	for (size_t i = 0; i < sizeof(cps) / sizeof(cps[0]); i++) {
		char *t = wbt_repeat(cps[i].ch, 280);
		cr_assert_eq(strlen(t), 280u * (size_t)cps[i].bytes);
		cr_assert_eq(warble_post(er_c, t, &id), WARBLE_OK, "280 x %d-byte: %s",
		    cps[i].bytes, warble_errmsg(er_c));
		ok++;
		free(t);
		t = wbt_repeat(cps[i].ch, 281);
		er_err(warble_post(er_c, t, &id), WARBLE_ETOOLONG, "280");
		free(t);
	}
	/* mixed widths: 140 x 4 bytes + 140 x 1 byte = 280 characters in 700 bytes */
	char *a = wbt_repeat("\xf0\x9f\x90\xa6", 140), *b = wbt_repeat("x", 140);
	char  mixed[1024];
	snprintf(mixed, sizeof(mixed), "%s%s", a, b);
	cr_assert_eq(warble_post(er_c, mixed, &id), WARBLE_OK, "%s", warble_errmsg(er_c));
	ok++;
	snprintf(mixed, sizeof(mixed), "%s%s\xc3\xa9", a, b);
	er_err(warble_post(er_c, mixed, &id), WARBLE_ETOOLONG, "280");
	free(a);
	free(b);

	/* invalid UTF-8 in every way the validator knows */
	static const char *bad[] = {
		"\xff",             /* never valid */
		"abc\x80",          /* stray continuation byte */
		"\xc3\x28",         /* bad continuation */
		"\xc0\xaf",         /* overlong "/" */
		"\xe0\x80\xaf",     /* overlong, 3 bytes */
		"\xed\xa0\x80",     /* UTF-16 surrogate */
		"\xf4\x90\x80\x80", /* above U+10FFFF */
		"ok then \xe2\x82", /* truncated at the end */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		er_err(warble_post(er_c, bad[i], &id), WARBLE_EBADTEXT, "UTF-8");
	}
	er_err(warble_post(er_c, "", &id), WARBLE_EBADTEXT, NULL);
	cr_assert_eq(er_timeline_len("writer"), ok, "exactly the accepted posts exist");

	/* deleting: nothing there, someone else's */
	er_err(warble_delete(er_c, 12345), WARBLE_ENOPOST, "post");
	cr_assert_eq(warble_post(er_c, "mine", &id), WARBLE_OK);
	warble_client *other = it_client();
	cr_assert_eq(warble_register(other, "other", "password-1", NULL), WARBLE_OK);
	cr_assert_eq(warble_login(other, "other", "password-1", NULL), WARBLE_OK);
	int rc = warble_delete(other, id);
	cr_assert(rc == WARBLE_ENOPOST || rc == WARBLE_EPERM, "delete of another's post: %s",
	    warble_errname(rc));
	cr_assert_neq(warble_errmsg(other)[0], '\0');
	warble_close(other);
	cr_assert_eq(er_timeline_len("writer"), ok + 1, "the other user's delete did nothing");
	cr_assert_eq(it_failures(), 0);
}

Test(errors, relations_and_unknown_users, .fini = er_fini, .timeout = 60)
{
	warble_user_t  *u = NULL;
	warble_users_t *us = NULL;
	warble_posts_t *p = NULL;

	er_setup(NULL);
	cr_assert_eq(warble_register(er_c, "loner", "password-1", NULL), WARBLE_OK);
	cr_assert_eq(warble_register(er_c, "friend", "password-1", NULL), WARBLE_OK);
	cr_assert_eq(warble_login(er_c, "loner", "password-1", NULL), WARBLE_OK);

	er_err(warble_follow(er_c, "loner"), WARBLE_ESELF, "yourself");
	er_err(warble_follow(er_c, "LONER"), WARBLE_ESELF, "yourself");
	er_err(warble_unfollow(er_c, "loner"), WARBLE_ESELF, "yourself");

	er_err(warble_follow(er_c, "ghost_user"), WARBLE_ENOUSER, "ghost_user");
	er_err(warble_unfollow(er_c, "ghost_user"), WARBLE_ENOUSER, "ghost_user");
	er_err(warble_profile(er_c, "ghost_user", &u), WARBLE_ENOUSER, "ghost_user");
	er_err(warble_timeline(er_c, "ghost_user", 0, 0, &p), WARBLE_ENOUSER, "ghost_user");
	er_err(warble_following(er_c, "ghost_user", 0, 0, &us), WARBLE_ENOUSER, "ghost_user");
	er_err(warble_fans(er_c, "ghost_user", 0, 0, &us), WARBLE_ENOUSER, "ghost_user");
	/* a name that cannot exist is still just an unknown (or invalid) name */
	int rc = warble_follow(er_c, "no such name!");
	cr_assert(rc == WARBLE_ENOUSER || rc == WARBLE_EBADNAME, "got %s", warble_errname(rc));

	/* none of it left a trace */
	cr_assert(it_profile_counts(er_c, "loner", 0, 0));
	cr_assert(it_profile_counts(er_c, "friend", 0, 0));
	/* and the real thing still works */
	cr_assert_eq(warble_follow(er_c, "friend"), WARBLE_OK, "%s", warble_errmsg(er_c));
	cr_assert(it_profile_counts(er_c, "loner", 1, 0));
	cr_assert(it_profile_counts(er_c, "friend", 0, 1));
	/* an oversized page is capped, not refused */
	cr_assert_eq(warble_home(er_c, 0, 1000, &p), WARBLE_OK, "%s", warble_errmsg(er_c));
	cr_assert_leq(p->n, 100);
	warble_posts_free(p);
	cr_assert_eq(it_failures(), 0);
}
