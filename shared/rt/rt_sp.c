/*
 * rt_sp.c - the blocking SP request/reply client of rt_sp.h.
 *
 * The wire format is in rt_wire.h.
 *
 * A connection is blocking, with SO_RCVTIMEO and SO_SNDTIMEO at the
 * call's deadline; a call costs a write, a poll for the reply (after a
 * few looks with yields, rt_sp_yields_set) and (usually) one read.
 * Before an idle connection is reused it is peeked at: a peer that has
 * closed it (a restarted server) shows as end of file, and the request
 * goes out on a new connection instead, so no request is ever sent into
 * a dead connection nor sent twice.
 *
 * Connections in use are on a list, so that rt_sp_shutdown can shut them
 * down under their blocked callers, who then see WB_ECLOSED.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "rt_buf.h"
#include "rt_dial.h"
#include "rt_sp.h"
#include "rt_wire.h"
#include "wb_clock.h"

#define RT_SP_IDLE          64 /* idle connections kept */
#define RT_SP_MAX_MSG       (16u << 20)
#define RT_SP_KEEP_BUF      (256u << 10) /* a connection keeps a buffer this large at most */
#define RT_SP_READ          4096         /* bytes a reply read asks for at least */
#define RT_SP_REDIAL_MS     10           /* first wait before a redial (wait_for_server) */
#define RT_SP_REDIAL_MAX_MS 100          /* longest wait between redials */
#define RT_SP_REPLIED       0x10000      /* or-ed into a result: a whole reply was read */

/* One connection and its message buffer (header room first). */
typedef struct rt_sp_conn {
	int                fd;
	void              *layer;  /* the layer's end of it (rt_sp_opts.layer) */
	int                tmo_ms; /* SO_RCVTIMEO and SO_SNDTIMEO as set (0: not yet) */
	uint32_t           id;     /* the request id of the call on it */
	char              *buf;
	size_t             len, cap;
	struct rt_sp_conn *next, *prev; /* the busy list, while a call uses it */
} rt_sp_conn;

struct rt_sp {
	bool               ipc;
	rt_dial           *dial; /* the server's address */
	int                timeout_ms;
	size_t             max_msg;
	bool               wait_for_server;
	const rt_sp_layer *layer;
	atomic_bool        down; /* rt_sp_shutdown has run */
	pthread_mutex_t    mu;
	rt_sp_conn         idle[RT_SP_IDLE];
	int                nidle;
	rt_sp_conn        *busy; /* connections calls are using (under mu) */
	atomic_uint        next_id;
};

bool
rt_sp_supports(const char *url)
{
	return rt_dial_supports(url);
}

int
rt_sp_open(rt_sp **out, const char *url, const rt_sp_opts *opts)
{
	rt_sp *c;
	int    rc;

	*out = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		return WB_ENOMEM;
	}
	if ((rc = rt_dial_open(&c->dial, url)) != WB_OK) {
		free(c);
		return rc;
	}
	c->ipc = rt_dial_ipc(c->dial);
	c->timeout_ms = opts != NULL && opts->timeout_ms > 0 ? opts->timeout_ms : 5000;
	c->max_msg = opts != NULL && opts->max_msg > 0 ? opts->max_msg : RT_SP_MAX_MSG;
	c->wait_for_server = opts != NULL && opts->wait_for_server;
	c->layer = opts != NULL ? opts->layer : NULL;
	atomic_init(&c->down, false);
	pthread_mutex_init(&c->mu, NULL);
	/* ids start at a random point, as nng's do, and keep the top bit set */
	atomic_init(&c->next_id, (unsigned)wb_mono_us() ^ (unsigned)getpid() << 16);
	*out = c;
	return WB_OK;
}

/* rt_sp_conn_drop closes a connection (and its layer's end) and frees its buffer. */
static void
rt_sp_conn_drop(const rt_sp *c, rt_sp_conn *k)
{
	if (k->layer != NULL) {
		c->layer->close(k->layer);
	}
	if (k->fd >= 0) {
		close(k->fd);
	}
	free(k->buf);
	k->layer = NULL;
	k->fd = -1;
	k->tmo_ms = 0;
	k->buf = NULL;
	k->cap = k->len = 0;
}

void
rt_sp_shutdown(rt_sp *c)
{
	if (c == NULL || atomic_exchange(&c->down, true)) {
		return;
	}
	pthread_mutex_lock(&c->mu);
	for (rt_sp_conn *k = c->busy; k != NULL; k = k->next) {
		shutdown(k->fd, SHUT_RDWR); /* its caller's blocked read or write returns */
	}
	pthread_mutex_unlock(&c->mu);
}

void
rt_sp_close(rt_sp *c)
{
	if (c == NULL) {
		return;
	}
	for (int i = 0; i < c->nidle; i++) {
		rt_sp_conn_drop(c, &c->idle[i]);
	}
	rt_dial_close(c->dial);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* rt_sp_left returns the ms left until deadline_us (0 once it has passed). */
static int
rt_sp_left(uint64_t deadline_us)
{
	uint64_t now = wb_mono_us();

	return now < deadline_us ? (int)((deadline_us - now + 999) / 1000) : 0;
}

/* Looks for a reply, each after a sched_yield, before a caller sleeps (rt_sp_yields_set). */
static atomic_int rt_sp_yields;

void
rt_sp_yields_set(int n)
{
	atomic_store(&rt_sp_yields, n > 0 ? n : 0);
}

/*
 * rt_sp_readable waits until k has bytes to read (or its peer closed it)
 * or the deadline passes; false then.  It looks rt_sp_yields times first,
 * giving its CPU to whoever can run between looks, then sleeps in poll(2)
 * asking for POLLIN, never in a blocking recv: a unix socket wakes every
 * thread asleep on it whenever its peer takes bytes from it
 * (unix_write_space), so a caller asleep in recv would be woken, for
 * nothing, when the server reads the request (docs/benchmarks.md,
 * 2026-11-27 19:45).
 */
static bool
rt_sp_readable(const rt_sp_conn *k, uint64_t deadline_us)
{
	struct pollfd pfd = { .fd = k->fd, .events = POLLIN };
	int           n, yields = atomic_load_explicit(&rt_sp_yields, memory_order_relaxed);

	for (int i = 0; i < yields && poll(&pfd, 1, 0) == 0; i++) {
		sched_yield();
	}
	while ((n = poll(&pfd, 1, rt_sp_left(deadline_us))) < 0 && errno == EINTR) {
	}
	return n != 0;
}

/* rt_sp_io writes (out) or reads at least need and at most cap bytes of buf on k, within the deadline, counting them in *done (if not NULL); 0, or an errno value. */
static int
rt_sp_io(const rt_sp *c, rt_sp_conn *k, bool out, void *buf, size_t need, size_t cap, size_t *done,
    uint64_t deadline_us)
{
	char  *p = buf;
	size_t did = 0;

	while (did < need) {
		if (!out && k->layer == NULL && !rt_sp_readable(k, deadline_us)) {
			return ETIMEDOUT;
		}
		ssize_t n = k->layer != NULL ? (out ? c->layer->write(k->layer, p + did, cap - did)
		                                    : c->layer->read(k->layer, p + did, cap - did))
		            : out            ? send(k->fd, p + did, cap - did, MSG_NOSIGNAL)
		                             : recv(k->fd, p + did, cap - did, 0);

		if (n > 0) {
			did += (size_t)n;
		} else if (n == 0) {
			return ECONNRESET; /* the peer closed the connection */
		} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
			return ETIMEDOUT; /* SO_RCVTIMEO / SO_SNDTIMEO */
		} else if (errno != EINTR) {
			return errno;
		}
		if (did < need && rt_sp_left(deadline_us) == 0) {
			return ETIMEDOUT;
		}
	}
	if (done != NULL) {
		*done = did;
	}
	return 0;
}

/* rt_sp_timeouts sets k's socket timeouts to ms (a blocked read or write returns then); an errno value on failure. */
static int
rt_sp_timeouts(rt_sp_conn *k, int ms)
{
	struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };

	if (k->tmo_ms == ms) {
		return 0;
	}
	if (setsockopt(k->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) != 0 ||
	    setsockopt(k->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) != 0) {
		return errno;
	}
	k->tmo_ms = ms;
	return 0;
}

/*
 * rt_sp_redial tells whether a failed dial is worth another try and waits
 * before it: a full ipc backlog (EAGAIN) always is, a server not there
 * yet only with wait_for_server.
 */
static bool
rt_sp_redial(rt_sp *c, int err, int *wait_ms, uint64_t deadline_us)
{
	int  left = rt_sp_left(deadline_us);
	bool absent = err == ECONNREFUSED || err == ENOENT || err == ECONNRESET;

	if (atomic_load(&c->down) || left <= 1 ||
	    !(err == EAGAIN || (absent && c->wait_for_server))) {
		return false; /* ENOENT: an ipc path not there yet */
	}
	int ms = err == EAGAIN ? 1 : (*wait_ms < left - 1 ? *wait_ms : left - 1);
	nanosleep(&(struct timespec) { ms / 1000, (long)(ms % 1000) * 1000000 }, NULL);
	*wait_ms = *wait_ms * 2 < RT_SP_REDIAL_MAX_MS ? *wait_ms * 2 : RT_SP_REDIAL_MAX_MS;
	return true;
}

/* rt_sp_conn_alive tells whether an idle connection can take a request (the peer has not closed it). */
static bool
rt_sp_conn_alive(const rt_sp_conn *k)
{
	char    b;
	ssize_t n = recv(k->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);

	return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

/* rt_sp_busy_add puts k on the busy list (where rt_sp_shutdown finds it); ESHUTDOWN, with k closed, once shut down. */
static int
rt_sp_busy_add(rt_sp *c, rt_sp_conn *k)
{
	pthread_mutex_lock(&c->mu);
	if (atomic_load(&c->down)) {
		pthread_mutex_unlock(&c->mu);
		rt_sp_conn_drop(c, k);
		return ESHUTDOWN;
	}
	k->prev = NULL;
	k->next = c->busy;
	if (c->busy != NULL) {
		c->busy->prev = k;
	}
	c->busy = k;
	pthread_mutex_unlock(&c->mu);
	return 0;
}

/* rt_sp_conn_put takes k off the busy list and keeps it if its call went well, or closes it. */
static void
rt_sp_conn_put(rt_sp *c, rt_sp_conn *k, bool ok)
{
	if (ok && k->cap > RT_SP_KEEP_BUF) {
		free(k->buf); /* keep idle connections small */
		k->buf = NULL;
		k->cap = 0;
	}
	pthread_mutex_lock(&c->mu);
	if (k->prev != NULL) {
		k->prev->next = k->next;
	} else {
		c->busy = k->next;
	}
	if (k->next != NULL) {
		k->next->prev = k->prev;
	}
	if (ok && c->nidle < RT_SP_IDLE && !atomic_load(&c->down)) {
		c->idle[c->nidle++] = *k;
		pthread_mutex_unlock(&c->mu);
		return;
	}
	pthread_mutex_unlock(&c->mu);
	rt_sp_conn_drop(c, k);
}

/*
 * rt_sp_conn_new connects (redialling if asked), puts the connection on
 * the busy list (a server that accepts and then says nothing must not
 * hold up rt_sp_shutdown) and does the SP handshake; an errno value on
 * failure.
 */
static int
rt_sp_conn_new(rt_sp *c, rt_sp_conn *k, uint64_t deadline_us)
{
	uint8_t hello[RT_WIRE_HELLO], peer[RT_WIRE_HELLO];
	int     rv, flags, wait_ms = RT_SP_REDIAL_MS;

	rt_wire_hello(hello, RT_WIRE_REQ);
	k->buf = NULL;
	k->layer = NULL;
	k->cap = k->len = 0;
	k->tmo_ms = 0;
	while ((k->fd = rt_dial_connect(c->dial, deadline_us)) < 0) {
		rv = errno;
		if (!rt_sp_redial(c, rv, &wait_ms, deadline_us)) {
			return atomic_load(&c->down) ? ESHUTDOWN : rv;
		}
	}
	if ((rv = rt_sp_busy_add(c, k)) != 0) {
		return rv;
	}
	if (c->layer != NULL && (rv = c->layer->open(c->layer->arg, k->fd, rt_sp_left(deadline_us),
	                             &k->layer)) != WB_OK) {
		rv = rv == WB_ETIMEDOUT ? ETIMEDOUT : ECONNREFUSED; /* refused by the server */
	} else if ((flags = fcntl(k->fd, F_GETFL)) < 0 ||
	           fcntl(k->fd, F_SETFL, flags & ~O_NONBLOCK) < 0) {
		rv = errno;
	} else if ((rv = rt_sp_timeouts(
	                k, rt_sp_left(deadline_us) > 0 ? rt_sp_left(deadline_us) : 1)) == 0 &&
	           (rv = rt_sp_io(c, k, true, (void *)hello, sizeof(hello), sizeof(hello), NULL,
	                deadline_us)) == 0 &&
	           (rv = rt_sp_io(
	                c, k, false, peer, sizeof(peer), sizeof(peer), NULL, deadline_us)) == 0 &&
	           !rt_wire_hello_ok(peer, RT_WIRE_REP)) {
		rv = EPROTO; /* not an SP REP server */
	}
	if (rv != 0) {
		rt_sp_conn_put(c, k, false);
		return atomic_load(&c->down) ? ESHUTDOWN : rv;
	}
	return 0;
}

/* rt_sp_conn_get takes a live idle connection or makes one, on the busy list; an errno value on failure (ESHUTDOWN once shut down). */
static int
rt_sp_conn_get(rt_sp *c, rt_sp_conn *k, uint64_t deadline_us)
{
	for (;;) {
		pthread_mutex_lock(&c->mu);
		if (c->nidle == 0) {
			pthread_mutex_unlock(&c->mu);
			return rt_sp_conn_new(c, k, deadline_us);
		}
		*k = c->idle[--c->nidle];
		pthread_mutex_unlock(&c->mu);
		if (rt_sp_conn_alive(k)) {
			return rt_sp_busy_add(c, k);
		}
		rt_sp_conn_drop(c, k);
	}
}

/* rt_sp_reserve makes room for need bytes in k's buffer. */
static int
rt_sp_reserve(rt_sp_conn *k, size_t need)
{
	uint8_t *b = (uint8_t *)k->buf;
	bool     ok = rt_buf_grow(&b, &k->cap, need);

	k->buf = (char *)b;
	return ok ? WB_OK : WB_ENOMEM;
}

static int
rt_sp_write_cb(void *arg, const char *buf, size_t len)
{
	rt_sp_conn *k = arg;

	if (rt_sp_reserve(k, k->len + len) != WB_OK) {
		return WB_ENOMEM;
	}
	memcpy(k->buf + k->len, buf, len);
	k->len += len;
	return 0;
}

/* rt_sp_errno maps a failed exchange to a wb_err. */
static int
rt_sp_errno(int e)
{
	switch (e) {
	case ETIMEDOUT:
		return WB_ETIMEDOUT;
	case ENOMEM:
		return WB_ENOMEM;
	case ESHUTDOWN:
		return WB_ECLOSED;
	default:
		return WB_EUNAVAIL;
	}
}

/* rt_sp_send frames and writes req on k (a call's first half); a wb_err. */
static int
rt_sp_send(rt_sp *c, rt_sp_conn *k, const wb_obj *req, int ms, uint64_t deadline_us)
{
	const size_t off = 13; /* room for [01] length id before the body */
	size_t       hlen = c->ipc ? 9 : 8;
	int          rv;

	k->id = atomic_fetch_add(&c->next_id, 1) | 0x80000000u;
	k->len = off;
	if ((rv = rt_sp_timeouts(k, ms > 0 ? ms : 1)) != 0) {
		return rt_sp_errno(rv);
	}
	if ((rv = rt_sp_reserve(k, off + 256)) != WB_OK ||
	    (rv = wb_encode(req, rt_sp_write_cb, k)) != WB_OK) {
		return rv;
	}
	/* header right before the body: [01] length id */
	rt_wire_put((uint8_t *)k->buf + off - 4, k->id, 4);
	rt_wire_put((uint8_t *)k->buf + off - 12, k->len - off + 4, 8);
	if (c->ipc) {
		k->buf[off - 13] = 1;
	}
	rv = rt_sp_io(c, k, true, k->buf + off - 4 - hlen, k->len - off + 4 + hlen,
	    k->len - off + 4 + hlen, NULL, deadline_us);
	return rv != 0 ? rt_sp_errno(rv) : WB_OK;
}

/*
 * rt_sp_recv reads the reply to k's request and decodes it into *rep;
 * results as rt_call.  A connection carries one call at a time, so what
 * arrives is this reply and nothing after it: it is read into k's buffer
 * as it comes, most often in one system call, header and body together.
 */
static int
rt_sp_recv(rt_sp *c, rt_sp_conn *k, uint64_t deadline_us, wb_obj **rep)
{
	size_t      lead = c->ipc ? 9 : 8, have = 0, want = lead + 4, got = 0;
	uint64_t    len = 0;
	wb_limits   lim = wb_limits_default;
	char        err[128];
	const char *emsg;
	int         rv;

	/* the reply: [01] length, then id and body */
	if (rt_sp_reserve(k, RT_SP_READ) != WB_OK) {
		return WB_ENOMEM;
	}
	while (have < want) {
		if ((rv = rt_sp_io(
		         c, k, false, k->buf + have, 1, k->cap - have, &got, deadline_us)) != 0) {
			return rt_sp_errno(rv);
		}
		have += got;
		if (len == 0 && have >= lead + 4) {
			const uint8_t *h = (const uint8_t *)k->buf + lead - 8;

			len = rt_wire_get(h, 8);
			if ((c->ipc && k->buf[0] != 1) || len < 4 ||
			    (uint32_t)rt_wire_get(h + 8, 4) != k->id) {
				return WB_EBADMSG;
			}
			if (len - 4 > c->max_msg) {
				return WB_ETOOBIG;
			}
			want = lead + (size_t)len;
			if (rt_sp_reserve(k, want) != WB_OK) {
				return WB_ENOMEM;
			}
		}
	}
	if (have > want) {
		return WB_EBADMSG; /* more than one reply to one request */
	}
	lim.max_bytes = c->max_msg;
	if ((rv = wb_decode(rep, k->buf + lead + 4, want - lead - 4, &lim, err, sizeof(err))) !=
	    0) {
		*rep = NULL;
		return rv == WB_ENOMEM ? WB_ENOMEM : WB_EBADMSG;
	}
	return wb_reply_code(*rep, &emsg) | RT_SP_REPLIED;
}

/* rt_sp_end returns k after a call that ended with rc (from rt_sp_recv, or a failure) and gives the call's result. */
static int
rt_sp_end(rt_sp *c, rt_sp_conn *k, int rc)
{
	bool replied = (rc & RT_SP_REPLIED) != 0;

	rt_sp_conn_put(c, k, replied); /* a reply read whole: the connection is clean */
	rc &= ~RT_SP_REPLIED;
	return !replied && atomic_load(&c->down) ? WB_ECLOSED : rc;
}

int
rt_sp_call(rt_sp *c, const wb_obj *req, wb_obj **rep)
{
	return rt_sp_call_within(c, req, c->timeout_ms, rep);
}

int
rt_sp_call_within(rt_sp *c, const wb_obj *req, int ms, wb_obj **rep)
{
	uint64_t   deadline_us = wb_mono_us() + (uint64_t)(ms > 0 ? ms : 1) * 1000;
	rt_sp_conn k;
	int        rc;

	*rep = NULL;
	if (atomic_load(&c->down)) {
		return WB_ECLOSED;
	}
	if ((rc = rt_sp_conn_get(c, &k, deadline_us)) != 0) {
		return rt_sp_errno(rc);
	}
	if ((rc = rt_sp_send(c, &k, req, ms, deadline_us)) == WB_OK) {
		rc = rt_sp_recv(c, &k, deadline_us, rep);
	}
	return rt_sp_end(c, &k, rc);
}

struct rt_sp_pending {
	rt_sp     *c;
	rt_sp_conn k; /* on the busy list while the call is in flight */
	uint64_t   deadline_us;
	int        rc; /* WB_OK while the reply is awaited */
};

int
rt_sp_start(rt_sp *c, const wb_obj *req, rt_sp_pending **out)
{
	rt_sp_pending *p;
	int            rc;

	if ((*out = p = calloc(1, sizeof(*p))) == NULL) {
		return WB_ENOMEM;
	}
	p->c = c;
	p->deadline_us = wb_mono_us() + (uint64_t)c->timeout_ms * 1000;
	if (atomic_load(&c->down)) {
		p->rc = WB_ECLOSED;
	} else if ((rc = rt_sp_conn_get(c, &p->k, p->deadline_us)) != 0) {
		p->k.fd = -1;
		p->rc = rt_sp_errno(rc);
	} else if ((rc = rt_sp_send(c, &p->k, req, c->timeout_ms, p->deadline_us)) != WB_OK) {
		p->rc = rt_sp_end(c, &p->k, rc);
		p->k.fd = -1;
	}
	return p->rc;
}

int
rt_sp_finish(rt_sp_pending *p, wb_obj **rep)
{
	int rc;

	*rep = NULL;
	if (p == NULL) {
		return WB_ENOMEM;
	}
	if ((rc = p->rc) == WB_OK) {
		rc = rt_sp_end(p->c, &p->k, rt_sp_recv(p->c, &p->k, p->deadline_us, rep));
	}
	free(p);
	return rc;
}
