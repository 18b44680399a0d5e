/*
 * gw_test.c - warble-gateway in front of the four real services
 * (wbt_cluster), driven over its msgpack API with rt_client: every public
 * operation, hydration, the error codes clients see, session expiry and
 * revocation through the token checks, and a dead backend.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "rt_client.h"
#include "wb_proto.h"
#include "wbt.h"
#include "wbt_cluster.h"
#include "wb_clock.h"

static wbt_cluster cl;
static rt_client  *gwc;

/* gt_start_as starts a cluster of the given shape (with extra env) and a client of its gateway. */
static void
gt_start_as(const char *const *env, wbt_shape shape)
{
	rt_client_opts o = { .timeout_ms = 10000, .plain = true };

	cr_assert_eq(wbt_cluster_start_as(&cl, env, shape), 0, "cluster did not start");
	cr_assert_eq(rt_client_open(&gwc, cl.gateway_url, &o), WB_OK);
}

static void
gt_start(const char *const *env)
{
	gt_start_as(env, WBT_ANY);
}

static void
gt_fini(void)
{
	rt_client_close(gwc);
	gwc = NULL;
	wbt_cleanup();
}

/* gt_call sends req to the gateway; returns the code, the reply in *rep (may be NULL). */
static int
gt_call(wb_obj *req, wb_obj **rep)
{
	wb_obj *r = NULL;

	cr_assert_not_null(req);
	int rc = rt_call(gwc, req, &r);
	wb_msg_free(req);
	if (rep != NULL) {
		*rep = r;
	} else {
		wb_msg_free(r);
	}
	return rc;
}

/* gt_req builds a request with up to two string fields (NULL field name ends). */
static wb_obj *
gt_req(wb_op op, wb_field f1, const char *v1, wb_field f2, const char *v2)
{
	wb_obj *q = wb_request(op);

	cr_assert_not_null(q);
	if (v1 != NULL) {
		cr_assert_eq(wb_set_cstr(q, f1, v1), WB_OK);
	}
	if (v2 != NULL) {
		cr_assert_eq(wb_set_cstr(q, f2, v2), WB_OK);
	}
	return q;
}

static void
gt_register(const char *name)
{
	cr_assert_eq(
	    gt_call(gt_req(WB_OP_REGISTER, WB_F_NAME, name, WB_F_PASSWORD, "password1"), NULL),
	    WB_OK, "register %s", name);
}

/* gt_login logs name in and copies its token into tok. */
static void
gt_login(const char *name, char *tok, size_t len)
{
	wb_obj *r;

	cr_assert_eq(
	    gt_call(gt_req(WB_OP_LOGIN, WB_F_NAME, name, WB_F_PASSWORD, "password1"), &r), WB_OK);
	cr_assert(wb_has(r, WB_F_TOKEN));
	cr_assert_gt(wb_u64(r, WB_F_UID, 0), 0);
	snprintf(tok, len, "%s", wb_str(r, WB_F_TOKEN, ""));
	wb_msg_free(r);
}

static uint64_t
gt_publish(const char *tok, const char *text)
{
	wb_obj  *r;
	uint64_t id;

	cr_assert_eq(gt_call(gt_req(WB_OP_PUBLISH, WB_F_TOKEN, tok, WB_F_TEXT, text), &r), WB_OK);
	id = wb_u64(r, WB_F_ID, 0);
	cr_assert_gt(id, 0);
	wb_msg_free(r);
	return id;
}

/* gt_home_wait polls tok's home until it holds want posts (fan-out is asynchronous); returns the reply. */
static wb_obj *
gt_home_wait(const char *tok, size_t want)
{
	long long deadline = wbt_now_ms() + 10000;

	for (;;) {
		wb_obj       *r;
		const wb_obj *posts;
		size_t        n = 0;

		cr_assert_eq(gt_call(gt_req(WB_OP_HOME, WB_F_TOKEN, tok, 0, NULL), &r), WB_OK);
		wb_get_objs(r, WB_F_POSTS, &posts, &n);
		if (n == want) {
			return r;
		}
		wb_msg_free(r);
		cr_assert_lt(
		    wbt_now_ms(), deadline, "home never held %zu posts (has %zu)", want, n);
		wbt_sleep_ms(20);
	}
}

Test(gateway, every_operation, .fini = gt_fini, .timeout = 90)
{
	char          ta[128], tb[128];
	wb_obj       *r, *q;
	const wb_obj *posts, *users;
	size_t        n;

	gt_start(NULL);
	gt_register("alice");
	gt_register("bob");
	gt_login("alice", ta, sizeof(ta));
	gt_login("bob", tb, sizeof(tb));

	/* whoami and update_profile */
	q = gt_req(WB_OP_UPDATE_PROFILE, WB_F_TOKEN, ta, WB_F_DISPLAY, "Alice A.");
	cr_assert_eq(wb_set_cstr(q, WB_F_BIO, "likes tea"), WB_OK);
	cr_assert_eq(gt_call(q, NULL), WB_OK);
	cr_assert_eq(gt_call(gt_req(WB_OP_WHOAMI, WB_F_TOKEN, ta, 0, NULL), &r), WB_OK);
	cr_assert_str_eq(wb_str(r, WB_F_NAME, ""), "alice");
	cr_assert_str_eq(wb_str(r, WB_F_DISPLAY, ""), "Alice A.");
	cr_assert_str_eq(wb_str(r, WB_F_BIO, ""), "likes tea");
	cr_assert_gt(wb_u64(r, WB_F_CREATED, 0), 0);
	wb_msg_free(r);

	/* bob follows alice, who posts three times; one post is deleted */
	cr_assert_eq(
	    gt_call(gt_req(WB_OP_FOLLOW, WB_F_TOKEN, tb, WB_F_NAME, "alice"), NULL), WB_OK);
	uint64_t id1 = gt_publish(ta, "first");
	uint64_t id2 = gt_publish(ta, "second");
	uint64_t id3 = gt_publish(ta, "third \xe2\x9c\x93");
	cr_assert(id1 < id2 && id2 < id3, "ids are time-ordered");
	r = gt_home_wait(tb, 3);
	wb_get_objs(r, WB_F_POSTS, &posts, &n);
	cr_assert_eq(wb_u64(&posts[0], WB_F_ID, 0), id3, "newest first");
	cr_assert_str_eq(wb_str(&posts[0], WB_F_TEXT, ""), "third \xe2\x9c\x93");
	cr_assert_str_eq(wb_str(&posts[0], WB_F_AUTHOR_NAME, ""), "alice");
	cr_assert_gt(wb_u64(&posts[0], WB_F_AUTHOR, 0), 0);
	cr_assert_gt(wb_u64(&posts[0], WB_F_TIME, 0), 0);
	cr_assert_eq(wb_u64(&posts[2], WB_F_ID, 0), id1);
	wb_msg_free(r);
	/* alice reads her own posts in her home, hydrated alike */
	r = gt_home_wait(ta, 3);
	wb_get_objs(r, WB_F_POSTS, &posts, &n);
	cr_assert_eq(wb_u64(&posts[0], WB_F_ID, 0), id3);
	cr_assert_str_eq(wb_str(&posts[0], WB_F_AUTHOR_NAME, ""), "alice");
	wb_msg_free(r);

	/* paging: limit 2, then before = next */
	q = gt_req(WB_OP_HOME, WB_F_TOKEN, tb, 0, NULL);
	wb_set_u64(q, WB_F_LIMIT, 2);
	cr_assert_eq(gt_call(q, &r), WB_OK);
	wb_get_objs(r, WB_F_POSTS, &posts, &n);
	cr_assert_eq(n, 2);
	uint64_t next = wb_u64(r, WB_F_NEXT, 0);
	cr_assert_eq(next, id2, "next is the last id of the page");
	wb_msg_free(r);
	q = gt_req(WB_OP_HOME, WB_F_TOKEN, tb, 0, NULL);
	wb_set_u64(q, WB_F_BEFORE, next);
	cr_assert_eq(gt_call(q, &r), WB_OK);
	wb_get_objs(r, WB_F_POSTS, &posts, &n);
	cr_assert_eq(n, 1);
	cr_assert_eq(wb_u64(&posts[0], WB_F_ID, 0), id1);
	cr_assert_not(wb_has(r, WB_F_NEXT), "last page has no cursor");
	wb_msg_free(r);

	/* delete: gone from timeline and home (deleted posts are skipped) */
	q = gt_req(WB_OP_DELETE, WB_F_TOKEN, tb, 0, NULL);
	wb_set_u64(q, WB_F_ID, id2);
	cr_assert_eq(gt_call(q, NULL), WB_EPERM, "bob cannot delete alice's post");
	q = gt_req(WB_OP_DELETE, WB_F_TOKEN, ta, 0, NULL);
	wb_set_u64(q, WB_F_ID, id2);
	cr_assert_eq(gt_call(q, NULL), WB_OK);
	r = gt_home_wait(tb, 2);
	wb_get_objs(r, WB_F_POSTS, &posts, &n);
	cr_assert_eq(wb_u64(&posts[0], WB_F_ID, 0), id3);
	cr_assert_eq(wb_u64(&posts[1], WB_F_ID, 0), id1);
	wb_msg_free(r);
	cr_assert_eq(gt_call(gt_req(WB_OP_TIMELINE, WB_F_NAME, "alice", 0, NULL), &r), WB_OK);
	wb_get_objs(r, WB_F_POSTS, &posts, &n);
	cr_assert_eq(n, 2);
	cr_assert_str_eq(wb_str(&posts[1], WB_F_TEXT, ""), "first");
	cr_assert_str_eq(wb_str(&posts[1], WB_F_AUTHOR_NAME, ""), "alice");
	wb_msg_free(r);

	/* profile: counts, and followed for a logged-in viewer */
	cr_assert_eq(gt_call(gt_req(WB_OP_PROFILE, WB_F_NAME, "alice", WB_F_TOKEN, tb), &r), WB_OK);
	cr_assert_eq(wb_u64(r, WB_F_FOLLOWERS, 9), 1);
	cr_assert_eq(wb_u64(r, WB_F_FOLLOWING, 9), 0);
	bool followed = false;
	cr_assert(wb_get_bool(r, WB_F_FOLLOWED, &followed) && followed);
	wb_msg_free(r);
	cr_assert_eq(gt_call(gt_req(WB_OP_PROFILE, WB_F_NAME, "bob", WB_F_TOKEN, "stale"), &r),
	    WB_OK, "a stale token on a public read is ignored");
	cr_assert_eq(wb_u64(r, WB_F_FOLLOWING, 9), 1);
	cr_assert_not(wb_has(r, WB_F_FOLLOWED));
	wb_msg_free(r);

	/* following / fans, named */
	cr_assert_eq(gt_call(gt_req(WB_OP_FANS_LIST, WB_F_NAME, "alice", 0, NULL), &r), WB_OK);
	cr_assert(wb_get_objs(r, WB_F_USERS, &users, &n));
	cr_assert_eq(n, 1);
	cr_assert_str_eq(wb_str(&users[0], WB_F_NAME, ""), "bob");
	wb_msg_free(r);
	cr_assert_eq(gt_call(gt_req(WB_OP_FOLLOWING_LIST, WB_F_NAME, "bob", 0, NULL), &r), WB_OK);
	cr_assert(wb_get_objs(r, WB_F_USERS, &users, &n));
	cr_assert_eq(n, 1);
	cr_assert_str_eq(wb_str(&users[0], WB_F_NAME, ""), "alice");
	cr_assert_str_eq(wb_str(&users[0], WB_F_DISPLAY, ""), "Alice A.");
	wb_msg_free(r);

	/* unfollow empties bob's home and alice's fans; alice keeps her own two */
	cr_assert_eq(
	    gt_call(gt_req(WB_OP_UNFOLLOW, WB_F_TOKEN, tb, WB_F_NAME, "alice"), NULL), WB_OK);
	wb_msg_free(gt_home_wait(tb, 0));
	wb_msg_free(gt_home_wait(ta, 2));
	cr_assert_eq(gt_call(gt_req(WB_OP_FANS_LIST, WB_F_NAME, "alice", 0, NULL), &r), WB_OK);
	n = 9;
	wb_get_objs(r, WB_F_USERS, &users, &n);
	cr_assert_eq(n, 0);
	wb_msg_free(r);

	/* logout through the gateway is immediate, cache or not */
	cr_assert_eq(gt_call(gt_req(WB_OP_LOGOUT, WB_F_TOKEN, ta, 0, NULL), NULL), WB_OK);
	cr_assert_eq(gt_call(gt_req(WB_OP_WHOAMI, WB_F_TOKEN, ta, 0, NULL), NULL), WB_EAUTH);
	cr_assert_eq(wbt_cluster_stop(&cl, 10000), 0, "daemons exit cleanly");
}

/* gt_code checks one request's error code and that the reply names it. */
static void
gt_code(wb_obj *req, int want, const char *what)
{
	wb_obj     *r = NULL;
	const char *msg = NULL;
	int         rc = gt_call(req, &r);

	cr_assert_eq(rc, want, "%s: got %s, want %s", what, wb_err_name(rc), wb_err_name(want));
	cr_assert_not_null(r, "%s: no reply", what);
	cr_assert_eq(wb_reply_code(r, &msg), want);
	cr_assert(msg != NULL && msg[0] != '\0', "%s: no message", what);
	wb_msg_free(r);
}

/* gt_content sends q (freed) to the content service directly, past the gateway; the reply must be OK. */
static wb_obj *
gt_content(wb_obj *q)
{
	rt_client *c;
	wb_obj    *r = NULL;

	cr_assert_not_null(q);
	cr_assert_eq(rt_client_open(&c, cl.content_url, NULL), WB_OK);
	cr_assert_eq(rt_call(c, q, &r), WB_OK);
	wb_msg_free(q);
	rt_client_close(c);
	return r;
}

/* gt_post_get reads post id's record from the content service directly. */
static wb_obj *
gt_post_get(uint64_t id)
{
	wb_obj *q = wb_request(WB_OP_POST_GET);

	cr_assert_eq(wb_set_u64s(q, WB_F_IDS, &id, 1), WB_OK);
	return gt_content(q);
}

/* gt_start_follower starts five daemons (with extra env; their op counts
 * are the content service's own), with alice and bob logged in (tokens
 * in ta and tb, 128 bytes each) and bob following alice. */
static void
gt_start_follower(const char *const *env, char *ta, char *tb)
{
	gt_start_as(env, WBT_FIVE);
	gt_register("alice");
	gt_register("bob");
	gt_login("alice", ta, 128);
	gt_login("bob", tb, 128);
	cr_assert_eq(
	    gt_call(gt_req(WB_OP_FOLLOW, WB_F_TOKEN, tb, WB_F_NAME, "alice"), NULL), WB_OK);
}

/* A text post published through the gateway is in its post cache as
 * post.get would answer it: the followers' home reads need no post.get.
 * A post with a title is left to post.get. */
Test(gateway, published_text_posts_need_no_post_get, .fini = gt_fini, .timeout = 90)
{
	char          ta[128], tb[128];
	wb_obj       *r, *q, *g;
	const wb_obj *posts, *rec;
	size_t        n;

	gt_start_follower(NULL, ta, tb);
	uint64_t gets = wbt_op_count(cl.content_url, "post.get");
	uint64_t id = gt_publish(ta, "fresh \xe2\x9c\x93");
	r = gt_home_wait(tb, 1);
	cr_assert_eq(wbt_op_count(cl.content_url, "post.get"), gets, "a post.get for a new post");
	wb_get_objs(r, WB_F_POSTS, &posts, &n);
	g = gt_post_get(id);
	cr_assert(wb_get_objs(g, WB_F_POSTS, &rec, &n) && n == 1);
	cr_assert_eq(wb_u64(&posts[0], WB_F_ID, 0), id);
	cr_assert_eq(wb_u64(&posts[0], WB_F_AUTHOR, 0), wb_u64(&rec[0], WB_F_AUTHOR, 1));
	cr_assert_str_eq(wb_str(&posts[0], WB_F_TEXT, ""), wb_str(&rec[0], WB_F_TEXT, "?"));
	cr_assert_eq(wb_u64(&posts[0], WB_F_TIME, 0), wb_u64(&rec[0], WB_F_TIME, 1));
	cr_assert_str_eq(wb_str(&posts[0], WB_F_AUTHOR_NAME, ""), "alice");
	wb_msg_free(g);
	wb_msg_free(r);

	gets = wbt_op_count(cl.content_url, "post.get"); /* gt_post_get's own */
	q = gt_req(WB_OP_PUBLISH, WB_F_TOKEN, ta, WB_F_TEXT, "with a title");
	cr_assert_eq(wb_set_cstr(q, WB_F_TITLE, "A title"), WB_OK);
	cr_assert_eq(gt_call(q, NULL), WB_OK);
	r = gt_home_wait(tb, 2);
	wb_get_objs(r, WB_F_POSTS, &posts, &n);
	cr_assert_str_eq(wb_str(&posts[0], WB_F_TITLE, ""), "A title");
	cr_assert_eq(wbt_op_count(cl.content_url, "post.get"), gets + 1, "a rich post is fetched");
	wb_msg_free(r);
}

/* A cached record past its trust is served without post.get while the
 * inbox that lists it holds every delete; a post deleted behind the
 * gateway's back (straight at the content service) leaves the home
 * timeline once the inbox applies the delete. */
Test(gateway, home_serves_old_records_the_inbox_vouches_for, .fini = gt_fini, .timeout = 90)
{
	const char   *env[] = { "WARBLE_POST_CACHE_MS=300", NULL };
	char          ta[128], tb[128];
	wb_obj       *r, *q;
	const wb_obj *posts;
	size_t        n;

	gt_start_follower(env, ta, tb);
	uint64_t id = gt_publish(ta, "old news");
	r = gt_home_wait(tb, 1);
	cr_assert(wb_get_objs(r, WB_F_POSTS, &posts, &n) && n == 1);
	uint64_t alice = wb_u64(&posts[0], WB_F_AUTHOR, 0);
	wb_msg_free(r);
	wbt_sleep_ms(600); /* the cached record is past its own trust */
	uint64_t gets = wbt_op_count(cl.content_url, "post.get");
	r = gt_home_wait(tb, 1);
	cr_assert_eq(wbt_op_count(cl.content_url, "post.get"), gets, "the inbox vouched for it");
	cr_assert(wb_get_objs(r, WB_F_POSTS, &posts, &n) && n == 1);
	cr_assert_str_eq(wb_str(&posts[0], WB_F_TEXT, ""), "old news");
	wb_msg_free(r);

	q = wb_request(WB_OP_POST_DELETE);
	cr_assert_eq(wb_set_u64(q, WB_F_UID, alice), WB_OK);
	cr_assert_eq(wb_set_u64(q, WB_F_ID, id), WB_OK);
	wb_msg_free(gt_content(q));
	wb_msg_free(gt_home_wait(tb, 0)); /* gone once the inbox applies the delete */
}

Test(gateway, errors, .fini = gt_fini, .timeout = 90)
{
	char tok[128], toolong[400];

	gt_start(NULL);
	gt_register("carol");
	gt_login("carol", tok, sizeof(tok));
	gt_code(gt_req(WB_OP_REGISTER, WB_F_NAME, "carol", WB_F_PASSWORD, "password1"), WB_EEXIST,
	    "duplicate username");
	gt_code(gt_req(WB_OP_REGISTER, WB_F_NAME, "No Way", WB_F_PASSWORD, "password1"),
	    WB_EBADNAME, "bad username");
	gt_code(gt_req(WB_OP_REGISTER, WB_F_NAME, "dave", WB_F_PASSWORD, "short"), WB_EBADPASS,
	    "short password");
	gt_code(gt_req(WB_OP_LOGIN, WB_F_NAME, "carol", WB_F_PASSWORD, "wrongpass"), WB_ELOGIN,
	    "wrong password");
	gt_code(gt_req(WB_OP_LOGIN, WB_F_NAME, "nobody", WB_F_PASSWORD, "password1"), WB_ELOGIN,
	    "unknown user login");
	gt_code(gt_req(WB_OP_WHOAMI, WB_F_TOKEN, "not-a-token", 0, NULL), WB_EAUTH, "bad token");
	gt_code(gt_req(WB_OP_PUBLISH, WB_F_TOKEN, "", WB_F_TEXT, "x"), WB_EAUTH, "empty token");
	memset(toolong, 'a', 281);
	toolong[281] = '\0';
	gt_code(gt_req(WB_OP_PUBLISH, WB_F_TOKEN, tok, WB_F_TEXT, toolong), WB_ETOOLONG,
	    "overlong post");
	gt_code(gt_req(WB_OP_PUBLISH, WB_F_TOKEN, tok, WB_F_TEXT, "bad \xff\xfe utf-8"),
	    WB_EBADTEXT, "invalid UTF-8");
	gt_code(gt_req(WB_OP_FOLLOW, WB_F_TOKEN, tok, WB_F_NAME, "carol"), WB_ESELF, "follow self");
	gt_code(gt_req(WB_OP_FOLLOW, WB_F_TOKEN, tok, WB_F_NAME, "nobody"), WB_ENOUSER,
	    "follow unknown");
	gt_code(
	    gt_req(WB_OP_TIMELINE, WB_F_NAME, "nobody", 0, NULL), WB_ENOUSER, "timeline unknown");
	gt_code(gt_req(WB_OP_PROFILE, WB_F_NAME, "nobody", 0, NULL), WB_ENOUSER, "profile unknown");
	gt_code(gt_req(WB_OP_FANS_LIST, WB_F_NAME, "nobody", 0, NULL), WB_ENOUSER, "fans unknown");
	wb_obj *q = gt_req(WB_OP_DELETE, WB_F_TOKEN, tok, 0, NULL);
	wb_set_u64(q, WB_F_ID, 12345);
	gt_code(q, WB_ENOPOST, "delete unknown post");
	q = gt_req(WB_OP_HOME, WB_F_TOKEN, tok, 0, NULL);
	wb_set_u64(q, WB_F_LIMIT, 0);
	gt_code(q, WB_EINVAL, "limit 0");
	gt_code(gt_req(WB_OP_PUBLISH, WB_F_TEXT, "no token", 0, NULL), WB_EINVAL,
	    "missing required field");
	gt_code(gt_req(WB_OP_USER_GET, 0, NULL, 0, NULL), WB_EINVAL, "internal op, no uids");
	q = gt_req(WB_OP_POST_GET, 0, NULL, 0, NULL);
	uint64_t one = 1;
	wb_set_u64s(q, WB_F_IDS, &one, 1);
	gt_code(q, WB_EBADOP, "internal ops are not public");
	/* A huge limit is capped, not an error. */
	q = gt_req(WB_OP_HOME, WB_F_TOKEN, tok, 0, NULL);
	wb_set_u64(q, WB_F_LIMIT, 1000000);
	cr_assert_eq(gt_call(q, NULL), WB_OK);
}

Test(gateway, session_expiry_and_revocation, .fini = gt_fini, .timeout = 90)
{
	const char *env[] = { "WARBLE_SESSION_TTL=1", NULL };
	char        tok[128];
	long long   t0, deadline;
	rt_client  *uc;
	int         rc;

	gt_start(env);
	gt_register("erin");

	/* A session expires (TTL 1 s) for gateway callers within about 1 s more. */
	gt_login("erin", tok, sizeof(tok));
	t0 = wbt_now_ms();
	cr_assert_eq(gt_call(gt_req(WB_OP_WHOAMI, WB_F_TOKEN, tok, 0, NULL), NULL), WB_OK);
	deadline = t0 + 4000;
	while ((rc = gt_call(gt_req(WB_OP_WHOAMI, WB_F_TOKEN, tok, 0, NULL), NULL)) == WB_OK) {
		cr_assert_lt(wbt_now_ms(), deadline, "expired session still accepted");
		wbt_sleep_ms(50);
	}
	cr_assert_eq(rc, WB_EAUTH);
	cr_assert_gt(wbt_now_ms() - t0, 500, "session ended long before its TTL");

	/* Revoked behind the gateway's back (user.logout directly): refused within 1 s. */
	gt_login("erin", tok, sizeof(tok));
	cr_assert_eq(gt_call(gt_req(WB_OP_WHOAMI, WB_F_TOKEN, tok, 0, NULL), NULL), WB_OK,
	    "token now cached");
	cr_assert_eq(rt_client_open(&uc, cl.user_url, NULL), WB_OK);
	wb_obj *q = gt_req(WB_OP_USER_LOGOUT, WB_F_TOKEN, tok, 0, NULL);
	wb_obj *r = NULL;
	cr_assert_eq(rt_call(uc, q, &r), WB_OK);
	wb_msg_free(q);
	wb_msg_free(r);
	rt_client_close(uc);
	t0 = wbt_now_ms();
	while ((rc = gt_call(gt_req(WB_OP_WHOAMI, WB_F_TOKEN, tok, 0, NULL), NULL)) == WB_OK) {
		cr_assert_lt(wbt_now_ms() - t0, 1300, "revoked token accepted for over 1 s");
		wbt_sleep_ms(20);
	}
	cr_assert_eq(rc, WB_EAUTH);
}

Test(gateway, backend_down, .fini = gt_fini, .timeout = 90)
{
	const char *env[] = { "WARBLE_GATEWAY_TIMEOUT_MS=1500", NULL };
	char        tok[128];
	wb_obj     *r = NULL;
	const char *msg;
	long long   t0;
	int         rc;

	gt_start_as(env, WBT_FIVE); /* content alone goes */
	gt_register("frank");
	gt_login("frank", tok, sizeof(tok));
	cr_assert_eq(wbt_stop(cl.content, SIGKILL, 5000), 128 + SIGKILL);
	t0 = wbt_now_ms();
	rc = gt_call(gt_req(WB_OP_PUBLISH, WB_F_TOKEN, tok, WB_F_TEXT, "anyone?"), &r);
	cr_assert(rc == WB_EUNAVAIL || rc == WB_ETIMEDOUT, "got %s", wb_err_name(rc));
	cr_assert_lt(wbt_now_ms() - t0, 5000, "a dead backend must not hang the gateway");
	cr_assert_not_null(r);
	cr_assert_eq(wb_reply_code(r, &msg), rc);
	cr_assert(strstr(msg, "content") != NULL, "message names the service: %s", msg);
	wb_msg_free(r);
	/* Other operations still work. */
	cr_assert_eq(gt_call(gt_req(WB_OP_WHOAMI, WB_F_TOKEN, tok, 0, NULL), NULL), WB_OK);
	cr_assert(wbt_alive(cl.gateway));
}

/* ---- home reads coalesced into batches to the inbox ---------------------- */

typedef struct gt_reader {
	const char *tok;
	uint64_t    ids[3];   /* the posts every home must hold, newest first */
	bool        kill;     /* the inbox is killed during this run */
	atomic_int  wrong;    /* homes that were not the expected page */
	atomic_int  failed;   /* calls that failed as the killed inbox should make them */
	atomic_int  returned; /* calls that came back, whatever their result */
	atomic_int  finished; /* threads done */
} gt_reader;

static void *
gt_read_thread(void *arg)
{
	gt_reader *rd = arg;

	for (int i = 0; i < 25; i++) {
		wb_obj       *r = NULL;
		const wb_obj *posts;
		const char   *msg = "";
		size_t        n = 0;
		int           rc = gt_call(gt_req(WB_OP_HOME, WB_F_TOKEN, rd->tok, 0, NULL), &r);

		atomic_fetch_add(&rd->returned, 1);
		if (rc == WB_OK && wb_get_objs(r, WB_F_POSTS, &posts, &n) && n == 3 &&
		    wb_u64(&posts[0], WB_F_ID, 0) == rd->ids[0] &&
		    wb_u64(&posts[2], WB_F_ID, 0) == rd->ids[2]) {
			wb_msg_free(r);
			continue;
		}
		if (rd->kill && (rc == WB_EUNAVAIL || rc == WB_ETIMEDOUT) && r != NULL &&
		    wb_reply_code(r, &msg) == rc && strstr(msg, "inbox") != NULL) {
			atomic_fetch_add(&rd->failed, 1);
			wb_msg_free(r);
			break; /* each further read would wait out the deadline too */
		}
		atomic_fetch_add(&rd->wrong, 1);
		wb_msg_free(r);
	}
	atomic_fetch_add(&rd->finished, 1);
	return NULL;
}

/* gt_read_run reads rd's home from 12 threads at once, 25 times each (or until the killed inbox fails one), within a bound. */
static void
gt_read_run(gt_reader *rd, wbt_daemon **kill)
{
	pthread_t th[12];
	long long end;

	atomic_store(&rd->returned, 0);
	atomic_store(&rd->finished, 0);
	for (int i = 0; i < 12; i++) {
		cr_assert_eq(pthread_create(&th[i], NULL, gt_read_thread, rd), 0);
	}
	if (kill != NULL) {
		end = wbt_now_ms() + wbt_ms(10000);
		while (atomic_load(&rd->returned) < 40 && wbt_now_ms() < end) {
			wbt_sleep_ms(1);
		}
		cr_assert_eq(wbt_stop(*kill, SIGKILL, 5000), 128 + SIGKILL);
	}
	end = wbt_now_ms() + wbt_ms(60000); /* bounded: a hung call fails the test */
	while (atomic_load(&rd->finished) < 12 && wbt_now_ms() < end) {
		wbt_sleep_ms(10);
	}
	cr_assert_eq(atomic_load(&rd->finished), 12, "%d of 12 readers hung (%d reads came back)",
	    12 - atomic_load(&rd->finished), atomic_load(&rd->returned));
	for (int i = 0; i < 12; i++) {
		pthread_join(th[i], NULL);
	}
}

/* gt_batches reads how many batches the inbox has served. */
static uint64_t
gt_batches(void)
{
	rt_client    *c;
	wb_obj       *req = wb_request(WB_OP_STATS), *rep = NULL;
	const wb_obj *st;
	size_t        n;
	uint64_t      count = 0;

	cr_assert_eq(rt_client_open(&c, cl.inbox_url, NULL), WB_OK);
	cr_assert_eq(rt_call(c, req, &rep), WB_OK);
	if (wb_get_objs(rep, WB_F_STATS, &st, &n)) {
		for (size_t i = 0; i < n; i++) {
			if (strcmp(wb_str(&st[i], WB_F_NAME, ""), "batch") == 0) {
				count = wb_u64(&st[i], WB_F_COUNT, 0);
			}
		}
	}
	wb_msg_free(rep);
	wb_msg_free(req);
	rt_client_close(c);
	return count;
}

Test(gateway, home_reads_batched_then_inbox_killed, .fini = gt_fini, .timeout = 180)
{
	const char *env[] = { "WARBLE_GATEWAY_COALESCE=1", "WARBLE_GATEWAY_TIMEOUT_MS=1500", NULL };
	char        ta[128], tb[128];
	gt_reader   rd = { .tok = tb };
	wb_obj     *r;

	gt_start_as(env, WBT_FIVE); /* the inbox alone is killed */
	gt_register("gina");
	gt_register("hank");
	gt_login("gina", ta, sizeof(ta));
	gt_login("hank", tb, sizeof(tb));
	cr_assert_eq(gt_call(gt_req(WB_OP_FOLLOW, WB_F_TOKEN, tb, WB_F_NAME, "gina"), NULL), WB_OK);
	for (int i = 2; i >= 0; i--) {
		rd.ids[i] = gt_publish(ta, "batched");
	}
	wb_msg_free(r = gt_home_wait(tb, 3));

	/* many readers at once: their inbox calls go in batches, each reply its caller's */
	for (int round = 0; round < 5 && gt_batches() == 0; round++) {
		gt_read_run(&rd, NULL);
		cr_assert_eq(
		    atomic_load(&rd.wrong), 0, "%d homes were wrong", atomic_load(&rd.wrong));
	}
	cr_assert_gt(gt_batches(), 0, "no batch reached the inbox");

	/* the inbox killed mid-run: each read fails once, naming the inbox, none hangs */
	rd.kill = true;
	gt_read_run(&rd, &cl.inbox);
	cr_assert_eq(atomic_load(&rd.failed), 12, "each reader sees the inbox go");
	cr_assert_eq(atomic_load(&rd.wrong), 0, "%d homes neither right nor a clear failure",
	    atomic_load(&rd.wrong));
	cr_assert_gt(atomic_load(&rd.failed), 0, "no read saw the inbox go");
	cr_assert(wbt_alive(cl.gateway));
	cr_assert_eq(gt_call(gt_req(WB_OP_WHOAMI, WB_F_TOKEN, tb, 0, NULL), NULL), WB_OK);
}
