/*
 * evlog_test.c - the event log: gapless seqs under concurrent commits,
 * paged reads, recovery of the last seq on reopen, and publishing.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evlog.h"
#include "wb_clock.h"
#include "wbt.h"

enum { FAM_DATA = 0, FAM_LOG, FAM_N };

static hb_table *
test_open(const char *name)
{
	char           path[256];
	hb_family_opts fams[FAM_N] = {
		[FAM_DATA] = { .name = "data", .row_len = 8, .qual_len = HB_NONE },
		[FAM_LOG] = evlog_family("log"),
	};
	hb_table *t = NULL;
	cr_assert_eq(wbt_path(path, sizeof(path), name), 0);
	int rc = hb_open(&t, path, fams, FAM_N, NULL);
	cr_assert_eq(rc, WB_OK, "hb_open: %s %s", wb_strerror(rc), hb_last_error());
	return t;
}

/* test_commit commits one event {type, uid} with a data cell row uid in the same batch. */
static int
test_commit(evlog *l, hb_table *t, uint64_t uid, uint64_t *seq)
{
	hb_batch *b = NULL;
	wb_obj   *ev = wb_msg_new();
	uint8_t   row[8];
	cr_assert(ev != NULL);
	cr_assert_eq(hb_batch_new(&b), WB_OK);
	hb_u64_be(row, uid);
	cr_assert_eq(hb_batch_put(b, t, FAM_DATA, row, 8, NULL, 0, 1, "x", 1), WB_OK);
	wb_set_cstr(ev, WB_F_TYPE, "post");
	wb_set_u64(ev, WB_F_UID, uid);
	wb_set_u64(ev, WB_F_ID, uid * 10);
	int rc = evlog_commit(l, b, ev, seq);
	if (rc == WB_OK) {
		cr_assert_eq(wb_u64(ev, WB_F_SEQ, 0), *seq);
	}
	hb_batch_free(b);
	wb_msg_free(ev);
	return rc;
}

typedef struct committer {
	evlog    *l;
	hb_table *t;
	uint64_t  base;
	uint64_t *seqs;
	int       n;
	int       failed;
} committer;

static void *
committer_main(void *arg)
{
	committer *c = arg;
	for (int i = 0; i < c->n; i++) {
		if (test_commit(c->l, c->t, c->base + (uint64_t)i, &c->seqs[i]) != WB_OK) {
			c->failed++;
		}
	}
	return NULL;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* read_all pages through the log with page size `page`, checking seqs are 1..n in order. */
static void
read_all(evlog *l, size_t page, uint64_t n)
{
	uint64_t from = 1, expect = 1;
	int      rounds = 0;
	while (expect <= n) {
		cr_assert(rounds++ < 100000);
		wb_obj *rep = wb_msg_new();
		cr_assert_eq(evlog_read(l, from, page, rep), WB_OK);
		cr_assert_eq(wb_u64(rep, WB_F_LAST, 0), n);
		const wb_obj *evs = NULL;
		size_t        m = 0;
		(void)wb_get_objs(rep, WB_F_EVENTS, &evs, &m);
		cr_assert(m > 0 && m <= page && m <= EVLOG_READ_MAX, "page of %zu", m);
		for (size_t i = 0; i < m; i++) {
			cr_assert_eq(wb_u64(&evs[i], WB_F_SEQ, 0), expect);
			cr_assert_str_eq(wb_str(&evs[i], WB_F_TYPE, ""), "post");
			cr_assert(wb_has(&evs[i], WB_F_TIME));
			cr_assert_eq(
			    wb_u64(&evs[i], WB_F_ID, 0), wb_u64(&evs[i], WB_F_UID, 0) * 10);
			expect++;
		}
		from = expect;
		wb_msg_free(rep);
	}
	/* past the end: no events, LAST still given */
	wb_obj *rep = wb_msg_new();
	cr_assert_eq(evlog_read(l, n + 1, page, rep), WB_OK);
	const wb_obj *evs = NULL;
	size_t        m = 0;
	(void)wb_get_objs(rep, WB_F_EVENTS, &evs, &m);
	cr_assert_eq(m, 0);
	cr_assert_eq(wb_u64(rep, WB_F_LAST, 0), n);
	wb_msg_free(rep);
}

/* read_all_from reads seqs from..to in one page and checks them. */
static void
read_all_from(evlog *l, uint64_t from, uint64_t to)
{
	wb_obj       *rep = wb_msg_new();
	const wb_obj *evs = NULL;
	size_t        m = 0;

	cr_assert_eq(evlog_read(l, 1, EVLOG_READ_MAX, rep), WB_OK);
	(void)wb_get_objs(rep, WB_F_EVENTS, &evs, &m);
	cr_assert_eq(m, to - from + 1);
	for (size_t i = 0; i < m; i++) {
		cr_assert_eq(wb_u64(&evs[i], WB_F_SEQ, 0), from + i);
	}
	cr_assert_eq(wb_u64(rep, WB_F_FIRST, 0), from);
	cr_assert_eq(wb_u64(rep, WB_F_LAST, 0), to);
	wb_msg_free(rep);
}

Test(evlog, concurrent_commits_are_gapless, .fini = wbt_cleanup, .timeout = 120)
{
	enum { THREADS = 4, PER = 500 };
	hb_table *t = test_open("db");
	evlog    *l = NULL;
	cr_assert_eq(evlog_open(&l, t, FAM_LOG, "test", NULL), WB_OK);
	cr_assert_eq(evlog_last(l), 0);
	committer c[THREADS];
	pthread_t th[THREADS];
	uint64_t *all = calloc(THREADS * PER, sizeof(*all));
	cr_assert(all != NULL);
	for (int i = 0; i < THREADS; i++) {
		c[i] = (committer) { .l = l,
			.t = t,
			.base = 1 + (uint64_t)i * 100000,
			.seqs = all + i * PER,
			.n = PER };
		cr_assert_eq(pthread_create(&th[i], NULL, committer_main, &c[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		pthread_join(th[i], NULL);
		cr_assert_eq(c[i].failed, 0);
		for (int j = 1; j < PER; j++) { /* each thread sees its seqs increase */
			cr_assert_gt(c[i].seqs[j], c[i].seqs[j - 1]);
		}
	}
	qsort(all, THREADS * PER, sizeof(*all), cmp_u64);
	for (uint64_t i = 0; i < THREADS * PER; i++) {
		cr_assert_eq(all[i], i + 1, "seq %llu at %llu", (unsigned long long)all[i],
		    (unsigned long long)i);
	}
	cr_assert_eq(evlog_last(l), THREADS * PER);
	read_all(l, 1000, THREADS * PER);
	read_all(l, 7, THREADS * PER);
	read_all(l, 5000, THREADS * PER); /* capped at EVLOG_READ_MAX */
	free(all);
	evlog_close(l);
	hb_close(t);
}

Test(evlog, last_seq_recovered_on_reopen, .fini = wbt_cleanup, .timeout = 120)
{
	static const uint64_t counts[] = { 0, 1, 2, 37, 64, 1025 };
	for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		char name[32];
		snprintf(name, sizeof(name), "db%zu", k);
		hb_table *t = test_open(name);
		evlog    *l = NULL;
		uint64_t  seq = 0;
		cr_assert_eq(evlog_open(&l, t, FAM_LOG, "test", NULL), WB_OK);
		for (uint64_t i = 0; i < counts[k]; i++) {
			cr_assert_eq(test_commit(l, t, i + 1, &seq), WB_OK);
		}
		evlog_close(l);
		hb_close(t);

		t = test_open(name);
		cr_assert_eq(evlog_open(&l, t, FAM_LOG, "test", NULL), WB_OK);
		cr_assert_eq(evlog_last(l), counts[k], "after %llu commits: %llu",
		    (unsigned long long)counts[k], (unsigned long long)evlog_last(l));
		cr_assert_eq(test_commit(l, t, 999, &seq), WB_OK);
		cr_assert_eq(seq, counts[k] + 1);
		read_all(l, 100, counts[k] + 1);
		evlog_close(l);
		hb_close(t);
	}
}

/* What the subscriber saw. */
typedef struct seen {
	pthread_mutex_t mu;
	uint8_t        *got; /* got[seq] */
	size_t          cap;
	size_t          msgs, events, biggest;
	bool            bad;
} seen;

static void
seen_cb(void *arg, const wb_obj *msg)
{
	seen         *s = arg;
	const wb_obj *evs = NULL;
	size_t        n = 0;
	pthread_mutex_lock(&s->mu);
	if (wb_op_of(msg) != WB_OP_EVENTS || strcmp(wb_str(msg, WB_F_SOURCE, ""), "test") != 0 ||
	    !wb_get_objs(msg, WB_F_EVENTS, &evs, &n)) {
		s->bad = true;
	}
	s->msgs++;
	s->events += n;
	if (n > s->biggest) {
		s->biggest = n;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t q = wb_u64(&evs[i], WB_F_SEQ, 0);
		if (q < s->cap) {
			s->got[q] = 1;
		} else {
			s->bad = true;
		}
	}
	pthread_mutex_unlock(&s->mu);
}

Test(evlog, events_are_published_in_batches, .fini = wbt_cleanup, .timeout = 120)
{
	enum { N = 3000 };
	char      url[128];
	rt_pub   *pub = NULL;
	rt_sub   *sub = NULL;
	evlog    *l = NULL;
	hb_table *t = test_open("db");
	seen      s = { .cap = 100000 };
	uint64_t  seq = 0;
	pthread_mutex_init(&s.mu, NULL);
	s.got = calloc(s.cap, 1);
	cr_assert(s.got != NULL);
	cr_assert_eq(wbt_ipc_url(url, sizeof(url), "pub"), 0);
	cr_assert_eq(rt_pub_open(&pub, url, NULL, 0), WB_OK);
	cr_assert_eq(rt_sub_open(&sub, url, NULL, seen_cb, &s), WB_OK);
	cr_assert_eq(evlog_open(&l, t, FAM_LOG, "test", pub), WB_OK);

	/* commit probes until the subscriber is connected and hears one */
	long long dl = wbt_now_ms() + 10000;
	for (;;) {
		cr_assert(wbt_now_ms() < dl, "subscriber never heard a probe");
		cr_assert_eq(test_commit(l, t, 1, &seq), WB_OK);
		wbt_sleep_ms(50);
		pthread_mutex_lock(&s.mu);
		size_t e = s.events;
		pthread_mutex_unlock(&s.mu);
		if (e > 0) {
			break;
		}
	}
	uint64_t first = seq + 1;
	for (int i = 0; i < N; i++) {
		cr_assert_eq(test_commit(l, t, 2 + (uint64_t)i, &seq), WB_OK);
	}
	uint64_t last = seq;
	dl = wbt_now_ms() + 10000;
	for (;;) {
		pthread_mutex_lock(&s.mu);
		uint64_t q = first;
		while (q <= last && s.got[q]) {
			q++;
		}
		pthread_mutex_unlock(&s.mu);
		if (q > last) {
			break;
		}
		cr_assert(wbt_now_ms() < dl, "seq %llu never arrived", (unsigned long long)q);
		wbt_sleep_ms(10);
	}
	rt_sub_close(sub);
	cr_assert(!s.bad);
	cr_assert_lt(
	    s.msgs, s.events, "events were batched: %zu msgs for %zu events", s.msgs, s.events);
	cr_assert_leq(s.biggest, 256);
	evlog_close(l);
	rt_pub_close(pub);
	hb_close(t);
	free(s.got);
}

/* commit_at commits one event {post, uid} whose time is time_ms (as if committed then). */
static void
commit_at(evlog *l, uint64_t uid, uint64_t time_ms)
{
	hb_batch *b = NULL;
	wb_obj   *ev = wb_msg_new();
	uint64_t  seq;

	cr_assert(ev != NULL);
	cr_assert_eq(hb_batch_new(&b), WB_OK);
	wb_set_cstr(ev, WB_F_TYPE, "post");
	wb_set_u64(ev, WB_F_UID, uid);
	wb_set_u64(ev, WB_F_ID, uid * 10);
	wb_set_u64(ev, WB_F_TIME, time_ms);
	cr_assert_eq(evlog_commit(l, b, ev, &seq), WB_OK);
	cr_assert_eq(seq, uid);
	hb_batch_free(b);
	wb_msg_free(ev);
}

/* serve asks the log as a consumer would: {from, limit 1, consumer?, applied?}; returns the
 * code and the reply's FIRST and first event's seq. */
static int
serve(
    evlog *l, uint64_t from, const char *consumer, uint64_t applied, uint64_t *first, uint64_t *ev0)
{
	wb_obj       *req = wb_request(WB_OP_POST_LOG), *rep = wb_msg_new();
	const wb_obj *evs = NULL;
	size_t        n = 0;

	cr_assert(req != NULL && rep != NULL);
	wb_set_u64(req, WB_F_FROM, from);
	wb_set_u64(req, WB_F_LIMIT, 1);
	if (consumer != NULL) {
		wb_set_cstr(req, WB_F_CONSUMER, consumer);
	}
	if (applied != UINT64_MAX) {
		wb_set_u64(req, WB_F_APPLIED, applied);
	}
	int rc = evlog_serve(l, req, rep);
	if (rc == WB_OK) {
		cr_assert(wb_get_u64(rep, WB_F_FIRST, first), "every read says first");
		*ev0 = wb_get_objs(rep, WB_F_EVENTS, &evs, &n) && n > 0
		           ? wb_u64(&evs[0], WB_F_SEQ, 0)
		           : 0;
	} else {
		cr_assert_eq(wb_reply_code(rep, NULL), rc, "an error reply");
	}
	wb_msg_free(req);
	wb_msg_free(rep);
	return rc;
}

Test(evlog, trim_by_retention_consumers_and_max_age, .fini = wbt_cleanup, .timeout = 120)
{
	/* 100 events a second apart, from t0 + 1 s on, t0 well in the past */
	const uint64_t  t0 = wb_now_ms() - 1000000, s = 1000;
	evlog_retention r = { .retention_ms = 10 * s, .max_age_ms = 50 * s };
	hb_table       *t = test_open("trim");
	evlog          *l = NULL;
	uint64_t        n, first, ev0;

	cr_assert_eq(evlog_open(&l, t, FAM_LOG, "content/0", NULL), WB_OK);
	cr_assert_eq(evlog_first(l), 0, "empty");
	cr_assert_eq(evlog_trim(l, &r, t0, &n), WB_OK);
	for (uint64_t i = 1; i <= 100; i++) {
		commit_at(l, i, t0 + i * s);
	}
	cr_assert_eq(evlog_first(l), 1);

	/* no consumer: the retention alone; then events younger than it stay */
	cr_assert_eq(evlog_trim(l, &r, t0 + 15 * s, &n), WB_OK);
	cr_assert_eq(
	    n, 4, "seqs 1-4 are more than 10 s old at t0 + 15 s: %llu", (unsigned long long)n);
	cr_assert_eq(evlog_first(l), 5);
	cr_assert_eq(serve(l, 1, NULL, UINT64_MAX, &first, &ev0), WB_OK);
	cr_assert(first == 5 && ev0 == 5, "a read from 1 starts at 5 and says so");

	/* a consumer that applied 30 holds the trim there, the applied event kept */
	cr_assert_eq(serve(l, 30, "inbox/0", 30, &first, &ev0), WB_OK);
	cr_assert_eq(evlog_trim(l, &r, t0 + 60 * s, &n), WB_OK);
	cr_assert_eq(evlog_first(l), 30, "held at the consumer's applied, not 50");
	/* a second one further on changes nothing; the lowest holds */
	cr_assert_eq(serve(l, 80, "inbox/1", 80, &first, &ev0), WB_OK);
	cr_assert_eq(evlog_trim(l, &r, t0 + 70 * s, &n), WB_OK);
	cr_assert_eq(evlog_first(l), 30);

	/* the max age trims past it whatever it applied */
	cr_assert_eq(evlog_trim(l, &r, t0 + 90 * s, &n), WB_OK);
	cr_assert_eq(evlog_first(l), 40, "events older than 50 s go: %llu",
	    (unsigned long long)evlog_first(l));
	cr_assert_eq(serve(l, 31, "inbox/0", 30, &first, &ev0), WB_OK);
	cr_assert(first == 40 && ev0 == 40, "the consumer learns it is behind the trim point");

	/* positions survive a restart: the log still holds for inbox/0 at 30, so at 40 */
	evlog_close(l);
	hb_close(t);
	t = test_open("trim");
	cr_assert_eq(evlog_open(&l, t, FAM_LOG, "content/0", NULL), WB_OK);
	cr_assert_eq(evlog_first(l), 40);
	cr_assert_eq(evlog_last(l), 100);
	cr_assert_eq(evlog_trim(l, &r, t0 + 95 * s, &n), WB_OK);
	cr_assert_eq(evlog_first(l), 45, "the max age, not the retention (85): %llu",
	    (unsigned long long)evlog_first(l));

	/* consumers silent longer than the max age are forgotten; the last event always stays */
	cr_assert_eq(evlog_trim(l, &r, wb_now_ms() + 51 * s, &n), WB_OK);
	cr_assert_eq(evlog_first(l), 100, "every event went but the last");
	commit_at(l, 101, wb_now_ms());
	evlog_close(l);
	hb_close(t);
	t = test_open("trim");
	cr_assert_eq(evlog_open(&l, t, FAM_LOG, "content/0", NULL), WB_OK);
	cr_assert_eq(evlog_first(l), 100);
	cr_assert_eq(evlog_last(l), 101, "seqs go on after a trim and a restart");
	read_all_from(l, 100, 101);

	/* no retention: nothing goes */
	r.retention_ms = 0;
	cr_assert_eq(evlog_trim(l, &r, wb_now_ms() + 1000 * s, &n), WB_OK);
	cr_assert_eq(n, 0);
	cr_assert_eq(evlog_first(l), 100);
	evlog_close(l);
	hb_close(t);
}

Test(evlog, consumer_reports_checked, .fini = wbt_cleanup, .timeout = 120)
{
	hb_table *t = test_open("reports");
	evlog    *l = NULL;
	uint64_t  first, ev0, seq;
	char      name[40];

	cr_assert_eq(evlog_open(&l, t, FAM_LOG, "relation/1", NULL), WB_OK);
	cr_assert_eq(test_commit(l, t, 1, &seq), WB_OK);
	cr_assert_eq(serve(l, 1, "inbox/0", UINT64_MAX, &first, &ev0), WB_EINVAL, "no applied");
	cr_assert_eq(serve(l, 1, NULL, 3, &first, &ev0), WB_EINVAL, "applied alone");
	cr_assert_eq(serve(l, 1, "", 3, &first, &ev0), WB_EINVAL);
	cr_assert_eq(serve(l, 1, "inbox 0", 3, &first, &ev0), WB_EINVAL);
	cr_assert_eq(serve(l, 1, "inbox/01234567890123456789012345", 3, &first, &ev0), WB_EINVAL,
	    "32 bytes");
	cr_assert_eq(serve(l, 1, "inbox/0123456789012345678901234", 3, &first, &ev0), WB_OK);
	for (int i = 1; i < EVLOG_CONSUMERS_MAX; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		cr_assert_eq(serve(l, 1, name, 1, &first, &ev0), WB_OK);
	}
	cr_assert_eq(serve(l, 1, "one-more", 1, &first, &ev0), WB_ETOOBIG);
	cr_assert_eq(serve(l, 1, "c7", 1, &first, &ev0), WB_OK, "a known one still reports");
	cr_assert(first == 1 && ev0 == 1);
	evlog_close(l);
	hb_close(t);
	/* the whole table comes back */
	t = test_open("reports");
	cr_assert_eq(evlog_open(&l, t, FAM_LOG, "relation/1", NULL), WB_OK);
	cr_assert_eq(serve(l, 1, "one-more", 1, &first, &ev0), WB_ETOOBIG);
	evlog_close(l);
	hb_close(t);
}
