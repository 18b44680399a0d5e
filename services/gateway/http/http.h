/*
 * http.h - the gateway's HTTP/JSON API, web page and operations
 * endpoints, served by nng's own HTTP server.
 *
 *   client ──HTTP──> nng HTTP server (nng's threads: never block)
 *                       │ gw_http callback: admit, read the body async
 *                       v
 *                    worker pool ──> route ──> JSON -> wb_obj ──> gw_dispatch
 *                       │                                      (blocks on the services)
 *                       └── wb_obj -> JSON, nng_aio_finish ──> response
 *
 * One nng handler takes every path ("/" as a tree, any method) and routes
 * itself, so unknown paths get JSON 404s and wrong methods 405 with Allow.
 * Requests are recycled jobs (buffers kept), so steady traffic creates no
 * threads and little garbage.  See docs/http-api.md for the endpoints.
 */
#ifndef GW_HTTP_H
#define GW_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "gw.h"
#include "gw_metrics.h"

#define GW_HTTP_MAX_BODY (64 * 1024) /* default body limit (413 above) */

typedef struct gw_http gw_http;

typedef struct gw_http_opts {
	const char *url;             /* http://host:port (port 0: any free port) */
	const char *web_dir;         /* the web page's files; NULL or "": none */
	int         workers;         /* worker threads (default 16) */
	int         max_inflight;    /* requests admitted at once; more get 503 (default 1024) */
	size_t      max_body;        /* largest request body (default GW_HTTP_MAX_BODY) */
	int         body_timeout_ms; /* deadline to receive a body (default 10000) */
	gw_metrics *metrics;         /* /metrics, /readyz and per-op stats (required) */
	int         header_timeout_ms; /* a connection idle this long without a whole request head is closed (default 10000) */
	size_t
	    max_conns; /* HTTP connections before idle ones get 250 ms (default: open-files limit - 128) */
} gw_http_opts;

/* gw_http_open prepares the server for opts->url (not yet listening), loading the web page's files. */
int gw_http_open(gw_http **out, gw *g, const gw_http_opts *opts);

/* gw_http_start listens and begins serving. */
int gw_http_start(gw_http *h);

/* gw_http_port returns the TCP port the server listens on (after gw_http_start). */
int gw_http_port(gw_http *h);

/* gw_http_web_dir finds the default web page folder into buf: services/gateway/web
 * of the source tree the binary was built in (<root>/build/bin/warble-gateway),
 * else of the current folder, else PREFIX/share/warble/web. */
const char *gw_http_web_dir(char *buf, size_t n);

/* gw_http_close stops serving, completes every request in flight and frees h; NULL is ignored. */
void gw_http_close(gw_http *h);

#endif
