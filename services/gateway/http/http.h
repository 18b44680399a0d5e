/*
 * http.h - the gateway's HTTP/JSON API, web page and operations
 * endpoints, served by its own HTTP/1.1 server on the serving core the
 * msgpack port uses (rt_loop.h):
 *
 *   client ──HTTP──> worker (epoll) : head, body ──> route ──> JSON -> wb_obj
 *                       │                                      ──> gw_dispatch
 *                       │                                  (blocks on the services)
 *                       └── wb_obj -> JSON -> response, sent by the same thread
 *
 * One routing table takes every path, so unknown paths get JSON 404s and
 * wrong methods 405 with Allow.  See docs/http-api.md for the endpoints
 * and the limits.
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
	const char *url;      /* http://host:port (port 0: any free port) */
	const char *web_dir;  /* the web page's files; NULL or "": none */
	int         workers;  /* worker threads, each serving one request at a time (default 16) */
	int         spares;   /* threads standing in for workers in slow calls */
	size_t      max_body; /* largest request body (default HTTP_MAX_BODY) */
	int         body_timeout_ms; /* deadline to receive a body, from its head (default 10000) */
	gw_metrics *metrics;         /* /readyz, per-op stats and status counts (required) */
	int         header_timeout_ms; /* a connection idle this long without a whole request head is closed (default 10000) */
	size_t
	    max_conns; /* HTTP connections before idle ones get 250 ms (default: open-files limit - 128) */
	size_t max_upload; /* an image upload's body limit (default WB_MEDIA_MAX_DEFAULT) */
	int max_uploads; /* image uploads receiving at once, each up to max_upload bytes (default 8) */
	int max_user_uploads; /* ... of them one user's at once (default 2) */
} http_opts;

/* http_open loads the web page's files and starts serving on opts->url. */
int http_open(http_server **out, gw *g, const http_opts *opts);

/* http_port returns the TCP port the server listens on (after http_start). */
int http_port(http_server *h);

/* http_web_dir finds the default web page folder into buf: services/gateway/web
 * of the source tree the binary was built in (<root>/build/bin/warble-gateway),
 * else of the current folder, else PREFIX/share/warble/web. */
const char *http_web_dir(char *buf, size_t n);

/* http_close stops serving, completes every request in flight and frees h; NULL is ignored. */
void http_close(http_server *h);

#endif
