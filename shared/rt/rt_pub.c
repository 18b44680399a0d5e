/*
 * rt_pub.c - the publisher of rt_pubsub.h.
 *
 * On tcp:// and ipc:// one thread owns the listener and every
 * subscriber's connection:
 *
 *   accept -> TLS handshake (with tls) -> SP handshake -> ready
 *   ready:    write the subscriber's queued messages as its socket takes
 *             them; read (and drop) what it sends, to see it go
 *
 * rt_pub_send encodes a message once, framed (rt_wire.h), queues a
 * reference to it on every ready subscriber under the publisher's lock
 * and wakes the thread (an eventfd), which writes at once and waits for
 * a socket only once it is full.  A subscriber whose queue holds
 * RT_PUB_QUEUE messages misses the new ones: its source's log has them.
 * The message a subscriber is part-way through is never touched by
 * rt_pub_send, so its stream stays whole.
 *
 * inproc:// goes through libnng's pub0 with a send buffer as deep.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pubsub0/pub.h>

#include "rt_buf.h"
#include "rt_listen.h"
#include "rt_log.h"
#include "rt_pubsub.h"
#include "rt_wire.h"
#include "wb_clock.h"

#define RT_PUB_CONNS        256   /* subscribers at once */
#define RT_PUB_TICK_MS      250   /* the thread's round when idle (handshake deadlines) */
#define RT_PUB_HANDSHAKE_MS 10000 /* a subscriber must be ready this long after its accept */

/* One encoded, framed message, shared by the queues it is on. */
typedef struct rt_pub_msg {
	atomic_uint refs;
	size_t      len;
	uint8_t     data[];
} rt_pub_msg;

enum { RT_PUB_TLS, RT_PUB_HELLO, RT_PUB_READY };

/* A subscriber's connection. */
typedef struct rt_pub_conn {
	int                     fd;
	rt_tls_conn            *tls;
	struct sockaddr_storage peer; /* family 0 for ipc */
	int                     state;
	uint8_t                 hello[RT_WIRE_HELLO]; /* the subscriber's handshake, as it comes */
	size_t                  got, sent;            /* handshake bytes read and written */
	uint64_t                deadline_ms;          /* ready by then */
	short                   blocked; /* the event a full socket waits for (0: none) */
	bool                    dead;
	/* under the publisher's lock: */
	rt_pub_msg        **q; /* a ring of RT_PUB_QUEUE, once ready */
	size_t              head, len;
	size_t              off; /* bytes of q[head] written */
	struct rt_pub_conn *next;
} rt_pub_conn;

struct rt_pub {
	nng_socket       sock; /* inproc:// */
	bool             nng;
	char            *url;
	int              lfd, wake;
	bool             ipc;
	rt_tls          *tls;
	unsigned         subscribers;
	pthread_t        thread;
	bool             running;
	atomic_bool      closing;
	pthread_mutex_t  mu;
	rt_pub_conn     *conns;
	size_t           nconns;
	_Atomic uint64_t drops;
};

/* rt_pub_msg_put drops one reference to m. */
static void
rt_pub_msg_put(rt_pub_msg *m)
{
	if (m != NULL && atomic_fetch_sub(&m->refs, 1) == 1) {
		free(m);
	}
}

static ssize_t
rt_pub_read(rt_pub_conn *k, void *buf, size_t n)
{
	return k->tls != NULL ? rt_tls_conn_read(k->tls, buf, n) : recv(k->fd, buf, n, 0);
}

static ssize_t
rt_pub_write(rt_pub_conn *k, const void *buf, size_t n)
{
	return k->tls != NULL ? rt_tls_conn_write(k->tls, buf, n)
	                      : send(k->fd, buf, n, MSG_NOSIGNAL);
}

/* rt_pub_wait tells whether a failed read or write only waits for the socket (and for which event, in k->blocked). */
static bool
rt_pub_wait(rt_pub_conn *k, short dflt)
{
	if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) {
		k->blocked = k->tls != NULL ? rt_tls_conn_wants(k->tls) : dflt;
		return true;
	}
	return false;
}

/* rt_pub_flush writes k's queued messages until its socket is full or its queue empty; false once k must close. */
static bool
rt_pub_flush(rt_pub *p, rt_pub_conn *k)
{
	for (;;) {
		pthread_mutex_lock(&p->mu);
		rt_pub_msg *m = k->len > 0 ? k->q[k->head] : NULL;
		size_t      off = k->off;
		pthread_mutex_unlock(&p->mu);
		if (m == NULL) {
			k->blocked = 0;
			return true;
		}
		ssize_t n = rt_pub_write(k, m->data + off, m->len - off);
		if (n < 0) {
			return rt_pub_wait(k, POLLOUT);
		}
		pthread_mutex_lock(&p->mu);
		k->off += (size_t)n;
		if (k->off == m->len) {
			k->q[k->head] = NULL;
			k->head = (k->head + 1) % RT_PUB_QUEUE;
			k->len--;
			k->off = 0;
		} else {
			m = NULL;
		}
		pthread_mutex_unlock(&p->mu);
		rt_pub_msg_put(m);
	}
}

/* rt_pub_refuse logs why k's peer was refused and marks k to close. */
static void
rt_pub_refuse(rt_pub *p, rt_pub_conn *k, const char *why)
{
	rt_tls_refused(p->url, k->peer.ss_family != 0 ? &k->peer : NULL, why);
	k->dead = true;
}

/* rt_pub_greet takes k's TLS and SP handshakes on as far as its socket allows. */
static void
rt_pub_greet(rt_pub *p, rt_pub_conn *k)
{
	if (k->state == RT_PUB_TLS) {
		int rv = rt_tls_conn_handshake(k->tls);
		if (rv < 0) {
			k->dead = !rt_pub_wait(k, POLLIN);
			return;
		}
		if (rv != WB_OK) {
			rt_pub_refuse(p, k, rt_tls_conn_error(k->tls));
			return;
		}
		if ((rt_tls_conn_peer(k->tls) & (p->subscribers | RT_PEER_ADMIN)) == 0) {
			rt_pub_refuse(p, k, "its identity may not subscribe to these events");
			return;
		}
		pthread_mutex_lock(&p->mu); /* rt_pub_send reads the state */
		k->state = RT_PUB_HELLO;
		pthread_mutex_unlock(&p->mu);
	}
	uint8_t mine[RT_WIRE_HELLO];
	ssize_t n;

	rt_wire_hello(mine, RT_WIRE_PUB);
	k->blocked = 0;
	while (k->sent < RT_WIRE_HELLO) {
		if ((n = rt_pub_write(k, mine + k->sent, RT_WIRE_HELLO - k->sent)) < 0) {
			k->dead = !rt_pub_wait(k, POLLOUT);
			return;
		}
		k->sent += (size_t)n;
	}
	while (k->got < RT_WIRE_HELLO) {
		if ((n = rt_pub_read(k, k->hello + k->got, RT_WIRE_HELLO - k->got)) <= 0) {
			k->dead = n == 0 || !rt_pub_wait(k, POLLIN);
			return;
		}
		k->got += (size_t)n;
	}
	if (!rt_wire_hello_ok(k->hello, RT_WIRE_SUB)) {
		k->dead = true; /* not an SP subscriber */
		return;
	}
	rt_pub_msg **q = calloc(RT_PUB_QUEUE, sizeof(*q));
	pthread_mutex_lock(&p->mu);
	k->q = q;
	k->state = q != NULL ? RT_PUB_READY : k->state;
	pthread_mutex_unlock(&p->mu);
	k->dead = q == NULL;
	if (q != NULL) {
		unsigned id = k->tls != NULL ? rt_tls_conn_peer(k->tls) : 0;
		RT_INFOF("events on %s: subscriber %s ready", p->url,
		    id != 0 ? rt_tls_peer_name((rt_peer)(id & -id)) : "(no TLS)");
	}
}

/* rt_pub_serve handles what poll said of k (revents; 0 after a wake-up). */
static void
rt_pub_serve(rt_pub *p, rt_pub_conn *k, short revents)
{
	uint8_t drop[512];
	ssize_t n;

	if (k->state != RT_PUB_READY) {
		if (revents != 0) {
			rt_pub_greet(p, k);
		}
		return;
	}
	if ((revents & (POLLIN | POLLHUP | POLLERR)) != 0 && k->blocked != POLLIN) {
		/* a subscriber sends nothing after its handshake: anything is read and dropped */
		while ((n = rt_pub_read(k, drop, sizeof(drop))) > 0) {
		}
		if (n == 0 || !rt_pub_wait(k, POLLIN)) {
			k->dead = true;
			return;
		}
		k->blocked = 0;
	}
	if (k->blocked == 0 || (revents & k->blocked) != 0) {
		k->dead = !rt_pub_flush(p, k);
	}
}

/* rt_pub_accept takes every waiting subscriber. */
static void
rt_pub_accept(rt_pub *p)
{
	for (;;) {
		struct sockaddr_storage ss;
		socklen_t               sl = sizeof(ss);
		rt_pub_conn            *k;
		int fd = accept4(p->lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED) {
				continue;
			}
			return;
		}
		if (p->nconns >= RT_PUB_CONNS || (k = calloc(1, sizeof(*k))) == NULL) {
			RT_WARNF("%s: a subscriber over %d refused", p->url, RT_PUB_CONNS);
			close(fd);
			continue;
		}
		k->fd = fd;
		if (!p->ipc) {
			k->peer = ss;
		}
		k->deadline_ms = wb_mono_us() / 1000 + RT_PUB_HANDSHAKE_MS;
		k->state = p->tls != NULL ? RT_PUB_TLS : RT_PUB_HELLO;
		if (p->tls != NULL && rt_tls_conn_new(&k->tls, p->tls, fd, true) != WB_OK) {
			close(fd);
			free(k);
			continue;
		}
		pthread_mutex_lock(&p->mu);
		k->next = p->conns;
		p->conns = k;
		p->nconns++;
		pthread_mutex_unlock(&p->mu);
		rt_pub_greet(p, k); /* the SP handshake goes out at once without TLS */
	}
}

/* rt_pub_conn_free closes k and drops its queue. */
static void
rt_pub_conn_free(rt_pub_conn *k)
{
	for (size_t i = 0; k->q != NULL && i < k->len; i++) {
		rt_pub_msg_put(k->q[(k->head + i) % RT_PUB_QUEUE]);
	}
	free(k->q);
	rt_tls_conn_free(k->tls);
	close(k->fd);
	free(k);
}

/* rt_pub_reap closes the connections marked dead, and those whose handshake ran out of time. */
static void
rt_pub_reap(rt_pub *p)
{
	uint64_t     now = wb_mono_us() / 1000;
	rt_pub_conn *dead = NULL;

	pthread_mutex_lock(&p->mu);
	for (rt_pub_conn **kp = &p->conns; *kp != NULL;) {
		rt_pub_conn *k = *kp;
		if (k->dead || (k->state != RT_PUB_READY && now > k->deadline_ms)) {
			*kp = k->next;
			k->next = dead;
			dead = k;
			p->nconns--;
		} else {
			kp = &k->next;
		}
	}
	pthread_mutex_unlock(&p->mu);
	while (dead != NULL) {
		rt_pub_conn *k = dead;
		dead = k->next;
		rt_pub_conn_free(k);
	}
}

/* rt_pub_main is the publisher's thread. */
static void *
rt_pub_main(void *arg)
{
	rt_pub       *p = arg;
	struct pollfd pfd[RT_PUB_CONNS + 2];
	rt_pub_conn  *conn[RT_PUB_CONNS];

	while (!atomic_load(&p->closing)) {
		size_t n = 0, i;

		pfd[0] = (struct pollfd) { .fd = p->wake, .events = POLLIN };
		pfd[1] = (struct pollfd) { .fd = p->lfd, .events = POLLIN };
		pthread_mutex_lock(&p->mu);
		for (rt_pub_conn *k = p->conns; k != NULL && n < RT_PUB_CONNS; k = k->next) {
			short ev = k->state == RT_PUB_TLS ? rt_tls_conn_wants(k->tls) : POLLIN;
			conn[n] = k;
			pfd[n + 2] = (struct pollfd) { .fd = k->fd, .events = ev | k->blocked };
			n++;
		}
		pthread_mutex_unlock(&p->mu);
		if (poll(pfd, n + 2, RT_PUB_TICK_MS) < 0 && errno != EINTR) {
			RT_ERRORF("%s: poll: %s", p->url, strerror(errno));
			break;
		}
		if ((pfd[0].revents & POLLIN) != 0) {
			eventfd_t v;
			(void)eventfd_read(p->wake, &v);
		}
		for (i = 0; i < n; i++) {
			rt_pub_serve(p, conn[i], pfd[i + 2].revents);
		}
		if ((pfd[1].revents & POLLIN) != 0) {
			rt_pub_accept(p);
		}
		rt_pub_reap(p);
	}
	return NULL;
}

/* rt_pub_open_nng publishes on url through libnng (inproc://). */
static int
rt_pub_open_nng(rt_pub *p, const char *url)
{
	int rv;

	if (nng_pub0_open(&p->sock) != 0) {
		return WB_ENOMEM;
	}
	p->nng = true;
	nng_socket_set_int(p->sock, NNG_OPT_SENDBUF, RT_PUB_QUEUE);
	if ((rv = nng_listen(p->sock, url, NULL, 0)) != 0) {
		RT_ERRORF("cannot publish on %s: %s", url, nng_strerror(rv));
		return WB_EINVAL;
	}
	return WB_OK;
}

int
rt_pub_open(rt_pub **out, const char *url, rt_tls *tls, unsigned subscribers)
{
	rt_pub *p;
	int     rc;

	*out = NULL;
	if (url == NULL) {
		return WB_EINVAL;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		return WB_ENOMEM;
	}
	p->lfd = p->wake = -1;
	p->tls = tls;
	p->subscribers = subscribers;
	atomic_init(&p->closing, false);
	atomic_init(&p->drops, 0);
	pthread_mutex_init(&p->mu, NULL);
	if ((p->url = strdup(url)) == NULL) {
		rc = WB_ENOMEM;
	} else if (!rt_listen_supports(url)) {
		rc = rt_pub_open_nng(p, url);
	} else if ((p->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		rc = WB_ENOMEM;
	} else if ((rc = rt_listen_open(url, &p->lfd)) != WB_OK) {
		RT_ERRORF("cannot publish on %s: %s", url, strerror(errno));
	} else {
		p->ipc = strncmp(url, "ipc://", 6) == 0;
		p->running = pthread_create(&p->thread, NULL, rt_pub_main, p) == 0;
		rc = p->running ? WB_OK : WB_ENOMEM;
	}
	if (rc != WB_OK) {
		rt_pub_close(p);
		return rc;
	}
	*out = p;
	return WB_OK;
}

/* A message being encoded: the rt_pub_msg it becomes, its frame's header, then its body. */
typedef struct rt_pub_enc {
	uint8_t *buf;
	size_t   len, cap;
} rt_pub_enc;

static int
rt_pub_enc_write(void *arg, const char *buf, size_t len)
{
	rt_pub_enc *e = arg;

	if (!rt_buf_grow(&e->buf, &e->cap, e->len + len)) {
		return WB_ENOMEM;
	}
	memcpy(e->buf + e->len, buf, len);
	e->len += len;
	return 0;
}

/* rt_pub_send_nng publishes the body through libnng. */
static int
rt_pub_send_nng(rt_pub *p, const uint8_t *body, size_t len)
{
	nng_msg *msg;
	int      rv;

	if (nng_msg_alloc(&msg, 0) != 0) {
		return WB_ENOMEM;
	}
	if (nng_msg_append(msg, body, len) != 0) {
		nng_msg_free(msg);
		return WB_ENOMEM;
	}
	if ((rv = nng_sendmsg(p->sock, msg, NNG_FLAG_NONBLOCK)) != 0) {
		nng_msg_free(msg);
		return rv == NNG_ECLOSED ? WB_ECLOSED : WB_EUNAVAIL;
	}
	return WB_OK;
}

int
rt_pub_send(rt_pub *p, const wb_obj *m)
{
	size_t      lead = p->ipc ? 9 : 8, at = sizeof(rt_pub_msg), n = 0;
	rt_pub_enc  e = { .len = at + lead };
	rt_pub_msg *msg;
	int         rv;

	if (!rt_buf_grow(&e.buf, &e.cap, e.len + 256) ||
	    (rv = wb_encode(m, rt_pub_enc_write, &e)) != 0) {
		free(e.buf);
		return WB_ENOMEM;
	}
	if (p->nng) {
		rv = rt_pub_send_nng(p, e.buf + at + lead, e.len - at - lead);
		free(e.buf);
		return rv;
	}
	msg = (rt_pub_msg *)e.buf; /* the frame right after the header it is counted by */
	msg->len = e.len - at;
	msg->data[0] = 1; /* ipc's message type (on tcp the length's first byte, written next) */
	rt_wire_put(msg->data + lead - 8, msg->len - lead, 8);
	atomic_init(&msg->refs, 1); /* this function's, until every queue has its own */
	pthread_mutex_lock(&p->mu);
	for (rt_pub_conn *k = p->conns; k != NULL; k = k->next) {
		if (k->state != RT_PUB_READY) {
			continue;
		}
		if (k->len == RT_PUB_QUEUE) {
			atomic_fetch_add(&p->drops, 1);
			continue;
		}
		atomic_fetch_add(&msg->refs, 1);
		k->q[(k->head + k->len) % RT_PUB_QUEUE] = msg;
		k->len++;
		n++;
	}
	pthread_mutex_unlock(&p->mu);
	rt_pub_msg_put(msg);
	if (n > 0) {
		(void)eventfd_write(p->wake, 1);
	}
	return WB_OK;
}

uint64_t
rt_pub_drops(const rt_pub *p)
{
	return atomic_load(&((rt_pub *)p)->drops);
}

void
rt_pub_close(rt_pub *p)
{
	if (p == NULL) {
		return;
	}
	atomic_store(&p->closing, true);
	if (p->running) {
		(void)eventfd_write(p->wake, 1);
		pthread_join(p->thread, NULL);
	}
	while (p->conns != NULL) {
		rt_pub_conn *k = p->conns;
		p->conns = k->next;
		rt_pub_conn_free(k);
	}
	if (p->nng) {
		nng_close(p->sock);
	}
	if (p->lfd >= 0) {
		rt_listen_close(p->url, p->lfd);
	}
	if (p->wake >= 0) {
		close(p->wake);
	}
	pthread_mutex_destroy(&p->mu);
	free(p->url);
	free(p);
}
