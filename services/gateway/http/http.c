/*
 * http.c - the HTTP server's connection side: the URL, the worker jobs,
 * and the loop's serve callback that cuts requests out of what arrived.
 *
 * A connection's bytes, as serve sees them (rt_loop keeps what is not
 * consumed and calls again when more arrives):
 *
 *   [CRLF...] head (<= 8 KiB) [body: Content-Length bytes] [next request...]
 *
 *   head not complete     wait (the connection's idle deadline runs: a
 *                         slow head is cut off), or 431 past 8 KiB
 *   head refused          400 / 413 / 505 and the connection ends
 *   body not complete     wait, with the body deadline from the head on
 *                         (and 100 Continue if the client asked for it)
 *   whole request         http_serve (http_api.c) answers it on this thread
 *
 * A request answered with `Connection: close` (the client's wish, HTTP/1.0,
 * or an error that leaves the stream unreadable) ends the connection's
 * sending side; what else the client sends is read and dropped until it
 * closes, so the reply is never lost to a reset.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_int.h"
#include "rt_log.h"
#include "wb_clock.h"

#define HTTP_WORKERS 16

static const char http_continue[] = "HTTP/1.1 100 Continue\r\n\r\n";

static void *
http_job_open(void *arg)
{
	http_job *j = calloc(1, sizeof(*j));

	if (j == NULL) {
		return NULL;
	}
	j->h = arg;
	if ((j->q = wb_msg_new()) == NULL || (j->rep = wb_msg_new()) == NULL) {
		wb_msg_free(j->q);
		free(j);
		return NULL;
	}
	return j;
}

static void
http_job_close(void *arg, void *scratch)
{
	http_job *j = scratch;

	(void)arg;
	if (j != NULL) {
		wb_msg_free(j->q);
		wb_msg_free(j->rep);
		http_buf_free(&j->out);
		http_buf_free(&j->resp);
		free(j);
	}
}

/* http_refuse answers a request that cannot be read on (status and why) and ends the connection. */
static void
http_refuse(http_job *j, int status, const char *why)
{
	j->close = true;
	http_fail(
	    j, status, status == 413 || status == 431 ? "TOO_LARGE" : "BAD_MESSAGE", "%s", why);
}

/* http_body_max returns the largest body h takes for the request of head: an image upload's is larger. */
static size_t
http_body_max(const http_server *h, const rt_http_head *head)
{
	return http_is_upload(head->method, head->target) ? h->opts.max_upload : h->opts.max_body;
}

/* http_take handles the request at the front of p (n bytes, a whole head of hlen), or waits for its body; returns its bytes, or 0 to wait. */
static size_t
http_take(http_job *j, uintptr_t *st, const char *p, size_t n, size_t hlen, size_t *want)
{
	http_server *h = j->h;
	const char  *why;
	uint64_t     len;
	int          status;

	memcpy(j->headbuf, p, hlen);
	j->headbuf[hlen] = '\0';
	j->start_us = wb_mono_us();
	status = rt_http_head_parse(j->headbuf, hlen, &j->head, &why);
	if (j->head.request_id != NULL &&
	    wb_rid_ok(j->head.request_id, strlen(j->head.request_id))) {
		snprintf(j->rid, sizeof(j->rid), "%s", j->head.request_id);
	} else {
		gw_rid_new(h->g, j->rid);
	}
	if (status != 0) {
		http_refuse(j, status, why);
		return n;
	}
	if (j->head.chunked) {
		http_refuse(j, 400, "Transfer-Encoding is not supported; send Content-Length");
		return n;
	}
	size_t max = http_body_max(h, &j->head);
	if ((len = j->head.content_length) > max) {
		/* the unread body is still on its way: the connection ends */
		char msg[64];
		snprintf(msg, sizeof(msg), "request body over %zu bytes", max);
		http_refuse(j, 413, msg);
		return n;
	}
	if (max > h->opts.max_body && !(*st & HTTP_ST_UPLOAD) && !http_upload_begin(j, st)) {
		/* an upload's body may be large: only so many are held at once, and
		 * only for a caller whose token holds (http_upload.c) */
		return n;
	}
	if (n - hlen < len) {
		*want = hlen + (size_t)len;
		if (j->head.expect_continue && !(*st & HTTP_ST_CONTINUE)) {
			*st |= HTTP_ST_CONTINUE;
			j->broken =
			    !rt_loop_send(j->conn, http_continue, sizeof(http_continue) - 1);
		}
		if (!(*st & HTTP_ST_BODY)) {
			*st |= HTTP_ST_BODY;
			rt_loop_conn_wait(j->conn, h->opts.body_timeout_ms);
		}
		return 0;
	}
	*st &= ~(uintptr_t)(HTTP_ST_BODY | HTTP_ST_CONTINUE);
	j->body = p + hlen;
	j->body_len = (size_t)len;
	j->close = j->head.close;
	http_serve(j);
	if (*st & HTTP_ST_UPLOAD) {
		http_upload_give(h->uploads, *st);
		*st &= ((uintptr_t)1 << HTTP_ST_ROW_SHIFT) - 1 - HTTP_ST_UPLOAD;
	}
	return hlen + (size_t)len;
}

/* http_conn_requests serves every whole request at the front of in, in order. */
static ssize_t
http_conn_requests(
    void *arg, void *scratch, rt_loop_conn *c, const uint8_t *in, size_t n, size_t *want)
{
	http_job  *j = scratch;
	uintptr_t *st = rt_loop_conn_state(c);
	size_t     at = 0;

	(void)arg;
	if (j == NULL) {
		return -1; /* a worker without its job (out of memory at start) */
	}
	if (*st & HTTP_ST_DRAIN) {
		return (ssize_t)n;
	}
	j->conn = c;
	j->broken = false;
	j->close = false;
	while (at < n) {
		const char *p = (const char *)in + at;
		size_t      left = n - at, hlen, took;

		if (*p == '\r' || *p == '\n') {
			at++; /* empty lines before a request line are allowed */
			continue;
		}
		memset(&j->head, 0, sizeof(j->head));
		j->allow = NULL;
		j->headers[0] = '\0';
		j->www_auth = false;
		j->rid[0] = '\0'; /* http_take sets it; a head too large has none */
		hlen = rt_http_head_end(p, left < RT_HTTP_HEAD_MAX ? left : RT_HTTP_HEAD_MAX);
		if (hlen == 0) {
			if (left < RT_HTTP_HEAD_MAX) {
				break; /* the rest of the head is on its way */
			}
			http_refuse(j, 431, "request head over 8 KiB");
			took = left;
		} else if ((took = http_take(j, st, p, left, hlen, want)) == 0) {
			break;
		}
		at += took;
		if (j->broken) {
			return -1;
		}
		if (j->close) {
			rt_loop_conn_finish(c);
			*st |= HTTP_ST_DRAIN;
			return (ssize_t)n;
		}
	}
	return j->broken ? -1 : (ssize_t)at;
}

/* http_conn_serve is the loop's serve callback: http_conn_requests, logging as the gateway under each request's id. */
static ssize_t
http_conn_serve(
    void *arg, void *scratch, rt_loop_conn *c, const uint8_t *in, size_t n, size_t *want)
{
	http_job   *j = scratch;
	const char *prev_svc = rt_log_swap_service("gateway");
	const char *prev_rid = wb_rid_swap(j != NULL ? j->rid : NULL);
	ssize_t     rv = http_conn_requests(arg, scratch, c, in, n, want);

	wb_rid_swap(prev_rid);
	rt_log_swap_service(prev_svc);
	return rv;
}

/*
 * http_conn_closed gives back the upload slot of a connection that went mid-body (or was refused
 * one).
 */
static void
http_conn_closed(void *arg, uintptr_t state)
{
	http_server *h = arg;

	http_upload_give(h->uploads, state);
}

static const rt_loop_ops http_ops = {
	.worker_open = http_job_open,
	.worker_close = http_job_close,
	.serve = http_conn_serve,
	.closed = http_conn_closed,
};

int
http_open(http_server **out, gw *g, const http_opts *opts)
{
	http_server *h;
	rt_loop_opts lo = { .name = "http" };
	int          rc;

	*out = NULL;
	if (opts->metrics == NULL || opts->url == NULL) {
		return WB_EINVAL;
	}
	if ((h = calloc(1, sizeof(*h))) == NULL) {
		return WB_ENOMEM;
	}
	h->g = g;
	h->metrics = opts->metrics;
	h->opts = *opts;
	if (h->opts.workers <= 0) {
		h->opts.workers = HTTP_WORKERS;
	}
	if (h->opts.max_body == 0) {
		h->opts.max_body = HTTP_MAX_BODY;
	}
	if (h->opts.max_upload == 0) {
		h->opts.max_upload = WB_MEDIA_MAX_DEFAULT;
	}
	if (h->opts.max_upload < h->opts.max_body) {
		h->opts.max_upload = h->opts.max_body; /* an upload's body is never held to less */
	}
	if (h->opts.max_uploads <= 0) {
		h->opts.max_uploads = 8;
	}
	if (h->opts.max_user_uploads <= 0) {
		h->opts.max_user_uploads = 2;
	}
	if ((rc = http_uploads_open(&h->uploads, h->opts.max_uploads, h->opts.max_user_uploads)) !=
	    WB_OK) {
		http_close(h);
		return rc;
	}
	if (h->opts.body_timeout_ms <= 0) {
		h->opts.body_timeout_ms = 10000;
	}
	if (h->opts.header_timeout_ms <= 0) {
		h->opts.header_timeout_ms = 10000;
	}
	if ((h->url = rt_http_tcp_url(opts->url)) == NULL) {
		RT_ERRORF("bad HTTP URL %s (want http://host:port)", opts->url);
		http_close(h);
		return WB_EINVAL;
	}
	if (opts->web_dir != NULL && opts->web_dir[0] != '\0' &&
	    (rc = http_static_load(h, opts->web_dir)) != WB_OK) {
		http_close(h);
		return rc;
	}
	lo.url = h->url;
	lo.workers = h->opts.workers;
	lo.spares = h->opts.spares;
	lo.idle_ms = h->opts.header_timeout_ms;
	lo.max_conns = h->opts.max_conns;
	lo.max_buf = RT_HTTP_HEAD_MAX + h->opts.max_upload + 1;
	if ((rc = rt_loop_open(&h->loop, &lo, &http_ops, h)) != WB_OK) {
		http_close(h);
		return rc;
	}
	*out = h;
	return WB_OK;
}

int
http_port(http_server *h)
{
	return rt_loop_port(h->loop);
}

void
http_close(http_server *h)
{
	if (h == NULL) {
		return;
	}
	rt_loop_close(h->loop);
	http_uploads_close(h->uploads);
	http_static_free(h);
	free(h->url);
	free(h);
}
