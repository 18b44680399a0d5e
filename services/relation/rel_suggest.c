/*
 * rel_suggest.c - what the gateway's suggestions read from relation
 * (gw_suggest.c): several users' followees at once, and which of a list
 * of users a reader has nothing to do with yet.
 *
 *   rel.following_many {uids, after?, limit?} -> {users: [{uid, uids}]}
 *       each uid's followees after `after`, wrapping round to its first
 *       ones, at most limit each: a window of limit followees that starts
 *       where the caller chose (a random point), so that large lists are
 *       sampled, not always read from their first uid.  Every uid must
 *       be this shard's (the route's owner field).
 *
 *   rel.unrelated {uid, uids} -> {uids}
 *       those of uids that are not uid, that uid does not follow, and
 *       with no block between them either way: three point reads each
 *       (uid's row of follow, and two cells of uid's row of block).
 */
#include <string.h>

#include "rel_int.h"
#include "rel_schema.h"
#include "rt_log.h"

#define REL_MANY_UIDS     256  /* uids per rel.following_many */
#define REL_MANY_DEFAULT  100  /* followees per uid when no limit is given */
#define REL_MANY_MAX      1000 /* most followees per uid */
#define REL_UNRELATED_MAX 1000 /* uids per rel.unrelated */

/* rel_suggest_run reads uid's followees in [from, to) (to 0: to the row's end) into out, up to
 * room of them; *n gets how many. */
static int
rel_suggest_run(
    rel_svc *r, uint64_t uid, uint64_t from, uint64_t to, uint64_t *out, size_t room, size_t *n)
{
	uint8_t      row[8], start[8];
	hb_scan_opts so = { 0 };
	hb_scan     *s;
	hb_cell      c;
	int          rc;

	*n = 0;
	if (room == 0) {
		return WB_OK;
	}
	hb_u64_be(start, from);
	hb_scan_opts_id_row(&so, row, uid);
	so.start_qual = start;
	so.start_qual_len = sizeof(start);
	so.limit = room;
	if ((rc = hb_scan_open(&s, r->t, REL_FAM_FOLLOW, &so)) != WB_OK) {
		return rc;
	}
	while (*n < room && (rc = hb_scan_next(s, &c)) == WB_OK) {
		if (c.qual_len != 8) {
			rc = WB_ECORRUPT;
			break;
		}
		uint64_t f = hb_be_u64(c.qual);
		if (to != 0 && f >= to) {
			rc = WB_EEND;
			break;
		}
		out[(*n)++] = f;
	}
	hb_scan_close(s);
	return rc == WB_EEND ? WB_OK : rc;
}

/* rel_handle_following_many: rel.following_many {uids, after?, limit?} -> {users}. */
int
rel_handle_following_many(void *arg, const wb_obj *req, wb_obj *rep)
{
	rel_svc        *r = arg;
	const uint64_t *uids = NULL;
	size_t          n = 0;
	uint64_t        limit, after = wb_u64(req, WB_F_AFTER, 0);
	uint64_t        from = after == UINT64_MAX ? 0 : after + 1;
	wb_obj         *recs = NULL;
	int             rc;

	(void)wb_get_u64s(req, WB_F_UIDS, &uids, &n);
	if (n > REL_MANY_UIDS) {
		wb_reply_error(
		    rep, WB_EINVAL, "rel.following_many takes at most %d uids", REL_MANY_UIDS);
		return WB_EINVAL;
	}
	if ((rc = wb_page_limit(req, REL_MANY_DEFAULT, REL_MANY_MAX, &limit, rep)) != WB_OK) {
		return rc;
	}
	wb_reply_ok(rep);
	if (n > 0 && (recs = wb_add_objs(rep, WB_F_USERS, n)) == NULL) {
		return rel_fail(rep, WB_ENOMEM, NULL);
	}
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		uint64_t *out;
		size_t    got = 0, more = 0;

		if ((rc = wb_set_u64(&recs[i], WB_F_UID, uids[i])) != WB_OK ||
		    (out = wb_add_u64s(&recs[i], WB_F_UIDS, limit)) == NULL) {
			rc = rc != WB_OK ? rc : WB_ENOMEM;
			break;
		}
		rc = rel_suggest_run(r, uids[i], from, 0, out, limit, &got);
		if (rc == WB_OK && got < limit && from > 0) { /* round to the row's start */
			rc = rel_suggest_run(r, uids[i], 0, from, out + got, limit - got, &more);
		}
		wb_shrink(&recs[i], WB_F_UIDS, got + more);
	}
	if (rc != WB_OK) {
		RT_ERRORF("following_many failed: %s %s", wb_strerror(rc), hb_last_error());
		return rel_fail(rep, rc, NULL);
	}
	return WB_OK;
}

/* rel_handle_unrelated: rel.unrelated {uid, uids} -> {uids}. */
int
rel_handle_unrelated(void *arg, const wb_obj *req, wb_obj *rep)
{
	rel_svc        *r = arg;
	uint64_t        uid = wb_u64(req, WB_F_UID, 0), *out;
	const uint64_t *uids = NULL;
	size_t          n = 0, k = 0;
	uint8_t         a[8];
	int             rc = WB_OK;

	(void)wb_get_u64s(req, WB_F_UIDS, &uids, &n);
	if (n > REL_UNRELATED_MAX) {
		wb_reply_error(
		    rep, WB_EINVAL, "rel.unrelated takes at most %d uids", REL_UNRELATED_MAX);
		return WB_EINVAL;
	}
	wb_reply_ok(rep);
	if ((out = wb_add_u64s(rep, WB_F_UIDS, n)) == NULL && n > 0) {
		return rel_fail(rep, WB_ENOMEM, NULL);
	}
	hb_u64_be(a, uid);
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		uint8_t  t[8];
		hb_cell *c;
		bool     blocking = false, blocked_by = false;

		if (uids[i] == uid) {
			continue;
		}
		hb_u64_be(t, uids[i]);
		rc = hb_get(r->t, REL_FAM_FOLLOW, a, 8, t, 8, &c);
		if (rc == WB_OK) {
			hb_cell_free(c);
			continue; /* followed */
		}
		if (rc != WB_ENOTFOUND) {
			break;
		}
		if ((rc = rel_block_between(r, uid, uids[i], &blocking, &blocked_by)) == WB_OK &&
		    !blocking && !blocked_by) {
			out[k++] = uids[i];
		}
	}
	if (rc != WB_OK) {
		RT_ERRORF("unrelated of %llu failed: %s %s", (unsigned long long)uid,
		    wb_strerror(rc), hb_last_error());
		return rel_fail(rep, rc, NULL);
	}
	wb_shrink(rep, WB_F_UIDS, k);
	return WB_OK;
}
