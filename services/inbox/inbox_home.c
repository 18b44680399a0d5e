/*
 * inbox_home.c - inbox.home: a reader's home timeline, newest first, from
 * the cache or one row scan, merged with the outboxes of the big accounts
 * the reader follows (inbox_hybrid.c).
 */
#include "inbox_int.h"
#include "inbox_schema.h"
#include "wb_clock.h"

/* inbox_home_scan reads up to want cells of uid's row (versions at most maxv; 0: any) into cells; *n is how many. */
static int
inbox_home_scan(inbox *in, uint64_t uid, uint64_t maxv, size_t want, inbox_cell *cells, size_t *n)
{
	uint8_t      row[8];
	hb_scan     *s = NULL;
	hb_cell      c;
	hb_scan_opts o;

	hb_scan_opts_id_row(&o, row, uid);
	o.max_version = maxv;
	o.limit = want;
	*n = 0;
	int rc = hb_scan_open(&s, in->t, INBOX_FAM_TL, &o);
	while (rc == WB_OK && *n < want && (rc = hb_scan_next(s, &c)) == WB_OK) {
		if (c.value_len == 8) {
			cells[(*n)++] = (inbox_cell) { c.version, hb_be_u64(c.value) };
		}
	}
	hb_scan_close(s);
	return rc == WB_EEND ? WB_OK : rc;
}

/*
 * inbox_home_read reads the newest want cells of uid's row: from the
 * cache when it has them all and the oldest is still within the TTL,
 * else from the store, filling the cache with its window of cells.
 */
static int
inbox_home_read(inbox *in, uint64_t uid, size_t want, inbox_cell *cells, size_t *n)
{
	size_t   window = inbox_cache_window(in->cache);
	uint64_t gen;
	int      got, rc;

	if (want > window) {
		return inbox_home_scan(in, uid, 0, want, cells, n);
	}
	got = inbox_cache_get(in->cache, uid, want, cells, &gen);
	if (got >= 0 && (got == 0 || hb_live(in->t, INBOX_FAM_TL, cells[got - 1].id))) {
		INBOX_ADD(&in->cache_hits, 1);
		*n = (size_t)got;
		return WB_OK;
	}
	INBOX_ADD(&in->cache_misses, 1);
	if ((rc = inbox_home_scan(in, uid, 0, window, cells, n)) == WB_OK) {
		inbox_cache_fill(in->cache, uid, gen, cells, *n, *n < window);
		*n = *n < want ? *n : want;
	}
	return rc;
}

int
inbox_home(void *arg, const wb_obj *req, wb_obj *rep)
{
	inbox   *in = arg;
	uint64_t uid = wb_u64(req, WB_F_UID, 0);
	uint64_t limit, before = 0;
	inbox_cell
	    cells[INBOX_PAGE_MAX + 1 > INBOX_CACHE_CELLS ? INBOX_PAGE_MAX + 1 : INBOX_CACHE_CELLS];
	size_t n = 0;
	int    rc;

	if (wb_page_limit(req, INBOX_PAGE_DEFAULT, INBOX_PAGE_MAX, &limit, rep) != WB_OK) {
		return WB_EINVAL;
	}
	/* one cell more than the page tells whether there is a next page */
	bool has_before = wb_get_u64(req, WB_F_BEFORE, &before);
	if (!has_before) {
		rc = inbox_home_read(in, uid, limit + 1, cells, &n);
	} else if (before > 1) {
		rc = inbox_home_scan(in, uid, before - 1, limit + 1, cells, &n);
	} else {
		rc = WB_OK; /* nothing is older than the first id */
	}
	if (rc == WB_OK && (!has_before || before > 1)) {
		rc = inbox_big_merge(in, uid, has_before ? before - 1 : 0, limit + 1, cells, &n);
	}
	if (rc != WB_OK) {
		return rc;
	}
	bool    more = n > limit;
	wb_obj *posts;

	n = more ? limit : n;
	wb_reply_ok(rep);
	if ((posts = wb_add_objs(rep, WB_F_POSTS, n)) == NULL) {
		return WB_ENOMEM;
	}
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		if ((rc = wb_set_u64(&posts[i], WB_F_ID, cells[i].id)) == WB_OK) {
			rc = wb_set_u64(&posts[i], WB_F_AUTHOR, cells[i].author);
		}
	}
	if (rc == WB_OK && more && n > 0) {
		rc = wb_set_u64(rep, WB_F_NEXT, cells[n - 1].id);
	}
	/* how old a delete may be and still not applied here (the content
	 * shard furthest behind): the gateway trusts its cached records of
	 * the ids listed for that long */
	uint64_t synced = UINT64_MAX, now;
	for (int i = 0; i < in->nsrc; i++) {
		uint64_t at = INBOX_LOAD(&in->src[i].synced_ms);
		if (!in->src[i].relation && at < synced) {
			synced = at;
		}
	}
	if (rc == WB_OK && synced != 0 && synced != UINT64_MAX) {
		now = wb_mono_us() / 1000;
		rc = wb_set_u64(rep, WB_F_LAG, now > synced ? now - synced : 0);
	}
	return rc;
}
