/*
 * http.c - the HTTP server's plumbing: admission, asynchronous body
 * reads, the worker hand-off, responses and shutdown.
 *
 * A request's life (nng's threads must never block):
 *
 *   nng thread   http_cb: take a job (freelist), check Content-Length
 *                (413 above max_body, 400 for chunked), start reading the
 *                body with a deadline ──> http_body_cb
 *   worker       http_serve (http_api.c): route, dispatch, encode
 *                http_respond: nng_aio_set_output + nng_aio_finish
 *
 * Findings about nng 1.5.2's server that shape this: it parses headers
 * itself into an 8 KiB line buffer (one header line longer than that
 * closes the connection) with no deadline and no cap on the number of
 * header lines; a handler that collects the body gets a plain 400 above
 * its limit, so the body is read here instead, to answer 413 and to put
 * a deadline on slow senders.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "http_int.h"
#include "http_json.h"
#include "rt_log.h"
#include "rt_server.h"
#include "wb_clock.h"

static void http_body_cb(void *arg);

/* nng 1.5.2 has no public call for an HTTP connection's peer address; its
 * (exported) internal one is stable in the nng Warble builds and pins. */
extern int nni_http_conn_getopt(
    nng_http_conn *conn, const char *name, void *buf, size_t *szp, int type);

/* http_sockaddr converts an nng TCP address to a sockaddr (family 0 for any other kind). */
static void
http_sockaddr(const nng_sockaddr *sa, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (sa->s_family == NNG_AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;
		in->sin_family = AF_INET;
		in->sin_port = sa->s_in.sa_port;
		in->sin_addr.s_addr = sa->s_in.sa_addr;
	} else if (sa->s_family == NNG_AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = sa->s_in6.sa_port;
		memcpy(&in6->sin6_addr, sa->s_in6.sa_addr, 16);
	}
}

/* http_conn_peer reads conn's peer address into ss (family 0 if unknown). */
static void
http_conn_peer(nng_http_conn *conn, struct sockaddr_storage *ss)
{
	nng_sockaddr sa;
	size_t       sz = sizeof(sa);

	if (nni_http_conn_getopt(conn, NNG_OPT_REMADDR, &sa, &sz, 0 /* opaque */) != 0) {
		memset(ss, 0, sizeof(*ss));
		return;
	}
	http_sockaddr(&sa, ss);
}

static void
http_job_free(http_job *j)
{
	nng_aio_free(j->rxaio);
	wb_msg_free(j->q);
	wb_msg_free(j->rep);
	http_buf_free(&j->out);
	free(j->body);
	free(j);
}

/* http_job_get takes a recycled job or makes one; NULL if out of memory or closing. Call with mu held. */
static http_job *
http_job_get(http_server *h)
{
	http_job *j;

	if (h->closing) {
		return NULL;
	}
	if ((j = h->free) != NULL) {
		h->free = j->next;
		return j;
	}
	if ((j = calloc(1, sizeof(*j))) == NULL) {
		return NULL;
	}
	j->h = h;
	if (nng_aio_alloc(&j->rxaio, http_body_cb, j) != 0 || (j->q = wb_msg_new()) == NULL ||
	    (j->rep = wb_msg_new()) == NULL) {
		http_job_free(j);
		return NULL;
	}
	j->all = h->jobs;
	h->jobs = j;
	return j;
}

static void
http_work(void *arg)
{
	http_serve(arg);
}

/* http_submit hands j to the workers, or drops the connection if closing. */
static void
http_submit(http_job *j)
{
	http_server *h = j->h;
	int          rc;

	pthread_mutex_lock(&h->mu);
	rc = h->closing ? WB_ECLOSED : rt_pool_submit(h->pool, http_work, j);
	pthread_mutex_unlock(&h->mu);
	if (rc != WB_OK) {
		http_finish(j, NULL);
	}
}

static void
http_body_cb(void *arg)
{
	http_job *j = arg;

	if (nng_aio_result(j->rxaio) != 0) {
		/* The client went away or sent too slowly: nothing to answer. */
		http_finish(j, NULL);
		return;
	}
	http_submit(j);
}

/* http_cb is nng's handler callback (an nng thread): admit and start reading the body. */
static void
http_cb(nng_aio *aio)
{
	nng_http_req           *req = nng_aio_get_input(aio, 0);
	nng_http_handler       *hd = nng_aio_get_input(aio, 1);
	nng_http_conn          *conn = nng_aio_get_input(aio, 2);
	http_server            *h = nng_http_handler_get_data(hd);
	http_job               *j;
	const char             *cl, *te;
	uint64_t                len = 0;
	nng_iov                 iov;
	struct sockaddr_storage peer;

	http_conn_peer(conn, &peer);
	atomic_fetch_add(&h->inflight, 1);
	pthread_mutex_lock(&h->mu);
	if ((j = http_job_get(h)) != NULL) {
		j->uaio = aio;
		j->peer = peer;
	}
	pthread_mutex_unlock(&h->mu);
	if (j == NULL) {
		atomic_fetch_sub(&h->inflight, 1);
		nng_aio_finish(aio, NNG_ECONNABORTED);
		return;
	}
	j->req = req;
	j->conn = conn;
	j->start_us = wb_mono_us();
	j->body_len = 0;
	j->allow = NULL;
	j->www_auth = false;
	j->close = false;
	if (atomic_load(&h->inflight) > h->opts.max_inflight) {
		j->close = true;
		http_fail(j, 503, "UNAVAILABLE", "too many requests in flight, retry later");
		return;
	}
	if ((te = nng_http_req_get_header(req, "Transfer-Encoding")) != NULL) {
		j->close = true;
		http_fail(j, 400, "BAD_MESSAGE",
		    "Transfer-Encoding is not supported; send Content-Length");
		return;
	}
	if ((cl = nng_http_req_get_header(req, "Content-Length")) != NULL &&
	    !http_json_parse_u64(cl, strlen(cl), &len)) {
		j->close = true;
		http_fail(j, 400, "BAD_MESSAGE", "bad Content-Length");
		return;
	}
	if (len > h->opts.max_body) {
		j->close = true; /* the unread body is still on the connection */
		http_fail(j, 413, "TOO_LARGE", "request body over %zu bytes", h->opts.max_body);
		return;
	}
	if (len == 0) {
		http_submit(j);
		return;
	}
	if (j->body_cap < len) {
		char *p = realloc(j->body, len + 1);
		if (p == NULL) {
			j->close = true;
			http_fail(j, 503, "NO_MEMORY", "out of memory");
			return;
		}
		j->body = p;
		j->body_cap = len;
	}
	j->body_len = len;
	iov.iov_buf = j->body;
	iov.iov_len = len;
	nng_aio_set_iov(j->rxaio, 1, &iov);
	nng_aio_set_timeout(j->rxaio, h->opts.body_timeout_ms);
	nng_http_conn_read_all(conn, j->rxaio);
}

int
http_open(http_server **out, gw *g, const http_opts *opts)
{
	http_server *h;
	int          rv, rc;

	*out = NULL;
	if (opts->metrics == NULL || opts->url == NULL) {
		return WB_EINVAL;
	}
	if ((h = calloc(1, sizeof(*h))) == NULL) {
		return WB_ENOMEM;
	}
	pthread_mutex_init(&h->mu, NULL);
	h->g = g;
	h->metrics = opts->metrics;
	h->opts = *opts;
	if (h->opts.workers <= 0) {
		h->opts.workers = 16;
	}
	if (h->opts.max_inflight <= 0) {
		h->opts.max_inflight = 1024;
	}
	if (h->opts.max_body == 0) {
		h->opts.max_body = HTTP_MAX_BODY;
	}
	if (h->opts.body_timeout_ms <= 0) {
		h->opts.body_timeout_ms = 10000;
	}
	if (h->opts.header_timeout_ms <= 0) {
		h->opts.header_timeout_ms = 10000;
	}
	if (opts->web_dir != NULL && opts->web_dir[0] != '\0' &&
	    (rc = http_static_load(h, opts->web_dir)) != WB_OK) {
		http_close(h);
		return rc;
	}
	if ((rc = rt_pool_open(&h->pool, h->opts.workers)) != WB_OK) {
		http_close(h);
		return rc;
	}
	if ((rv = nng_url_parse(&h->url, opts->url)) != 0 ||
	    strcmp(h->url->u_scheme, "http") != 0) {
		RT_ERRORF("bad HTTP URL %s (want http://host:port)", opts->url);
		http_close(h);
		return WB_EINVAL;
	}
	if ((rv = nng_http_server_hold(&h->srv, h->url)) != 0 ||
	    (rv = nng_http_handler_alloc(&h->hd, "/", http_cb)) != 0 ||
	    (rv = nng_http_handler_set_method(h->hd, NULL)) != 0 ||
	    (rv = nng_http_handler_set_tree(h->hd)) != 0 ||
	    (rv = nng_http_handler_collect_body(h->hd, false, 0)) != 0 ||
	    (rv = nng_http_handler_set_data(h->hd, h, NULL)) != 0) {
		RT_ERRORF("cannot set up the HTTP server: %s", nng_strerror(rv));
		http_close(h);
		return rv == NNG_ENOMEM ? WB_ENOMEM : WB_EINVAL;
	}
	if ((rv = nng_http_server_add_handler(h->srv, h->hd)) != 0) {
		RT_ERRORF("cannot add the HTTP handler: %s", nng_strerror(rv));
		nng_http_handler_free(h->hd);
		h->hd = NULL;
		http_close(h);
		return WB_EINVAL;
	}
	*out = h;
	return WB_OK;
}

int
http_start(http_server *h)
{
	int rv;

	if ((rv = nng_http_server_start(h->srv)) != 0) {
		RT_ERRORF("cannot listen on %s: %s", h->opts.url, nng_strerror(rv));
		return rv == NNG_EADDRINUSE ? WB_EUNAVAIL : WB_EINVAL;
	}
	h->started = true;
	h->port = http_port(h);
	if (http_guard_start(h) != WB_OK) {
		RT_WARNF("http: no connection guard (no thread): slow clients are not cut off");
	}
	return WB_OK;
}

int
http_port(http_server *h)
{
	nng_sockaddr sa;

	if (nng_http_server_get_addr(h->srv, &sa) != 0 || sa.s_family != NNG_AF_INET) {
		return -1;
	}
	return (int)ntohs(sa.s_in.sa_port);
}

void
http_close(http_server *h)
{
	http_job *j;

	if (h == NULL) {
		return;
	}
	http_guard_stop(h);
	pthread_mutex_lock(&h->mu);
	h->closing = true;
	pthread_mutex_unlock(&h->mu);
	if (h->srv != NULL && h->started) {
		nng_http_server_stop(h->srv); /* closes every connection */
	}
	/* Body reads end (closed); then the queued requests complete. */
	for (j = h->jobs; j != NULL; j = j->all) {
		nng_aio_stop(j->rxaio);
	}
	if (h->pool != NULL) {
		rt_pool_close(h->pool);
	}
	if (h->srv != NULL) {
		nng_http_server_release(h->srv);
	}
	while ((j = h->jobs) != NULL) {
		h->jobs = j->all;
		http_job_free(j);
	}
	nng_url_free(h->url);
	http_static_free(h);
	pthread_mutex_destroy(&h->mu);
	free(h);
}
