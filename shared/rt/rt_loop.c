/*
 * rt_loop.c - worker threads on one epoll set: accept, read, hand the
 * bytes to the protocol, re-arm; deadlines for idle connections; an
 * ordered close.
 *
 * Every descriptor in the set is armed for one event at a time
 * (EPOLLONESHOT), so only the worker that was woken for a connection
 * touches it until it is armed again.  That worker holds the connection's
 * `mu` until the arming call has returned, and the next one takes it
 * first: ThreadSanitizer does not see epoll_ctl(MOD) order threads, and
 * this shows it the hand-off (an uncontended lock per request).
 *
 * Spare threads (opts.spares) stay parked until a worker steps aside for
 * a slow call (rt_loop_slow_begin: an argon2id login, an upload); one then
 * takes its place on the set, so that `workers` threads keep taking
 * requests however many wait on slow calls.  A thread back from its slow
 * call parks again once its request is done if `workers` others serve.
 * Few serving threads pay: a thread done with a request finds the next
 * one already queued instead of sleeping until a sleeping thread is woken
 * for it (docs/benchmarks.md, 2026-11-26 12:05).
 *
 * A worker done with a request looks for the next rt_loop_yields times
 * (rt_loop_yields_set), giving up its CPU between looks, before it
 * sleeps in epoll_wait: under load one usually arrives meanwhile, and
 * the sleep and wake-up it spares are the dearest part of a request on
 * a busy machine (docs/benchmarks.md, 2026-11-27 19:45).  Only a few
 * look at once (rt_loop_lookers, the daemons' CPUs): a request's thread
 * preempted behind a dozen yielding workers waits for each of them.
 *
 * The guard thread (when idle_ms or opts.guard is set) looks over the connections
 * every RT_LOOP_TICK_MS and shuts down (shutdown(2): the worker that then
 * wakes closes it) those past their deadline with nothing unread.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "rt_buf.h"
#include "rt_listen.h"
#include "rt_log.h"
#include "rt_loop.h"
#include "rt_tls.h"
#include "wb_clock.h"
#include "wb_errors.h"

#define RT_LOOP_WORKERS      8
#define RT_LOOP_MAX_WORKERS  4096
#define RT_LOOP_MAX_BUF      ((4u << 20) + 1024)
#define RT_LOOP_SEND_MS      10000       /* a reply the peer will not take in 10 s is dropped */
#define RT_LOOP_DRAIN_MS     5000        /* close waits this long for requests in flight */
#define RT_LOOP_READ         4096        /* bytes a read asks for at least */
#define RT_LOOP_KEEP_BUF     (64u << 10) /* an idle connection keeps a buffer this large at most */
#define RT_LOOP_TICK_MS      250         /* the guard's round */
#define RT_LOOP_FAST_MS      50          /* ... once over max_conns */
#define RT_LOOP_RESERVE      128         /* descriptors kept for everything else */
#define RT_LOOP_HANDSHAKE_MS 10000 /* a TLS handshake must be done within this of the accept */

struct rt_loop_conn {
	pthread_mutex_t         mu;
	int                     fd;
	bool                    ipc;
	uintptr_t               state;   /* the protocol's */
	rt_tls_conn            *tls;     /* with opts.tls: its TLS end */
	bool                    greeted; /* the protocol's accept has run (after the handshake) */
	uint8_t                *buf;
	size_t                  len, cap;
	struct sockaddr_storage peer;        /* family 0 for ipc */
	atomic_bool             busy;        /* a worker has it */
	_Atomic uint64_t        since_ms;    /* when it began waiting for its request */
	_Atomic uint64_t        deadline_ms; /* shut down after this (0: never) */
	bool                    waited;      /* rt_loop_conn_wait ran in this serve */
	struct rt_loop_conn    *next, *prev; /* every connection, for close */
};

/* A worker thread and the protocol's scratch for it. */
typedef struct rt_loop_work {
	rt_loop  *loop;
	pthread_t thread;
	bool      running;
	void     *scratch;
} rt_loop_work;

struct rt_loop {
	rt_loop_opts  opts;
	char         *name, *url;
	rt_loop_ops   ops;
	void         *arg;
	bool          ipc;
	rt_loop_work *works;
	int lfd, epfd, wake; /* listener, epoll set, eventfd readable once closing (-1: none) */

	pthread_mutex_t mtx;
	pthread_cond_t  cv;      /* signalled when a worker thread ends, and to stop the guard */
	pthread_cond_t  spare;   /* signalled when a serving thread steps aside, or at close */
	int             active;  /* worker threads still running */
	atomic_int      serving; /* threads taking requests: neither parked nor in a slow call */
	atomic_int      looking; /* workers looking before they sleep (rt_loop_next) */
	rt_loop_conn   *conns;   /* every open connection (under mtx) */
	size_t          nconns;
	atomic_bool     closing;
	pthread_t       guard;
	bool            guarded;
};

static _Thread_local rt_loop *rt_loop_self;       /* the loop whose worker runs on this thread */
static _Thread_local int      rt_loop_slow_depth; /* slow calls open on this thread (nested: one) */

bool
rt_loop_send(rt_loop_conn *c, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t       end = wb_mono_us() + (uint64_t)RT_LOOP_SEND_MS * 1000;

	while (len > 0) {
		ssize_t       n = c->tls != NULL ? rt_tls_conn_write(c->tls, p, len)
		                                 : send(c->fd, p, len, MSG_NOSIGNAL);
		struct pollfd pfd = { .fd = c->fd,
			.events = c->tls != NULL ? rt_tls_conn_wants(c->tls) : POLLOUT };
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

const struct sockaddr_storage *
rt_loop_conn_peer(const rt_loop_conn *c)
{
	return &c->peer;
}

bool
rt_loop_conn_ipc(const rt_loop_conn *c)
{
	return c->ipc;
}

uintptr_t *
rt_loop_conn_state(rt_loop_conn *c)
{
	return &c->state;
}

void
rt_loop_conn_wait(rt_loop_conn *c, int ms)
{
	c->waited = true;
	atomic_store(&c->deadline_ms, wb_mono_us() / 1000 + (uint64_t)ms);
}

void
rt_loop_conn_keep(rt_loop_conn *c)
{
	c->waited = true;
}

unsigned
rt_loop_conn_peer_id(const rt_loop_conn *c)
{
	return c->tls != NULL ? rt_tls_conn_peer(c->tls) : RT_PEER_ALL;
}

void
rt_loop_conn_finish(rt_loop_conn *c)
{
	rt_tls_conn_close(c->tls);
	shutdown(c->fd, SHUT_WR);
}

/* rt_loop_waiting starts c's wait for its next request (its deadline too, unless serve set one); nothing to do without a guard. */
static void
rt_loop_waiting(rt_loop *l, rt_loop_conn *c)
{
	uint64_t now;

	if (!l->opts.guard) {
		return;
	}
	now = wb_mono_us() / 1000;
	atomic_store(&c->since_ms, now);
	if (!c->waited) {
		atomic_store(
		    &c->deadline_ms, l->opts.idle_ms > 0 ? now + (uint64_t)l->opts.idle_ms : 0);
	}
}

/*
 * rt_loop_handshake takes c's TLS handshake on as far as the socket
 * allows, then lets the protocol greet c: 1 once done, 0 while it waits
 * for the peer, -1 once c must close (a refused peer is logged with its
 * address).  A handshake wanting to write waits for the socket here,
 * bounded: its flights are a few kilobytes.
 */
static int
rt_loop_handshake(rt_loop *l, rt_loop_conn *c)
{
	uint64_t end = wb_mono_us() + (uint64_t)RT_LOOP_SEND_MS * 1000;
	int      rv;

	while ((rv = rt_tls_conn_handshake(c->tls)) < 0) {
		struct pollfd pfd = { .fd = c->fd, .events = POLLOUT };
		uint64_t      now = wb_mono_us();

		if (errno != EAGAIN) {
			return -1;
		}
		if (rt_tls_conn_wants(c->tls) == POLLIN) {
			return 0; /* the rest when the peer sends it */
		}
		if (now >= end ||
		    (poll(&pfd, 1, (int)((end - now) / 1000) + 1) < 0 && errno != EINTR)) {
			return -1;
		}
	}
	if (rv != WB_OK) {
		rt_tls_refused(l->name, c->ipc ? NULL : &c->peer, rt_tls_conn_error(c->tls));
		return -1;
	}
	c->greeted = true;
	c->waited = false;
	rt_loop_waiting(l, c); /* the handshake's deadline is over */
	return l->ops.accept == NULL || l->ops.accept(l->arg, c) ? 1 : -1;
}

/* rt_loop_recv reads into c's buffer as recv(2) does, through TLS on a TLS connection. */
static ssize_t
rt_loop_recv(rt_loop_conn *c)
{
	if (c->tls == NULL) {
		return recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
	}
	ssize_t n = rt_tls_conn_read(c->tls, c->buf + c->len, c->cap - c->len);
	if (n < 0 && errno == EAGAIN && rt_tls_conn_wants(c->tls) == POLLOUT) {
		errno = EPROTO; /* a renegotiation TLS 1.3 does not have */
	}
	return n;
}

/*
 * rt_loop_read reads what has arrived on c and lets the protocol serve it;
 * false once c must close.  Bytes TLS has decrypted but not handed over
 * do not wake epoll again, so they are read here before c is re-armed.
 */
static bool
rt_loop_read(rt_loop *l, rt_loop_work *w, rt_loop_conn *c)
{
	size_t  at = 0, want = 0;
	ssize_t n;

	if (c->tls != NULL && !c->greeted && (n = rt_loop_handshake(l, c)) <= 0) {
		return n == 0;
	}
	do {
		if (c->cap - c->len < RT_LOOP_READ &&
		    !rt_buf_grow(&c->buf, &c->cap, c->len + RT_LOOP_READ)) {
			return false;
		}
		if ((n = rt_loop_recv(c)) <= 0) {
			return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR);
		}
		c->len += (size_t)n;
		c->waited = false;
		if ((n = l->ops.serve(l->arg, w->scratch, c, c->buf, c->len, &want)) < 0 ||
		    (size_t)n > c->len) {
			return false;
		}
		at = (size_t)n;
		memmove(c->buf, c->buf + at, c->len - at);
		c->len -= at;
		if (at > 0) {
			rt_loop_waiting(l, c);
		}
		if (want > l->opts.max_buf || c->len >= l->opts.max_buf) {
			RT_DEBUGF(
			    "%s: a request over %zu bytes: closing", l->name, l->opts.max_buf);
			return false;
		}
		if (want > c->len && !rt_buf_grow(&c->buf, &c->cap, want)) {
			return false; /* the next reads fill it */
		}
	} while (c->tls != NULL && rt_tls_conn_pending(c->tls) > 0);
	if (c->len == 0 && c->cap > RT_LOOP_KEEP_BUF) {
		free(c->buf);
		c->buf = NULL;
		c->cap = 0;
	}
	return true;
}

/* rt_loop_drop takes c off the list and closes it. */
static void
rt_loop_drop(rt_loop *l, rt_loop_conn *c)
{
	pthread_mutex_lock(&l->mtx);
	if (c->prev != NULL) {
		c->prev->next = c->next;
	} else {
		l->conns = c->next;
	}
	if (c->next != NULL) {
		c->next->prev = c->prev;
	}
	l->nconns--;
	pthread_mutex_unlock(&l->mtx);
	if (l->ops.closed != NULL) {
		l->ops.closed(l->arg, c->state);
	}
	rt_tls_conn_free(c->tls);
	close(c->fd); /* leaves the epoll set with it */
	pthread_mutex_destroy(&c->mu);
	free(c->buf);
	free(c);
}

/* rt_loop_arm asks epoll for c's next event (or the listener's, c NULL); false if it cannot. */
static bool
rt_loop_arm(rt_loop *l, rt_loop_conn *c, int op)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT };

	ev.data.ptr = c != NULL ? (void *)c : (void *)&l->lfd;
	return epoll_ctl(l->epfd, op, c != NULL ? c->fd : l->lfd, &ev) == 0;
}

/* rt_loop_accept takes every waiting connection, lets the protocol greet it and adds it to the set. */
static void
rt_loop_accept(rt_loop *l)
{
	int one = 1;

	for (;;) {
		struct sockaddr_storage ss;
		socklen_t               sl = sizeof(ss);
		rt_loop_conn           *c;
		int fd = accept4(l->lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED) {
				continue;
			}
			if (errno != EAGAIN && errno != EWOULDBLOCK) {
				RT_WARNF("%s: cannot accept: %s", l->name, strerror(errno));
				nanosleep(&(struct timespec) { 0, 10 * 1000 * 1000 },
				    NULL); /* EMFILE must not spin */
			}
			break;
		}
		if ((c = calloc(1, sizeof(*c))) == NULL) {
			close(fd);
			continue;
		}
		c->fd = fd;
		c->ipc = l->ipc;
		if (!l->ipc) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			c->peer = ss;
		}
		if (l->opts.tls != NULL ? rt_tls_conn_new(&c->tls, l->opts.tls, fd, true) != WB_OK
		                        : l->ops.accept != NULL && !l->ops.accept(l->arg, c)) {
			close(
			    fd); /* a probe that went at once (greeted after the handshake with TLS) */
			free(c);
			continue;
		}
		pthread_mutex_init(&c->mu, NULL);
		if (c->tls != NULL) {
			rt_loop_conn_wait(c, RT_LOOP_HANDSHAKE_MS);
		}
		rt_loop_waiting(l, c);
		pthread_mutex_lock(&l->mtx);
		c->next = l->conns;
		if (l->conns != NULL) {
			l->conns->prev = c;
		}
		l->conns = c;
		l->nconns++;
		pthread_mutex_unlock(&l->mtx);
		if (!rt_loop_arm(l, c, EPOLL_CTL_ADD)) {
			rt_loop_drop(l, c);
		}
	}
	(void)rt_loop_arm(l, NULL, EPOLL_CTL_MOD); /* fails once close has taken the listener out */
}

/* rt_loop_park parks the calling thread while more than `workers` others serve, until one steps aside or the loop closes. */
static void
rt_loop_park(rt_loop *l)
{
	pthread_mutex_lock(&l->mtx);
	while (atomic_load(&l->serving) > l->opts.workers && !atomic_load(&l->closing)) {
		atomic_fetch_sub(&l->serving, 1);
		while (atomic_load(&l->serving) >= l->opts.workers && !atomic_load(&l->closing)) {
			pthread_cond_wait(&l->spare, &l->mtx);
		}
		atomic_fetch_add(&l->serving, 1);
	}
	pthread_mutex_unlock(&l->mtx);
}

void
rt_loop_slow_begin(void)
{
	rt_loop *l = rt_loop_self;

	if (l == NULL || rt_loop_slow_depth++ > 0) {
		return; /* off a loop, or inside a slow call already (a service in this process) */
	}
	pthread_mutex_lock(&l->mtx);
	atomic_fetch_sub(&l->serving, 1);
	pthread_cond_signal(&l->spare);
	pthread_mutex_unlock(&l->mtx);
}

void
rt_loop_slow_end(void)
{
	if (rt_loop_self != NULL && --rt_loop_slow_depth == 0) {
		atomic_fetch_add(
		    &rt_loop_self->serving, 1); /* parks after this request if need be */
	}
}

/* Looks for a request, each after a sched_yield, before a worker sleeps, and how many workers
 * of a loop look at once (rt_loop_yields_set). */
static atomic_int rt_loop_yields, rt_loop_lookers;

void
rt_loop_yields_set(int n, int lookers)
{
	atomic_store(&rt_loop_lookers, lookers > 0 ? lookers : 1);
	atomic_store(&rt_loop_yields, n > 0 ? n : 0);
}

/* rt_loop_next waits for l's next event into ev, looking rt_loop_yields times before it sleeps
 * unless rt_loop_lookers others are looking; as epoll_wait(2). */
static int
rt_loop_next(rt_loop *l, struct epoll_event *ev)
{
	int n = 0, yields = atomic_load_explicit(&rt_loop_yields, memory_order_relaxed);

	if (yields > 0) {
		if (atomic_fetch_add(&l->looking, 1) <
		    atomic_load_explicit(&rt_loop_lookers, memory_order_relaxed)) {
			for (int i = 0; i < yields && (n = epoll_wait(l->epfd, ev, 1, 0)) == 0;
			     i++) {
				sched_yield();
			}
		}
		atomic_fetch_sub(&l->looking, 1);
	}
	return n != 0 ? n : epoll_wait(l->epfd, ev, 1, -1);
}

/* rt_loop_worker is a worker thread: wait for an event, serve it, until the loop closes. */
static void *
rt_loop_worker(void *arg)
{
	rt_loop_work      *w = arg;
	rt_loop           *l = w->loop;
	struct epoll_event ev;
	rt_loop_conn      *c;
	bool               ok;
	int                n;

	rt_loop_self = l;
	for (;;) {
		if (atomic_load_explicit(&l->serving, memory_order_relaxed) > l->opts.workers) {
			rt_loop_park(l);
		}
		if ((n = rt_loop_next(l, &ev)) < 0 && errno != EINTR) {
			RT_ERRORF("%s: epoll_wait: %s", l->name, strerror(errno));
			break;
		}
		if (n <= 0) {
			continue;
		}
		if (ev.data.ptr == (void *)&l->wake || atomic_load(&l->closing)) {
			break; /* a connection's event is not served once closing: close ends it */
		}
		if (ev.data.ptr == (void *)&l->lfd) {
			rt_loop_accept(l);
			continue;
		}
		c = ev.data.ptr;
		pthread_mutex_lock(&c->mu);
		if (l->opts.guard) {
			atomic_store(&c->busy, true); /* the guard leaves it alone */
		}
		ok = rt_loop_read(l, w, c);
		if (l->opts.guard) {
			atomic_store(&c->busy, false);
		}
		ok = ok && rt_loop_arm(l, c, EPOLL_CTL_MOD);
		pthread_mutex_unlock(&c->mu);
		if (!ok) {
			rt_loop_drop(l, c); /* not armed: no other worker has it */
		}
	}
	pthread_mutex_lock(&l->mtx);
	l->active--;
	pthread_cond_broadcast(&l->cv);
	pthread_mutex_unlock(&l->mtx);
	return NULL;
}

/* rt_loop_cap returns the connections above which idle ones get RT_LOOP_BUSY_MS. */
static size_t
rt_loop_cap(rt_loop *l)
{
	struct rlimit rl;
	size_t        cap = l->opts.max_conns;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > RT_LOOP_RESERVE * 2 &&
	    (cap == 0 || cap > rl.rlim_cur - RT_LOOP_RESERVE)) {
		cap = rl.rlim_cur - RT_LOOP_RESERVE;
	}
	return cap;
}

/* rt_loop_expire shuts down the connections past their deadline; returns whether over the cap. Call with mtx held. */
static bool
rt_loop_expire(rt_loop *l)
{
	uint64_t now = wb_mono_us() / 1000;
	bool     full = l->nconns >= rt_loop_cap(l);

	for (rt_loop_conn *c = l->conns; c != NULL; c = c->next) {
		uint64_t dl = atomic_load(&c->deadline_ms);
		int      pending = 0;

		if (full && (dl == 0 || dl > atomic_load(&c->since_ms) + RT_LOOP_BUSY_MS)) {
			dl = atomic_load(&c->since_ms) + RT_LOOP_BUSY_MS;
		}
		if (dl == 0 || now < dl || atomic_load(&c->busy) ||
		    (ioctl(c->fd, FIONREAD, &pending) == 0 && pending > 0)) {
			continue; /* bytes not read yet: the server is behind, not the client */
		}
		RT_DEBUGF("%s: closing a connection waiting %llu ms for a request", l->name,
		    (unsigned long long)wb_elapsed(now, atomic_load(&c->since_ms)));
		shutdown(c->fd, SHUT_RDWR); /* its worker wakes, reads the end and closes it */
		atomic_store(&c->deadline_ms, 0);
	}
	return full;
}

/* rt_loop_guard is the guard thread: expire idle connections until the loop closes. */
static void *
rt_loop_guard(void *arg)
{
	rt_loop *l = arg;

	pthread_mutex_lock(&l->mtx);
	while (!atomic_load(&l->closing)) {
		struct timespec ts;
		long            tick = rt_loop_expire(l) ? RT_LOOP_FAST_MS : RT_LOOP_TICK_MS;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += tick * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&l->cv, &l->mtx, &ts);
	}
	pthread_mutex_unlock(&l->mtx);
	return NULL;
}

/* rt_loop_nofile raises the soft open-files limit to the hard one. */
static void
rt_loop_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
			RT_WARNF("cannot raise the open-files limit");
		}
	}
}

/* rt_loop_start sets up the set, the listener and the threads. */
static int
rt_loop_start(rt_loop *l)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &l->wake };
	int                rv;

	if (!rt_listen_supports(l->url)) {
		RT_ERRORF("cannot listen on %s: a server takes tcp:// or ipc:// URLs", l->url);
		return WB_EINVAL;
	}
	int threads = l->opts.workers + l->opts.spares;

	if ((l->works = calloc((size_t)threads, sizeof(rt_loop_work))) == NULL ||
	    (l->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    (l->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
	    epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->wake, &ev) != 0) {
		RT_ERRORF("%s: cannot set up: %s", l->name, strerror(errno));
		return WB_ENOMEM;
	}
	if ((rv = rt_listen_open(l->url, &l->lfd)) != WB_OK) {
		RT_ERRORF("cannot listen on %s: %s", l->url, strerror(errno));
		return rv;
	}
	if (!rt_loop_arm(l, NULL, EPOLL_CTL_ADD)) {
		RT_ERRORF("cannot watch %s: %s", l->url, strerror(errno));
		return WB_ENOMEM;
	}
	atomic_store(&l->serving, threads); /* the spares park as they start */
	for (int i = 0; i < threads; i++) {
		rt_loop_work *w = &l->works[i];

		w->loop = l;
		w->scratch = l->ops.worker_open != NULL ? l->ops.worker_open(l->arg) : NULL;
		pthread_mutex_lock(&l->mtx);
		l->active++;
		pthread_mutex_unlock(&l->mtx);
		if (pthread_create(&w->thread, NULL, rt_loop_worker, w) != 0) {
			pthread_mutex_lock(&l->mtx);
			l->active--;
			pthread_mutex_unlock(&l->mtx);
			RT_ERRORF("%s: cannot start worker %d", l->name, i);
			return WB_ENOMEM;
		}
		w->running = true;
	}
	if (l->opts.guard) {
		rt_loop_nofile();
		if (pthread_create(&l->guard, NULL, rt_loop_guard, l) != 0) {
			RT_ERRORF("%s: cannot start the connection guard", l->name);
			return WB_ENOMEM;
		}
		l->guarded = true;
	}
	return WB_OK;
}

int
rt_loop_open(rt_loop **out, const rt_loop_opts *opts, const rt_loop_ops *ops, void *arg)
{
	rt_loop *l;
	int      rc;

	*out = NULL;
	if (opts == NULL || opts->url == NULL || ops == NULL || ops->serve == NULL ||
	    opts->workers < 0 || opts->workers > RT_LOOP_MAX_WORKERS || opts->spares < 0 ||
	    opts->spares > RT_LOOP_MAX_WORKERS || opts->idle_ms < 0) {
		return WB_EINVAL;
	}
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		return WB_ENOMEM;
	}
	l->opts = *opts;
	l->ops = *ops;
	l->arg = arg;
	l->lfd = l->epfd = l->wake = -1;
	l->name = strdup(opts->name != NULL ? opts->name : "warble");
	l->url = strdup(opts->url);
	l->opts.name = l->name;
	l->opts.url = l->url;
	l->ipc = strncmp(opts->url, "ipc://", 6) == 0;
	if (l->opts.workers == 0) {
		l->opts.workers = RT_LOOP_WORKERS;
	}
	if (l->opts.max_buf == 0) {
		l->opts.max_buf = RT_LOOP_MAX_BUF;
	}
	l->opts.guard |= l->opts.idle_ms > 0 || l->opts.tls != NULL; /* TLS: handshake deadlines */
	atomic_init(&l->closing, false);
	pthread_mutex_init(&l->mtx, NULL);
	pthread_cond_init(&l->cv, NULL);
	pthread_cond_init(&l->spare, NULL);
	if (l->name == NULL || l->url == NULL) {
		rt_loop_close(l);
		return WB_ENOMEM;
	}
	if ((rc = rt_loop_start(l)) != WB_OK) {
		rt_loop_close(l);
		return rc;
	}
	*out = l;
	return WB_OK;
}

int
rt_loop_port(rt_loop *l)
{
	struct sockaddr_storage ss;
	socklen_t               n = sizeof(ss);

	if (l->ipc || getsockname(l->lfd, (struct sockaddr *)&ss, &n) != 0) {
		return -1;
	}
	return ss.ss_family == AF_INET6 ? ntohs(((struct sockaddr_in6 *)&ss)->sin6_port)
	                                : ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

void
rt_loop_close(rt_loop *l)
{
	struct timespec dl;

	if (l == NULL) {
		return;
	}
	/* 1. Stop accepting and wake every idle worker (the eventfd stays readable) and the guard. */
	atomic_store(&l->closing, true);
	if (l->lfd >= 0) {
		epoll_ctl(l->epfd, EPOLL_CTL_DEL, l->lfd, NULL);
	}
	if (l->wake >= 0) {
		eventfd_write(l->wake, 1);
	}
	/* 2. Let requests in flight finish and their replies go out, bounded. */
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += RT_LOOP_DRAIN_MS / 1000;
	pthread_mutex_lock(&l->mtx);
	pthread_cond_broadcast(&l->cv);
	pthread_cond_broadcast(&l->spare);
	while (l->active > 0) {
		if (pthread_cond_timedwait(&l->cv, &l->mtx, &dl) != 0) {
			RT_WARNF(
			    "%s: closing with %d requests still in flight", l->name, l->active);
			for (rt_loop_conn *c = l->conns; c != NULL; c = c->next) {
				shutdown(c->fd, SHUT_RDWR); /* a reply stuck in send fails */
			}
			break;
		}
	}
	pthread_mutex_unlock(&l->mtx);
	/* 3. Join the threads, then close every connection and the listener. */
	if (l->guarded) {
		pthread_join(l->guard, NULL);
	}
	for (int i = 0; l->works != NULL && i < l->opts.workers + l->opts.spares; i++) {
		if (l->works[i].running) {
			pthread_join(l->works[i].thread, NULL);
		}
		if (l->ops.worker_close != NULL) {
			l->ops.worker_close(l->arg, l->works[i].scratch);
		}
	}
	while (l->conns != NULL) {
		rt_loop_drop(l, l->conns);
	}
	rt_listen_close(l->url, l->lfd);
	if (l->epfd >= 0) {
		close(l->epfd);
	}
	if (l->wake >= 0) {
		close(l->wake);
	}
	free(l->works);
	pthread_cond_destroy(&l->cv);
	pthread_cond_destroy(&l->spare);
	pthread_mutex_destroy(&l->mtx);
	free(l->name);
	free(l->url);
	free(l);
}
