/*
 * inbox_hybrid.c - hybrid fan-out: the posts of accounts with more than
 * WARBLE_FANOUT_LIMIT followers are kept once per inbox shard, in the
 * account's outbox, and merged into its followers' homes when read.
 *
 *   post by X, X big here       (X, id) -> out, and X's own tl cell: 1-2 cells
 *   post by X, X not big        fan-out as ever, then X's local fans noted
 *   delete by X                 out cell deleted (if big), then fan-out of the delete
 *   follow R -> X, X big        backfill as ever, and (R, X) -> bigf
 *   unfollow R -> X             purge as ever, and (R, X) out of bigf
 *   inbox.home of R             tl, merged with out of every big X in R's bigf row
 *
 * Who is big.  The count that matters is X's followers summed over every
 * relation shard (rel.counts, each shard's part).  Asking it for every post
 * would double the calls to relation, so each inbox shard asks it only
 * about the authors that may be over the limit: those it keeps as big,
 * and those whose last fan-out here, scaled from this shard's slots to all
 * 4096, came to more than half the limit (a table of recent authors and
 * the fans they had here).  It asks on the applier thread while applying
 * one of X's posts, and so crosses only there, in X's content shard's seq
 * order with X's other posts and deletes: an account found over the limit
 * by one post's fan-out has its next post go to the outbox.
 *
 * Each inbox shard decides for itself.  Two shards may disagree for a
 * while (one saw X's fans grow on its last fan-out, the other not yet);
 * that is harmless, since a reader's home is read from its own shard's
 * state alone, and that state is right whichever way the shard decided.
 *
 * What makes a home right.  Every post of X is, on every shard, either
 * in the tl row of each reader of the shard who follows X (fanned out),
 * or in X's outbox with every such reader in bigf, or both: the read
 * takes each id once.
 *
 *   crossing up (applying a post of X, count > limit):
 *     1. (F, X) -> bigf for every fan F of X in this shard's slots (rel.fans)
 *     2. X -> big, then X into the set the reads check
 *     the post then goes to the outbox.  X's earlier posts stay in the
 *     fans' rows, where they were fanned out.
 *   crossing down (applying a post of X, count <= limit):
 *     1. every post in X's outbox -> tl of every fan of X here (rel.fans)
 *     2. (F, X) out of bigf for those fans
 *     3. X out of big and its outbox row deleted, X out of the set
 *     the post is then fanned out as any other.
 *
 * A crash between the steps replays the event: the big row still says big,
 * the steps are redone, and rewriting a cell is harmless.  A home read
 * meanwhile finds every post in tl or in the outbox, at worst in both.
 * Follows and unfollows not yet applied when a crossing reads rel.fans (the
 * relation store is ahead of its events here) are applied afterwards as
 * usual: a follow's backfill and bigf cell, an unfollow's purge and bigf
 * delete, so every order of the events ends in the same state.  A bigf
 * cell of an account that is not big (an unfollow still to come) is never
 * read: the read checks the set.
 *
 * Deletes of a big account's posts still fan out (a delete to each fan's
 * row, as before): a post may sit in a fan's row from before the crossing,
 * from a follow's backfill or from a crossing down.  Deletes are rare; the
 * posts are not.
 *
 * Crossing down copies the outbox (at most WARBLE_INBOX_MAX posts) to
 * every fan here, so an account's count swinging around the limit costs a
 * copy each time it is found below it; it is found only on its own posts.
 */
#include <stdlib.h>
#include <string.h>

#include "inbox_int.h"
#include "inbox_schema.h"
#include "rt_log.h"
#include "wb_hash.h"

#define INBOX_SEEN_SLOTS 4096  /* recent authors whose local fans are noted (direct-mapped) */
#define INBOX_HYB_BATCH  65536 /* cells per write of a crossing */

/* An author and the fans it had in this shard's slots at its last fan-out. */
struct inbox_seen {
	uint64_t uid, fans;
};

/*
 * A big account, and the head of its outbox: ids[0..n) are the newest n
 * posts of its out row, newest first, and complete says the row holds no
 * other.  A first page of a home takes them from here instead of opening
 * a scan of each outbox; the applier keeps them in step after each write
 * to the row (a reader in between sees the row as it was just before).
 */
struct inbox_big {
	uint64_t uid;
	uint32_t n;
	bool     complete;
	uint64_t ids[INBOX_CACHE_CELLS];
};

/* inbox_big_find gives the index of uid in the sorted set, or where it would go (under big_mu). */
static size_t
inbox_big_find(const inbox *in, uint64_t uid, bool *found)
{
	size_t lo = 0, hi = in->nbig;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (in->big[mid].uid < uid) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	*found = lo < in->nbig && in->big[lo].uid == uid;
	return lo;
}

bool
inbox_big_is(inbox *in, uint64_t uid)
{
	bool found = false;

	if (INBOX_LOAD(&in->nbig_live) == 0) {
		return false;
	}
	pthread_rwlock_rdlock(&in->big_mu);
	(void)inbox_big_find(in, uid, &found);
	pthread_rwlock_unlock(&in->big_mu);
	return found;
}

/* inbox_big_set adds uid to the set (big) or takes it out. */
static int
inbox_big_set(inbox *in, uint64_t uid, bool big)
{
	bool   found;
	int    rc = WB_OK;
	size_t at;

	pthread_rwlock_wrlock(&in->big_mu);
	at = inbox_big_find(in, uid, &found);
	if (big && !found) {
		if (in->nbig == in->big_cap) {
			size_t     cap = in->big_cap ? in->big_cap * 2 : 16;
			inbox_big *p = realloc(in->big, cap * sizeof(*p));
			if (p == NULL) {
				rc = WB_ENOMEM;
			} else {
				in->big = p;
				in->big_cap = cap;
			}
		}
		if (rc == WB_OK) {
			memmove(
			    &in->big[at + 1], &in->big[at], (in->nbig - at) * sizeof(in->big[0]));
			in->big[at] =
			    (inbox_big) { .uid = uid, .complete = true }; /* an empty outbox */
			in->nbig++;
		}
	} else if (!big && found) {
		memmove(&in->big[at], &in->big[at + 1], (in->nbig - at - 1) * sizeof(in->big[0]));
		in->nbig--;
	}
	INBOX_STORE(&in->nbig_live, in->nbig);
	pthread_rwlock_unlock(&in->big_mu);
	return rc;
}

/* inbox_head_cap gives the posts an outbox head holds at most: what a read of the row shows. */
static uint32_t
inbox_head_cap(const inbox *in)
{
	return in->opts.max_versions < INBOX_CACHE_CELLS ? in->opts.max_versions
	                                                 : INBOX_CACHE_CELLS;
}

/* inbox_head_load reads the head of uid's outbox from the store (at open). */
static int
inbox_head_load(inbox *in, uint64_t uid)
{
	uint64_t     ids[INBOX_CACHE_CELLS];
	uint32_t     n = 0, cap = inbox_head_cap(in);
	uint8_t      row[8];
	hb_scan     *sc = NULL;
	hb_cell      c;
	hb_scan_opts o;
	bool         found;
	int          rc;

	hb_scan_opts_id_row(&o, row, uid);
	o.limit = cap + 1; /* one more: does the row hold more than the head? */
	rc = hb_scan_open(&sc, in->t, INBOX_FAM_OUT, &o);
	while (rc == WB_OK && n <= cap && (rc = hb_scan_next(sc, &c)) == WB_OK) {
		if (n < cap) {
			ids[n] = c.version;
		}
		n++;
	}
	hb_scan_close(sc);
	if (rc != WB_OK && rc != WB_EEND) {
		return rc;
	}
	pthread_rwlock_wrlock(&in->big_mu);
	size_t at = inbox_big_find(in, uid, &found);
	if (found) {
		inbox_big *b = &in->big[at];
		b->n = n < cap ? n : cap;
		b->complete = n <= cap;
		memcpy(b->ids, ids, b->n * sizeof(ids[0]));
	}
	pthread_rwlock_unlock(&in->big_mu);
	return WB_OK;
}

/* inbox_head_put adds post id to uid's outbox head once the store has it. */
static void
inbox_head_put(inbox *in, uint64_t uid, uint64_t id)
{
	uint32_t cap = inbox_head_cap(in);
	bool     found;

	pthread_rwlock_wrlock(&in->big_mu);
	size_t at = inbox_big_find(in, uid, &found);
	if (found) {
		inbox_big *b = &in->big[at];
		uint32_t   k = 0;
		while (k < b->n && b->ids[k] > id) {
			k++;
		}
		if (k < b->n && b->ids[k] == id) {
			/* there already (an event replayed) */
		} else if (k < cap) {
			if (b->n == cap) {
				b->n--; /* the oldest leaves the head, not the row */
				b->complete = false;
			}
			memmove(&b->ids[k + 1], &b->ids[k], (b->n - k) * sizeof(b->ids[0]));
			b->ids[k] = id;
			b->n++;
		} else {
			b->complete = false; /* older than the whole head: in the row only */
		}
	}
	pthread_rwlock_unlock(&in->big_mu);
}

/* inbox_head_del takes post id out of uid's outbox head once the store has deleted it. */
static void
inbox_head_del(inbox *in, uint64_t uid, uint64_t id)
{
	bool found;

	pthread_rwlock_wrlock(&in->big_mu);
	size_t at = inbox_big_find(in, uid, &found);
	if (found) {
		inbox_big *b = &in->big[at];
		for (uint32_t k = 0; k < b->n; k++) {
			if (b->ids[k] == id) {
				memmove(
				    &b->ids[k], &b->ids[k + 1], (b->n - k - 1) * sizeof(b->ids[0]));
				b->n--;
				break;
			}
		}
	}
	pthread_rwlock_unlock(&in->big_mu);
}

/*
 * inbox_head_get copies the newest want posts of big account uid's outbox
 * into out (fewer if it has fewer) and returns how many; -1 if uid is not
 * big here, -2 if the head cannot tell (too few, or the oldest one wanted
 * past the TTL): then the row must be read.
 */
static int
inbox_head_get(inbox *in, uint64_t uid, size_t want, inbox_cell *out)
{
	bool found;
	int  got = -1;

	pthread_rwlock_rdlock(&in->big_mu);
	size_t at = inbox_big_find(in, uid, &found);
	if (found) {
		const inbox_big *b = &in->big[at];
		size_t           k = b->n < want ? b->n : want;
		got = -2;
		if ((k == want || b->complete) &&
		    (k == 0 || hb_live(in->t, INBOX_FAM_OUT, b->ids[k - 1]))) {
			for (size_t i = 0; i < k; i++) {
				out[i] = (inbox_cell) { b->ids[i], uid };
			}
			got = (int)k;
		}
	}
	pthread_rwlock_unlock(&in->big_mu);
	return got;
}

int
inbox_hybrid_open(inbox *in)
{
	hb_scan *sc = NULL;
	hb_cell  c;
	int      rc;

	pthread_rwlock_init(&in->big_mu, NULL);
	in->big_mu_live = true;
	if ((in->seen = calloc(INBOX_SEEN_SLOTS, sizeof(*in->seen))) == NULL) {
		return WB_ENOMEM;
	}
	rc = hb_scan_open(&sc, in->t, INBOX_FAM_BIG, NULL);
	while (rc == WB_OK && (rc = hb_scan_next(sc, &c)) == WB_OK) {
		if (c.row_len == 8) {
			rc = inbox_big_set(in, hb_be_u64(c.row), true);
		}
	}
	hb_scan_close(sc);
	rc = rc == WB_EEND ? WB_OK : rc;
	for (size_t i = 0; rc == WB_OK && i < in->nbig; i++) {
		rc = inbox_head_load(in, in->big[i].uid); /* the applier has not started */
	}
	return rc;
}

void
inbox_hybrid_close(inbox *in)
{
	if (in->big_mu_live) {
		pthread_rwlock_destroy(&in->big_mu);
	}
	free(in->big);
	free(in->seen);
}

/* inbox_seen_at gives the table entry of uid. */
static inbox_seen *
inbox_seen_at(inbox *in, uint64_t uid)
{
	return &in->seen[wb_mix64(uid) & (INBOX_SEEN_SLOTS - 1)];
}

void
inbox_big_seen(inbox *in, uint64_t uid, uint64_t fans)
{
	if (in->seen != NULL && in->opts.fanout_limit > 0) {
		*inbox_seen_at(in, uid) = (inbox_seen) { uid, fans };
	}
}

bool
inbox_big_suspect(inbox *in, uint64_t uid)
{
	if (inbox_big_is(in, uid)) {
		return true;
	}
	if (in->seen == NULL || in->opts.fanout_limit == 0) {
		return false;
	}
	const inbox_seen *e = inbox_seen_at(in, uid);
	if (e->uid != uid) {
		return false;
	}
	/* this shard's fans scaled to every slot, against half the limit */
	uint64_t est = e->fans * WB_SLOTS / (in->hi - in->lo);
	return est * 2 > in->opts.fanout_limit;
}

/* inbox_big_count sums uid's followers over every relation shard (rel.counts, asked at once). */
static int
inbox_big_count(inbox *in, uint64_t uid, uint64_t *count)
{
	rt_pending *p[WB_SHARDS_MAX] = { NULL };
	wb_obj     *req = wb_request(WB_OP_REL_COUNTS);
	int         rc = req != NULL ? wb_set_u64s(req, WB_F_UIDS, &uid, 1) : WB_ENOMEM;

	*count = 0;
	for (unsigned j = 0; j < in->nrelation; j++) {
		int r = rc == WB_OK ? rt_call_start(rt_shards_at(in->relation, j), req, &p[j]) : rc;
		rc = r;
	}
	for (unsigned j = 0; j < in->nrelation; j++) {
		wb_obj       *rep = NULL;
		const wb_obj *users = NULL;
		size_t        n = 0;
		int           r = p[j] != NULL ? rt_call_finish(p[j], &rep) : WB_OK;
		if (rc == WB_OK && r != WB_OK) {
			rc = r;
		}
		if (rc == WB_OK && wb_get_objs(rep, WB_F_USERS, &users, &n) && n == 1) {
			*count += wb_u64(&users[0], WB_F_FOLLOWERS, 0);
		} else if (rc == WB_OK) {
			rc = WB_EBADMSG;
		}
		wb_msg_free(rep);
	}
	wb_msg_free(req);
	if (rc != WB_OK) {
		RT_WARNF("rel.counts of %llu: %s", (unsigned long long)uid, wb_strerror(rc));
	}
	return rc;
}

/* inbox_hyb_flush writes the applier's batch if it holds at least min cells (none: always). */
static int
inbox_hyb_flush(inbox *in, size_t min)
{
	int rc = WB_OK;

	if (hb_batch_count(in->batch) > 0 && hb_batch_count(in->batch) >= min) {
		rc = hb_write(in->t, in->batch);
		hb_batch_clear(in->batch);
	}
	return rc;
}

/* A crossing's work on one page of uid's fans here (fans other than uid itself). */
typedef int (*inbox_fans_fn)(inbox *in, uint64_t uid, const uint64_t *fans, size_t n, void *arg);

/* inbox_big_fans pages through uid's fans in this shard's slots, relation shard by shard,
 * handing each page to fn. */
static int
inbox_big_fans(inbox *in, uint64_t uid, inbox_fans_fn fn, void *arg)
{
	int rc = WB_OK;

	for (unsigned j = in->rel_lo; rc == WB_OK && j < in->rel_hi && !in->stop; j++) {
		uint64_t after = 0;
		bool     more = true;
		while (rc == WB_OK && more && !in->stop) {
			wb_obj         *req = inbox_fans_req(in, j, uid, after, in->opts.fans_page);
			wb_obj         *rep = NULL;
			const uint64_t *fans = NULL;
			size_t          n = 0;
			if (req == NULL) {
				return WB_ENOMEM;
			}
			rc = rt_call(rt_shards_at(in->relation, j), req, &rep);
			wb_msg_free(req);
			if (rc == WB_OK) {
				(void)wb_get_u64s(rep, WB_F_UIDS, &fans, &n);
				more = wb_get_u64(rep, WB_F_NEXT, &after) && n > 0 && after != 0;
				rc = fn(in, uid, fans, n, arg);
			}
			wb_msg_free(rep);
		}
	}
	return rc == WB_OK && in->stop ? WB_ECLOSED : rc;
}

/* inbox_up_page puts (fan, uid) into bigf for a page of fans. */
static int
inbox_up_page(inbox *in, uint64_t uid, const uint64_t *fans, size_t n, void *arg)
{
	uint8_t row[8], q[8];
	int     rc = WB_OK;

	(void)arg;
	hb_u64_be(q, uid);
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		if (fans[i] != uid) {
			hb_u64_be(row, fans[i]);
			rc = hb_batch_put(in->batch, in->t, INBOX_FAM_BIGF, row, 8, q, 8, 0, "", 0);
		}
		if (rc == WB_OK) {
			rc = inbox_hyb_flush(in, INBOX_HYB_BATCH);
		}
	}
	return rc == WB_OK ? inbox_hyb_flush(in, 0) : rc;
}

/* inbox_big_up makes uid big here: bigf cells for its fans, then its big row and the set. */
static int
inbox_big_up(inbox *in, uint64_t uid, uint64_t count)
{
	uint8_t row[8], v[8];
	int     rc;

	hb_batch_clear(in->batch);
	rc = inbox_big_fans(in, uid, inbox_up_page, NULL);
	hb_u64_be(row, uid);
	hb_u64_be(v, count);
	if (rc == WB_OK) {
		rc = hb_batch_put(in->batch, in->t, INBOX_FAM_BIG, row, 8, NULL, 0, 0, v, 8);
	}
	if (rc == WB_OK) {
		rc = inbox_hyb_flush(in, 0);
	}
	hb_batch_clear(in->batch);
	if (rc == WB_OK && (rc = inbox_big_set(in, uid, true)) == WB_OK) {
		rc = inbox_head_load(in, uid); /* an empty outbox, but read it to be sure */
	}
	if (rc == WB_OK) {
		INBOX_ADD(&in->crossed_up, 1);
		RT_INFOF("%llu has %llu followers (over %llu): its posts go to its outbox",
		    (unsigned long long)uid, (unsigned long long)count,
		    (unsigned long long)in->opts.fanout_limit);
	}
	return rc;
}

/* The posts of an outbox being copied into fans' rows. */
typedef struct inbox_down {
	uint64_t *ids;
	size_t    n;
} inbox_down;

/* inbox_down_page copies the outbox's posts into each fan's row and drops the fan's bigf cell. */
static int
inbox_down_page(inbox *in, uint64_t uid, const uint64_t *fans, size_t n, void *arg)
{
	const inbox_down *d = arg;
	uint8_t           row[8], q[8], val[8];
	size_t            done = 0; /* fans whose cells are written: their cache entries dropped */
	int               rc = WB_OK;

	hb_u64_be(q, uid);
	hb_u64_be(val, uid);
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		if (fans[i] == uid) {
			continue;
		}
		hb_u64_be(row, fans[i]);
		for (size_t k = 0; rc == WB_OK && k < d->n; k++) {
			rc = hb_batch_put(
			    in->batch, in->t, INBOX_FAM_TL, row, 8, NULL, 0, d->ids[k], val, 8);
		}
		if (rc == WB_OK) {
			rc = hb_batch_delete_column(
			    in->batch, in->t, INBOX_FAM_BIGF, row, 8, q, 8, HB_LATEST);
		}
		if (rc == WB_OK && hb_batch_count(in->batch) >= INBOX_HYB_BATCH) {
			rc = inbox_hyb_flush(in, 0);
			for (; rc == WB_OK && done <= i; done++) {
				inbox_cache_drop(in->cache, fans[done]);
			}
		}
	}
	if (rc == WB_OK) {
		rc = inbox_hyb_flush(in, 0);
	}
	for (; done < n; done++) {
		inbox_cache_drop(
		    in->cache, fans[done]); /* written, or maybe not: dropped either way */
	}
	if (rc == WB_OK) {
		INBOX_ADD(&in->cells_written, (uint64_t)n * d->n);
	}
	return rc;
}

/* inbox_big_down makes uid an ordinary account again here: its outbox into its fans' rows,
 * their bigf cells dropped, then its big row and outbox deleted and the set told. */
static int
inbox_big_down(inbox *in, uint64_t uid, uint64_t count)
{
	uint8_t      row[8];
	hb_scan     *sc = NULL;
	hb_cell      c;
	hb_scan_opts o;
	inbox_down   d = { NULL, 0 };
	int          rc = WB_OK;

	if ((d.ids = malloc(in->opts.max_versions * sizeof(*d.ids))) == NULL) {
		return WB_ENOMEM;
	}
	hb_scan_opts_id_row(&o, row, uid);
	rc = hb_scan_open(&sc, in->t, INBOX_FAM_OUT, &o);
	while (rc == WB_OK && d.n < in->opts.max_versions && (rc = hb_scan_next(sc, &c)) == WB_OK) {
		d.ids[d.n++] = c.version;
	}
	hb_scan_close(sc);
	rc = rc == WB_EEND ? WB_OK : rc;
	hb_batch_clear(in->batch);
	if (rc == WB_OK) {
		rc = inbox_big_fans(in, uid, inbox_down_page, &d);
	}
	if (rc == WB_OK &&
	    (rc = hb_batch_delete_row(in->batch, in->t, INBOX_FAM_BIG, row, 8)) == WB_OK &&
	    (rc = hb_batch_delete_row(in->batch, in->t, INBOX_FAM_OUT, row, 8)) == WB_OK) {
		rc = inbox_hyb_flush(in, 0);
	}
	hb_batch_clear(in->batch);
	free(d.ids);
	if (rc == WB_OK) {
		rc = inbox_big_set(in, uid, false);
	}
	if (rc == WB_OK) {
		INBOX_ADD(&in->crossed_down, 1);
		RT_INFOF("%llu has %llu followers (limit %llu): fanned out again, %zu posts copied",
		    (unsigned long long)uid, (unsigned long long)count,
		    (unsigned long long)in->opts.fanout_limit, d.n);
	}
	return rc;
}

int
inbox_big_post(inbox *in, inbox_source *s, const inbox_event *ev, bool *done)
{
	uint8_t  row[8], val[8];
	uint64_t count = 0;
	bool     big = inbox_big_is(in, ev->uid), own = inbox_mine(in, ev->uid);
	int      rc;

	*done = false;
	if (!inbox_big_suspect(in, ev->uid)) {
		return WB_OK;
	}
	if ((rc = inbox_big_count(in, ev->uid, &count)) != WB_OK) {
		return rc;
	}
	bool over = in->opts.fanout_limit > 0 && count > in->opts.fanout_limit;
	if (!over) {
		return big ? inbox_big_down(in, ev->uid, count) : WB_OK; /* then fanned out */
	}
	if (!big && (rc = inbox_big_up(in, ev->uid, count)) != WB_OK) {
		return rc;
	}
	/* the post once, in the outbox, and in the author's own row if kept here */
	hb_batch_clear(in->batch);
	hb_u64_be(row, ev->uid);
	hb_u64_be(val, ev->uid);
	rc = hb_batch_put(in->batch, in->t, INBOX_FAM_OUT, row, 8, NULL, 0, ev->id, val, 8);
	if (rc == WB_OK && own) {
		rc = hb_batch_put(in->batch, in->t, INBOX_FAM_TL, row, 8, NULL, 0, ev->id, val, 8);
	}
	if (rc != WB_OK) {
		hb_batch_clear(in->batch);
		return rc;
	}
	rc = inbox_commit(in, s, ev->seq, true);
	if (own) {
		if (rc == WB_OK) {
			inbox_cache_put(in->cache, ev->uid, (inbox_cell) { ev->id, ev->uid });
		} else {
			inbox_cache_drop(in->cache, ev->uid);
		}
	}
	if (rc == WB_OK) {
		*done = true;
		inbox_head_put(in, ev->uid, ev->id);
		INBOX_ADD(&in->outbox_posts, 1);
		INBOX_ADD(&in->cells_written, 1 + own);
		INBOX_STORE(&in->last_fanout_cells, 1 + own);
	}
	return rc;
}

int
inbox_big_delete(inbox *in, const inbox_event *ev)
{
	uint8_t row[8];
	int     rc;

	if (!inbox_big_is(in, ev->uid)) {
		return WB_OK;
	}
	hb_batch_clear(in->batch);
	hb_u64_be(row, ev->uid);
	rc = hb_batch_delete_version(in->batch, in->t, INBOX_FAM_OUT, row, 8, NULL, 0, ev->id);
	if (rc == WB_OK && (rc = hb_write(in->t, in->batch)) == WB_OK) {
		inbox_head_del(in, ev->uid, ev->id);
	}
	hb_batch_clear(in->batch);
	return rc;
}

int
inbox_big_erase(inbox *in, hb_batch *b, uint64_t uid)
{
	uint8_t row[8];
	int     rc;

	hb_u64_be(row, uid);
	if (inbox_mine(in, uid) &&
	    (rc = hb_batch_delete_row(b, in->t, INBOX_FAM_BIGF, row, 8)) != WB_OK) {
		return rc;
	}
	if ((rc = hb_batch_delete_row(b, in->t, INBOX_FAM_BIG, row, 8)) != WB_OK) {
		return rc;
	}
	return hb_batch_delete_row(b, in->t, INBOX_FAM_OUT, row, 8);
}

void
inbox_big_forget(inbox *in, uint64_t uid)
{
	(void)inbox_big_set(in, uid, false); /* a removal allocates nothing: it cannot fail */
}

int
inbox_big_follow(inbox *in, hb_batch *b, const inbox_event *ev, bool follow)
{
	uint8_t row[8], q[8];

	if (ev->uid == ev->target || (follow && !inbox_big_is(in, ev->target))) {
		return WB_OK;
	}
	hb_u64_be(row, ev->uid);
	hb_u64_be(q, ev->target);
	return follow ? hb_batch_put(b, in->t, INBOX_FAM_BIGF, row, 8, q, 8, 0, "", 0)
	              : hb_batch_delete_column(b, in->t, INBOX_FAM_BIGF, row, 8, q, 8, HB_LATEST);
}

/* inbox_merge_into merges b[0..nb) into a[0..*na) (both newest first), each id once, keeping
 * the newest want; tmp holds want cells. */
static void
inbox_merge_into(
    inbox_cell *a, size_t *na, const inbox_cell *b, size_t nb, size_t want, inbox_cell *tmp)
{
	size_t i = 0, k = 0, n = 0;

	while (n < want && (i < *na || k < nb)) {
		if (k == nb || (i < *na && a[i].id > b[k].id)) {
			tmp[n++] = a[i++];
		} else if (i == *na || b[k].id > a[i].id) {
			tmp[n++] = b[k++];
		} else {
			tmp[n++] = a[i++]; /* in both: once */
			k++;
		}
	}
	memcpy(a, tmp, n * sizeof(*a));
	*na = n;
}

int
inbox_big_merge(inbox *in, uint64_t uid, uint64_t maxv, size_t want, inbox_cell *cells, size_t *n)
{
	inbox_cell   got[INBOX_PAGE_MAX + 1], tmp[INBOX_PAGE_MAX + 1];
	uint8_t      row[8], orow[8];
	hb_scan     *sc = NULL;
	hb_cell      c;
	hb_scan_opts o;
	int          rc;

	if (INBOX_LOAD(&in->nbig_live) == 0 || want == 0) {
		return WB_OK;
	}
	want = want > INBOX_PAGE_MAX + 1 ? INBOX_PAGE_MAX + 1 : want;
	*n = *n > want ? want : *n;
	hb_scan_opts_id_row(&o, row, uid);
	rc = hb_scan_open(&sc, in->t, INBOX_FAM_BIGF, &o);
	while (rc == WB_OK && (rc = hb_scan_next(sc, &c)) == WB_OK) {
		uint64_t     author = c.qual_len == 8 ? hb_be_u64(c.qual) : 0;
		hb_scan     *os = NULL;
		hb_scan_opts oo;
		hb_cell      oc;
		size_t       ng = 0;
		/* a first page from the outbox's head when it can tell */
		int head = author == 0 ? -1
		           : maxv == 0 ? inbox_head_get(in, author, want, got)
		                       : -2;
		if (head == -2 && !inbox_big_is(in, author)) {
			head = -1;
		}
		if (head == -1) {
			continue; /* an unfollow still to come, of an account no longer big */
		}
		if (head >= 0) {
			inbox_merge_into(cells, n, got, (size_t)head, want, tmp);
			continue;
		}
		hb_scan_opts_id_row(&oo, orow, author);
		oo.max_version = maxv;
		oo.limit = want;
		int r = hb_scan_open(&os, in->t, INBOX_FAM_OUT, &oo);
		while (r == WB_OK && ng < want && (r = hb_scan_next(os, &oc)) == WB_OK) {
			got[ng++] = (inbox_cell) { oc.version, author };
		}
		hb_scan_close(os);
		if (r != WB_OK && r != WB_EEND) {
			rc = r;
			break;
		}
		inbox_merge_into(cells, n, got, ng, want, tmp);
	}
	hb_scan_close(sc);
	return rc == WB_EEND ? WB_OK : rc;
}

int
inbox_big_clear(inbox *in)
{
	int rc;

	pthread_rwlock_wrlock(&in->big_mu);
	in->nbig = 0;
	INBOX_STORE(&in->nbig_live, 0);
	pthread_rwlock_unlock(&in->big_mu);
	if ((rc = hb_clear(in->t, INBOX_FAM_BIG)) == WB_OK &&
	    (rc = hb_clear(in->t, INBOX_FAM_BIGF)) == WB_OK) {
		rc = hb_clear(in->t, INBOX_FAM_OUT);
	}
	return rc;
}
