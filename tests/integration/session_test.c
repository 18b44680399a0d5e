/*
 * session_test.c - signed sessions on a real cluster: the gateway checks
 * tokens without asking the user service, and every way a session ends
 * (logout, log out everywhere, a password change, a logout through
 * another gateway) takes effect within its stated bound.
 */
#include <sodium.h>

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

/* session_key_of returns the id of the key that signed c's token. */
static uint16_t
session_key_of(warble_client *c)
{
	wb_session s;

	cr_assert_eq(wb_session_parse(&s, warble_token(c), strlen(warble_token(c))), WB_OK);
	return s.kid;
}

/* session_until_refused waits (up to 10 x session-check-ms) for c's session to stop working; the ms it took. */
static long long
session_until_refused(warble_client *c)
{
	long long t0 = wbt_now_ms();

	while (session_works(c) && wbt_now_ms() - t0 < 10 * SESSION_CHECK_MS) {
		wbt_sleep_ms(10);
	}
	cr_assert_not(session_works(c), "still accepted after %lld ms", wbt_now_ms() - t0);
	return wbt_now_ms() - t0;
}

/*
 * Only the user service can sign: what it hands out are public keys, and
 * a token signed by any other key, in the right shape and naming the
 * right key id, is refused by the gateway and the user service alike.
 */
Test(session, nobody_else_can_sign, .fini = it_fini, .timeout = 120)
{
	uint8_t        pk[WB_SESSION_PK_LEN], sk[WB_SESSION_SK_LEN], got[WB_SESSION_PK_LEN + 8];
	char           tok[WB_SESSION_TOKEN_LEN + 1];
	const wb_obj  *keys = NULL;
	size_t         n = 0, len = 0;
	wb_obj        *r = NULL;
	uint64_t       uid;
	warble_client *c, *f;

	it_start(NULL);
	c = session_login("sess_carol", true);
	cr_assert(session_works(c));
	cr_assert_eq(it_call(it_cl.user_url, wb_request(WB_OP_USER_SESSION_KEYS), &r), WB_OK);
	cr_assert(wb_get_objs(r, WB_F_KEYS, &keys, &n) && n == 1, "one key on a fresh store");
	cr_assert_eq(wb_u64(&keys[0], WB_F_KID, 0), session_key_of(c));
	const char *b64 = wb_str(&keys[0], WB_F_KEY, "");
	cr_assert_eq(sodium_base642bin(got, sizeof(got), b64, strlen(b64), NULL, &len, NULL,
	                 sodium_base64_VARIANT_URLSAFE_NO_PADDING),
	    0);
	cr_assert_eq(len, WB_SESSION_PK_LEN, "a public key (32 bytes), never a private one");
	wb_msg_free(r);

	/* the old way to the key is gone */
	wb_obj *q = wb_msg_new();
	cr_assert_eq(wb_set_cstr(q, WB_F_OP, "user.session_key"), WB_OK);
	cr_assert_eq(wb_set_u64(q, WB_F_V, WB_PROTO_VERSION), WB_OK);
	cr_assert_neq(it_call(it_cl.user_url, q, &r), WB_OK, "user.session_key still answers");
	wb_msg_free(r);

	/* a token for carol signed by a key of the attacker's own */
	wb_session     s = { session_key_of(c), 0, wb_session_sid(wbt_now_ms() * 1ull),
		    wbt_now_ms() * 1ull + 3600000 };
	warble_user_t *u = NULL;
	cr_assert_eq(warble_whoami(c, &u), WARBLE_OK);
	uid = u->uid;
	warble_user_free(u);
	s.uid = uid;
	wb_session_keypair(pk, sk);
	wb_session_sign(tok, &s, sk);
	f = it_client();
	cr_assert_eq(warble_set_token(f, tok), WARBLE_OK);
	cr_assert_not(session_works(f), "a token signed by another key was accepted");
	q = wb_request(WB_OP_USER_AUTH);
	cr_assert_eq(wb_set_cstr(q, WB_F_TOKEN, tok), WB_OK);
	cr_assert_eq(it_call(it_cl.user_url, q, &r), WB_EAUTH, "the user service too");
	wb_msg_free(r);
	/* and one naming a key that does not exist */
	s.kid = 999;
	wb_session_sign(tok, &s, sk);
	cr_assert_eq(warble_set_token(f, tok), WARBLE_OK);
	cr_assert_not(session_works(f), "a token naming an unknown key was accepted");
	/* tokens of the earlier forms are not tokens any more */
	cr_assert_eq(warble_set_token(f, "q1VbQ2xvY2tzIGFyZSBub3QgdG9rZW5zIGF0IGFsbCE"), WARBLE_OK);
	cr_assert_not(session_works(f));
	warble_close(f);
	cr_assert(session_works(c));
	warble_close(c);
}

/*
 * A rotation: the new key signs from then on, sessions of the old one go
 * on until they expire; a rotation with revoke ends every earlier session
 * at every gateway within session-check-ms.
 */
Test(session, key_rotation, .fini = it_fini, .timeout = 120)
{
	wb_obj        *q, *r = NULL;
	warble_client *old, *mid, *late;

	it_start(NULL);
	old = session_login("sess_dan", true);
	uint16_t k1 = session_key_of(old);
	cr_assert(session_works(old));

	cr_assert_eq(it_call(it_cl.user_url, wb_request(WB_OP_USER_ROTATE_KEY), &r), WB_OK);
	uint16_t k2 = (uint16_t)wb_u64(r, WB_F_KID, 0);
	wb_msg_free(r);
	cr_assert_neq(k2, k1);
	mid = session_login("sess_dan", false);
	cr_assert_eq(session_key_of(mid), k2, "the new key signs new sessions");
	cr_assert(session_works(mid), "a session of the new key");
	cr_assert(session_works(old), "a session of the retired key lasts until it expires");
	cr_assert_eq(it_call(it_cl.user_url, wb_request(WB_OP_USER_SESSION_KEYS), &r), WB_OK);
	const wb_obj *keys = NULL;
	size_t        n = 0;
	cr_assert(wb_get_objs(r, WB_F_KEYS, &keys, &n) && n == 2, "both keys verify");
	cr_assert_eq(wb_u64(r, WB_F_KID, 0), k2);
	wb_msg_free(r);

	q = wb_request(WB_OP_USER_ROTATE_KEY);
	cr_assert_eq(wb_set_bool(q, WB_F_REVOKE, true), WB_OK);
	cr_assert_eq(it_call(it_cl.user_url, q, &r), WB_OK);
	wb_msg_free(r);
	cr_assert_eq(it_call(it_cl.user_url, wb_request(WB_OP_USER_SESSION_KEYS), &r), WB_OK);
	cr_assert(wb_get_objs(r, WB_F_KEYS, &keys, &n) && n == 1, "only the new key is left");
	cr_assert_gt(wb_u64(r, WB_F_KID, 0), k2, "a key id is never used again");
	wb_msg_free(r);
	long long t_old = session_until_refused(old), t_mid = session_until_refused(mid);
	fprintf(stderr,
	    "session: a revoked key's sessions ended at the gateway in %lld and %lld ms\n", t_old,
	    t_old + t_mid);
	late = session_login("sess_dan", false);
	cr_assert(session_works(late), "a login after the revocation works");
	warble_close(old);
	warble_close(mid);
	warble_close(late);
}
