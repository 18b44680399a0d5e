/*
 * inbox_daemon.c - warble-inbox's options: its sources, the inbox bounds
 * (versions kept, TTL, backfill on follow), the fan-out pacing, the
 * hybrid fan-out limit and a rebuild at start.
 */
#include "inbox.h"
#include "inbox_schema.h"
#include "rt_log.h"

static const char *inbox_max, *inbox_ttl, *inbox_backfill, *inbox_poll, *inbox_page, *inbox_run,
    *inbox_rb, *inbox_cache_n, *inbox_limit;
static uint64_t   inbox_nmax, inbox_ttl_s;
static inbox_opts inbox_o;

static rt_opt inbox_daemon_opts[] = {
	RT_OPT_URL(WB_EP_CONTENT, "content service (one shard)", &inbox_o.content_url),
	RT_OPT_URL(WB_EP_RELATION, "relation service (one shard)", &inbox_o.relation_url),
	RT_OPT_URL(WB_EP_CONTENT_PUB, "content events (one shard)", &inbox_o.content_pub_url),
	RT_OPT_URL(WB_EP_RELATION_PUB, "relation events (one shard)", &inbox_o.relation_pub_url),
	RT_OPT_URL(
	    WB_EP_CONTENT_URLS, "content shards, in order, comma-separated", &inbox_o.content_urls),
	RT_OPT_URL(WB_EP_RELATION_URLS, "relation shards, in order, comma-separated",
	    &inbox_o.relation_urls),
	RT_OPT_URL(
	    WB_EP_CONTENT_PUB_URLS, "content shards' events, in order", &inbox_o.content_pub_urls),
	RT_OPT_URL(WB_EP_RELATION_PUB_URLS, "relation shards' events, in order",
	    &inbox_o.relation_pub_urls),
	RT_OPT_URL(WB_EP_USER, "user service (its log of deletions)", &inbox_o.user_url),
	RT_OPT_URL(WB_EP_USER_PUB, "user service's events (deletions)", &inbox_o.user_pub_url),
	{ "inbox-max", "WARBLE_INBOX_MAX", "800", "posts kept per inbox", &inbox_max },
	{ "inbox-ttl", "WARBLE_INBOX_TTL", "2592000", "seconds a post stays in inboxes",
	    &inbox_ttl },
	{ "backfill", "WARBLE_BACKFILL", "50", "posts copied into an inbox on follow",
	    &inbox_backfill },
	{ "inbox-poll-ms", "WARBLE_INBOX_POLL_MS", "500",
	    "pull a quiet source's log this often, ms", &inbox_poll },
	{ "inbox-fanout-page", "WARBLE_INBOX_FANOUT_PAGE", "10000",
	    "fans per rel.fans page (1..10000)", &inbox_page },
	{ "inbox-fanout-run", "WARBLE_INBOX_FANOUT_RUN", "131072",
	    "fans gathered from pages, sorted and written together (1..4194304)", &inbox_run },
	{ "rebuild", "WARBLE_INBOX_REBUILD", "0",
	    "1 = rebuild every inbox from relation and content once started", &inbox_rb },
	{ "inbox-cache", "WARBLE_INBOX_CACHE", "32768",
	    "readers whose newest posts are kept in memory (about 400 B each; 0 = none)",
	    &inbox_cache_n },
	{ "fanout-limit", "WARBLE_FANOUT_LIMIT", "100000",
	    "followers over which an account's posts are kept once in its outbox and merged into "
	    "homes when read, not written into each (0 = always fan out)",
	    &inbox_limit },
	{ NULL },
};

static int
inbox_daemon_config(void)
{
	uint64_t back, poll_ms, page, run, rb, cache, limit;

	if (rt_config_u64("inbox-max", inbox_max, 1, 1000000, &inbox_nmax) != 0 ||
	    rt_config_u64("inbox-ttl", inbox_ttl, 1, UINT64_MAX / 1000, &inbox_ttl_s) != 0 ||
	    rt_config_u64("backfill", inbox_backfill, 0, 100000, &back) != 0 ||
	    rt_config_u64("inbox-poll-ms", inbox_poll, 1, 3600000, &poll_ms) != 0 ||
	    rt_config_u64("inbox-fanout-page", inbox_page, 1, 10000, &page) != 0 ||
	    rt_config_u64("inbox-fanout-run", inbox_run, 1, 4194304, &run) != 0 ||
	    rt_config_u64("rebuild", inbox_rb, 0, 1, &rb) != 0 ||
	    rt_config_u64("inbox-cache", inbox_cache_n, 0, 1u << 24, &cache) != 0 ||
	    rt_config_u64("fanout-limit", inbox_limit, 0, UINT64_MAX / WB_SLOTS, &limit) != 0) {
		return 2;
	}
	inbox_o.backfill = (uint32_t)back;
	inbox_o.poll_ms = (uint32_t)poll_ms;
	inbox_o.fans_page = (uint32_t)page;
	inbox_o.fans_run = (uint32_t)run;
	inbox_o.max_versions = (uint32_t)inbox_nmax;
	inbox_o.ttl_ms = inbox_ttl_s * 1000;
	inbox_o.rebuild = rb != 0;
	inbox_o.cache_readers = (uint32_t)cache;
	inbox_o.fanout_limit = limit;
	return 0;
}

static void
inbox_daemon_families(hb_family_opts *fams)
{
	inbox_schema_families(fams, (uint32_t)inbox_nmax, inbox_ttl_s * 1000);
}

static int
inbox_daemon_open(const rt_env *env, void **out)
{
	inbox *in = NULL;
	int    rc;

	inbox_o.shard = env->shard;
	inbox_o.tls = env->tls;
	if (env->upgrade && (rc = inbox_upgrade(env->store)) != WB_OK) {
		return rc;
	}
	if ((rc = inbox_open(&in, env->store, &inbox_o)) != WB_OK ||
	    (rc = inbox_gauges(in, env->srv)) != WB_OK) {
		inbox_close(in);
		return rc;
	}
	rt_admin_logs(env->admin, inbox_backup_logs, in, true); /* applied seqs after the copy */
	*out = in;
	return WB_OK;
}

static int
inbox_daemon_start(void *in)
{
	return inbox_start(in);
}

static void
inbox_daemon_close(void *in)
{
	inbox_close(in);
}

const rt_service inbox_service = {
	.name = "inbox",
	.summary = "the Warble inbox service",
	.metrics_url = "http://127.0.0.1:9104",
	.listen = RT_OPT_URL(WB_EP_INBOX, "listen URL", NULL),
	.opts = inbox_daemon_opts,
	.workers = "4",
	.workers_help = "worker threads (inbox.home)",
	.config = inbox_daemon_config,
	.nfams = INBOX_FAM_COUNT,
	.families = inbox_daemon_families,
	.open = inbox_daemon_open,
	.routes = inbox_routes,
	.sharded = true,
	.start = inbox_daemon_start,
	.close = inbox_daemon_close,
};
