/*
 * inbox_home.c - inbox.home, the routes (inbox.rebuild's are in
 * inbox_rebuild.c) and the fan-out figures in stats.
 */
#include "inbox_int.h"
#include "inbox_schema.h"

int
inbox_home(void *arg, const wb_obj *req, wb_obj *rep)
{
	inbox   *in = arg;
	uint64_t uid = wb_u64(req, WB_F_UID, 0);
	uint64_t limit;
	uint64_t maxv = 0, before;
	if (wb_page_limit(req, INBOX_PAGE_DEFAULT, INBOX_PAGE_MAX, &limit, rep) != WB_OK) {
		return WB_EINVAL;
	}
	wb_reply_ok(rep);
	if (wb_get_u64(req, WB_F_BEFORE, &before)) {
		if (before <= 1) {
			(void)wb_add_objs(rep, WB_F_POSTS, 0);
			return WB_OK;
		}
		maxv = before - 1;
	}
	wb_obj *posts = wb_add_objs(rep, WB_F_POSTS, limit);
	if (posts == NULL) {
		return WB_ENOMEM;
	}
	uint8_t      row[8];
	hb_scan     *s = NULL;
	hb_cell      c;
	hb_scan_opts o;
	hb_scan_opts_id_row(&o, row, uid);
	o.max_version = maxv;
	o.limit = limit + 1;
	int    rc = hb_scan_open(&s, in->t, INBOX_FAM_TL, &o);
	size_t n = 0;
	bool   more = false;
	while (rc == WB_OK && (rc = hb_scan_next(s, &c)) == WB_OK) {
		if (c.value_len != 8) {
			continue;
		}
		if (n == limit) {
			more = true;
			break;
		}
		rc = wb_set_u64(&posts[n], WB_F_ID, c.version);
		if (rc == WB_OK) {
			rc = wb_set_u64(&posts[n], WB_F_AUTHOR, hb_be_u64(c.value));
		}
		n++;
	}
	hb_scan_close(s);
	if (rc == WB_EEND) {
		rc = WB_OK;
	}
	if (rc != WB_OK) {
		return rc;
	}
	wb_shrink(rep, WB_F_POSTS, n);
	if (more && n > 0) {
		rc = wb_set_u64(rep, WB_F_NEXT, wb_u64(&posts[n - 1], WB_F_ID, 0));
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
INBOX_GAUGE(cells_written)
INBOX_GAUGE(cells_deleted)
INBOX_GAUGE(last_fanout_ms)
INBOX_GAUGE(last_fanout_cells)
INBOX_GAUGE(fanout_in_progress)
INBOX_GAUGE(dropped)
INBOX_GAUGE(pulls)
INBOX_GAUGE(gaps)
INBOX_GAUGE(source_errors)
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
		{ "events_dropped", inbox_g_dropped, in },
		{ "cells_written", inbox_g_cells_written, in },
		{ "cells_deleted", inbox_g_cells_deleted, in },
		{ "last_fanout_ms", inbox_g_last_fanout_ms, in },
		{ "last_fanout_cells", inbox_g_last_fanout_cells, in },
		{ "fanout_in_progress", inbox_g_fanout_in_progress, in },
		{ "log_pulls", inbox_g_pulls, in },
		{ "seq_gaps", inbox_g_gaps, in },
		{ "source_errors", inbox_g_source_errors, in },
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
