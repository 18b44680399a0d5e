/*
 * rt_server.c - the REP server every Warble daemon runs.
 *
 * The socket carries `contexts` work items, each with its own nng context
 * and aio, cycling through a small state machine (after nng's demo/async):
 *
 *            recv done                 reply encoded
 *   RECV ---------------> WORK -----------------------> SEND
 *    ^   (aio callback:    (worker thread: decode,       |
 *    |    hand to pool)     check, handler, stats,       |
 *    |                      encode into the nng_msg)     |
 *    +---------------------------------------------------+
 *                      send done (aio callback)
 *
 *   any state --(closing, or socket closed/aio canceled)--> DONE
 *
 * Aio callbacks run on nng's small shared thread pool, so they only move
 * a work item along and never block; decoding, handlers and encoding run
 * on the server's own rt_pool.  State changes happen under the server's
 * mutex so that rt_server_close can cancel exactly the items waiting in
 * RECV and count the ones still working or sending.
 */
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>

#include "rt_log.h"
#include "rt_pool.h"
#include "rt_server.h"
#include "rt_stats.h"

#define RT_SERVER_WORKERS  8
#define RT_SERVER_CONTEXTS 64
#define RT_SERVER_MAX_MSG  (4u << 20)
#define RT_SERVER_SEND_MS  10000 /* a reply the peer will not take in 10 s is dropped */
#define RT_SERVER_DRAIN_MS 5000  /* close waits this long for requests in flight */
#define RT_SERVER_MAX_CTX  4096
#define RT_SERVER_GAUGES   64

typedef enum rt_work_state {
	RT_WORK_IDLE, /* not started yet */
	RT_WORK_RECV, /* waiting for a request */
	RT_WORK_WORK, /* queued on or running in the pool */
	RT_WORK_SEND, /* reply being sent */
	RT_WORK_DONE, /* stopped (server closing) */
} rt_work_state;

typedef struct rt_work {
	rt_server    *srv;
	rt_work_state state;
	nng_aio      *aio;
	nng_ctx       ctx;
	nng_msg      *msg;      /* the request, then the reply, while WORK */
	uint64_t      start_us; /* when the request arrived */
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
	char      *name;
	char      *url;
	int        nworkers;
	int        nworks;
	size_t     max_msg;
	nng_socket   sock;
	bool         sock_open;
	nng_listener listener;
	rt_pool   *pool;
	rt_stats  *stats;
	rt_route   routes[WB_OP_COUNT];
	rt_gauge   gauges[RT_SERVER_GAUGES];
	int        ngauges;
	rt_work   *works;
	uint64_t   start_us;

	pthread_mutex_t mtx;
	pthread_cond_t  cv;     /* signalled when an item becomes DONE or idle */
	int             active; /* items not DONE */
	int             busy;   /* items in WORK or SEND */
	bool            closing;
	bool            started;
};

static uint64_t
rt_server_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

static int
rt_server_ping(void *arg, const wb_obj *req, wb_obj *rep)
{
	(void) arg;
	(void) req;
	(void) rep;
	return WB_OK;
}

static int
rt_server_stats(void *arg, const wb_obj *req, wb_obj *rep)
{
	rt_server *s = arg;
	wb_obj    *g;
	int        rv;

	(void) req;
	if ((rv = wb_set_cstr(rep, WB_F_SERVICE, s->name)) != 0 ||
	    (rv = wb_set_u64(rep, WB_F_UPTIME, (rt_server_now_us() - s->start_us) / 1000)) != 0 ||
	    (rv = rt_stats_fill(s->stats, rep)) != 0) {
		return rv;
	}
	if (s->ngauges == 0) {
		return WB_OK;
	}
	if ((g = wb_add_objs(rep, WB_F_GAUGES, (size_t) s->ngauges)) == NULL) {
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

	if (opts == NULL || opts->url == NULL || opts->workers < 0 || opts->contexts < 0 ||
	    opts->contexts > RT_SERVER_MAX_CTX) {
		return WB_EINVAL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		return WB_ENOMEM;
	}
	s->name     = strdup(opts->name != NULL ? opts->name : "warble");
	s->url      = strdup(opts->url);
	s->nworkers = opts->workers > 0 ? opts->workers : RT_SERVER_WORKERS;
	s->nworks   = opts->contexts > 0 ? opts->contexts : RT_SERVER_CONTEXTS;
	s->max_msg  = opts->max_msg > 0 ? opts->max_msg : RT_SERVER_MAX_MSG;
	s->stats    = rt_stats_new();
	s->start_us = rt_server_now_us();
	pthread_mutex_init(&s->mtx, NULL);
	pthread_cond_init(&s->cv, NULL);
	if (s->name == NULL || s->url == NULL || s->stats == NULL) {
		rt_server_close(s);
		return WB_ENOMEM;
	}
	s->routes[WB_OP_PING]  = (rt_route) { rt_server_ping, s };
	s->routes[WB_OP_STATS] = (rt_route) { rt_server_stats, s };
	*out                   = s;
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
	wb_op     op  = WB_OP_NONE;
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
		wb_reply_error(rep, WB_EBADOP, "operation %s is not served by %s", wb_op_name(op),
		    s->name);
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

static void
rt_server_work_recv(rt_work *w)
{
	/* caller holds srv->mtx */
	w->state = RT_WORK_RECV;
	nng_aio_set_timeout(w->aio, NNG_DURATION_INFINITE);
	nng_ctx_recv(w->ctx, w->aio);
}

static void
rt_server_work_done(rt_work *w)
{
	/* caller holds srv->mtx */
	w->state = RT_WORK_DONE;
	w->srv->active--;
	pthread_cond_broadcast(&w->srv->cv);
}

/* rt_server_work_finish ends a WORK or SEND cycle: back to RECV, or DONE when closing. */
static void
rt_server_work_finish(rt_work *w)
{
	rt_server *s = w->srv;

	pthread_mutex_lock(&s->mtx);
	s->busy--;
	if (s->closing) {
		rt_server_work_done(w);
	} else {
		rt_server_work_recv(w);
	}
	pthread_mutex_unlock(&s->mtx);
}

/* rt_server_work_run runs on a worker thread: request bytes in, reply sent out. */
static void
rt_server_work_run(void *arg)
{
	rt_work   *w   = arg;
	rt_server *s   = w->srv;
	nng_msg   *msg = w->msg;
	wb_obj    *rep;
	wb_op       op = WB_OP_NONE;
	const char *emsg;
	bool        failed;
	int         rv;

	w->msg         = NULL;
	rt_server_pipe = nng_msg_get_pipe(msg);
	rep            = rt_server_reply_build(s, nng_msg_body(msg), nng_msg_len(msg), &op);
	rt_server_pipe = (nng_pipe) NNG_PIPE_INITIALIZER;
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
	rt_stats_record(s->stats, op, rt_server_now_us() - w->start_us, failed);
	if (rv != 0) {
		nng_msg_free(msg); /* nothing to send: the client times out */
		rt_server_work_finish(w);
		return;
	}
	pthread_mutex_lock(&s->mtx);
	w->state = RT_WORK_SEND;
	nng_aio_set_msg(w->aio, msg);
	nng_aio_set_timeout(w->aio, RT_SERVER_SEND_MS);
	nng_ctx_send(w->ctx, w->aio);
	pthread_mutex_unlock(&s->mtx);
}

/* rt_server_work_cb is the aio callback: it must not block. */
static void
rt_server_work_cb(void *arg)
{
	rt_work   *w  = arg;
	rt_server *s  = w->srv;
	int        rv = nng_aio_result(w->aio);

	pthread_mutex_lock(&s->mtx);
	switch (w->state) {
	case RT_WORK_RECV:
		if (rv != 0) {
			if (rv == NNG_ECLOSED || rv == NNG_ECANCELED || s->closing) {
				rt_server_work_done(w);
			} else {
				RT_WARNF("receive failed: %s", nng_strerror(rv));
				rt_server_work_recv(w);
			}
			break;
		}
		w->msg = nng_aio_get_msg(w->aio);
		nng_aio_set_msg(w->aio, NULL);
		w->start_us = rt_server_now_us();
		w->state    = RT_WORK_WORK;
		s->busy++;
		if ((rv = rt_pool_submit(s->pool, rt_server_work_run, w)) != 0) {
			RT_WARNF("dropping a request: %s", wb_strerror(rv));
			nng_msg_free(w->msg);
			w->msg = NULL;
			s->busy--;
			if (s->closing) {
				rt_server_work_done(w);
			} else {
				rt_server_work_recv(w);
			}
		}
		break;
	case RT_WORK_SEND:
		if (rv != 0) {
			/* The reply is still ours: a peer gone, a timeout, a closed socket. */
			nng_msg_free(nng_aio_get_msg(w->aio));
			nng_aio_set_msg(w->aio, NULL);
			if (rv != NNG_ECLOSED) {
				RT_DEBUGF("reply not sent: %s", nng_strerror(rv));
			}
		}
		s->busy--;
		if (s->closing || rv == NNG_ECLOSED) {
			rt_server_work_done(w);
		} else {
			rt_server_work_recv(w);
		}
		break;
	default:
		break; /* IDLE/WORK/DONE get no aio completions */
	}
	pthread_mutex_unlock(&s->mtx);
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
	if ((rv = rt_pool_open(&s->pool, s->nworkers)) != 0) {
		return rv;
	}
	if ((s->works = calloc((size_t) s->nworks, sizeof(rt_work))) == NULL) {
		return WB_ENOMEM;
	}
	if ((rv = nng_rep0_open(&s->sock)) != 0) {
		RT_ERRORF("cannot open REP socket: %s", nng_strerror(rv));
		return WB_ENOMEM;
	}
	s->sock_open = true;
	nng_socket_set_size(s->sock, NNG_OPT_RECVMAXSZ, s->max_msg);
	for (int i = 0; i < s->nworks; i++) {
		rt_work *w = &s->works[i];

		w->srv = s;
		if ((rv = nng_aio_alloc(&w->aio, rt_server_work_cb, w)) != 0 ||
		    (rv = nng_ctx_open(&w->ctx, s->sock)) != 0) {
			RT_ERRORF("cannot set up context %d: %s", i, nng_strerror(rv));
			return WB_ENOMEM;
		}
	}
	if ((rv = nng_listen(s->sock, s->url, &s->listener, 0)) != 0) {
		RT_ERRORF("cannot listen on %s: %s", s->url, nng_strerror(rv));
		return rv == NNG_EADDRINUSE || rv == NNG_EADDRINVAL || rv == NNG_EINVAL ||
		        rv == NNG_ENOTSUP ?
		    WB_EINVAL :
		    WB_EUNAVAIL;
	}
	pthread_mutex_lock(&s->mtx);
	for (int i = 0; i < s->nworks; i++) {
		s->active++;
		rt_server_work_recv(&s->works[i]);
	}
	pthread_mutex_unlock(&s->mtx);
	RT_INFOF("%s listening on %s (%d workers, %d contexts)", s->name, s->url, s->nworkers,
	    s->nworks);
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
	/* 1. Stop receiving: cancel every item waiting for a request. */
	pthread_mutex_lock(&s->mtx);
	s->closing = true;
	for (int i = 0; s->works != NULL && i < s->nworks; i++) {
		if (s->works[i].state == RT_WORK_RECV && s->works[i].aio != NULL) {
			nng_aio_cancel(s->works[i].aio);
		}
	}
	/* 2. Let requests in flight finish and their replies go out, bounded. */
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += RT_SERVER_DRAIN_MS / 1000;
	while (s->active > 0) {
		if (pthread_cond_timedwait(&s->cv, &s->mtx, &dl) != 0) {
			RT_WARNF("closing with %d requests still in flight", s->busy);
			break;
		}
	}
	pthread_mutex_unlock(&s->mtx);
	/* 3. Close the socket (fails whatever is left), drain the pool, stop the aios. */
	if (s->sock_open) {
		nng_close(s->sock);
	}
	rt_pool_close(s->pool);
	for (int i = 0; s->works != NULL && i < s->nworks; i++) {
		rt_work *w = &s->works[i];

		if (w->aio != NULL) {
			nng_aio_stop(w->aio);
			nng_aio_free(w->aio);
		}
		if (w->msg != NULL) {
			nng_msg_free(w->msg);
		}
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

static volatile sig_atomic_t rt_signal_flag;

void
rt_sockaddr_from_nng(const nng_sockaddr *sa, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (sa->s_family == NNG_AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *) ss;
		in->sin_family      = AF_INET;
		in->sin_port        = sa->s_in.sa_port;
		in->sin_addr.s_addr = sa->s_in.sa_addr;
	} else if (sa->s_family == NNG_AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *) ss;
		in6->sin6_family = AF_INET6;
		in6->sin6_port   = sa->s_in6.sa_port;
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

static void
rt_signal_handler(int sig)
{
	(void) sig;
	rt_signal_flag = 1;
}

/* rt_signal_init installs the SIGTERM/SIGINT handler and ignores SIGPIPE. */
void
rt_signal_init(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = rt_signal_handler;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

/* rt_wait_for_signal blocks until SIGTERM or SIGINT (the handler only sets a flag). */
void
rt_wait_for_signal(void)
{
	/* The signal may land on any of nng's threads, so poll the flag
	 * rather than sigsuspend in this one. */
	struct timespec ts = { 0, 20 * 1000 * 1000 };

	while (!rt_signal_flag) {
		nanosleep(&ts, NULL);
	}
}

/* rt_stopping tells whether SIGTERM or SIGINT has arrived. */
bool
rt_stopping(void)
{
	return rt_signal_flag != 0;
}

/* rt_fini waits for nng to finish freeing closed sockets and releases its global state. */
void
rt_fini(void)
{
	nng_fini();
}
