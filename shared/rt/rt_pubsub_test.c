/*
 * rt_pubsub_test.c - a burst of events arrives whole and in order with
 * the raised buffers; closing a subscriber is prompt, connected or not.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>

#include "rt_pubsub.h"
#include "wbt.h"

#define BURST 5000

typedef struct sink {
	atomic_int probes;
	atomic_int got;
	atomic_int out_of_order;
	uint64_t   next;
} sink;

static void
sink_fn(void *arg, const wb_obj *m)
{
	sink       *k = arg;
	const char *src = wb_str(m, WB_F_SOURCE, "");

	if (strcmp(src, "probe") == 0) {
		atomic_fetch_add(&k->probes, 1);
		return;
	}
	if (wb_u64(m, WB_F_SEQ, UINT64_MAX) != k->next) {
		atomic_fetch_add(&k->out_of_order, 1);
	}
	k->next = wb_u64(m, WB_F_SEQ, 0) + 1;
	atomic_fetch_add(&k->got, 1);
}

static wb_obj *
event(const char *source, uint64_t seq)
{
	wb_obj *m = wb_request(WB_OP_EVENTS);
	wb_set_cstr(m, WB_F_SOURCE, source);
	wb_set_u64(m, WB_F_SEQ, seq);
	wb_obj *ev = wb_add_objs(m, WB_F_EVENTS, 1);
	wb_set_cstr(ev, WB_F_TYPE, "post");
	wb_set_u64(ev, WB_F_SEQ, seq);
	return m;
}

Test(rt_pubsub, burst_arrives_whole, .fini = wbt_cleanup, .timeout = 60)
{
	char      url[128];
	rt_pub   *p;
	rt_sub   *s;
	sink      k;
	long long end, t0;

	memset(&k, 0, sizeof(k));
	cr_assert_eq(wbt_ipc_url(url, sizeof(url), "events"), 0);
	cr_assert_eq(rt_pub_open(&p, url, NULL, 0), WB_OK);
	cr_assert_eq(rt_sub_open(&s, url, NULL, sink_fn, &k), WB_OK);
	/* a subscriber misses what is sent before it is connected: probe until one lands */
	end = wbt_now_ms() + 10000;
	while (atomic_load(&k.probes) == 0 && wbt_now_ms() < end) {
		wb_obj *m = event("probe", 0);
		cr_assert_eq(rt_pub_send(p, m), WB_OK);
		wb_msg_free(m);
		wbt_sleep_ms(10);
	}
	cr_assert_gt(atomic_load(&k.probes), 0, "subscriber never connected");

	t0 = wbt_now_ms();
	for (uint64_t i = 0; i < BURST; i++) {
		wb_obj *m = event("burst", i);
		cr_assert_eq(rt_pub_send(p, m), WB_OK);
		wb_msg_free(m);
	}
	end = wbt_now_ms() + 20000;
	while (atomic_load(&k.got) < BURST && wbt_now_ms() < end) {
		wbt_sleep_ms(5);
	}
	fprintf(stderr, "pubsub: %d events in %lld ms\n", atomic_load(&k.got), wbt_now_ms() - t0);
	cr_assert_eq(atomic_load(&k.got), BURST, "received %d of %d", atomic_load(&k.got), BURST);
	cr_assert_eq(atomic_load(&k.out_of_order), 0);

	t0 = wbt_now_ms();
	rt_sub_close(s);
	cr_assert_lt(wbt_now_ms() - t0, 1000, "subscriber close took %lld ms", wbt_now_ms() - t0);
	rt_pub_close(p);
	rt_pub_close(NULL);
	rt_sub_close(NULL);
}

Test(rt_pubsub, close_unconnected_subscriber_is_prompt, .fini = wbt_cleanup, .timeout = 30)
{
	char      url[128];
	rt_sub   *s;
	sink      k;
	long long t0;

	memset(&k, 0, sizeof(k));
	cr_assert_eq(wbt_ipc_url(url, sizeof(url), "nobody"), 0);
	cr_assert_eq(rt_sub_open(&s, url, NULL, sink_fn, &k), WB_OK);
	wbt_sleep_ms(50); /* let it try (and fail) to dial a few times */
	t0 = wbt_now_ms();
	rt_sub_close(s);
	cr_assert_lt(wbt_now_ms() - t0, 1000);
}
