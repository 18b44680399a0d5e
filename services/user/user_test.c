/*
 * user_test.c - warble-user as a real process, driven over ipc:// with
 * rt_client: registration, logins, sessions, records and profiles.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_client.h"
#include "wb_proto.h"
#include "wbt.h"
#include "wb_session.h"

static char        url[160];
static wbt_daemon *daemon_;
static rt_client  *cli;
static const char *ut_hold = "2592000"; /* WARBLE_NAME_HOLD, seconds */

/* ut_start starts warble-user with fast password hashing and session_ttl seconds of sessions. */
static void
ut_start(const char *session_ttl)
{
	char data[200], ttl[64], env_url[200], env_data[220], pub[200], env_pub[220], hold[64];

	cr_assert_eq(wbt_ipc_url(url, sizeof(url), "user"), 0);
	cr_assert_eq(wbt_ipc_url(pub, sizeof(pub), "userpub"), 0);
	snprintf(env_pub, sizeof(env_pub), "WARBLE_USER_PUB_URL=%s", pub);
	cr_assert_eq(wbt_path(data, sizeof(data), "data"), 0);
	snprintf(env_url, sizeof(env_url), "WARBLE_USER_URL=%s", url);
	snprintf(env_data, sizeof(env_data), "WARBLE_DATA=%s", data);
	snprintf(ttl, sizeof(ttl), "WARBLE_SESSION_TTL=%s", session_ttl);
	snprintf(hold, sizeof(hold), "WARBLE_NAME_HOLD=%s", ut_hold);
	const char *env[] = { env_url, env_data, ttl, env_pub, hold, "WARBLE_PWHASH_OPS=1",
		"WARBLE_PWHASH_MEM=8192", "WARBLE_LOGIN_FAILS=3", "WARBLE_WORKERS=4", NULL };
	daemon_ = wbt_spawn("warble-user", NULL, env);
	cr_assert_not_null(daemon_);
	cr_assert_eq(wbt_wait_ready(daemon_, url, 10000), 0);
	if (cli == NULL) {
		cr_assert_eq(rt_client_open(&cli, url, NULL), WB_OK);
	}
}

static void
ut_setup(void)
{
	ut_start("604800");
}

static void
ut_teardown(void)
{
	rt_client_close(cli);
	cli = NULL;
	wbt_cleanup();
}

/* ut_call sends req (freed here) and returns the code; *rep is kept if rep != NULL. */
static int
ut_call(wb_obj *req, wb_obj **rep)
{
	wb_obj *r = NULL;
	int     rc;

	cr_assert_not_null(req);
	rc = rt_call(cli, req, &r);
	wb_msg_free(req);
	cr_assert(rc == WB_OK || r != NULL, "transport error %s", wb_err_name(rc));
	if (rep != NULL) {
		*rep = r;
	} else {
		wb_msg_free(r);
	}
	return rc;
}

static int
ut_register(const char *name, const char *pw, uint64_t *uid)
{
	wb_obj *req = wb_request(WB_OP_USER_REGISTER), *rep;
	int     rc;

	wb_set_cstr(req, WB_F_NAME, name);
	wb_set_cstr(req, WB_F_PASSWORD, pw);
	rc = ut_call(req, &rep);
	if (rc == WB_OK && uid != NULL) {
		cr_assert(wb_get_u64(rep, WB_F_UID, uid));
	}
	wb_msg_free(rep);
	return rc;
}

static int
ut_login(const char *name, const char *pw, uint64_t *uid, char *token, size_t n)
{
	wb_obj     *req = wb_request(WB_OP_USER_LOGIN), *rep;
	const char *tok;
	int         rc;

	wb_set_cstr(req, WB_F_NAME, name);
	wb_set_cstr(req, WB_F_PASSWORD, pw);
	rc = ut_call(req, &rep);
	if (rc == WB_OK) {
		cr_assert(wb_get_u64(rep, WB_F_UID, uid));
		cr_assert(wb_get_str(rep, WB_F_TOKEN, &tok, NULL));
		snprintf(token, n, "%s", tok);
	} else if (token != NULL) {
		const char *msg = "";
		wb_reply_code(rep, &msg);
		snprintf(token, n, "%s", msg); /* the error message, for comparisons */
	}
	wb_msg_free(rep);
	return rc;
}

static int
ut_token_op(wb_op op, const char *token, uint64_t *uid)
{
	wb_obj *req = wb_request(op), *rep;
	int     rc;

	wb_set_cstr(req, WB_F_TOKEN, token);
	rc = ut_call(req, &rep);
	if (rc == WB_OK && uid != NULL) {
		cr_assert(wb_get_u64(rep, WB_F_UID, uid));
	}
	wb_msg_free(rep);
	return rc;
}

TestSuite(user, .init = ut_setup, .fini = ut_teardown, .timeout = 60);

Test(user, register_login_auth_logout)
{
	uint64_t uid, luid, auid;
	char     tok[128];

	cr_assert_eq(ut_register("Alice", "correct horse", &uid), WB_OK);
	cr_assert_eq(uid, 1);
	cr_assert_eq(ut_login("alice", "correct horse", &luid, tok, sizeof(tok)), WB_OK);
	cr_assert_eq(luid, uid);
	cr_assert_eq(strlen(tok), WB_SESSION_TOKEN_LEN, "token %zu chars", strlen(tok));
	cr_assert_eq(ut_token_op(WB_OP_USER_AUTH, tok, &auid), WB_OK);
	cr_assert_eq(auid, uid);

	/* a second login is a second session; logging one out keeps the other */
	char tok2[128];
	cr_assert_eq(ut_login("ALICE", "correct horse", &luid, tok2, sizeof(tok2)), WB_OK);
	cr_assert_str_neq(tok, tok2);
	cr_assert_eq(ut_token_op(WB_OP_USER_LOGOUT, tok, NULL), WB_OK);
	cr_assert_eq(ut_token_op(WB_OP_USER_AUTH, tok, &auid), WB_EAUTH);
	cr_assert_eq(ut_token_op(WB_OP_USER_LOGOUT, tok, NULL), WB_EAUTH);
	cr_assert_eq(ut_token_op(WB_OP_USER_AUTH, tok2, &auid), WB_OK);
	cr_assert_eq(auid, uid);
}

Test(user, duplicate_names_case_insensitive)
{
	uint64_t a, b;

	cr_assert_eq(ut_register("bob", "password1", &a), WB_OK);
	cr_assert_eq(ut_register("BOB", "password2", NULL), WB_EEXIST);
	cr_assert_eq(ut_register("Bob", "password2", NULL), WB_EEXIST);
	cr_assert_eq(ut_register("bob_2", "password2", &b), WB_OK);
	cr_assert_eq(b, a + 1);
}

Test(user, bad_names_and_passwords)
{
	const char *bad[] = { "ab", "", "a b", "bob!", "al-ice", "\xc3\xa9t\xc3\xa9",
		"abcdefghijklmnopqrstuvwxyz0123456" };
	char        longpw[1100];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(
		    ut_register(bad[i], "password1", NULL), WB_EBADNAME, "name '%s'", bad[i]);
	}
	cr_assert_eq(ut_register("abcdefghijklmnopqrstuvwxyz012345", "password1", NULL), WB_OK);
	cr_assert_eq(ut_register("carol", "1234567", NULL), WB_EBADPASS);
	cr_assert_eq(ut_register("carol", "", NULL), WB_EBADPASS);
	memset(longpw, 'p', 1025);
	longpw[1025] = '\0';
	cr_assert_eq(ut_register("carol", longpw, NULL), WB_EBADPASS);
	longpw[1024] = '\0';
	cr_assert_eq(ut_register("carol", longpw, NULL), WB_OK);
	cr_assert_eq(ut_register("dave", "12345678", NULL), WB_OK);
}

Test(user, wrong_password_and_unknown_name_look_alike)
{
	uint64_t uid;
	char     m1[256], m2[256], m3[256];

	cr_assert_eq(ut_register("erin", "secret-pass", NULL), WB_OK);
	cr_assert_eq(ut_login("erin", "wrong-pass", &uid, m1, sizeof(m1)), WB_ELOGIN);
	cr_assert_eq(ut_login("nobody", "secret-pass", &uid, m2, sizeof(m2)), WB_ELOGIN);
	cr_assert_eq(ut_login("x!", "secret-pass", &uid, m3, sizeof(m3)), WB_ELOGIN);
	cr_assert_str_eq(m1, m2);
	cr_assert_str_eq(m1, m3);
	cr_assert_eq(ut_login("erin", "secret-pas", &uid, m1, sizeof(m1)), WB_ELOGIN);
	cr_assert_eq(ut_login("erin", "secret-pass", &uid, m1, sizeof(m1)), WB_OK);
}

Test(user, bad_tokens)
{
	uint64_t uid;

	cr_assert_eq(ut_token_op(WB_OP_USER_AUTH, "", &uid), WB_EAUTH);
	cr_assert_eq(ut_token_op(WB_OP_USER_AUTH, "garbage", &uid), WB_EAUTH);
	cr_assert_eq(
	    ut_token_op(WB_OP_USER_AUTH, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", &uid),
	    WB_EAUTH);
	cr_assert_eq(
	    ut_token_op(WB_OP_USER_AUTH, "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/", &uid),
	    WB_EAUTH);
	cr_assert_eq(ut_token_op(WB_OP_USER_LOGOUT, "nope", NULL), WB_EAUTH);
	/* a wrong-typed field is a bad request, not a crash */
	wb_obj *req = wb_request(WB_OP_USER_AUTH);
	wb_set_cstr(req, WB_F_TOKEN, "x");
	wb_set_u64(req, WB_F_UID, 1);
	cr_assert_neq(ut_call(req, NULL), WB_OK);
}

/* a separate suite: the daemon runs with one-second sessions */
static void
ut_setup_short(void)
{
	ut_start("1");
}

Test(user_ttl, session_expires, .init = ut_setup_short, .fini = ut_teardown, .timeout = 60)
{
	uint64_t  uid, auid;
	char      tok[128];
	long long t0;

	cr_assert_eq(ut_register("frank", "password1", &uid), WB_OK);
	t0 = wbt_now_ms();
	cr_assert_eq(ut_login("frank", "password1", &uid, tok, sizeof(tok)), WB_OK);
	cr_assert_eq(ut_token_op(WB_OP_USER_AUTH, tok, &auid), WB_OK);
	/* poll until the session is gone; it must take about a second, not forever */
	int rc = WB_OK;
	while (
	    wbt_now_ms() - t0 < 10000 && (rc = ut_token_op(WB_OP_USER_AUTH, tok, &auid)) == WB_OK) {
		wbt_sleep_ms(50);
	}
	cr_assert_eq(rc, WB_EAUTH);
	cr_assert_geq(wbt_now_ms() - t0, 900, "expired after %lld ms", wbt_now_ms() - t0);
	cr_assert_eq(ut_token_op(WB_OP_USER_LOGOUT, tok, NULL), WB_EAUTH);
	/* a fresh login works again */
	cr_assert_eq(ut_login("frank", "password1", &uid, tok, sizeof(tok)), WB_OK);
	cr_assert_eq(ut_token_op(WB_OP_USER_AUTH, tok, &auid), WB_OK);
}

static void
ut_get(const uint64_t *uids, size_t n, wb_obj **rep)
{
	wb_obj *req = wb_request(WB_OP_USER_GET);

	wb_set_u64s(req, WB_F_UIDS, uids, n);
	cr_assert_eq(ut_call(req, rep), WB_OK);
}

Test(user, get_lookup_update)
{
	uint64_t        a, b, c;
	wb_obj         *rep, *req;
	const wb_obj   *users;
	size_t          n;
	const uint64_t *missing;

	cr_assert_eq(ut_register("Gina", "password1", &a), WB_OK);
	cr_assert_eq(ut_register("hank", "password1", &b), WB_OK);
	cr_assert_eq(ut_register("ivy", "password1", &c), WB_OK);

	uint64_t ask[] = { c, 999, a, 0, b };
	ut_get(ask, 5, &rep);
	cr_assert(wb_get_objs(rep, WB_F_USERS, &users, &n));
	cr_assert_eq(n, 3);
	cr_assert_eq(wb_u64(&users[0], WB_F_UID, 0), c);
	cr_assert_str_eq(wb_str(&users[0], WB_F_NAME, ""), "ivy");
	cr_assert_eq(wb_u64(&users[1], WB_F_UID, 0), a);
	cr_assert_str_eq(wb_str(&users[1], WB_F_NAME, ""), "gina");
	cr_assert_str_eq(wb_str(&users[1], WB_F_DISPLAY, "?"), "");
	cr_assert_gt(wb_u64(&users[1], WB_F_CREATED, 0), 1577836800000ull);
	cr_assert_eq(wb_u64(&users[2], WB_F_UID, 0), b);
	cr_assert_not(wb_has(&users[0], WB_F_PASSWORD));
	cr_assert(wb_get_u64s(rep, WB_F_MISSING, &missing, &n));
	cr_assert_eq(n, 2);
	cr_assert_eq(missing[0], 999);
	cr_assert_eq(missing[1], 0);
	wb_msg_free(rep);

	/* lookup is case-insensitive */
	req = wb_request(WB_OP_USER_LOOKUP);
	wb_set_cstr(req, WB_F_NAME, "HANK");
	cr_assert_eq(ut_call(req, &rep), WB_OK);
	cr_assert_eq(wb_u64(rep, WB_F_UID, 0), b);
	cr_assert(wb_get_objs(rep, WB_F_USERS, &users, &n));
	cr_assert_eq(n, 1);
	cr_assert_str_eq(wb_str(&users[0], WB_F_NAME, ""), "hank");
	wb_msg_free(rep);
	req = wb_request(WB_OP_USER_LOOKUP);
	wb_set_cstr(req, WB_F_NAME, "nobody");
	cr_assert_eq(ut_call(req, NULL), WB_ENOUSER);
	req = wb_request(WB_OP_USER_LOOKUP);
	wb_set_cstr(req, WB_F_NAME, "no body");
	cr_assert_eq(ut_call(req, NULL), WB_ENOUSER);

	/* update */
	req = wb_request(WB_OP_USER_UPDATE);
	wb_set_u64(req, WB_F_UID, a);
	wb_set_cstr(req, WB_F_DISPLAY, "Gina \xe4\xb8\xad");
	wb_set_cstr(req, WB_F_BIO, "hello\nworld");
	cr_assert_eq(ut_call(req, NULL), WB_OK);
	req = wb_request(WB_OP_USER_UPDATE);
	wb_set_u64(req, WB_F_UID, a);
	wb_set_cstr(req, WB_F_BIO, "second bio");
	cr_assert_eq(ut_call(req, NULL), WB_OK);
	ut_get(&a, 1, &rep);
	cr_assert(wb_get_objs(rep, WB_F_USERS, &users, &n));
	cr_assert_eq(n, 1);
	cr_assert_str_eq(wb_str(&users[0], WB_F_DISPLAY, ""), "Gina \xe4\xb8\xad");
	cr_assert_str_eq(wb_str(&users[0], WB_F_BIO, ""), "second bio");
	cr_assert_not(wb_has(rep, WB_F_MISSING));
	wb_msg_free(rep);

	char long_display[70], long_bio[300];
	memset(long_display, 'd', 65);
	long_display[65] = '\0';
	memset(long_bio, 'b', 281);
	long_bio[281] = '\0';
	const char *msg;

	req = wb_request(WB_OP_USER_UPDATE);
	wb_set_u64(req, WB_F_UID, a);
	wb_set_cstr(req, WB_F_DISPLAY, long_display);
	cr_assert_eq(ut_call(req, &rep), WB_EINVAL);
	wb_reply_code(rep, &msg);
	cr_assert(strstr(msg, "display") != NULL, "msg: %s", msg);
	wb_msg_free(rep);
	req = wb_request(WB_OP_USER_UPDATE);
	wb_set_u64(req, WB_F_UID, a);
	wb_set_cstr(req, WB_F_BIO, long_bio);
	cr_assert_eq(ut_call(req, &rep), WB_EINVAL);
	wb_reply_code(rep, &msg);
	cr_assert(strstr(msg, "bio") != NULL, "msg: %s", msg);
	wb_msg_free(rep);
	req = wb_request(WB_OP_USER_UPDATE);
	wb_set_u64(req, WB_F_UID, a);
	wb_set_cstr(req, WB_F_BIO, "bad \xff utf8");
	cr_assert_eq(ut_call(req, NULL), WB_EINVAL);
	req = wb_request(WB_OP_USER_UPDATE);
	wb_set_u64(req, WB_F_UID, 4242);
	wb_set_cstr(req, WB_F_BIO, "ghost");
	cr_assert_eq(ut_call(req, NULL), WB_ENOUSER);

	/* the failed updates changed nothing */
	ut_get(&a, 1, &rep);
	cr_assert(wb_get_objs(rep, WB_F_USERS, &users, &n));
	cr_assert_str_eq(wb_str(&users[0], WB_F_BIO, ""), "second bio");
	wb_msg_free(rep);

	/* at most 1000 uids per get */
	uint64_t *many = calloc(1001, sizeof(uint64_t));
	cr_assert_not_null(many);
	for (int i = 0; i < 1001; i++) {
		many[i] = (uint64_t)i + 1;
	}
	req = wb_request(WB_OP_USER_GET);
	wb_set_u64s(req, WB_F_UIDS, many, 1001);
	cr_assert_eq(ut_call(req, NULL), WB_EINVAL);
	ut_get(many, 1000, &rep);
	cr_assert(wb_get_objs(rep, WB_F_USERS, &users, &n));
	cr_assert_eq(n, 3);
	cr_assert(wb_get_u64s(rep, WB_F_MISSING, &missing, &n));
	cr_assert_eq(n, 997);
	wb_msg_free(rep);
	free(many);
}

/* ut_grep_dir tells whether any file under dir contains needle. */
static bool
ut_grep_dir(const char *dir, const char *needle)
{
	DIR           *d = opendir(dir);
	struct dirent *e;
	bool           found = false;
	size_t         nl = strlen(needle);

	cr_assert_not_null(d, "opendir %s", dir);
	while (!found && (e = readdir(d)) != NULL) {
		char path[512];
		if (e->d_name[0] == '.') {
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR) {
			found = ut_grep_dir(path, needle);
			continue;
		}
		FILE *f = fopen(path, "rb");
		if (f == NULL) {
			continue;
		}
		fseek(f, 0, SEEK_END);
		long len = ftell(f);
		fseek(f, 0, SEEK_SET);
		char *buf = len > 0 ? malloc((size_t)len) : NULL;
		if (buf != NULL && fread(buf, 1, (size_t)len, f) == (size_t)len) {
			found = memmem(buf, (size_t)len, needle, nl) != NULL;
		}
		free(buf);
		fclose(f);
	}
	closedir(d);
	return found;
}

Test(user, survives_restart_and_never_stores_secrets)
{
	uint64_t uid, uid2, auid;
	char     tok[128];

	cr_assert_eq(ut_register("jack", "Pa55word-Sentinel", &uid), WB_OK);
	cr_assert_eq(ut_login("jack", "Pa55word-Sentinel", &uid, tok, sizeof(tok)), WB_OK);
	cr_assert_eq(wbt_stop(daemon_, SIGTERM, 10000), 0);
	ut_start("604800");
	cr_assert_eq(ut_token_op(WB_OP_USER_AUTH, tok, &auid), WB_OK);
	cr_assert_eq(auid, uid);
	cr_assert_eq(ut_register("jack", "password1", NULL), WB_EEXIST);
	cr_assert_eq(ut_register("kate", "password1", &uid2), WB_OK);
	cr_assert_eq(uid2, uid + 1);
	cr_assert_eq(wbt_stop(daemon_, SIGTERM, 10000), 0);

	/* neither the store nor the logs hold the password or the token */
	cr_assert_not(ut_grep_dir(wbt_dir(), "Pa55word-Sentinel"));
	cr_assert_not(ut_grep_dir(wbt_dir(), tok));
	cr_assert(ut_grep_dir(wbt_dir(), "$argon2id$"), "the hash is stored");
}

#define UT_THREADS 8

struct ut_race {
	int      idx;
	int      rc_same;
	int      rc_own;
	uint64_t uid_own;
};

static void *
ut_race_main(void *arg)
{
	struct ut_race *r = arg;
	char            name[32];

	r->rc_same = ut_register("samename", "password1", NULL);
	snprintf(name, sizeof(name), "racer_%d", r->idx);
	r->rc_own = ut_register(name, "password1", &r->uid_own);
	return NULL;
}

Test(user, concurrent_registrations)
{
	pthread_t      th[UT_THREADS];
	struct ut_race r[UT_THREADS];
	int            won = 0;

	for (int i = 0; i < UT_THREADS; i++) {
		r[i] = (struct ut_race) { .idx = i };
		cr_assert_eq(pthread_create(&th[i], NULL, ut_race_main, &r[i]), 0);
	}
	for (int i = 0; i < UT_THREADS; i++) {
		pthread_join(th[i], NULL);
	}
	for (int i = 0; i < UT_THREADS; i++) {
		cr_assert(r[i].rc_same == WB_OK || r[i].rc_same == WB_EEXIST, "rc %s",
		    wb_err_name(r[i].rc_same));
		won += r[i].rc_same == WB_OK;
		cr_assert_eq(r[i].rc_own, WB_OK);
		for (int k = 0; k < i; k++) {
			cr_assert_neq(r[i].uid_own, r[k].uid_own);
		}
		cr_assert_leq(r[i].uid_own, UT_THREADS + 1);
	}
	cr_assert_eq(won, 1);
}

/* ut_delete deletes the account of token with password: user.delete's code. */
static int
ut_delete(const char *token, const char *pw)
{
	wb_obj *req = wb_request(WB_OP_USER_DELETE);

	wb_set_cstr(req, WB_F_TOKEN, token);
	wb_set_cstr(req, WB_F_PASSWORD, pw);
	return ut_call(req, NULL);
}

/* ut_records reads the revocation feed from seq 1: the types and uids of its records. */
static size_t
ut_records(char types[][16], uint64_t *uids, size_t cap)
{
	wb_obj       *req = wb_request(WB_OP_USER_REVOCATIONS), *rep;
	const wb_obj *ev = NULL;
	size_t        n = 0;

	wb_set_u64(req, WB_F_FROM, 1);
	cr_assert_eq(ut_call(req, &rep), WB_OK);
	(void)wb_get_objs(rep, WB_F_EVENTS, &ev, &n);
	for (size_t i = 0; i < n && i < cap; i++) {
		snprintf(types[i], 16, "%s", wb_str(&ev[i], WB_F_TYPE, "?"));
		uids[i] = wb_u64(&ev[i], WB_F_UID, 0);
	}
	wb_msg_free(rep);
	return n < cap ? n : cap;
}

/* the name is held for a second in this suite */
static void
ut_setup_hold(void)
{
	ut_hold = "1";
	ut_start("604800");
}

Test(user_delete, closes_the_account_and_holds_its_name, .init = ut_setup_hold, .fini = ut_teardown,
    .timeout = 60)
{
	uint64_t uid, other, auid, uid2;
	char     tok[128], tok2[128], types[8][16];
	uint64_t ruids[8];
	wb_obj  *req, *rep;

	cr_assert_eq(ut_register("Nora", "password1", &uid), WB_OK);
	cr_assert_eq(ut_register("otto", "password1", &other), WB_OK);
	cr_assert_eq(ut_login("nora", "password1", &auid, tok, sizeof(tok)), WB_OK);
	cr_assert_eq(ut_login("nora", "password1", &auid, tok2, sizeof(tok2)), WB_OK);

	/* a wrong password is a wrong password, and counts as a login's would */
	cr_assert_eq(ut_delete(tok, "password2"), WB_ELOGIN);
	cr_assert_eq(ut_delete(tok, "password2"), WB_ELOGIN);
	cr_assert_eq(ut_delete(tok, "password2"), WB_ELOGIN);
	cr_assert_eq(ut_delete(tok, "password2"), WB_ELOGIN); /* the 4th: the first wait begins */
	cr_assert_eq(ut_delete(tok, "password1"), WB_ERATE, "the limiter holds the right one too");
	cr_assert_eq(ut_delete("not a token", "password1"), WB_EAUTH);
	cr_assert_eq(ut_token_op(WB_OP_USER_AUTH, tok, &auid), WB_OK, "still open");
	wbt_sleep_ms(1100);
	cr_assert_eq(ut_delete(tok, "password1"), WB_OK);

	/* closed at once: no session, no login, no record, the name held */
	cr_assert_eq(ut_token_op(WB_OP_USER_AUTH, tok, &auid), WB_EAUTH);
	cr_assert_eq(ut_token_op(WB_OP_USER_AUTH, tok2, &auid), WB_EAUTH, "every session ended");
	cr_assert_eq(ut_token_op(WB_OP_USER_LOGOUT_ALL, tok2, NULL), WB_EAUTH);
	cr_assert_eq(ut_login("nora", "password1", &auid, NULL, 0), WB_ELOGIN);
	req = wb_request(WB_OP_USER_LOOKUP);
	wb_set_cstr(req, WB_F_NAME, "nora");
	cr_assert_eq(ut_call(req, NULL), WB_ENOUSER);
	ut_get(&uid, 1, &rep);
	const uint64_t *missing;
	size_t          nm = 0;
	cr_assert(wb_get_u64s(rep, WB_F_MISSING, &missing, &nm) && nm == 1 && missing[0] == uid);
	wb_msg_free(rep);
	req = wb_request(WB_OP_USER_UPDATE);
	wb_set_u64(req, WB_F_UID, uid);
	wb_set_cstr(req, WB_F_BIO, "back from the dead");
	cr_assert_eq(ut_call(req, NULL), WB_ENOUSER, "no cell of it is written again");
	cr_assert_eq(ut_register("NORA", "password1", NULL), WB_EEXIST, "held");

	/* the revocation feed ends its sessions, then says it is closed */
	size_t n = ut_records(types, ruids, 8);
	cr_assert_eq(n, 2, "%zu records", n);
	cr_assert(strcmp(types[0], "all") == 0 && ruids[0] == uid, "%s %llu", types[0],
	    (unsigned long long)ruids[0]);
	cr_assert(strcmp(types[1], "closed") == 0 && ruids[1] == uid);

	/* its log: one erase event, its uid and no name */
	req = wb_request(WB_OP_USER_LOG);
	wb_set_u64(req, WB_F_FROM, 1);
	cr_assert_eq(ut_call(req, &rep), WB_OK);
	const wb_obj *ev = NULL;
	size_t        ne = 0;
	cr_assert(wb_get_objs(rep, WB_F_EVENTS, &ev, &ne) && ne == 1);
	cr_assert_str_eq(wb_str(&ev[0], WB_F_TYPE, ""), "erase");
	cr_assert_eq(wb_u64(&ev[0], WB_F_UID, 0), uid);
	cr_assert_eq(wb_u64(&ev[0], WB_F_SEQ, 0), 1);
	cr_assert_not(wb_has(&ev[0], WB_F_NAME));
	cr_assert_eq(wb_u64(rep, WB_F_LAST, 0), 1);
	wb_msg_free(rep);

	/* after the hold the name is free: a new account, a new uid */
	long long t0 = wbt_now_ms();
	int       rc;
	while ((rc = ut_register("nora", "password3", &uid2)) == WB_EEXIST &&
	       wbt_now_ms() - t0 < 5000) {
		wbt_sleep_ms(50);
	}
	cr_assert_eq(rc, WB_OK, "the name is still held after %lld ms", wbt_now_ms() - t0);
	cr_assert_gt(uid2, other, "a new uid, never the old one");
	cr_assert_eq(ut_login("nora", "password3", &auid, tok, sizeof(tok)), WB_OK);
	cr_assert_eq(auid, uid2);

	/* the operator's deletion: by name, no password; an unknown name is no such user */
	req = wb_request(WB_OP_USER_DELETE_NAME);
	wb_set_cstr(req, WB_F_NAME, "Otto");
	cr_assert_eq(ut_call(req, &rep), WB_OK);
	cr_assert_eq(wb_u64(rep, WB_F_UID, 0), other);
	wb_msg_free(rep);
	req = wb_request(WB_OP_USER_DELETE_NAME);
	wb_set_cstr(req, WB_F_NAME, "otto");
	cr_assert_eq(ut_call(req, NULL), WB_ENOUSER);
	req = wb_request(WB_OP_USER_DELETE_NAME);
	wb_set_cstr(req, WB_F_NAME, "no such name!");
	cr_assert_eq(ut_call(req, NULL), WB_ENOUSER);
}

Test(user_delete, sessions_erased_and_survives_restart, .init = ut_setup_hold, .fini = ut_teardown,
    .timeout = 60)
{
	uint64_t uid, auid;
	char     tok[128];

	cr_assert_eq(ut_register("pia", "password1", &uid), WB_OK);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(ut_login("pia", "password1", &auid, tok, sizeof(tok)), WB_OK);
	}
	cr_assert_eq(ut_delete(tok, "password1"), WB_OK);
	/* the sessions' rows go in the background: the gauge says when */
	long long t0 = wbt_now_ms();
	wb_obj   *rep = NULL;
	uint64_t  swept = 0;
	while (wbt_now_ms() - t0 < 10000) {
		cr_assert_eq(ut_call(wb_request(WB_OP_STATS), &rep), WB_OK);
		swept = wbt_gauge(rep, "sessions_swept_seq");
		wb_msg_free(rep);
		if (swept == 1) {
			break;
		}
		wbt_sleep_ms(20);
	}
	cr_assert_eq(swept, 1, "the sessions of the deleted account were not swept");
	cr_assert_eq(wbt_stop(daemon_, SIGTERM, 10000), 0);
	ut_start("604800");
	cr_assert_eq(ut_login("pia", "password1", &auid, NULL, 0), WB_ELOGIN, "still deleted");
	cr_assert_eq(ut_call(wb_request(WB_OP_STATS), &rep), WB_OK);
	cr_assert_eq(wbt_gauge(rep, "sessions_swept_seq"), 1, "the position survives");
	cr_assert_eq(wbt_gauge(rep, "log_last_seq"), 1);
	wb_msg_free(rep);
}
