/*
 * session_test.c - signed sessions on a real cluster: the gateway checks
 * tokens without asking the user service, and every way a session ends
 * (logout, log out everywhere, a password change, a logout through
 * another gateway) takes effect within its stated bound.
 */
#include "it.h"
#include "wb_session.h"

#define SESSION_PASS     "password-0000"
#define SESSION_CHECK_MS 1000 /* the gateway's default session-check-ms */

/* session_op_count reads how many requests of op a service has answered (0 if none yet). */
static uint64_t
session_op_count(const char *url, const char *op)
{
	wb_obj       *rep = NULL;
	const wb_obj *st = NULL;
	size_t        n = 0;
	uint64_t      v = 0;

	cr_assert_eq(it_call(url, wb_request(WB_OP_STATS), &rep), WB_OK, "stats of %s", url);
	(void)wb_get_objs(rep, WB_F_STATS, &st, &n);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(wb_str(&st[i], WB_F_NAME, ""), op) == 0) {
			v = wb_u64(&st[i], WB_F_COUNT, 0);
		}
	}
	wb_msg_free(rep);
	return v;
}

/* session_login registers name (once) and returns a client logged in as it. */
static warble_client *
session_login(const char *name, bool reg)
{
	warble_client *c = it_client();

	if (reg) {
		cr_assert_eq(warble_register(c, name, SESSION_PASS, NULL), WARBLE_OK, "%s",
		    warble_errmsg(c));
	}
	cr_assert_eq(warble_login(c, name, SESSION_PASS, NULL), WARBLE_OK, "%s", warble_errmsg(c));
	return c;
}

/* session_works tells whether c's session is accepted (whoami succeeds); anything but OK or UNAUTHORIZED fails the test. */
static bool
session_works(warble_client *c)
{
	warble_user_t *u = NULL;
	int            rc = warble_whoami(c, &u);

	warble_user_free(u);
	cr_assert(rc == WARBLE_OK || rc == WARBLE_EAUTH, "whoami: %s", warble_errmsg(c));
	return rc == WARBLE_OK;
}

Test(session, gateway_checks_signed_tokens_itself, .fini = it_fini, .timeout = 120)
{
	it_start(NULL);
	warble_client *c = session_login("sess_alice", true);
	cr_assert_eq(strlen(warble_token(c)), WB_SESSION_TOKEN_LEN, "a signed token");

	/* The gateway trusts its revocation feed once it has pulled it: from
	 * then on a run of requests costs the user service no user.auth. */
	long long deadline = wbt_now_ms() + 20000;
	uint64_t  before, after;
	do {
		before = session_op_count(it_cl.user_url, "user.auth");
		for (int i = 0; i < 50; i++) {
			cr_assert(session_works(c));
		}
		after = session_op_count(it_cl.user_url, "user.auth");
	} while (after != before && wbt_now_ms() < deadline);
	cr_assert_eq(after, before, "50 whoami still asked the user service %llu times",
	    (unsigned long long)(after - before));

	/* A token with one character changed is refused. */
	char forged[WB_SESSION_TOKEN_LEN + 1];
	snprintf(forged, sizeof(forged), "%s", warble_token(c));
	forged[10] = forged[10] == 'A' ? 'B' : 'A';
	warble_client *f = it_client();
	cr_assert_eq(warble_set_token(f, forged), WARBLE_OK);
	cr_assert_not(session_works(f), "a forged token was accepted");
	warble_close(f);
	warble_close(c);
}

Test(session, every_way_a_session_ends, .fini = it_fini, .timeout = 180)
{
	it_start(NULL);
	warble_client *a = session_login("sess_bob", true);
	warble_client *b = session_login("sess_bob", false);
	warble_client *c = session_login("sess_bob", false);
	cr_assert(session_works(a) && session_works(b) && session_works(c));

	/* logout through this gateway: over before the reply */
	char tok_a[WB_SESSION_TOKEN_LEN + 1];
	snprintf(tok_a, sizeof(tok_a), "%s", warble_token(a));
	cr_assert_eq(warble_logout(a), WARBLE_OK, "%s", warble_errmsg(a));
	cr_assert_eq(warble_set_token(a, tok_a), WARBLE_OK);
	cr_assert_not(session_works(a), "a logged-out token still works");
	cr_assert(session_works(b), "logout ended another session of the user");

	/* logout through another gateway (straight to the user service):
	 * over here within session-check-ms */
	wb_obj *q = wb_request(WB_OP_USER_LOGOUT), *r = NULL;
	cr_assert_eq(wb_set_cstr(q, WB_F_TOKEN, warble_token(b)), WB_OK);
	long long t0 = wbt_now_ms();
	cr_assert_eq(it_call(it_cl.user_url, q, &r), WB_OK);
	wb_msg_free(r);
	while (session_works(b) && wbt_now_ms() - t0 < 10 * SESSION_CHECK_MS) {
		wbt_sleep_ms(10);
	}
	long long took = wbt_now_ms() - t0;
	fprintf(
	    stderr, "session: a logout elsewhere took effect at the gateway in %lld ms\n", took);
	cr_assert_not(
	    session_works(b), "a session ended elsewhere still works after %lld ms", took);
	cr_assert(session_works(c));

	/* password change: the caller keeps a new session, the others end */
	cr_assert_eq(warble_change_password(c, "wrong-password", "new-password-1"), WARBLE_ELOGIN,
	    "a wrong current password: %s", warble_errmsg(c));
	warble_client *d = session_login("sess_bob", false);
	char           tok_c[WB_SESSION_TOKEN_LEN + 1];
	snprintf(tok_c, sizeof(tok_c), "%s", warble_token(c));
	cr_assert_eq(warble_change_password(c, SESSION_PASS, "new-password-1"), WARBLE_OK, "%s",
	    warble_errmsg(c));
	cr_assert_str_neq(warble_token(c), tok_c, "a new token after a password change");
	cr_assert(session_works(c), "the new session works");
	cr_assert_not(session_works(d), "another session survived the password change");
	warble_client *e = it_client();
	cr_assert_eq(warble_login(e, "sess_bob", SESSION_PASS, NULL), WARBLE_ELOGIN);
	cr_assert_eq(warble_login(e, "sess_bob", "new-password-1", NULL), WARBLE_OK);

	/* log out everywhere: every session ends, a later login works */
	char tok_e[WB_SESSION_TOKEN_LEN + 1];
	snprintf(tok_e, sizeof(tok_e), "%s", warble_token(e));
	cr_assert_eq(warble_logout_all(c), WARBLE_OK, "%s", warble_errmsg(c));
	cr_assert_eq(warble_set_token(e, tok_e), WARBLE_OK);
	cr_assert_not(session_works(e), "a session survived log out everywhere");
	cr_assert_eq(warble_login(c, "sess_bob", "new-password-1", NULL), WARBLE_OK);
	cr_assert(session_works(c), "a login after log out everywhere works");

	warble_close(a);
	warble_close(b);
	warble_close(c);
	warble_close(d);
	warble_close(e);
}
