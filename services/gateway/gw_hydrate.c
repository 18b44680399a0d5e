/*
 * gw_hydrate.c - turning ids into records for public replies.
 *
 *   post ids --cache or post.get (each id's content shard)--> {id, author, text, time}
 *            --user.get--> author_name
 *   uids     --user.get--> {uid, name, display, bio, created}
 *
 * Results keep the order of the ids asked for.  A post or user reported
 * missing (deleted since the id was stored) is skipped, not an error; so
 * is a post whose author is missing: a deleted account's posts are not
 * served from the moment it closes, while its erasure takes them out of
 * the inboxes and the content store.
 */
#include <stdio.h>
#include <string.h>

#include "gw_int.h"
#include "gw_names.h"
#include "gw_postcache.h"
#include "wb_id.h"

int
gw_copy_user(const wb_obj *src, wb_obj *dst)
{
	static const wb_field strs[] = { WB_F_NAME, WB_F_DISPLAY, WB_F_BIO };
	const char           *s;
	size_t                n;
	uint64_t              v;
	int                   rc = wb_set_u64(dst, WB_F_UID, wb_u64(src, WB_F_UID, 0));

	for (size_t i = 0; rc == WB_OK && i < sizeof(strs) / sizeof(strs[0]); i++) {
		if (wb_get_str(src, strs[i], &s, &n)) {
			rc = wb_set_str(dst, strs[i], s, n);
		}
	}
	if (rc == WB_OK && wb_get_u64(src, WB_F_CREATED, &v)) {
		rc = wb_set_u64(dst, WB_F_CREATED, v);
	}
	return rc;
}

/* gw_hydrate_preview adds to an image record with a preview the preview's path on the HTTP port
 * (http_api.c's route). */
static int
gw_hydrate_preview(wb_obj *im)
{
	const char *media;
	size_t      n;
	char        url[WB_MEDIA_ID_MAX + 32];

	if (!wb_has(im, WB_F_PREVIEW_WIDTH) || !wb_get_str(im, WB_F_MEDIA, &media, &n) ||
	    n >= WB_MEDIA_ID_MAX) {
		return WB_OK; /* stored before previews: the re-encode pass gives it one */
	}
	snprintf(url, sizeof(url), "/media/%.*s/preview", (int)n, media);
	return wb_set_cstr(im, WB_F_PREVIEW_URL, url);
}

/* gw_hydrate_post copies one post record, adding its author's name and its previews' paths. */
static int
gw_hydrate_post(const wb_obj *src, const char *name, wb_obj *dst)
{
	const char *text = "";
	size_t      len = 0;
	int         rc;

	const wb_obj *images;
	size_t        nimages;

	wb_get_str(src, WB_F_TEXT, &text, &len);
	if ((rc = wb_set_u64(dst, WB_F_ID, wb_u64(src, WB_F_ID, 0))) != WB_OK ||
	    (rc = wb_set_u64(dst, WB_F_AUTHOR, wb_u64(src, WB_F_AUTHOR, 0))) != WB_OK ||
	    (rc = wb_set_str(dst, WB_F_TEXT, text, len)) != WB_OK ||
	    (rc = wb_set_u64(dst, WB_F_TIME, wb_u64(src, WB_F_TIME, 0))) != WB_OK) {
		return rc;
	}
	/* a rich post's columns, those it has */
	if (wb_get_str(src, WB_F_TITLE, &text, &len) &&
	    (rc = wb_set_str(dst, WB_F_TITLE, text, len)) != WB_OK) {
		return rc;
	}
	if (wb_get_str(src, WB_F_CATEGORY, &text, &len) &&
	    (rc = wb_set_str(dst, WB_F_CATEGORY, text, len)) != WB_OK) {
		return rc;
	}
	if (wb_get_objs(src, WB_F_IMAGES, &images, &nimages)) {
		wb_obj *out = wb_add_objs(dst, WB_F_IMAGES, nimages);
		for (size_t i = 0; i < nimages; i++) {
			if (out == NULL || (rc = wb_copy(&out[i], &images[i])) != WB_OK ||
			    (rc = gw_hydrate_preview(&out[i])) != WB_OK) {
				return out == NULL ? WB_ENOMEM : rc;
			}
		}
	}
	return wb_set_cstr(dst, WB_F_AUTHOR_NAME, name != NULL ? name : "");
}

int
gw_copy_posts(const wb_obj *posts, size_t n, const char *name, wb_obj *rep)
{
	wb_obj *out;
	int     rc = WB_OK;

	if (n == 0) {
		(void)wb_add_objs(rep, WB_F_POSTS, 0); /* an empty list, if it can */
		return WB_OK;
	}
	if ((out = wb_add_objs(rep, WB_F_POSTS, n)) == NULL) {
		return WB_ENOMEM;
	}
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		rc = gw_hydrate_post(&posts[i], name, &out[i]);
	}
	return rc;
}

/* gw_hydrate_find returns the record in objs whose field f equals v, or NULL. */
static const wb_obj *
gw_hydrate_find(const wb_obj *objs, size_t n, wb_field f, uint64_t v)
{
	for (size_t i = 0; i < n; i++) {
		if (wb_u64(&objs[i], f, 0) == v) {
			return &objs[i];
		}
	}
	return NULL;
}

/* gw_hydrate_req builds op (post.get, with optional author hints, or user.get) for ids (NULL if out of memory). */
static wb_obj *
gw_hydrate_req(wb_op op, const uint64_t *ids, const uint64_t *hints, size_t n)
{
	wb_obj *q = wb_request(op);

	if (q != NULL &&
	    (wb_set_u64s(q, op == WB_OP_POST_GET ? WB_F_IDS : WB_F_UIDS, ids, n) != WB_OK ||
	        (hints != NULL && wb_set_u64s(q, WB_F_UIDS, hints, n) != WB_OK))) {
		wb_msg_free(q);
		q = NULL;
	}
	return q;
}

/* gw_hydrate_users_get asks the user service for the records of uids, in *users. */
static int
gw_hydrate_users_get(gw *g, const uint64_t *uids, size_t n, wb_obj **r, const wb_obj **users,
    size_t *nusers, wb_obj *rep)
{
	int rc =
	    gw_call(WB_SVC_USER, gw_user(g), gw_hydrate_req(WB_OP_USER_GET, uids, NULL, n), r, rep);

	*users = NULL;
	*nusers = 0;
	if (rc == WB_OK) {
		wb_get_objs(*r, WB_F_USERS, users, nusers);
	}
	return rc;
}

/* gw_hydrate_names fills names[i] for authors[0..na): from the cache, then one user.get for the rest. */
static int
gw_hydrate_names(
    gw *g, const uint64_t *authors, size_t na, char (*names)[GW_NAME_MAX + 1], wb_obj *rep)
{
	gw_names     *cache = gw_name_cache(g);
	uint64_t      miss[GW_PAGE_MAX];
	size_t        nmiss = 0, nu = 0, len;
	const wb_obj *users = NULL;
	const char   *s;
	wb_obj       *ur = NULL;
	int           rc;

	for (size_t i = 0; i < na; i++) {
		if (!gw_names_name(cache, authors[i], names[i])) {
			names[i][0] = '\0';
			miss[nmiss++] = authors[i];
		}
	}
	if (nmiss == 0) {
		return WB_OK;
	}
	if ((rc = gw_hydrate_users_get(g, miss, nmiss, &ur, &users, &nu, rep)) != WB_OK) {
		return rc;
	}
	for (size_t k = 0; k < nu; k++) {
		uint64_t uid = wb_u64(&users[k], WB_F_UID, 0);

		if (!wb_get_str(&users[k], WB_F_NAME, &s, &len)) {
			continue;
		}
		gw_names_put(cache, uid, s, len);
		for (size_t i = 0; i < na; i++) {
			if (authors[i] == uid && len <= GW_NAME_MAX) {
				memcpy(names[i], s, len);
				names[i][len] = '\0';
			}
		}
	}
	wb_msg_free(ur);
	return WB_OK;
}

/*
 * gw_hydrate_prefetch starts a user.get for the authors in hints whose
 * names are not cached, to run while post.get does; NULL if none.
 */
static rt_pending *
gw_hydrate_prefetch(gw *g, const uint64_t *hints, size_t n)
{
	gw_names *cache = gw_name_cache(g);
	uint64_t  miss[GW_PAGE_MAX];
	char      name[GW_NAME_MAX + 1];
	size_t    nmiss = 0;
	wb_obj   *q;

	for (size_t i = 0; hints != NULL && i < n; i++) {
		size_t k = 0;

		while (k < nmiss && miss[k] != hints[i]) {
			k++;
		}
		if (k == nmiss && hints[i] != 0 && !gw_names_name(cache, hints[i], name)) {
			miss[nmiss++] = hints[i];
		}
	}
	if (nmiss == 0) {
		return NULL;
	}
	if ((q = wb_request(WB_OP_USER_GET)) != NULL &&
	    wb_set_u64s(q, WB_F_UIDS, miss, nmiss) != WB_OK) {
		wb_msg_free(q);
		q = NULL;
	}
	return gw_call_start(gw_user(g), q);
}

/* gw_hydrate_prefetched ends a prefetch, caching the names it brought (a failure is left to the fallback). */
static void
gw_hydrate_prefetched(gw *g, rt_pending *p)
{
	const wb_obj *users = NULL;
	const char   *s;
	size_t        nu = 0, len;
	wb_obj       *r = NULL;

	if (p == NULL) {
		return;
	}
	if (rt_call_finish(p, &r) == WB_OK && wb_get_objs(r, WB_F_USERS, &users, &nu)) {
		for (size_t k = 0; k < nu; k++) {
			if (wb_get_str(&users[k], WB_F_NAME, &s, &len)) {
				gw_names_put(
				    gw_name_cache(g), wb_u64(&users[k], WB_F_UID, 0), s, len);
			}
		}
	}
	wb_msg_free(r);
}

/*
 * gw_hydrate_posts_get asks each content shard for the missed posts it
 * keeps (a post id names its shard): one post.get when they are all on
 * one shard, else one to each at once.  pr[s] gets shard s's reply.
 */
static int
gw_hydrate_posts_get(
    gw *g, const uint64_t *miss, const uint64_t *hints, size_t nmiss, wb_obj **pr, wb_obj *rep)
{
	rt_shards  *content = g->svc[WB_SVC_CONTENT];
	unsigned    nshards = rt_shards_count(content), used = 0, last = 0;
	uint64_t    ids[GW_PAGE_MAX], hs[GW_PAGE_MAX];
	rt_pending *p[WB_SHARDS_MAX];
	bool        asked[WB_SHARDS_MAX] = { false };
	int         rc = WB_OK;

	for (size_t i = 0; i < nmiss; i++) {
		unsigned s = rt_shards_index_of_id(content, miss[i]);
		used += i == 0 || s != last;
		last = s;
	}
	if (nshards == 1 || used == 1) { /* one shard: one plain call */
		return gw_call(WB_SVC_CONTENT, rt_shards_at(content, last),
		    gw_hydrate_req(WB_OP_POST_GET, miss, hints, nmiss), &pr[last], rep);
	}
	for (unsigned s = 0; s < nshards; s++) {
		size_t k = 0;
		for (size_t i = 0; i < nmiss; i++) {
			if (rt_shards_index_of_id(content, miss[i]) == s) {
				hs[k] = hints != NULL ? hints[i] : 0;
				ids[k++] = miss[i];
			}
		}
		if ((asked[s] = k > 0)) { /* a call that cannot start fails in its finish */
			p[s] = gw_call_start(rt_shards_at(content, s),
			    gw_hydrate_req(WB_OP_POST_GET, ids, hints != NULL ? hs : NULL, k));
		}
	}
	for (unsigned s = 0; s < nshards; s++) {
		if (asked[s]) {
			int src = gw_call_finish(WB_SVC_CONTENT, p[s], &pr[s], rep);
			rc = rc == WB_OK ? src : rc;
		}
	}
	return rc;
}

/*
 * gw_hydrate_fetch finds the records of ids (listed lag_ms behind
 * content's deletes): from the post cache into cached (an array in
 * scratch), the rest from their content shards (their replies in pr,
 * cached for next time).  found[i] is post i's record, NULL if gone.
 */
static int
gw_hydrate_fetch(gw *g, const uint64_t *ids, const uint64_t *hints, size_t n, uint64_t lag_ms,
    wb_obj *scratch, wb_obj **pr, const wb_obj **found, wb_obj *rep)
{
	gw_postcache *cache = gw_post_cache(g);
	wb_obj       *cached = wb_add_objs(scratch, WB_F_POSTS, n);
	uint64_t      miss[GW_PAGE_MAX], miss_hints[GW_PAGE_MAX], epoch;
	size_t        nmiss = 0, next[WB_SHARDS_MAX] = { 0 };
	rt_pending   *pending;
	int           rc;

	if (cached == NULL) {
		return WB_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		found[i] = gw_postcache_get(cache, ids[i], lag_ms, &cached[i]) ? &cached[i] : NULL;
		if (found[i] == NULL) {
			miss_hints[nmiss] = hints != NULL ? hints[i] : 0;
			miss[nmiss++] = ids[i];
		}
	}
	if (nmiss == 0) {
		return WB_OK;
	}
	epoch = gw_postcache_epoch(cache);
	pending = gw_hydrate_prefetch(g, hints, n);
	rc = gw_hydrate_posts_get(g, miss, hints != NULL ? miss_hints : NULL, nmiss, pr, rep);
	gw_hydrate_prefetched(g, pending);
	if (rc != WB_OK) {
		return rc;
	}
	/* post.get answers in request order, skipping missing ones: match in one pass a shard */
	for (size_t i = 0; i < n; i++) {
		unsigned      s = rt_shards_index_of_id(g->svc[WB_SVC_CONTENT], ids[i]);
		const wb_obj *posts = NULL;
		size_t        np = 0;
		if (found[i] != NULL || pr[s] == NULL ||
		    !wb_get_objs(pr[s], WB_F_POSTS, &posts, &np)) {
			continue;
		}
		if (next[s] < np && wb_u64(&posts[next[s]], WB_F_ID, 0) == ids[i]) {
			found[i] = &posts[next[s]++];
		} else {
			found[i] = gw_hydrate_find(posts, np, WB_F_ID, ids[i]);
		}
		if (found[i] != NULL) {
			gw_postcache_put(cache, epoch, found[i]);
		}
	}
	return WB_OK;
}

int
gw_hydrate_posts(
    gw *g, const uint64_t *ids, const uint64_t *hints, size_t n, uint64_t lag_ms, wb_obj *rep)
{
	uint64_t      authors[GW_PAGE_MAX];
	char          names[GW_PAGE_MAX][GW_NAME_MAX + 1];
	uint8_t       who[GW_PAGE_MAX]; /* index into authors of post i's author */
	const wb_obj *found[GW_PAGE_MAX];
	size_t        na = 0, kept = 0;
	wb_obj       *pr[WB_SHARDS_MAX] = { NULL }, *out = NULL, *scratch;
	int           rc;

	if (n > GW_PAGE_MAX) {
		n = GW_PAGE_MAX;
	}
	if ((scratch = wb_msg_new()) == NULL) {
		wb_reply_error(rep, WB_ENOMEM, NULL);
		return WB_ENOMEM;
	}
	if (n > 0 &&
	    (rc = gw_hydrate_fetch(g, ids, hints, n, lag_ms, scratch, pr, found, rep)) != WB_OK) {
		if (!wb_has(rep, WB_F_ERR)) {
			wb_reply_error(rep, rc, NULL);
		}
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (found[i] == NULL) {
			continue;
		}
		uint64_t a = wb_u64(found[i], WB_F_AUTHOR, 0);
		size_t   k = 0;
		while (k < na && authors[k] != a) {
			k++;
		}
		if (k == na) {
			authors[na++] = a;
		}
		who[kept] = (uint8_t)k;
		found[kept++] = found[i];
	}
	if (na > 0 && (rc = gw_hydrate_names(g, authors, na, names, rep)) != WB_OK) {
		goto out;
	}
	size_t named = 0;
	for (size_t i = 0; i < kept; i++) {
		if (names[who[i]][0] != '\0') { /* no name: the author's account is deleted */
			who[named] = who[i];
			found[named++] = found[i];
		}
	}
	kept = named;
	wb_reset(rep);
	if ((rc = wb_reply_ok(rep)) == WB_OK &&
	    (out = wb_add_objs(rep, WB_F_POSTS, kept)) == NULL && kept > 0) {
		rc = WB_ENOMEM;
	}
	for (size_t i = 0; rc == WB_OK && i < kept; i++) {
		rc = gw_hydrate_post(found[i], names[who[i]], &out[i]);
	}
	if (rc != WB_OK) {
		wb_reply_error(rep, rc, NULL);
	}
out:
	for (size_t s = 0; s < WB_SHARDS_MAX; s++) {
		wb_msg_free(pr[s]);
	}
	wb_msg_free(scratch);
	return rc;
}

int
gw_hydrate_users(gw *g, const uint64_t *uids, size_t n, wb_obj *rep)
{
	return gw_hydrate_users_with(g, uids, n, WB_F_OK, NULL, rep);
}

int
gw_hydrate_users_with(
    gw *g, const uint64_t *uids, size_t n, wb_field f, const uint64_t *vals, wb_obj *rep)
{
	const wb_obj *users = NULL, *u;
	size_t        nu = 0, kept = 0;
	wb_obj       *ur = NULL, *out = NULL;
	int           rc;

	if (n > GW_PAGE_MAX) {
		n = GW_PAGE_MAX;
	}
	if (n > 0 && (rc = gw_hydrate_users_get(g, uids, n, &ur, &users, &nu, rep)) != WB_OK) {
		return rc;
	}
	for (size_t i = 0; i < n; i++) {
		kept += gw_hydrate_find(users, nu, WB_F_UID, uids[i]) != NULL;
	}
	wb_reset(rep);
	if ((rc = wb_reply_ok(rep)) == WB_OK &&
	    (out = wb_add_objs(rep, WB_F_USERS, kept)) == NULL && kept > 0) {
		rc = WB_ENOMEM;
	}
	for (size_t i = 0, k = 0; rc == WB_OK && i < n; i++) {
		if ((u = gw_hydrate_find(users, nu, WB_F_UID, uids[i])) != NULL) {
			const char *s;
			size_t      len;

			if (wb_get_str(u, WB_F_NAME, &s, &len)) {
				gw_names_put(gw_name_cache(g), uids[i], s, len);
			}
			rc = gw_copy_user(u, &out[k]);
			if (rc == WB_OK && vals != NULL && vals[i] != 0) {
				rc = wb_set_u64(&out[k], f, vals[i]);
			}
			k++;
		}
	}
	if (rc != WB_OK) {
		wb_reply_error(rep, rc, NULL);
	}
	wb_msg_free(ur);
	return rc;
}
