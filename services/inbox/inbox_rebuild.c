/*
 * inbox_rebuild.c - inbox.rebuild: every inbox recomputed from relation
 * and content, so a lost or corrupt inbox store is never fatal.
 *
 * The rules are the inbox's own, as if every follow were made now: a
 * reader's inbox holds, for each user it follows and for the reader
 * itself, that user's newest `depth` posts (the follow's backfill,
 * WARBLE_BACKFILL, unless the request gives a limit), none older than
 * the TTL; the tl family keeps the newest inbox-max of them on every
 * read.  Where no followed user has more posts than the depth, that is
 * exactly the live inbox (every post reached every fan and its author,
 * by fan-out or by backfill).
 *
 * It runs on the applier thread, so no event is applied meanwhile:
 *
 *   1. read each source's last seq L (post.log, rel.log of every shard it
 *      takes events from);
 *   2. mark the rebuild in meta (a restart finds the mark and starts over)
 *      and delete every tl cell (one range delete);
 *   3. on each relation shard overlapping this inbox's slots, page
 *      through the users who have fans there (rel.followed, 1000 at a
 *      time, with rel.counts for the progress): for each, its newest
 *      posts (post.timeline, from its content shard) go to each of its
 *      fans in this inbox's slots (rel.fans {slots} pages);
 *   4. on each content shard overlapping this inbox's slots, page
 *      through the authors in those slots (post.authors {slots}, 1000
 *      at a time): each one's newest posts go to its own inbox;
 *   5. one batch sets each source's applied seq to L and drops the mark;
 *      the applier then goes on from L + 1.
 *
 * Every change up to L is in the state read at steps 3 and 4, since a source
 * commits a change and its event in one batch.  A change after L may or
 * may not have been read; its event is applied after the rebuild anyway,
 * and applying an event to any inbox state that already holds it changes
 * nothing (a cell written twice, a delete of what is gone, a backfill of
 * what is there, a purge of every post of the unfollowed).
 *
 * Memory: one page of followed users or authors (1000 uids), one
 * author's posts (depth ids, at most inbox-max: 6.4 KB at 800), one rel.fans reply (up
 * to 10000 uids, about 90 KB) and one write batch (at most
 * INBOX_RB_BATCH cells, about 2.6 MB): under 4 MB beyond RocksDB's own
 * buffers, whatever the number of users, follows and posts.
 *
 * inbox.home keeps serving throughout: it reads the inboxes as they
 * fill.  A source that fails ends the rebuild as failed; it is tried
 * again INBOX_RB_RETRY_MS later (events are applied meanwhile).
 */
#include <stdlib.h>
#include <string.h>

#include "inbox_int.h"
#include "inbox_schema.h"
#include "rt_log.h"
#include "wb_clock.h"

#define INBOX_RB_AUTHORS  1000  /* followed users per rel.followed page (rel.counts' maximum) */
#define INBOX_RB_BATCH    65536 /* cells per write batch */
#define INBOX_RB_RETRY_MS 5000  /* after a failure, the next try */

static const char *const inbox_rb_states[] = { "idle", "queued", "running", "done", "failed" };

bool
inbox_rebuild_ask(inbox *in, uint32_t depth)
{
	bool ok;

	pthread_mutex_lock(&in->mu);
	ok = !in->rb_asked && INBOX_LOAD(&in->rb_state) != INBOX_RB_RUNNING;
	if (ok) {
		in->rb_asked = true;
		in->rb_depth = depth;
		INBOX_STORE(&in->rb_state, INBOX_RB_QUEUED);
		pthread_cond_broadcast(&in->cv);
	}
	pthread_mutex_unlock(&in->mu);
	return ok;
}

bool
inbox_rebuild_due(inbox *in)
{
	pthread_mutex_lock(&in->mu);
	bool due = in->rb_asked && wb_mono_us() / 1000 >= in->rb_retry_ms;
	pthread_mutex_unlock(&in->mu);
	return due;
}

/* inbox_rb_call calls c with req (freed here); *rep is a success reply on WB_OK. */
static int
inbox_rb_call(rt_client *c, wb_obj *req, wb_obj **rep)
{
	*rep = NULL;
	if (req == NULL) {
		return WB_ENOMEM;
	}
	int rc = rt_call(c, req, rep);
	wb_msg_free(req);
	if (rc != WB_OK) {
		wb_msg_free(*rep);
		*rep = NULL;
	}
	return rc;
}

/* inbox_rb_lasts reads each source's last seq into last. */
static int
inbox_rb_lasts(inbox *in, uint64_t last[INBOX_SRC_MAX])
{
	int rc = WB_OK;

	for (int i = 0; rc == WB_OK && i < in->nsrc; i++) {
		inbox_source *s = &in->src[i];
		wb_obj       *req = wb_request(s->log_op), *rep;

		if (req != NULL) {
			wb_set_u64(req, WB_F_FROM, UINT64_MAX); /* no events: only LAST */
		}
		if ((rc = inbox_rb_call(inbox_source_client(in, s), req, &rep)) == WB_OK &&
		    !wb_get_u64(rep, WB_F_LAST, &last[i])) {
			rc = WB_EBADMSG;
		}
		wb_msg_free(rep);
	}
	return rc;
}

/* inbox_rb_posts reads the newest want posts of author (none older than the TTL) into ids. */
static int
inbox_rb_posts(inbox *in, uint64_t author, uint64_t *ids, size_t want, size_t *n)
{
	uint64_t before = 0, now = wb_now_ms();
	int      rc = WB_OK;

	*n = 0;
	while (rc == WB_OK && *n < want) {
		wb_obj       *req = wb_request(WB_OP_POST_TIMELINE), *rep;
		const wb_obj *posts = NULL;
		size_t        k = 0, left = want - *n;

		if (req != NULL) {
			wb_set_u64(req, WB_F_UID, author);
			wb_set_u64(req, WB_F_LIMIT, left < 100 ? left : 100);
			if (before != 0) {
				wb_set_u64(req, WB_F_BEFORE, before);
			}
			if (in->opts.ttl_ms != 0 && in->opts.ttl_ms < now) {
				wb_set_u64(req, WB_F_SINCE, now - in->opts.ttl_ms);
			}
		}
		if ((rc = inbox_rb_call(rt_shards_for_uid(in->content, author), req, &rep)) !=
		    WB_OK) {
			break;
		}
		(void)wb_get_objs(rep, WB_F_POSTS, &posts, &k);
		for (size_t i = 0; i < k && *n < want; i++) {
			uint64_t id = wb_u64(&posts[i], WB_F_ID, 0);
			if (id != 0) {
				ids[(*n)++] = id;
			}
		}
		if (k == 0 || !wb_get_u64(rep, WB_F_NEXT, &before) || before == 0) {
			want = *n; /* no more pages */
		}
		wb_msg_free(rep);
	}
	return rc;
}

/* inbox_rb_flush writes the batch once it holds at least min cells. */
static int
inbox_rb_flush(inbox *in, size_t min)
{
	int rc = WB_OK;

	if (hb_batch_count(in->batch) >= min && hb_batch_count(in->batch) > 0) {
		rc = hb_write(in->t, in->batch);
		hb_batch_clear(in->batch);
	}
	return rc;
}

/* inbox_rb_author writes the author's posts ids[0..n) into the inbox of every fan it has here on relation shard j. */
static int
inbox_rb_author(inbox *in, unsigned j, uint64_t author, const uint64_t *ids, size_t n)
{
	uint64_t after = 0;
	uint8_t  row[8], val[8];
	int      rc = WB_OK;
	bool     more = n > 0;

	hb_u64_be(val, author);
	while (rc == WB_OK && more) {
		wb_obj         *rep;
		const uint64_t *fans = NULL;
		size_t          k = 0;

		if ((rc = inbox_rb_call(rt_shards_at(in->relation, j),
		         inbox_fans_req(in, j, author, after, in->opts.fans_page), &rep)) !=
		    WB_OK) {
			break;
		}
		(void)wb_get_u64s(rep, WB_F_UIDS, &fans, &k);
		for (size_t i = 0; rc == WB_OK && i < k; i++) {
			if (fans[i] == author) {
				continue; /* a fan of oneself: the own posts come apart (inbox_rb_own) */
			}
			hb_u64_be(row, fans[i]);
			for (size_t x = 0; rc == WB_OK && x < n; x++) {
				rc = hb_batch_put(in->batch, in->t, INBOX_FAM_TL, row, 8, NULL, 0,
				    ids[x], val, 8);
			}
			if (rc == WB_OK) {
				rc = inbox_rb_flush(in, INBOX_RB_BATCH);
			}
		}
		if (rc == WB_OK) {
			INBOX_ADD(&in->cells_written, (uint64_t)k * n);
		}
		more = k > 0 && wb_get_u64(rep, WB_F_NEXT, &after) && after != 0;
		wb_msg_free(rep);
	}
	return rc;
}

/* inbox_rb_page rebuilds the inboxes of the fans on relation shard j of the followed users uids[0..n). */
static int
inbox_rb_page(inbox *in, unsigned j, const uint64_t *uids, size_t n, uint64_t *ids, size_t depth)
{
	wb_obj       *req = wb_request(WB_OP_REL_COUNTS), *rep;
	const wb_obj *users = NULL;
	size_t        nusers = 0;
	int           rc;

	if (req != NULL) {
		wb_set_u64s(req, WB_F_UIDS, uids, n);
	}
	if ((rc = inbox_rb_call(rt_shards_at(in->relation, j), req, &rep)) != WB_OK) {
		return rc;
	}
	(void)wb_get_objs(rep, WB_F_USERS, &users, &nusers);
	for (size_t i = 0; rc == WB_OK && i < n && !in->stop; i++) {
		size_t k = 0;

		rc = inbox_rb_posts(in, uids[i], ids, depth, &k);
		if (rc == WB_OK) {
			rc = inbox_rb_author(in, j, uids[i], ids, k);
		}
		if (rc == WB_OK) {
			INBOX_ADD(
			    &in->rb_done, i < nusers ? wb_u64(&users[i], WB_F_FOLLOWERS, 0) : 0);
			INBOX_ADD(&in->rb_authors, 1);
		}
	}
	wb_msg_free(rep);
	return rc == WB_OK && in->stop ? WB_ECLOSED : rc;
}

/* inbox_rb_own_page writes the newest posts of each of the authors uids[0..n) (readers here) into
 * the author's own inbox. */
static int
inbox_rb_own_page(inbox *in, const uint64_t *uids, size_t n, uint64_t *ids, size_t depth)
{
	uint8_t row[8];
	int     rc = WB_OK;

	for (size_t i = 0; rc == WB_OK && i < n && !in->stop; i++) {
		size_t k = 0;

		if (!inbox_mine(in, uids[i]) ||
		    (rc = inbox_rb_posts(in, uids[i], ids, depth, &k)) != WB_OK) {
			continue;
		}
		hb_u64_be(row, uids[i]);
		for (size_t x = 0; rc == WB_OK && x < k; x++) {
			rc = hb_batch_put(
			    in->batch, in->t, INBOX_FAM_TL, row, 8, NULL, 0, ids[x], row, 8);
		}
		if (rc == WB_OK) {
			INBOX_ADD(&in->cells_written, k);
			INBOX_ADD(&in->rb_own, k > 0);
			rc = inbox_rb_flush(in, INBOX_RB_BATCH);
		}
	}
	return rc == WB_OK && in->stop ? WB_ECLOSED : rc;
}

/* inbox_rb_own pages through the authors in this inbox's slots on each content shard that keeps
 * some, writing each one's newest posts into its own inbox. */
static int
inbox_rb_own(inbox *in, uint64_t *ids, size_t depth)
{
	int rc = WB_OK;

	for (unsigned j = 0; rc == WB_OK && j < in->ncontent; j++) {
		unsigned lo, hi;
		uint64_t after = 0;
		bool     more = true;

		wb_shard_slots((wb_shard) { j, in->ncontent }, &lo, &hi);
		lo = lo > in->lo ? lo : in->lo;
		hi = hi < in->hi ? hi : in->hi;
		while (rc == WB_OK && more && lo < hi && !in->stop) {
			wb_obj         *req = wb_request(WB_OP_POST_AUTHORS), *rep;
			const uint64_t *uids = NULL;
			size_t          n = 0;
			uint64_t        slots[2] = { lo, hi };

			if (req != NULL &&
			    (wb_set_u64(req, WB_F_LIMIT, INBOX_RB_AUTHORS) != WB_OK ||
			        wb_set_u64s(req, WB_F_SLOTS, slots, 2) != WB_OK ||
			        (after != 0 && wb_set_u64(req, WB_F_AFTER, after) != WB_OK))) {
				wb_msg_free(req);
				req = NULL;
			}
			if ((rc = inbox_rb_call(rt_shards_at(in->content, j), req, &rep)) !=
			    WB_OK) {
				break;
			}
			(void)wb_get_u64s(rep, WB_F_UIDS, &uids, &n);
			rc = inbox_rb_own_page(in, uids, n, ids, depth);
			more = n > 0 && wb_get_u64(rep, WB_F_NEXT, &after) && after != 0;
			wb_msg_free(rep);
		}
	}
	return rc == WB_OK && in->stop ? WB_ECLOSED : rc;
}

/* inbox_rb_all pages through every user with fans on each relation shard overlapping this inbox,
 * rebuilding their fans' inboxes, then through every author who is a reader here, giving them
 * their own posts. */
static int
inbox_rb_all(inbox *in, uint32_t depth)
{
	uint32_t  cap = in->opts.max_versions;
	size_t    want = depth < cap ? depth : cap; /* more never shows: the cap keeps the newest */
	uint64_t *ids = calloc(want > 0 ? want : 1, sizeof(*ids));
	uint64_t  after = 0, total_all = 0;
	unsigned  j = in->rel_lo;
	bool      more = want > 0;
	int       rc = ids != NULL ? WB_OK : WB_ENOMEM;

	hb_batch_clear(in->batch);
	while (rc == WB_OK && more && !in->stop) {
		wb_obj         *req = wb_request(WB_OP_REL_FOLLOWED), *rep;
		const uint64_t *uids = NULL;
		size_t          n = 0;
		uint64_t        total = 0;

		if (req != NULL) {
			wb_set_u64(req, WB_F_LIMIT, INBOX_RB_AUTHORS);
			if (after != 0) {
				wb_set_u64(req, WB_F_AFTER, after);
			}
		}
		if ((rc = inbox_rb_call(rt_shards_at(in->relation, j), req, &rep)) != WB_OK) {
			break;
		}
		(void)wb_get_u64s(rep, WB_F_UIDS, &uids, &n);
		if (after == 0 && wb_get_u64(rep, WB_F_TOTAL, &total)) {
			total_all += total; /* each shard's edges, counted at its first page */
			INBOX_STORE(&in->rb_total, total_all);
		}
		rc = n > 0 ? inbox_rb_page(in, j, uids, n, ids, want) : WB_OK;
		if (!(n > 0 && wb_get_u64(rep, WB_F_NEXT, &after) && after != 0)) {
			after = 0; /* this shard is done: the next one */
			more = ++j < in->rel_hi;
		}
		wb_msg_free(rep);
	}
	if (rc == WB_OK && in->stop) {
		rc = WB_ECLOSED;
	}
	if (rc == WB_OK && want > 0) {
		rc = inbox_rb_own(in, ids, want);
	}
	if (rc == WB_OK) {
		rc = inbox_rb_flush(in, 1);
	}
	hb_batch_clear(in->batch);
	free(ids);
	return rc;
}

/* inbox_rb_finish sets each source's applied seq to last and drops the mark, in one batch. */
static int
inbox_rb_finish(inbox *in, const uint64_t last[INBOX_SRC_MAX])
{
	hb_batch *b = in->batch;
	int       rc = WB_OK;
	uint8_t   v[8];

	hb_batch_clear(b);
	for (int i = 0; rc == WB_OK && i < in->nsrc; i++) {
		hb_u64_be(v, last[i]);
		rc = hb_batch_put(b, in->t, INBOX_FAM_META, in->src[i].name,
		    strlen(in->src[i].name), NULL, 0, 0, v, 8);
	}
	if (rc == WB_OK) {
		rc = hb_batch_delete_row(
		    b, in->t, INBOX_FAM_META, INBOX_META_REBUILD, strlen(INBOX_META_REBUILD));
	}
	if (rc == WB_OK) {
		rc = hb_write(in->t, b);
	}
	hb_batch_clear(b);
	for (int i = 0; rc == WB_OK && i < in->nsrc; i++) {
		INBOX_STORE(&in->src[i].applied, last[i]);
		in->src[i].mark = 0; /* unknown until the next event applied */
		if (last[i] > INBOX_LOAD(&in->src[i].known_last)) {
			INBOX_STORE(&in->src[i].known_last, last[i]);
		}
	}
	return rc;
}

int
inbox_rebuild_run(inbox *in)
{
	uint64_t last[INBOX_SRC_MAX] = { 0 };
	uint8_t  mark[4];
	uint32_t depth;
	int      rc;

	pthread_mutex_lock(&in->mu);
	depth = in->rb_depth;
	in->rb_asked = false;
	pthread_mutex_unlock(&in->mu);
	INBOX_STORE(&in->rb_done, 0);
	INBOX_STORE(&in->rb_total, 0);
	INBOX_STORE(&in->rb_authors, 0);
	INBOX_STORE(&in->rb_own, 0);
	INBOX_STORE(&in->rb_elapsed, 0);
	INBOX_STORE(&in->rb_t0_ms, wb_mono_us() / 1000);
	INBOX_STORE(&in->rb_state, INBOX_RB_RUNNING);
	RT_INFOF("rebuilding every inbox from relation and content: %u posts per follow", depth);
	mark[0] = (uint8_t)(depth >> 24);
	mark[1] = (uint8_t)(depth >> 16);
	mark[2] = (uint8_t)(depth >> 8);
	mark[3] = (uint8_t)depth;
	if ((rc = inbox_rb_lasts(in, last)) == WB_OK &&
	    (rc = hb_put(in->t, INBOX_FAM_META, INBOX_META_REBUILD, strlen(INBOX_META_REBUILD),
	         NULL, 0, 0, mark, sizeof(mark))) == WB_OK &&
	    (rc = hb_clear(in->t, INBOX_FAM_TL)) == WB_OK &&
	    (rc = inbox_rb_all(in, depth)) == WB_OK) {
		rc = inbox_rb_finish(in, last);
	}
	/* rows were wiped and rewritten under the cache: until now it served
	 * the inboxes as they were before the rebuild */
	inbox_cache_clear(in->cache);
	uint64_t ms = wb_mono_us() / 1000 - INBOX_LOAD(&in->rb_t0_ms);
	INBOX_STORE(&in->rb_elapsed, ms);
	INBOX_STORE(&in->rb_err, (uint64_t)rc);
	if (rc == WB_OK) {
		INBOX_STORE(&in->rb_state, INBOX_RB_DONE);
		RT_INFOF("rebuilt every inbox in %llu ms: %llu followed users, %llu follows, "
		         "%llu readers' own posts; applied seqs now those of %d logs' ends",
		    (unsigned long long)ms, (unsigned long long)INBOX_LOAD(&in->rb_authors),
		    (unsigned long long)INBOX_LOAD(&in->rb_done),
		    (unsigned long long)INBOX_LOAD(&in->rb_own), in->nsrc);
		return WB_OK;
	}
	INBOX_STORE(&in->rb_state, INBOX_RB_FAILED);
	if (in->stop) {
		RT_WARNF("inbox rebuild stopped by shutdown; it starts over at the next start");
		return rc;
	}
	RT_ERRORF("inbox rebuild failed: %s %s; trying again in %d ms", wb_strerror(rc),
	    hb_last_error(), INBOX_RB_RETRY_MS);
	pthread_mutex_lock(&in->mu);
	if (!in->rb_asked) {
		in->rb_asked = true;
		in->rb_depth = depth;
	}
	in->rb_retry_ms = wb_mono_us() / 1000 + INBOX_RB_RETRY_MS;
	pthread_mutex_unlock(&in->mu);
	return rc;
}

/* inbox_rb_status writes the rebuild's figures into a success reply. */
static int
inbox_rb_status(inbox *in, wb_obj *rep)
{
	uint64_t st = INBOX_LOAD(&in->rb_state);
	uint64_t ms = st == INBOX_RB_RUNNING ? wb_mono_us() / 1000 - INBOX_LOAD(&in->rb_t0_ms)
	                                     : INBOX_LOAD(&in->rb_elapsed);
	uint32_t depth;
	int      rc;

	pthread_mutex_lock(&in->mu);
	depth = in->rb_depth;
	pthread_mutex_unlock(&in->mu);
	wb_reply_ok(rep);
	if ((rc = wb_set_cstr(rep, WB_F_STATE, inbox_rb_states[st])) == WB_OK &&
	    (rc = wb_set_u64(rep, WB_F_DONE, INBOX_LOAD(&in->rb_done))) == WB_OK &&
	    (rc = wb_set_u64(rep, WB_F_TOTAL, INBOX_LOAD(&in->rb_total))) == WB_OK &&
	    (rc = wb_set_u64(rep, WB_F_COUNT, INBOX_LOAD(&in->rb_authors))) == WB_OK &&
	    (rc = wb_set_u64(rep, WB_F_LIMIT, depth)) == WB_OK) {
		rc = wb_set_u64(rep, WB_F_ELAPSED, ms);
	}
	if (rc == WB_OK && st == INBOX_RB_FAILED) {
		rc = wb_set_cstr(rep, WB_F_MSG, wb_strerror((int)INBOX_LOAD(&in->rb_err)));
	}
	return rc;
}

int
inbox_rebuild(void *arg, const wb_obj *req, wb_obj *rep)
{
	inbox   *in = arg;
	uint64_t depth = in->opts.backfill > 0 ? in->opts.backfill : in->opts.max_versions;

	if (wb_has(req, WB_F_LIMIT) &&
	    (!wb_get_u64(req, WB_F_LIMIT, &depth) || depth == 0 || depth > INBOX_REBUILD_MAX)) {
		wb_reply_error(
		    rep, WB_EINVAL, "limit (posts per follow) must be 1-%d", INBOX_REBUILD_MAX);
		return WB_EINVAL;
	}
	if (depth == 0) {
		depth = 800;
	}
	if (inbox_rebuild_ask(in, (uint32_t)depth)) {
		RT_INFOF("inbox rebuild asked: %llu posts per follow", (unsigned long long)depth);
	}
	return inbox_rb_status(in, rep);
}

int
inbox_rebuild_status(void *arg, const wb_obj *req, wb_obj *rep)
{
	(void)req;
	return inbox_rb_status(arg, rep);
}

int
inbox_backup_logs(void *arg, wb_obj *rep)
{
	inbox  *in = arg;
	wb_obj *o = wb_add_objs(rep, WB_F_LOGS, (size_t)in->nsrc);
	int     rc = o != NULL ? WB_OK : WB_ENOMEM;

	for (int i = 0; rc == WB_OK && i < in->nsrc; i++) {
		const char *name = in->src[i].name;
		hb_cell    *c = NULL;
		uint64_t    seq = 0;

		/* the store, not s->applied: that is set only after the write it follows */
		rc = hb_get(in->t, INBOX_FAM_META, name, strlen(name), NULL, 0, &c);
		if (rc == WB_OK) {
			seq = c->value_len >= 8 ? hb_be_u64(c->value) : 0;
			hb_cell_free(c);
		} else if (rc == WB_ENOTFOUND) {
			rc = WB_OK;
		}
		if (rc == WB_OK && (rc = wb_set_cstr(&o[i], WB_F_SOURCE, name)) == WB_OK) {
			rc = wb_set_u64(&o[i], WB_F_SEQ, seq);
		}
	}
	return rc;
}
