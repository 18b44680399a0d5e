/*
 * rel_erase.c - a deleted account's edges, erased on this shard from the
 * user service's "erase" event (evlog_sub.h; docs/architecture.md,
 * "Deleting an account").
 *
 * What a shard holds of account x (everything about a follower lives on
 * the follower's shard, rel_schema.h):
 *
 *   every shard   its fans f here: fans[x][slot f | f], follow[f][x],
 *                 count[f] "following", and x's part of "followers"
 *   x's shard     the users t x follows: follow[x][t], fans[t][slot x | x],
 *                 t's part of "followers" here, count[x] "following"
 *
 * Steps; each batch is atomic and a crash replays the event, which
 * finds only what is left:
 *
 *   0. x joins r->gone: a follow of x or by x is refused from now on,
 *      checked under the pair's stripe lock, and every stripe is taken
 *      and let go once, so a follow that passed the check before has
 *      committed by then; the known-users set is cleared (x no longer
 *      exists for the next user check);
 *   1. x's fans here, REL_ERASE_PAGE a batch, under their pairs' stripe
 *      locks: delete follow[f][x] and fans[x][..f], count[f] "following"
 *      -1 each, x's "followers" -k, and an "unfollow" {f, x} event each,
 *      so each fan's inbox loses x's posts as an unfollow's does (one row
 *      scan per fan, inbox_fanout.c);
 *   2. on x's shard, x's follows likewise: delete follow[x][t] and
 *      fans[t][..x], t's "followers" -1 each, x's "following" -k; no
 *      events: x's inbox goes whole at step 3;
 *   3. blocks: x's own block and pending rows (on x's shard), and every
 *      cell of others' rows that names x (block[o][way | x], bpend[o][x]),
 *      found by reading the shard's block and bpend families whole:
 *      blocks are few beside follows, and a cell about x is wherever o
 *      lives, with no index by x;
 *   4. delete count[x], and commit "erased" {x} in one batch with the
 *      consumer's position: the inbox drops x's row, into which nothing
 *      can come any more.
 *
 * Cells are deleted one by one (point deletes, not ranges) and each page
 * is read from where the last one ended, so a million fans cost a
 * million small deletes and no scan over what is already gone.
 */
#include <stdlib.h>
#include <string.h>

#include "rel_int.h"
#include "rel_schema.h"
#include "rt_log.h"
#include "wb_clock.h"
#include "wb_services.h"

#define REL_ERASE_PAGE 1000 /* edges a batch */

bool
rel_gone(rel_svc *r, uint64_t uid)
{
	return r->gone != NULL && rt_uidset_has(r->gone, uid, wb_now_ms());
}

/* rel_erase_lock takes the stripes of the pairs (a[i], b[i]) (one side fixed) in ascending order. */
static void
rel_erase_lock(rel_svc *r, bool *locked, const uint64_t *uids, size_t n, uint64_t x, bool fans)
{
	memset(locked, 0, REL_STRIPES * sizeof(*locked));
	for (size_t i = 0; i < n; i++) {
		locked[fans ? rel_stripe_of(uids[i], x) : rel_stripe_of(x, uids[i])] = true;
	}
	for (size_t i = 0; i < REL_STRIPES; i++) {
		if (locked[i]) {
			pthread_mutex_lock(&r->stripes[i]);
		}
	}
}

/* rel_erase_unlock lets go of what rel_erase_lock took. */
static void
rel_erase_unlock(rel_svc *r, const bool *locked)
{
	for (size_t i = REL_STRIPES; i-- > 0;) {
		if (locked[i]) {
			pthread_mutex_unlock(&r->stripes[i]);
		}
	}
}

/*
 * rel_erase_page reads up to REL_ERASE_PAGE cells of row x of fam (fans:
 * its fans here; follow: its followees) from the qualifier after *from
 * (the last one of the page before; none at first) into uids; *n their
 * count.
 */
static int
rel_erase_page(rel_svc *r, int fam, uint64_t x, uint8_t *from, size_t qlen, bool first,
    uint64_t *uids, size_t *n)
{
	uint8_t      row[8];
	hb_scan_opts so = { 0 };
	hb_scan     *s = NULL;
	hb_cell      c;
	int          rc;

	*n = 0;
	hb_u64_be(row, x);
	if (!first) {
		size_t i = qlen; /* the successor of the last qualifier read */
		while (i-- > 0 && ++from[i] == 0) {
		}
		if (i == SIZE_MAX) {
			return WB_OK; /* it was the largest there is */
		}
	}
	hb_scan_opts_id_row(&so, row, x);
	so.start_qual = first ? NULL : from;
	so.start_qual_len = first ? 0 : qlen;
	so.limit = REL_ERASE_PAGE;
	if ((rc = hb_scan_open(&s, r->t, fam, &so)) != WB_OK) {
		return rc;
	}
	while (*n < REL_ERASE_PAGE && (rc = hb_scan_next(s, &c)) == WB_OK) {
		if (c.qual_len != qlen) {
			rc = WB_ECORRUPT;
			break;
		}
		memcpy(from, c.qual, qlen);
		uids[(*n)++] = hb_be_u64((const uint8_t *)c.qual + qlen - 8);
	}
	hb_scan_close(s);
	return rc == WB_EEND ? WB_OK : rc;
}

/* rel_erase_event makes an event {type, uid, target} carrying the deletion's request id. */
static wb_obj *
rel_erase_event(wb_event type, uint64_t uid, uint64_t target)
{
	wb_obj *ev = wb_msg_new();

	if (ev != NULL && (wb_set_cstr(ev, WB_F_TYPE, wb_event_name(type)) != WB_OK ||
	                      wb_set_u64(ev, WB_F_UID, uid) != WB_OK ||
	                      (target != 0 && wb_set_u64(ev, WB_F_TARGET, target) != WB_OK) ||
	                      (wb_rid() != NULL && wb_set_cstr(ev, WB_F_RID, wb_rid()) != WB_OK))) {
		wb_msg_free(ev);
		ev = NULL;
	}
	return ev;
}

/* rel_erase_uid_cmp orders uids ascending, for qsort. */
static int
rel_erase_uid_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * rel_erase_edges removes the edges of one page, under their stripes:
 * fans (step 1: uids[i] follows x) or follows (step 2: x follows uids[i]),
 * each only if its follow cell is there, with the counts and (step 1) the
 * events, in one write.  The batch holds each family's cells in key
 * order (the fans cells in the page's order, the rest by uid), so each
 * memtable insert starts where the one before ended.
 */
static int
rel_erase_edges(rel_svc *r, hb_batch *b, uint64_t x, const uint64_t *uids, size_t n, bool fans)
{
	bool      locked[REL_STRIPES];
	wb_obj  **evs = fans ? calloc(n, sizeof(*evs)) : NULL;
	uint64_t *sorted = malloc(n * sizeof(*sorted));
	bool     *there = calloc(n, sizeof(*there));
	uint8_t   xb[8], ub[8], q[REL_FAN_QUAL];
	size_t    k = 0;
	int       rc = (fans && evs == NULL) || sorted == NULL || there == NULL ? WB_ENOMEM : WB_OK;
	int64_t   counted = 0;

	hb_u64_be(xb, x);
	rel_erase_lock(r, locked, uids, n, x, fans);
	if (rc == WB_OK) {
		memcpy(sorted, uids, n * sizeof(*sorted));
		qsort(sorted, n, sizeof(*sorted), rel_erase_uid_cmp);
	}
	/* which edges are there, read in key order; then the fans cells, in theirs */
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		const uint8_t *a = fans ? ub : xb, *t = fans ? xb : ub; /* a follows t */
		hb_cell       *c = NULL;

		hb_u64_be(ub, sorted[i]);
		rc = hb_get(r->t, REL_FAM_FOLLOW, a, 8, t, 8, &c);
		there[i] = rc == WB_OK;
		hb_cell_free(c);
		rc = rc == WB_ENOTFOUND ? WB_OK : rc;
	}
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		/* a fan cell goes even if (never expected) alone */
		if (fans) {
			rel_fan_qual(q, uids[i]);
			rc = hb_batch_delete_version(
			    b, r->t, REL_FAM_FANS, xb, 8, q, sizeof(q), REL_VERSION);
		} else {
			hb_u64_be(ub, uids[i]);
			rel_fan_qual(q, x);
			rc = hb_batch_delete_version(
			    b, r->t, REL_FAM_FANS, ub, 8, q, sizeof(q), REL_VERSION);
		}
	}
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		const uint8_t *a = fans ? ub : xb, *t = fans ? xb : ub;

		if (!there[i]) {
			continue;
		}
		hb_u64_be(ub, sorted[i]);
		rc = hb_batch_delete_version(b, r->t, REL_FAM_FOLLOW, a, 8, t, 8, REL_VERSION);
		if (rc == WB_OK) {
			/* the other side's count: a fan's following, or a followee's followers */
			rc = hb_batch_add(b, r->t, REL_FAM_COUNT, fans ? a : t, 8,
			    fans ? REL_Q_FOLLOWING : REL_Q_FOLLOWERS,
			    strlen(fans ? REL_Q_FOLLOWING : REL_Q_FOLLOWERS), -1);
		}
		if (rc == WB_OK && fans &&
		    (evs[k] = rel_erase_event(WB_EV_UNFOLLOW, sorted[i], x)) == NULL) {
			rc = WB_ENOMEM;
		}
		if (rc == WB_OK) {
			k += fans;
			counted++;
		}
	}
	if (rc == WB_OK && counted > 0) {
		rc = hb_batch_add(b, r->t, REL_FAM_COUNT, xb, 8,
		    fans ? REL_Q_FOLLOWERS : REL_Q_FOLLOWING,
		    strlen(fans ? REL_Q_FOLLOWERS : REL_Q_FOLLOWING), -counted);
	}
	if (rc == WB_OK) {
		rc = k > 0 ? evlog_commit_many(r->log, b, evs, k, NULL) : hb_write(r->t, b);
	}
	rel_erase_unlock(r, locked);
	if (rc == WB_OK) {
		atomic_fetch_add(&r->erased_edges, (unsigned long)counted);
	}
	for (size_t i = 0; i < k; i++) {
		wb_msg_free(evs[i]);
	}
	free(evs);
	free(sorted);
	free(there);
	hb_batch_clear(b);
	return rc;
}

/* rel_erase_row runs step 1 (fans) or 2 (follows) for x, page by page. */
static int
rel_erase_row(rel_svc *r, evlog_sub *s, uint64_t x, bool fans, uint64_t *edges)
{
	uint64_t *uids = malloc(REL_ERASE_PAGE * sizeof(*uids));
	uint8_t   from[REL_FAN_QUAL];
	size_t    qlen = fans ? REL_FAN_QUAL : 8, n = 0;
	hb_batch *b = NULL;
	int       rc = uids == NULL ? WB_ENOMEM : hb_batch_new(&b);

	for (bool first = true; rc == WB_OK; first = false) {
		rc = rel_erase_page(
		    r, fans ? REL_FAM_FANS : REL_FAM_FOLLOW, x, from, qlen, first, uids, &n);
		if (rc != WB_OK || n == 0) {
			break;
		}
		if ((rc = rel_erase_edges(r, b, x, uids, n, fans)) == WB_OK) {
			*edges += n;
		}
		if (rc == WB_OK && s != NULL && evlog_sub_stopping(s)) {
			rc = WB_ECLOSED; /* the next start goes on from what is left */
		}
		if (n < REL_ERASE_PAGE) {
			break;
		}
	}
	hb_batch_free(b);
	free(uids);
	return rc;
}

/* rel_erase_named adds to b the delete of every cell of fam whose qualifier ends with x's uid. */
static int
rel_erase_named(rel_svc *r, hb_batch *b, int fam, uint64_t x, uint64_t *n)
{
	hb_scan *sc = NULL;
	hb_cell  c;
	int      rc = hb_scan_open(&sc, r->t, fam, NULL);

	while (rc == WB_OK && (rc = hb_scan_next(sc, &c)) == WB_OK) {
		if (c.qual_len >= 8 && hb_be_u64((const uint8_t *)c.qual + c.qual_len - 8) == x) {
			rc = hb_batch_delete_column(
			    b, r->t, fam, c.row, c.row_len, c.qual, c.qual_len, HB_LATEST);
			(*n)++;
		}
	}
	hb_scan_close(sc);
	return rc == WB_EEND ? WB_OK : rc;
}

/* rel_erase_blocks adds to b the delete of every block cell of x or about x on this shard. */
static int
rel_erase_blocks(rel_svc *r, hb_batch *b, uint64_t x, uint64_t *n)
{
	uint8_t xb[8];
	int     rc;

	hb_u64_be(xb, x);
	if ((rc = hb_batch_delete_row(b, r->t, REL_FAM_BLOCK, xb, 8)) != WB_OK ||
	    (rc = hb_batch_delete_row(b, r->t, REL_FAM_BPEND, xb, 8)) != WB_OK ||
	    (rc = rel_erase_named(r, b, REL_FAM_BLOCK, x, n)) != WB_OK) {
		return rc;
	}
	return rel_erase_named(r, b, REL_FAM_BPEND, x, n);
}

/* rel_erase_account erases everything of x on this shard; b (the position) goes in the last write. */
static int
rel_erase_account(rel_svc *r, evlog_sub *s, uint64_t x, hb_batch *b)
{
	uint8_t  xb[8];
	uint64_t fans = 0, follows = 0, blocks = 0, t0 = wb_mono_us();
	wb_obj  *ev = NULL;
	int      rc = rt_uidset_add(r->gone, x, wb_now_ms());

	/* step 0: every follow that passed its check before has committed */
	for (size_t i = 0; rc == WB_OK && i < REL_STRIPES; i++) {
		pthread_mutex_lock(&r->stripes[i]);
		pthread_mutex_unlock(&r->stripes[i]);
	}
	rel_known_clear(&r->known);
	if (rc == WB_OK) {
		rc = rel_erase_row(r, s, x, true, &fans);
	}
	if (rc == WB_OK && wb_shard_owns(r->shard, wb_slot(x))) {
		rc = rel_erase_row(r, s, x, false, &follows);
	}
	hb_u64_be(xb, x);
	if (rc == WB_OK) {
		rc = rel_erase_blocks(r, b, x, &blocks);
	}
	if (rc == WB_OK) {
		rc = hb_batch_delete_row(b, r->t, REL_FAM_COUNT, xb, 8);
	}
	if (rc == WB_OK && (ev = rel_erase_event(WB_EV_ERASED, x, 0)) == NULL) {
		rc = WB_ENOMEM;
	}
	if (rc == WB_OK) {
		rc = evlog_commit(r->log, b, ev, NULL);
	}
	wb_msg_free(ev);
	if (rc == WB_OK) {
		RT_INFOF("uid %llu erased here: %llu fans, %llu follows, %llu block cells, %.1f ms",
		    (unsigned long long)x, (unsigned long long)fans, (unsigned long long)follows,
		    (unsigned long long)blocks, (double)(wb_mono_us() - t0) / 1000.0);
	}
	return rc;
}

int
rel_erase_apply(void *arg, evlog_sub *s, const wb_obj *ev, hb_batch *b)
{
	rel_svc    *r = arg;
	const char *type = wb_str(ev, WB_F_TYPE, "");
	const char *rid = wb_str(ev, WB_F_RID, NULL);
	uint64_t    x = wb_u64(ev, WB_F_UID, 0);
	int         rc;

	if (strcmp(type, wb_event_name(WB_EV_ERASE)) != 0 || x == 0) {
		return hb_write(r->t, b); /* not for us: only the position moves */
	}
	const char *prev = wb_rid_swap(rid != NULL && wb_rid_ok(rid, strlen(rid)) ? rid : NULL);
	rc = rel_erase_account(r, s, x, b);
	wb_rid_swap(prev);
	return rc;
}
