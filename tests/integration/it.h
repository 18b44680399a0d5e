/*
 * it.h - helpers of the end-to-end tests in tests/integration: a whole
 * cluster (wbt_cluster), SDK clients, reading whole timelines and user
 * lists page by page, and waiting until the inbox has applied every event
 * the content and relation logs hold (a poll with a deadline, never a
 * blind sleep).  Header-only: each *_test.c here is its own binary.
 *
 * Worker threads never call cr_assert (Criterion asserts belong to the
 * test's thread): they count failures with it_fail, and the test asserts
 * it_failures() == 0 at the end, printing the first few on stderr.
 */
#ifndef IT_H
#define IT_H

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_client.h"
#include "warble.h"
#include "wbt.h"
#include "wbt_cluster.h"

#define IT_PAGE       100   /* largest page the public API serves */
#define IT_TIMEOUT_MS 15000 /* per SDK call (scaled by wbt_ms) */
#define IT_FAIL_SHOWN 10    /* failures printed in full */

static wbt_cluster  it_cl;
static atomic_ulong it_nfail;

/* it_fail records a failure seen on any thread, printing the first few. */
static inline void __attribute__((format(printf, 1, 2))) it_fail(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&it_nfail, 1) < IT_FAIL_SHOWN) {
		va_start(ap, fmt);
		fprintf(stderr, "FAIL: ");
		vfprintf(stderr, fmt, ap);
		fprintf(stderr, "\n");
		va_end(ap);
	}
}

/* it_failures returns how many failures were recorded. */
static inline unsigned long
it_failures(void)
{
	return atomic_load(&it_nfail);
}

/* it_start_as starts the cluster with extra_env in shape (see wbt_cluster_start_as). */
static inline void
it_start_as(const char *const *extra_env, wbt_shape shape)
{
	cr_assert_eq(wbt_cluster_start_as(&it_cl, extra_env, shape), 0, "cluster did not start");
}

/* it_start starts the cluster with extra_env in the shape the test run names. */
static inline void
it_start(const char *const *extra_env)
{
	it_start_as(extra_env, WBT_ANY);
}

/* it_client opens an SDK client of the cluster's gateway. */
static inline warble_client *
it_client(void)
{
	warble_client *c = NULL;

	cr_assert_eq(warble_open(&c, it_cl.gateway_url, wbt_ms(IT_TIMEOUT_MS)), WARBLE_OK);
	return c;
}

/* it_join registers name and logs it in on c; returns its session token (strdup, or NULL after it_fail) and *uid. */
static inline char *
it_join(warble_client *c, const char *name, const char *password, uint64_t *uid)
{
	uint64_t again = 0;
	int      rc = warble_register(c, name, password, uid);

	if (rc == WARBLE_OK) {
		rc = warble_login(c, name, password, &again);
	}
	if (rc != WARBLE_OK || again != *uid || warble_token(c) == NULL) {
		it_fail("%s: register/login: %s: %s", name, warble_errname(rc), warble_errmsg(c));
		return NULL;
	}
	return strdup(warble_token(c));
}

/* it_rand is splitmix64 over a caller's own state (one per thread; seed it from the test's seed). */
static inline uint64_t
it_rand(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* it_secs returns the seconds since t0 (wbt_now_ms). */
static inline double
it_secs(long long t0)
{
	return (double)(wbt_now_ms() - t0) / 1000.0;
}

/* it_cmp_desc orders u64 newest (largest) first, for qsort. */
static inline int
it_cmp_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* it_cmp_asc orders u64 ascending, for qsort. */
static inline int
it_cmp_asc(const void *a, const void *b)
{
	return -it_cmp_desc(a, b);
}

/*
 * it_call sends one read-only request straight to a service (not through
 * the gateway); returns a wb_err.  A transport failure (UNAVAILABLE,
 * TIMEOUT) is retried for up to 10 s, since these are the test's own
 * probes; what the service says is returned as is.
 */
static inline int
it_call(const char *url, wb_obj *req, wb_obj **rep)
{
	rt_client_opts o = { .timeout_ms = wbt_ms(5000) };
	long long      deadline = wbt_now_ms() + wbt_ms(10000);
	int            rc;

	*rep = NULL;
	if (req == NULL) {
		return WB_ENOMEM;
	}
	for (;;) {
		rt_client *c = NULL;
		if ((rc = rt_client_open(&c, url, &o)) == WB_OK) {
			rc = rt_call(c, req, rep);
			rt_client_close(c);
		}
		if ((rc != WB_EUNAVAIL && rc != WB_ETIMEDOUT) || wbt_now_ms() > deadline) {
			break;
		}
		fprintf(stderr, "it: %s on %s: %s, retrying\n", wb_op_name(wb_op_of(req)), url,
		    wb_err_name(rc));
		wbt_sleep_ms(100);
	}
	wb_msg_free(req);
	return rc;
}

/* it_log_last asks content (post.log) or relation (rel.log) for the last seq of its event log. */
static inline uint64_t
it_log_last(const char *url, wb_op op)
{
	wb_obj  *req = wb_request(op), *rep = NULL;
	uint64_t last;

	cr_assert_not_null(req);
	wb_set_u64(req, WB_F_FROM, UINT64_MAX / 2);
	wb_set_u64(req, WB_F_LIMIT, 1);
	int rc = it_call(url, req, &rep);
	cr_assert_eq(rc, WB_OK, "%s: %s", wb_op_name(op), wb_err_name(rc));
	cr_assert(wb_get_u64(rep, WB_F_LAST, &last), "%s gave no last seq", wb_op_name(op));
	wb_msg_free(rep);
	return last;
}

/* it_gauge reads a named gauge from a service's stats (UINT64_MAX if absent or unreachable). */
static inline uint64_t
it_gauge(const char *url, const char *name)
{
	wb_obj  *rep = NULL;
	uint64_t v = it_call(url, wb_request(WB_OP_STATS), &rep) == WB_OK ? wbt_gauge(rep, name)
	                                                                  : UINT64_MAX;

	wb_msg_free(rep);
	return v;
}

/*
 * it_wait_inbox waits until the inbox has applied every event the
 * content and relation logs hold now (call it once every write was
 * acknowledged); returns the ms it took.  Fails the test at the deadline.
 */
static inline long long
it_wait_inbox(int timeout_ms)
{
	long long t0 = wbt_now_ms(), deadline = t0 + timeout_ms;
	uint64_t  c = it_log_last(it_cl.content_url, WB_OP_POST_LOG);
	uint64_t  r = it_log_last(it_cl.relation_url, WB_OP_REL_LOG);

	for (;;) {
		uint64_t ca = it_gauge(it_cl.inbox_url, "content_applied");
		uint64_t ra = it_gauge(it_cl.inbox_url, "relation_applied");
		if (ca != UINT64_MAX && ra != UINT64_MAX && ca >= c && ra >= r) {
			return wbt_now_ms() - t0;
		}
		cr_assert_lt(wbt_now_ms(), deadline,
		    "inbox never caught up: content %llu/%llu, relation %llu/%llu applied",
		    (unsigned long long)ca, (unsigned long long)c, (unsigned long long)ra,
		    (unsigned long long)r);
		wbt_sleep_ms(20);
	}
}

/*
 * it_home_all reads c's whole home timeline page by page into ids (and
 * authors, if not NULL), at most cap entries (a page that would overflow
 * is a failure); returns the count, or -1 after it_fail.
 */
static inline long
it_home_all(warble_client *c, const char *who, uint64_t *ids, uint64_t *authors, size_t cap)
{
	uint64_t before = 0;
	size_t   n = 0;

	for (int pages = 0; pages < 100000; pages++) {
		warble_posts_t *p = NULL;
		int             rc = warble_home(c, before, IT_PAGE, &p);
		if (rc != WARBLE_OK) {
			it_fail("%s: home (before %llu): %s: %s", who, (unsigned long long)before,
			    warble_errname(rc), warble_errmsg(c));
			return -1;
		}
		if (n + p->n > cap) {
			it_fail("%s: home holds more than %zu posts", who, cap);
			warble_posts_free(p);
			return -1;
		}
		for (size_t i = 0; i < p->n; i++) {
			ids[n] = p->posts[i].id;
			if (authors != NULL) {
				authors[n] = p->posts[i].author;
			}
			n++;
		}
		before = p->next;
		bool more = p->next != 0 && p->n > 0;
		warble_posts_free(p);
		if (!more) {
			return (long)n;
		}
	}
	it_fail("%s: home never ended", who);
	return -1;
}

/* it_timeline_all reads user name's whole timeline (posts ids, newest first) like it_home_all. */
static inline long
it_timeline_all(warble_client *c, const char *name, uint64_t *ids, size_t cap)
{
	uint64_t before = 0;
	size_t   n = 0;

	for (int pages = 0; pages < 100000; pages++) {
		warble_posts_t *p = NULL;
		int             rc = warble_timeline(c, name, before, IT_PAGE, &p);
		if (rc != WARBLE_OK) {
			it_fail("%s: timeline: %s: %s", name, warble_errname(rc), warble_errmsg(c));
			return -1;
		}
		if (n + p->n > cap) {
			it_fail("%s: timeline holds more than %zu posts", name, cap);
			warble_posts_free(p);
			return -1;
		}
		for (size_t i = 0; i < p->n; i++) {
			ids[n++] = p->posts[i].id;
		}
		before = p->next;
		bool more = p->next != 0 && p->n > 0;
		warble_posts_free(p);
		if (!more) {
			return (long)n;
		}
	}
	it_fail("%s: timeline never ended", name);
	return -1;
}

/* it_users_all reads the whole following (fans = false) or fans list of name into uids; returns the count or -1. */
static inline long
it_users_all(warble_client *c, const char *name, bool fans, uint64_t *uids, size_t cap)
{
	uint64_t after = 0;
	size_t   n = 0;

	for (int pages = 0; pages < 100000; pages++) {
		warble_users_t *u = NULL;
		int             rc = fans ? warble_fans(c, name, after, IT_PAGE, &u)
		                          : warble_following(c, name, after, IT_PAGE, &u);
		if (rc != WARBLE_OK) {
			it_fail("%s: %s: %s: %s", name, fans ? "fans" : "following",
			    warble_errname(rc), warble_errmsg(c));
			return -1;
		}
		if (n + u->n > cap) {
			it_fail(
			    "%s: %s list longer than %zu", name, fans ? "fans" : "following", cap);
			warble_users_free(u);
			return -1;
		}
		for (size_t i = 0; i < u->n; i++) {
			uids[n++] = u->users[i].uid;
		}
		after = u->next;
		bool more = u->next != 0 && u->n > 0;
		warble_users_free(u);
		if (!more) {
			return (long)n;
		}
	}
	it_fail("%s: list never ended", name);
	return -1;
}

/* it_same_ids compares a list read from the service with the model, naming the first difference. */
static inline bool
it_same_ids(const char *who, const char *what, const uint64_t *got, long ngot, const uint64_t *want,
    size_t nwant)
{
	if (ngot < 0) {
		return false;
	}
	for (size_t i = 0; i < (size_t)ngot && i < nwant; i++) {
		if (got[i] != want[i]) {
			it_fail("%s: %s differs at %zu of %zu: got %llu, want %llu", who, what, i,
			    nwant, (unsigned long long)got[i], (unsigned long long)want[i]);
			return false;
		}
	}
	if ((size_t)ngot != nwant) {
		it_fail("%s: %s has %ld entries, want %zu", who, what, ngot, nwant);
		return false;
	}
	return true;
}

/* it_check_list compares name's whole following (fans = false) or fans
 * list, in any order, with the uids want[0..n), which it sorts in place;
 * got is scratch space for cap uids. */
static inline bool
it_check_list(warble_client *c, const char *name, bool fans, uint64_t *want, size_t n,
    uint64_t *got, size_t cap)
{
	long k;

	qsort(want, n, sizeof(*want), it_cmp_asc);
	k = it_users_all(c, name, fans, got, cap);
	if (k > 0) {
		qsort(got, (size_t)k, sizeof(*got), it_cmp_asc);
	}
	return it_same_ids(name, fans ? "fans" : "following", got, k, want, n);
}

#define IT_MAX_THREADS 64

typedef struct it_worker {
	pthread_t thread;
	int       index;
	void (*job)(warble_client *c, int t);
} it_worker;

static inline void *
it_worker_run(void *arg)
{
	it_worker     *w = arg;
	warble_client *c = NULL;

	if (warble_open(&c, it_cl.gateway_url, wbt_ms(IT_TIMEOUT_MS)) != WARBLE_OK) {
		it_fail("worker %d: cannot open a client", w->index);
		return NULL;
	}
	w->job(c, w->index);
	warble_close(c);
	return NULL;
}

/* it_run runs job(client, t) for t = 0..nthreads-1 on threads of their own,
 * each with its own client, and returns the seconds it took. */
static inline double
it_run(int nthreads, void (*job)(warble_client *c, int t))
{
	it_worker w[IT_MAX_THREADS];
	long long t0 = wbt_now_ms();

	cr_assert(nthreads > 0 && nthreads <= IT_MAX_THREADS, "it_run: %d threads", nthreads);
	for (int i = 0; i < nthreads; i++) {
		w[i] = (it_worker) { .index = i, .job = job };
		cr_assert_eq(pthread_create(&w[i].thread, NULL, it_worker_run, &w[i]), 0);
	}
	for (int i = 0; i < nthreads; i++) {
		pthread_join(w[i].thread, NULL);
	}
	return it_secs(t0);
}

/* it_profile_counts checks name's profile counts against the model. */
static inline bool
it_profile_counts(warble_client *c, const char *name, uint64_t following, uint64_t followers)
{
	warble_user_t *u = NULL;
	int            rc = warble_profile(c, name, &u);

	if (rc != WARBLE_OK) {
		it_fail("%s: profile: %s: %s", name, warble_errname(rc), warble_errmsg(c));
		return false;
	}
	bool ok = u->following == following && u->followers == followers;
	if (!ok) {
		it_fail("%s: profile counts following %llu followers %llu, want %llu %llu", name,
		    (unsigned long long)u->following, (unsigned long long)u->followers,
		    (unsigned long long)following, (unsigned long long)followers);
	}
	warble_user_free(u);
	return ok;
}

/* it_fini closes what a test opened: every daemon and the temp dir. */
static inline void
it_fini(void)
{
	wbt_cleanup();
}

#endif
