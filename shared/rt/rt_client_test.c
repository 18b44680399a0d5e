/*
 * rt_client_test.c - calls to a server that is not there, or goes away,
 * end within their deadline with WB_EUNAVAIL or WB_ETIMEDOUT; the client
 * reconnects when the server comes back.  A coalescing client sends a
 * lone call alone and calls queued under load as batches, each caller
 * getting its own reply, and a server killed mid-batch fails each call
 * once.  rt_call_batch gets each item's reply in order.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "rt_client.h"
#include "rt_server.h"
#include "wbt.h"

static int
ping(rt_client *c)
{
	wb_obj *req = wb_request(WB_OP_PING), *rep = NULL;
	int     rv = rt_call(c, req, &rep);

	if (rv != WB_OK) {
		cr_assert_null(rep, "a transport error leaves *rep NULL");
	}
	wb_msg_free(rep);
	wb_msg_free(req);
	return rv;
}

Test(rt_client, dead_server_fails_within_deadline, .fini = wbt_cleanup, .timeout = 30)
{
	char           url[128];
	rt_client     *c;
	rt_client_opts o = { .timeout_ms = 300 };
	long long      t0, took;
	int            rv;

	cr_assert_eq(wbt_ipc_url(url, sizeof(url), "nobody"), 0);
	cr_assert_eq(rt_client_open(&c, url, &o), WB_OK);
	t0 = wbt_now_ms();
	rv = ping(c);
	took = wbt_now_ms() - t0;
	cr_assert(rv == WB_EUNAVAIL || rv == WB_ETIMEDOUT, "%s", wb_err_name(rv));
	cr_assert_eq(rv, WB_EUNAVAIL, "never connected: unavailable, not slow");
	cr_assert(took >= 250 && took < 1300, "took %lld ms for a 300 ms deadline", took);
	rt_client_close(c);

	/* retries share the same whole-call deadline */
	o.retries = 3;
	cr_assert_eq(rt_client_open(&c, url, &o), WB_OK);
	t0 = wbt_now_ms();
	rv = ping(c);
	took = wbt_now_ms() - t0;
	cr_assert_eq(rv, WB_EUNAVAIL);
	cr_assert(took < 1300, "took %lld ms with retries", took);
	rt_client_close(c);

	/* tcp to a closed port */
	char turl[64];
	cr_assert_gt(wbt_tcp_url(turl, sizeof(turl)), 0);
	o.retries = 0;
	cr_assert_eq(rt_client_open(&c, turl, &o), WB_OK);
	t0 = wbt_now_ms();
	cr_assert_eq(ping(c), WB_EUNAVAIL);
	cr_assert_lt(wbt_now_ms() - t0, 1300);
	rt_client_close(c);

	cr_assert_eq(rt_client_open(&c, "bogus://x", &o), WB_EINVAL);
	/* a transport nng has but no Warble server listens on */
	cr_assert_eq(rt_client_open(&c, "inproc://x", &o), WB_EINVAL);
}

Test(rt_client, server_killed_then_restarted, .fini = wbt_cleanup, .timeout = 60)
{
	char           url[128];
	rt_client     *c;
	rt_client_opts o = { .timeout_ms = 500 };
	wbt_daemon    *d;
	long long      t0, end;
	int            rv;

	cr_assert_eq(wbt_ipc_url(url, sizeof(url), "ping"), 0);
	const char *args[] = { "--url", url, NULL };
	cr_assert_not_null(d = wbt_spawn("warble-ping", args, NULL));
	cr_assert_eq(wbt_wait_ready(d, url, 15000), 0);
	cr_assert_eq(rt_client_open(&c, url, &o), WB_OK);
	cr_assert_eq(ping(c), WB_OK);

	cr_assert_eq(wbt_stop(d, SIGKILL, 10000), 128 + SIGKILL);
	t0 = wbt_now_ms();
	rv = ping(c);
	cr_assert(rv == WB_EUNAVAIL || rv == WB_ETIMEDOUT, "%s", wb_err_name(rv));
	cr_assert_lt(wbt_now_ms() - t0, 1500);

	/* same URL, new process: the same client finds it again */
	cr_assert_not_null(d = wbt_spawn("warble-ping", args, NULL));
	cr_assert_eq(wbt_wait_ready(d, url, 15000), 0);
	end = wbt_now_ms() + 10000;
	while ((rv = ping(c)) != WB_OK && wbt_now_ms() < end) {
		wbt_sleep_ms(20);
	}
	cr_assert_eq(rv, WB_OK, "client did not reconnect: %s", wb_err_name(rv));
	rt_client_close(c);
	cr_assert_eq(wbt_stop(d, SIGTERM, 10000), 0);
}

Test(rt_client, help_and_bad_flags_of_a_daemon, .fini = wbt_cleanup, .timeout = 30)
{
	const char *help[] = { "--help", NULL };
	const char *bad[] = { "--no-such-flag", NULL };
	const char *badn[] = { "--workers", "0", NULL };
	wbt_daemon *d;

	cr_assert_not_null(d = wbt_spawn("warble-ping", help, NULL));
	cr_assert_eq(wbt_wait_exit(d, 10000), 0);
	cr_assert_not_null(d = wbt_spawn("warble-ping", bad, NULL));
	cr_assert_eq(wbt_wait_exit(d, 10000), 2);
	d->stopping = true; /* expected failure: no log dump */
	cr_assert_not_null(d = wbt_spawn("warble-ping", badn, NULL));
	cr_assert_eq(wbt_wait_exit(d, 10000), 2);
	d->stopping = true;
}

/* ---- close while a reply is arriving ------------------------------------ */

typedef struct churn {
	const char *url;
	int         rounds;
	atomic_int  done;
	atomic_int  answered;
} churn;

/*
 * churn_thread opens a client with a deadline of a few milliseconds, calls
 * until a call times out or a few have run, and closes it: replies keep
 * arriving just as calls give up and the client closes.  nng 1.5.2 as
 * shipped can then hang in nng_close for ever (a read resubmitted after
 * the pipe's close is dropped; deploy/nng/close-mid-transfer.patch).
 */
static void *
churn_thread(void *arg)
{
	churn *ch = arg;

	for (int i = 0; i < ch->rounds; i++) {
		rt_client_opts o = { .timeout_ms = 1 + i % 4 };
		rt_client     *c;

		if (rt_client_open(&c, ch->url, &o) != WB_OK) {
			break;
		}
		for (int k = 0; k < 6; k++) {
			int rv = ping(c);

			if (rv == WB_OK) {
				atomic_fetch_add(&ch->answered, 1);
			} else if (rv == WB_ETIMEDOUT) {
				break;
			}
		}
		rt_client_close(c);
		atomic_fetch_add(&ch->done, 1);
	}
	return NULL;
}

static void
churn_run(bool tcp)
{
	char        url[128];
	churn       ch = { .url = url, .rounds = 600 };
	pthread_t   th[2];
	wbt_daemon *d;
	long long   end;

	if (tcp) {
		cr_assert_gt(wbt_tcp_url(url, sizeof(url)), 0);
	} else {
		cr_assert_eq(wbt_ipc_url(url, sizeof(url), "churn"), 0);
	}
	const char *args[] = { "--url", url, "--workers", "2", NULL };
	cr_assert_not_null(d = wbt_spawn("warble-ping", args, NULL));
	cr_assert_eq(wbt_wait_ready(d, url, 15000), 0);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(pthread_create(&th[i], NULL, churn_thread, &ch), 0);
	}
	/* bounded: a hung close fails the test instead of stalling the run */
	end = wbt_now_ms() + 60000;
	while (atomic_load(&ch.done) < 2 * ch.rounds && wbt_now_ms() < end) {
		wbt_sleep_ms(20);
	}
	cr_assert_eq(atomic_load(&ch.done), 2 * ch.rounds,
	    "a client close hung: %d of %d clients closed in 60 s", atomic_load(&ch.done),
	    2 * ch.rounds);
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
	}
	cr_assert_gt(atomic_load(&ch.answered), 0, "no call was ever answered");
	int st = wbt_stop(d, SIGTERM, wbt_ms(15000));
	cr_assert_eq(st, 0, "warble-ping after the churn: %s %d (its log: %s)",
	    st < 0 ? "no exit in time, status" : "exit status", st, d->log);
}

Test(rt_client, close_as_replies_arrive_ipc, .fini = wbt_cleanup, .timeout = 120)
{
	churn_run(false);
}

Test(rt_client, close_as_replies_arrive_tcp, .fini = wbt_cleanup, .timeout = 120)
{
	churn_run(true);
}

/* Calls started together all finish; a dead server fails them within the deadline; the client recovers. */
Test(rt_client, started_calls_wait_together, .fini = wbt_cleanup, .timeout = 60)
{
	char           url[128];
	rt_client     *c;
	rt_client_opts o = { .timeout_ms = 500 };
	rt_pending    *p[8];
	wb_obj        *req, *rep;
	wbt_daemon    *d;
	long long      t0;
	int            rv;

	cr_assert_eq(wbt_ipc_url(url, sizeof(url), "pend"), 0);
	const char *args[] = { "--url", url, NULL };
	cr_assert_not_null(d = wbt_spawn("warble-ping", args, NULL));
	cr_assert_eq(wbt_wait_ready(d, url, 15000), 0);
	cr_assert_eq(rt_client_open(&c, url, &o), WB_OK);
	for (int round = 0; round < 3; round++) { /* contexts are reused across rounds */
		for (int i = 0; i < 8; i++) {
			req = wb_request(WB_OP_PING);
			cr_assert_eq(rt_call_start(c, req, &p[i]), WB_OK);
			wb_msg_free(req);
		}
		for (int i = 7; i >= 0; i--) {
			cr_assert_eq(rt_call_finish(p[i], &rep), WB_OK);
			cr_assert_not_null(rep);
			wb_msg_free(rep);
		}
	}
	/* an operation the server refuses: its error reply comes back */
	req = wb_request(WB_OP_POST_GET);
	wb_set_u64s(req, WB_F_IDS, (uint64_t[]) { 1 }, 1);
	cr_assert_eq(rt_call_start(c, req, &p[0]), WB_OK);
	wb_msg_free(req);
	cr_assert_eq(rt_call_finish(p[0], &rep), WB_EBADOP);
	cr_assert_not_null(rep);
	wb_msg_free(rep);

	cr_assert_eq(wbt_stop(d, SIGKILL, 10000), 128 + SIGKILL);
	t0 = wbt_now_ms();
	req = wb_request(WB_OP_PING);
	rv = rt_call_start(c, req, &p[0]);
	wb_msg_free(req);
	if (rv == WB_OK) {
		rv = rt_call_finish(p[0], &rep);
	} else {
		cr_assert_eq(rt_call_finish(p[0], &rep), rv, "finish reports the failed start");
	}
	cr_assert(rv == WB_EUNAVAIL || rv == WB_ETIMEDOUT, "%s", wb_err_name(rv));
	cr_assert_null(rep);
	cr_assert_lt(wbt_now_ms() - t0, 1500);
	cr_assert_eq(rt_call_finish(NULL, &rep), WB_ENOMEM);

	cr_assert_not_null(d = wbt_spawn("warble-ping", args, NULL));
	cr_assert_eq(wbt_wait_ready(d, url, 15000), 0);
	long long end = wbt_now_ms() + 10000;
	while ((rv = ping(c)) != WB_OK && wbt_now_ms() < end) {
		wbt_sleep_ms(20);
	}
	cr_assert_eq(rv, WB_OK, "client did not recover: %s", wb_err_name(rv));
	rt_client_close(c);
	cr_assert_eq(wbt_stop(d, SIGTERM, 10000), 0);
}

/* ---- coalescing: calls queued under load go as one batch --------------- */

/* h_slow_echo answers post.get with the ids it was given, a few milliseconds later. */
static int
h_slow_echo(void *arg, const wb_obj *req, wb_obj *rep)
{
	const uint64_t *ids;
	size_t          n;

	(void)arg;
	wbt_sleep_ms(2);
	wb_get_u64s(req, WB_F_IDS, &ids, &n);
	return ids[0] % 7 == 3 ? wb_reply_error(rep, WB_ENOPOST, "no post %llu",
	                             (unsigned long long)ids[0]) == WB_OK
	                             ? WB_ENOPOST
	                             : WB_ENOMEM
	                       : wb_set_u64s(rep, WB_F_IDS, ids, n);
}

typedef struct echo_run {
	rt_client *c;
	int        calls;
	atomic_int wrong, done;
} echo_run;

/* echo_check makes one call for id and tells whether its reply is id's own. */
static bool
echo_check(rt_client *c, uint64_t id)
{
	wb_obj         *req = wb_request(WB_OP_POST_GET), *rep = NULL;
	const uint64_t *got;
	const char     *msg;
	size_t          n;
	bool            ok;
	char            want[64];
	int             rv;

	wb_set_u64s(req, WB_F_IDS, (uint64_t[]) { id, id * 2 }, 2);
	rv = rt_call(c, req, &rep);
	if (id % 7 == 3) {
		snprintf(want, sizeof(want), "no post %llu", (unsigned long long)id);
		ok = rv == WB_ENOPOST && wb_reply_code(rep, &msg) == WB_ENOPOST &&
		     strcmp(msg, want) == 0;
	} else {
		ok = rv == WB_OK && wb_get_u64s(rep, WB_F_IDS, &got, &n) && n == 2 &&
		     got[0] == id && got[1] == id * 2;
	}
	wb_msg_free(rep);
	wb_msg_free(req);
	return ok;
}

static void *
echo_thread(void *arg)
{
	echo_run *er = arg;
	for (int i = 0; i < er->calls; i++) {
		uint64_t id = (uint64_t)atomic_fetch_add(&er->done, 1) + 1;

		if (!echo_check(er->c, id)) {
			atomic_fetch_add(&er->wrong, 1);
		}
	}
	return NULL;
}

Test(rt_client, coalesced_calls_go_as_batches_under_load, .fini = wbt_cleanup, .timeout = 120)
{
	char           url[128];
	rt_server_opts so = { .name = "echo", .workers = 2 };
	rt_server     *s;
	rt_client     *c;
	rt_client_opts o = { .timeout_ms = wbt_ms(20000), .coalesce = 2 };
	echo_run       er = { .calls = 40 };
	pthread_t      th[16];

	cr_assert_eq(wbt_ipc_url(url, sizeof(url), "echo"), 0);
	so.url = url;
	cr_assert_eq(rt_server_open(&s, &so), WB_OK);
	cr_assert_eq(rt_server_handle(s, WB_OP_POST_GET, h_slow_echo, NULL), WB_OK);
	cr_assert_eq(rt_server_start(s), WB_OK);
	cr_assert_eq(rt_client_open(&c, url, &o), WB_OK);

	/* one call at a time: each goes alone, at once */
	for (uint64_t id = 1; id <= 20; id++) {
		cr_assert(echo_check(c, 1000 + id), "lone call %llu", (unsigned long long)id);
	}
	cr_assert_eq(wbt_op_count(url, "batch"), 0, "a lone call is never batched");
	cr_assert_eq(wbt_op_count(url, "post.get"), 20);

	/* 16 threads through 2 slots: the rest queue and go together */
	er.c = c;
	for (int i = 0; i < 16; i++) {
		cr_assert_eq(pthread_create(&th[i], NULL, echo_thread, &er), 0);
	}
	for (int i = 0; i < 16; i++) {
		pthread_join(th[i], NULL);
	}
	cr_assert_eq(atomic_load(&er.wrong), 0, "%d calls got a reply not their own",
	    atomic_load(&er.wrong));
	cr_assert_eq(wbt_op_count(url, "post.get"), 20 + 16 * 40, "every call served exactly once");
	cr_assert_gt(wbt_op_count(url, "batch"), 0, "no batch under load");
	rt_client_close(c);
	rt_server_close(s);
}

Test(rt_client, a_batch_call_gets_each_reply_in_order, .fini = wbt_cleanup, .timeout = 60)
{
	char           url[128];
	rt_server_opts so = { .name = "echo", .workers = 2 };
	rt_server     *s;
	rt_client     *c;
	wb_obj        *reqs[WB_BATCH_MAX + 1], *rep = NULL;
	const wb_obj  *reps = NULL;
	const char    *msg;

	cr_assert_eq(wbt_ipc_url(url, sizeof(url), "echo"), 0);
	so.url = url;
	cr_assert_eq(rt_server_open(&s, &so), WB_OK);
	cr_assert_eq(rt_server_handle(s, WB_OP_POST_GET, h_slow_echo, NULL), WB_OK);
	cr_assert_eq(rt_server_start(s), WB_OK);
	cr_assert_eq(rt_client_open(&c, url, NULL), WB_OK);
	for (uint64_t i = 0; i <= WB_BATCH_MAX; i++) {
		reqs[i] = wb_request(WB_OP_POST_GET);
		cr_assert_eq(wb_set_u64s(reqs[i], WB_F_IDS, &i, 1), WB_OK);
	}

	cr_assert_eq(rt_call_batch(c, (const wb_obj *const *)reqs, 5, &rep, &reps), WB_OK);
	for (uint64_t i = 0; i < 5; i++) { /* id 3 is refused (h_slow_echo), alone */
		const uint64_t *got;
		size_t          n;

		if (i == 3) {
			cr_assert_eq(wb_reply_code(&reps[i], &msg), WB_ENOPOST);
			cr_assert_str_eq(msg, "no post 3");
		} else {
			cr_assert_eq(wb_reply_code(&reps[i], &msg), WB_OK);
			cr_assert(
			    wb_get_u64s(&reps[i], WB_F_IDS, &got, &n) && n == 1 && got[0] == i);
		}
	}
	wb_msg_free(rep);
	cr_assert_eq(wbt_op_count(url, "batch"), 1);
	cr_assert_eq(wbt_op_count(url, "post.get"), 5);

	cr_assert_eq(rt_call_batch(c, (const wb_obj *const *)reqs, 0, &rep, &reps), WB_EINVAL);
	cr_assert_null(rep);
	cr_assert_eq(rt_call_batch(c, (const wb_obj *const *)reqs, WB_BATCH_MAX + 1, &rep, &reps),
	    WB_EINVAL);
	cr_assert_null(rep);
	rt_client_shutdown(c);
	cr_assert_eq(rt_call_batch(c, (const wb_obj *const *)reqs, 1, &rep, &reps), WB_ECLOSED);
	for (int i = 0; i <= WB_BATCH_MAX; i++) {
		wb_msg_free(reqs[i]);
	}
	rt_client_close(c);
	rt_server_close(s);
}

typedef struct kill_call {
	rt_client *c;
	int        rv;
	bool       rep_null;
	atomic_int returned;
} kill_call;

static void *
kill_thread(void *arg)
{
	kill_call *kc = arg;
	wb_obj    *req = wb_request(WB_OP_PING), *rep = NULL;

	kc->rv = rt_call(kc->c, req, &rep);
	kc->rep_null = rep == NULL;
	wb_msg_free(rep);
	wb_msg_free(req);
	atomic_fetch_add(&kc->returned, 1);
	return NULL;
}

/* A server killed with a batch in flight and calls queued behind it fails each call once, none hanging. */
Test(rt_client, server_killed_mid_batch_fails_each_call_once, .fini = wbt_cleanup, .timeout = 120)
{
	char           url[128];
	rt_client     *c;
	rt_client_opts o = { .timeout_ms = wbt_ms(8000), .coalesce = 1 };
	wbt_daemon    *d;
	kill_call      kc[12];
	pthread_t      th[12];
	long long      end;
	int            ok = 0, failed = 0;

	cr_assert_eq(wbt_ipc_url(url, sizeof(url), "slowping"), 0);
	const char *args[] = { "--url", url, "--delay-ms", "300", NULL };
	cr_assert_not_null(d = wbt_spawn("warble-ping", args, NULL));
	cr_assert_eq(wbt_wait_ready(d, url, 15000), 0);
	cr_assert_eq(rt_client_open(&c, url, &o), WB_OK);

	/* eight calls: one goes alone, seven queue and go as one batch after it */
	for (int i = 0; i < 12; i++) {
		kc[i] = (kill_call) { .c = c };
	}
	for (int i = 0; i < 8; i++) {
		cr_assert_eq(pthread_create(&th[i], NULL, kill_thread, &kc[i]), 0);
	}
	end = wbt_now_ms() + wbt_ms(20000);
	while (wbt_op_count(url, "ping") < 2 && wbt_now_ms() < end) {
		wbt_sleep_ms(10); /* the lone call and the batch's first item are served */
	}
	cr_assert_geq(wbt_op_count(url, "ping"), 2, "the batch never started");
	cr_assert_eq(wbt_op_count(url, "batch"), 0, "the batch is still in flight");
	/* four more queue behind the batch in flight */
	for (int i = 8; i < 12; i++) {
		cr_assert_eq(pthread_create(&th[i], NULL, kill_thread, &kc[i]), 0);
	}
	wbt_sleep_ms(50);
	cr_assert_eq(wbt_stop(d, SIGKILL, 10000), 128 + SIGKILL);

	end = wbt_now_ms() + wbt_ms(30000); /* bounded: a hung call fails the test */
	for (int i = 0; i < 12; i++) {
		while (atomic_load(&kc[i].returned) == 0 && wbt_now_ms() < end) {
			wbt_sleep_ms(10);
		}
		cr_assert_eq(atomic_load(&kc[i].returned), 1, "call %d never returned", i);
		pthread_join(th[i], NULL);
		if (kc[i].rv == WB_OK) {
			ok++;
			continue;
		}
		failed++;
		cr_assert(kc[i].rv == WB_EUNAVAIL || kc[i].rv == WB_ETIMEDOUT, "call %d: %s (%s)",
		    i, wb_err_name(kc[i].rv), wb_strerror(kc[i].rv));
		cr_assert(kc[i].rep_null, "a transport failure has no reply");
	}
	cr_assert_geq(ok, 1, "the lone call before the kill was answered");
	cr_assert_eq(ok + failed, 12);
	cr_assert_geq(failed, 11, "the batch in flight and the calls queued behind it fail");
	rt_client_close(c);
}
