/*
 * gw_social.c - relations and profiles: follow, unfollow, following,
 * fans, profile.  Users are named by username in the public API and by
 * uid downstream; each handler resolves names first.
 */
#include "gw_int.h"

/* gw_social_relate resolves NAME, refuses self, and sends op (rel.follow or rel.unfollow) for the caller. */
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
	if (uid == target) {
		wb_reply_error(rep, WB_ESELF, NULL);
		return WB_ESELF;
	}
	if ((q = wb_request(op)) != NULL && (wb_set_u64(q, WB_F_UID, uid) != WB_OK ||
	                                        wb_set_u64(q, WB_F_TARGET, target) != WB_OK)) {
		wb_msg_free(q);
		q = NULL;
	}
	if ((rc = gw_call(g, GW_RELATION, q, &r, rep)) != WB_OK) {
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

/*
 * gw_social_list pages through NAME's followees or followers (op), then
 * names them.  The relation service answers uids (or user records
 * carrying uids) and perhaps a cursor; without one, a full page gets the
 * last uid as the cursor of the next.
 */
static int
gw_social_list(gw *g, wb_op op, const wb_obj *req, wb_obj *rep)
{
	uint64_t        uid, limit, after, next = 0;
	const uint64_t *uids = NULL;
	uint64_t        picked[GW_PAGE_MAX];
	const wb_obj   *users;
	size_t          n = 0;
	wb_obj         *q, *r;
	int             rc;

	if ((rc = gw_limit(req, &limit, rep)) != WB_OK ||
	    (rc = gw_lookup(g, wb_str(req, WB_F_NAME, ""), &uid, rep)) != WB_OK) {
		return rc;
	}
	if ((q = wb_request(op)) != NULL &&
	    (wb_set_u64(q, WB_F_UID, uid) != WB_OK || wb_set_u64(q, WB_F_LIMIT, limit) != WB_OK ||
	        (wb_get_u64(req, WB_F_AFTER, &after) &&
	            wb_set_u64(q, WB_F_AFTER, after) != WB_OK))) {
		wb_msg_free(q);
		q = NULL;
	}
	if ((rc = gw_call(g, GW_RELATION, q, &r, rep)) != WB_OK) {
		return rc;
	}
	if (!wb_get_u64s(r, WB_F_UIDS, &uids, &n) && wb_get_objs(r, WB_F_USERS, &users, &n)) {
		n = n < GW_PAGE_MAX ? n : GW_PAGE_MAX;
		for (size_t i = 0; i < n; i++) {
			picked[i] = wb_u64(&users[i], WB_F_UID, 0);
		}
		uids = picked;
	}
	if (n > limit) {
		n = limit;
	}
	if (!wb_get_u64(r, WB_F_NEXT, &next) && n == limit && n > 0) {
		next = uids[n - 1];
	}
	rc = gw_hydrate_users(g, uids, n, rep);
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

/* gw_social_counts asks the relation service for uid's following and follower counts. */
static int
gw_social_counts(gw *g, uint64_t uid, uint64_t *following, uint64_t *followers, wb_obj *rep)
{
	const wb_obj *users;
	size_t        n;
	wb_obj       *q, *r;
	int           rc;

	*following = *followers = 0;
	if ((q = wb_request(WB_OP_REL_COUNTS)) != NULL &&
	    wb_set_u64s(q, WB_F_UIDS, &uid, 1) != WB_OK) {
		wb_msg_free(q);
		q = NULL;
	}
	if ((rc = gw_call(g, GW_RELATION, q, &r, rep)) != WB_OK) {
		return rc;
	}
	if (wb_get_objs(r, WB_F_USERS, &users, &n)) {
		for (size_t i = 0; i < n; i++) {
			if (wb_u64(&users[i], WB_F_UID, uid) == uid) {
				*following = wb_u64(&users[i], WB_F_FOLLOWING, 0);
				*followers = wb_u64(&users[i], WB_F_FOLLOWERS, 0);
				break;
			}
		}
	} else {
		*following = wb_u64(r, WB_F_FOLLOWING, 0);
		*followers = wb_u64(r, WB_F_FOLLOWERS, 0);
	}
	wb_msg_free(r);
	return WB_OK;
}

/* gw_social_follows asks whether viewer follows uid. */
static int
gw_social_follows(gw *g, uint64_t viewer, uint64_t uid, bool *followed, wb_obj *rep)
{
	wb_obj *q, *r;
	int     rc;

	*followed = false;
	if ((q = wb_request(WB_OP_REL_IS_FOLLOWING)) != NULL &&
	    (wb_set_u64(q, WB_F_UID, viewer) != WB_OK ||
	        wb_set_u64(q, WB_F_TARGET, uid) != WB_OK)) {
		wb_msg_free(q);
		q = NULL;
	}
	if ((rc = gw_call(g, GW_RELATION, q, &r, rep)) != WB_OK) {
		return rc;
	}
	wb_get_bool(r, WB_F_FOLLOWED, followed);
	wb_msg_free(r);
	return WB_OK;
}

int
gw_profile_fill(gw *g, uint64_t uid, uint64_t viewer, wb_obj *rep)
{
	uint64_t      following, followers;
	bool          followed = false;
	const wb_obj *users;
	size_t        n = 0;
	wb_obj       *q, *r;
	int           rc;

	if ((q = wb_request(WB_OP_USER_GET)) != NULL &&
	    wb_set_u64s(q, WB_F_UIDS, &uid, 1) != WB_OK) {
		wb_msg_free(q);
		q = NULL;
	}
	if ((rc = gw_call(g, GW_USER, q, &r, rep)) != WB_OK) {
		return rc;
	}
	if (!wb_get_objs(r, WB_F_USERS, &users, &n) || n == 0) {
		wb_msg_free(r);
		wb_reply_error(rep, WB_ENOUSER, NULL);
		return WB_ENOUSER;
	}
	if ((rc = gw_social_counts(g, uid, &following, &followers, rep)) != WB_OK ||
	    (viewer != 0 && viewer != uid &&
	        (rc = gw_social_follows(g, viewer, uid, &followed, rep)) != WB_OK)) {
		wb_msg_free(r);
		return rc;
	}
	wb_reset(rep);
	if ((rc = wb_reply_ok(rep)) != WB_OK || (rc = gw_copy_user(&users[0], rep)) != WB_OK ||
	    (rc = wb_set_u64(rep, WB_F_FOLLOWING, following)) != WB_OK ||
	    (rc = wb_set_u64(rep, WB_F_FOLLOWERS, followers)) != WB_OK ||
	    (viewer != 0 && viewer != uid &&
	        (rc = wb_set_bool(rep, WB_F_FOLLOWED, followed)) != WB_OK)) {
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
