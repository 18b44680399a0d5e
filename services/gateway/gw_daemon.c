/*
 * gw_daemon.c - warble-gateway's options and what it runs beside the
 * msgpack API: the HTTP/JSON server (API, web page, /healthz, /readyz),
 * and the HTTP API's figures, the probes behind /readyz and the cluster
 * view on the admin port (/metrics, /metrics/cluster: gw_metrics.h).
 */
#include <stdlib.h>

#include "gw.h"
#include "gw_metrics.h"
#include "http.h"
#include "rt_log.h"

static const char *http_url, *gw_web_dir, *gw_timeout, *gw_check, *gw_hdr_tmo, *gw_max_conns,
    *gw_pcache, *gw_pcache_ms, *gw_coalesce, *gw_media_max_s, *gw_uploads_s, *gw_user_uploads_s,
    *gw_request_tmo, *gw_preauth_s;
static gw_opts  gw_o;
static uint64_t gw_hdr_ms, gw_nconns, gw_uploads, gw_user_uploads, gw_media_max, gw_request_ms,
    gw_preauth;

static rt_opt gw_daemon_opts[] = {
	RT_OPT_URL(
	    WB_EP_HTTP, "listen URL (HTTP/JSON API, web page, /healthz, /readyz)", &http_url),
	{ "web-dir", "WARBLE_WEB_DIR", "",
	    "web page folder (default: services/gateway/web of the build)", &gw_web_dir },
	RT_OPT_URL(WB_EP_USER, "user service", &gw_o.urls[WB_SVC_USER]),
	RT_OPT_URL(WB_EP_RELATION, "relation service (one shard)", &gw_o.urls[WB_SVC_RELATION]),
	RT_OPT_URL(WB_EP_CONTENT, "content service (one shard)", &gw_o.urls[WB_SVC_CONTENT]),
	RT_OPT_URL(WB_EP_INBOX, "inbox service (one shard)", &gw_o.urls[WB_SVC_INBOX]),
	RT_OPT_URL(WB_EP_RELATION_URLS, "relation shards, in order, comma-separated",
	    &gw_o.lists[WB_SVC_RELATION]),
	RT_OPT_URL(WB_EP_CONTENT_URLS, "content shards, in order, comma-separated",
	    &gw_o.lists[WB_SVC_CONTENT]),
	RT_OPT_URL(
	    WB_EP_INBOX_URLS, "inbox shards, in order, comma-separated", &gw_o.lists[WB_SVC_INBOX]),
	{ "timeout-ms", "WARBLE_GATEWAY_TIMEOUT_MS", "5000", "deadline of each downstream call, ms",
	    &gw_timeout },
	{ "coalesce", "WARBLE_GATEWAY_COALESCE", "0",
	    "calls in flight to the content and inbox services before further ones wait and go "
	    "together as one batch message (0: every call alone)",
	    &gw_coalesce },
	{ "session-check-ms", "WARBLE_SESSION_CHECK_MS", "1000",
	    "check signed session tokens here, trusting the revocation feed this long, ms: a "
	    "logout through another gateway takes effect here within it (0: ask the user "
	    "service every time)",
	    &gw_check },
	{ "request-timeout-ms", "WARBLE_GATEWAY_REQUEST_TIMEOUT_MS", "10000",
	    "a msgpack request must arrive whole within this of its first byte, or the "
	    "connection is closed (idle connections between requests are kept; 0: no bound)",
	    &gw_request_tmo },
	{ "preauth-max", "WARBLE_GATEWAY_PREAUTH_MAX", "65536",
	    "a msgpack request larger than this is read on only once its first bytes show an "
	    "upload and a valid token, else refused at once (0: no bound)",
	    &gw_preauth_s },
	{ "http-header-timeout-ms", "WARBLE_HTTP_HEADER_TIMEOUT_MS", "10000",
	    "an HTTP connection idle this long without a whole request head is closed",
	    &gw_hdr_tmo },
	{ "http-max-conns", "WARBLE_HTTP_MAX_CONNS", "0",
	    "HTTP connections before idle ones are closed after 250 ms (0: open-files limit - "
	    "128)",
	    &gw_max_conns },
	{ "trusted-proxies", "WARBLE_TRUSTED_PROXIES", "",
	    "addresses or ranges (10.0.0.0/8, fd00::/8), comma-separated, of reverse proxies whose "
	    "X-Forwarded-For names the client (empty: none; the peer is the client)",
	    &gw_o.trusted_proxies },
	{ "post-cache", "WARBLE_POST_CACHE", "65536", "post records cached for timelines (0: off)",
	    &gw_pcache },
	{ "post-cache-ms", "WARBLE_POST_CACHE_MS", "10000",
	    "how long a cached post is trusted, ms (a post deleted through another gateway shows "
	    "here at most this long)",
	    &gw_pcache_ms },
	{ "media-max", "WARBLE_MEDIA_MAX", "1048576", "largest image upload, bytes (at most 3 MiB)",
	    &gw_media_max_s },
	{ "http-uploads", "WARBLE_HTTP_UPLOADS", "8",
	    "HTTP image uploads receiving at once (each holds up to media-max bytes); more get 503",
	    &gw_uploads_s },
	{ "http-uploads-per-user", "WARBLE_HTTP_UPLOADS_PER_USER", "2",
	    "... of them one user's at once (the token is checked from the head first); more get "
	    "429",
	    &gw_user_uploads_s },
	{ NULL },
};

static int
gw_daemon_config(void)
{
	uint64_t tmo, check_ms, npost, post_ms, coalesce;

	if (rt_config_u64("timeout-ms", gw_timeout, 1, 600000, &tmo) != 0 ||
	    rt_config_u64("session-check-ms", gw_check, 0, 60000, &check_ms) != 0 ||
	    rt_config_u64("http-header-timeout-ms", gw_hdr_tmo, 100, 3600000, &gw_hdr_ms) != 0 ||
	    rt_config_u64("http-max-conns", gw_max_conns, 0, 10000000, &gw_nconns) != 0 ||
	    rt_config_u64("post-cache", gw_pcache, 0, 1u << 24, &npost) != 0 ||
	    rt_config_u64("post-cache-ms", gw_pcache_ms, 0, 86400000, &post_ms) != 0 ||
	    rt_config_u64("coalesce", gw_coalesce, 0, 4096, &coalesce) != 0 ||
	    rt_config_u64("media-max", gw_media_max_s, 1, WB_MEDIA_MAX_LIMIT, &gw_media_max) != 0 ||
	    rt_config_u64("http-uploads", gw_uploads_s, 1, 4096, &gw_uploads) != 0 ||
	    rt_config_u64("http-uploads-per-user", gw_user_uploads_s, 1, 4096, &gw_user_uploads) !=
	        0 ||
	    rt_config_u64("request-timeout-ms", gw_request_tmo, 0, 3600000, &gw_request_ms) != 0 ||
	    rt_config_u64("preauth-max", gw_preauth_s, 0, WB_MEDIA_MAX_LIMIT, &gw_preauth) != 0) {
		return 2;
	}
	gw_o.timeout_ms = (int)tmo;
	gw_o.session_check_ms = (int)check_ms;
	gw_o.post_cache = (size_t)npost;
	gw_o.post_cache_ms = post_ms;
	gw_o.coalesce = (int)coalesce;
	return 0;
}

/* Everything warble-gateway opens, closed in reverse. */
typedef struct gw_daemon {
	gw          *g;
	gw_metrics  *metrics;
	rt_metrics  *admin; /* the admin port (NULL: none) */
	http_server *http;
	const char  *url;
	int          nworkers, nspares;
} gw_daemon;

static int
gw_daemon_open(const rt_env *env, void **out)
{
	gw_daemon *d = calloc(1, sizeof(*d));
	int        rc;

	if (d == NULL) {
		return WB_ENOMEM;
	}
	d->url = env->url;
	d->admin = env->metrics;
	d->nworkers = env->nworkers;
	d->nspares = env->nspares;
	gw_o.tls = env->tls;
	if ((rc = gw_open(&d->g, &gw_o)) != WB_OK) {
		RT_ERRORF("cannot dial the services: %s", wb_strerror(rc));
		free(d);
		return rc;
	}
	for (int op = 1; op < WB_OP_COUNT; op++) {
		if (gw_is_public((wb_op)op)) {
			rt_server_handle(env->srv, (wb_op)op, gw_handler, d->g);
		}
	}
	/* the port is open to anyone: a request in progress has a deadline, and
	 * a large one is held only for an upload whose token holds */
	rt_server_limits lim = { .request_ms = (int)gw_request_ms,
		.open_max = (size_t)gw_preauth,
		.admit = gw_admit,
		.arg = d->g };
	if ((rc = rt_server_limit(env->srv, &lim)) != WB_OK) {
		gw_close(d->g);
		free(d);
		return rc;
	}
	*out = d;
	return WB_OK;
}

static int
gw_daemon_start(void *arg)
{
	gw_daemon      *d = arg;
	gw_metrics_opts mo = { .gateway_url = d->url, .tls = gw_o.tls };
	http_opts       ho = { .url = http_url, .workers = d->nworkers, .spares = d->nspares };
	char            webbuf[1024];
	int             rc;

	for (int i = 0; i < WB_SVC_COUNT; i++) {
		mo.urls[i] = gw_o.urls[i];
		mo.lists[i] = gw_o.lists[i];
	}
	ho.web_dir = gw_web_dir[0] != '\0' ? gw_web_dir : http_web_dir(webbuf, sizeof(webbuf));
	ho.header_timeout_ms = (int)gw_hdr_ms;
	ho.max_conns = (size_t)gw_nconns;
	ho.max_uploads = (int)gw_uploads;
	ho.max_user_uploads = (int)gw_user_uploads;
	ho.max_upload = (size_t)gw_media_max;
	if ((rc = gw_metrics_open(&d->metrics, &mo)) != WB_OK) {
		RT_ERRORF("cannot set up metrics: %s", wb_strerror(rc));
		return rc;
	}
	if (d->admin != NULL && (rc = gw_metrics_serve(d->metrics, d->admin)) != WB_OK) {
		RT_ERRORF(
		    "cannot add the HTTP API's figures to the admin port: %s", wb_strerror(rc));
		return rc;
	}
	ho.metrics = d->metrics;
	if ((rc = http_open(&d->http, d->g, &ho)) != WB_OK) {
		RT_ERRORF("cannot serve HTTP on %s: %s", http_url, wb_strerror(rc));
		return rc;
	}
	RT_INFOF("HTTP on %s (port %d)", http_url, http_port(d->http));
	return WB_OK;
}

static void
gw_daemon_close(void *arg)
{
	gw_daemon *d = arg;

	if (d == NULL) {
		return;
	}
	http_close(d->http);
	gw_metrics_close(d->metrics);
	gw_close(d->g);
	free(d);
}

const rt_service gw_service = {
	.name = "gateway",
	.summary = "Warble's public API gateway (msgpack over nng REQ/REP)",
	.public = true,
	.metrics_url = RT_DAEMON_METRICS_URL,
	.listen = RT_OPT_URL(WB_EP_GATEWAY, "listen URL (msgpack API)", NULL),
	.opts = gw_daemon_opts,
	.workers = "auto",
	.workers_all = "16", /* running every service's handlers (docs/architecture.md) */
	.workers_help =
	    "threads taking requests at once, each may wait on a downstream call (auto: 3 a CPU)",
	.max_workers = 1024,
	.spares = 2,
	.config = gw_daemon_config,
	.open = gw_daemon_open,
	.start = gw_daemon_start,
	.close = gw_daemon_close,
};
