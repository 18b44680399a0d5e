/*
 * gw_social.c - relations and profiles: follow, unfollow, following,
 * fans, profile, block, unblock, blocks.  Users are named by username in
 * the public API and by uid downstream; each handler resolves names first.
 *
 * Everything about a follower is on the follower's relation shard: a
 * follow, unfollow, following list or "does X follow Y" is one call to
 * that shard.  A user's fans are spread over every shard (each keeps the
 * fans of its own slots), so a fans page reads the shards in slot order,
 * and a follower count is the sum of each shard's part.
 */
#include <string.h>

#include "gw_int.h"

/* gw_social_relate resolves NAME, refuses self, and sends op (rel.follow, rel.unfollow,
 * rel.block or rel.unblock) for the caller. */
static int
gw_social_relate(gw *g, wb_op op, const wb_obj *req, wb_obj *rep)
{
	uint64_t uid, target;
	wb_obj  *q, *r;
	int      rc;

	if ((rc = gw_auth(g, req, &uid, rep)) != WB_OK ||
	    (rc = gw_lookup(g, wb_str(req, WB_F_NAME, ""), &target, rep)) != WB_OK) {
		return rc;
	}
	if (uid == target && (op == WB_OP_REL_BLOCK || op == WB_OP_REL_UNBLOCK)) {
		wb_reply_error(rep, WB_EINVAL, "cannot %s yourself",
		    op == WB_OP_REL_BLOCK ? "block" : "unblock");
		return WB_EINVAL;
	}
	if (uid == target) {
		wb_reply_error(rep, WB_ESELF, NULL);
		return WB_ESELF;
	}
	if ((q = wb_request(op)) != NULL && (wb_set_u64(q, WB_F_UID, uid) != WB_OK ||
	                                        wb_set_u64(q, WB_F_TARGET, target) != WB_OK)) {
		wb_msg_free(q);
		q = NULL;
	}
	if ((rc = gw_call(WB_SVC_RELATION, gw_shard(g, WB_SVC_RELATION, uid), q, &r, rep)) !=
	    WB_OK) {
		return rc;
	}
	wb_msg_free(r);
	return wb_reply_ok(rep);
}

int
gw_op_follow(gw *g, const wb_obj *req, wb_obj *rep)
{
	return gw_social_relate(g, WB_OP_REL_FOLLOW, req, rep);
}

int
gw_op_unfollow(gw *g, const wb_obj *req, wb_obj *rep)
{
	return gw_social_relate(g, WB_OP_REL_UNFOLLOW, req, rep);
}

/* A block is written on the caller's relation shard, which hands the
 * blocked user's side to theirs (services/relation/rel_block.c). */
int
gw_op_block(gw *g, const wb_obj *req, wb_obj *rep)
{
	return gw_social_relate(g, WB_OP_REL_BLOCK, req, rep);
}

int
gw_op_unblock(gw *g, const wb_obj *req, wb_obj *rep)
{
	return gw_social_relate(g, WB_OP_REL_UNBLOCK, req, rep);
}

/* gw_op_blocks lists whom the caller blocks, paged by uid: one rel.blocks on the caller's
 * shard, then the users' records. */
int
gw_op_blocks(gw *g, const wb_obj *req, wb_obj *rep)
{
	uint64_t        uid, limit, after = 0, next = 0;
	const uint64_t *uids = NULL;
	size_t          n = 0;
	wb_obj         *q, *r = NULL;
	int             rc;

	if ((rc = gw_auth(g, req, &uid, rep)) != WB_OK ||
	    (rc = gw_limit(req, &limit, rep)) != WB_OK) {
		return rc;
	}
	if ((q = wb_request(WB_OP_REL_BLOCKS)) != NULL &&
	    (wb_set_u64(q, WB_F_UID, uid) != WB_OK || wb_set_u64(q, WB_F_LIMIT, limit) != WB_OK ||
	        (wb_get_u64(req, WB_F_AFTER, &after) &&
	            wb_set_u64(q, WB_F_AFTER, after) != WB_OK))) {
		wb_msg_free(q);
		q = NULL;
	}
	if ((rc = gw_call(WB_SVC_RELATION, gw_shard(g, WB_SVC_RELATION, uid), q, &r, rep)) !=
	    WB_OK) {
		return rc;
	}
	(void)wb_get_u64s(r, WB_F_UIDS, &uids, &n);
	n = n < limit ? n : limit;
	(void)wb_get_u64(r, WB_F_NEXT, &next);
	rc = gw_hydrate_users(g, uids, n, rep);
	wb_msg_free(r);
	if (rc == WB_OK && next != 0 && (rc = wb_set_u64(rep, WB_F_NEXT, next)) != WB_OK) {
		wb_reply_error(rep, rc, NULL);
	}
	return rc;
}

/*
 * gw_social_fans reads up to limit of uid's fans after `after` (0: from
 * the first) into out: from the shard of after's slot (fans are in slot
 * order, and each shard holds a slot range), then the next shards, so the
 * pages of all shards are one list; *next is the last uid given when
 * more may follow.  The reply of each call goes into rs (freed by the
 * caller), since out points into them.
 */
static int
gw_social_fans(gw *g, uint64_t uid, uint64_t after, uint64_t limit, const uint64_t **out,
    uint64_t *copy, size_t *n, uint64_t *next, wb_obj *rep)
{
	rt_shards *rel = g->svc[WB_SVC_RELATION];
	unsigned   nshards = rt_shards_count(rel);
	unsigned   s = after != 0 ? wb_uid_shard(after, nshards) : 0;
	int        rc = WB_OK;

	*n = 0;
	*next = 0;
	for (; rc == WB_OK && s < nshards && *n < limit; s++, after = 0) {
		const uint64_t *uids = NULL;
		size_t          k = 0;
		uint64_t        more = 0;
		wb_obj         *q = wb_request(WB_OP_REL_FANS), *r = NULL;
		if (q != NULL && (wb_set_u64(q, WB_F_UID, uid) != WB_OK ||
		                     wb_set_u64(q, WB_F_LIMIT, limit - *n) != WB_OK ||
		                     (after != 0 && wb_set_u64(q, WB_F_AFTER, after) != WB_OK))) {
			wb_msg_free(q);
			q = NULL;
		}
		if ((rc = gw_call(WB_SVC_RELATION, rt_shards_at(rel, s), q, &r, rep)) != WB_OK) {
			break;
		}
		(void)wb_get_u64s(r, WB_F_UIDS, &uids, &k);
		k = k < limit - *n ? k : limit - *n;
		memcpy(copy + *n, uids, k * sizeof(*uids));
		*n += k;
		more = wb_u64(r, WB_F_NEXT, 0);
		wb_msg_free(r);
		if (more != 0) {
			*next = more; /* this shard has more: the next page starts there */
			break;
		}
	}
	if (rc == WB_OK && *next == 0 && *n == limit && s < nshards) {
		*next = copy[*n - 1]; /* full, and shards are left: they may hold more */
	}
	*out = copy;
	return rc;
}

/*
 * gw_social_list pages through NAME's followees (one call to NAME's
 * relation shard) or fans (gw_social_fans), then names them.  Without a
 * cursor from the relation service, a full page gets the last uid as the
 * cursor of the next.
 */
static int
gw_social_list(gw *g, wb_op op, const wb_obj *req, wb_obj *rep)
{
	uint64_t        uid, limit, after = 0, next = 0;
	const uint64_t *uids = NULL;
	uint64_t        picked[GW_PAGE_MAX];
	size_t          n = 0;
	wb_obj         *q, *r = NULL;
	int             rc;

	if ((rc = gw_limit(req, &limit, rep)) != WB_OK ||
	    (rc = gw_lookup(g, wb_str(req, WB_F_NAME, ""), &uid, rep)) != WB_OK) {
		return rc;
	}
	wb_get_u64(req, WB_F_AFTER, &after);
	if (op == WB_OP_REL_FANS) {
		rc = gw_social_fans(g, uid, after, limit, &uids, picked, &n, &next, rep);
	} else {
		if ((q = wb_request(op)) != NULL &&
		    (wb_set_u64(q, WB_F_UID, uid) != WB_OK ||
		        wb_set_u64(q, WB_F_LIMIT, limit) != WB_OK ||
		        (wb_has(req, WB_F_AFTER) && wb_set_u64(q, WB_F_AFTER, after) != WB_OK))) {
			wb_msg_free(q);
			q = NULL;
		}
		rc = gw_call(WB_SVC_RELATION, gw_shard(g, WB_SVC_RELATION, uid), q, &r, rep);
		if (rc == WB_OK) {
			(void)wb_get_u64s(r, WB_F_UIDS, &uids, &n);
			n = n < limit ? n : limit;
			if (!wb_get_u64(r, WB_F_NEXT, &next) && n == limit && n > 0) {
				next = uids[n - 1];
			}
		}
	}
	if (rc == WB_OK) {
		rc = gw_hydrate_users(g, uids, n, rep);
	}
	wb_msg_free(r);
	if (rc == WB_OK && next != 0 && (rc = wb_set_u64(rep, WB_F_NEXT, next)) != WB_OK) {
		wb_reply_error(rep, rc, NULL);
	}
	return rc;
}

int
gw_op_following(gw *g, const wb_obj *req, wb_obj *rep)
{
	return gw_social_list(g, WB_OP_REL_FOLLOWING, req, rep);
}

int
gw_op_fans(gw *g, const wb_obj *req, wb_obj *rep)
{
	return gw_social_list(g, WB_OP_REL_FANS, req, rep);
}

/*
 * gw_social_counts adds up uid's following and follower counts: each
 * relation shard counts the edges it keeps (uid's following only on its
 * own shard, its followers on every shard), asked all at once.
 */
static int
gw_social_counts(gw *g, uint64_t uid, uint64_t *following, uint64_t *followers, wb_obj *rep)
{
	rt_shards  *rel = g->svc[WB_SVC_RELATION];
	unsigned    n = rt_shards_count(rel);
	rt_pending *p[WB_SHARDS_MAX];
	int         rc = WB_OK;

	*following = *followers = 0;
	for (unsigned s = 0; s < n; s++) {
		wb_obj *q = wb_request(WB_OP_REL_COUNTS);
		if (q != NULL && wb_set_u64s(q, WB_F_UIDS, &uid, 1) != WB_OK) {
			wb_msg_free(q);
			q = NULL;
		}
		p[s] = gw_call_start(rt_shards_at(rel, s), q);
	}
	for (unsigned s = 0; s < n; s++) {
		const wb_obj *users;
		size_t        k = 0;
		wb_obj       *r = NULL;
		int           src = gw_call_finish(WB_SVC_RELATION, p[s], &r, rep);
		if (src != WB_OK) {
			rc = rc == WB_OK ? src : rc;
			continue;
		}
		if (rc == WB_OK && wb_get_objs(r, WB_F_USERS, &users, &k) && k > 0) {
			*following += wb_u64(&users[0], WB_F_FOLLOWING, 0);
			*followers += wb_u64(&users[0], WB_F_FOLLOWERS, 0);
		}
		wb_msg_free(r);
	}
	return rc;
}

rt_pending *
gw_relation_start(gw *g, uint64_t viewer, uint64_t uid)
{
	wb_obj *q = wb_request(WB_OP_REL_IS_FOLLOWING);

	if (q != NULL && (wb_set_u64(q, WB_F_UID, viewer) != WB_OK ||
	                     wb_set_u64(q, WB_F_TARGET, uid) != WB_OK)) {
		wb_msg_free(q);
		q = NULL;
	}
	return gw_call_start(gw_shard(g, WB_SVC_RELATION, viewer), q);
}

int
gw_relation_finish(rt_pending *p, gw_rel *out, wb_obj *rep)
{
	wb_obj *r;
	int     rc;

	*out = (gw_rel) { false, false, false };
	if ((rc = gw_call_finish(WB_SVC_RELATION, p, &r, rep)) != WB_OK) {
		return rc;
	}
	(void)wb_get_bool(r, WB_F_FOLLOWED, &out->followed);
	(void)wb_get_bool(r, WB_F_BLOCKING, &out->blocking);
	(void)wb_get_bool(r, WB_F_BLOCKED_BY, &out->blocked_by);
	wb_msg_free(r);
	return WB_OK;
}

int
gw_relation(gw *g, uint64_t viewer, uint64_t uid, gw_rel *out, wb_obj *rep)
{
	return gw_relation_finish(gw_relation_start(g, viewer, uid), out, rep);
}

int
gw_profile_fill(gw *g, uint64_t uid, uint64_t viewer, wb_obj *rep)
{
	uint64_t      following, followers;
	gw_rel        rel = { false, false, false };
	const wb_obj *users;
	size_t        n = 0;
	wb_obj       *q, *r;
	int           rc;

	if ((q = wb_request(WB_OP_USER_GET)) != NULL &&
	    wb_set_u64s(q, WB_F_UIDS, &uid, 1) != WB_OK) {
		wb_msg_free(q);
		q = NULL;
	}
	if ((rc = gw_call(WB_SVC_USER, gw_user(g), q, &r, rep)) != WB_OK) {
		return rc;
	}
	if (!wb_get_objs(r, WB_F_USERS, &users, &n) || n == 0) {
		wb_msg_free(r);
		wb_reply_error(rep, WB_ENOUSER, NULL);
		return WB_ENOUSER;
	}
	if ((rc = gw_social_counts(g, uid, &following, &followers, rep)) != WB_OK ||
	    (viewer != 0 && viewer != uid &&
	        (rc = gw_relation(g, viewer, uid, &rel, rep)) != WB_OK)) {
		wb_msg_free(r);
		return rc;
	}
	wb_reset(rep);
	if ((rc = wb_reply_ok(rep)) != WB_OK || (rc = gw_copy_user(&users[0], rep)) != WB_OK ||
	    (rc = wb_set_u64(rep, WB_F_FOLLOWING, following)) != WB_OK ||
	    (rc = wb_set_u64(rep, WB_F_FOLLOWERS, followers)) != WB_OK ||
	    (viewer != 0 && viewer != uid &&
	        (rc = wb_set_bool(rep, WB_F_FOLLOWED, rel.followed)) != WB_OK) ||
	    (rel.blocking && (rc = wb_set_bool(rep, WB_F_BLOCKING, true)) != WB_OK) ||
	    (rel.blocked_by && (rc = wb_set_bool(rep, WB_F_BLOCKED_BY, true)) != WB_OK)) {
		wb_reply_error(rep, rc, NULL);
	}
	wb_msg_free(r);
	return rc;
}

int
gw_op_profile(gw *g, const wb_obj *req, wb_obj *rep)
{
	uint64_t uid, viewer;
	int      rc;

	if ((rc = gw_auth_optional(g, req, &viewer, rep)) != WB_OK ||
	    (rc = gw_lookup(g, wb_str(req, WB_F_NAME, ""), &uid, rep)) != WB_OK) {
		return rc;
	}
	return gw_profile_fill(g, uid, viewer, rep);
}
