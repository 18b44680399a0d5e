/*
 * warble-gateway: Warble's public API.  Serves msgpack REQ/REP on
 * WARBLE_GATEWAY_URL for the SDK and warblectl, HTTP/JSON, the web page
 * and /healthz, /readyz, /metrics on WARBLE_HTTP_URL, and calls the
 * user, relation, content and inbox services for each request.  It has
 * no store of its own.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gw.h"
#include "http.h"
#include "gw_metrics.h"
#include "rt_config.h"
#include "rt_daemon.h"
#include "rt_log.h"
#include "rt_server.h"

int
main(int argc, char **argv)
{
	static rt_daemon   d = { .name = "gateway", .max_workers = 1024 };
	static const char *url, *urls[GW_SVC_COUNT], *timeout, *cache, *scheck, *http_url, *web_dir,
	    *lfails, *lwindow, *lcool, *hdr_tmo, *max_conns, *pcache, *pcache_ms;
	rt_opt opts[] = {
		{ "gateway-url", "WARBLE_GATEWAY_URL", "tcp://127.0.0.1:7100",
		    "listen URL (msgpack API)", &url },
		{ "http-url", "WARBLE_HTTP_URL", "http://127.0.0.1:8080",
		    "listen URL (HTTP/JSON API, web page, /metrics)", &http_url },
		{ "web-dir", "WARBLE_WEB_DIR", "",
		    "web page folder (default: services/gateway/web of the build)", &web_dir },
		{ "user-url", "WARBLE_USER_URL", "tcp://127.0.0.1:7101", "user service",
		    &urls[GW_USER] },
		{ "relation-url", "WARBLE_RELATION_URL", "tcp://127.0.0.1:7102", "relation service",
		    &urls[GW_RELATION] },
		{ "content-url", "WARBLE_CONTENT_URL", "tcp://127.0.0.1:7103", "content service",
		    &urls[GW_CONTENT] },
		{ "inbox-url", "WARBLE_INBOX_URL", "tcp://127.0.0.1:7104", "inbox service",
		    &urls[GW_INBOX] },
		{ "workers", "WARBLE_WORKERS", "16",
		    "worker threads (each may wait on a downstream call)", &d.workers },
		{ "timeout-ms", "WARBLE_GATEWAY_TIMEOUT_MS", "5000",
		    "deadline of each downstream call, ms", &timeout },
		{ "auth-cache-ms", "WARBLE_AUTH_CACHE_MS", "1000",
		    "how long a checked token is trusted, ms (0-1000)", &cache },
		{ "session-check-ms", "WARBLE_SESSION_CHECK_MS", "1000",
		    "check signed session tokens here, trusting the revocation feed this long, ms: "
		    "a "
		    "logout through another gateway takes effect here within it (0: ask the user "
		    "service every time)",
		    &scheck },
		{ "http-header-timeout-ms", "WARBLE_HTTP_HEADER_TIMEOUT_MS", "10000",
		    "an HTTP connection idle this long without a whole request head is closed",
		    &hdr_tmo },
		{ "http-max-conns", "WARBLE_HTTP_MAX_CONNS", "0",
		    "HTTP connections before idle ones are closed after 250 ms (0: open-files "
		    "limit - 128)",
		    &max_conns },
		{ "client-login-fails", "WARBLE_CLIENT_LOGIN_FAILS", "20",
		    "failed logins from one client address (HTTP or msgpack) that lock it",
		    &lfails },
		{ "client-login-window", "WARBLE_CLIENT_LOGIN_WINDOW", "60",
		    "... counted within this many seconds", &lwindow },
		{ "client-login-cooldown", "WARBLE_CLIENT_LOGIN_COOLDOWN", "60",
		    "seconds a locked client's logins answer RATE_LIMITED", &lcool },
		{ "post-cache", "WARBLE_POST_CACHE", "65536",
		    "post records cached for timelines (0: off)", &pcache },
		{ "post-cache-ms", "WARBLE_POST_CACHE_MS", "10000",
		    "how long a cached post is trusted, ms (a post deleted through another gateway "
		    "shows here at most this long)",
		    &pcache_ms },
		{ "log-level", "WARBLE_LOG_LEVEL", "info", "debug|info|warn|error", &d.level },
		{ NULL },
	};
	gw_opts         go = { 0 };
	rt_server_opts  so = { 0 };
	gw_metrics_opts mo = { 0 };
	gw_http_opts    ho = { 0 };
	rt_server      *srv;
	gw             *g;
	gw_metrics     *metrics;
	gw_http        *http;
	char            webbuf[1024];
	uint64_t nworkers, tmo, ttl, nfails, window_s, cool_s, hdr_ms, nconns, npost, post_ms,
	    check_ms;
	int rc;

	rc = rt_daemon_init(
	    &d, opts, "Warble's public API gateway (msgpack over nng REQ/REP)", argc, argv);
	if (rc != RT_DAEMON_RUN) {
		return rc;
	}
	nworkers = d.nworkers;
	if (rt_config_u64("timeout-ms", timeout, 1, 600000, &tmo) != 0 ||
	    rt_config_u64("auth-cache-ms", cache, 0, GW_AUTH_TTL_MAX, &ttl) != 0 ||
	    rt_config_u64("session-check-ms", scheck, 0, 60000, &check_ms) != 0 ||
	    rt_config_u64("http-header-timeout-ms", hdr_tmo, 100, 3600000, &hdr_ms) != 0 ||
	    rt_config_u64("http-max-conns", max_conns, 0, 10000000, &nconns) != 0 ||
	    rt_config_u64("client-login-fails", lfails, 1, 1000000, &nfails) != 0 ||
	    rt_config_u64("client-login-window", lwindow, 1, 86400, &window_s) != 0 ||
	    rt_config_u64("client-login-cooldown", lcool, 1, 86400, &cool_s) != 0 ||
	    rt_config_u64("post-cache", pcache, 0, 1u << 24, &npost) != 0 ||
	    rt_config_u64("post-cache-ms", pcache_ms, 0, 86400000, &post_ms) != 0) {
		return 2;
	}

	for (int i = 0; i < GW_SVC_COUNT; i++) {
		go.urls[i] = urls[i];
	}
	go.timeout_ms = (int)tmo;
	go.auth_cache_ms = (int)ttl;
	go.session_check_ms = (int)check_ms;
	go.login_fails = (unsigned)nfails;
	go.login_window_ms = window_s * 1000;
	go.login_cooldown_ms = cool_s * 1000;
	go.post_cache = (size_t)npost;
	go.post_cache_ms = post_ms;
	if ((rc = gw_open(&g, &go)) != WB_OK) {
		RT_ERRORF("cannot dial the services: %s", wb_strerror(rc));
		return rt_daemon_exit(1);
	}
	so.name = "gateway";
	so.url = url;
	so.workers = (int)nworkers;
	if ((rc = rt_server_open(&srv, &so)) != WB_OK) {
		RT_ERRORF("cannot create the server: %s", wb_strerror(rc));
		gw_close(g);
		return rt_daemon_exit(1);
	}
	for (int op = 1; op < WB_OP_COUNT; op++) {
		if (gw_is_public((wb_op)op)) {
			rt_server_handle(srv, (wb_op)op, gw_handler, g);
		}
	}
	if ((rc = rt_server_start(srv)) != WB_OK) {
		RT_ERRORF("cannot listen on %s: %s", url, wb_strerror(rc));
		rt_server_close(srv);
		gw_close(g);
		return rt_daemon_exit(1);
	}
	RT_INFOF("listening on %s, %d workers", url, so.workers);

	for (int i = 0; i < GW_SVC_COUNT; i++) {
		mo.urls[i] = urls[i];
	}
	mo.gateway_url = url;
	ho.url = http_url;
	ho.web_dir = web_dir[0] != '\0' ? web_dir : gw_http_web_dir(webbuf, sizeof(webbuf));
	ho.workers = (int)nworkers;
	ho.header_timeout_ms = (int)hdr_ms;
	ho.max_conns = (size_t)nconns;
	if ((rc = gw_metrics_open(&metrics, &mo)) != WB_OK) {
		RT_ERRORF("cannot set up metrics: %s", wb_strerror(rc));
		rt_server_close(srv);
		gw_close(g);
		return rt_daemon_exit(1);
	}
	ho.metrics = metrics;
	if ((rc = gw_http_open(&http, g, &ho)) != WB_OK || (rc = gw_http_start(http)) != WB_OK) {
		RT_ERRORF("cannot serve HTTP on %s: %s", http_url, wb_strerror(rc));
		gw_http_close(http);
		gw_metrics_close(metrics);
		rt_server_close(srv);
		gw_close(g);
		return rt_daemon_exit(1);
	}
	RT_INFOF("HTTP on %s (port %d)", http_url, gw_http_port(http));
	rt_daemon_wait();
	gw_http_close(http);
	gw_metrics_close(metrics);
	rt_server_close(srv);
	gw_close(g);
	return rt_daemon_exit(0);
}
