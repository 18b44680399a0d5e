/*
 * authz_test.c - nobody acts as someone else, and no secret reaches a
 * log (the limits on password checks: limit_test.c).  A real cluster; the attacker "bob" holds
 * a valid session of his own and tries, through the SDK, raw msgpack
 * requests to the gateway and HTTP:
 *
 *   forged     uid/author fields in msgpack and JSON bodies and query
 *              strings, the services' internal operations sent to the
 *              gateway, someone else's post id, missing, garbage and
 *              logged-out tokens: each refused, and the victim's state
 *              (posts, follows, profile) is unchanged at the end.
 *   logs       every daemon at debug level through register, login,
 *              failed logins, token use and logout: no password, token
 *              or password hash in any log.
 */
#include <criterion/criterion.h>
#include <jansson.h>

#include "hs.h"
#include "rt_client.h"

static hs_cluster hc;

/* az_gw sends one msgpack request to the gateway; returns the reply's code (the request is freed). */
static int
az_gw(wb_obj *req)
{
	rt_client_opts o = { .timeout_ms = 15000, .plain = true };
	rt_client     *c;
	wb_obj        *rep = NULL;
	int            rc;

	cr_assert_not_null(req);
	cr_assert_eq(rt_client_open(&c, hc.c.gateway_url, &o), WB_OK);
	rc = rt_call(c, req, &rep);
	if (rep != NULL) {
		rc = wb_reply_code(rep, NULL);
	}
	wb_msg_free(rep);
	wb_msg_free(req);
	rt_client_close(c);
	return rc;
}

/* az_req builds a request for op with a token (may be NULL) and a forged uid (0: none). */
static wb_obj *
az_req(wb_op op, const char *token, uint64_t uid)
{
	wb_obj *q = wb_request(op);

	cr_assert_not_null(q);
	if (token != NULL) {
		cr_assert_eq(wb_set_cstr(q, WB_F_TOKEN, token), WB_OK);
	}
	if (uid != 0) {
		cr_assert_eq(wb_set_u64(q, WB_F_UID, uid), WB_OK);
	}
	return q;
}

/* az_http sends an HTTP request; returns the status and the error name (in name, "" if none). */
static int
az_http(
    const char *method, const char *path, const char *token, const char *body, char *name, size_t n)
{
	ht_res       r;
	json_error_t je;
	json_t      *j;
	int          st;

	cr_assert_eq(ht_request(hc.port[HS_HTTP], method, path, token, body, &r), 0,
	    "%s %s: no response", method, path);
	st = r.status;
	if (name != NULL) {
		name[0] = '\0';
		if ((j = json_loadb(r.body, r.len, 0, &je)) != NULL) {
			const char *e = json_string_value(json_object_get(j, "error"));
			snprintf(name, n, "%s", e != NULL ? e : "");
			json_decref(j);
		}
	}
	ht_res_free(&r);
	return st;
}

/* az_refused checks an HTTP attempt is refused with status want. */
static void
az_refused(int want, const char *method, const char *path, const char *token, const char *body)
{
	char name[64];
	int  st = az_http(method, path, token, body, name, sizeof(name));

	cr_assert_eq(st, want, "%s %s %s: status %d (%s), want %d", method, path,
	    body != NULL ? body : "", st, name, want);
}

/* az_refused_gw checks a msgpack attempt is refused (any error but OK). */
#define az_refused_gw(req, what)                                                                \
	do {                                                                                    \
		int rc_ = az_gw(req);                                                           \
		cr_assert(                                                                      \
		    rc_ == WB_EINVAL || rc_ == WB_EBADOP || rc_ == WB_EAUTH || rc_ == WB_EPERM, \
		    "%s: answered %s", what, wb_err_name(rc_));                                 \
	} while (0)

Test(authz, nobody_acts_as_another_user, .fini = wbt_cleanup, .timeout = 180)
{
	warble_client  *alice, *bob, *carol;
	warble_posts_t *p;
	warble_users_t *us;
	warble_user_t  *u;
	uint64_t        post, alice_uid, bob_uid, bpost;
	char            atok[128], btok[128], path[160], body[256], stale[128];

	cr_assert_eq(hs_start(&hc, NULL), 0, "cluster did not start");
	cr_assert_not_null(alice = hs_session(&hc, "az_alice", "alice-password"));
	cr_assert_not_null(bob = hs_session(&hc, "az_bob", "bob-password"));
	cr_assert_not_null(carol = hs_session(&hc, "az_carol", "carol-password"));
	snprintf(atok, sizeof(atok), "%s", warble_token(alice));
	snprintf(btok, sizeof(btok), "%s", warble_token(bob));
	cr_assert_eq(warble_whoami(alice, &u), 0);
	alice_uid = u->uid;
	warble_user_free(u);
	cr_assert_eq(warble_whoami(bob, &u), 0);
	bob_uid = u->uid;
	warble_user_free(u);
	cr_assert_eq(warble_post(alice, "alice's own words", &post), 0);
	cr_assert_eq(warble_follow(alice, "az_carol"), 0);
	cr_assert_eq(warble_post(bob, "bob's post", &bpost), 0);

	/* SDK: bob deletes alice's post with his own valid session */
	cr_assert_eq(
	    warble_delete(bob, post), WARBLE_EPERM, "delete as another: %s", warble_errmsg(bob));

	/* msgpack: forged uid fields on every public op that acts as a user */
	wb_obj *q;
	q = az_req(WB_OP_PUBLISH, btok, alice_uid);
	wb_set_cstr(q, WB_F_TEXT, "forged by bob");
	az_refused_gw(q, "publish with uid");
	q = az_req(WB_OP_PUBLISH, btok, 0);
	wb_set_cstr(q, WB_F_TEXT, "forged by bob");
	wb_set_u64(q, WB_F_AUTHOR, alice_uid);
	az_refused_gw(q, "publish with author");
	q = az_req(WB_OP_DELETE, btok, alice_uid);
	wb_set_u64(q, WB_F_ID, post);
	az_refused_gw(q, "delete with uid");
	q = az_req(WB_OP_DELETE, btok, 0);
	wb_set_u64(q, WB_F_ID, post);
	az_refused_gw(q, "delete of another's post");
	q = az_req(WB_OP_UNFOLLOW, btok, alice_uid);
	wb_set_cstr(q, WB_F_NAME, "az_carol");
	az_refused_gw(q, "unfollow with uid");
	q = az_req(WB_OP_FOLLOW, btok, alice_uid);
	wb_set_cstr(q, WB_F_NAME, "az_bob");
	az_refused_gw(q, "follow with uid");
	q = az_req(WB_OP_FOLLOW, btok, 0);
	wb_set_cstr(q, WB_F_NAME, "az_bob");
	wb_set_u64(q, WB_F_TARGET, alice_uid);
	az_refused_gw(q, "follow with target");
	q = az_req(WB_OP_UPDATE_PROFILE, btok, alice_uid);
	wb_set_cstr(q, WB_F_BIO, "pwned");
	az_refused_gw(q, "update_profile with uid");
	q = az_req(WB_OP_HOME, btok, alice_uid);
	az_refused_gw(q, "home with uid");
	q = az_req(WB_OP_LOGOUT, btok, alice_uid);
	az_refused_gw(q, "logout with uid");
	/* the services' internal operations are not served by the gateway */
	q = az_req(WB_OP_POST_DELETE, NULL, alice_uid);
	wb_set_u64(q, WB_F_ID, post);
	az_refused_gw(q, "post.delete at the gateway");
	q = az_req(WB_OP_POST_PUBLISH, NULL, alice_uid);
	wb_set_cstr(q, WB_F_TEXT, "forged");
	az_refused_gw(q, "post.publish at the gateway");
	q = az_req(WB_OP_REL_FOLLOW, NULL, alice_uid);
	wb_set_u64(q, WB_F_TARGET, bob_uid);
	az_refused_gw(q, "rel.follow at the gateway");
	q = az_req(WB_OP_REL_UNFOLLOW, NULL, alice_uid);
	wb_set_u64(q, WB_F_TARGET, 3);
	az_refused_gw(q, "rel.unfollow at the gateway");
	q = az_req(WB_OP_USER_UPDATE, NULL, alice_uid);
	wb_set_cstr(q, WB_F_BIO, "pwned");
	az_refused_gw(q, "user.update at the gateway");
	q = az_req(WB_OP_INBOX_HOME, NULL, alice_uid);
	az_refused_gw(q, "inbox.home at the gateway");
	q = az_req(WB_OP_USER_AUTH, atok, 0);
	az_refused_gw(q, "user.auth at the gateway");
	q = az_req(WB_OP_USER_REGISTER_MANY, NULL, 0);
	wb_set_cstr(q, WB_F_NAME, "bulk");
	wb_set_cstr(q, WB_F_PASSWORD, "password-x");
	wb_set_u64(q, WB_F_FROM, 0);
	wb_set_u64(q, WB_F_LIMIT, 10);
	az_refused_gw(q, "user.register_many at the gateway");
	/* missing and garbage tokens */
	q = az_req(WB_OP_PUBLISH, NULL, 0);
	wb_set_cstr(q, WB_F_TEXT, "no token");
	az_refused_gw(q, "publish without token");
	static const char *const bad[] = { "", "x", "not-a-token-at-all",
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		q = az_req(WB_OP_DELETE, bad[i], 0);
		wb_set_u64(q, WB_F_ID, post);
		cr_assert_eq(az_gw(q), WB_EAUTH, "delete with token \"%s\"", bad[i]);
		q = az_req(WB_OP_FOLLOW, bad[i], 0);
		wb_set_cstr(q, WB_F_NAME, "az_bob");
		cr_assert_eq(az_gw(q), WB_EAUTH, "follow with token \"%s\"", bad[i]);
	}

	/* HTTP: forged fields in bodies and query strings, another's post, bad tokens */
	snprintf(body, sizeof(body), "{\"text\":\"forged\",\"uid\":%llu}",
	    (unsigned long long)alice_uid);
	az_refused(400, "POST", "/api/v1/posts", btok, body);
	snprintf(body, sizeof(body), "{\"text\":\"forged\",\"author\":%llu}",
	    (unsigned long long)alice_uid);
	az_refused(400, "POST", "/api/v1/posts", btok, body);
	snprintf(body, sizeof(body), "{\"text\":\"forged\",\"token\":\"%s\"}", atok);
	az_refused(400, "POST", "/api/v1/posts", btok, body);
	snprintf(path, sizeof(path), "/api/v1/posts?uid=%llu", (unsigned long long)alice_uid);
	az_refused(400, "POST", path, btok, "{\"text\":\"forged\"}");
	snprintf(path, sizeof(path), "/api/v1/posts/%llu", (unsigned long long)post);
	az_refused(403, "DELETE", path, btok, NULL);
	az_refused(401, "DELETE", path, NULL, NULL);
	az_refused(401, "DELETE", path, "garbage", NULL);
	snprintf(path, sizeof(path), "/api/v1/posts/%llu?uid=%llu", (unsigned long long)post,
	    (unsigned long long)alice_uid);
	az_refused(400, "DELETE", path, btok, NULL);
	snprintf(body, sizeof(body), "{\"uid\":%llu}", (unsigned long long)alice_uid);
	az_refused(400, "PUT", "/api/v1/me/following/az_bob", btok, body);
	az_refused(400, "DELETE", "/api/v1/me/following/az_carol", btok, body);
	snprintf(path, sizeof(path), "/api/v1/me/following/az_carol?uid=%llu",
	    (unsigned long long)alice_uid);
	az_refused(400, "DELETE", path, btok, NULL);
	az_refused(401, "PUT", "/api/v1/me/following/az_bob", NULL, NULL);
	snprintf(
	    body, sizeof(body), "{\"bio\":\"pwned\",\"uid\":%llu}", (unsigned long long)alice_uid);
	az_refused(400, "PATCH", "/api/v1/me", btok, body);
	snprintf(body, sizeof(body), "{\"bio\":\"pwned\",\"token\":\"%s\"}", atok);
	az_refused(400, "PATCH", "/api/v1/me", btok, body);
	az_refused(401, "PATCH", "/api/v1/me", NULL, "{\"bio\":\"pwned\"}");
	snprintf(path, sizeof(path), "/api/v1/home?uid=%llu", (unsigned long long)alice_uid);
	az_refused(400, "GET", path, btok, NULL);
	/* a token in a body or query does not authenticate */
	snprintf(path, sizeof(path), "/api/v1/me?token=%s", atok);
	az_refused(400, "GET", path, NULL, NULL);

	/* a logged-out token is dead everywhere (after the gateway's cache, <= 1 s) */
	warble_client *alice2 = hs_session(&hc, "az_alice", "alice-password");
	cr_assert_not_null(alice2);
	snprintf(stale, sizeof(stale), "%s", warble_token(alice2));
	cr_assert_eq(warble_logout(alice2), 0);
	warble_close(alice2);
	wbt_sleep_ms(1100);
	snprintf(path, sizeof(path), "/api/v1/posts/%llu", (unsigned long long)post);
	az_refused(401, "DELETE", path, stale, NULL);
	az_refused(401, "POST", "/api/v1/posts", stale, "{\"text\":\"after logout\"}");
	q = az_req(WB_OP_PUBLISH, stale, 0);
	wb_set_cstr(q, WB_F_TEXT, "after logout");
	cr_assert_eq(az_gw(q), WB_EAUTH, "publish with a logged-out token");

	/* alice is untouched: one post, follows only carol, empty bio; bob's own post stands */
	cr_assert_eq(warble_timeline(carol, "az_alice", 0, 50, &p), 0);
	cr_assert_eq(p->n, 1, "alice has %zu posts", p->n);
	cr_assert_eq(p->posts[0].id, post);
	cr_assert_str_eq(p->posts[0].text, "alice's own words");
	warble_posts_free(p);
	cr_assert_eq(warble_following(carol, "az_alice", 0, 50, &us), 0);
	cr_assert_eq(us->n, 1, "alice follows %zu users", us->n);
	cr_assert_str_eq(us->users[0].name, "az_carol");
	warble_users_free(us);
	cr_assert_eq(warble_fans(carol, "az_bob", 0, 50, &us), 0);
	cr_assert_eq(us->n, 0, "bob has %zu fans", us->n);
	warble_users_free(us);
	cr_assert_eq(warble_profile(carol, "az_alice", &u), 0);
	cr_assert_str_eq(u->bio, "", "alice's bio changed: %s", u->bio);
	warble_user_free(u);
	cr_assert_eq(warble_timeline(carol, "az_bob", 0, 50, &p), 0);
	cr_assert_eq(p->n, 1, "bob has %zu posts", p->n);
	warble_posts_free(p);

	/* and alice herself can do all of it */
	snprintf(path, sizeof(path), "/api/v1/posts/%llu", (unsigned long long)post);
	az_refused(200, "DELETE", path, atok, NULL);
	warble_close(alice);
	warble_close(bob);
	warble_close(carol);
	cr_assert_eq(hs_stop(&hc), 0);
}

/* az_grep tells whether file contains needle (binary-safe); -1 if unreadable. */
static int
az_grep(const char *file, const char *needle)
{
	FILE  *f = fopen(file, "rb");
	char  *buf;
	size_t n = 0, cap = 1 << 20, k;
	int    found;

	if (f == NULL) {
		return -1;
	}
	buf = malloc(cap + 1);
	cr_assert_not_null(buf);
	while ((k = fread(buf + n, 1, cap - n, f)) > 0) {
		n += k;
		if (n == cap) {
			char *nb = realloc(buf, cap * 2 + 1);
			cr_assert_not_null(nb);
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	buf[n] = '\0';
	found = memmem(buf, n, needle, strlen(needle)) != NULL;
	free(buf);
	return found;
}

Test(authz, no_secrets_in_logs, .fini = wbt_cleanup, .timeout = 180)
{
	const char              *env[] = { "WARBLE_LOG_LEVEL=debug", NULL };
	static const char *const pws[] = { "Secret-Pw-Alpha-1", "Secret-Pw-Bravo-22",
		"Secret-Pw-Charlie-333" };
	static const char *const names[] = { "lg_alpha", "lg_bravo", "lg_charlie" };
	char                     tokens[16][128], body[256];
	int                      nt = 0;
	warble_client           *wc;
	json_t                  *j;
	json_error_t             je;
	ht_res                   r;

	cr_assert_eq(hs_start(&hc, env), 0, "cluster did not start");
	for (int i = 0; i < 3; i++) {
		/* SDK: register, login, use, failed logins, logout */
		cr_assert_not_null(wc = hs_session(&hc, names[i], pws[i]));
		snprintf(tokens[nt++], sizeof(tokens[0]), "%s", warble_token(wc));
		cr_assert_eq(warble_post(wc, "hello", NULL), 0);
		cr_assert_eq(
		    warble_login(wc, names[i], "Wrong-Pw-Delta-4444", NULL), WARBLE_ELOGIN);
		cr_assert_eq(warble_set_token(wc, tokens[nt - 1]), 0);
		cr_assert_eq(warble_logout(wc), 0);
		cr_assert_neq(warble_post(wc, "after logout", NULL), 0);
		warble_close(wc);
		/* HTTP: login, use, logout, a bad token */
		snprintf(
		    body, sizeof(body), "{\"name\":\"%s\",\"password\":\"%s\"}", names[i], pws[i]);
		cr_assert_eq(
		    ht_request(hc.port[HS_HTTP], "POST", "/api/v1/sessions", NULL, body, &r), 0);
		cr_assert_eq(r.status, 201, "%s", r.body);
		cr_assert_not_null(j = json_loadb(r.body, r.len, 0, &je));
		snprintf(tokens[nt++], sizeof(tokens[0]), "%s",
		    json_string_value(json_object_get(j, "token")));
		json_decref(j);
		ht_res_free(&r);
		cr_assert_eq(az_http("GET", "/api/v1/me", tokens[nt - 1], NULL, NULL, 0), 200);
		cr_assert_eq(
		    az_http("DELETE", "/api/v1/sessions", tokens[nt - 1], NULL, NULL, 0), 200);
		wbt_sleep_ms(1100); /* past a pull of the revocation feed */
		cr_assert_eq(az_http("GET", "/api/v1/me", tokens[nt - 1], NULL, NULL, 0), 401);
		snprintf(body, sizeof(body),
		    "{\"name\":\"%s\",\"password\":\"Wrong-Pw-Echo-55555\"}", names[i]);
		cr_assert_eq(az_http("POST", "/api/v1/sessions", NULL, body, NULL, 0), 401);
		/* a registration with a too-short password and one for a taken name */
		snprintf(
		    body, sizeof(body), "{\"name\":\"%s\",\"password\":\"%s\"}", names[i], pws[i]);
		cr_assert_eq(az_http("POST", "/api/v1/users", NULL, body, NULL, 0), 409);
	}
	cr_assert_eq(hs_stop(&hc), 0);

	wbt_daemon *ds[] = { hc.c.user, hc.c.relation, hc.c.content, hc.c.inbox, hc.c.gateway };
	bool        any_debug = false;
	for (size_t d = 0; d < sizeof(ds) / sizeof(ds[0]); d++) {
		const char *log = ds[d]->log;

		for (int i = 0; i < 3; i++) {
			cr_assert_eq(az_grep(log, pws[i]), 0, "%s has a password", log);
		}
		cr_assert_eq(az_grep(log, "Wrong-Pw-"), 0, "%s has a wrong password", log);
		cr_assert_eq(az_grep(log, "$argon2"), 0, "%s has a password hash", log);
		for (int t = 0; t < nt; t++) {
			cr_assert_gt(strlen(tokens[t]), 20);
			cr_assert_eq(az_grep(log, tokens[t]), 0, "%s has a token", log);
			/* nor a good part of one */
			char half[32];
			snprintf(half, sizeof(half), "%.16s", tokens[t] + 8);
			cr_assert_eq(az_grep(log, half), 0, "%s has part of a token", log);
		}
		any_debug |= az_grep(log, "DEBUG") == 1 || az_grep(log, "debug") == 1;
	}
	cr_assert_eq(az_grep(hc.c.user->log, "lg_alpha"), 1,
	    "the user service's log should name the accounts it registered (is logging on?)");
	(void)any_debug;
}

/* az_big returns a malloc'd string of n copies of c. */
static char *
az_big(size_t n, char c)
{
	char *s = malloc(n + 1);

	cr_assert_not_null(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/* Every row of README's limits table that a client can reach, over HTTP (and msgpack for size). */
Test(authz, limits, .fini = wbt_cleanup, .timeout = 180)
{
	char           name[64], *body, *s, path[1024];
	warble_client *wc;
	const char    *tok;

	cr_assert_eq(hs_start(&hc, NULL), 0, "cluster did not start");
	cr_assert_not_null(wc = hs_session(&hc, "lim_user", "password-lim"));
	tok = warble_token(wc);
	body = malloc(80 * 1024);
	cr_assert_not_null(body);
#define AZ_ERR(st, nm, m, p, t, b)                                                        \
	do {                                                                              \
		cr_assert_eq(az_http(m, p, t, b, name, sizeof(name)), st, "%s %s", m, p); \
		cr_assert_str_eq(name, nm, "%s %s", m, p);                                \
	} while (0)
	s = az_big(33, 'a');
	snprintf(body, 1024, "{\"name\":\"%s\",\"password\":\"password-1\"}", s);
	AZ_ERR(400, "BAD_USERNAME", "POST", "/api/v1/users", NULL, body);
	free(s);
	AZ_ERR(400, "BAD_USERNAME", "POST", "/api/v1/users", NULL,
	    "{\"name\":\"ab\",\"password\":\"password-1\"}");
	AZ_ERR(400, "BAD_USERNAME", "POST", "/api/v1/users", NULL,
	    "{\"name\":\"a-b.c\",\"password\":\"password-1\"}");
	AZ_ERR(400, "BAD_PASSWORD", "POST", "/api/v1/users", NULL,
	    "{\"name\":\"lim_x\",\"password\":\"short\"}");
	s = az_big(1025, 'p');
	snprintf(body, 4096, "{\"name\":\"lim_y\",\"password\":\"%s\"}", s);
	AZ_ERR(400, "BAD_PASSWORD", "POST", "/api/v1/users", NULL, body);
	snprintf(body, 4096, "{\"name\":\"lim_user\",\"password\":\"%s\"}", s);
	AZ_ERR(401, "BAD_CREDENTIALS", "POST", "/api/v1/sessions", NULL, body);
	free(s);
	s = az_big(281, 'x');
	snprintf(body, 4096, "{\"text\":\"%s\"}", s);
	AZ_ERR(400, "TEXT_TOO_LONG", "POST", "/api/v1/posts", tok, body);
	snprintf(body, 4096, "{\"bio\":\"%s\"}", s);
	AZ_ERR(400, "INVALID", "PATCH", "/api/v1/me", tok, body);
	free(s);
	s = az_big(65, 'd');
	snprintf(body, 4096, "{\"display\":\"%s\"}", s);
	AZ_ERR(400, "INVALID", "PATCH", "/api/v1/me", tok, body);
	free(s);
	AZ_ERR(400, "INVALID", "GET", "/api/v1/home?limit=0", tok, NULL);
	cr_assert_eq(az_http("GET", "/api/v1/home?limit=100000", tok, NULL, NULL, 0), 200,
	    "a large limit is capped");
	AZ_ERR(400, "BAD_MESSAGE", "GET", "/api/v1/home?before=abc", tok, NULL);
	AZ_ERR(400, "BAD_MESSAGE", "GET", "/api/v1/users/lim_user/following?after=-1", NULL, NULL);
	AZ_ERR(400, "BAD_MESSAGE", "GET", "/api/v1/users/lim_user/posts?since=18446744073709551616",
	    NULL, NULL);
	s = az_big(600, '1');
	snprintf(path, sizeof(path), "/api/v1/home?before=%s", s);
	AZ_ERR(400, "BAD_MESSAGE", "GET", path, tok, NULL);
	free(s);
	AZ_ERR(400, "BAD_MESSAGE", "GET", "/api/v1/a/b/c/d/e/f/g/h/i/j", NULL, NULL);
	/* a body over 64 KiB */
	memset(body, ' ', 70 * 1024);
	memcpy(body, "{\"text\":\"x\"}", 12);
	body[70 * 1024] = '\0';
	cr_assert_eq(az_http("POST", "/api/v1/posts", tok, body, NULL, 0), 413);
	free(body);
	/* a msgpack request over 4 MiB: refused or dropped, and the gateway lives on */
	{
		rt_client_opts o = { .timeout_ms = 3000, .plain = true };
		rt_client     *c;
		wb_obj        *q = az_req(WB_OP_PUBLISH, tok, 0), *rep = NULL;
		char          *t = az_big(5 << 20, 'y');
		int            rc;

		wb_set_cstr(q, WB_F_TEXT, t);
		free(t);
		cr_assert_eq(rt_client_open(&c, hc.c.gateway_url, &o), WB_OK);
		rc = rt_call(c, q, &rep);
		if (rep != NULL) {
			rc = wb_reply_code(rep, NULL);
		}
		cr_assert_neq(rc, WB_OK, "a 5 MiB request was accepted");
		wb_msg_free(rep);
		wb_msg_free(q);
		rt_client_close(c);
	}
	cr_assert_eq(warble_post(wc, "still fine", NULL), 0, "%s", warble_errmsg(wc));
	warble_close(wc);
	cr_assert_eq(hs_stop(&hc), 0);
}
