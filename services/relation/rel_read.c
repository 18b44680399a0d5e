/*
 * rel_read.c - the read side: following and fans lists (paged by uid),
 * is-following, counts (this shard's part), and the event log.
 */
#include <string.h>

#include "rel_int.h"
#include "rt_log.h"
#include "rel_schema.h"

/*
 * rel_list pages through one row of follow (followees in uid order) or
 * fans (followers in (slot, uid) order, within this shard's slots and
 * the request's `slots`): the entries after the one of uid `after`, at
 * most limit of them, written straight into the reply array.  One extra
 * cell is read to know whether to give a next cursor (the last uid).
 */
static int
rel_list(rel_svc *r, int fam, const wb_obj *req, wb_obj *rep)
{
	uint64_t        uid = wb_u64(req, WB_F_UID, 0);
	uint64_t        limit;
	uint64_t        after = 0, *out;
	bool            has_after = wb_get_u64(req, WB_F_AFTER, &after);
	bool            fans = fam == REL_FAM_FANS;
	size_t          qlen = fans ? REL_FAN_QUAL : 8;
	uint8_t         row[8], qual[REL_FAN_QUAL];
	unsigned        lo = 0, hi = WB_SLOTS;
	const uint64_t *slots;
	size_t          nslots = 0;
	hb_scan_opts    so = { 0 };
	hb_scan        *s;
	hb_cell         c;
	size_t          n = 0;
	bool            more = false;
	int             rc;

	if ((rc = wb_page_limit(req, REL_LIST_DEFAULT, REL_LIST_MAX, &limit, rep)) != WB_OK) {
		return rc;
	}
	if (fans) {
		wb_shard_slots(r->shard, &lo, &hi);
		if (wb_get_u64s(req, WB_F_SLOTS, &slots, &nslots)) {
			if (nslots != 2 || slots[0] >= slots[1] || slots[1] > WB_SLOTS) {
				wb_reply_error(rep, WB_EINVAL,
				    "slots is a range [lo, hi) with 0 <= lo < hi <= %d", WB_SLOTS);
				return WB_EINVAL;
			}
			lo = slots[0] > lo ? (unsigned)slots[0] : lo;
			hi = slots[1] < hi ? (unsigned)slots[1] : hi;
		}
	}
	wb_reply_ok(rep);
	if ((out = wb_add_u64s(rep, WB_F_UIDS, limit)) == NULL) {
		return rel_fail(rep, WB_ENOMEM, NULL);
	}
	if (lo >= hi || (has_after && !fans && after == UINT64_MAX)) {
		wb_shrink(rep, WB_F_UIDS, 0);
		return WB_OK;
	}
	/* the first qualifier to read: past `after`, and not below lo */
	memset(qual, 0, sizeof(qual));
	if (fans) {
		qual[0] = (uint8_t)(lo >> 8);
		qual[1] = (uint8_t)lo;
		if (has_after && wb_slot(after) >= lo) {
			rel_fan_qual(qual, after);
			for (size_t i = qlen; i-- > 0 && ++qual[i] == 0;) {
			} /* its successor */
		}
	} else if (has_after) {
		hb_u64_be(qual, after + 1);
	}
	hb_scan_opts_id_row(&so, row, uid);
	so.start_qual = qual;
	so.start_qual_len = qlen;
	so.limit = limit + 1;
	if ((rc = hb_scan_open(&s, r->t, fam, &so)) != WB_OK) {
		return rel_fail(rep, rc, NULL);
	}
	while ((rc = hb_scan_next(s, &c)) == WB_OK) {
		const uint8_t *q = c.qual;
		if (c.qual_len != qlen) {
			rc = WB_ECORRUPT;
			break;
		}
		if (fans && ((unsigned)q[0] << 8 | q[1]) >= hi) {
			break; /* past the range */
		}
		if (n == limit) {
			more = true;
			break;
		}
		out[n++] = hb_be_u64(q + qlen - 8);
	}
	hb_scan_close(s);
	if (rc != WB_OK && rc != WB_EEND) {
		RT_ERRORF("list of %llu failed: %s %s", (unsigned long long)uid, wb_strerror(rc),
		    hb_last_error());
		return rel_fail(rep, rc, NULL);
	}
	wb_shrink(rep, WB_F_UIDS, n);
	if (more) {
		return wb_set_u64(rep, WB_F_NEXT, out[n - 1]);
	}
	return WB_OK;
}

/* rel_handle_following: rel.following {uid, after?, limit?} -> {uids, next?}. */
int
rel_handle_following(void *arg, const wb_obj *req, wb_obj *rep)
{
	return rel_list(arg, REL_FAM_FOLLOW, req, rep);
}

/* rel_handle_fans: rel.fans {uid, after?, limit?, slots?} -> {uids, next?}: this shard's fans. */
int
rel_handle_fans(void *arg, const wb_obj *req, wb_obj *rep)
{
	return rel_list(arg, REL_FAM_FANS, req, rep);
}

/*
 * rel_handle_followed: rel.followed {after?, limit?} -> {uids, next?,
 * total}: the users above `after` who have at least one fan, ascending
 * (one seek per user in fan: the rows are the followees), and total, the
 * store's estimate of the edges, for a rebuild's progress.
 */
int
rel_handle_followed(void *arg, const wb_obj *req, wb_obj *rep)
{
	rel_svc *r = arg;
	uint64_t limit, after = 0, *out, edges = 0, bytes = 0;
	bool     has_after = wb_get_u64(req, WB_F_AFTER, &after);
	size_t   n = 0;
	bool     more = false;
	int      rc;

	if ((rc = wb_page_limit(req, REL_FOLLOWED_DEFAULT, REL_FOLLOWED_MAX, &limit, rep)) !=
	    WB_OK) {
		return rc;
	}
	wb_reply_ok(rep);
	if ((out = wb_add_u64s(rep, WB_F_UIDS, limit)) == NULL) {
		return rel_fail(rep, WB_ENOMEM, NULL);
	}
	rc = has_after && after == UINT64_MAX ? WB_EEND : WB_OK;
	uint64_t next = has_after ? after + 1 : 0;
	while (rc == WB_OK) {
		uint64_t uid = 0;

		if ((rc = hb_next_id_row(r->t, REL_FAM_FANS, next, &uid)) != WB_OK) {
			break;
		}
		if (n == limit) {
			more = true;
			break;
		}
		out[n++] = uid;
		if (uid == UINT64_MAX) {
			break;
		}
		next = uid + 1;
	}
	if (rc != WB_OK && rc != WB_EEND) {
		RT_ERRORF("followed after %llu failed: %s %s", (unsigned long long)after,
		    wb_strerror(rc), hb_last_error());
		return rel_fail(rep, rc, NULL);
	}
	wb_shrink(rep, WB_F_UIDS, n);
	(void)hb_family_stats(r->t, REL_FAM_FANS, &bytes, &edges);
	if ((rc = wb_set_u64(rep, WB_F_TOTAL, edges)) == WB_OK && more) {
		rc = wb_set_u64(rep, WB_F_NEXT, out[n - 1]);
	}
	return rc;
}

/*
 * rel_handle_is_following: rel.is_following {uid, target} -> {followed,
 * blocking, blocked_by}: whether uid follows target, blocks target, and
 * is blocked by target (all three cells of uid's rows, on uid's shard).
 */
int
rel_handle_is_following(void *arg, const wb_obj *req, wb_obj *rep)
{
	rel_svc *r = arg;
	uint64_t uid = wb_u64(req, WB_F_UID, 0), target = wb_u64(req, WB_F_TARGET, 0);
	uint8_t  a[8], t[8];
	hb_cell *c;
	bool     blocking = false, blocked_by = false;
	int      rc, brc;

	hb_u64_be(a, uid);
	hb_u64_be(t, target);
	rc = hb_get(r->t, REL_FAM_FOLLOW, a, 8, t, 8, &c);
	if (rc == WB_OK) {
		hb_cell_free(c);
	} else if (rc != WB_ENOTFOUND) {
		return rel_fail(rep, rc, NULL);
	}
	if ((brc = rel_block_between(r, uid, target, &blocking, &blocked_by)) != WB_OK) {
		return rel_fail(rep, brc, NULL);
	}
	wb_reply_ok(rep);
	if ((brc = wb_set_bool(rep, WB_F_BLOCKING, blocking)) == WB_OK) {
		brc = wb_set_bool(rep, WB_F_BLOCKED_BY, blocked_by);
	}
	return brc == WB_OK ? wb_set_bool(rep, WB_F_FOLLOWED, rc == WB_OK) : brc;
}

/* rel_count reads one counter, clamping a (never expected) negative to 0. */
static int
rel_count(rel_svc *r, const uint8_t *row, const char *q, uint64_t *out)
{
	int64_t v = 0;
	int     rc;

	rc = hb_counter_get(r->t, REL_FAM_COUNT, row, 8, q, strlen(q), &v);
	*out = v > 0 ? (uint64_t)v : 0;
	if (rc == WB_OK && v < 0) {
		RT_ERRORF("counter %s of %llu is negative (%lld)", q,
		    (unsigned long long)hb_be_u64(row), (long long)v);
	}
	return rc;
}

/* rel_handle_counts: rel.counts {uids} -> {users: [{uid, following, followers}]}. */
int
rel_handle_counts(void *arg, const wb_obj *req, wb_obj *rep)
{
	rel_svc        *r = arg;
	const uint64_t *uids;
	size_t          n = 0;
	wb_obj         *recs = NULL;
	int             rc = WB_OK;

	if (!wb_get_u64s(req, WB_F_UIDS, &uids, &n)) {
		n = 0;
	}
	if (n > REL_COUNTS_MAX) {
		wb_reply_error(
		    rep, WB_EINVAL, "rel.counts takes at most %d uids, got %zu", REL_COUNTS_MAX, n);
		return WB_EINVAL;
	}
	wb_reply_ok(rep);
	if (n > 0 && (recs = wb_add_objs(rep, WB_F_USERS, n)) == NULL) {
		return rel_fail(rep, WB_ENOMEM, NULL);
	}
	for (size_t i = 0; i < n && rc == WB_OK; i++) {
		uint8_t  row[8];
		uint64_t following = 0, followers = 0;

		hb_u64_be(row, uids[i]);
		rc = rel_count(r, row, REL_Q_FOLLOWING, &following);
		if (rc == WB_OK) {
			rc = rel_count(r, row, REL_Q_FOLLOWERS, &followers);
		}
		if (rc == WB_OK) {
			rc = wb_set_u64(&recs[i], WB_F_UID, uids[i]);
		}
		if (rc == WB_OK) {
			rc = wb_set_u64(&recs[i], WB_F_FOLLOWING, following);
		}
		if (rc == WB_OK) {
			rc = wb_set_u64(&recs[i], WB_F_FOLLOWERS, followers);
		}
	}
	if (rc != WB_OK) {
		return rel_fail(rep, rc, NULL);
	}
	return WB_OK;
}

/* rel_handle_log: rel.log {from, limit?, consumer?, applied?} -> {events, last, first} (evlog_serve). */
int
rel_handle_log(void *arg, const wb_obj *req, wb_obj *rep)
{
	rel_svc *r = arg;

	return evlog_serve(r->log, req, rep);
}
