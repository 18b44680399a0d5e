/*
 * inbox_fanout.c - applying events to inboxes.
 *
 *   post {uid, id}         every current fan of uid, and uid itself, gets (fan, id) -> uid
 *   delete {uid, id}       every current fan of uid, and uid itself, loses version id
 *   follow {uid, target}   uid's inbox gets target's newest posts (backfill)
 *   unfollow {uid, target} uid's inbox loses every post by target (never uid's own)
 *   erased {uid}           uid's account is gone: its row goes whole (relation and content)
 *
 * An author reads their own posts in their home, as on Twitter, Mastodon
 * and Weibo: the inbox shard that keeps the author's slot writes the
 * author's own cell with the fans' cells of the same event (in the first
 * page's batch, or among the sorted cells of a merged run), so the
 * author costs one cell more a post and no call.
 *
 * Fans are read a page (up to INBOX_FANS_PAGE) at a time; the next page
 * is requested on a helper thread while the current one is handled.
 * Relation keeps a followee's fans by slot, a hash of the fan's uid, and
 * a fan's inbox row is its uid: so pages are gathered into runs of
 * opts.fans_run (1 MiB of uids by default) and each run is written sorted by uid, each cell's
 * skip-list insert starting close to where the previous one ended instead
 * of at the top (half the inbox's CPU in a fan-out to a million went to
 * those walks).  A large run is written as two batches from two threads, since
 * RocksDB inserts concurrent batches into its memtable in parallel (the
 * skip list insert is most of a fan-out's cost).  The batch that ends an event also carries the
 * source's applied seq, so a crash mid-event replays the whole event
 * (rewriting or re-deleting a cell is harmless).
 *
 * When post events queue up (the applier is behind), a run of them is
 * applied together: one rel.fans batch for all their authors, and the
 * cells of those with few fans in key order, a chunk to a write.  Under
 * the mix, one post's 40-odd cells land in rows far apart in a memtable
 * of hundreds of thousands of cells, each insert a walk of cache misses
 * down the skip list (4-5 us a cell); cells in key order start each walk
 * where the last one ended.  Fan-out reads the
 * current fans and backfill the current posts: with one applier taking
 * each source in seq order, any interleaving of the two sources ends in
 * the same inboxes.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "inbox_int.h"
#include "rt_log.h"
#include "inbox_schema.h"
#include "wb_clock.h"

/* A rel.fans call run on a helper thread, so the next page is on its way
 * while the current one is written: the fans of uid after `after` that
 * relation shard `shard` holds in this inbox's slots. */
typedef struct inbox_fetch {
	inbox    *in;
	uint64_t  uid, after;
	unsigned  shard;
	wb_obj   *rep;
	int       rc;
	pthread_t thread;
	bool      running;
} inbox_fetch;

wb_obj *
inbox_fans_req(inbox *in, unsigned j, uint64_t uid, uint64_t after, uint64_t limit)
{
	wb_obj  *req = wb_request(WB_OP_REL_FANS);
	unsigned lo, hi;

	inbox_rel_slots(in, j, &lo, &hi);
	uint64_t slots[2] = { lo, hi };
	if (req != NULL && (wb_set_u64(req, WB_F_UID, uid) != WB_OK ||
	                       wb_set_u64(req, WB_F_LIMIT, limit) != WB_OK ||
	                       wb_set_u64s(req, WB_F_SLOTS, slots, 2) != WB_OK ||
	                       (after != 0 && wb_set_u64(req, WB_F_AFTER, after) != WB_OK))) {
		wb_msg_free(req);
		req = NULL;
	}
	return req;
}

/* inbox_fetch_run calls rel.fans on the fetch's relation shard. */
static void *
inbox_fetch_run(void *arg)
{
	inbox_fetch *f = arg;
	wb_obj      *req = inbox_fans_req(f->in, f->shard, f->uid, f->after, f->in->opts.fans_page);
	f->rep = NULL;
	if (req == NULL) {
		f->rc = WB_ENOMEM;
		return NULL;
	}
	f->rc = rt_call(rt_shards_at(f->in->relation, f->shard), req, &f->rep);
	wb_msg_free(req);
	return NULL;
}

/* inbox_fetch_start begins fetching the page of shard after `after`: on a thread if ahead (a page is being written meanwhile), else (or if no thread can start) here. */
static void
inbox_fetch_start(
    inbox_fetch *f, inbox *in, uint64_t uid, unsigned shard, uint64_t after, bool ahead)
{
	f->in = in;
	f->uid = uid;
	f->shard = shard;
	f->after = after;
	f->rep = NULL;
	f->rc = WB_OK;
	f->running = ahead && pthread_create(&f->thread, NULL, inbox_fetch_run, f) == 0;
	if (!f->running) {
		inbox_fetch_run(f);
	}
}

/* inbox_fetch_wait waits for the page; returns its code (rep owned by f). */
static int
inbox_fetch_wait(inbox_fetch *f)
{
	if (f->running) {
		pthread_join(f->thread, NULL);
		f->running = false;
	}
	return f->rc;
}

/* inbox_meta_put adds source s's applied seq and the mark of that event (in->mark) to batch b. */
static int
inbox_meta_put(inbox *in, hb_batch *b, inbox_source *s, uint64_t seq)
{
	uint8_t v[16];
	hb_u64_be(v, seq);
	hb_u64_be(v + 8, in->mark);
	return hb_batch_put(b, in->t, INBOX_FAM_META, s->name, strlen(s->name), NULL, 0, 0, v, 16);
}

int
inbox_commit(inbox *in, inbox_source *s, uint64_t seq, bool last)
{
	hb_batch *b = in->batch;
	int       rc = last ? inbox_meta_put(in, b, s, seq) : WB_OK;
	if (rc == WB_OK) {
		rc = hb_write(in->t, b);
	}
	hb_batch_clear(b);
	if (rc == WB_OK && last) {
		INBOX_STORE(&s->applied, seq);
		s->mark = in->mark;
	}
	if (rc != WB_OK) {
		RT_ERRORF("inbox write failed: %s %s", wb_strerror(rc), hb_last_error());
	}
	return rc;
}

/* inbox_cache_cell brings reader's cache entry in line with ev's cell
 * just written (ok) or maybe not (a failed write: the entry is dropped). */
static void
inbox_cache_cell(inbox *in, const inbox_event *ev, uint64_t reader, bool put, bool ok)
{
	if (!ok) {
		inbox_cache_drop(in->cache, reader);
	} else if (put) {
		inbox_cache_put(in->cache, reader, (inbox_cell) { ev->id, ev->uid });
	} else {
		inbox_cache_del(in->cache, reader, ev->id);
	}
}

/* inbox_cache_page brings the cache in line with a page of fans just
 * written (ok) or maybe not (a failed write: their entries are dropped). */
static void
inbox_cache_page(
    inbox *in, const inbox_event *ev, const uint64_t *fans, size_t n, bool put, bool ok)
{
	for (size_t i = 0; i < n; i++) {
		if (fans[i] != ev->uid) { /* the author's own cell is written apart */
			inbox_cache_cell(in, ev, fans[i], put, ok);
		}
	}
}

#define INBOX_MERGE_CHUNK 256  /* cells of a merged write per RocksDB write */
#define INBOX_PURGE_MAX   1000 /* unfollows of a run applied as one write, at most */
#define INBOX_MERGE_FANS  1024 /* authors with more fans are fanned out alone */
#define INBOX_SPLIT_MIN   4096 /* pages this big (or full small pages) are written by two threads */

/* Half a page of cells, filled and written on a helper thread. */
typedef struct inbox_half {
	inbox          *in;
	hb_batch       *b;
	const uint64_t *fans;
	size_t          n;
	uint64_t        author, id;
	bool            put;
	int             rc;
	bool            own; /* also the author's own cell (the author is a reader here) */
} inbox_half;

/* inbox_half_cell adds reader's cell of h's post to h's batch: a put of (reader, id) -> author,
 * or its delete. */
static int
inbox_half_cell(inbox_half *h, uint64_t reader)
{
	uint8_t row[8], val[8];

	hb_u64_be(row, reader);
	if (!h->put) {
		return hb_batch_delete_version(
		    h->b, h->in->t, INBOX_FAM_TL, row, 8, NULL, 0, h->id);
	}
	hb_u64_be(val, h->author);
	return hb_batch_put(h->b, h->in->t, INBOX_FAM_TL, row, 8, NULL, 0, h->id, val, 8);
}

/* inbox_half_fill adds the cells of fans[0..n) to b, and the author's own if h->own. */
static int
inbox_half_fill(inbox_half *h)
{
	int rc = h->own ? inbox_half_cell(h, h->author) : WB_OK;

	for (size_t i = 0; rc == WB_OK && i < h->n; i++) {
		if (h->fans[i] != h->author) { /* a fan of oneself: the own cell is apart */
			rc = inbox_half_cell(h, h->fans[i]);
		}
	}
	return rc;
}

/* inbox_half_main fills and writes a half page on a helper thread. */
static void *
inbox_half_main(void *arg)
{
	inbox_half *h = arg;
	h->rc = inbox_half_fill(h);
	if (h->rc == WB_OK) {
		h->rc = hb_write(h->in->t, h->b);
	}
	hb_batch_clear(h->b);
	return NULL;
}

/* inbox_u64_cmp orders uids as their rows' keys (8 bytes, big-endian) sort. */
static int
inbox_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* inbox_fans_write writes the cells of fans[0..n) (in uid order) as two halves from two threads
 * when large, and the author's own if own; with last, the write that ends it carries the
 * source's applied seq.  Then the cache follows. */
static int
inbox_fans_write(inbox *in, inbox_source *s, const inbox_event *ev, bool put, const uint64_t *fans,
    size_t n, bool own, bool last)
{
	size_t split_min =
	    in->opts.fans_page < INBOX_SPLIT_MIN ? in->opts.fans_page : INBOX_SPLIT_MIN;
	size_t     half = n >= 2 && n >= split_min ? n / 2 : 0;
	inbox_half h1 = { in, in->batch2, fans, half, ev->uid, ev->id, put, WB_OK, false };
	inbox_half h2 = { in, in->batch, fans + half, n - half, ev->uid, ev->id, put, WB_OK, own };
	pthread_t  th;
	bool       split = half > 0 && pthread_create(&th, NULL, inbox_half_main, &h1) == 0;
	int        rc;

	if (half > 0 && !split) {
		inbox_half_main(&h1); /* no thread: write it here */
	}
	rc = inbox_half_fill(&h2);
	if (rc == WB_OK) {
		/* counted before the write that may carry the seq: once the applied seq shows, so
		 * do its cells (a failed write is retried, and counted again) */
		INBOX_ADD(put ? &in->cells_written : &in->cells_deleted, n + own);
		/* the seq goes with the last cells, unless a half is still in flight */
		rc = inbox_commit(in, s, ev->seq, last && !split);
	} else {
		hb_batch_clear(in->batch);
	}
	if (split) {
		pthread_join(th, NULL);
	}
	if (rc == WB_OK && h1.rc != WB_OK) {
		rc = h1.rc;
	}
	if (rc == WB_OK && split && last) {
		rc = inbox_commit(in, s, ev->seq, true); /* both halves are in */
	}
	inbox_cache_page(in, ev, fans, n, put, rc == WB_OK);
	if (own) {
		inbox_cache_cell(in, ev, ev->uid, put, rc == WB_OK);
	}
	return rc;
}

/* inbox_fans_add appends the n uids of a page to the run *run (*len of them, room for *cap). */
static int
inbox_fans_add(uint64_t **run, size_t *len, size_t *cap, const uint64_t *fans, size_t n)
{
	if (n == 0) {
		return WB_OK; /* an empty page (fans may be NULL) */
	}
	if (*len + n > *cap) {
		size_t    c = (*len + n) * 2;
		uint64_t *p = realloc(*run, c * sizeof(*p));
		if (p == NULL) {
			return WB_ENOMEM;
		}
		*run = p;
		*cap = c;
	}
	memcpy(*run + *len, fans, n * sizeof(*fans));
	*len += n;
	return WB_OK;
}

/* inbox_fans_each pages through author's fans in this inbox's slots,
 * relation shard by relation shard, gathering pages into runs of
 * opts.fans_run fans or more, each written in uid order: a put (post) or a delete of
 * version id to each fan's row, and to the author's own row with the
 * first run when the author is a reader here; the event's last write
 * also carries the source's applied seq. */
static int
inbox_fans_each(inbox *in, inbox_source *s, const inbox_event *ev, bool put)
{
	inbox_fetch f[2]; /* the page being read and the next one */
	int         c = 0;
	uint64_t    cells = 0, *run = NULL;
	size_t      len = 0, cap = 0;
	bool        own = inbox_mine(in, ev->uid); /* with the first run, then done */
	int         rc;
	/* nothing to overlap the first page with */
	inbox_fetch_start(&f[c], in, ev->uid, in->rel_lo, 0, false);
	for (;;) {
		inbox_fetch *cur = &f[c];
		rc = inbox_fetch_wait(cur);
		if (rc != WB_OK) {
			wb_msg_free(cur->rep);
			free(run);
			return rc;
		}
		const uint64_t *fans = NULL;
		size_t          n = 0;
		uint64_t        after = 0;
		(void)wb_get_u64s(cur->rep, WB_F_UIDS, &fans, &n);
		/* the next page: on this shard, or the first of the next one */
		bool here = wb_get_u64(cur->rep, WB_F_NEXT, &after) && n > 0 && after != 0;
		bool more = here || cur->shard + 1 < in->rel_hi;
		if (more) {
			inbox_fetch_start(&f[c ^ 1], in, ev->uid,
			    here ? cur->shard : cur->shard + 1, here ? after : 0, true);
		}
		rc = inbox_fans_add(&run, &len, &cap, fans, n);
		wb_msg_free(cur->rep);
		cur->rep = NULL;
		if (rc == WB_OK && (!more || len >= in->opts.fans_run)) {
			if (len > 1) {
				qsort(run, len, sizeof(*run), inbox_u64_cmp);
			}
			rc = inbox_fans_write(in, s, ev, put, run, len, own, !more);
			cells += rc == WB_OK ? len + own : 0;
			own = false;
			len = 0;
		}
		if (!more) {
			break;
		}
		c ^= 1;
		if (rc != WB_OK) {
			inbox_fetch_wait(&f[c]);
			wb_msg_free(f[c].rep);
			free(run);
			return rc;
		}
	}
	free(run);
	if (rc == WB_OK) {
		INBOX_STORE(&in->last_fanout_cells, cells);
		if (put) {
			inbox_big_seen(in, ev->uid, cells - inbox_mine(in, ev->uid));
		}
	}
	return rc;
}

/* A cell of a merged write: post id by author, for fan's inbox. */
typedef struct inbox_mcell {
	uint64_t fan, id, author;
} inbox_mcell;

/* inbox_mcell_cmp orders cells as their keys: by fan, then newest post first. */
static int
inbox_mcell_cmp(const void *a, const void *b)
{
	const inbox_mcell *x = a, *y = b;

	if (x->fan != y->fan) {
		return x->fan < y->fan ? -1 : 1;
	}
	return x->id > y->id ? -1 : x->id < y->id;
}

/* inbox_write_sorted writes cells[0..n) (in key order) INBOX_MERGE_CHUNK
 * to a write, yielding the core between writes; with seq, the last write
 * also carries it as s's applied seq (with n 0, alone). */
static int
inbox_write_sorted(inbox *in, inbox_source *s, const inbox_mcell *cells, size_t n, uint64_t seq)
{
	size_t i = 0;
	int    rc = WB_OK;

	if (n == 0 && seq == 0) {
		return WB_OK; /* nothing to write */
	}
	do {
		size_t end = n - i > INBOX_MERGE_CHUNK ? i + INBOX_MERGE_CHUNK : n;
		for (; rc == WB_OK && i < end; i++) {
			uint8_t row[8], val[8];

			hb_u64_be(row, cells[i].fan);
			hb_u64_be(val, cells[i].author);
			rc = hb_batch_put(
			    in->batch, in->t, INBOX_FAM_TL, row, 8, NULL, 0, cells[i].id, val, 8);
		}
		if (rc != WB_OK) {
			hb_batch_clear(in->batch);
		} else if ((rc = inbox_commit(in, s, seq, seq != 0 && i == n)) == WB_OK && i < n) {
			sched_yield(); /* a reader woken on this core runs now, not in ms */
		}
	} while (rc == WB_OK && i < n);
	return rc;
}

/* inbox_fans_many asks relation shard j, in one batch message, for up to limit of the fans each event's author has in this inbox's slots there; *reps is rep's reply per event. */
static int
inbox_fans_many(inbox *in, unsigned j, const inbox_event *evs, size_t n, uint64_t limit,
    wb_obj **rep, const wb_obj **reps)
{
	wb_obj *reqs[INBOX_MERGE_MAX] = { NULL };
	int     rc = WB_OK;

	*rep = NULL;
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		const char *prev = wb_rid_swap(evs[i].rid[0] != '\0' ? evs[i].rid : NULL);

		reqs[i] =
		    inbox_fans_req(in, j, evs[i].uid, 0, limit); /* with its event's request id */
		wb_rid_swap(prev);
		if (reqs[i] == NULL) {
			rc = WB_ENOMEM;
		}
	}
	if (rc == WB_OK) {
		rc = rt_call_batch(
		    rt_shards_at(in->relation, j), (const wb_obj *const *)reqs, n, rep, reps);
	}
	for (size_t i = 0; i < n; i++) {
		const char *emsg = NULL;

		if (rc == WB_OK && (rc = wb_reply_code(&(*reps)[i], &emsg)) != WB_OK) {
			RT_WARNF("rel.fans of %llu: %s", (unsigned long long)evs[i].uid, emsg);
		}
		wb_msg_free(reqs[i]);
	}
	if (rc != WB_OK) {
		wb_msg_free(*rep);
		*rep = NULL;
	}
	return rc;
}

/*
 * inbox_apply_posts applies the post events evs[0..n) of s (consecutive
 * seqs) together.  Posts touch distinct cells, so their order does not
 * matter until the applied seq moves: the cells of every narrow author
 * (at most INBOX_MERGE_FANS fans on each relation shard), and each
 * narrow author's own cell when the author is a reader here, go first,
 * in key order, then each wide author's post is fanned out page by page
 * as it would be alone, and the run's last seq is stored last.  A crash
 * in between replays the run.
 */
static int
inbox_apply_posts(inbox *in, inbox_source *s, const inbox_event *evs, size_t n)
{
	unsigned      nrel = in->rel_hi - in->rel_lo;
	const wb_obj *reps[WB_SHARDS_MAX] = { NULL };
	wb_obj       *rep[WB_SHARDS_MAX] = { NULL };
	size_t        total = 0, narrow = 0, ncells = 0, last_wide = n;
	bool          wide[INBOX_MERGE_MAX] = { false };
	uint64_t      seen[INBOX_MERGE_MAX] = { 0 }; /* each author's fans here (a self-fan too) */
	inbox_mcell  *cells = NULL;
	uint64_t      limit =
            in->opts.fans_page < INBOX_MERGE_FANS ? in->opts.fans_page : INBOX_MERGE_FANS;
	int rc = WB_OK;

	for (unsigned k = 0; rc == WB_OK && k < nrel; k++) {
		rc = inbox_fans_many(in, in->rel_lo + k, evs, n, limit, &rep[k], &reps[k]);
		for (size_t i = 0; rc == WB_OK && i < n; i++) {
			uint64_t        next = 0;
			const uint64_t *f = NULL;
			size_t          nf = 0;
			if (wb_get_u64(&reps[k][i], WB_F_NEXT, &next) && next != 0) {
				wide[i] =
				    true; /* more fans than one page: fanned out page by page */
			}
			(void)wb_get_u64s(&reps[k][i], WB_F_UIDS, &f, &nf);
			total += nf;
		}
	}
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		if (!wide[i] && inbox_big_suspect(in, evs[i].uid)) {
			wide[i] = true; /* maybe over the limit: applied alone (inbox_hybrid.c) */
		}
		last_wide = wide[i] ? i : last_wide;
		narrow += !wide[i];
	}
	if (rc == WB_OK && (cells = malloc((total + n) * sizeof(*cells))) == NULL) {
		rc = WB_ENOMEM; /* n more: the authors' own cells */
	}
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		if (!wide[i] && inbox_mine(in, evs[i].uid)) {
			cells[ncells++] = (inbox_mcell) { evs[i].uid, evs[i].id, evs[i].uid };
		}
	}
	for (unsigned k = 0; rc == WB_OK && k < nrel; k++) {
		for (size_t i = 0; i < n; i++) {
			const uint64_t *f = NULL;
			size_t          nf = 0;
			if (wide[i] || !wb_get_u64s(&reps[k][i], WB_F_UIDS, &f, &nf)) {
				continue;
			}
			for (size_t x = 0; x < nf; x++) {
				if (f[x] != evs[i].uid) { /* the own cell is added once, above */
					cells[ncells++] =
					    (inbox_mcell) { f[x], evs[i].id, evs[i].uid };
				}
			}
		}
	}
	if (rc == WB_OK) {
		qsort(cells, ncells, sizeof(*cells), inbox_mcell_cmp);
		in->mark = inbox_event_mark(&evs[n - 1]);
		/* the seq goes with these cells unless a wide post is still to come */
		rc = inbox_write_sorted(in, s, cells, ncells, last_wide == n ? evs[n - 1].seq : 0);
		for (unsigned k = 0; k < nrel; k++) {
			for (size_t i = 0; i < n; i++) {
				const uint64_t *f = NULL;
				size_t          nf = 0;
				if (!wide[i] && wb_get_u64s(&reps[k][i], WB_F_UIDS, &f, &nf)) {
					inbox_cache_page(in, &evs[i], f, nf, true, rc == WB_OK);
					seen[i] += nf;
				}
			}
		}
		for (size_t i = 0; i < n; i++) {
			if (!wide[i] && inbox_mine(in, evs[i].uid)) {
				inbox_cache_cell(in, &evs[i], evs[i].uid, true, rc == WB_OK);
			}
			if (!wide[i] && rc == WB_OK) {
				inbox_big_seen(in, evs[i].uid, seen[i]);
			}
		}
	}
	if (rc == WB_OK) {
		INBOX_ADD(&in->cells_written, ncells);
		INBOX_ADD(&in->events_applied, narrow);
		INBOX_ADD(&in->posts_merged, narrow);
	}
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		if (wide[i]) {
			rc = inbox_apply(in, s, &evs[i]);
		}
	}
	if (rc == WB_OK && last_wide < n - 1) {
		in->mark = inbox_event_mark(&evs[n - 1]); /* narrow posts after the last wide one */
		rc = inbox_commit(in, s, evs[n - 1].seq, true);
	}
	free(cells);
	for (unsigned k = 0; k < nrel; k++) {
		wb_msg_free(rep[k]);
	}
	return rc;
}

/* inbox_elsewhere tells whether ev of s is about a reader another inbox shard keeps (a follow or unfollow of theirs). */
static bool
inbox_elsewhere(const inbox *in, const inbox_source *s, const inbox_event *ev)
{
	return s->relation &&
	       (ev->type == WB_EV_FOLLOW || ev->type == WB_EV_UNFOLLOW ||
	           ev->type == WB_EV_ERASED) &&
	       !inbox_mine(in, ev->uid);
}

static int inbox_apply_purges(inbox *in, inbox_source *s, const inbox_event *evs, size_t n);

int
inbox_apply_many(inbox *in, inbox_source *s, const inbox_event *evs, size_t n)
{
	size_t i = 0;
	int    rc = WB_OK;

	while (rc == WB_OK && i < n && !in->stop) {
		size_t run = 0;

		/* events for other shards' readers change nothing here: the
		 * applied seq moves past them with the next write */
		while (i + run < n && inbox_elsewhere(in, s, &evs[i + run])) {
			run++;
		}
		if (run > 0) {
			if (i + run == n) {
				in->mark = inbox_event_mark(&evs[n - 1]);
				rc = inbox_commit(in, s, evs[n - 1].seq, true);
			}
			i += rc == WB_OK ? run : 0;
			continue;
		}

		while (i + run < n && run < INBOX_MERGE_MAX && evs[i + run].type == WB_EV_POST) {
			run++;
		}
		if (run > 1) {
			rc = inbox_apply_posts(in, s, evs + i, run);
			if (rc == WB_OK) {
				inbox_visible_note(in, evs + i, run);
				i += run;
			}
			continue;
		}
		while (i + run < n && run < INBOX_PURGE_MAX &&
		       evs[i + run].type == WB_EV_UNFOLLOW &&
		       !inbox_elsewhere(in, s, &evs[i + run])) {
			run++;
		}
		if (run > 1) {
			rc = inbox_apply_purges(in, s, evs + i, run);
		} else {
			rc = inbox_apply(in, s, &evs[i]);
			run = 1;
		}
		if (rc == WB_OK) {
			inbox_visible_note(in, evs + i, run);
			i += run;
		}
	}
	return rc;
}

/* inbox_backfill copies target's newest posts (up to opts.backfill) into follower's inbox. */
static int
inbox_backfill(inbox *in, inbox_source *s, const inbox_event *ev)
{
	uint8_t  row[8], val[8];
	uint64_t before = 0, left = in->opts.backfill;
	int      rc = WB_OK;
	hb_u64_be(row, ev->uid);
	hb_u64_be(val, ev->target);
	while (rc == WB_OK && left > 0 && ev->uid != ev->target) {
		wb_obj *req = wb_request(WB_OP_POST_TIMELINE), *rep = NULL;
		if (req == NULL) {
			return WB_ENOMEM;
		}
		wb_set_u64(req, WB_F_UID, ev->target);
		wb_set_u64(req, WB_F_LIMIT, left < 100 ? left : 100);
		if (before) {
			wb_set_u64(req, WB_F_BEFORE, before);
		}
		rc = rt_call(rt_shards_for_uid(in->content, ev->target), req, &rep);
		wb_msg_free(req);
		const wb_obj *posts = NULL;
		size_t        n = 0;
		if (rc == WB_OK) {
			(void)wb_get_objs(rep, WB_F_POSTS, &posts, &n);
		}
		for (size_t i = 0; rc == WB_OK && i < n && left > 0; i++, left--) {
			uint64_t id = wb_u64(&posts[i], WB_F_ID, 0);
			if (id != 0) {
				rc = hb_batch_put(
				    in->batch, in->t, INBOX_FAM_TL, row, 8, NULL, 0, id, val, 8);
			}
		}
		if (rc == WB_OK) {
			INBOX_ADD(&in->cells_written, n);
		}
		if (rc == WB_OK && (n == 0 || !wb_get_u64(rep, WB_F_NEXT, &before))) {
			left = 0;
		}
		wb_msg_free(rep);
	}
	if (rc == WB_OK) {
		rc = inbox_big_follow(in, in->batch, ev, true);
	}
	if (rc == WB_OK) {
		rc = inbox_commit(in, s, ev->seq, true);
	} else {
		hb_batch_clear(in->batch);
	}
	inbox_cache_drop(in->cache, ev->uid);
	return rc;
}

/*
 * inbox_purge_row adds to in->batch the delete of every post by target in
 * follower's inbox (*n counts them): also the cells beyond the inbox
 * cap.  A row holds more than the cap for a
 * while when the inbox lags (content events replay old posts while follows
 * backfill current ones); reads show the newest inbox-max, and a purge
 * that left the older ones would see them back in the home once newer
 * cells are deleted.  A reader's own posts are never purged: one
 * follows and unfollows others only, and an event saying otherwise
 * (uid = target) only moves the applied seq.
 */
static int
inbox_purge_row(inbox *in, const inbox_event *ev, size_t *n)
{
	uint8_t      row[8];
	hb_scan     *sc = NULL;
	hb_cell      c;
	hb_scan_opts o;

	if (ev->uid == ev->target) {
		return WB_OK; /* never one's own posts: the event only moves the applied seq */
	}
	hb_scan_opts_id_row(&o, row, ev->uid);
	o.all_versions = true;
	int rc = hb_scan_open(&sc, in->t, INBOX_FAM_TL, &o);
	while (rc == WB_OK && (rc = hb_scan_next(sc, &c)) == WB_OK) {
		if (c.value_len == 8 && hb_be_u64(c.value) == ev->target) {
			rc = hb_batch_delete_version(
			    in->batch, in->t, INBOX_FAM_TL, row, 8, NULL, 0, c.version);
			(*n)++;
		}
	}
	hb_scan_close(sc);
	if (rc == WB_EEND) {
		rc = inbox_big_follow(in, in->batch, ev, false); /* hidden at once if big */
	}
	return rc;
}

/* inbox_purge applies one unfollow: its row's cells by the target, with the applied seq. */
static int
inbox_purge(inbox *in, inbox_source *s, const inbox_event *ev)
{
	size_t n = 0;
	int    rc = inbox_purge_row(in, ev, &n);

	if (rc != WB_OK) {
		hb_batch_clear(in->batch);
		return rc;
	}
	INBOX_ADD(&in->cells_deleted, n);
	rc = inbox_commit(in, s, ev->seq, true);
	inbox_cache_drop(in->cache, ev->uid);
	return rc;
}

/* inbox_event_row_cmp orders events (by pointer) by their reader, as the rows' keys sort. */
static int
inbox_event_row_cmp(const void *a, const void *b)
{
	uint64_t x = (*(const inbox_event *const *)a)->uid,
	         y = (*(const inbox_event *const *)b)->uid;

	return x < y ? -1 : x > y;
}

/*
 * inbox_apply_purges applies a run of unfollows of this shard's readers
 * (consecutive seqs) as one write: each reader's row scanned as
 * inbox_purge scans it, every delete in one batch with the run's last
 * seq.  A deleted account's fans come as such a run, a thousand per
 * relation batch (rel_erase.c): one write per run, not per fan.  A crash
 * replays the run; deleting a cell twice is harmless.
 */
static int
inbox_apply_purges(inbox *in, inbox_source *s, const inbox_event *evs, size_t n)
{
	const inbox_event **by_row = malloc(n * sizeof(*by_row));
	size_t              cells = 0;
	int                 rc = by_row == NULL ? WB_ENOMEM : WB_OK;

	/* rows in key order: each delete's memtable insert starts where the last one ended */
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		by_row[i] = &evs[i];
	}
	if (rc == WB_OK) {
		qsort(by_row, n, sizeof(*by_row), inbox_event_row_cmp);
	}
	hb_batch_clear(in->batch);
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		rc = inbox_purge_row(in, by_row[i], &cells);
	}
	free(by_row);
	if (rc != WB_OK) {
		hb_batch_clear(in->batch);
		return rc;
	}
	in->mark = inbox_event_mark(&evs[n - 1]);
	if ((rc = inbox_commit(in, s, evs[n - 1].seq, true)) != WB_OK) {
		return rc;
	}
	for (size_t i = 0; i < n; i++) {
		inbox_cache_drop(in->cache, evs[i].uid);
	}
	INBOX_ADD(&in->cells_deleted, cells);
	INBOX_ADD(&in->events_applied, n);
	return WB_OK;
}

/*
 * inbox_erase_row drops a deleted account's row whole, with the source's
 * applied seq.  Relation's "erased" {uid} comes after every follow of uid
 * and every fan cell of uid is gone from that shard, so no later event
 * of others writes into the row again (rel_erase.c); content's comes
 * after every post of uid, so none of its own cells comes back
 * (content_erase.c).  Either may come first: the row is dropped on each,
 * with the reader's list of big accounts followed and, on every shard,
 * the account's outbox if it was big.
 */
int
inbox_erase_row(inbox *in, inbox_source *s, const inbox_event *ev)
{
	uint8_t row[8];
	int     rc = WB_OK;

	hb_u64_be(row, ev->uid);
	if (inbox_mine(in, ev->uid)) {
		rc = hb_batch_delete_row(in->batch, in->t, INBOX_FAM_TL, row, 8);
	}
	if (rc == WB_OK) {
		rc = inbox_big_erase(in, in->batch, ev->uid);
	}
	if (rc != WB_OK) {
		hb_batch_clear(in->batch);
		return rc;
	}
	if ((rc = inbox_commit(in, s, ev->seq, true)) == WB_OK) {
		inbox_big_forget(in, ev->uid);
	}
	inbox_cache_drop(in->cache, ev->uid);
	return rc;
}

int
inbox_apply(inbox *in, inbox_source *s, const inbox_event *ev)
{
	const char *prev_rid = wb_rid_swap(ev->rid[0] != '\0' ? ev->rid : NULL);
	const char *prev_svc = rt_log_swap_service("inbox");
	int         rc;

	hb_batch_clear(in->batch);
	in->mark = inbox_event_mark(ev); /* stored with the applied seq */
	switch (ev->type) {
	case WB_EV_POST:
	case WB_EV_DELETE: {
		uint64_t t0 = wb_mono_us();
		bool     done = false;
		INBOX_STORE(&in->fanout_in_progress, 1);
		/* a big account's post goes to its outbox; its deletes leave the outbox, then fan out */
		rc = ev->type == WB_EV_POST ? inbox_big_post(in, s, ev, &done)
		                            : inbox_big_delete(in, ev);
		if (rc == WB_OK && !done) {
			rc = inbox_fans_each(in, s, ev, ev->type == WB_EV_POST);
		}
		INBOX_STORE(&in->fanout_in_progress, 0);
		if (rc == WB_OK) {
			INBOX_STORE(&in->last_fanout_ms, (wb_mono_us() - t0 + 500) / 1000);
		}
		break;
	}
	case WB_EV_FOLLOW:
		rc = inbox_backfill(in, s, ev);
		break;
	case WB_EV_UNFOLLOW:
		rc = inbox_purge(in, s, ev);
		break;
	case WB_EV_ERASED:
		rc = inbox_erase_row(in, s, ev);
		break;
	default:
		rc = inbox_commit(in, s, ev->seq, true);
		break;
	}
	if (rc == WB_OK) {
		INBOX_ADD(&in->events_applied, 1);
	}
	RT_DEBUGF("%s event %s seq %llu applied: %s", s->name, wb_event_name(ev->type),
	    (unsigned long long)ev->seq, rc == WB_OK ? "ok" : wb_strerror(rc));
	rt_log_swap_service(prev_svc);
	wb_rid_swap(prev_rid);
	return rc;
}
