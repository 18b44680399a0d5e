/*
 * evlog_sub_test.c - a consumer of another store's log: it applies every
 * event once, in order, keeps its position across a reopen, retries an
 * apply that failed, wakes on a published event without waiting for its
 * poll, and starts over when the source's log went back in time.  The
 * source here is a log in a table of this process, read over a REP
 * server on ipc:// as a service's "*.log" operation is.
 */
#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdio.h>

#include "evlog.h"
#include "evlog_sub.h"
#include "rt_pubsub.h"
#include "rt_server.h"
#include "wbt.h"

enum { ES_DATA = 0, ES_LOG, ES_META, ES_NFAMS };

/* The source: a table with a log, served by user.log. */
typedef struct es_source {
	hb_table  *t;
	evlog     *log;
	rt_pub    *pub;
	rt_server *srv;
	char       url[128], pub_url[128];
} es_source;

/* The consumer's side: what apply saw. */
typedef struct es_sink {
	hb_table   *t;
	atomic_int  applied, fail_seq; /* fail_seq: the seq whose apply fails once (0: none) */
	uint64_t    seqs[64];
	atomic_uint nseqs;
} es_sink;

static hb_table *
es_table(const char *name)
{
	char           path[256];
	hb_family_opts fams[ES_NFAMS] = {
		[ES_DATA] = { .name = "data", .row_len = 8, .qual_len = HB_NONE },
		[ES_LOG] = evlog_family("log"),
		[ES_META] = { .name = "meta", .max_versions = 1, .qual_len = HB_NONE },
	};
	hb_table *t = NULL;

	cr_assert_eq(wbt_path(path, sizeof(path), name), 0);
	cr_assert_eq(hb_open(&t, path, fams, ES_NFAMS, NULL), WB_OK, "%s", hb_last_error());
	return t;
}

/* es_log serves user.log from the source's log. */
static int
es_log(void *arg, const wb_obj *req, wb_obj *rep)
{
	es_source *src = arg;

	wb_reply_ok(rep);
	return evlog_read(src->log, wb_u64(req, WB_F_FROM, 1), wb_u64(req, WB_F_LIMIT, 0), rep);
}

/* es_source_open makes a source named name (a table and a log; published on inproc if pub). */
static void
es_source_open(es_source *src, const char *name, bool pub)
{
	rt_server_opts so = { .name = "source", .workers = 2 };
	char           sock[64];

	memset(src, 0, sizeof(*src));
	src->t = es_table(name);
	snprintf(sock, sizeof(sock), "%s.rep", name);
	cr_assert_eq(wbt_ipc_url(src->url, sizeof(src->url), sock), 0);
	if (pub) {
		snprintf(src->pub_url, sizeof(src->pub_url), "inproc://evlog-sub-test-%s", name);
		cr_assert_eq(rt_pub_open(&src->pub, src->pub_url, NULL, 0), WB_OK);
	}
	cr_assert_eq(evlog_open(&src->log, src->t, ES_LOG, "user", src->pub), WB_OK);
	so.url = src->url;
	cr_assert_eq(rt_server_open(&src->srv, &so), WB_OK);
	cr_assert_eq(rt_server_handle(src->srv, WB_OP_USER_LOG, es_log, src), WB_OK);
	cr_assert_eq(rt_server_start(src->srv), WB_OK);
}

static void
es_source_close(es_source *src)
{
	rt_server_close(src->srv);
	evlog_close(src->log);
	rt_pub_close(src->pub);
	hb_close(src->t);
}

/* es_commit logs one event {type "erase", uid} in the source. */
static uint64_t
es_commit(es_source *src, uint64_t uid)
{
	hb_batch *b = NULL;
	wb_obj   *ev = wb_msg_new();
	uint64_t  seq = 0;

	cr_assert_eq(hb_batch_new(&b), WB_OK);
	wb_set_cstr(ev, WB_F_TYPE, "erase");
	wb_set_u64(ev, WB_F_UID, uid);
	cr_assert_eq(evlog_commit(src->log, b, ev, &seq), WB_OK);
	hb_batch_free(b);
	wb_msg_free(ev);
	return seq;
}

/* es_apply writes a data cell row uid with the position, failing once for fail_seq. */
static int
es_apply(void *arg, evlog_sub *s, const wb_obj *ev, hb_batch *b)
{
	es_sink *k = arg;
	uint8_t  row[8];
	uint64_t seq = wb_u64(ev, WB_F_SEQ, 0);
	int      rc;

	(void)s;
	if ((uint64_t)atomic_load(&k->fail_seq) == seq) {
		atomic_store(&k->fail_seq, 0);
		return WB_EIO;
	}
	hb_u64_be(row, wb_u64(ev, WB_F_UID, 0));
	if ((rc = hb_batch_put(b, k->t, ES_DATA, row, 8, NULL, 0, 1, "x", 1)) == WB_OK &&
	    (rc = hb_write(k->t, b)) == WB_OK) {
		unsigned i = atomic_fetch_add(&k->nseqs, 1);
		if (i < 64) {
			k->seqs[i] = seq;
		}
		atomic_fetch_add(&k->applied, 1);
	}
	return rc;
}

/* es_sub opens and starts a consumer of src into k. */
static evlog_sub *
es_sub(es_source *src, es_sink *k, rt_client *c, uint32_t poll_ms)
{
	evlog_sub     *s = NULL;
	evlog_sub_opts o = { .source = "user",
		.pub_url = src->pub_url,
		.client = c,
		.log_op = WB_OP_USER_LOG,
		.t = k->t,
		.fam = ES_META,
		.apply = es_apply,
		.arg = k,
		.poll_ms = poll_ms };

	cr_assert_eq(evlog_sub_open(&s, &o), WB_OK);
	cr_assert_eq(evlog_sub_start(s), WB_OK);
	return s;
}

/* es_wait waits until s has applied seq (false at the deadline). */
static bool
es_wait(evlog_sub *s, uint64_t seq, int ms)
{
	long long deadline = wbt_now_ms() + wbt_ms(ms);

	while (evlog_sub_applied(s) < seq) {
		if (wbt_now_ms() > deadline) {
			return false;
		}
		wbt_sleep_ms(5);
	}
	return true;
}

Test(evlog_sub, applies_once_in_order_and_resumes, .fini = wbt_cleanup, .timeout = 60)
{
	es_source      src;
	es_sink        k = { .t = es_table("sink") };
	rt_client_opts co = { .timeout_ms = 5000 };
	rt_client     *c = NULL;
	evlog_sub     *s;

	es_source_open(&src, "src", false);
	cr_assert_eq(rt_client_open(&c, src.url, &co), WB_OK);
	for (uint64_t u = 1; u <= 5; u++) {
		es_commit(&src, 100 + u);
	}
	s = es_sub(&src, &k, c, 50);
	cr_assert(
	    es_wait(s, 5, 10000), "applied %llu of 5", (unsigned long long)evlog_sub_applied(s));
	cr_assert_eq(evlog_sub_behind(s), 0);
	evlog_sub_close(s);
	cr_assert_eq(atomic_load(&k.applied), 5);
	for (unsigned i = 0; i < 5; i++) {
		cr_assert_eq(k.seqs[i], i + 1, "event %u applied as seq %llu", i,
		    (unsigned long long)k.seqs[i]);
	}

	/* reopened: from its position, the next three only; one fails once and is retried */
	for (uint64_t u = 6; u <= 8; u++) {
		es_commit(&src, 100 + u);
	}
	atomic_store(&k.fail_seq, 7);
	s = es_sub(&src, &k, c, 50);
	cr_assert(
	    es_wait(s, 8, 10000), "applied %llu of 8", (unsigned long long)evlog_sub_applied(s));
	cr_assert_eq(atomic_load(&k.applied), 8, "every event applied once");
	cr_assert_eq(atomic_load(&k.fail_seq), 0, "the failed apply was tried again");
	for (unsigned i = 5; i < 8; i++) {
		cr_assert_eq(k.seqs[i], i + 1);
	}
	evlog_sub_close(s);

	/* the source goes back in time: a new store with two other events */
	rt_client_close(c);
	es_source_close(&src);
	es_source_open(&src, "src2", false);
	cr_assert_eq(rt_client_open(&c, src.url, &co), WB_OK);
	es_commit(&src, 201);
	es_commit(&src, 202);
	s = es_sub(&src, &k, c, 50);
	long long deadline = wbt_now_ms() + wbt_ms(10000);
	while (atomic_load(&k.applied) < 10 && wbt_now_ms() < deadline) {
		wbt_sleep_ms(5);
	}
	cr_assert_eq(atomic_load(&k.applied), 10, "the new log applied from its start");
	cr_assert_eq(evlog_sub_applied(s), 2);
	cr_assert(k.seqs[8] == 1 && k.seqs[9] == 2);
	evlog_sub_close(s);
	rt_client_close(c);
	es_source_close(&src);
	hb_close(k.t);
}

Test(evlog_sub, wakes_on_a_published_event, .fini = wbt_cleanup, .timeout = 60)
{
	es_source      src;
	es_sink        k = { .t = es_table("sink") };
	rt_client_opts co = { .timeout_ms = 5000 };
	rt_client     *c = NULL;
	evlog_sub     *s;

	es_source_open(&src, "pubsrc", true);
	cr_assert_eq(rt_client_open(&c, src.url, &co), WB_OK);
	s = es_sub(&src, &k, c, 60000); /* the poll would not come within the test */
	wbt_sleep_ms(200);              /* the subscription is made */
	long long t0 = wbt_now_ms();
	uint64_t  seq = es_commit(&src, 42);
	cr_assert(es_wait(s, seq, 10000), "a published event did not wake the consumer");
	fprintf(stderr, "evlog_sub: applied %lld ms after its commit\n", wbt_now_ms() - t0);
	cr_assert_eq(atomic_load(&k.applied), 1);
	evlog_sub_close(s);
	rt_client_close(c);
	es_source_close(&src);
	hb_close(k.t);
}
