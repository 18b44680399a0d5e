/*
 * rt_pubsub.c - events over nng pub0/sub0 with 8192-message buffers.
 *
 * The subscriber runs one thread blocked in a receive with no timeout;
 * rt_sub_close wakes it by closing the socket (the receive fails with
 * NNG_ECLOSED).  Receive timeouts are avoided on purpose: nng 1.5.2 has a
 * rare SUB crash with them (upstream #1523), and closing is prompt anyway.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <nng/nng.h>
#include <nng/protocol/pubsub0/pub.h>
#include <nng/protocol/pubsub0/sub.h>

#include "rt_log.h"
#include "rt_pubsub.h"

#define RT_PUBSUB_BUF     8192
#define RT_PUBSUB_MAX_MSG (16u << 20)

struct rt_pub {
	nng_socket sock;
};

struct rt_sub {
	nng_socket  sock;
	pthread_t   thread;
	rt_sub_fn   fn;
	void       *arg;
	atomic_bool closing;
};

static int
rt_pubsub_msg_write(void *arg, const char *buf, size_t len)
{
	return nng_msg_append(arg, buf, len) == 0 ? 0 : WB_ENOMEM;
}

/* rt_pub_open listens for subscribers on url. */
int
rt_pub_open(rt_pub **out, const char *url)
{
	rt_pub *p;
	int     rv;

	if (url == NULL) {
		return WB_EINVAL;
	}
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		return WB_ENOMEM;
	}
	if ((rv = nng_pub0_open(&p->sock)) != 0) {
		free(p);
		return WB_ENOMEM;
	}
	nng_socket_set_int(p->sock, NNG_OPT_SENDBUF, RT_PUBSUB_BUF);
	if ((rv = nng_listen(p->sock, url, NULL, 0)) != 0) {
		RT_ERRORF("cannot publish on %s: %s", url, nng_strerror(rv));
		nng_close(p->sock);
		free(p);
		return WB_EINVAL;
	}
	*out = p;
	return WB_OK;
}

/* rt_pub_send encodes and publishes m; never blocks (drops if buffers are full). */
int
rt_pub_send(rt_pub *p, const wb_obj *m)
{
	nng_msg *msg;
	int      rv;

	if (nng_msg_alloc(&msg, 0) != 0) {
		return WB_ENOMEM;
	}
	if ((rv = wb_encode(m, rt_pubsub_msg_write, msg)) != 0) {
		nng_msg_free(msg);
		return rv;
	}
	if ((rv = nng_sendmsg(p->sock, msg, NNG_FLAG_NONBLOCK)) != 0) {
		nng_msg_free(msg);
		return rv == NNG_ECLOSED ? WB_ECLOSED : WB_EUNAVAIL;
	}
	return WB_OK;
}

/* rt_pub_close closes the publisher; NULL is ignored. */
void
rt_pub_close(rt_pub *p)
{
	if (p == NULL) {
		return;
	}
	nng_close(p->sock);
	free(p);
}

static void *
rt_sub_main(void *arg)
{
	rt_sub   *s = arg;
	wb_limits lim = wb_limits_default;
	char      err[128];

	lim.max_bytes = RT_PUBSUB_MAX_MSG;
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

/* rt_sub_open dials url (redialling as needed) and calls fn for every message on a thread of its own. */
int
rt_sub_open(rt_sub **out, const char *url, rt_sub_fn fn, void *arg)
{
	rt_sub *s;
	int     rv;

	if (url == NULL || fn == NULL) {
		return WB_EINVAL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		return WB_ENOMEM;
	}
	s->fn = fn;
	s->arg = arg;
	atomic_init(&s->closing, false);
	if ((rv = nng_sub0_open(&s->sock)) != 0) {
		free(s);
		return WB_ENOMEM;
	}
	nng_socket_set_int(s->sock, NNG_OPT_RECVBUF, RT_PUBSUB_BUF);
	nng_socket_set_size(s->sock, NNG_OPT_RECVMAXSZ, RT_PUBSUB_MAX_MSG);
	nng_socket_set_ms(s->sock, NNG_OPT_RECONNMINT, 10);
	nng_socket_set_ms(s->sock, NNG_OPT_RECONNMAXT, 500);
	if ((rv = nng_socket_set(s->sock, NNG_OPT_SUB_SUBSCRIBE, "", 0)) != 0 ||
	    (rv = nng_dial(s->sock, url, NULL, NNG_FLAG_NONBLOCK)) != 0) {
		RT_ERRORF("cannot subscribe to %s: %s", url, nng_strerror(rv));
		nng_close(s->sock);
		free(s);
		return WB_EINVAL;
	}
	if (pthread_create(&s->thread, NULL, rt_sub_main, s) != 0) {
		nng_close(s->sock);
		free(s);
		return WB_ENOMEM;
	}
	*out = s;
	return WB_OK;
}

/* rt_sub_close stops the thread (waiting for a running fn) and closes; NULL is ignored. */
void
rt_sub_close(rt_sub *s)
{
	if (s == NULL) {
		return;
	}
	atomic_store(&s->closing, true);
	nng_close(s->sock); /* wakes the receiver with NNG_ECLOSED */
	pthread_join(s->thread, NULL);
	free(s);
}
