/*
 * erase_test.c - deleting an account on a real cluster (any shape, one
 * warble process too).
 *
 *   erase/closes_at_once   a user with posts (one with an image and a
 *                          category), an upload, follows and fans: a wrong
 *                          password is refused, then rate limited; the
 *                          right one closes the account at once (no login,
 *                          no profile, no timeline, no session, its posts
 *                          gone from its fans' homes and their own pages,
 *                          its name held and forgotten by the gateway);
 *                          then, once relation, content and the inbox have
 *                          applied the user log, every edge, count, post,
 *                          image and inbox cell of it is gone (a post made
 *                          just before the deletion too, whose event races
 *                          it), read straight from the services, and
 *                          content's log ends with one "erased" event
 *                          (no delete event); after the name hold the name
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

/* er_suggested tells whether c's suggestions of whom to follow name name. */
static bool
er_suggested(warble_client *c, const char *name)
{
	warble_users_t *us = NULL;
	bool            found = false;

	cr_assert_eq(warble_suggestions(c, 0, &us), WARBLE_OK, "%s", warble_errmsg(c));
	for (size_t i = 0; i < us->n; i++) {
		found = found || strcmp(us->users[i].name, name) == 0;
	}
	warble_users_free(us);
	return found;
}

Test(erase, closes_at_once, .init = NULL, .fini = it_fini, .timeout = 300)
{
	const char     *env[] = { "WARBLE_NAME_HOLD=3", "WARBLE_LOGIN_FAILS=2", NULL };
	const char     *fan_names[] = { "erfan1", "erfan2", "erfan3" };
	warble_client  *adm, *cx, *ca, *cb, *fans[3];
	uint64_t        x, a, b, fan_uids[3], ids[4], xnew, following, followers;
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
	warble_post_t *one = NULL;
	cr_assert_eq(warble_post_get(fans[0], ids[1], &one), WARBLE_OK, "the post's own page");
	warble_post_free(one);
	warble_user_t *u = NULL;
	cr_assert_eq(
	    warble_profile(fans[0], "erxena", &u), WARBLE_OK); /* the gateway knows the name */
	warble_user_free(u);
	cr_assert(er_suggested(ca, "erxena"), "the most followed is suggested to amos");
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

	/* a last post right before the right password, so its event races the deletion's
	 * (its cells, x's own among them, may come after the inbox dropped x's row) */
	cr_assert_eq(warble_post(cx, "x four, late", &ids[3]), WARBLE_OK, "%s", warble_errmsg(cx));

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
	cr_assert_eq(warble_post_get(fans[0], ids[1], &one), WARBLE_ENOPOST, "its post's page");
	cr_assert_eq(warble_post_get(fans[0], ids[3], &one), WARBLE_ENOPOST, "the late one's");
	cr_assert_eq(warble_follow(fans[1], "erxena"), WARBLE_ENOUSER);
	cr_assert(!er_suggested(ca, "erxena"), "a closed account is never suggested");
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
	wb_set_u64s(req, WB_F_IDS, ids, 4);
	rep = er_call(it_cl.content_url, req, WB_OK);
	cr_assert(wb_get_objs(rep, WB_F_POSTS, &posts, &np) == false || np == 0,
	    "post.get finds %zu", np);
	wb_msg_free(rep);
	/* content's log ends with one "erased" {x}, after every post of x (no delete each) */
	req = wb_request(WB_OP_POST_LOG);
	wb_set_u64(req, WB_F_FROM, 1);
	rep = er_call(it_cl.content_url, req, WB_OK);
	const wb_obj *evs = NULL;
	size_t        nev = 0;
	cr_assert(wb_get_objs(rep, WB_F_EVENTS, &evs, &nev) && nev > 0);
	cr_assert_str_eq(wb_str(&evs[nev - 1], WB_F_TYPE, ""), "erased");
	cr_assert_eq(wb_u64(&evs[nev - 1], WB_F_UID, 0), x);
	for (size_t i = 0; i < nev; i++) {
		cr_assert_str_neq(
		    wb_str(&evs[i], WB_F_TYPE, ""), "delete", "a delete event of x's");
	}
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

/* ---- nothing left ---------------------------------------------------- */

#define NL_NAME     "zq_erasable_7" /* the deleted account: no other data holds it */
#define NL_BULK     10000           /* accounts a user.register_many */
#define NL_BEFORE   3               /* bulks before it: its uid above every seq */
#define NL_FANS     300             /* its fans */
#define NL_LOG_SKIP "log"           /* the event logs: they keep events until trimmed */
#define NL_TTL_S    4               /* sessions (and so revocation records) last this */
#define NL_FAMS_MAX 16

/* One store of the cluster: its folder and families, as its service opens it. */
typedef struct nl_store {
	const char    *name;
	hb_family_opts fams[NL_FAMS_MAX];
	size_t         nfams;
} nl_store;

/* nl_stores fills the four stores' families from the services' own schemas (the daemons'
 * settings: TTLs as the test's cluster runs them). */
static void
nl_stores(nl_store *s)
{
	s[0] = (nl_store) { .name = "user", .nfams = USER_FAM_COUNT };
	user_schema(s[0].fams, NL_TTL_S * 1000, 2000);
	s[1] = (nl_store) { .name = "relation", .nfams = REL_FAM_NFAMS };
	rel_schema(s[1].fams);
	s[2] = (nl_store) { .name = "content", .nfams = CONTENT_FAM_COUNT };
	content_schema_families(s[2].fams);
	s[3] = (nl_store) { .name = "inbox", .nfams = INBOX_FAM_COUNT };
	inbox_schema_families(s[3].fams, 800, 30 * 86400 * UINT64_C(1000));
}

/* nl_has tells whether p[0..n) holds needle[0..len). */
static bool
nl_has(const void *p, size_t n, const void *needle, size_t len)
{
	return n >= len && memmem(p, n, needle, len) != NULL;
}

/* What a scan of the stores found. */
typedef struct nl_found {
	uint64_t cells;   /* cells read */
	uint64_t uid;     /* cells holding the deleted uid */
	uint64_t name;    /* ... its name */
	uint64_t control; /* ... the control uid (an account still there) */
	uint64_t in_logs; /* events of the skipped logs about the deleted uid */
	char     first[256];
} nl_found;

/* nl_scan reads every cell of every family of every store (read-only, every version) for x's
 * uid (8 bytes, big-endian) and name, and for the control uid. */
static void
nl_scan(const char *data, uint64_t x, uint64_t control, nl_found *f)
{
	nl_store s[4];
	uint8_t  xb[8], cb[8];

	nl_stores(s);
	hb_u64_be(xb, x);
	hb_u64_be(cb, control);
	memset(f, 0, sizeof(*f));
	for (int k = 0; k < 4; k++) {
		char          path[512];
		hb_table     *t = NULL;
		hb_table_opts o = { .read_only = true };

		snprintf(path, sizeof(path), "%s/%s", data, s[k].name);
		cr_assert_eq(hb_open(&t, path, s[k].fams, s[k].nfams, &o), WB_OK, "open %s: %s",
		    path, hb_last_error());
		for (size_t fam = 0; fam < s[k].nfams; fam++) {
			bool         log = strcmp(s[k].fams[fam].name, NL_LOG_SKIP) == 0;
			hb_scan_opts so = { .all_versions = true };
			hb_scan     *sc = NULL;
			hb_cell      c;
			int          rc;

			cr_assert_eq(hb_scan_open(&sc, t, (int)fam, &so), WB_OK);
			while ((rc = hb_scan_next(sc, &c)) == WB_OK) {
				bool uid = nl_has(c.row, c.row_len, xb, 8) ||
				           nl_has(c.qual, c.qual_len, xb, 8) ||
				           nl_has(c.value, c.value_len, xb, 8);
				bool name = nl_has(c.row, c.row_len, NL_NAME, strlen(NL_NAME)) ||
				            nl_has(c.qual, c.qual_len, NL_NAME, strlen(NL_NAME)) ||
				            nl_has(c.value, c.value_len, NL_NAME, strlen(NL_NAME));
				f->cells++;
				if (log) {
					/* the logs keep the account's events (msgpack) until trimmed */
					wb_obj *ev = NULL;
					char    err[64];
					if (wb_decode(&ev, c.value, c.value_len, &wb_limits_default,
					        err, sizeof(err)) == WB_OK) {
						f->in_logs += wb_u64(ev, WB_F_UID, 0) == x ||
						              wb_u64(ev, WB_F_TARGET, 0) == x;
						wb_msg_free(ev);
					}
					cr_assert_not(name, "%s/%s holds the name", s[k].name,
					    s[k].fams[fam].name);
					continue;
				}
				f->control += nl_has(c.row, c.row_len, cb, 8) ||
				              nl_has(c.qual, c.qual_len, cb, 8) ||
				              nl_has(c.value, c.value_len, cb, 8);
				if ((uid || name) && f->uid + f->name == 0) {
					snprintf(f->first, sizeof(f->first),
					    "%s/%s: row of %zu bytes, qualifier %zu, version %llu, "
					    "value %zu "
					    "(%s)",
					    s[k].name, s[k].fams[fam].name, c.row_len, c.qual_len,
					    (unsigned long long)c.version, c.value_len,
					    uid ? "the uid" : "the name");
				}
				f->uid += uid;
				f->name += name;
			}
			cr_assert_eq(rc, WB_EEND, "%s/%s: %s", s[k].name, s[k].fams[fam].name,
			    wb_err_name(rc));
			hb_scan_close(sc);
		}
		hb_close(t);
	}
}

/* nl_compact runs a forced full compaction of every family of every store, then opens it once
 * more, as a daemon's restart does. */
static void
nl_compact(const char *data)
{
	nl_store s[4];

	nl_stores(s);
	for (int k = 0; k < 4; k++) {
		char      path[512];
		hb_table *t = NULL;

		snprintf(path, sizeof(path), "%s/%s", data, s[k].name);
		cr_assert_eq(hb_open(&t, path, s[k].fams, s[k].nfams, NULL), WB_OK, "open %s: %s",
		    path, hb_last_error());
		for (size_t fam = 0; fam < s[k].nfams; fam++) {
			cr_assert_eq(hb_compact(t, (int)fam), WB_OK, "compact %s/%s", s[k].name,
			    s[k].fams[fam].name);
		}
		hb_close(t);
		/* RocksDB's MANIFEST keeps the first and last keys of the files the
		 * compaction replaced until the store is opened again, which writes a
		 * new one (docs/operations.md, "Deleting accounts") */
		cr_assert_eq(hb_open(&t, path, s[k].fams, s[k].nfams, NULL), WB_OK);
		hb_close(t);
	}
}

/* nl_grep counts the files under dir (recursively) that hold needle; *files counts those read. */
static size_t
nl_grep(const char *dir, const char *needle, size_t *files, char *first, size_t first_len)
{
	DIR           *d = opendir(dir);
	struct dirent *e;
	size_t         hits = 0;

	cr_assert_not_null(d, "cannot read %s", dir);
	while ((e = readdir(d)) != NULL) {
		char        path[1024];
		struct stat sb;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &sb) != 0) {
			continue;
		}
		if (S_ISDIR(sb.st_mode)) {
			hits += nl_grep(path, needle, files, first, first_len);
			continue;
		}
		if (!S_ISREG(sb.st_mode)) {
			continue;
		}
		FILE *fp = fopen(path, "rb");
		char *buf = sb.st_size > 0 ? malloc((size_t)sb.st_size) : NULL;
		if (fp != NULL && buf != NULL &&
		    fread(buf, 1, (size_t)sb.st_size, fp) == (size_t)sb.st_size &&
		    nl_has(buf, (size_t)sb.st_size, needle, strlen(needle))) {
			if (hits == 0 && first[0] == '\0') {
				snprintf(first, first_len, "%s", path);
			}
			hits++;
		}
		*files += fp != NULL;
		free(buf);
		if (fp != NULL) {
			fclose(fp);
		}
	}
	closedir(d);
	return hits;
}

/* nl_bulk registers NL_BULK accounts <prefix><from..> through the user service; the first uid. */
static uint64_t
nl_bulk(const char *prefix, uint64_t from, uint64_t n, uint64_t *uids)
{
	wb_obj         *req = wb_request(WB_OP_USER_REGISTER_MANY), *rep;
	const uint64_t *v = NULL;
	size_t          nv = 0;

	wb_set_cstr(req, WB_F_NAME, prefix);
	wb_set_u64(req, WB_F_FROM, from);
	wb_set_u64(req, WB_F_LIMIT, n);
	wb_set_cstr(req, WB_F_PASSWORD, ER_PASS);
	rep = er_call(it_cl.user_url, req, WB_OK);
	cr_assert(wb_get_u64s(rep, WB_F_UIDS, &v, &nv) && nv == n);
	if (uids != NULL) {
		memcpy(uids, v, n * sizeof(*uids));
	}
	uint64_t first = v[0];
	wb_msg_free(rep);
	return first;
}

/* nl_publish publishes a post by uid straight to content (images: a media id or NULL); its id. */
static uint64_t
nl_publish(uint64_t uid, const char *text, const char *media, const char *category)
{
	wb_obj  *req = wb_request(WB_OP_POST_PUBLISH), *rep;
	uint64_t id;

	wb_set_u64(req, WB_F_UID, uid);
	wb_set_cstr(req, WB_F_TEXT, text);
	if (media != NULL) {
		wb_obj *im = wb_add_objs(req, WB_F_IMAGES, 1);
		wb_set_cstr(&im[0], WB_F_MEDIA, media);
		wb_set_cstr(&im[0], WB_F_ALT, "alt text of " NL_NAME);
		wb_set_cstr(req, WB_F_TITLE, "a title");
	}
	if (category != NULL) {
		wb_set_cstr(req, WB_F_CATEGORY, category);
	}
	rep = er_call(it_cl.content_url, req, WB_OK);
	id = wb_u64(rep, WB_F_ID, 0);
	wb_msg_free(rep);
	return id;
}

/* nl_upload stores an image of uid straight in content; its media id into media. */
static void
nl_upload(uint64_t uid, char *media, size_t n)
{
	size_t         len;
	unsigned char *png = wbt_png(32, 24, (uint32_t)uid, &len);
	wb_obj        *req = wb_request(WB_OP_MEDIA_PUT), *rep;

	wb_set_u64(req, WB_F_UID, uid);
	wb_set_bin(req, WB_F_DATA, png, len);
	rep = er_call(it_cl.content_url, req, WB_OK);
	snprintf(media, n, "%s", wb_str(rep, WB_F_MEDIA, ""));
	wb_msg_free(rep);
	free(png);
}

Test(erase, nothing_left, .fini = it_fini, .timeout = 600)
{
	char        ttl[64];
	const char *env[] = { ttl, "WARBLE_NAME_HOLD=2", NULL };
	uint64_t    fans[NL_FANS], x, control, uid;
	char        media[2][64], first[1100] = "";
	nl_found    f;
	wb_obj     *req;

	snprintf(ttl, sizeof(ttl), "WARBLE_SESSION_TTL=%d", NL_TTL_S);
	it_start(env);
	/* its uid larger than every seq, count and position the stores hold, so its
	 * 8 bytes cannot turn up by chance */
	control = nl_bulk("nlbulk", 0, NL_BULK, NULL);
	for (uint64_t b = 1; b < NL_BEFORE; b++) {
		(void)nl_bulk("nlbulk", b * NL_BULK, NL_BULK, NULL);
	}
	warble_client *c = it_client();
	cr_assert_eq(warble_register(c, NL_NAME, ER_PASS, &x), WARBLE_OK);
	(void)nl_bulk("nlfan", 0, NL_FANS, fans);
	cr_assert(fans[0] > x, "an account registered after it: the uid counter is not its uid");

	/* everything an account leaves: posts (text, rich, in a category), an image on a post and
	 * one not yet on any, follows and blocks both ways, a display name and a bio, an inbox
	 * row */
	nl_upload(x, media[0], sizeof(media[0]));
	nl_upload(x, media[1], sizeof(media[1]));
	(void)nl_publish(control, "the control's post", NULL, NULL);
	req = wb_request(WB_OP_REL_FOLLOW);
	wb_set_u64(req, WB_F_UID, x);
	wb_set_u64(req, WB_F_TARGET, control);
	wb_msg_free(er_call(it_cl.relation_url, req, WB_OK));
	req = wb_request(WB_OP_REL_FOLLOW_MANY);
	wb_set_u64(req, WB_F_TARGET, x);
	wb_set_u64s(req, WB_F_UIDS, fans, NL_FANS);
	wb_msg_free(er_call(it_cl.relation_url, req, WB_OK));
	/* blocks both ways: x blocks a fan, another fan blocks x */
	req = wb_request(WB_OP_REL_BLOCK);
	wb_set_u64(req, WB_F_UID, x);
	wb_set_u64(req, WB_F_TARGET, fans[1]);
	wb_msg_free(er_call(it_cl.relation_url, req, WB_OK));
	req = wb_request(WB_OP_REL_BLOCK);
	wb_set_u64(req, WB_F_UID, fans[2]);
	wb_set_u64(req, WB_F_TARGET, x);
	wb_msg_free(er_call(it_cl.relation_url, req, WB_OK));
	(void)nl_publish(x, "a post of " NL_NAME, NULL, NULL);
	(void)nl_publish(x, "with an image", media[0], "nlcat");
	(void)nl_publish(x, "in a category", NULL, "nlcat");
	req = wb_request(WB_OP_USER_UPDATE);
	wb_set_u64(req, WB_F_UID, x);
	wb_set_cstr(req, WB_F_DISPLAY, "Display " NL_NAME);
	wb_set_cstr(req, WB_F_BIO, "the bio of " NL_NAME);
	wb_msg_free(er_call(it_cl.user_url, req, WB_OK));
	it_wait_inbox(wbt_ms(60000));
	cr_assert_eq(er_inbox_by(fans[7], x), 3, "a fan's inbox holds its posts");
	cr_assert_eq(er_inbox_by(x, control), 1, "its inbox holds the control's post");

	/* sessions (three), then the deletion with the last one */
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(
		    warble_login(c, NL_NAME, ER_PASS, &uid), WARBLE_OK, "%s", warble_errmsg(c));
	}
	cr_assert_eq(warble_delete_account(c, ER_PASS), WARBLE_OK, "%s", warble_errmsg(c));
	er_wait_erased();
	/* the revocation records name it until every session they end has expired */
	wbt_sleep_ms(NL_TTL_S * 1000 + 500);
	warble_close(c);
	cr_assert_eq(wbt_cluster_stop(&it_cl, 15000), 0);

	/* every family of every store, through hb, read-only */
	nl_scan(it_cl.data, x, control, &f);
	fprintf(stderr,
	    "erase: %llu cells read; the uid in %llu, the name in %llu; the control uid in %llu; "
	    "the event logs (\"" NL_LOG_SKIP "\" of user, relation and content, left out) hold "
	    "%llu events of it\n",
	    (unsigned long long)f.cells, (unsigned long long)f.uid, (unsigned long long)f.name,
	    (unsigned long long)f.control, (unsigned long long)f.in_logs);
	cr_assert_gt(f.control, 0, "the scan does not see the cells of an account still there");
	cr_assert_gt(f.in_logs, NL_FANS, "the logs hold its events (until trimmed)");
	cr_assert_eq(f.uid + f.name, 0,
	    "%llu cells still hold the uid, %llu the name; the first: %s",
	    (unsigned long long)f.uid, (unsigned long long)f.name, f.first);

	/* and after a forced compaction, no file of any store holds the name */
	nl_compact(it_cl.data);
	size_t files = 0, hits = nl_grep(it_cl.data, NL_NAME, &files, first, sizeof(first));
	size_t cfiles = 0;
	char   cfirst[1100] = "";
	size_t control_hits = nl_grep(it_cl.data, "nlbulk1", &cfiles, cfirst, sizeof(cfirst));
	fprintf(stderr, "erase: %zu files read after compaction; %zu hold the name\n", files, hits);
	cr_assert_gt(control_hits, 0, "the files do not hold a name still there either");
	cr_assert_eq(hits, 0, "%zu files hold the name, the first %s", hits, first);
}
