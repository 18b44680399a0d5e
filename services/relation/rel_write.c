/*
 * rel_write.c - follow and unfollow, and the edge helpers a block uses (rel_block.c).
 *
 * An edge change is one atomic batch through the event log, on a's shard
 * (every cell of it is about the follower a, rel_schema.h):
 *
 *   follow(a, b):  put follow[a][b], put fans[b][slot(a) a],
 *                  count[a]["following"] += 1, count[b]["followers"] += 1,
 *                  log[seq] = {type "follow", uid a, target b}
 *
 * and the mirror image for unfollow.  The existence check of follow[a][b]
 * and the commit run under the pair's stripe lock, so concurrent follows
 * and unfollows of one pair alternate cleanly and the counters never
 * drift.  Stripes (not one lock) let different pairs do their reads and
 * their user checks in parallel; evlog_commit serializes the writes
 * themselves.  A batched follow (bulk setup) would call rel_edge_apply
 * once per pair, or take several stripes in ascending order.
 *
 * A follow is refused (BLOCKED) while a block stands between the two
 * either way: both ways are cells of a's own row in `block`, written
 * under the same stripe (rel_block.c), so a block and a follow of one
 * pair are ordered too.
 */
#include <string.h>

#include "rel_int.h"
#include "rt_log.h"
#include "rel_schema.h"
#include "wb_services.h"

pthread_mutex_t *
rel_stripe(rel_svc *r, uint64_t uid, uint64_t target)
{
	uint64_t h = uid * UINT64_C(0x9E3779B97F4A7C15) ^ target;

	h ^= h >> 29;
	h *= UINT64_C(0xBF58476D1CE4E5B9);
	h ^= h >> 32;
	return &r->stripes[h % REL_STRIPES];
}

void
rel_lock2(pthread_mutex_t *a, pthread_mutex_t *b)
{
	if (a == b) {
		pthread_mutex_lock(a);
	} else {
		pthread_mutex_lock(a < b ? a : b);
		pthread_mutex_lock(a < b ? b : a);
	}
}

void
rel_unlock2(pthread_mutex_t *a, pthread_mutex_t *b)
{
	pthread_mutex_unlock(a);
	if (a != b) {
		pthread_mutex_unlock(b);
	}
}

/* rel_edge_exists tells whether uid follows target. */
static int
rel_edge_exists(rel_svc *r, const uint8_t *a, const uint8_t *b, bool *exists)
{
	hb_cell *c;
	int      rc;

	rc = hb_get(r->t, REL_FAM_FOLLOW, a, 8, b, 8, &c);
	if (rc == WB_OK) {
		hb_cell_free(c);
		*exists = true;
	} else if (rc == WB_ENOTFOUND) {
		*exists = false;
		rc = WB_OK;
	}
	return rc;
}

/* rel_edge_batch adds the cells of one edge change to b. */
static int
rel_edge_batch(rel_svc *r, hb_batch *b, const uint8_t *a, const uint8_t *t, bool follow)
{
	int64_t d = follow ? 1 : -1;
	uint8_t fq[REL_FAN_QUAL];
	int     rc;

	if (follow) {
		rc = hb_batch_put(b, r->t, REL_FAM_FOLLOW, a, 8, t, 8, REL_VERSION, "", 0);
		if (rc == WB_OK) {
			rel_fan_qual(fq, hb_be_u64(a));
			rc = hb_batch_put(
			    b, r->t, REL_FAM_FANS, t, 8, fq, sizeof(fq), REL_VERSION, "", 0);
		}
	} else {
		rc = hb_batch_delete_column(b, r->t, REL_FAM_FOLLOW, a, 8, t, 8, HB_LATEST);
		if (rc == WB_OK) {
			rel_fan_qual(fq, hb_be_u64(a));
			rc = hb_batch_delete_column(
			    b, r->t, REL_FAM_FANS, t, 8, fq, sizeof(fq), HB_LATEST);
		}
	}
	if (rc == WB_OK) {
		rc = hb_batch_add(
		    b, r->t, REL_FAM_COUNT, a, 8, REL_Q_FOLLOWING, strlen(REL_Q_FOLLOWING), d);
	}
	if (rc == WB_OK) {
		rc = hb_batch_add(
		    b, r->t, REL_FAM_COUNT, t, 8, REL_Q_FOLLOWERS, strlen(REL_Q_FOLLOWERS), d);
	}
	return rc;
}

/* rel_edge_event makes the follow or unfollow event of (uid, target) in *out (NULL on error). */
static int
rel_edge_event(uint64_t uid, uint64_t target, bool follow, wb_obj **out)
{
	wb_obj *ev = wb_msg_new();
	int     rc;

	*out = NULL;
	if (ev == NULL) {
		return WB_ENOMEM;
	}
	if ((rc = wb_set_cstr(
	         ev, WB_F_TYPE, wb_event_name(follow ? WB_EV_FOLLOW : WB_EV_UNFOLLOW))) != WB_OK ||
	    (rc = wb_set_u64(ev, WB_F_UID, uid)) != WB_OK ||
	    (rc = wb_set_u64(ev, WB_F_TARGET, target)) != WB_OK ||
	    (wb_rid() != NULL && (rc = wb_set_cstr(ev, WB_F_RID, wb_rid())) != WB_OK)) {
		wb_msg_free(ev);
		return rc;
	}
	*out = ev;
	return WB_OK;
}

int
rel_edge_drop(rel_svc *r, hb_batch *b, uint64_t uid, uint64_t target, wb_obj **ev)
{
	uint8_t a[8], t[8];
	bool    exists;
	int     rc;

	*ev = NULL;
	hb_u64_be(a, uid);
	hb_u64_be(t, target);
	if ((rc = rel_edge_exists(r, a, t, &exists)) != WB_OK || !exists) {
		return rc;
	}
	if ((rc = rel_edge_batch(r, b, a, t, false)) != WB_OK) {
		return rc;
	}
	return rel_edge_event(uid, target, false, ev);
}

int
rel_commit(rel_svc *r, hb_batch *b, wb_obj *const *evs, size_t n)
{
	int rc = n > 0 ? evlog_commit_many(r->log, b, evs, n, NULL) : hb_write(r->t, b);

	hb_batch_clear(b);
	return rc;
}

/*
 * rel_edge_apply makes uid follow (or stop following) target, if it does
 * not already; *seq is the event's seq, or 0 when nothing changed.  b is
 * an empty batch the caller owns (cleared again on return).  A follow
 * across a block is WB_EBLOCKED, with *why saying which way.
 */
static int
rel_edge_apply(rel_svc *r, hb_batch *b, uint64_t uid, uint64_t target, bool follow, uint64_t *seq,
    const char **why)
{
	pthread_mutex_t *mu = rel_stripe(r, uid, target);
	uint8_t          a[8], t[8];
	bool             exists, blocking = false, blocked_by = false;
	wb_obj          *ev = NULL;
	int              rc;

	*seq = 0;
	hb_u64_be(a, uid);
	hb_u64_be(t, target);
	pthread_mutex_lock(mu);
	if (follow && (rel_gone(r, uid) || rel_gone(r, target))) {
		rc = WB_ENOUSER; /* deleted after the user check: rel_erase.c */
		goto out;
	}
	rc = rel_edge_exists(r, a, t, &exists);
	if (rc != WB_OK || exists == follow) {
		goto out; /* error, or already as asked: nothing to do */
	}
	if (follow && (rc = rel_block_between(r, uid, target, &blocking, &blocked_by)) != WB_OK) {
		goto out;
	}
	if (blocking || blocked_by) {
		*why = blocking ? "you block this user: unblock them to follow them"
		                : "this user blocks you: you cannot follow them";
		rc = WB_EBLOCKED;
		goto out;
	}
	if ((rc = rel_edge_batch(r, b, a, t, follow)) != WB_OK ||
	    (rc = rel_edge_event(uid, target, follow, &ev)) != WB_OK) {
		goto out;
	}
	rc = evlog_commit(r->log, b, ev, seq);
out:
	pthread_mutex_unlock(mu);
	wb_msg_free(ev);
	hb_batch_clear(b);
	if (rc == WB_OK && *seq != 0) {
		rel_popular_note(r, target);
	}
	return rc;
}

/* rel_handle_edge serves rel.follow and rel.unfollow. */
static int
rel_handle_edge(rel_svc *r, const wb_obj *req, wb_obj *rep, bool follow)
{
	uint64_t    uids[2] = { wb_u64(req, WB_F_UID, 0), wb_u64(req, WB_F_TARGET, 0) };
	uint64_t    seq;
	hb_batch   *b;
	const char *why = NULL;
	int         rc;

	if (uids[0] == uids[1]) {
		return rel_fail(rep, WB_ESELF, follow ? NULL : "cannot unfollow yourself");
	}
	/* unfollow needs no user check: an edge to a missing user cannot exist */
	if (follow && (rc = rel_users_exist(r, uids, 2)) != WB_OK) {
		return rel_fail(rep, rc, NULL);
	}
	if ((rc = hb_batch_new(&b)) != WB_OK) {
		return rel_fail(rep, rc, NULL);
	}
	rc = rel_edge_apply(r, b, uids[0], uids[1], follow, &seq, &why);
	hb_batch_free(b);
	if (rc == WB_EBLOCKED || rc == WB_ENOUSER) {
		return rel_fail(rep, rc, why);
	}
	if (rc != WB_OK) {
		RT_ERRORF("%s %llu -> %llu failed: %s %s", follow ? "follow" : "unfollow",
		    (unsigned long long)uids[0], (unsigned long long)uids[1], wb_strerror(rc),
		    hb_last_error());
		return rel_fail(rep, rc, NULL);
	}
	return wb_reply_ok(rep);
}

/* rel_handle_follow: rel.follow {uid, target} -> {}; idempotent. */
int
rel_handle_follow(void *arg, const wb_obj *req, wb_obj *rep)
{
	return rel_handle_edge(arg, req, rep, true);
}

/* rel_handle_unfollow: rel.unfollow {uid, target} -> {}; idempotent. */
int
rel_handle_unfollow(void *arg, const wb_obj *req, wb_obj *rep)
{
	return rel_handle_edge(arg, req, rep, false);
}
