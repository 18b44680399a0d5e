/*
 * http.h - the gateway's HTTP/JSON API, web page and operations
 * endpoints, served by nng's own HTTP server.
 *
 *   client ──HTTP──> nng HTTP server (nng's threads: never block)
 *                       │ http_server callback: admit, read the body async
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
#ifndef HTTP_H
#define HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "gw.h"
#include "gw_metrics.h"

#define HTTP_MAX_BODY (64 * 1024) /* default body limit (413 above) */

typedef struct http_server http_server;

typedef struct http_opts {
	const char *url;             /* http://host:port (port 0: any free port) */
	const char *web_dir;         /* the web page's files; NULL or "": none */
	int         workers;         /* worker threads (default 16) */
	int         max_inflight;    /* requests admitted at once; more get 503 (default 1024) */
	size_t      max_body;        /* largest request body (default HTTP_MAX_BODY) */
	int         body_timeout_ms; /* deadline to receive a body (default 10000) */
	gw_metrics *metrics;         /* /metrics, /readyz and per-op stats (required) */
	int         header_timeout_ms; /* a connection idle this long without a whole request head is closed (default 10000) */
	size_t
	    max_conns; /* HTTP connections before idle ones get 250 ms (default: open-files limit - 128) */
} http_opts;

/* http_open prepares the server for opts->url (not yet listening), loading the web page's files. */
int http_open(http_server **out, gw *g, const http_opts *opts);

/* http_start listens and begins serving. */
int http_start(http_server *h);

/* http_port returns the TCP port the server listens on (after http_start). */
int http_port(http_server *h);

/* http_web_dir finds the default web page folder into buf: services/gateway/web
 * of the source tree the binary was built in (<root>/build/bin/warble-gateway),
 * else of the current folder, else PREFIX/share/warble/web. */
const char *http_web_dir(char *buf, size_t n);

/* http_close stops serving, completes every request in flight and frees h; NULL is ignored. */
void http_close(http_server *h);

#endif
