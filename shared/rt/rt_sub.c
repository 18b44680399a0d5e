/*
 * rt_sub.c - the subscriber of rt_pubsub.h.
 *
 * On tcp:// and ipc:// its thread dials the publisher (rt_dial), takes
 * the TLS handshake (with an identity) and the SP one, then reads frames
 * and hands each decoded message to the callback, until the connection
 * fails; then it waits (10 ms, doubling to RT_SUB_REDIAL_MAX_MS) and
 * dials again.  Every wait polls an eventfd too, so rt_sub_close is
 * prompt wherever the thread is.
 *
 * inproc:// goes through libnng's sub0, its thread blocked in a receive
 * with no timeout that rt_sub_close ends by closing the socket: nng 1.5.2
 * has a rare SUB crash with receive timeouts (upstream #1523).
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
#include <nng/protocol/pubsub0/sub.h>

#include "rt_buf.h"
#include "rt_dial.h"
#include "rt_log.h"
#include "rt_pubsub.h"
#include "rt_wire.h"
#include "wb_clock.h"

#define RT_SUB_MAX_MSG       (16u << 20)
#define RT_SUB_READ          (64u << 10) /* bytes a read asks for at least */
#define RT_SUB_REDIAL_MS     10
#define RT_SUB_REDIAL_MAX_MS 500
#define RT_SUB_DIAL_MS       2000 /* a dial and its handshakes, at most */

struct rt_sub {
	nng_socket  sock; /* inproc:// */
	bool        nng;
	char       *url;
	rt_dial    *dial;
	rt_tls     *tls;
	bool        ipc;
	rt_sub_fn   fn;
	void       *arg;
	int         wake; /* readable once closing */
	pthread_t   thread;
	bool        running;
	atomic_bool closing;
	uint8_t    *buf;
	size_t      len, cap;
	bool        warned; /* the last failure was logged: the next is not, until one works */
};

/* rt_sub_wait waits up to ms for events on fd (-1: none), or for rt_sub_close; false once closing. */
static bool
rt_sub_wait(rt_sub *s, int fd, short events, int ms)
{
	struct pollfd pfd[2] = { { .fd = s->wake, .events = POLLIN },
		{ .fd = fd, .events = events } };

	if (poll(pfd, fd >= 0 ? 2 : 1, ms) < 0 && errno != EINTR) {
		return false;
	}
	return !atomic_load(&s->closing);
}

/* rt_sub_io reads (out false) or writes n bytes at most; as recv(2) and send(2). */
static ssize_t
rt_sub_io(int fd, rt_tls_conn *tls, bool out, void *buf, size_t n)
{
	if (tls != NULL) {
		return out ? rt_tls_conn_write(tls, buf, n) : rt_tls_conn_read(tls, buf, n);
	}
	return out ? send(fd, buf, n, MSG_NOSIGNAL) : recv(fd, buf, n, 0);
}

/* rt_sub_exact moves exactly n bytes of buf within the deadline; false on failure or close. */
static bool
rt_sub_exact(rt_sub *s, int fd, rt_tls_conn *tls, bool out, uint8_t *buf, size_t n, uint64_t end_us)
{
	for (size_t did = 0; did < n;) {
		ssize_t  r = rt_sub_io(fd, tls, out, buf + did, n - did);
		uint64_t now = wb_mono_us();

		if (r > 0) {
			did += (size_t)r;
			continue;
		}
		if (r == 0 || (errno != EAGAIN && errno != EINTR) || now >= end_us) {
			return false;
		}
		short ev = tls != NULL ? rt_tls_conn_wants(tls) : out ? POLLOUT : POLLIN;
		if (!rt_sub_wait(s, fd, ev, (int)((end_us - now) / 1000) + 1)) {
			return false;
		}
	}
	return true;
}

/* rt_sub_hello takes the TLS handshake (with an identity) and the SP one on fd; false on failure. */
static bool
rt_sub_hello(rt_sub *s, int fd, rt_tls_conn **tls)
{
	uint64_t end = wb_mono_us() + (uint64_t)RT_SUB_DIAL_MS * 1000;
	uint8_t  mine[RT_WIRE_HELLO], theirs[RT_WIRE_HELLO];
	int      rv;

	if (s->tls != NULL) {
		if (rt_tls_conn_new(tls, s->tls, fd, false) != WB_OK) {
			return false;
		}
		while ((rv = rt_tls_conn_handshake(*tls)) < 0) {
			uint64_t now = wb_mono_us();
			if (errno != EAGAIN || now >= end ||
			    !rt_sub_wait(
			        s, fd, rt_tls_conn_wants(*tls), (int)((end - now) / 1000) + 1)) {
				return false;
			}
		}
		if (rv != WB_OK) {
			if (!s->warned) {
				RT_WARNF("events of %s: TLS refused: %s", s->url,
				    rt_tls_conn_error(*tls));
			}
			s->warned = true;
			return false;
		}
	}
	rt_wire_hello(mine, RT_WIRE_SUB);
	return rt_sub_exact(s, fd, *tls, true, mine, sizeof(mine), end) &&
	       rt_sub_exact(s, fd, *tls, false, theirs, sizeof(theirs), end) &&
	       rt_wire_hello_ok(theirs, RT_WIRE_PUB);
}

/* rt_sub_frames hands every whole message at the front of s's buffer to the callback; false on a bad frame. */
static bool
rt_sub_frames(rt_sub *s)
{
	size_t    lead = s->ipc ? 9 : 8, at = 0;
	wb_limits lim = wb_limits_default;
	char      err[128];

	lim.max_bytes = RT_SUB_MAX_MSG;
	while (s->len - at >= lead) {
		uint64_t n = rt_wire_get(s->buf + at + lead - 8, 8);
		wb_obj  *m;

		if ((s->ipc && s->buf[at] != 1) || n > RT_SUB_MAX_MSG) {
			RT_WARNF("events of %s: a bad frame (%llu bytes): reconnecting", s->url,
			    (unsigned long long)n);
			return false;
		}
		if (s->len - at - lead < n) {
			if (!rt_buf_grow(&s->buf, &s->cap, lead + (size_t)n)) {
				return false;
			}
			break;
		}
		if (wb_decode(&m, s->buf + at + lead, (size_t)n, &lim, err, sizeof(err)) == 0) {
			s->fn(s->arg, m);
			wb_msg_free(m);
		} else {
			RT_WARNF("dropping a malformed event message: %s", err);
		}
		at += lead + (size_t)n;
	}
	memmove(s->buf, s->buf + at, s->len - at);
	s->len -= at;
	return true;
}

/* rt_sub_session reads the messages of one connection until it fails or s closes; whether it got as far as the handshake's end. */
static bool
rt_sub_session(rt_sub *s, int fd)
{
	rt_tls_conn *tls = NULL;
	bool         ready = rt_sub_hello(s, fd, &tls);

	s->len = 0;
	while (ready && !atomic_load(&s->closing)) {
		ssize_t n;

		if (s->cap - s->len < RT_SUB_READ &&
		    !rt_buf_grow(&s->buf, &s->cap, s->len + RT_SUB_READ)) {
			break;
		}
		if ((n = rt_sub_io(fd, tls, false, s->buf + s->len, s->cap - s->len)) > 0) {
			s->len += (size_t)n;
			if (!rt_sub_frames(s)) {
				break;
			}
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR) ||
		    !rt_sub_wait(s, fd, tls != NULL ? rt_tls_conn_wants(tls) : POLLIN, -1)) {
			break;
		}
	}
	rt_tls_conn_free(tls);
	if (s->cap > RT_SUB_READ * 4) { /* a large message's buffer is not kept */
		free(s->buf);
		s->buf = NULL;
		s->cap = 0;
	}
	return ready;
}

/* rt_sub_main is the subscriber's thread on tcp:// and ipc://. */
static void *
rt_sub_main(void *arg)
{
	rt_sub *s = arg;
	int     wait_ms = RT_SUB_REDIAL_MS;

	while (!atomic_load(&s->closing)) {
		int fd = rt_dial_connect(s->dial, wb_mono_us() + (uint64_t)RT_SUB_DIAL_MS * 1000);

		if (fd >= 0) {
			if (rt_sub_session(s, fd)) {
				wait_ms =
				    RT_SUB_REDIAL_MS; /* it worked: the next failure is news */
				s->warned = false;
			}
			close(fd);
		}
		if (!rt_sub_wait(s, -1, 0, wait_ms)) {
			break;
		}
		wait_ms = wait_ms * 2 < RT_SUB_REDIAL_MAX_MS ? wait_ms * 2 : RT_SUB_REDIAL_MAX_MS;
	}
	return NULL;
}

/* rt_sub_main_nng is the subscriber's thread on libnng. */
static void *
rt_sub_main_nng(void *arg)
{
	rt_sub   *s = arg;
	wb_limits lim = wb_limits_default;
	char      err[128];

	lim.max_bytes = RT_SUB_MAX_MSG;
	while (!atomic_load(&s->closing)) {
		nng_msg *msg;
		wb_obj  *m;
		int      rv;

		/* No timeout: rt_sub_close closes the socket to wake us. */
		if ((rv = nng_recvmsg(s->sock, &msg, 0)) != 0) {
			if (rv == NNG_ECLOSED) {
				break;
			}
			RT_WARNF("subscriber receive failed: %s", nng_strerror(rv));
			continue;
		}
		rv = wb_decode(&m, nng_msg_body(msg), nng_msg_len(msg), &lim, err, sizeof(err));
		nng_msg_free(msg);
		if (rv != 0) {
			RT_WARNF("dropping a malformed event message: %s", err);
			continue;
		}
		s->fn(s->arg, m);
		wb_msg_free(m);
	}
	return NULL;
}

/* rt_sub_open_nng dials url through libnng (inproc://). */
static int
rt_sub_open_nng(rt_sub *s, const char *url)
{
	int rv;

	if (nng_sub0_open(&s->sock) != 0) {
		return WB_ENOMEM;
	}
	s->nng = true;
	nng_socket_set_int(s->sock, NNG_OPT_RECVBUF, RT_PUB_QUEUE);
	nng_socket_set_size(s->sock, NNG_OPT_RECVMAXSZ, RT_SUB_MAX_MSG);
	nng_socket_set_ms(s->sock, NNG_OPT_RECONNMINT, RT_SUB_REDIAL_MS);
	nng_socket_set_ms(s->sock, NNG_OPT_RECONNMAXT, RT_SUB_REDIAL_MAX_MS);
	if ((rv = nng_socket_set(s->sock, NNG_OPT_SUB_SUBSCRIBE, "", 0)) != 0 ||
	    (rv = nng_dial(s->sock, url, NULL, NNG_FLAG_NONBLOCK)) != 0) {
		RT_ERRORF("cannot subscribe to %s: %s", url, nng_strerror(rv));
		return WB_EINVAL;
	}
	return WB_OK;
}

int
rt_sub_open(rt_sub **out, const char *url, rt_tls *tls, rt_sub_fn fn, void *arg)
{
	rt_sub *s;
	int     rc;

	*out = NULL;
	if (url == NULL || fn == NULL) {
		return WB_EINVAL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		return WB_ENOMEM;
	}
	s->fn = fn;
	s->arg = arg;
	s->tls = tls != NULL ? tls : rt_tls_default();
	s->wake = -1;
	atomic_init(&s->closing, false);
	if ((s->url = strdup(url)) == NULL) {
		rc = WB_ENOMEM;
	} else if (!rt_dial_supports(url)) {
		rc = rt_sub_open_nng(s, url);
	} else if ((rc = rt_dial_open(&s->dial, url)) == WB_OK &&
	           (s->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		rc = WB_ENOMEM;
	}
	if (rc == WB_OK) {
		s->ipc = s->dial != NULL && rt_dial_ipc(s->dial);
		s->running = pthread_create(
		                 &s->thread, NULL, s->nng ? rt_sub_main_nng : rt_sub_main, s) == 0;
		rc = s->running ? WB_OK : WB_ENOMEM;
	}
	if (rc != WB_OK) {
		rt_sub_close(s);
		return rc;
	}
	*out = s;
	return WB_OK;
}

void
rt_sub_close(rt_sub *s)
{
	if (s == NULL) {
		return;
	}
	atomic_store(&s->closing, true);
	if (s->nng) {
		nng_close(s->sock); /* wakes the receiver with NNG_ECLOSED */
	} else if (s->wake >= 0) {
		(void)eventfd_write(s->wake, 1);
	}
	if (s->running) {
		pthread_join(s->thread, NULL);
	}
	if (s->wake >= 0) {
		close(s->wake);
	}
	rt_dial_close(s->dial);
	free(s->buf);
	free(s->url);
	free(s);
}
