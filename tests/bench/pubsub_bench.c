/*
 * pubsub_bench.c - the event link three ways, in one run: libnng's pub0
 * and sub0 over tcp (what carried events before), rt_pubsub over tcp, and
 * rt_pubsub over tcp with mutual TLS.  For each: MESSAGES messages of
 * EVENTS events each (the size a busy source's batches have) published
 * as fast as the publisher takes them, and the time and the process's
 * CPU until the subscriber has decoded every one (or until 5 s after the
 * last was sent, counting the ones lost).  Publisher and subscriber are
 * in this process, so its CPU is both ends'.
 *
 *   build/bench/pubsub_bench [messages (20000)] [events a message (8)]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <nng/nng.h>
#include <nng/protocol/pubsub0/pub.h>
#include <nng/protocol/pubsub0/sub.h>

#include "rt_pubsub.h"
#include "rt_tls.h"
#include "wb_clock.h"
#include "wbt.h"
#include "wbt_tls.h"

static uint64_t    nmsgs = 20000, nevents = 8;
static atomic_long got;

static void
count_fn(void *arg, const wb_obj *m)
{
	(void)arg;
	(void)m;
	atomic_fetch_add(&got, 1);
}

static wb_obj *
message(uint64_t seq)
{
	wb_obj *m = wb_request(WB_OP_EVENTS);
	wb_obj *ev;

	wb_set_cstr(m, WB_F_SOURCE, "content/0");
	wb_set_u64(m, WB_F_SEQ, seq);
	ev = wb_add_objs(m, WB_F_EVENTS, nevents);
	for (uint64_t i = 0; i < nevents; i++) {
		wb_set_cstr(&ev[i], WB_F_TYPE, "post");
		wb_set_u64(&ev[i], WB_F_SEQ, seq * nevents + i);
		wb_set_u64(&ev[i], WB_F_UID, 1000 + i);
		wb_set_u64(&ev[i], WB_F_ID, (seq << 20) + i);
	}
	return m;
}

static uint64_t
cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* The nng way, as rt_pubsub.c was: the message encoded into an nng_msg, sent non-blocking. */
typedef struct nng_end {
	nng_socket pub, sub;
	pthread_t  th;
} nng_end;

static void *
nng_recv_main(void *arg)
{
	nng_end  *e = arg;
	wb_limits lim = wb_limits_default;
	char      err[128];
	nng_msg  *msg;

	while (nng_recvmsg(e->sub, &msg, 0) == 0) {
		wb_obj *m;
		if (wb_decode(&m, nng_msg_body(msg), nng_msg_len(msg), &lim, err, sizeof(err)) ==
		    0) {
			count_fn(NULL, m);
			wb_msg_free(m);
		}
		nng_msg_free(msg);
	}
	return NULL;
}

static int
nng_msg_write(void *arg, const char *buf, size_t len)
{
	return nng_msg_append(arg, buf, len) == 0 ? 0 : WB_ENOMEM;
}

/* run times one way; send publishes message i, ready tells that a probe got through. */
typedef struct way {
	const char *name;
	int (*send)(void *end, const wb_obj *m);
	void *end;
} way;

static int
nng_send_one(void *end, const wb_obj *m)
{
	nng_end *e = end;
	nng_msg *msg;

	if (nng_msg_alloc(&msg, 0) != 0 || wb_encode(m, nng_msg_write, msg) != 0) {
		return -1;
	}
	if (nng_sendmsg(e->pub, msg, NNG_FLAG_NONBLOCK) != 0) {
		nng_msg_free(msg);
	}
	return 0;
}

static int
rt_send_one(void *end, const wb_obj *m)
{
	return rt_pub_send(end, m);
}

/* run publishes until one message gets through, then the burst; prints the figures. */
static void
run(const way *w)
{
	long long end = wbt_now_ms() + 10000;

	atomic_store(&got, 0);
	while (atomic_load(&got) == 0 && wbt_now_ms() < end) {
		wb_obj *m = message(0);
		w->send(w->end, m);
		wb_msg_free(m);
		wbt_sleep_ms(10);
	}
	wbt_sleep_ms(100);
	atomic_store(&got, 0);
	uint64_t t0 = wb_mono_us(), c0 = cpu_us();
	for (uint64_t i = 0; i < nmsgs; i++) {
		wb_obj *m = message(i + 1);
		w->send(w->end, m);
		wb_msg_free(m);
	}
	end = wbt_now_ms() + 5000;
	while ((uint64_t)atomic_load(&got) < nmsgs && wbt_now_ms() < end) {
		wbt_sleep_ms(1);
	}
	uint64_t t1 = wb_mono_us(), c1 = cpu_us();
	long     n = atomic_load(&got);
	printf(
	    "pubsub_bench: %-10s %6ld of %llu messages in %6.1f ms: %8.0f msg/s, %5.2f us of CPU "
	    "a message, %llu lost\n",
	    w->name, n, (unsigned long long)nmsgs, (double)(t1 - t0) / 1000.0,
	    (double)n * 1e6 / (double)(t1 - t0), n > 0 ? (double)(c1 - c0) / (double)n : 0.0,
	    (unsigned long long)(nmsgs - (uint64_t)n));
}

int
main(int argc, char **argv)
{
	char    url[3][128], dir[256];
	nng_end e;
	rt_pub *p[2];
	rt_sub *s[2];
	rt_tls *pt, *st;

	if (argc > 1) {
		nmsgs = strtoull(argv[1], NULL, 10);
	}
	if (argc > 2) {
		nevents = strtoull(argv[2], NULL, 10);
	}
	if (nmsgs < 1 || nmsgs > 10000000 || nevents < 1 || nevents > 1000) {
		fprintf(stderr, "usage: pubsub_bench [messages] [events a message, 1-1000]\n");
		return 2;
	}
	for (int i = 0; i < 3; i++) {
		if (wbt_tcp_url(url[i], sizeof(url[i])) <= 0) {
			return 1;
		}
	}
	if (wbt_path(dir, sizeof(dir), "tls") != 0 || wbt_tls_dir(dir) != 0 ||
	    rt_tls_open(&pt, dir, "content") != WB_OK || rt_tls_open(&st, dir, "inbox") != WB_OK) {
		return 1;
	}
	/* nng, as the events went before */
	if (nng_pub0_open(&e.pub) != 0 || nng_sub0_open(&e.sub) != 0) {
		return 1;
	}
	nng_socket_set_int(e.pub, NNG_OPT_SENDBUF, RT_PUB_QUEUE);
	nng_socket_set_int(e.sub, NNG_OPT_RECVBUF, RT_PUB_QUEUE);
	nng_socket_set(e.sub, NNG_OPT_SUB_SUBSCRIBE, "", 0);
	if (nng_listen(e.pub, url[0], NULL, 0) != 0 || nng_dial(e.sub, url[0], NULL, 0) != 0) {
		return 1;
	}
	pthread_create(&e.th, NULL, nng_recv_main, &e);
	const way nw = { "nng", nng_send_one, &e };
	run(&nw);
	nng_close(e.sub);
	pthread_join(e.th, NULL);
	nng_close(e.pub);

	/* rt_pubsub, plain and with TLS */
	for (int i = 0; i < 2; i++) {
		if (rt_pub_open(&p[i], url[i + 1], i == 1 ? pt : NULL, RT_PEER_INBOX) != WB_OK ||
		    rt_sub_open(&s[i], url[i + 1], i == 1 ? st : NULL, count_fn, NULL) != WB_OK) {
			return 1;
		}
		const way rw = { i == 1 ? "rt+tls" : "rt", rt_send_one, p[i] };
		run(&rw);
		rt_sub_close(s[i]);
		rt_pub_close(p[i]);
	}
	rt_tls_close(pt);
	rt_tls_close(st);
	wbt_cleanup();
	return 0;
}
