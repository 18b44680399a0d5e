/*
 * rel_block.c - blocks: rel.block, rel.unblock, rel.blocks and
 * rel.block_peer, and the block cells every follow consults.
 *
 * As on Mastodon, a block of b by a ends the follows between them both
 * ways, refuses a new follow either way while it stands, and hides each
 * one's posts from the other (the gateway: docs/http-api.md).  The
 * cells of a pair live on each user's own shard, like everything else
 * about a user (rel_schema.h, `block`):
 *
 *   a's shard:  block[a][out|b] = (on, gen)    drop a -> b    bpend[a][b] = gen
 *   b's shard:  block[b][in|a]  = (on, gen)    drop b -> a
 *
 * rel.block on a's shard writes a's side in one batch under the pair's
 * stripe: a's cell with the pair's next gen, the end of a's follow of b
 * (cells, counts and the unfollow event the inbox purges by), and a
 * pending cell naming the gen b's shard must take.  Then it hands b's
 * side to b's shard at once (rel_outbox_push: rel.block_peer {uid b,
 * target a, seq gen, blocking}), which writes b's cell and ends b's
 * follow of a the same way, under the same pair's stripe there; once
 * that shard has answered, the pending cell goes.  If it cannot answer
 * (down, cut off), the block is acknowledged all the same: a's side is
 * durable, and the outbox thread (rel_outbox.c) sends every pending cell
 * again until it is taken, after a restart too.  rel.block_peer applies
 * a gen only above the one it holds, so a late or repeated push never
 * undoes a later change.  When both are on one shard, both sides are one
 * batch under both stripes, with no pending cell.
 *
 * Until b's shard has taken it, b may still follow a (the follow is
 * checked on b's shard): the push then ends that follow too, so no
 * follow outlives the block either way.
 */
#include <stdlib.h>
#include <string.h>

#include "rel_int.h"
#include "rel_schema.h"
#include "rt_log.h"

int
rel_block_get(
    rel_svc *r, uint64_t uid, unsigned way, uint64_t other, bool *on, uint64_t *gen, bool *found)
{
	uint8_t  row[8], q[REL_BLOCK_QUAL];
	hb_cell *c;
	int      rc;

	*on = *found = false;
	*gen = 0;
	hb_u64_be(row, uid);
	rel_block_qual(q, way, other);
	rc = hb_get(r->t, REL_FAM_BLOCK, row, 8, q, sizeof(q), &c);
	if (rc == WB_ENOTFOUND) {
		return WB_OK;
	}
	if (rc != WB_OK) {
		return rc;
	}
	if (c->value_len != REL_BLOCK_VAL) {
		rc = WB_ECORRUPT;
	} else {
		const uint8_t *v = c->value;
		*on = v[0] != 0;
		*gen = hb_be_u64(v + 1);
		*found = true;
	}
	hb_cell_free(c);
	return rc;
}

int
rel_block_put(
    rel_svc *r, hb_batch *b, uint64_t uid, unsigned way, uint64_t other, bool on, uint64_t gen)
{
	uint8_t row[8], q[REL_BLOCK_QUAL], v[REL_BLOCK_VAL];

	hb_u64_be(row, uid);
	rel_block_qual(q, way, other);
	v[0] = on ? 1 : 0;
	hb_u64_be(v + 1, gen);
	return hb_batch_put(
	    b, r->t, REL_FAM_BLOCK, row, 8, q, sizeof(q), REL_VERSION, v, sizeof(v));
}

int
rel_block_between(rel_svc *r, uint64_t uid, uint64_t other, bool *blocking, bool *blocked_by)
{
	uint64_t gen;
	bool     found;
	int      rc = rel_block_get(r, uid, REL_BLOCK_OUT, other, blocking, &gen, &found);

	if (rc == WB_OK) {
		rc = rel_block_get(r, uid, REL_BLOCK_IN, other, blocked_by, &gen, &found);
	}
	return rc;
}

/* rel_block_pend adds to b the pending cell (blocker, blocked) -> gen. */
static int
rel_block_pend(rel_svc *r, hb_batch *b, uint64_t blocker, uint64_t blocked, uint64_t gen)
{
	uint8_t row[8], q[8], v[8];

	hb_u64_be(row, blocker);
	hb_u64_be(q, blocked);
	hb_u64_be(v, gen);
	return hb_batch_put(b, r->t, REL_FAM_BPEND, row, 8, q, 8, REL_VERSION, v, sizeof(v));
}

/* rel_block_drop ends uid's follow of target in b, if there is one, its event going into evs. */
static int
rel_block_drop(rel_svc *r, hb_batch *b, uint64_t uid, uint64_t target, wb_obj **evs, size_t *n)
{
	int rc = rel_edge_drop(r, b, uid, target, &evs[*n]);

	if (rc == WB_OK && evs[*n] != NULL) {
		(*n)++;
	}
	return rc;
}

/*
 * rel_block_change sets a's block of b to on: a's side, and b's side too
 * when b is a user of this shard, else the pending cell for b's shard;
 * *pushed is true when b's shard must be told.  Nothing changes when the
 * block already is as asked.
 */
static int
rel_block_change(rel_svc *r, uint64_t a, uint64_t b, bool on, bool *push)
{
	bool             here = wb_shard_owns(r->shard, wb_slot(b));
	pthread_mutex_t *ab = rel_stripe(r, a, b), *ba = here ? rel_stripe(r, b, a) : ab;
	wb_obj          *evs[2] = { NULL, NULL };
	size_t           nev = 0;
	uint64_t         gen;
	bool             now, found;
	hb_batch        *batch;
	int              rc;

	*push = false;
	if ((rc = hb_batch_new(&batch)) != WB_OK) {
		return rc;
	}
	rel_lock2(ab, ba);
	rc = rel_block_get(r, a, REL_BLOCK_OUT, b, &now, &gen, &found);
	if (rc != WB_OK || now == on) {
		/* already so; a pending cell left by a failed push is pushed again */
		*push = rc == WB_OK && !here && found;
		goto out;
	}
	gen++;
	if ((rc = rel_block_put(r, batch, a, REL_BLOCK_OUT, b, on, gen)) != WB_OK ||
	    (on && (rc = rel_block_drop(r, batch, a, b, evs, &nev)) != WB_OK)) {
		goto out;
	}
	if (here) {
		rc = rel_block_put(r, batch, b, REL_BLOCK_IN, a, on, gen);
		if (rc == WB_OK && on) {
			rc = rel_block_drop(r, batch, b, a, evs, &nev);
		}
	} else {
		rc = rel_block_pend(r, batch, a, b, gen);
	}
	if (rc == WB_OK) {
		rc = rel_commit(r, batch, evs, nev);
		*push = rc == WB_OK && !here;
	}
out:
	rel_unlock2(ab, ba);
	hb_batch_clear(batch);
	hb_batch_free(batch);
	for (size_t i = 0; i < nev; i++) {
		wb_msg_free(evs[i]);
	}
	if (rc == WB_OK && nev > 0) {
		rel_popular_note(r, b);
		if (here) {
			rel_popular_note(r, a);
		}
	}
	return rc;
}

/* rel_block_handle serves rel.block and rel.unblock. */
static int
rel_block_handle(rel_svc *r, const wb_obj *req, wb_obj *rep, bool on)
{
	uint64_t uids[2] = { wb_u64(req, WB_F_UID, 0), wb_u64(req, WB_F_TARGET, 0) };
	bool     push = false;
	int      rc;

	if (uids[0] == uids[1]) {
		return rel_fail(
		    rep, WB_EINVAL, on ? "cannot block yourself" : "cannot unblock yourself");
	}
	/* an unblock needs no user check: a block of a missing user cannot exist */
	if (on && (rc = rel_users_exist(r, uids, 2)) != WB_OK) {
		return rel_fail(rep, rc, NULL);
	}
	if ((rc = rel_block_change(r, uids[0], uids[1], on, &push)) != WB_OK) {
		RT_ERRORF("%s %llu -> %llu failed: %s %s", on ? "block" : "unblock",
		    (unsigned long long)uids[0], (unsigned long long)uids[1], wb_strerror(rc),
		    hb_last_error());
		return rel_fail(rep, rc, NULL);
	}
	/* the other shard now, so that it usually holds its side before the reply;
	 * if it cannot, the block stands here and the outbox keeps trying */
	if (push && (rc = rel_outbox_push(r, uids[0], uids[1])) != WB_OK) {
		RT_WARNF("%s %llu -> %llu: the other user's shard has not taken it yet (%s); "
		         "sent again later",
		    on ? "block" : "unblock", (unsigned long long)uids[0],
		    (unsigned long long)uids[1], wb_strerror(rc));
		rel_outbox_wake(r);
	}
	return wb_reply_ok(rep);
}

/* rel_handle_block: rel.block {uid, target} -> {}: uid blocks target; idempotent. */
int
rel_handle_block(void *arg, const wb_obj *req, wb_obj *rep)
{
	return rel_block_handle(arg, req, rep, true);
}

/* rel_handle_unblock: rel.unblock {uid, target} -> {}: uid lifts its block; idempotent. */
int
rel_handle_unblock(void *arg, const wb_obj *req, wb_obj *rep)
{
	return rel_block_handle(arg, req, rep, false);
}

/*
 * rel_handle_block_peer: rel.block_peer {uid, target, seq, blocking} ->
 * {}: target (a user of another shard) blocks uid (blocking) or no longer
 * does, as of target's gen seq.  A gen at or below the one held changes
 * nothing (a push repeated, or overtaken by a later one).
 */
int
rel_handle_block_peer(void *arg, const wb_obj *req, wb_obj *rep)
{
	rel_svc         *r = arg;
	uint64_t         uid = wb_u64(req, WB_F_UID, 0), target = wb_u64(req, WB_F_TARGET, 0);
	uint64_t         gen = wb_u64(req, WB_F_SEQ, 0), held;
	bool             on = false, now, found;
	pthread_mutex_t *mu = rel_stripe(r, uid, target);
	wb_obj          *evs[1] = { NULL };
	size_t           nev = 0;
	hb_batch        *b;
	int              rc;

	(void)wb_get_bool(req, WB_F_BLOCKING, &on);
	if (uid == target || gen == 0) {
		return rel_fail(rep, WB_EINVAL, "a block is between two users, with a gen from 1");
	}
	if (rel_gone(r, uid) || rel_gone(r, target)) {
		return wb_reply_ok(rep); /* a deleted account's: its cells are erased, none made */
	}
	if ((rc = hb_batch_new(&b)) != WB_OK) {
		return rel_fail(rep, rc, NULL);
	}
	pthread_mutex_lock(mu);
	rc = rel_block_get(r, uid, REL_BLOCK_IN, target, &now, &held, &found);
	if (rc == WB_OK && (!found || gen > held)) {
		rc = rel_block_put(r, b, uid, REL_BLOCK_IN, target, on, gen);
		if (rc == WB_OK && on) {
			rc = rel_block_drop(r, b, uid, target, evs, &nev);
		}
		if (rc == WB_OK) {
			rc = rel_commit(r, b, evs, nev);
		}
	}
	pthread_mutex_unlock(mu);
	hb_batch_clear(b);
	hb_batch_free(b);
	wb_msg_free(evs[0]);
	if (rc != WB_OK) {
		RT_ERRORF("block of %llu by %llu (gen %llu) failed: %s %s", (unsigned long long)uid,
		    (unsigned long long)target, (unsigned long long)gen, wb_strerror(rc),
		    hb_last_error());
		return rel_fail(rep, rc, NULL);
	}
	if (nev > 0) {
		rel_popular_note(r, target);
	}
	return wb_reply_ok(rep);
}

/*
 * rel_handle_blocks: rel.blocks {uid, after?, limit?} -> {uids, next?}:
 * whom uid blocks, in uid order, after `after`: the way-0 run of uid's
 * row, skipping lifted blocks (a cell per pair ever blocked, so a page
 * reads at most that many more).
 */
int
rel_handle_blocks(void *arg, const wb_obj *req, wb_obj *rep)
{
	rel_svc     *r = arg;
	uint64_t     uid = wb_u64(req, WB_F_UID, 0), after = 0, limit, *out;
	bool         has_after = wb_get_u64(req, WB_F_AFTER, &after), more = false;
	uint8_t      row[8], start[REL_BLOCK_QUAL], way = REL_BLOCK_OUT;
	hb_scan_opts so = { 0 };
	hb_scan     *s;
	hb_cell      c;
	size_t       n = 0;
	int          rc;

	if ((rc = wb_page_limit(req, REL_LIST_DEFAULT, REL_LIST_MAX, &limit, rep)) != WB_OK) {
		return rc;
	}
	wb_reply_ok(rep);
	if ((out = wb_add_u64s(rep, WB_F_UIDS, limit)) == NULL) {
		return rel_fail(rep, WB_ENOMEM, NULL);
	}
	if (has_after && after == UINT64_MAX) {
		wb_shrink(rep, WB_F_UIDS, 0);
		return WB_OK;
	}
	rel_block_qual(start, REL_BLOCK_OUT, has_after ? after + 1 : 0);
	hb_scan_opts_id_row(&so, row, uid);
	so.start_qual = start;
	so.start_qual_len = sizeof(start);
	so.qual_prefix = &way;
	so.qual_prefix_len = 1;
	if ((rc = hb_scan_open(&s, r->t, REL_FAM_BLOCK, &so)) != WB_OK) {
		return rel_fail(rep, rc, NULL);
	}
	while ((rc = hb_scan_next(s, &c)) == WB_OK) {
		const uint8_t *q = c.qual, *v = c.value;
		if (c.qual_len != REL_BLOCK_QUAL || c.value_len != REL_BLOCK_VAL) {
			rc = WB_ECORRUPT;
			break;
		}
		if (q[0] != REL_BLOCK_OUT) {
			break;
		}
		if (v[0] == 0) {
			continue; /* lifted */
		}
		if (n == limit) {
			more = true;
			break;
		}
		out[n++] = hb_be_u64(q + 1);
	}
	hb_scan_close(s);
	if (rc != WB_OK && rc != WB_EEND) {
		RT_ERRORF("blocks of %llu failed: %s %s", (unsigned long long)uid, wb_strerror(rc),
		    hb_last_error());
		return rel_fail(rep, rc, NULL);
	}
	wb_shrink(rep, WB_F_UIDS, n);
	return more ? wb_set_u64(rep, WB_F_NEXT, out[n - 1]) : WB_OK;
}
