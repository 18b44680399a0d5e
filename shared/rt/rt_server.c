/*
 * rt_server.c - the REP server every Warble daemon runs.
 *
 * Each of `workers` threads owns one nng context and serves it in a loop:
 *
 *   receive (wait) -> decode, check, handler, stats, encode -> send (wait)
 *
 * An aio with no callback wakes its waiting thread straight from nng's
 * completion, so a request costs one thread hand-off each way (an aio
 * callback that queued work for a pool cost two).  A REP socket keeps
 * requests that find every context busy in its pipes: `workers` is the
 * number of requests in service at once.
 *
 * Closing cancels the receives of idle workers (under the server's mutex,
 * so a worker about to receive sees the flag instead), lets busy ones
 * finish and send their replies for up to RT_SERVER_DRAIN_MS, then closes
 * the socket and joins every thread.
 */
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/supplemental/util/platform.h>

#include "rt_log.h"
#include "rt_server.h"
#include "rt_stats.h"
#include "wb_clock.h"

#define RT_SERVER_WORKERS     8
#define RT_SERVER_MAX_WORKERS 4096
#define RT_SERVER_MAX_MSG     (4u << 20)
#define RT_SERVER_SEND_MS     10000 /* a reply the peer will not take in 10 s is dropped */
#define RT_SERVER_DRAIN_MS    5000  /* close waits this long for requests in flight */
#define RT_SERVER_GAUGES      64

/* One worker thread and its context. */
typedef struct rt_work {
	rt_server *srv;
	nng_aio   *aio;
	nng_ctx    ctx;
	pthread_t  thread;
	bool       running;   /* the thread was started */
	bool       receiving; /* waiting for a request (under srv->mtx) */
} rt_work;

/* The pipe of the request this worker thread's handler is running (rt_server_peer). */
static _Thread_local nng_pipe rt_server_pipe;

typedef struct rt_route {
	rt_handler_fn fn;
	void         *arg;
} rt_route;

typedef struct rt_gauge {
	char       *name;
	rt_gauge_fn fn;
	void       *arg;
} rt_gauge;

struct rt_server {
	char        *name;
	char        *url;
	int          nworkers;
	size_t       max_msg;
	nng_socket   sock;
	bool         sock_open;
	nng_listener listener;
	rt_stats    *stats;
	rt_route     routes[WB_OP_COUNT];
	rt_gauge     gauges[RT_SERVER_GAUGES];
	int          ngauges;
	rt_work     *works;
	uint64_t     start_us;

	pthread_mutex_t mtx;
	pthread_cond_t  cv;     /* signalled when a worker thread ends */
	int             active; /* worker threads still serving */
	bool            closing;
	bool            started;
};

static int
rt_server_ping(void *arg, const wb_obj *req, wb_obj *rep)
{
	(void)arg;
	(void)req;
	(void)rep;
	return WB_OK;
}

static int
rt_server_stats(void *arg, const wb_obj *req, wb_obj *rep)
{
	rt_server *s = arg;
	wb_obj    *g;
	int        rv;

	(void)req;
	if ((rv = wb_set_cstr(rep, WB_F_SERVICE, s->name)) != 0 ||
	    (rv = wb_set_u64(rep, WB_F_UPTIME, (wb_mono_us() - s->start_us) / 1000)) != 0 ||
	    (rv = rt_stats_fill(s->stats, rep)) != 0) {
		return rv;
	}
	if (s->ngauges == 0) {
		return WB_OK;
	}
	if ((g = wb_add_objs(rep, WB_F_GAUGES, (size_t)s->ngauges)) == NULL) {
		return WB_ENOMEM;
	}
	for (int i = 0; i < s->ngauges; i++) {
		if ((rv = wb_set_cstr(&g[i], WB_F_NAME, s->gauges[i].name)) != 0 ||
		    (rv = wb_set_u64(&g[i], WB_F_VALUE, s->gauges[i].fn(s->gauges[i].arg))) != 0) {
			return rv;
		}
	}
	return WB_OK;
}

/* rt_server_open creates a server (not yet listening). */
int
rt_server_open(rt_server **out, const rt_server_opts *opts)
{
	rt_server *s;

	if (opts == NULL || opts->url == NULL || opts->workers < 0 ||
	    opts->workers > RT_SERVER_MAX_WORKERS) {
		return WB_EINVAL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		return WB_ENOMEM;
	}
	s->name = strdup(opts->name != NULL ? opts->name : "warble");
	s->url = strdup(opts->url);
	s->nworkers = opts->workers > 0 ? opts->workers : RT_SERVER_WORKERS;
	s->max_msg = opts->max_msg > 0 ? opts->max_msg : RT_SERVER_MAX_MSG;
	s->stats = rt_stats_new();
	s->start_us = wb_mono_us();
	pthread_mutex_init(&s->mtx, NULL);
	pthread_cond_init(&s->cv, NULL);
	if (s->name == NULL || s->url == NULL || s->stats == NULL) {
		rt_server_close(s);
		return WB_ENOMEM;
	}
	s->routes[WB_OP_PING] = (rt_route) { rt_server_ping, s };
	s->routes[WB_OP_STATS] = (rt_route) { rt_server_stats, s };
	*out = s;
	return WB_OK;
}

/* rt_server_handle routes op to fn; call before rt_server_start. */
int
rt_server_handle(rt_server *s, wb_op op, rt_handler_fn fn, void *arg)
{
	if (op <= WB_OP_NONE || op >= WB_OP_COUNT || fn == NULL || s->started) {
		return WB_EINVAL;
	}
	s->routes[op] = (rt_route) { fn, arg };
	return WB_OK;
}

/* rt_server_gauge adds a named figure to the stats reply; call before rt_server_start. */
int
rt_server_gauge(rt_server *s, const char *name, rt_gauge_fn fn, void *arg)
{
	char *n;

	if (name == NULL || fn == NULL || s->started || s->ngauges == RT_SERVER_GAUGES) {
		return WB_EINVAL;
	}
	if ((n = strdup(name)) == NULL) {
		return WB_ENOMEM;
	}
	s->gauges[s->ngauges++] = (rt_gauge) { n, fn, arg };
	return WB_OK;
}

static int
rt_server_msg_write(void *arg, const char *buf, size_t len)
{
	size_t need = nng_msg_len(arg) + len;

	/* nng grows a message to exactly the size asked (zeroed and copied):
	 * double it, or a reply packed 9 bytes at a time costs O(n^2). */
	if (need > nng_msg_capacity(arg) && nng_msg_reserve(arg, 2 * need) != 0) {
		return WB_ENOMEM;
	}
	return nng_msg_append(arg, buf, len) == 0 ? 0 : WB_ENOMEM;
}

/*
 * rt_server_reply_build runs on a worker: it turns the request bytes into
 * a reply object, never failing for bad input (that becomes an error
 * reply).  Returns the op for stats and sets *failed for error replies.
 */
static wb_obj *
rt_server_reply_build(rt_server *s, const void *buf, size_t len, wb_op *opp)
{
	char      err[256];
	wb_obj   *req = NULL, *rep;
	wb_limits lim = wb_limits_default;
	wb_op     op = WB_OP_NONE;
	int       rv;

	err[0] = '\0';
	if ((rep = wb_msg_new()) == NULL) {
		return NULL;
	}
	lim.max_bytes = s->max_msg;
	if ((rv = wb_decode(&req, buf, len, &lim, err, sizeof(err))) != 0) {
		wb_reply_error(rep, rv, "%s", err[0] != '\0' ? err : wb_strerror(rv));
		goto out;
	}
	op = wb_op_of(req);
	if ((rv = wb_check_request(req, &op, err, sizeof(err))) != 0) {
		wb_reply_error(rep, rv, "%s", err[0] != '\0' ? err : wb_strerror(rv));
		goto out;
	}
	if (op <= WB_OP_NONE || op >= WB_OP_COUNT || s->routes[op].fn == NULL) {
		wb_reply_error(
		    rep, WB_EBADOP, "operation %s is not served by %s", wb_op_name(op), s->name);
		goto out;
	}
	rv = s->routes[op].fn(s->routes[op].arg, req, rep);
	if (rv != 0) {
		if (!wb_has(rep, WB_F_ERR)) {
			wb_reply_error(rep, rv, NULL);
		}
		if (rv == WB_EINTERNAL || rv == WB_EIO || rv == WB_ECORRUPT || rv == WB_ENOMEM) {
			RT_WARNF("%s failed: %s: %s", wb_op_name(op), wb_err_name(rv),
			    wb_str(rep, WB_F_MSG, wb_strerror(rv)));
		}
	} else if (!wb_has(rep, WB_F_OK)) {
		if (wb_set_bool(rep, WB_F_OK, true) != 0) {
			wb_reply_error(rep, WB_ENOMEM, NULL);
		}
	}
out:
	wb_msg_free(req);
	*opp = op;
	return rep;
}

/* rt_server_serve turns a request message into its reply (in place); false if there is nothing to send. */
static bool
rt_server_serve(rt_server *s, nng_msg *msg, uint64_t start_us)
{
	wb_obj     *rep;
	wb_op       op = WB_OP_NONE;
	const char *emsg;
	bool        failed;
	int         rv;

	rt_server_pipe = nng_msg_get_pipe(msg);
	rep = rt_server_reply_build(s, nng_msg_body(msg), nng_msg_len(msg), &op);
	rt_server_pipe = (nng_pipe)NNG_PIPE_INITIALIZER;
	nng_msg_clear(msg);
	rv = rep != NULL ? wb_encode(rep, rt_server_msg_write, msg) : WB_ENOMEM;
	if (rv != 0) {
		/* Say so if at all possible: an error reply is tiny. */
		RT_ERRORF("%s: cannot encode reply: %s", wb_op_name(op), wb_strerror(rv));
		nng_msg_clear(msg);
		if (rep != NULL && wb_reply_error(rep, WB_EINTERNAL, "cannot encode reply") == 0) {
			rv = wb_encode(rep, rt_server_msg_write, msg);
		}
	}
	failed = rep == NULL || wb_reply_code(rep, &emsg) != WB_OK;
	wb_msg_free(rep);
	rt_stats_record(s->stats, op, wb_mono_us() - start_us, failed);
	return rv == 0; /* else nothing to send: the client times out */
}

/* rt_server_recv waits for w's next request; NULL when the server closes. */
static nng_msg *
rt_server_recv(rt_work *w)
{
	rt_server *s = w->srv;
	int        rv;

	for (;;) {
		pthread_mutex_lock(&s->mtx);
		if (s->closing) {
			pthread_mutex_unlock(&s->mtx);
			return NULL;
		}
		w->receiving = true;
		nng_aio_set_timeout(w->aio, NNG_DURATION_INFINITE);
		nng_ctx_recv(w->ctx, w->aio);
		pthread_mutex_unlock(&s->mtx);
		nng_aio_wait(w->aio);
		pthread_mutex_lock(&s->mtx);
		w->receiving = false;
		pthread_mutex_unlock(&s->mtx);
		if ((rv = nng_aio_result(w->aio)) == 0) {
			return nng_aio_get_msg(w->aio);
		}
		if (rv == NNG_ECLOSED || rv == NNG_ECANCELED) {
			return NULL;
		}
		RT_WARNF("receive failed: %s", nng_strerror(rv));
		nng_msleep(10); /* a lasting failure must not spin */
	}
}

/* rt_server_worker is a worker thread: receive, serve, send, until the server closes. */
static void *
rt_server_worker(void *arg)
{
	rt_work   *w = arg;
	rt_server *s = w->srv;
	nng_msg   *msg;
	int        rv;

	while ((msg = rt_server_recv(w)) != NULL) {
		if (!rt_server_serve(s, msg, wb_mono_us())) {
			nng_msg_free(msg);
			continue;
		}
		nng_aio_set_msg(w->aio, msg);
		nng_aio_set_timeout(w->aio, RT_SERVER_SEND_MS);
		nng_ctx_send(w->ctx, w->aio);
		nng_aio_wait(w->aio);
		if ((rv = nng_aio_result(w->aio)) != 0) {
			/* The reply is still ours: a peer gone, a timeout, a closed socket. */
			nng_msg_free(nng_aio_get_msg(w->aio));
			if (rv == NNG_ECLOSED) {
				break;
			}
			RT_DEBUGF("reply not sent: %s", nng_strerror(rv));
		}
	}
	pthread_mutex_lock(&s->mtx);
	s->active--;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mtx);
	return NULL;
}

/* rt_server_start listens and begins serving. */
int
rt_server_start(rt_server *s)
{
	int rv;

	if (s->started) {
		return WB_EINVAL;
	}
	s->started = true;
	if ((s->works = calloc((size_t)s->nworkers, sizeof(rt_work))) == NULL) {
		return WB_ENOMEM;
	}
	if ((rv = nng_rep0_open(&s->sock)) != 0) {
		RT_ERRORF("cannot open REP socket: %s", nng_strerror(rv));
		return WB_ENOMEM;
	}
	s->sock_open = true;
	nng_socket_set_size(s->sock, NNG_OPT_RECVMAXSZ, s->max_msg);
	for (int i = 0; i < s->nworkers; i++) {
		rt_work *w = &s->works[i];

		w->srv = s;
		if ((rv = nng_aio_alloc(&w->aio, NULL, NULL)) != 0 ||
		    (rv = nng_ctx_open(&w->ctx, s->sock)) != 0) {
			RT_ERRORF("cannot set up context %d: %s", i, nng_strerror(rv));
			return WB_ENOMEM;
		}
	}
	if ((rv = nng_listen(s->sock, s->url, &s->listener, 0)) != 0) {
		RT_ERRORF("cannot listen on %s: %s", s->url, nng_strerror(rv));
		return rv == NNG_EADDRINUSE || rv == NNG_EADDRINVAL || rv == NNG_EINVAL ||
		               rv == NNG_ENOTSUP
		           ? WB_EINVAL
		           : WB_EUNAVAIL;
	}
	for (int i = 0; i < s->nworkers; i++) {
		rt_work *w = &s->works[i];

		pthread_mutex_lock(&s->mtx);
		s->active++;
		pthread_mutex_unlock(&s->mtx);
		if (pthread_create(&w->thread, NULL, rt_server_worker, w) != 0) {
			pthread_mutex_lock(&s->mtx);
			s->active--;
			pthread_mutex_unlock(&s->mtx);
			RT_ERRORF("cannot start worker %d", i);
			return WB_ENOMEM;
		}
		w->running = true;
	}
	RT_INFOF("%s listening on %s (%d workers)", s->name, s->url, s->nworkers);
	return WB_OK;
}

/* rt_server_close stops accepting, finishes requests in flight, and frees the server. */
void
rt_server_close(rt_server *s)
{
	struct timespec dl;

	if (s == NULL) {
		return;
	}
	/* 1. Stop receiving: cancel every worker waiting for a request. */
	pthread_mutex_lock(&s->mtx);
	s->closing = true;
	for (int i = 0; s->works != NULL && i < s->nworkers; i++) {
		if (s->works[i].receiving) {
			nng_aio_cancel(s->works[i].aio);
		}
	}
	/* 2. Let requests in flight finish and their replies go out, bounded. */
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += RT_SERVER_DRAIN_MS / 1000;
	while (s->active > 0) {
		if (pthread_cond_timedwait(&s->cv, &s->mtx, &dl) != 0) {
			RT_WARNF("closing with %d requests still in flight", s->active);
			break;
		}
	}
	pthread_mutex_unlock(&s->mtx);
	/* 3. Close the socket (fails whatever is left), join the workers, free their aios. */
	if (s->sock_open) {
		nng_close(s->sock);
	}
	for (int i = 0; s->works != NULL && i < s->nworkers; i++) {
		rt_work *w = &s->works[i];

		if (w->running) {
			pthread_join(w->thread, NULL);
		}
		nng_aio_free(w->aio);
	}
	if (s->started) {
		RT_INFOF("%s stopped", s->name);
	}
	for (int i = 0; i < s->ngauges; i++) {
		free(s->gauges[i].name);
	}
	free(s->works);
	rt_stats_free(s->stats);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mtx);
	free(s->name);
	free(s->url);
	free(s);
}

void
rt_sockaddr_from_nng(const nng_sockaddr *sa, struct sockaddr_storage *ss)
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

void
rt_server_peer(struct sockaddr_storage *ss)
{
	nng_sockaddr sa;

	memset(ss, 0, sizeof(*ss));
	if (nng_pipe_id(rt_server_pipe) > 0 &&
	    nng_pipe_get_addr(rt_server_pipe, NNG_OPT_REMADDR, &sa) == 0) {
		rt_sockaddr_from_nng(&sa, ss);
	}
}
