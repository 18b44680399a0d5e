/*
 * gw_posts.c - posts and timelines: publish, delete, one post, home, timeline.
 *
 *   post      id -> post cache or post.get (the shard the id's node names) -> user.get name
 *   home      token -> uid -> inbox.home ids -> post cache or post.get -> user.get names
 *   timeline  name -> user.lookup uid -> post.timeline (author known)
 */
#include "gw_int.h"
#include "gw_postcache.h"
#include "wb_id.h"

/*
 * gw_posts_cache_new puts a text-only post just published into the post
 * cache, exactly as post.get answers it (such a post is stored as its
 * text): the home reads that find it right after its fan-out then need
 * no post.get.  A rich post is left to post.get, which knows its images'
 * sizes.
 */
static void
gw_posts_cache_new(gw *g, uint64_t epoch, const wb_obj *req, uint64_t uid, uint64_t id)
{
	const char *text;
	size_t      len;
	wb_obj     *p;

	if (id == 0 || gw_postcache_rich(req) || !wb_get_str(req, WB_F_TEXT, &text, &len) ||
	    (p = wb_msg_new()) == NULL) {
		return;
	}
	if (wb_set_u64(p, WB_F_ID, id) == WB_OK && wb_set_u64(p, WB_F_AUTHOR, uid) == WB_OK &&
	    wb_set_str(p, WB_F_TEXT, text, len) == WB_OK &&
	    wb_set_u64(p, WB_F_TIME, wb_id_ms(id)) == WB_OK) {
		gw_postcache_put(gw_post_cache(g), epoch, p);
	}
	wb_msg_free(p);
}

int
gw_op_publish(gw *g, const wb_obj *req, wb_obj *rep)
{
	uint64_t uid, id = 0, time = 0, epoch = gw_postcache_epoch(gw_post_cache(g));
	wb_obj  *q, *r;
	int      rc;

	if ((rc = gw_auth(g, req, &uid, rep)) != WB_OK) {
		return rc;
	}
	/* the post's columns as given (the content service checks them), less the token */
	if ((q = wb_request(WB_OP_POST_PUBLISH)) != NULL &&
	    (wb_copy(q, req) != WB_OK || wb_set_u64(q, WB_F_UID, uid) != WB_OK ||
	        wb_set_cstr(q, WB_F_OP, wb_op_name(WB_OP_POST_PUBLISH)) != WB_OK)) {
		wb_msg_free(q);
		q = NULL;
	}
	if (q != NULL) {
		wb_del(q, WB_F_TOKEN);
	}
	if ((rc = gw_call(WB_SVC_CONTENT, gw_shard(g, WB_SVC_CONTENT, uid), q, &r, rep)) != WB_OK) {
		return rc;
	}
	wb_get_u64(r, WB_F_ID, &id);
	wb_get_u64(r, WB_F_TIME, &time);
	wb_msg_free(r);
	gw_posts_cache_new(g, epoch, req, uid, id);
	if ((rc = wb_reply_ok(rep)) != WB_OK || (rc = wb_set_u64(rep, WB_F_ID, id)) != WB_OK ||
	    (time != 0 && (rc = wb_set_u64(rep, WB_F_TIME, time)) != WB_OK)) {
		wb_reply_error(rep, rc, NULL);
	}
	return rc;
}

int
gw_op_delete(gw *g, const wb_obj *req, wb_obj *rep)
{
	uint64_t uid, id;
	wb_obj  *q, *r;
	int      rc;

	if ((rc = gw_auth(g, req, &uid, rep)) != WB_OK) {
		return rc;
	}
	if (!wb_get_u64(req, WB_F_ID, &id) || id == 0) {
		wb_reply_error(rep, WB_EINVAL, "a post id is required");
		return WB_EINVAL;
	}
	if ((q = wb_request(WB_OP_POST_DELETE)) != NULL &&
	    (wb_set_u64(q, WB_F_UID, uid) != WB_OK || wb_set_u64(q, WB_F_ID, id) != WB_OK)) {
		wb_msg_free(q);
		q = NULL;
	}
	/* the post's id names its author's slot group, so its shard */
	rc = gw_call(WB_SVC_CONTENT, rt_shards_for_id(g->svc[WB_SVC_CONTENT], id), q, &r, rep);
	/* whatever the answer (a timeout may hide a done delete), stop serving it from cache */
	gw_postcache_forget(gw_post_cache(g), id);
	if (rc == WB_ENOTFOUND) {
		wb_reply_error(rep, WB_ENOPOST, "no such post");
		return WB_ENOPOST;
	}
	if (rc != WB_OK) {
		return rc;
	}
	wb_msg_free(r);
	return wb_reply_ok(rep);
}

/*
 * gw_post_shown tells whether post p (hydrated, author_name set) may be
 * shown to viewer (0: anyone).  A post whose author the user service no
 * longer knows (user.get left the name empty) is not: that is where a
 * closed account's posts stop being served once account deletion lands,
 * and where a block would refuse its viewer.
 */
static bool
gw_post_shown(const wb_obj *p, uint64_t viewer)
{
	(void)viewer;
	return wb_str(p, WB_F_AUTHOR_NAME, "")[0] != '\0';
}

int
gw_op_post(gw *g, const wb_obj *req, wb_obj *rep)
{
	uint64_t      id, viewer;
	const wb_obj *posts = NULL;
	size_t        n = 0;
	wb_obj       *r;
	int           rc;

	if ((rc = gw_auth_optional(g, req, &viewer, rep)) != WB_OK) {
		return rc;
	}
	if (!wb_get_u64(req, WB_F_ID, &id) || id == 0) {
		wb_reply_error(rep, WB_EINVAL, "a post id is required");
		return WB_EINVAL;
	}
	if ((r = wb_msg_new()) == NULL) {
		wb_reply_error(rep, WB_ENOMEM, NULL);
		return WB_ENOMEM;
	}
	/* the id names its content shard (its author's slot group): no lookup; a
	 * cached record is trusted for WARBLE_POST_CACHE_MS, as a timeline's is */
	if ((rc = gw_hydrate_posts(g, &id, NULL, 1, UINT64_MAX, r)) != WB_OK) {
		wb_reset(rep);
		(void)wb_copy(rep, r);
		wb_msg_free(r);
		return rc;
	}
	wb_reset(rep);
	if (!wb_get_objs(r, WB_F_POSTS, &posts, &n) || n == 0 ||
	    !gw_post_shown(&posts[0], viewer)) {
		wb_msg_free(r);
		wb_reply_error(rep, WB_ENOPOST, "no such post");
		return WB_ENOPOST;
	}
	if ((rc = wb_reply_ok(rep)) != WB_OK || (rc = wb_copy(rep, &posts[0])) != WB_OK) {
		wb_reply_error(rep, rc, NULL);
	}
	wb_msg_free(r);
	return rc;
}

/* gw_posts_page adds the optional cursor/time fields of req to q (and, for a user's timeline, the time range and category). */
static int
gw_posts_page(const wb_obj *req, wb_obj *q, uint64_t limit, bool range)
{
	static const wb_field opt[] = { WB_F_BEFORE, WB_F_SINCE, WB_F_UNTIL };
	uint64_t              v;
	const char           *cat;
	size_t                n;
	int                   rc = wb_set_u64(q, WB_F_LIMIT, limit);

	for (size_t i = 0; rc == WB_OK && i < (range ? 3 : 1); i++) {
		if (wb_get_u64(req, opt[i], &v)) {
			rc = wb_set_u64(q, opt[i], v);
		}
	}
	if (rc == WB_OK && range && wb_get_str(req, WB_F_CATEGORY, &cat, &n)) {
		rc = wb_set_str(q, WB_F_CATEGORY, cat, n);
	}
	return rc;
}

/* gw_posts_next copies a downstream page cursor into rep. */
static int
gw_posts_next(const wb_obj *r, wb_obj *rep)
{
	uint64_t next;
	int      rc = WB_OK;

	if (wb_get_u64(r, WB_F_NEXT, &next) && next != 0 &&
	    (rc = wb_set_u64(rep, WB_F_NEXT, next)) != WB_OK) {
		wb_reply_error(rep, rc, NULL);
	}
	return rc;
}

int
gw_op_home(gw *g, const wb_obj *req, wb_obj *rep)
{
	uint64_t        uid, limit, picked[GW_PAGE_MAX], authors[GW_PAGE_MAX];
	const uint64_t *ids = NULL, *hints = NULL;
	const wb_obj   *posts;
	size_t          n = 0;
	wb_obj         *q, *r;
	int             rc;

	if ((rc = gw_auth(g, req, &uid, rep)) != WB_OK ||
	    (rc = gw_limit(req, &limit, rep)) != WB_OK) {
		return rc;
	}
	if ((q = wb_request(WB_OP_INBOX_HOME)) != NULL &&
	    (wb_set_u64(q, WB_F_UID, uid) != WB_OK ||
	        gw_posts_page(req, q, limit, false) != WB_OK)) {
		wb_msg_free(q);
		q = NULL;
	}
	if ((rc = gw_call(WB_SVC_INBOX, gw_shard(g, WB_SVC_INBOX, uid), q, &r, rep)) != WB_OK) {
		return rc;
	}
	/* The inbox answers post records {id, author}; older builds answered ids. */
	if (!wb_get_u64s(r, WB_F_IDS, &ids, &n) && wb_get_objs(r, WB_F_POSTS, &posts, &n)) {
		n = n < GW_PAGE_MAX ? n : GW_PAGE_MAX;
		for (size_t i = 0; i < n; i++) {
			picked[i] = wb_u64(&posts[i], WB_F_ID, 0);
			authors[i] = wb_u64(&posts[i], WB_F_AUTHOR, 0);
		}
		ids = picked;
		hints = authors;
	}
	if ((rc = gw_hydrate_posts(g, ids, hints, n, wb_u64(r, WB_F_LAG, UINT64_MAX), rep)) ==
	    WB_OK) {
		rc = gw_posts_next(r, rep);
	}
	wb_msg_free(r);
	return rc;
}

int
gw_op_timeline(gw *g, const wb_obj *req, wb_obj *rep)
{
	const char   *name;
	uint64_t      uid, limit;
	const wb_obj *posts = NULL;
	size_t        n = 0;
	wb_obj       *q, *r;
	int           rc;

	name = wb_str(req, WB_F_NAME, "");
	if ((rc = gw_limit(req, &limit, rep)) != WB_OK ||
	    (rc = gw_lookup(g, name, &uid, rep)) != WB_OK) {
		return rc;
	}
	if ((q = wb_request(WB_OP_POST_TIMELINE)) != NULL &&
	    (wb_set_u64(q, WB_F_UID, uid) != WB_OK ||
	        gw_posts_page(req, q, limit, true) != WB_OK)) {
		wb_msg_free(q);
		q = NULL;
	}
	if ((rc = gw_call(WB_SVC_CONTENT, gw_shard(g, WB_SVC_CONTENT, uid), q, &r, rep)) != WB_OK) {
		return rc;
	}
	wb_get_objs(r, WB_F_POSTS, &posts, &n);
	if ((rc = wb_reply_ok(rep)) != WB_OK ||
	    (rc = gw_copy_posts(posts, n, name, rep)) != WB_OK) {
		wb_reply_error(rep, rc, NULL);
	} else {
		rc = gw_posts_next(r, rep);
	}
	wb_msg_free(r);
	return rc;
}
