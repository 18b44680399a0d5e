/*
 * rt_metrics.c - the admin port (see rt_metrics.h): a minimal HTTP/1.1
 * GET responder on the serving core (rt_loop.h), and what it serves.
 *
 * A connection's bytes, as serve sees them (rt_loop keeps what is not
 * consumed and calls again when more arrives):
 *
 *   [CRLF...] head (<= 8 KiB, no body) [next request...]
 *
 *   head not complete    wait (the connection's idle deadline runs), or
 *                        431 past 8 KiB
 *   head refused         400 (malformed, or announcing a body) or 505
 *                        (rt_metrics_read), and the connection ends
 *   whole head           answered on this thread: 200, 404, 405 or 503
 *
 * A reply that ends the connection is followed by a close of the sending
 * side only (rt_loop_conn_finish), and what the client still sends is
 * read and dropped.
 *
 * What the port serves is registered while it already runs (services
 * add their sources as they open), so the tables sit under a lock; each
 * request copies them and calls out without it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_http.h"
#include "rt_log.h"
#include "rt_loop.h"
#include "rt_metrics.h"
#include "wb_errors.h"

#define RT_METRICS_MAX     16    /* sources, extra writers, pages: each */
#define RT_METRICS_WORKERS 2     /* a page may wait on probes (the gateway's: 1 s) */
#define RT_METRICS_IDLE_MS 60000 /* a keep-alive connection waits this long for a request */
#define RT_METRICS_CONNS   64    /* connections before idle ones are closed */
#define RT_METRICS_DRAIN   1     /* connection state: answered for the last time */

#define RT_METRICS_PROM "text/plain; version=0.0.4; charset=utf-8"
#define RT_METRICS_JSON "application/json"

/* A request as the port answers it (strings point into the head's copy). */
typedef struct rt_metrics_req {
	const char *method;
	const char *path;  /* without the query */
	bool        close; /* the connection ends after the reply */
} rt_metrics_req;

typedef struct rt_metrics_feed {
	char               *service;
	unsigned            shard;
	rt_metrics_stats_fn fn;
	void               *arg;
} rt_metrics_feed;

typedef struct rt_metrics_hook {
	char              *path; /* a page's; NULL for the others */
	rt_metrics_text_fn fn;
	void              *arg;
} rt_metrics_hook;

/* What a request may reach, copied for it. */
typedef struct rt_metrics_tables {
	rt_metrics_feed src[RT_METRICS_MAX];
	rt_metrics_hook extra[RT_METRICS_MAX], page[RT_METRICS_MAX], check;
	size_t          nsrc, nextra, npage;
} rt_metrics_tables;

struct rt_metrics {
	pthread_mutex_t   mu;
	rt_metrics_tables t;
	atomic_bool       ready;
	char             *url; /* tcp://host:port */
	rt_loop          *loop;
};

/* --- requests --------------------------------------------------------------- */

/*
 * rt_metrics_read parses the head in buf (n bytes, NUL-terminated, cut in
 * place) into r: a GET without a body (rt_http.h's parser, then what this
 * port refuses besides: a target that is not a path, a version other than
 * HTTP/1.0 and 1.1, a body announced).  0, or the status to refuse it
 * with and *why.
 */
static int
rt_metrics_read(char *buf, size_t n, rt_metrics_req *r, const char **why)
{
	rt_http_head h;
	int          status = rt_http_head_parse(buf, n, &h, why);
	char        *path;

	memset(r, 0, sizeof(*r));
	r->method = h.method; /* a refused HEAD is answered without a body too */
	if (status == 413 || (status == 0 && (h.chunked || h.content_length > 0))) {
		*why = "this port takes no request body";
		return 400;
	}
	if (status != 0) {
		return status;
	}
	if (h.target[0] != '/') {
		*why = "malformed request line";
		return 400;
	}
	if (h.minor > 1) {
		*why = "only HTTP/1.0 and 1.1 are served";
		return 505;
	}
	path = buf + (h.target - buf);
	path[strcspn(path, "?")] = '\0'; /* no page takes a query */
	r->path = path;
	r->close = h.close;
	return 0;
}

/* --- replies ---------------------------------------------------------------- */

/* rt_metrics_respond sends status with body (none to a HEAD); false if the connection must go. */
static bool
rt_metrics_respond(rt_loop_conn *c, const rt_metrics_req *r, int status, const char *ctype,
    const char *body, size_t len)
{
	char  *resp = NULL;
	size_t rlen = 0;
	FILE  *f = open_memstream(&resp, &rlen);
	bool   head = r->method != NULL && strcmp(r->method, "HEAD") == 0, ok;

	if (f == NULL) {
		return false;
	}
	fprintf(f,
	    "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
	    "Cache-Control: no-store\r\n%s%s\r\n",
	    status, rt_http_reason(status), ctype, len, status == 405 ? "Allow: GET, HEAD\r\n" : "",
	    r->close ? "Connection: close\r\n" : "");
	if (!head && len > 0) {
		fwrite(body, 1, len, f);
	}
	ok = !ferror(f);
	if (fclose(f) != 0) {
		ok = false;
	}
	ok = ok && rt_loop_send(c, resp, rlen);
	free(resp);
	return ok;
}

/*
 * rt_metrics_fail sends a JSON error {"error": name, "message": msg} (msg
 * plain ASCII, no quotes).
 */
static bool
rt_metrics_fail(
    rt_loop_conn *c, const rt_metrics_req *r, int status, const char *name, const char *msg)
{
	char body[256];
	int  n = snprintf(body, sizeof(body), "{\"error\":\"%s\",\"message\":\"%s\"}", name, msg);

	return rt_metrics_respond(c, r, status, RT_METRICS_JSON, body, (size_t)n);
}

/* rt_metrics_tables_copy copies what a request may reach. */
static void
rt_metrics_tables_copy(rt_metrics *m, rt_metrics_tables *t)
{
	pthread_mutex_lock(&m->mu);
	*t = m->t;
	pthread_mutex_unlock(&m->mu);
}

/* rt_metrics_render writes /metrics: every source's stats, then the extra families. */
static int
rt_metrics_render(const rt_metrics_tables *t, FILE *out)
{
	rt_metrics_src src[RT_METRICS_MAX];
	int            rc = WB_OK;

	for (size_t i = 0; i < t->nsrc; i++) {
		wb_obj *rep = wb_msg_new();

		if (rep != NULL && t->src[i].fn(t->src[i].arg, rep) != WB_OK) {
			RT_DEBUGF(
			    "metrics: no stats from %s/%u", t->src[i].service, t->src[i].shard);
			wb_msg_free(rep);
			rep = NULL;
		}
		src[i] = (rt_metrics_src) { t->src[i].service, t->src[i].shard, rep };
	}
	rc = rt_metrics_write(out, src, t->nsrc, 0);
	for (size_t i = 0; i < t->nextra && rc == WB_OK; i++) {
		rc = t->extra[i].fn(t->extra[i].arg, out);
	}
	for (size_t i = 0; i < t->nsrc; i++) {
		wb_msg_free((wb_obj *)src[i].rep);
	}
	return rc;
}

/* rt_metrics_answer answers one parsed request; false if the connection must go. */
static bool
rt_metrics_answer(rt_metrics *m, rt_loop_conn *c, const rt_metrics_req *r)
{
	rt_metrics_tables *t;
	const char        *ctype = RT_METRICS_PROM;
	char              *body = NULL;
	size_t             len = 0;
	FILE              *out;
	int                rc = WB_OK, status = 200;
	bool               ok;

	if (strcmp(r->method, "GET") != 0 && strcmp(r->method, "HEAD") != 0) {
		return rt_metrics_fail(c, r, 405, "METHOD_NOT_ALLOWED", "only GET and HEAD here");
	}
	if (strcmp(r->path, "/healthz") == 0) {
		return rt_metrics_respond(c, r, 200, RT_METRICS_JSON, "{\"status\":\"ok\"}",
		    strlen("{\"status\":\"ok\"}"));
	}
	if ((t = malloc(sizeof(*t))) == NULL || (out = open_memstream(&body, &len)) == NULL) {
		free(t);
		return rt_metrics_fail(c, r, 503, "NO_MEMORY", "out of memory");
	}
	rt_metrics_tables_copy(m, t);
	if (strcmp(r->path, "/metrics") == 0) {
		rc = rt_metrics_render(t, out);
	} else if (strcmp(r->path, "/readyz") == 0) {
		ctype = RT_METRICS_JSON;
		if (!atomic_load(&m->ready)) {
			fputs("{\"ready\":false,\"status\":\"starting\"}", out);
			status = 503;
		} else if (t->check.fn != NULL) {
			status = t->check.fn(t->check.arg, out) == WB_OK ? 200 : 503;
		} else {
			fputs("{\"ready\":true}", out);
		}
	} else {
		status = 404;
		for (size_t i = 0; i < t->npage; i++) {
			if (strcmp(t->page[i].path, r->path) == 0) {
				status = 200;
				rc = t->page[i].fn(t->page[i].arg, out);
				break;
			}
		}
	}
	free(t);
	if (fclose(out) != 0 && rc == WB_OK) {
		rc = WB_ENOMEM;
	}
	if (status == 404) {
		ok = rt_metrics_fail(
		    c, r, 404, "NOT_FOUND", "no such page here (/metrics, /healthz, /readyz)");
	} else if (rc != WB_OK) {
		ok =
		    rt_metrics_fail(c, r, 503, wb_err_name(rc), "the figures could not be written");
	} else {
		ok = rt_metrics_respond(c, r, status, ctype, body, len);
	}
	free(body);
	return ok;
}

/* rt_metrics_serve is the loop's serve callback: answers every whole request at the front of in. */
static ssize_t
rt_metrics_serve(
    void *arg, void *scratch, rt_loop_conn *c, const uint8_t *in, size_t n, size_t *want)
{
	rt_metrics *m = arg;
	uintptr_t  *st = rt_loop_conn_state(c);
	size_t      at = 0;
	char        head[RT_HTTP_HEAD_MAX + 1];

	(void)scratch;
	(void)want;
	if (*st & RT_METRICS_DRAIN) {
		return (ssize_t)n;
	}
	while (at < n) {
		const char    *p = (const char *)in + at;
		size_t         left = n - at, hlen;
		rt_metrics_req r = { 0 };
		const char    *why = NULL;
		int            status;
		bool           ok;

		if (*p == '\r' || *p == '\n') {
			at++; /* empty lines before a request line are allowed */
			continue;
		}
		hlen = rt_http_head_end(p, left < RT_HTTP_HEAD_MAX ? left : RT_HTTP_HEAD_MAX);
		if (hlen == 0 && left < RT_HTTP_HEAD_MAX) {
			break; /* the rest of the head is on its way */
		}
		if (hlen == 0) {
			r.close = true;
			ok = rt_metrics_fail(c, &r, 431, "TOO_LARGE", "request head over 8 KiB");
			at = n;
		} else {
			memcpy(head, p, hlen);
			head[hlen] = '\0';
			at += hlen;
			if ((status = rt_metrics_read(head, hlen, &r, &why)) != 0) {
				r.close = true;
				ok = rt_metrics_fail(c, &r, status,
				    status == 505 ? "BAD_VERSION" : "BAD_MESSAGE", why);
				at = n;
			} else {
				ok = rt_metrics_answer(m, c, &r);
			}
		}
		if (!ok) {
			return -1;
		}
		if (r.close) {
			rt_loop_conn_finish(c);
			*st |= RT_METRICS_DRAIN;
			return (ssize_t)n;
		}
	}
	return (ssize_t)at;
}

static const rt_loop_ops rt_metrics_ops = {
	.serve = rt_metrics_serve,
};

int
rt_metrics_open(rt_metrics **out, const char *url)
{
	rt_metrics  *m;
	rt_loop_opts lo = { .name = "metrics",
		.workers = RT_METRICS_WORKERS,
		.idle_ms = RT_METRICS_IDLE_MS,
		.max_conns = RT_METRICS_CONNS,
		.max_buf = RT_HTTP_HEAD_MAX + 1 };
	int          rc;

	*out = NULL;
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		return WB_ENOMEM;
	}
	pthread_mutex_init(&m->mu, NULL);
	atomic_init(&m->ready, false);
	if ((m->url = rt_http_tcp_url(url)) == NULL) {
		rt_metrics_close(m);
		return WB_EINVAL;
	}
	lo.url = m->url;
	if ((rc = rt_loop_open(&m->loop, &lo, &rt_metrics_ops, m)) != WB_OK) {
		rt_metrics_close(m);
		return rc;
	}
	*out = m;
	return WB_OK;
}

int
rt_metrics_port(const rt_metrics *m)
{
	return rt_loop_port(m->loop);
}

/* rt_metrics_hook_add appends a hook (a copy of path, if any) to one of m's tables. */
static int
rt_metrics_hook_add(rt_metrics *m, rt_metrics_hook *tab, size_t *n, const char *path,
    rt_metrics_text_fn fn, void *arg)
{
	char *p = NULL;
	int   rc = WB_OK;

	if (fn == NULL || (path != NULL && path[0] != '/')) {
		return WB_EINVAL;
	}
	if (path != NULL && (p = strdup(path)) == NULL) {
		return WB_ENOMEM;
	}
	pthread_mutex_lock(&m->mu);
	if (*n == RT_METRICS_MAX) {
		rc = WB_EINVAL;
		free(p);
	} else {
		tab[(*n)++] = (rt_metrics_hook) { p, fn, arg };
	}
	pthread_mutex_unlock(&m->mu);
	return rc;
}

int
rt_metrics_source(
    rt_metrics *m, const char *service, unsigned shard, rt_metrics_stats_fn fn, void *arg)
{
	char *s;
	int   rc = WB_OK;

	if (service == NULL || fn == NULL) {
		return WB_EINVAL;
	}
	if ((s = strdup(service)) == NULL) {
		return WB_ENOMEM;
	}
	pthread_mutex_lock(&m->mu);
	if (m->t.nsrc == RT_METRICS_MAX) {
		rc = WB_EINVAL;
		free(s);
	} else {
		m->t.src[m->t.nsrc++] = (rt_metrics_feed) { s, shard, fn, arg };
	}
	pthread_mutex_unlock(&m->mu);
	return rc;
}

int
rt_metrics_extra(rt_metrics *m, rt_metrics_text_fn fn, void *arg)
{
	return rt_metrics_hook_add(m, m->t.extra, &m->t.nextra, NULL, fn, arg);
}

int
rt_metrics_page(rt_metrics *m, const char *path, rt_metrics_text_fn fn, void *arg)
{
	if (path == NULL || strcmp(path, "/metrics") == 0 || strcmp(path, "/healthz") == 0 ||
	    strcmp(path, "/readyz") == 0) {
		return WB_EINVAL;
	}
	return rt_metrics_hook_add(m, m->t.page, &m->t.npage, path, fn, arg);
}

int
rt_metrics_check(rt_metrics *m, rt_metrics_text_fn fn, void *arg)
{
	int rc = WB_OK;

	if (fn == NULL) {
		return WB_EINVAL;
	}
	pthread_mutex_lock(&m->mu);
	if (m->t.check.fn != NULL) {
		rc = WB_EINVAL;
	} else {
		m->t.check = (rt_metrics_hook) { NULL, fn, arg };
	}
	pthread_mutex_unlock(&m->mu);
	return rc;
}

void
rt_metrics_ready(rt_metrics *m, bool ready)
{
	atomic_store(&m->ready, ready);
}

void
rt_metrics_close(rt_metrics *m)
{
	if (m == NULL) {
		return;
	}
	rt_loop_close(m->loop);
	for (size_t i = 0; i < m->t.nsrc; i++) {
		free(m->t.src[i].service);
	}
	for (size_t i = 0; i < m->t.npage; i++) {
		free(m->t.page[i].path);
	}
	pthread_mutex_destroy(&m->mu);
	free(m->url);
	free(m);
}
