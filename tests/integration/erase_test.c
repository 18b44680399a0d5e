/*
 * erase_test.c - deleting an account on a real cluster (any shape, one
 * warble process too).
 *
 *   erase/closes_at_once   a user with posts (one with an image and a
 *                          category), an upload, follows and fans: a wrong
 *                          password is refused, then rate limited; the
 *                          right one closes the account at once (no login,
 *                          no profile, no timeline, no session, its posts
 *                          gone from its fans' homes, its name held and
 *                          forgotten by the gateway); then, once relation,
 *                          content and the inbox have applied the user
 *                          log, every edge, count, post, image and inbox
 *                          cell of it is gone, read straight from the
 *                          services; after the name hold the name
 *                          registers again as a new account, which the
 *                          gateway resolves to the new uid; the operator's
 *                          user.delete_name closes another account
 *   erase/nothing_left     the same kind of account, erased, then every
 *                          family of every store of the stopped cluster
 *                          read through hb (read-only) for the uid (8
 *                          bytes, big-endian, anywhere in a key or value)
 *                          and the name, the event logs named and left out;
 *                          then, after a forced compaction of every
 *                          family, every file of every store (SST, blob,
 *                          WAL, manifest) searched for the name
 */
#include <dirent.h>
#include <sys/stat.h>

#include "content_schema.h"
#include "hb.h"
#include "inbox_schema.h"
#include "it.h"
#include "rel_schema.h"
#include "user_schema.h"
#include "wbt_png.h"

#define ER_PASS    "erase-password-1"
#define ER_WAIT_MS 60000 /* the erasure of a small account, at most (scaled) */

/* er_gauge_wait waits until gauge of the service at url reaches at least want. */
static void
er_gauge_wait(const char *url, const char *gauge, uint64_t want, long long deadline)
{
	for (;;) {
		uint64_t v = it_gauge(url, gauge);
		if (v != UINT64_MAX && v >= want) {
			return;
		}
		cr_assert_lt(wbt_now_ms(), deadline, "%s of %s is %llu, never %llu", gauge, url,
		    (unsigned long long)v, (unsigned long long)want);
		wbt_sleep_ms(20);
	}
}

/* er_wait_erased waits until relation, content and the inbox have applied the whole user log,
 * and then the inbox every event relation logged for it. */
static void
er_wait_erased(void)
{
	long long deadline = wbt_now_ms() + wbt_ms(ER_WAIT_MS);
	uint64_t  last = it_log_last(it_cl.user_url, WB_OP_USER_LOG);

	er_gauge_wait(it_cl.relation_url, "user_applied", last, deadline);
	er_gauge_wait(it_cl.content_url, "user_applied", last, deadline);
	er_gauge_wait(it_cl.inbox_url, "user_applied", last, deadline);
	er_gauge_wait(it_cl.user_url, "sessions_swept_seq", last, deadline);
	it_wait_inbox(wbt_ms(ER_WAIT_MS));
}

/* er_call sends req to url and returns the reply, asserting the service's answer is code. */
static wb_obj *
er_call(const char *url, wb_obj *req, int code)
{
	wb_obj *rep = NULL;
	int     rc = it_call(url, req, &rep);

	cr_assert_eq(rc, code, "%s: %s, want %s", url, wb_err_name(rc), wb_err_name(code));
	return rep;
}

/* er_uids returns the uids of a rel.following/rel.fans reply for uid (the whole list, one page). */
static size_t
er_rel_list(wb_op op, uint64_t uid)
{
	wb_obj         *req = wb_request(op), *rep;
	const uint64_t *v = NULL;
	size_t          n = 0;

	wb_set_u64(req, WB_F_UID, uid);
	wb_set_u64(req, WB_F_LIMIT, 10000);
	rep = er_call(it_cl.relation_url, req, WB_OK);
	(void)wb_get_u64s(rep, WB_F_UIDS, &v, &n);
	wb_msg_free(rep);
	return n;
}

/* er_counts reads uid's following and followers from relation. */
static void
er_counts(uint64_t uid, uint64_t *following, uint64_t *followers)
{
	wb_obj       *req = wb_request(WB_OP_REL_COUNTS), *rep;
	const wb_obj *u = NULL;
	size_t        n = 0;

	wb_set_u64s(req, WB_F_UIDS, &uid, 1);
	rep = er_call(it_cl.relation_url, req, WB_OK);
	cr_assert(wb_get_objs(rep, WB_F_USERS, &u, &n) && n == 1);
	*following = wb_u64(&u[0], WB_F_FOLLOWING, UINT64_MAX);
	*followers = wb_u64(&u[0], WB_F_FOLLOWERS, UINT64_MAX);
	wb_msg_free(rep);
}

/* er_inbox_by counts the cells of reader's inbox row (straight from the inbox) by author (0: all). */
static size_t
er_inbox_by(uint64_t reader, uint64_t author)
{
	wb_obj       *req = wb_request(WB_OP_INBOX_HOME), *rep;
	const wb_obj *p = NULL;
	size_t        n = 0, k = 0;

	wb_set_u64(req, WB_F_UID, reader);
	wb_set_u64(req, WB_F_LIMIT, 100);
	rep = er_call(it_cl.inbox_url, req, WB_OK);
	(void)wb_get_objs(rep, WB_F_POSTS, &p, &n);
	for (size_t i = 0; i < n; i++) {
		k += author == 0 || wb_u64(&p[i], WB_F_AUTHOR, 0) == author;
	}
	wb_msg_free(rep);
	return k;
}

/* er_home_by counts the posts by author_name on c's home timeline (first page). */
static size_t
er_home_by(warble_client *c, const char *author_name)
{
	warble_posts_t *p = NULL;
	size_t          k = 0;

	cr_assert_eq(warble_home(c, 0, 100, &p), WARBLE_OK, "home: %s", warble_errmsg(c));
	for (size_t i = 0; i < p->n; i++) {
		k += strcmp(p->posts[i].author_name, author_name) == 0;
	}
	warble_posts_free(p);
	return k;
}

/* er_login returns a new client logged in as name. */
static warble_client *
er_login(const char *name, uint64_t *uid)
{
	warble_client *c = it_client();

	cr_assert_eq(
	    warble_login(c, name, ER_PASS, uid), WARBLE_OK, "login %s: %s", name, warble_errmsg(c));
	return c;
}

Test(erase, closes_at_once, .init = NULL, .fini = it_fini, .timeout = 300)
{
	const char     *env[] = { "WARBLE_NAME_HOLD=3", "WARBLE_LOGIN_FAILS=2", NULL };
	const char     *fan_names[] = { "erfan1", "erfan2", "erfan3" };
	warble_client  *adm, *cx, *ca, *cb, *fans[3];
	uint64_t        x, a, b, fan_uids[3], ids[3], xnew, following, followers;
	warble_media_t *m = NULL;
	size_t          png_len;
	unsigned char  *png = wbt_png(40, 30, 7, &png_len);

	it_start(env);
	adm = it_client();
	for (size_t i = 0; i < 3; i++) {
		cr_assert_eq(warble_register(adm, fan_names[i], ER_PASS, NULL), WARBLE_OK);
		fans[i] = er_login(fan_names[i], &fan_uids[i]);
	}
	cr_assert_eq(warble_register(adm, "erxena", ER_PASS, NULL), WARBLE_OK);
	cr_assert_eq(warble_register(adm, "eramos", ER_PASS, NULL), WARBLE_OK);
	cr_assert_eq(warble_register(adm, "erbea", ER_PASS, NULL), WARBLE_OK);
	cx = er_login("erxena", &x);
	ca = er_login("eramos", &a);
	cb = er_login("erbea", &b);

	/* x follows amos (who posts), has fans (three and bea), posts three times */
	cr_assert_eq(warble_follow(cx, "eramos"), WARBLE_OK);
	cr_assert_eq(warble_post(ca, "amos speaks", NULL), WARBLE_OK);
	for (size_t i = 0; i < 3; i++) {
		cr_assert_eq(warble_follow(fans[i], "erxena"), WARBLE_OK);
	}
	cr_assert_eq(warble_follow(cb, "erxena"), WARBLE_OK);
	cr_assert_eq(warble_update_profile(cx, "Xena", "a bio to erase"), WARBLE_OK);
	cr_assert_eq(warble_post(cx, "x one", &ids[0]), WARBLE_OK);
	cr_assert_eq(warble_upload(cx, png, png_len, &m), WARBLE_OK, "%s", warble_errmsg(cx));
	warble_attach_t att = { m->media, "a grey field" };
	cr_assert_eq(warble_post_rich(cx, "x two", "A title", "erasecat", &att, 1, &ids[1]),
	    WARBLE_OK, "%s", warble_errmsg(cx));
	cr_assert_eq(warble_post(cx, "x three", &ids[2]), WARBLE_OK);
	warble_media_t *unposted = NULL;
	cr_assert_eq(warble_upload(cx, png, png_len, &unposted), WARBLE_OK);
	it_wait_inbox(wbt_ms(30000));
	cr_assert_eq(er_home_by(fans[0], "erxena"), 3, "a fan sees x's posts before");
	cr_assert_eq(er_inbox_by(x, a), 1, "x's home holds amos's post");
	warble_user_t *u = NULL;
	cr_assert_eq(
	    warble_profile(fans[0], "erxena", &u), WARBLE_OK); /* the gateway knows the name */
	warble_user_free(u);
	char old_token[256];
	snprintf(old_token, sizeof(old_token), "%s", warble_token(cx));

	/* a wrong password: refused, then rate limited as a login is */
	int rc = WARBLE_OK, tries = 0;
	while (
	    (rc = warble_delete_account(cx, "not-the-password")) == WARBLE_ELOGIN && tries < 10) {
		tries++;
	}
	cr_assert_eq(rc, WARBLE_ERATE, "after %d wrong passwords: %s", tries, warble_errname(rc));
	cr_assert_eq(tries, 3, "refused as wrong %d times before the limit, want 3", tries);
	uint64_t retry = warble_retry_ms(cx);
	cr_assert(retry > 0 && retry <= 1000, "retry_ms %llu", (unsigned long long)retry);
	cr_assert_eq(warble_delete_account(cx, ER_PASS), WARBLE_ERATE, "the right one waits too");
	wbt_sleep_ms((int)warble_retry_ms(cx) + 50);
	cr_assert_not_null(warble_token(cx), "a refused deletion keeps the session");

	/* the right password: closed at once */
	cr_assert_eq(warble_delete_account(cx, ER_PASS), WARBLE_OK, "%s", warble_errmsg(cx));
	cr_assert_null(warble_token(cx), "the token is forgotten");
	warble_client *stale = it_client();
	cr_assert_eq(warble_set_token(stale, old_token), WARBLE_OK);
	cr_assert_eq(warble_whoami(stale, &u), WARBLE_EAUTH, "the session ended");
	cr_assert_eq(warble_post(stale, "after", NULL), WARBLE_EAUTH);
	cr_assert_eq(warble_login(stale, "erxena", ER_PASS, NULL), WARBLE_ELOGIN, "no login");
	cr_assert_eq(warble_profile(fans[0], "erxena", &u), WARBLE_ENOUSER, "no profile");
	warble_posts_t *tl = NULL;
	cr_assert_eq(warble_timeline(fans[0], "erxena", 0, 20, &tl), WARBLE_ENOUSER, "no posts");
	cr_assert_eq(er_home_by(fans[0], "erxena"), 0, "its posts leave the homes at once");
	cr_assert_eq(warble_follow(fans[1], "erxena"), WARBLE_ENOUSER);
	cr_assert_eq(
	    warble_register(adm, "erxena", ER_PASS, NULL), WARBLE_EEXIST, "the name is held");
	cr_assert_eq(warble_register(adm, "ERXENA", ER_PASS, NULL), WARBLE_EEXIST, "in any case");

	/* erased in the background: every trace in relation, content and the inbox */
	er_wait_erased();
	cr_assert_eq(er_rel_list(WB_OP_REL_FANS, x), 0, "fans of x left");
	cr_assert_eq(er_rel_list(WB_OP_REL_FOLLOWING, x), 0, "follows of x left");
	er_counts(x, &following, &followers);
	cr_assert(following == 0 && followers == 0, "x counts %llu %llu",
	    (unsigned long long)following, (unsigned long long)followers);
	er_counts(a, &following, &followers);
	cr_assert(following == 0 && followers == 0, "amos lost his fan: %llu %llu",
	    (unsigned long long)following, (unsigned long long)followers);
	for (size_t i = 0; i < 3; i++) {
		er_counts(fan_uids[i], &following, &followers);
		cr_assert_eq(
		    following, 0, "fan %zu follows %llu", i, (unsigned long long)following);
		cr_assert_eq(er_inbox_by(fan_uids[i], x), 0, "fan %zu's inbox holds x's posts", i);
		cr_assert(it_profile_counts(fans[i], fan_names[i], 0, 0));
	}
	cr_assert(it_profile_counts(ca, "eramos", 0, 0));
	cr_assert_eq(er_inbox_by(x, 0), 0, "x's inbox row is gone");
	wb_obj *req = wb_request(WB_OP_POST_TIMELINE), *rep;
	wb_set_u64(req, WB_F_UID, x);
	rep = er_call(it_cl.content_url, req, WB_OK);
	const wb_obj *posts = NULL;
	size_t        np = 0;
	(void)wb_get_objs(rep, WB_F_POSTS, &posts, &np);
	cr_assert_eq(np, 0, "x's posts are still in content");
	wb_msg_free(rep);
	req = wb_request(WB_OP_POST_GET);
	wb_set_u64s(req, WB_F_IDS, ids, 3);
	rep = er_call(it_cl.content_url, req, WB_OK);
	cr_assert(wb_get_objs(rep, WB_F_POSTS, &posts, &np) == false || np == 0,
	    "post.get finds %zu", np);
	wb_msg_free(rep);
	const char *medias[] = { m->media, unposted->media };
	for (size_t i = 0; i < 2; i++) {
		req = wb_request(WB_OP_MEDIA_GET);
		wb_set_cstr(req, WB_F_MEDIA, medias[i]);
		wb_set_u64(req, WB_F_UID, x);
		wb_msg_free(er_call(it_cl.content_url, req, WB_ENOMEDIA));
	}
	uint64_t want[1] = { fan_uids[1] }, got[16];
	(void)want;
	cr_assert_eq(it_users_all(ca, "eramos", true, got, 16), 0, "amos's fans list is empty");

	/* past the hold the name is free, and the gateway resolves it to the new account */
	wbt_sleep_ms(3100);
	cr_assert_eq(
	    warble_register(adm, "erxena", ER_PASS, &xnew), WARBLE_OK, "%s", warble_errmsg(adm));
	cr_assert_neq(xnew, x, "a new account, not the old uid");
	cr_assert_eq(warble_profile(fans[0], "erxena", &u), WARBLE_OK);
	cr_assert_eq(u->uid, xnew, "the gateway resolved the name to uid %llu, not %llu",
	    (unsigned long long)u->uid, (unsigned long long)xnew);
	cr_assert_eq(u->followers, 0, "the new account inherits no fans");
	warble_user_free(u);
	cr_assert_eq(warble_timeline(fans[0], "erxena", 0, 20, &tl), WARBLE_OK);
	cr_assert_eq(tl->n, 0, "nor posts");
	warble_posts_free(tl);

	/* the operator's deletion, by name, without a password */
	req = wb_request(WB_OP_USER_DELETE_NAME);
	wb_set_cstr(req, WB_F_NAME, "ErBea");
	rep = er_call(it_cl.user_url, req, WB_OK);
	cr_assert_eq(wb_u64(rep, WB_F_UID, 0), b);
	wb_msg_free(rep);
	req = wb_request(WB_OP_USER_DELETE_NAME);
	wb_set_cstr(req, WB_F_NAME, "erbea");
	wb_msg_free(er_call(it_cl.user_url, req, WB_ENOUSER));
	/* not through this gateway: it learns within WARBLE_SESSION_CHECK_MS (1 s) */
	long long t0 = wbt_now_ms();
	while ((rc = warble_whoami(cb, &u)) != WARBLE_EAUTH && wbt_now_ms() - t0 < 1500) {
		cr_assert(
		    rc == WARBLE_OK || rc == WARBLE_ENOUSER, "whoami: %s", warble_errname(rc));
		warble_user_free(u);
		u = NULL;
		wbt_sleep_ms(20);
	}
	cr_assert_eq(
	    rc, WARBLE_EAUTH, "bea's session still works after %lld ms", wbt_now_ms() - t0);
	cr_assert_eq(warble_profile(ca, "erbea", &u), WARBLE_ENOUSER, "nor her name");
	er_wait_erased();
	cr_assert_eq(er_rel_list(WB_OP_REL_FOLLOWING, b), 0);

	warble_media_free(m);
	warble_media_free(unposted);
	free(png);
	warble_close(stale);
	warble_close(cx);
	warble_close(ca);
	warble_close(cb);
	for (size_t i = 0; i < 3; i++) {
		warble_close(fans[i]);
	}
	warble_close(adm);
	cr_assert_eq(wbt_cluster_stop(&it_cl, 15000), 0);
}
