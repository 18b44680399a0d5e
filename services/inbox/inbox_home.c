/*
 * inbox_home.c - inbox.home, the routes (inbox.rebuild's are in
 * inbox_rebuild.c) and the fan-out figures in stats.
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
	uint64_t limit, before;
	inbox_cell
	    cells[INBOX_PAGE_MAX + 1 > INBOX_CACHE_CELLS ? INBOX_PAGE_MAX + 1 : INBOX_CACHE_CELLS];
	size_t n = 0;
	int    rc;

	if (wb_page_limit(req, INBOX_PAGE_DEFAULT, INBOX_PAGE_MAX, &limit, rep) != WB_OK) {
		return WB_EINVAL;
	}
	/* one cell more than the page tells whether there is a next page */
	if (!wb_get_u64(req, WB_F_BEFORE, &before)) {
		rc = inbox_home_read(in, uid, limit + 1, cells, &n);
	} else if (before > 1) {
		rc = inbox_home_scan(in, uid, before - 1, limit + 1, cells, &n);
	} else {
		rc = WB_OK; /* nothing is older than the first id */
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
	/* how old a delete may be and still not applied here: the gateway
	 * trusts its cached records of the ids listed for that long */
	uint64_t synced = INBOX_LOAD(&in->src[INBOX_SRC_CONTENT].synced_ms), now;
	if (rc == WB_OK && synced != 0) {
		now = wb_mono_us() / 1000;
		rc = wb_set_u64(rep, WB_F_LAG, now > synced ? now - synced : 0);
	}
	return rc;
}

/* inbox_behind returns how many known events of s are not applied yet. */
static uint64_t
inbox_behind(inbox_source *s)
{
	uint64_t known = INBOX_LOAD(&s->known_last), applied = INBOX_LOAD(&s->applied);
	return known > applied ? known - applied : 0;
}

static uint64_t
inbox_g_behind(void *arg)
{
	inbox *in = arg;
	return inbox_behind(&in->src[0]) + inbox_behind(&in->src[1]);
}
static uint64_t
inbox_g_behind_src(void *arg)
{
	return inbox_behind(arg);
}
static uint64_t
inbox_g_applied(void *arg)
{
	return INBOX_LOAD(&((inbox_source *)arg)->applied);
}
static uint64_t
inbox_g_known(void *arg)
{
	return INBOX_LOAD(&((inbox_source *)arg)->known_last);
}
static uint64_t
inbox_g_queued(void *arg)
{
	inbox *in = arg;
	pthread_mutex_lock(&in->mu);
	uint64_t n = in->queued;
	pthread_mutex_unlock(&in->mu);
	return n;
}

#define INBOX_GAUGE(field)                                 \
	static uint64_t inbox_g_##field(void *arg)         \
	{                                                  \
		return INBOX_LOAD(&((inbox *)arg)->field); \
	}
INBOX_GAUGE(events_applied)
INBOX_GAUGE(posts_merged)
INBOX_GAUGE(cells_written)
INBOX_GAUGE(cells_deleted)
INBOX_GAUGE(last_fanout_ms)
INBOX_GAUGE(last_fanout_cells)
INBOX_GAUGE(fanout_in_progress)
INBOX_GAUGE(dropped)
INBOX_GAUGE(pulls)
INBOX_GAUGE(gaps)
INBOX_GAUGE(source_errors)
INBOX_GAUGE(cache_hits)
INBOX_GAUGE(cache_misses)
INBOX_GAUGE(rb_state)
INBOX_GAUGE(rb_done)

int
inbox_register(inbox *in, rt_server *s)
{
	inbox_source *c = &in->src[INBOX_SRC_CONTENT], *r = &in->src[INBOX_SRC_RELATION];
	struct {
		const char *name;
		rt_gauge_fn fn;
		void       *arg;
	} g[] = {
		{ "events_behind", inbox_g_behind, in },
		{ "content_behind", inbox_g_behind_src, c },
		{ "relation_behind", inbox_g_behind_src, r },
		{ "content_applied", inbox_g_applied, c },
		{ "relation_applied", inbox_g_applied, r },
		{ "content_last", inbox_g_known, c },
		{ "relation_last", inbox_g_known, r },
		{ "events_queued", inbox_g_queued, in },
		{ "events_applied", inbox_g_events_applied, in },
		{ "posts_merged", inbox_g_posts_merged, in },
		{ "events_dropped", inbox_g_dropped, in },
		{ "cells_written", inbox_g_cells_written, in },
		{ "cells_deleted", inbox_g_cells_deleted, in },
		{ "last_fanout_ms", inbox_g_last_fanout_ms, in },
		{ "last_fanout_cells", inbox_g_last_fanout_cells, in },
		{ "fanout_in_progress", inbox_g_fanout_in_progress, in },
		{ "log_pulls", inbox_g_pulls, in },
		{ "seq_gaps", inbox_g_gaps, in },
		{ "source_errors", inbox_g_source_errors, in },
		{ "home_cache_hits", inbox_g_cache_hits, in },
		{ "home_cache_misses", inbox_g_cache_misses, in },
		{ "rebuild_state", inbox_g_rb_state, in },
		{ "rebuild_done", inbox_g_rb_done, in },
	};
	int rc = rt_server_handle(s, WB_OP_INBOX_HOME, inbox_home, in);
	if (rc == WB_OK) {
		rc = rt_server_handle(s, WB_OP_INBOX_REBUILD, inbox_rebuild, in);
	}
	if (rc == WB_OK) {
		rc = rt_server_handle(s, WB_OP_INBOX_REBUILD_STATUS, inbox_rebuild_status, in);
	}
	for (size_t i = 0; rc == WB_OK && i < sizeof(g) / sizeof(g[0]); i++) {
		rc = rt_server_gauge(s, g[i].name, g[i].fn, g[i].arg);
	}
	return rc;
}
