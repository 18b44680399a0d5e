/*
 * rel_outbox.c - telling other shards of this shard's blocks.
 *
 * A block (or unblock) of b by a, with b on another shard, leaves a
 * pending cell bpend[a][b] = gen in the batch of a's side (rel_block.c).
 * rel_outbox_push sends b's shard the block as it stands now, a's cell
 * read afresh (rel.block_peer {uid b, target a, seq gen, blocking}), and
 * once that shard has answered, deletes the pending cell unless a later
 * change has written a higher gen since (then that one is sent too).
 *
 *   rel.block handler --push at once--> b's shard   (usually all there is)
 *          |
 *          +-- failed: wake --> outbox thread: every pending cell, pushed
 *                               again; 100 ms doubling to 5 s between
 *                               passes while any fails; one pass at start
 *
 * A push can run twice at once (the handler and the thread) or arrive
 * late: b's shard keeps the highest gen it took, so the order does not
 * matter.  The thread is this shard's only sender, and a pending cell
 * only goes once its gen is taken, so after any crash the next start
 * sends what was left.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rel_int.h"
#include "rel_schema.h"
#include "rt_log.h"
#include "wb_clock.h"

#define REL_OUTBOX_PAGE    256  /* pending cells read per scan */
#define REL_OUTBOX_IDLE_MS 5000 /* a pass this often even unasked */
#define REL_OUTBOX_MIN_MS  100
#define REL_OUTBOX_MAX_MS  5000

/* rel_outbox_pending reads the gen of the pending cell (blocker, blocked) (0: none). */
static int
rel_outbox_pending(rel_svc *r, uint64_t blocker, uint64_t blocked, uint64_t *gen)
{
	uint8_t  row[8], q[8];
	hb_cell *c;
	int      rc;

	*gen = 0;
	hb_u64_be(row, blocker);
	hb_u64_be(q, blocked);
	rc = hb_get(r->t, REL_FAM_BPEND, row, 8, q, 8, &c);
	if (rc == WB_ENOTFOUND) {
		return WB_OK;
	}
	if (rc == WB_OK) {
		rc = c->value_len == 8 ? WB_OK : WB_ECORRUPT;
		*gen = rc == WB_OK ? hb_be_u64(c->value) : 0;
		hb_cell_free(c);
	}
	return rc;
}

/* rel_outbox_done deletes the pending cell (blocker, blocked) if its gen is at most gen. */
static int
rel_outbox_done(rel_svc *r, uint64_t blocker, uint64_t blocked, uint64_t gen)
{
	pthread_mutex_t *mu = rel_stripe(r, blocker, blocked);
	uint8_t          row[8], q[8];
	uint64_t         pend;
	hb_batch        *b;
	int              rc;

	if ((rc = hb_batch_new(&b)) != WB_OK) {
		return rc;
	}
	hb_u64_be(row, blocker);
	hb_u64_be(q, blocked);
	pthread_mutex_lock(mu); /* rel_block_change writes the cell under it */
	rc = rel_outbox_pending(r, blocker, blocked, &pend);
	if (rc == WB_OK && pend != 0 && pend <= gen) {
		rc = hb_batch_delete_column(b, r->t, REL_FAM_BPEND, row, 8, q, 8, HB_LATEST);
		if (rc == WB_OK) {
			rc = hb_write(r->t, b);
		}
	}
	pthread_mutex_unlock(mu);
	hb_batch_free(b);
	return rc;
}

int
rel_outbox_push(rel_svc *r, uint64_t blocker, uint64_t blocked)
{
	uint64_t pend, gen;
	bool     on, found;
	wb_obj  *req, *rep = NULL;
	int      rc;

	if (r->peers == NULL) {
		return WB_EINTERNAL; /* one shard: never pending */
	}
	if ((rc = rel_outbox_pending(r, blocker, blocked, &pend)) != WB_OK || pend == 0 ||
	    (rc = rel_block_get(r, blocker, REL_BLOCK_OUT, blocked, &on, &gen, &found)) != WB_OK) {
		return rc; /* nothing pending, or the store failed */
	}
	if (!found || gen < pend) {
		RT_ERRORF("block %llu -> %llu: pending gen %llu, but the block cell has %llu",
		    (unsigned long long)blocker, (unsigned long long)blocked,
		    (unsigned long long)pend, (unsigned long long)gen);
		return WB_ECORRUPT;
	}
	if ((req = wb_request(WB_OP_REL_BLOCK_PEER)) == NULL) {
		return WB_ENOMEM;
	}
	if ((rc = wb_set_u64(req, WB_F_UID, blocked)) == WB_OK &&
	    (rc = wb_set_u64(req, WB_F_TARGET, blocker)) == WB_OK &&
	    (rc = wb_set_u64(req, WB_F_SEQ, gen)) == WB_OK &&
	    (rc = wb_set_bool(req, WB_F_BLOCKING, on)) == WB_OK) {
		rc = rt_call(rt_shards_for_uid(r->peers, blocked), req, &rep);
	}
	wb_msg_free(req);
	wb_msg_free(rep);
	if (rc == WB_OK) {
		atomic_fetch_add(&r->outbox.pushed, 1);
		rc = rel_outbox_done(r, blocker, blocked, gen);
	}
	return rc;
}

void
rel_outbox_wake(rel_svc *r)
{
	pthread_mutex_lock(&r->outbox.mu);
	r->outbox.wake = true;
	pthread_cond_signal(&r->outbox.cv);
	pthread_mutex_unlock(&r->outbox.mu);
}

/* rel_outbox_pass pushes every pending cell once; WB_OK if all were taken. */
static int
rel_outbox_pass(rel_svc *r)
{
	uint64_t last_row = 0, last_qual = 0;
	size_t   left = 0;
	bool     first = true, done = false;
	int      result = WB_OK;

	while (!done) {
		hb_scan_opts so = { 0 };
		uint64_t     rows[REL_OUTBOX_PAGE], quals[REL_OUTBOX_PAGE];
		uint8_t      sr[8], sq[8];
		size_t       n = 0;
		hb_scan     *s;
		hb_cell      c;
		int          rc;

		if (!first) { /* from the last cell of the page before, which is skipped */
			hb_u64_be(sr, last_row);
			hb_u64_be(sq, last_qual);
			so.start_row = sr;
			so.start_row_len = 8;
			so.start_qual = sq;
			so.start_qual_len = 8;
		}
		if ((rc = hb_scan_open(&s, r->t, REL_FAM_BPEND, &so)) != WB_OK) {
			return rc;
		}
		while (n < REL_OUTBOX_PAGE && (rc = hb_scan_next(s, &c)) == WB_OK) {
			if (c.row_len != 8 || c.qual_len != 8) {
				continue;
			}
			uint64_t row = hb_be_u64(c.row), qual = hb_be_u64(c.qual);
			if (!first && row == last_row && qual == last_qual) {
				continue;
			}
			rows[n] = row;
			quals[n++] = qual;
		}
		hb_scan_close(s);
		if (rc != WB_OK && rc != WB_EEND) {
			return rc;
		}
		done = n < REL_OUTBOX_PAGE;
		for (size_t i = 0; i < n; i++) {
			pthread_mutex_lock(&r->outbox.mu);
			bool stop = r->outbox.stop;
			pthread_mutex_unlock(&r->outbox.mu);
			if (stop) {
				return WB_ECLOSED;
			}
			if ((rc = rel_outbox_push(r, rows[i], quals[i])) != WB_OK) {
				RT_WARNF("block %llu -> %llu not taken by the other shard yet: %s",
				    (unsigned long long)rows[i], (unsigned long long)quals[i],
				    wb_strerror(rc));
				result = rc;
				left++;
			}
		}
		if (n > 0) {
			first = false;
			last_row = rows[n - 1];
			last_qual = quals[n - 1];
		}
	}
	atomic_store(&r->outbox.pending, left);
	return result;
}

/* rel_outbox_main is the outbox thread: a pass at start, when woken, and after a backoff while
 * pushes fail. */
static void *
rel_outbox_main(void *arg)
{
	rel_svc    *r = arg;
	rel_outbox *o = &r->outbox;
	uint64_t    wait_ms = 0, backoff = 0;

	for (;;) {
		struct timespec dl;

		pthread_mutex_lock(&o->mu);
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += (time_t)(wait_ms / 1000);
		dl.tv_nsec += (long)(wait_ms % 1000) * 1000000;
		if (dl.tv_nsec >= 1000000000) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000;
		}
		while (!o->stop && !o->wake && wait_ms > 0) {
			if (pthread_cond_timedwait(&o->cv, &o->mu, &dl) != 0) {
				break;
			}
		}
		bool stop = o->stop;
		o->wake = false;
		pthread_mutex_unlock(&o->mu);
		if (stop) {
			break;
		}
		int rc = rel_outbox_pass(r);
		if (rc == WB_ECLOSED) {
			break;
		}
		if (rc == WB_OK) {
			backoff = 0;
			wait_ms = REL_OUTBOX_IDLE_MS;
		} else {
			backoff = backoff == 0 ? REL_OUTBOX_MIN_MS : backoff * 2;
			backoff = backoff > REL_OUTBOX_MAX_MS ? REL_OUTBOX_MAX_MS : backoff;
			wait_ms = backoff;
		}
	}
	return NULL;
}

int
rel_outbox_start(rel_svc *r)
{
	rel_outbox *o = &r->outbox;

	if (r->peers == NULL || o->running) {
		return WB_OK; /* one shard: every block is one batch, nothing to send */
	}
	o->stop = false;
	o->wake = false;
	if (pthread_create(&o->thread, NULL, rel_outbox_main, r) != 0) {
		return WB_ENOMEM;
	}
	o->running = true;
	return WB_OK;
}

void
rel_outbox_stop(rel_svc *r)
{
	rel_outbox *o = &r->outbox;

	if (!o->running) {
		return;
	}
	pthread_mutex_lock(&o->mu);
	o->stop = true;
	pthread_cond_signal(&o->cv);
	pthread_mutex_unlock(&o->mu);
	rt_shards_shutdown(r->peers); /* a push in flight ends now */
	pthread_join(o->thread, NULL);
	o->running = false;
}
