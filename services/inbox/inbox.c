/*
 * inbox.c - the inbox service's state: its slot range and its sources
 * (open, start, stop, close), its route table and its figures in stats.
 *
 * Shard i of N keeps the inboxes of the readers in its slot range.  Every
 * content shard's log is a source (any author may have fans here); so is
 * the log of each relation shard whose slots overlap the range, since the
 * follows of a reader are kept on the reader's relation shard:
 *
 *   inbox 1/3  slots [1344, 2688)          relation 0/2  [0, 2048)
 *                                          relation 1/2  [2048, 4096)
 *   sources    content/0 .. content/C-1,   relation/0 (its fans and
 *              relation/1                  follows in [1344, 2048)),
 *                                          relation/1 ([2048, 2688))
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inbox_int.h"
#include "inbox_schema.h"
#include "rt_log.h"
#include "wb_clock.h"

/* inbox_meta_load reads the applied seq of s (inbox_applier.c). */
int inbox_meta_load(inbox_source *s);

/* inbox_rebuild_mark_load asks for a rebuild left unfinished or asked for (inbox_applier.c). */
int inbox_rebuild_mark_load(inbox *in);

rt_client *
inbox_source_client(inbox *in, const inbox_source *s)
{
	return rt_shards_at(s->relation ? in->relation : in->content, s->shard);
}

void
inbox_rel_slots(const inbox *in, unsigned j, unsigned *lo, unsigned *hi)
{
	wb_shard_slots((wb_shard) { j, in->nrelation }, lo, hi);
	*lo = *lo > in->lo ? *lo : in->lo;
	*hi = *hi < in->hi ? *hi : in->hi;
}

/* inbox_pub_urls cuts the i-th address of a list (or single, when the list is empty) into out; false if there is none. */
static bool
inbox_pub_url(const char *list, const char *single, unsigned i, char **out)
{
	const char *p = list != NULL && list[0] != '\0' ? list : single;

	for (unsigned k = 0; p != NULL && *p != '\0'; k++) {
		size_t n;
		while (*p == ' ' || *p == ',') {
			p++;
		}
		n = strcspn(p, ", ");
		if (n > 0 && k == i) {
			return (*out = strndup(p, n)) != NULL;
		}
		p += n;
	}
	return false;
}

/* inbox_source_add makes the source of shard `shard` of content or relation; false if the lists disagree. */
static bool
inbox_source_add(inbox *in, bool relation, unsigned shard)
{
	const inbox_opts *o = &in->opts;
	inbox_source     *s = &in->src[in->nsrc];

	s->in = in;
	s->idx = in->nsrc;
	s->relation = relation;
	s->shard = shard;
	snprintf(s->name, sizeof(s->name), "%s/%u", relation ? "relation" : "content", shard);
	s->log_op = relation ? WB_OP_REL_LOG : WB_OP_POST_LOG;
	if (!inbox_pub_url(relation ? o->relation_pub_urls : o->content_pub_urls,
	        relation ? o->relation_pub_url : o->content_pub_url, shard, &s->pub_url)) {
		RT_ERRORF("%s: no event address for it: the lists of %s shards and of their event "
		          "addresses must be as long",
		    s->name, relation ? "relation" : "content");
		return false;
	}
	in->nsrc++;
	return true;
}

int
inbox_open(inbox **out, hb_table *t, const inbox_opts *opts)
{
	*out = NULL;
	inbox *in = calloc(1, sizeof(*in));
	if (in == NULL) {
		return WB_ENOMEM;
	}
	in->t = t;
	in->opts = *opts;
	if (in->opts.shard.count == 0) {
		in->opts.shard = (wb_shard) { 0, 1 };
	}
	if (in->opts.fans_page == 0 || in->opts.fans_page > INBOX_FANS_PAGE) {
		in->opts.fans_page = INBOX_FANS_PAGE;
	}
	if (in->opts.fans_run == 0) {
		in->opts.fans_run = INBOX_FANS_RUN;
	}
	if (in->opts.max_versions == 0) {
		in->opts.max_versions = INBOX_MAX_DEFAULT;
	}
	wb_shard_slots(in->opts.shard, &in->lo, &in->hi);
	snprintf(in->consumer, sizeof(in->consumer), "inbox/%u", in->opts.shard.index);
	in->ncontent = rt_shards_list_count(
	    opts->content_urls != NULL && opts->content_urls[0] != '\0' ? opts->content_urls
	                                                                : opts->content_url);
	in->nrelation = rt_shards_list_count(
	    opts->relation_urls != NULL && opts->relation_urls[0] != '\0' ? opts->relation_urls
	                                                                  : opts->relation_url);
	pthread_mutex_init(&in->mu, NULL);
	pthread_cond_init(&in->cv, NULL);
	int rc = in->ncontent == 0 || in->ncontent > WB_SHARDS_MAX || in->nrelation == 0 ||
	                 in->nrelation > WB_SHARDS_MAX
	             ? WB_EINVAL
	             : WB_OK;
	/* the relation shards whose slots overlap [lo, hi) */
	in->rel_lo = in->nrelation > 0 ? wb_slot_shard(in->lo, in->nrelation) : 0;
	in->rel_hi = in->nrelation > 0 ? wb_slot_shard(in->hi - 1, in->nrelation) + 1 : 0;
	for (unsigned i = 0; rc == WB_OK && i < in->ncontent; i++) {
		rc = inbox_source_add(in, false, i) ? WB_OK : WB_EINVAL;
	}
	for (unsigned j = in->rel_lo; rc == WB_OK && j < in->rel_hi; j++) {
		rc = inbox_source_add(in, true, j) ? WB_OK : WB_EINVAL;
	}
	if (rc == WB_OK && (rc = hb_batch_new(&in->batch)) == WB_OK &&
	    (rc = hb_batch_new(&in->batch2)) == WB_OK) {
		rc = inbox_cache_open(&in->cache, opts->cache_readers, in->opts.max_versions);
	}
	if (rc == WB_OK && opts->user_url != NULL && opts->user_url[0] != '\0' &&
	    (rc = rt_client_open(&in->users, opts->user_url,
	         &(rt_client_opts) { .timeout_ms = 5000, .tls = opts->tls })) == WB_OK) {
		rc = evlog_sub_open(&in->deletions, &(evlog_sub_opts) { .source = "user",
		                                        .pub_url = opts->user_pub_url,
		                                        .tls = opts->tls,
		                                        .client = in->users,
		                                        .log_op = WB_OP_USER_LOG,
		                                        .t = t,
		                                        .fam = INBOX_FAM_META,
		                                        .apply = inbox_erase_apply,
		                                        .arg = in,
		                                        .poll_ms = opts->poll_ms });
	}
	for (int i = 0; rc == WB_OK && i < in->nsrc; i++) {
		rc = inbox_meta_load(&in->src[i]);
	}
	if (rc == WB_OK) {
		rc = inbox_hybrid_open(in);
	}
	if (rc == WB_OK) {
		rc = inbox_rebuild_mark_load(in);
	}
	if (rc != WB_OK) {
		inbox_close(in);
		return rc;
	}
	*out = in;
	return WB_OK;
}

int
inbox_start(inbox *in)
{
	rt_client_opts co = { .timeout_ms = 5000, .tls = in->opts.tls };
	int rc = rt_shards_open(&in->content, in->opts.content_urls, in->opts.content_url, &co);
	if (rc == WB_OK) {
		rc = rt_shards_open(
		    &in->relation, in->opts.relation_urls, in->opts.relation_url, &co);
	}
	if (rc == WB_OK && (rt_shards_count(in->content) != in->ncontent ||
	                       rt_shards_count(in->relation) != in->nrelation)) {
		rc = WB_EINVAL;
	}
	for (int i = 0; rc == WB_OK && i < in->nsrc; i++) {
		rc = rt_sub_open(
		    &in->src[i].sub, in->src[i].pub_url, in->opts.tls, inbox_sub_cb, &in->src[i]);
	}
	if (rc == WB_OK && pthread_create(&in->applier, NULL, inbox_applier_main, in) != 0) {
		rc = WB_ENOMEM;
	}
	if (rc == WB_OK && in->deletions != NULL) {
		rc = evlog_sub_start(in->deletions);
	}
	if (rc != WB_OK) {
		inbox_stop(in);
		return rc;
	}
	in->running = true;
	RT_INFOF("readers in slots [%u, %u) (shard %u of %u): events of %u content and %u "
	         "relation shards",
	    in->lo, in->hi, in->opts.shard.index, in->opts.shard.count, in->ncontent,
	    in->rel_hi - in->rel_lo);
	return WB_OK;
}

void
inbox_stop(inbox *in)
{
	if (in->deletions != NULL) {
		evlog_sub_stop(in->deletions);
	}
	for (int i = 0; i < in->nsrc; i++) {
		rt_sub_close(in->src[i].sub);
		in->src[i].sub = NULL;
	}
	pthread_mutex_lock(&in->mu);
	in->stop = true;
	pthread_cond_broadcast(&in->cv);
	pthread_mutex_unlock(&in->mu);
	/* end a log pull or fan-out page in flight: an event not committed is
	 * pulled again after a restart (writing a cell twice is harmless) */
	rt_shards_shutdown(in->content);
	rt_shards_shutdown(in->relation);
	if (in->running) {
		pthread_join(in->applier, NULL);
		in->running = false;
	}
	rt_shards_close(in->content);
	rt_shards_close(in->relation);
	in->content = in->relation = NULL;
}

void
inbox_close(inbox *in)
{
	if (in == NULL) {
		return;
	}
	inbox_stop(in);
	while (in->head) {
		inbox_msg *m = in->head;
		in->head = m->next;
		free(m);
	}
	for (int i = 0; i < in->nsrc; i++) {
		free(in->src[i].pub_url);
	}
	hb_batch_free(in->batch);
	hb_batch_free(in->batch2);
	inbox_cache_close(in->cache);
	inbox_hybrid_close(in);
	evlog_sub_close(in->deletions);
	rt_client_close(in->users);
	pthread_mutex_destroy(&in->mu);
	pthread_cond_destroy(&in->cv);
	free(in);
}

/* inbox_routes: inbox.home goes to the reader's shard; a rebuild to each shard. */
const rt_route inbox_routes[] = {
	{ WB_OP_INBOX_HOME, inbox_home, WB_F_UID, 0, RT_PEER_GATEWAY },
	{ WB_OP_INBOX_REBUILD, inbox_rebuild, 0, 0, 0 },
	{ WB_OP_INBOX_REBUILD_STATUS, inbox_rebuild_status, 0, 0, 0 },
	{ WB_OP_NONE },
};

/* inbox_sum adds up a figure of the sources of one kind (relation or not). */
static uint64_t
inbox_sum(inbox *in, bool relation, bool behind)
{
	uint64_t n = 0;

	for (int i = 0; i < in->nsrc; i++) {
		inbox_source *s = &in->src[i];
		uint64_t      known = INBOX_LOAD(&s->known_last), applied = INBOX_LOAD(&s->applied);
		if (s->relation != relation) {
			continue;
		}
		n += !behind ? applied : known > applied ? known - applied : 0;
	}
	return n;
}

static uint64_t
inbox_g_behind(void *arg)
{
	return inbox_sum(arg, false, true) + inbox_sum(arg, true, true);
}

#define INBOX_SUM_GAUGE(name, relation, behind)          \
	static uint64_t inbox_g_##name(void *arg)        \
	{                                                \
		return inbox_sum(arg, relation, behind); \
	}
INBOX_SUM_GAUGE(content_behind, false, true)
INBOX_SUM_GAUGE(relation_behind, true, true)
INBOX_SUM_GAUGE(content_applied, false, false)
INBOX_SUM_GAUGE(relation_applied, true, false)

/* inbox_g_user reads the user log's applied seq (applied) or the events behind it. */
static uint64_t
inbox_g_user(inbox *in, bool applied)
{
	if (in->deletions == NULL) {
		return 0;
	}
	return applied ? evlog_sub_applied(in->deletions) : evlog_sub_behind(in->deletions);
}

static uint64_t
inbox_g_user_applied(void *arg)
{
	return inbox_g_user(arg, true);
}

static uint64_t
inbox_g_user_behind(void *arg)
{
	return inbox_g_user(arg, false);
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
INBOX_GAUGE(trim_rebuilds)
INBOX_GAUGE(cache_hits)
INBOX_GAUGE(cache_misses)
INBOX_GAUGE(rb_state)
INBOX_GAUGE(rb_done)
INBOX_GAUGE(nbig_live)
INBOX_GAUGE(outbox_posts)
INBOX_GAUGE(crossed_up)
INBOX_GAUGE(crossed_down)

/* The histogram's bounds, ms: a post visible in at most visible_le[i] ms counts in bucket i. */
static const uint64_t visible_le[INBOX_VISIBLE_BUCKETS] = { 1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70,
	100, 150, 200, 300, 500, 700, 1000, 2000, 5000, 10000, 30000 };

void
inbox_visible_note(inbox *in, const inbox_event *evs, size_t n)
{
	uint64_t now = wb_now_ms();

	for (size_t i = 0; i < n; i++) {
		if (evs[i].type != WB_EV_POST) {
			continue;
		}
		uint64_t ms = now > evs[i].time ? now - evs[i].time : 0;
		size_t   b = 0;
		while (b < INBOX_VISIBLE_BUCKETS && ms > visible_le[b]) {
			b++;
		}
		INBOX_ADD(&in->visible[b], 1);
		INBOX_ADD(&in->visible_ms, ms);
	}
}

/* inbox_g_visible lists the histogram cumulatively: posts_visible_within{ms=N} counts the posts
 * visible within N ms of their commit (ms=any: every post). */
static size_t
inbox_g_visible(void *arg, rt_gauge_val *out, size_t cap)
{
	inbox   *in = arg;
	uint64_t sum = 0;
	size_t   n = 0;

	for (size_t b = 0; b <= INBOX_VISIBLE_BUCKETS && n < cap; b++, n++) {
		sum += INBOX_LOAD(&in->visible[b]);
		if (b < INBOX_VISIBLE_BUCKETS) {
			snprintf(out[n].name, sizeof(out[n].name), "posts_visible_within{ms=%llu}",
			    (unsigned long long)visible_le[b]);
		} else {
			snprintf(out[n].name, sizeof(out[n].name), "posts_visible_within{ms=any}");
		}
		out[n].value = sum;
	}
	return n;
}

INBOX_GAUGE(visible_ms)

/*
 * inbox_gauges adds the fan-out figures to a server's stats.  The applied
 * seqs of the sources of one kind are summed (content_applied: over every
 * content shard), as are the events behind: the inbox has caught up with
 * a kind's logs when its sum equals the sum of their last seqs.
 */
int
inbox_gauges(inbox *in, rt_server *s)
{
	static const struct {
		const char *name;
		rt_gauge_fn fn;
	} g[] = {
		{ "events_behind", inbox_g_behind },
		{ "content_behind", inbox_g_content_behind },
		{ "relation_behind", inbox_g_relation_behind },
		{ "content_applied", inbox_g_content_applied },
		{ "relation_applied", inbox_g_relation_applied },
		{ "events_queued", inbox_g_queued },
		{ "events_applied", inbox_g_events_applied },
		{ "posts_merged", inbox_g_posts_merged },
		{ "events_dropped", inbox_g_dropped },
		{ "cells_written", inbox_g_cells_written },
		{ "cells_deleted", inbox_g_cells_deleted },
		{ "last_fanout_ms", inbox_g_last_fanout_ms },
		{ "last_fanout_cells", inbox_g_last_fanout_cells },
		{ "fanout_in_progress", inbox_g_fanout_in_progress },
		{ "log_pulls", inbox_g_pulls },
		{ "seq_gaps", inbox_g_gaps },
		{ "source_errors", inbox_g_source_errors },
		{ "trim_rebuilds", inbox_g_trim_rebuilds },
		{ "home_cache_hits", inbox_g_cache_hits },
		{ "home_cache_misses", inbox_g_cache_misses },
		{ "rebuild_state", inbox_g_rb_state },
		{ "rebuild_done", inbox_g_rb_done },
		{ "big_accounts", inbox_g_nbig_live },
		{ "outbox_posts", inbox_g_outbox_posts },
		{ "fanout_crossed_up", inbox_g_crossed_up },
		{ "fanout_crossed_down", inbox_g_crossed_down },
		{ "user_applied", inbox_g_user_applied },
		{ "user_behind", inbox_g_user_behind },
		{ "posts_visible_ms", inbox_g_visible_ms },
	};
	int rc = WB_OK;

	for (size_t i = 0; rc == WB_OK && i < sizeof(g) / sizeof(g[0]); i++) {
		rc = rt_server_gauge(s, g[i].name, g[i].fn, in);
	}
	return rc == WB_OK ? rt_server_gauge_list(s, inbox_g_visible, in) : rc;
}
