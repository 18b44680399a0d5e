/*
 * rt_server.c - the REP server every Warble daemon runs.
 *
 * It speaks the SP request/reply protocol (rt_wire.h) over tcp:// and
 * ipc:// itself, so any nng REQ socket and rt_sp client can call it.
 * `workers` threads wait on one epoll set holding the listening socket
 * and every connection, each armed for one event at a time (oneshot).
 * The thread that is woken for a connection does all of a request's work:
 *
 *   epoll_wait -> recv -> decode, check, handler, stats, encode -> send -> re-arm
 *
 * so a request costs one wake-up and four system calls, and no thread
 * hands anything to another.  Handlers may block: a worker busy in one
 * leaves the other connections to the other workers, so `workers` is the
 * number of requests in service at once (as it was with nng's contexts,
 * whose hand-offs cost the daemons most of their CPU per request: see
 * docs/benchmarks.md).  A connection's requests are served in order; its
 * clients (rt_sp, rt_client) keep one call per connection.
 *
 * Closing stops accepting, wakes every idle worker (an eventfd that stays
 * readable), lets busy ones finish and send their replies for up to
 * RT_SERVER_DRAIN_MS, then closes every connection and joins the threads.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "rt_listen.h"
#include "rt_log.h"
#include "rt_server.h"
#include "rt_stats.h"
#include "rt_wire.h"
#include "wb_clock.h"

#define RT_SERVER_WORKERS     8
#define RT_SERVER_MAX_WORKERS 4096
#define RT_SERVER_MAX_MSG     (4u << 20)
#define RT_SERVER_SEND_MS     10000 /* a reply the peer will not take in 10 s is dropped */
#define RT_SERVER_DRAIN_MS    5000  /* close waits this long for requests in flight */
#define RT_SERVER_GAUGES      64
#define RT_SERVER_READ        4096        /* bytes a read asks for at least */
#define RT_SERVER_KEEP_BUF    (64u << 10) /* an idle connection keeps a buffer this large at most */
#define RT_SERVER_HEAD_ROOM   (9 + 4 * RT_WIRE_MAX_HOPS) /* [01] length and a reply's header */

/*
 * One client connection: what has arrived and not been served yet.  Only
 * the worker that epoll woke for it touches it until it is armed again.
 * That worker holds `mu` until the arming call has returned, and the next
 * one takes it first: ThreadSanitizer does not see epoll_ctl(MOD) order
 * threads, and this shows it the hand-off (an uncontended lock a request;
 * the next worker waits only if woken before the arming call returned).
 */
typedef struct rt_conn {
	pthread_mutex_t         mu;
	int                     fd;
	bool                    ready; /* the client's handshake has arrived */
	uint8_t                *buf;
	size_t                  len, cap;
	struct sockaddr_storage peer;        /* family 0 for ipc */
	struct rt_conn         *next, *prev; /* every connection, for close */
} rt_conn;

/* A worker thread and its reply buffer. */
typedef struct rt_work {
	struct rt_server *srv;
	pthread_t         thread;
	bool              running; /* the thread was started */
	uint8_t          *out;
	size_t            len, cap;
} rt_work;

/* The connection whose request this worker thread's handler is running (rt_server_peer). */
static _Thread_local const rt_conn *rt_server_conn;

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
	char     *name;
	char     *url;
	bool      ipc;
	int       nworkers;
	size_t    max_msg;
	rt_stats *stats;
	rt_route  routes[WB_OP_COUNT];
	rt_gauge  gauges[RT_SERVER_GAUGES];
	int       ngauges;
	rt_work  *works;
	uint64_t  start_us;
	int       lfd;  /* the listening socket (-1: none) */
	int       epfd; /* the epoll set (-1: none) */
	int       wake; /* an eventfd, readable once closing (-1: none) */

	pthread_mutex_t mtx;
	pthread_cond_t  cv;     /* signalled when a worker thread ends */
	int             active; /* worker threads still running */
	rt_conn        *conns;  /* every open connection (under mtx) */
	atomic_bool     closing;
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
	s->lfd = s->epfd = s->wake = -1;
	atomic_init(&s->closing, false);
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

/*
 * rt_server_reply_build runs on a worker: it turns the request bytes into
 * a reply object, never failing for bad input (that becomes an error
 * reply).  Sets *opp to the request's op, for stats.
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

/* rt_grow makes room for need bytes in a buffer of *cap bytes at *buf. */
static bool
rt_grow(uint8_t **buf, size_t *cap, size_t need)
{
	size_t   c = *cap > 0 ? *cap : RT_SERVER_READ;
	uint8_t *p;

	if (need <= *cap) {
		return true;
	}
	while (c < need) {
		c *= 2;
	}
	if ((p = realloc(*buf, c)) == NULL) {
		return false;
	}
	*buf = p;
	*cap = c;
	return true;
}

static int
rt_server_out_write(void *arg, const char *buf, size_t len)
{
	rt_work *w = arg;

	if (!rt_grow(&w->out, &w->cap, w->len + len)) {
		return WB_ENOMEM;
	}
	memcpy(w->out + w->len, buf, len);
	w->len += len;
	return 0;
}

/* rt_server_send writes len bytes to fd, waiting up to RT_SERVER_SEND_MS while the peer takes them; false if it cannot. */
static bool
rt_server_send(int fd, const uint8_t *p, size_t len)
{
	uint64_t end = wb_mono_us() + (uint64_t)RT_SERVER_SEND_MS * 1000;

	while (len > 0) {
		ssize_t       n = send(fd, p, len, MSG_NOSIGNAL);
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		uint64_t      now;

		if (n > 0) {
			p += n;
			len -= (size_t)n;
		} else if (n < 0 && errno == EINTR) {
			continue;
		} else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) &&
		           (now = wb_mono_us()) < end &&
		           poll(&pfd, 1, (int)((end - now) / 1000) + 1) >= 0) {
			continue; /* a poll cut short by a signal comes round again */
		} else {
			return false; /* the peer is gone, or will not take the reply */
		}
	}
	return true;
}

/* rt_server_encode packs rep after w's header room; falls back to a short error reply. */
static int
rt_server_encode(rt_work *w, wb_obj *rep, size_t off, wb_op op)
{
	int rv;

	w->len = off;
	rv = rep != NULL ? wb_encode(rep, rt_server_out_write, w) : WB_ENOMEM;
	if (rv != 0) {
		/* Say so if at all possible: an error reply is tiny. */
		RT_ERRORF("%s: cannot encode reply: %s", wb_op_name(op), wb_strerror(rv));
		w->len = off;
		if (rep != NULL && wb_reply_error(rep, WB_EINTERNAL, "cannot encode reply") == 0) {
			rv = wb_encode(rep, rt_server_out_write, w);
		}
	}
	return rv;
}

/*
 * rt_server_request serves one request payload p of c (its header words,
 * then the body) and sends the reply; false if the connection must close.
 * A payload without a request id is dropped, as nng's REP socket does.
 */
static bool
rt_server_request(rt_server *s, rt_work *w, rt_conn *c, const uint8_t *p, size_t n)
{
	uint64_t    start_us = wb_mono_us();
	size_t      hdr = 0, off, lead = s->ipc ? 9 : 8;
	wb_obj     *rep;
	wb_op       op = WB_OP_NONE;
	const char *emsg;
	bool        failed, sent = true;
	int         rv;

	do {
		if (hdr + 4 > n || hdr == 4 * RT_WIRE_MAX_HOPS) {
			return true;
		}
		hdr += 4;
	} while ((rt_wire_get(p + hdr - 4, 4) & 0x80000000u) == 0);
	off = lead + hdr;
	if (!rt_grow(&w->out, &w->cap, off + 256)) {
		return false;
	}
	rt_server_conn = c;
	rep = rt_server_reply_build(s, p + hdr, n - hdr, &op);
	rt_server_conn = NULL;
	rv = rt_server_encode(w, rep, off, op);
	failed = rep == NULL || wb_reply_code(rep, &emsg) != WB_OK;
	wb_msg_free(rep);
	if (rv == 0) {
		/* [01] length | the request's header words | body */
		w->out[0] = 1;
		rt_wire_put(w->out + lead - 8, w->len - lead, 8);
		memcpy(w->out + lead, p, hdr);
		sent = rt_server_send(c->fd, w->out, w->len);
	} /* else nothing to send: the client times out */
	rt_stats_record(s->stats, op, wb_mono_us() - start_us, failed);
	if (w->cap > RT_SERVER_KEEP_BUF) {
		free(w->out); /* keep idle workers small */
		w->out = NULL;
		w->cap = 0;
	}
	return sent;
}

/* rt_conn_read reads what has arrived on c and serves every whole request in it; false once c must close. */
static bool
rt_conn_read(rt_server *s, rt_work *w, rt_conn *c)
{
	size_t   lead = s->ipc ? 9 : 8, at = 0;
	uint64_t mlen;
	ssize_t  n;

	if (c->cap - c->len < RT_SERVER_READ &&
	    !rt_grow(&c->buf, &c->cap, c->len + RT_SERVER_READ)) {
		return false;
	}
	if ((n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0)) <= 0) {
		return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
	}
	c->len += (size_t)n;
	if (!c->ready) {
		if (c->len < RT_WIRE_HELLO) {
			return true;
		}
		if (!rt_wire_hello_ok(c->buf, RT_WIRE_REQ)) {
			return false; /* not an SP REQ client */
		}
		c->ready = true;
		at = RT_WIRE_HELLO;
	}
	while (c->len - at >= lead) {
		if (s->ipc && c->buf[at] != 1) {
			return false;
		}
		mlen = rt_wire_get(c->buf + at + lead - 8, 8);
		if (mlen > s->max_msg + 4 * RT_WIRE_MAX_HOPS) {
			RT_DEBUGF("request of %llu bytes refused", (unsigned long long)mlen);
			return false; /* as nng does: the connection goes */
		}
		if (c->len - at - lead < mlen) {
			break; /* the rest is on its way */
		}
		if (!rt_server_request(s, w, c, c->buf + at + lead, (size_t)mlen)) {
			return false;
		}
		at += lead + (size_t)mlen;
	}
	memmove(c->buf, c->buf + at, c->len - at);
	c->len -= at;
	if (c->len >= lead) {
		/* room for the whole request, so that the next reads fill it */
		return rt_grow(&c->buf, &c->cap, lead + (size_t)rt_wire_get(c->buf + lead - 8, 8));
	}
	if (c->len == 0 && c->cap > RT_SERVER_KEEP_BUF) {
		free(c->buf);
		c->buf = NULL;
		c->cap = 0;
	}
	return true;
}

/* rt_conn_close takes c off the server's list and closes it. */
static void
rt_conn_close(rt_server *s, rt_conn *c)
{
	pthread_mutex_lock(&s->mtx);
	if (c->prev != NULL) {
		c->prev->next = c->next;
	} else {
		s->conns = c->next;
	}
	if (c->next != NULL) {
		c->next->prev = c->prev;
	}
	pthread_mutex_unlock(&s->mtx);
	close(c->fd); /* leaves the epoll set with it */
	pthread_mutex_destroy(&c->mu);
	free(c->buf);
	free(c);
}

/* rt_conn_arm asks epoll for c's next event (or the listener's, c NULL); false if it cannot. */
static bool
rt_conn_arm(rt_server *s, rt_conn *c, int op)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };

	ev.data.ptr = c != NULL ? (void *)c : (void *)&s->lfd;
	return epoll_ctl(s->epfd, op, c != NULL ? c->fd : s->lfd, &ev) == 0;
}

/* rt_server_accept takes every waiting connection, sends each the handshake and adds it to the epoll set. */
static void
rt_server_accept(rt_server *s)
{
	uint8_t hello[RT_WIRE_HELLO];
	int     one = 1;

	rt_wire_hello(hello, RT_WIRE_REP);
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t               sl = sizeof(ss);
		rt_conn                *c;
		int fd = accept4(s->lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED) {
				continue;
			}
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				RT_WARNF("cannot accept: %s", strerror(errno));
				nanosleep(&(struct timespec) { 0, 10 * 1000 * 1000 },
				    NULL); /* EMFILE must not spin */
			}
			break;
		}
		if ((c = calloc(1, sizeof(*c))) == NULL ||
		    send(fd, hello, sizeof(hello), MSG_NOSIGNAL) != (ssize_t)sizeof(hello)) {
			close(fd); /* a probe that went at once, or no memory */
			free(c);
			continue;
		}
		c->fd = fd;
		pthread_mutex_init(&c->mu, NULL);
		if (!s->ipc) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			c->peer = ss;
		}
		pthread_mutex_lock(&s->mtx);
		c->next = s->conns;
		if (s->conns != NULL) {
			s->conns->prev = c;
		}
		s->conns = c;
		pthread_mutex_unlock(&s->mtx);
		if (!rt_conn_arm(s, c, EPOLL_CTL_ADD)) {
			rt_conn_close(s, c);
		}
	}
	(void)rt_conn_arm(s, NULL, EPOLL_CTL_MOD); /* fails once close has taken the listener out */
}

/* rt_server_worker is a worker thread: wait for an event, serve it, until the server closes. */
static void *
rt_server_worker(void *arg)
{
	rt_work           *w = arg;
	rt_server         *s = w->srv;
	struct epoll_event ev;
	rt_conn           *c;
	bool               ok;
	int                n;

	for (;;) {
		if ((n = epoll_wait(s->epfd, &ev, 1, -1)) < 0 && errno != EINTR) {
			RT_ERRORF("epoll_wait: %s", strerror(errno));
			break;
		}
		if (n <= 0) {
			continue;
		}
		if (ev.data.ptr == (void *)&s->wake || atomic_load(&s->closing)) {
			break; /* a connection's event is not served once closing: close ends it */
		}
		if (ev.data.ptr == (void *)&s->lfd) {
			rt_server_accept(s);
			continue;
		}
		c = ev.data.ptr;
		pthread_mutex_lock(&c->mu);
		ok = rt_conn_read(s, w, c) && rt_conn_arm(s, c, EPOLL_CTL_MOD);
		pthread_mutex_unlock(&c->mu);
		if (!ok) {
			rt_conn_close(s, c); /* not armed: no other worker has it */
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
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &s->wake };
	int                rv;

	if (s->started) {
		return WB_EINVAL;
	}
	s->started = true;
	s->ipc = strncmp(s->url, "ipc://", 6) == 0;
	if (!rt_listen_supports(s->url)) {
		RT_ERRORF("cannot listen on %s: a server takes tcp:// or ipc:// URLs", s->url);
		return WB_EINVAL;
	}
	if ((s->works = calloc((size_t)s->nworkers, sizeof(rt_work))) == NULL ||
	    (s->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    (s->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->wake, &ev) != 0) {
		RT_ERRORF("cannot set up the server: %s", strerror(errno));
		return WB_ENOMEM;
	}
	if ((rv = rt_listen_open(s->url, &s->lfd)) != WB_OK) {
		RT_ERRORF("cannot listen on %s: %s", s->url, strerror(errno));
		return rv;
	}
	if (!rt_conn_arm(s, NULL, EPOLL_CTL_ADD)) {
		RT_ERRORF("cannot watch %s: %s", s->url, strerror(errno));
		return WB_ENOMEM;
	}
	for (int i = 0; i < s->nworkers; i++) {
		rt_work *w = &s->works[i];

		w->srv = s;
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
	/* 1. Stop accepting and wake every idle worker: the eventfd stays readable. */
	atomic_store(&s->closing, true);
	if (s->lfd >= 0) {
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->lfd, NULL);
	}
	if (s->wake >= 0) {
		eventfd_write(s->wake, 1);
	}
	/* 2. Let requests in flight finish and their replies go out, bounded. */
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += RT_SERVER_DRAIN_MS / 1000;
	pthread_mutex_lock(&s->mtx);
	while (s->active > 0) {
		if (pthread_cond_timedwait(&s->cv, &s->mtx, &dl) != 0) {
			RT_WARNF("closing with %d requests still in flight", s->active);
			for (rt_conn *c = s->conns; c != NULL; c = c->next) {
				shutdown(c->fd, SHUT_RDWR); /* a reply stuck in send fails */
			}
			break;
		}
	}
	pthread_mutex_unlock(&s->mtx);
	/* 3. Join the workers, then close every connection and the listener. */
	for (int i = 0; s->works != NULL && i < s->nworkers; i++) {
		if (s->works[i].running) {
			pthread_join(s->works[i].thread, NULL);
		}
		free(s->works[i].out);
	}
	while (s->conns != NULL) {
		rt_conn_close(s, s->conns);
	}
	rt_listen_close(s->url, s->lfd);
	if (s->epfd >= 0) {
		close(s->epfd);
	}
	if (s->wake >= 0) {
		close(s->wake);
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
rt_server_peer(struct sockaddr_storage *ss)
{
	if (rt_server_conn != NULL) {
		*ss = rt_server_conn->peer;
	} else {
		memset(ss, 0, sizeof(*ss));
	}
}
