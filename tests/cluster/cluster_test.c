/*
 * cluster_test.c - Warble across hosts (suite "cluster"): the user
 * service, content and the gateway once, relation in two shards and the
 * inbox in three, each process on a host of its own (wbc_cluster.h).
 *
 * Requests about a follower go straight to its relation shard, home
 * timelines to the reader's inbox shard (wb_uid_shard), posts through the
 * gateway with the SDK; a model in the test says what every home must
 * hold.  The tests: follows spread over the shards and a misrouted one;
 * an account whose few thousand fans live on every inbox shard; an inbox
 * shard killed (-9) under publish load and restarted; one cut off the
 * network for 5 s under load.  Then the harness itself: a host cut and
 * killed, and nothing left behind after a close, a crash or an earlier
 * run.  Needs root (each test skips otherwise).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt_client.h"
#include "warble.h"
#include "wb_slot.h"
#include "wbc.h"
#include "wbc_cluster.h"
#include "wbt.h"

#define CT_RELATION    2
#define CT_INBOX       3
#define CT_CALL_MS     5000 /* a direct call's deadline (scaled) */
#define CT_SDK_MS      15000
#define CT_CUT_MS      5000 /* how long a partition lasts */
#define CT_PROBE_MS    1500 /* the deadline of a call to a shard that is cut off */
#define CT_PAGE        100  /* inbox.home's largest page */
#define CT_HOME_MAX    800  /* posts an inbox keeps (WARBLE_INBOX_MAX) */
#define CT_AUTHORS     8
#define CT_READERS     60
#define CT_USERS       (CT_AUTHORS + CT_READERS)
#define CT_CROWD       1200 /* readers of authors 0 and 1 under load: wide fan-outs in flight */
#define CT_PER_AUTHOR  60   /* posts of one author under load, at most */
#define CT_POSTS_MAX   2048 /* posts of one test */
#define CT_THREADS     4    /* publishing threads */
#define CT_LOAD_GAP_MS 100  /* each thread's pause after a post: about 40 posts a second */
#define CT_KILLS       3    /* kill -9 and restart of one inbox shard, under load */
#define CT_FANS        3000
#define CT_OTHERS      300
#define CT_CELEB_POST  4
#define CT_PASSWORD    "cluster-pass-1"
#define CT_FAIL_SHOWN  10

/* A post the gateway acknowledged. */
typedef struct ct_post {
	uint64_t id, author;
} ct_post;

/* The users, the follows and the posts of a test: what every home must hold. */
typedef struct ct_world {
	unsigned        nauthors, nusers; /* authors are users 0..nauthors-1 */
	uint64_t        uid[CT_USERS + CT_CROWD];
	warble_client  *sdk[CT_AUTHORS]; /* each author's session */
	bool            follows[CT_USERS + CT_CROWD][CT_AUTHORS];
	pthread_mutex_t mu;
	ct_post         posts[CT_POSTS_MAX];
	size_t          nposts;
	atomic_bool     stop;
} ct_world;

static wbc_net     *ct_net;
static wbc_cluster  ct_cl;
static rt_client   *ct_user, *ct_content, *ct_rel[CT_RELATION], *ct_inbox[CT_INBOX];
static ct_world     ct_w = { .mu = PTHREAD_MUTEX_INITIALIZER };
static atomic_ulong ct_nfail;

/*
 * ct_fail records a failure seen on any thread (Criterion asserts belong to the test's), printing
 * the first few.
 */
static void __attribute__((format(printf, 1, 2))) ct_fail(const char *fmt, ...)
{
	va_list ap;

	if (atomic_fetch_add(&ct_nfail, 1) < CT_FAIL_SHOWN) {
		va_start(ap, fmt);
		fprintf(stderr, "FAIL: ");
		vfprintf(stderr, fmt, ap);
		fprintf(stderr, "\n");
		va_end(ap);
	}
}

/* ct_rand is splitmix64 over the caller's state. */
static uint64_t
ct_rand(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* ct_open_net opens the hosts' network, or skips the test where it cannot be made. */
static void
ct_open_net(void)
{
	const char *mode = getenv("WARBLE_TEST_MODE");
	char        why[512];
	int         rc;

	if (mode != NULL && strcmp(mode, "one") == 0) {
		cr_skip_test("the cluster suite runs one process per host whatever the mode: "
		             "make test runs it");
	}
	rc = wbc_open(&ct_net, why, sizeof(why));
	if (rc == WBC_SKIP) {
		cr_skip_test("%s", why);
	}
	cr_assert_eq(rc, 0, "cannot make the hosts' network: %s", why);
}

/*
 * ct_start starts the cluster (relation x2, inbox x3, the rest once) and the test's clients of it.
 */
static void
ct_start(void)
{
	const wbc_shape s = { .content = 1, .relation = CT_RELATION, .inbox = CT_INBOX };
	rt_client_opts  o = { .timeout_ms = wbt_ms(CT_CALL_MS) };
	long long       t0 = wbt_now_ms();

	ct_open_net();
	cr_assert_eq(wbc_cluster_start(&ct_cl, ct_net, &s, NULL), 0, "the cluster did not start");
	cr_assert_eq(rt_client_open(&ct_user, ct_cl.user_url, &o), WB_OK);
	cr_assert_eq(rt_client_open(&ct_content, ct_cl.content_url[0], &o), WB_OK);
	for (int j = 0; j < CT_RELATION; j++) {
		cr_assert_eq(rt_client_open(&ct_rel[j], ct_cl.relation_url[j], &o), WB_OK);
	}
	for (int k = 0; k < CT_INBOX; k++) {
		cr_assert_eq(rt_client_open(&ct_inbox[k], ct_cl.inbox_url[k], &o), WB_OK);
	}
	fprintf(stderr, "cluster: 8 hosts up in %lld ms (gateway %s)\n", wbt_now_ms() - t0,
	    ct_cl.gateway_url);
}

/* ct_fini closes the test's clients and the SDK sessions, then the network and the daemons. */
static void
ct_fini(void)
{
	for (unsigned a = 0; a < CT_AUTHORS; a++) {
		warble_close(ct_w.sdk[a]);
		ct_w.sdk[a] = NULL;
	}
	rt_client_close(ct_user);
	rt_client_close(ct_content);
	for (int j = 0; j < CT_RELATION; j++) {
		rt_client_close(ct_rel[j]);
	}
	for (int k = 0; k < CT_INBOX; k++) {
		rt_client_close(ct_inbox[k]);
	}
	wbc_fini();
}

/* ct_stop stops every daemon (each must exit 0) and removes the hosts; nothing may be left. */
static void
ct_stop(void)
{
	char prefix[32], what[64];

	cr_assert_eq(wbc_cluster_stop(&ct_cl, wbt_ms(15000)), 0, "a daemon did not stop cleanly");
	wbc_prefix(prefix, sizeof(prefix), (int)getpid());
	cr_assert_eq(wbc_close(ct_net), 0);
	ct_net = NULL;
	cr_assert_eq(wbc_leftovers(prefix, what, sizeof(what)), 0, "left behind: %s", what);
}

/*
 * ct_read sends a read-only request (freed) on c and retries a transport
 * failure (UNAVAILABLE, TIMEOUT) for up to 20 s: a shard just restarted
 * or healed may take a moment.  What the service says is returned as is.
 */
static int
ct_read(rt_client *c, wb_obj *req, wb_obj **rep)
{
	long long deadline = wbt_now_ms() + wbt_ms(20000);
	int       rc;

	for (;;) {
		*rep = NULL;
		rc = rt_call(c, req, rep);
		if ((rc != WB_EUNAVAIL && rc != WB_ETIMEDOUT) || wbt_now_ms() > deadline) {
			break;
		}
		wbt_sleep_ms(100);
	}
	wb_msg_free(req);
	return rc;
}

/* ct_gauge reads a gauge of the service of c (UINT64_MAX if it does not answer or lacks it). */
static uint64_t
ct_gauge(rt_client *c, const char *name)
{
	wb_obj  *rep = NULL;
	uint64_t v =
	    ct_read(c, wb_request(WB_OP_STATS), &rep) == WB_OK ? wbt_gauge(rep, name) : UINT64_MAX;

	wb_msg_free(rep);
	return v;
}

/* ct_log_last asks content (post.log) or a relation shard (rel.log) for the last seq of its log. */
static uint64_t
ct_log_last(rt_client *c, wb_op op)
{
	wb_obj  *req = wb_request(op), *rep = NULL;
	uint64_t last = 0;
	int      rc;

	cr_assert_not_null(req);
	wb_set_u64(req, WB_F_FROM, UINT64_MAX / 2);
	wb_set_u64(req, WB_F_LIMIT, 1);
	rc = ct_read(c, req, &rep);
	cr_assert_eq(rc, WB_OK, "%s: %s", wb_op_name(op), wb_err_name(rc));
	cr_assert(wb_get_u64(rep, WB_F_LAST, &last), "%s gave no last seq", wb_op_name(op));
	wb_msg_free(rep);
	return last;
}

/* ct_rel_of returns the relation shards [*lo, *hi) whose slots overlap inbox shard k's. */
static void
ct_rel_of(unsigned k, unsigned *lo, unsigned *hi)
{
	unsigned slo, shi;

	wb_shard_slots((wb_shard) { k, CT_INBOX }, &slo, &shi);
	*lo = wb_slot_shard(slo, CT_RELATION);
	*hi = wb_slot_shard(shi - 1, CT_RELATION) + 1;
}

/*
 * ct_wait_caught_up waits until every inbox shard has applied all that
 * the content log and the logs of its relation shards hold now (call it
 * once every write was acknowledged) and says events_behind 0; fails the
 * test at the deadline.  Returns the ms it took.
 */
static long long
ct_wait_caught_up(int timeout_ms)
{
	long long t0 = wbt_now_ms(), deadline = t0 + timeout_ms;
	uint64_t  content = ct_log_last(ct_content, WB_OP_POST_LOG), rel[CT_RELATION];

	for (int j = 0; j < CT_RELATION; j++) {
		rel[j] = ct_log_last(ct_rel[j], WB_OP_REL_LOG);
	}
	for (unsigned k = 0; k < CT_INBOX; k++) {
		unsigned lo, hi;
		uint64_t want = 0, ca = 0, ra = 0, behind = 0;

		ct_rel_of(k, &lo, &hi);
		for (unsigned j = lo; j < hi; j++) {
			want += rel
			    [j]; /* relation_applied sums the applied seqs of its relation shards */
		}
		for (;;) {
			ca = ct_gauge(ct_inbox[k], "content_applied");
			ra = ct_gauge(ct_inbox[k], "relation_applied");
			behind = ct_gauge(ct_inbox[k], "events_behind");
			if (ca != UINT64_MAX && ra != UINT64_MAX && ca >= content && ra >= want &&
			    behind == 0) {
				break;
			}
			cr_assert_lt(wbt_now_ms(), deadline,
			    "inbox %u never caught up: content %llu of %llu, relation %llu of %llu "
			    "applied, events_behind %llu",
			    k, (unsigned long long)ca, (unsigned long long)content,
			    (unsigned long long)ra, (unsigned long long)want,
			    (unsigned long long)behind);
			wbt_sleep_ms(20);
		}
	}
	return wbt_now_ms() - t0;
}

/*
 * ct_register_many registers prefix0 .. prefix<n-1> with user.register_many; their uids go to uids.
 */
static void
ct_register_many(const char *prefix, size_t n, uint64_t *uids)
{
	wb_obj         *req = wb_request(WB_OP_USER_REGISTER_MANY), *rep = NULL;
	const uint64_t *got;
	size_t          ngot = 0;
	int             rc;

	cr_assert_not_null(req);
	wb_set_cstr(req, WB_F_NAME, prefix);
	wb_set_cstr(req, WB_F_PASSWORD, CT_PASSWORD);
	wb_set_u64(req, WB_F_FROM, 0);
	wb_set_u64(req, WB_F_LIMIT, n);
	rc = wbt_call(ct_user, req, &rep);
	cr_assert_eq(rc, WB_OK, "user.register_many %s: %s", prefix, wb_err_name(rc));
	cr_assert(wb_get_u64s(rep, WB_F_UIDS, &got, &ngot) && ngot == n,
	    "user.register_many %s gave %zu uids, want %zu", prefix, ngot, n);
	memcpy(uids, got, n * sizeof(*uids));
	wb_msg_free(rep);
}

/*
 * ct_join registers name through the gateway with the SDK and logs in; returns the session and
 * *uid.
 */
static warble_client *
ct_join(const char *name, uint64_t *uid)
{
	warble_client *c = NULL;
	uint64_t       again = 0;
	int            rc;

	cr_assert_eq(warble_open(&c, ct_cl.gateway_url, wbt_ms(CT_SDK_MS)), WARBLE_OK);
	rc = warble_register(c, name, CT_PASSWORD, uid);
	cr_assert_eq(
	    rc, WARBLE_OK, "register %s: %s: %s", name, warble_errname(rc), warble_errmsg(c));
	rc = warble_login(c, name, CT_PASSWORD, &again);
	cr_assert_eq(rc, WARBLE_OK, "login %s: %s: %s", name, warble_errname(rc), warble_errmsg(c));
	cr_assert_eq(again, *uid);
	return c;
}

/*
 * ct_follow_on sends rel.follow {uid, target} to relation shard j; returns the code, the reply in
 * *rep if not NULL.
 */
static int
ct_follow_on(unsigned j, uint64_t uid, uint64_t target, wb_obj **rep)
{
	wb_obj *req = wb_request(WB_OP_REL_FOLLOW);

	cr_assert_not_null(req);
	wb_set_u64(req, WB_F_UID, uid);
	wb_set_u64(req, WB_F_TARGET, target);
	return wbt_call(ct_rel[j], req, rep);
}

/* ct_follow makes uid follow target on uid's relation shard. */
static void
ct_follow(uint64_t uid, uint64_t target)
{
	int rc = ct_follow_on(wb_uid_shard(uid, CT_RELATION), uid, target, NULL);

	cr_assert_eq(rc, WB_OK, "rel.follow %llu -> %llu: %s", (unsigned long long)uid,
	    (unsigned long long)target, wb_err_name(rc));
}

/*
 * ct_follow_many makes each of uids[0..n) follow target, with one rel.follow_many per relation
 * shard.
 */
static void
ct_follow_many(uint64_t target, const uint64_t *uids, size_t n)
{
	static uint64_t part[CT_RELATION][CT_CROWD + CT_USERS];
	size_t          npart[CT_RELATION] = { 0 };
	wb_obj         *req, *rep = NULL;

	cr_assert_leq(n, CT_CROWD + CT_USERS);
	for (size_t i = 0; i < n; i++) {
		unsigned j = wb_uid_shard(uids[i], CT_RELATION);
		part[j][npart[j]++] = uids[i];
	}
	for (unsigned j = 0; j < CT_RELATION; j++) {
		req = wb_request(WB_OP_REL_FOLLOW_MANY);
		wb_set_u64(req, WB_F_TARGET, target);
		wb_set_u64s(req, WB_F_UIDS, part[j], npart[j]);
		int rc = wbt_call(ct_rel[j], req, &rep);
		cr_assert_eq(rc, WB_OK, "rel.follow_many on shard %u: %s", j, wb_err_name(rc));
		cr_assert_eq(wb_u64(rep, WB_F_COUNT, 0), npart[j]);
		wb_msg_free(rep);
	}
}

/*
 * ct_world_make makes the authors (SDK), the readers (user.register_many)
 * and random follows, each sent to the follower's relation shard; with
 * crowd, CT_CROWD more readers who follow authors 0 and 1.
 */
static void
ct_world_make(uint64_t seed, bool crowd)
{
	uint64_t rng = seed;
	unsigned per_rel[CT_RELATION] = { 0 }, per_inbox[CT_INBOX] = { 0 };

	ct_w.nauthors = CT_AUTHORS;
	ct_w.nusers = CT_USERS;
	for (unsigned a = 0; a < CT_AUTHORS; a++) {
		char name[32];
		snprintf(name, sizeof(name), "author%u", a);
		ct_w.sdk[a] = ct_join(name, &ct_w.uid[a]);
	}
	ct_register_many("reader", CT_READERS, ct_w.uid + CT_AUTHORS);
	for (unsigned u = 0; u < CT_USERS; u++) {
		per_rel[wb_uid_shard(ct_w.uid[u], CT_RELATION)]++;
		per_inbox[wb_uid_shard(ct_w.uid[u], CT_INBOX)]++;
		for (unsigned a = 0; a < CT_AUTHORS; a++) {
			/* readers follow an author in three, authors one another in four */
			bool f = u != a && ct_rand(&rng) % (u < CT_AUTHORS ? 4 : 3) == 0;
			ct_w.follows[u][a] = f;
			if (f) {
				ct_follow(ct_w.uid[u], ct_w.uid[a]);
			}
		}
	}
	if (crowd) {
		uint64_t *c = ct_w.uid + CT_USERS;
		ct_register_many("crowd", CT_CROWD, c);
		for (unsigned a = 0; a < 2; a++) {
			ct_follow_many(ct_w.uid[a], c, CT_CROWD);
		}
		for (unsigned u = CT_USERS; u < CT_USERS + CT_CROWD; u++) {
			ct_w.follows[u][0] = ct_w.follows[u][1] = true;
		}
		ct_w.nusers += CT_CROWD;
	}
	for (int j = 0; j < CT_RELATION; j++) {
		cr_assert_gt(
		    per_rel[j], 0, "no user on relation shard %d: the test proves nothing", j);
	}
	for (int k = 0; k < CT_INBOX; k++) {
		cr_assert_gt(
		    per_inbox[k], 0, "no user on inbox shard %d: the test proves nothing", k);
	}
}

/*
 * ct_publish posts as author a through the gateway and records the post; false (after ct_fail) if
 * it failed.
 */
static bool
ct_publish(unsigned a, unsigned n)
{
	char     text[64];
	uint64_t id = 0;
	int      rc;

	snprintf(text, sizeof(text), "post %u of author %u", n, a);
	if ((rc = warble_post(ct_w.sdk[a], text, &id)) != WARBLE_OK || id == 0) {
		ct_fail("author %u: post %u: %s: %s", a, n, warble_errname(rc),
		    warble_errmsg(ct_w.sdk[a]));
		return false;
	}
	pthread_mutex_lock(&ct_w.mu);
	if (ct_w.nposts < CT_POSTS_MAX) {
		ct_w.posts[ct_w.nposts++] = (ct_post) { id, ct_w.uid[a] };
	}
	pthread_mutex_unlock(&ct_w.mu);
	return true;
}

/* ct_nposts returns how many posts were acknowledged so far. */
static size_t
ct_nposts(void)
{
	pthread_mutex_lock(&ct_w.mu);
	size_t n = ct_w.nposts;
	pthread_mutex_unlock(&ct_w.mu);
	return n;
}

/*
 * ct_load_main publishes as the authors of thread t in turn, paced, until told to stop or each has
 * posted CT_PER_AUTHOR.
 */
static void *
ct_load_main(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;

	for (unsigned n = 0; n < CT_PER_AUTHOR && !atomic_load(&ct_w.stop); n++) {
		for (unsigned a = t; a < CT_AUTHORS && !atomic_load(&ct_w.stop); a += CT_THREADS) {
			ct_publish(a, n);
			wbt_sleep_ms(wbt_ms(CT_LOAD_GAP_MS)); /* as many posts in a slower build */
		}
	}
	return NULL;
}

/* ct_load_start starts the publishing threads. */
static void
ct_load_start(pthread_t *th)
{
	atomic_store(&ct_w.stop, false);
	for (uintptr_t t = 0; t < CT_THREADS; t++) {
		cr_assert_eq(pthread_create(&th[t], NULL, ct_load_main, (void *)t), 0);
	}
}

/* ct_load_stop stops them and waits for them. */
static void
ct_load_stop(pthread_t *th)
{
	atomic_store(&ct_w.stop, true);
	for (int t = 0; t < CT_THREADS; t++) {
		pthread_join(th[t], NULL);
	}
}

/* ct_wait_posts waits (bounded) until at least n posts were acknowledged; false at the deadline. */
static bool
ct_wait_posts(size_t n, int timeout_ms)
{
	long long deadline = wbt_now_ms() + timeout_ms;

	while (ct_nposts() < n) {
		if (wbt_now_ms() > deadline) {
			return false;
		}
		wbt_sleep_ms(10);
	}
	return true;
}

/* ct_home_req makes inbox.home {uid, limit, before?}. */
static wb_obj *
ct_home_req(uint64_t uid, uint64_t before)
{
	wb_obj *req = wb_request(WB_OP_INBOX_HOME);

	cr_assert_not_null(req);
	wb_set_u64(req, WB_F_UID, uid);
	wb_set_u64(req, WB_F_LIMIT, CT_PAGE);
	if (before != 0) {
		wb_set_u64(req, WB_F_BEFORE, before);
	}
	return req;
}

/*
 * ct_home reads uid's whole home from its inbox shard, page by page, into ids and authors; the
 * count, or -1 after ct_fail.
 */
static long
ct_home(uint64_t uid, uint64_t *ids, uint64_t *authors, size_t cap)
{
	unsigned k = wb_uid_shard(uid, CT_INBOX);
	uint64_t before = 0;
	size_t   n = 0;

	for (int pages = 0; pages <= CT_HOME_MAX / CT_PAGE + 1; pages++) {
		wb_obj       *rep = NULL;
		const wb_obj *posts = NULL;
		size_t        np = 0;
		int           rc = ct_read(ct_inbox[k], ct_home_req(uid, before), &rep);

		if (rc != WB_OK) {
			ct_fail("inbox.home %llu on shard %u: %s", (unsigned long long)uid, k,
			    wb_err_name(rc));
			wb_msg_free(rep);
			return -1;
		}
		(void)wb_get_objs(rep, WB_F_POSTS, &posts, &np);
		for (size_t i = 0; i < np && n < cap; i++, n++) {
			ids[n] = wb_u64(&posts[i], WB_F_ID, 0);
			authors[n] = wb_u64(&posts[i], WB_F_AUTHOR, 0);
		}
		before = wb_u64(rep, WB_F_NEXT, 0);
		wb_msg_free(rep);
		if (before == 0 || np == 0) {
			return (long)n;
		}
	}
	ct_fail("inbox.home %llu: more pages than an inbox keeps", (unsigned long long)uid);
	return -1;
}

/* ct_cmp_desc orders ids newest (largest) first. */
static int
ct_cmp_desc(const void *a, const void *b)
{
	uint64_t x = ((const ct_post *)a)->id, y = ((const ct_post *)b)->id;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* ct_check_home compares uid's home with want[0..n) (newest first); false after ct_fail. */
static bool
ct_check_home(const char *who, uint64_t uid, const ct_post *want, size_t n)
{
	static uint64_t ids[CT_HOME_MAX + CT_PAGE], authors[CT_HOME_MAX + CT_PAGE];
	long            got = ct_home(uid, ids, authors, CT_HOME_MAX + CT_PAGE);

	if (got < 0) {
		return false;
	}
	for (size_t i = 0; i < (size_t)got && i < n; i++) {
		if (ids[i] != want[i].id || authors[i] != want[i].author) {
			ct_fail("%s %llu (inbox %u): post %zu of %zu is %llu by %llu, want %llu by "
			        "%llu",
			    who, (unsigned long long)uid, wb_uid_shard(uid, CT_INBOX), i, n,
			    (unsigned long long)ids[i], (unsigned long long)authors[i],
			    (unsigned long long)want[i].id, (unsigned long long)want[i].author);
			return false;
		}
	}
	if ((size_t)got != n) {
		ct_fail("%s %llu (inbox %u) holds %ld posts, want %zu", who,
		    (unsigned long long)uid, wb_uid_shard(uid, CT_INBOX), got, n);
		return false;
	}
	return true;
}

/*
 * ct_check_homes checks every user's home against the model: the posts of whom it follows and its
 * own, newest first.
 */
static void
ct_check_homes(void)
{
	static ct_post want[CT_POSTS_MAX];
	unsigned long  before = atomic_load(&ct_nfail);

	for (unsigned u = 0; u < ct_w.nusers; u++) {
		size_t n = 0;

		for (size_t p = 0; p < ct_w.nposts; p++) {
			for (unsigned a = 0; a < ct_w.nauthors; a++) {
				if (ct_w.posts[p].author == ct_w.uid[a] &&
				    (ct_w.follows[u][a] || u == a)) {
					want[n++] = ct_w.posts[p];
				}
			}
		}
		cr_assert_leq(n, CT_HOME_MAX, "the model overflows an inbox: make fewer posts");
		qsort(want, n, sizeof(want[0]), ct_cmp_desc);
		ct_check_home(u < ct_w.nauthors ? "author" : "reader", ct_w.uid[u], want, n);
	}
	cr_assert_eq(atomic_load(&ct_nfail), before, "%lu homes differ from the model",
	    atomic_load(&ct_nfail) - before);
}

/* ct_reader_on returns a user of the world whose inbox is on shard k and who follows someone. */
static uint64_t
ct_reader_on(unsigned k)
{
	for (unsigned u = CT_AUTHORS; u < ct_w.nusers; u++) {
		bool any = false;
		for (unsigned a = 0; a < CT_AUTHORS; a++) {
			any |= ct_w.follows[u][a];
		}
		if (any && wb_uid_shard(ct_w.uid[u], CT_INBOX) == k) {
			return ct_w.uid[u];
		}
	}
	cr_assert_fail("no reader who follows someone on inbox shard %u", k);
	return 0;
}

/*
 * Follows spread over both relation shards, each sent to the follower's
 * shard; a misrouted one is refused and names the right shard; posts go
 * through the gateway; every home on its inbox shard then holds exactly
 * the posts of whom the user follows.
 */
Test(cluster, follows_and_homes, .fini = ct_fini, .timeout = 240)
{
	ct_start();
	ct_world_make(0xC1u, false);

	/* a misrouted rel.follow: WRONG_SHARD naming the follower's shard, and nothing written */
	uint64_t r = ct_w.uid[CT_AUTHORS], a = 0;
	unsigned right = wb_uid_shard(r, CT_RELATION), owner = 99;
	wb_obj  *rep = NULL, *req;
	for (unsigned i = 0; i < CT_AUTHORS; i++) {
		if (!ct_w.follows[CT_AUTHORS][i]) {
			a = ct_w.uid[i];
		}
	}
	cr_assert_neq(a, 0);
	int rc = ct_follow_on(1 - right, r, a, &rep);
	cr_assert_eq(rc, WB_EWRONGSHARD, "a follow on the wrong shard: %s", wb_err_name(rc));
	cr_assert(rep != NULL && wb_get_u64(rep, WB_F_SHARD, &(uint64_t) { 0 }));
	owner = (unsigned)wb_u64(rep, WB_F_SHARD, 99);
	cr_assert_eq(
	    owner, right, "WRONG_SHARD names shard %u, the follower's is %u", owner, right);
	wb_msg_free(rep);
	req = wb_request(WB_OP_REL_IS_FOLLOWING);
	wb_set_u64(req, WB_F_UID, r);
	wb_set_u64(req, WB_F_TARGET, a);
	cr_assert_eq(wbt_call(ct_rel[right], req, &rep), WB_OK);
	bool followed = true;
	cr_assert(wb_get_bool(rep, WB_F_FOLLOWED, &followed) && !followed,
	    "the refused follow was written");
	wb_msg_free(rep);

	/* rel.counts: each shard's part; their sums are the model's */
	for (unsigned i = 0; i < CT_AUTHORS; i++) {
		uint64_t following = 0, followers = 0, want_following = 0, want_followers = 0;
		for (unsigned u = 0; u < CT_USERS; u++) {
			want_followers += ct_w.follows[u][i];
		}
		for (unsigned x = 0; x < CT_AUTHORS; x++) {
			want_following += ct_w.follows[i][x];
		}
		for (int j = 0; j < CT_RELATION; j++) {
			const wb_obj *users;
			size_t        n = 0;
			req = wb_request(WB_OP_REL_COUNTS);
			wb_set_u64s(req, WB_F_UIDS, &ct_w.uid[i], 1);
			cr_assert_eq(wbt_call(ct_rel[j], req, &rep), WB_OK);
			cr_assert(wb_get_objs(rep, WB_F_USERS, &users, &n) && n == 1);
			following += wb_u64(&users[0], WB_F_FOLLOWING, 0);
			followers += wb_u64(&users[0], WB_F_FOLLOWERS, 0);
			wb_msg_free(rep);
		}
		cr_assert_eq(followers, want_followers,
		    "author %u: %llu followers over the shards, "
		    "want %llu",
		    i, (unsigned long long)followers, (unsigned long long)want_followers);
		cr_assert_eq(following, want_following);
	}

	/* three posts each through the gateway, then every home */
	for (unsigned n = 0; n < 3; n++) {
		for (unsigned i = 0; i < CT_AUTHORS; i++) {
			cr_assert(ct_publish(i, n));
		}
	}
	long long ms = ct_wait_caught_up(wbt_ms(30000));
	ct_check_homes();

	/* a second round: a follow (backfilled), an unfollow (purged) or none for each reader, a
	 * delete, one more post each; then every home again */
	uint64_t rng = 0xC1C1u;
	unsigned nfollow = 0, nunfollow = 0;
	for (unsigned u = CT_AUTHORS; u < CT_USERS; u++) {
		unsigned x = (unsigned)(ct_rand(&rng) % (CT_AUTHORS + 2));
		if (x >= CT_AUTHORS) {
			continue;
		} else if (ct_w.follows[u][x]) {
			req = wb_request(WB_OP_REL_UNFOLLOW);
			wb_set_u64(req, WB_F_UID, ct_w.uid[u]);
			wb_set_u64(req, WB_F_TARGET, ct_w.uid[x]);
			rc = wbt_call(ct_rel[wb_uid_shard(ct_w.uid[u], CT_RELATION)], req, NULL);
			cr_assert_eq(rc, WB_OK, "rel.unfollow: %s", wb_err_name(rc));
			nunfollow++;
		} else {
			ct_follow(ct_w.uid[u], ct_w.uid[x]);
			nfollow++;
		}
		ct_w.follows[u][x] = !ct_w.follows[u][x];
	}
	cr_assert(nfollow > 0 && nunfollow > 0);
	cr_assert_eq(ct_w.posts[0].author, ct_w.uid[0]);
	rc = warble_delete(ct_w.sdk[0], ct_w.posts[0].id);
	cr_assert_eq(rc, WARBLE_OK, "delete: %s", warble_errmsg(ct_w.sdk[0]));
	memmove(&ct_w.posts[0], &ct_w.posts[1], (ct_w.nposts - 1) * sizeof(ct_w.posts[0]));
	ct_w.nposts--;
	for (unsigned i = 0; i < CT_AUTHORS; i++) {
		cr_assert(ct_publish(i, 3));
	}
	ms += ct_wait_caught_up(wbt_ms(30000));
	ct_check_homes();

	/* a reader's home asked of another inbox shard: WRONG_SHARD naming its own */
	unsigned k = wb_uid_shard(r, CT_INBOX);
	rc = wbt_call(ct_inbox[(k + 1) % CT_INBOX], ct_home_req(r, 0), &rep);
	cr_assert_eq(rc, WB_EWRONGSHARD, "inbox.home on the wrong shard: %s", wb_err_name(rc));
	cr_assert_eq(wb_u64(rep, WB_F_SHARD, 99), k);
	wb_msg_free(rep);
	fprintf(stderr,
	    "cluster: %u users, %zu posts, %u follows and %u unfollows later; inboxes "
	    "caught up in %lld ms\n",
	    CT_USERS, ct_w.nposts, nfollow, nunfollow, ms);
	ct_stop();
}

/*
 * ct_fans_on asks relation shard j for celeb's fans in slots [lo, hi), page by page; adds them to
 * *n in out.
 */
static void
ct_fans_on(
    unsigned j, uint64_t celeb, unsigned lo, unsigned hi, uint64_t *out, size_t *n, size_t cap)
{
	uint64_t after = 0, slots[2] = { lo, hi };

	for (int pages = 0; pages < 100; pages++) {
		wb_obj         *req = wb_request(WB_OP_REL_FANS), *rep = NULL;
		const uint64_t *uids;
		size_t          nu = 0;

		wb_set_u64(req, WB_F_UID, celeb);
		wb_set_u64s(req, WB_F_SLOTS, slots, 2);
		wb_set_u64(req, WB_F_LIMIT, 1000);
		if (after != 0) {
			wb_set_u64(req, WB_F_AFTER, after);
		}
		cr_assert_eq(wbt_call(ct_rel[j], req, &rep), WB_OK);
		(void)wb_get_u64s(rep, WB_F_UIDS, &uids, &nu);
		cr_assert_leq(*n + nu, cap);
		memcpy(out + *n, uids, nu * sizeof(*uids));
		*n += nu;
		after = wb_u64(rep, WB_F_NEXT, 0);
		wb_msg_free(rep);
		if (after == 0) {
			return;
		}
	}
	cr_assert_fail("rel.fans never ended");
}

/* ct_cmp_u64 orders u64 ascending. */
static int
ct_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * An account with a few thousand fans on every inbox shard: the follows
 * go to each follower's relation shard (rel.follow_many split by shard),
 * rel.fans of each shard gives its part of each inbox's slot range, and
 * each post lands in exactly its fans' inboxes, summed over the shards
 * (cells written), and in no other.
 */
Test(cluster, fans_on_every_shard, .fini = ct_fini, .timeout = 240)
{
	static uint64_t fans[CT_FANS], others[CT_OTHERS], part[CT_RELATION][CT_FANS], got[CT_FANS];
	static ct_post  posts[CT_CELEB_POST];
	size_t          npart[CT_RELATION] = { 0 };
	unsigned        per_inbox[CT_INBOX] = { 0 };
	uint64_t        celeb, base[CT_INBOX], count = 0;
	wb_obj         *req, *rep = NULL;
	int             rc;

	ct_start();
	ct_w.sdk[0] = ct_join("celebrity", &celeb);
	ct_register_many("fan", CT_FANS, fans);
	ct_register_many("other", CT_OTHERS, others);
	for (size_t i = 0; i < CT_FANS; i++) {
		unsigned j = wb_uid_shard(fans[i], CT_RELATION);
		part[j][npart[j]++] = fans[i];
		per_inbox[wb_uid_shard(fans[i], CT_INBOX)]++;
	}
	for (int k = 0; k < CT_INBOX; k++) {
		cr_assert_gt(
		    per_inbox[k], CT_FANS / 10, "only %u fans on inbox shard %d", per_inbox[k], k);
	}

	/* a rel.follow_many holding followers of both shards is refused whole */
	uint64_t mixed[2] = { part[0][0], part[1][0] };
	req = wb_request(WB_OP_REL_FOLLOW_MANY);
	wb_set_u64(req, WB_F_TARGET, celeb);
	wb_set_u64s(req, WB_F_UIDS, mixed, 2);
	rc = wbt_call(ct_rel[0], req, &rep);
	cr_assert_eq(rc, WB_EWRONGSHARD, "a mixed rel.follow_many: %s", wb_err_name(rc));
	cr_assert_eq(wb_u64(rep, WB_F_SHARD, 99), 1);
	wb_msg_free(rep);

	for (unsigned j = 0; j < CT_RELATION; j++) {
		req = wb_request(WB_OP_REL_FOLLOW_MANY);
		wb_set_u64(req, WB_F_TARGET, celeb);
		wb_set_u64s(req, WB_F_UIDS, part[j], npart[j]);
		rc = wbt_call(ct_rel[j], req, &rep);
		cr_assert_eq(rc, WB_OK, "rel.follow_many on shard %u: %s", j, wb_err_name(rc));
		cr_assert_eq(wb_u64(rep, WB_F_COUNT, 0), npart[j]);
		wb_msg_free(rep);
	}
	for (unsigned j = 0; j < CT_RELATION; j++) {
		const wb_obj *users;
		size_t        n = 0;
		req = wb_request(WB_OP_REL_COUNTS);
		wb_set_u64s(req, WB_F_UIDS, &celeb, 1);
		cr_assert_eq(wbt_call(ct_rel[j], req, &rep), WB_OK);
		cr_assert(wb_get_objs(rep, WB_F_USERS, &users, &n) && n == 1);
		count += wb_u64(&users[0], WB_F_FOLLOWERS, 0);
		wb_msg_free(rep);
	}
	cr_assert_eq(count, CT_FANS, "%llu followers over the shards, want %d",
	    (unsigned long long)count, CT_FANS);

	/* rel.fans of each inbox's slot range, asked of every relation shard: exactly its fans */
	for (unsigned k = 0; k < CT_INBOX; k++) {
		unsigned lo, hi;
		size_t   n = 0, want = 0;
		wb_shard_slots((wb_shard) { k, CT_INBOX }, &lo, &hi);
		for (unsigned j = 0; j < CT_RELATION; j++) {
			ct_fans_on(j, celeb, lo, hi, got, &n, CT_FANS);
		}
		qsort(got, n, sizeof(got[0]), ct_cmp_u64);
		for (size_t i = 0; i < CT_FANS; i++) {
			if (wb_uid_shard(fans[i], CT_INBOX) == k) {
				want++;
				cr_assert_not_null(
				    bsearch(&fans[i], got, n, sizeof(got[0]), ct_cmp_u64),
				    "fan %llu missing from rel.fans of inbox %u's slots",
				    (unsigned long long)fans[i], k);
			}
		}
		cr_assert_eq(
		    n, want, "rel.fans of inbox %u's slots: %zu fans, want %zu", k, n, want);
	}

	/* follows applied first, so that every cell below is the posts' fan-out */
	ct_wait_caught_up(wbt_ms(60000));
	for (unsigned k = 0; k < CT_INBOX; k++) {
		base[k] = ct_gauge(ct_inbox[k], "cells_written");
		cr_assert_neq(base[k], UINT64_MAX);
	}
	for (unsigned p = 0; p < CT_CELEB_POST; p++) {
		char text[32];
		snprintf(text, sizeof(text), "to all %u", p);
		rc = warble_post(ct_w.sdk[0], text, &posts[p].id);
		cr_assert_eq(rc, WARBLE_OK, "post: %s", warble_errmsg(ct_w.sdk[0]));
		posts[p].author = celeb;
	}
	qsort(posts, CT_CELEB_POST, sizeof(posts[0]), ct_cmp_desc);
	long long ms = ct_wait_caught_up(wbt_ms(60000));

	uint64_t cells = 0;
	for (unsigned k = 0; k < CT_INBOX; k++) {
		uint64_t now = ct_gauge(ct_inbox[k], "cells_written"), d = now - base[k];
		uint64_t own = k == wb_uid_shard(celeb, CT_INBOX); /* the celebrity's own cell */
		cr_assert_eq(d, (per_inbox[k] + own) * CT_CELEB_POST,
		    "inbox %u wrote %llu cells for %u fans and %d posts", k, (unsigned long long)d,
		    per_inbox[k], CT_CELEB_POST);
		cells += d;
	}
	cr_assert_eq(cells, (uint64_t)(CT_FANS + 1) * CT_CELEB_POST);
	for (size_t i = 0; i < CT_FANS; i++) {
		ct_check_home("fan", fans[i], posts, CT_CELEB_POST);
	}
	for (size_t i = 0; i < CT_OTHERS; i++) {
		ct_check_home("non-fan", others[i], posts, 0);
	}
	ct_check_home("the celebrity", celeb, posts, CT_CELEB_POST);
	cr_assert_eq(atomic_load(&ct_nfail), 0, "homes differ from the model");
	fprintf(stderr,
	    "cluster: %d fans (%u, %u, %u per inbox shard), %d posts fanned out in "
	    "%lld ms\n",
	    CT_FANS, per_inbox[0], per_inbox[1], per_inbox[2], CT_CELEB_POST, ms);
	ct_stop();
}

/*
 * kill -9 of the inbox shard that takes both relation shards' logs, under
 * publish load, and a restart in place, three times: once the load stops
 * and the shards catch up, nothing is lost.
 */
Test(cluster, inbox_killed_under_load, .fini = ct_fini, .timeout = 240)
{
	pthread_t th[CT_THREADS];
	size_t    at_kill[CT_KILLS], at_restart[CT_KILLS];

	ct_start();
	ct_world_make(0xC2u, true);
	ct_load_start(th);
	for (int i = 0; i < CT_KILLS; i++) {
		cr_assert(ct_wait_posts(ct_nposts() + 25, wbt_ms(30000)),
		    "the load stalled at %zu posts", ct_nposts());
		at_kill[i] = ct_nposts();
		cr_assert_eq(wbc_restart(ct_cl.inbox[1], SIGKILL, wbt_ms(20000)), 0,
		    "inbox 1 did not come back");
		cr_assert_eq(wbc_daemon(ct_cl.inbox[1])->status, -1); /* the new one runs */
		at_restart[i] = ct_nposts();
	}
	bool more = ct_wait_posts(ct_nposts() + 25, wbt_ms(30000));
	ct_load_stop(th);
	cr_assert(more, "the load stalled at %zu posts after the restarts", ct_nposts());
	cr_assert_eq(atomic_load(&ct_nfail), 0, "publishing failed while an inbox was down");
	long long ms = ct_wait_caught_up(wbt_ms(60000));
	ct_check_homes();
	fprintf(stderr,
	    "cluster: inbox 1 killed at %zu, %zu and %zu posts (back at %zu, %zu, "
	    "%zu), %zu in all; caught up in %lld ms\n",
	    at_kill[0], at_kill[1], at_kill[2], at_restart[0], at_restart[1], at_restart[2],
	    ct_w.nposts, ms);
	ct_stop();
}

/*
 * An inbox shard cut off the network for 5 s under publish load: calls
 * for its readers fail with a transport error within their deadline, the
 * other shards' readers are served, and once healed it catches up with
 * nothing lost.
 */
Test(cluster, inbox_partitioned_under_load, .fini = ct_fini, .timeout = 240)
{
	const unsigned cut = 2;
	rt_client_opts po = { .timeout_ms = wbt_ms(CT_PROBE_MS) };
	rt_client     *probe = NULL;
	pthread_t      th[CT_THREADS];
	int            failed = 0, served = 0;

	ct_start();
	ct_world_make(0xC3u, true);
	ct_load_start(th);
	cr_assert(ct_wait_posts(30, wbt_ms(30000)), "the load made %zu posts", ct_nposts());
	cr_assert_eq(rt_client_open(&probe, ct_cl.inbox_url[cut], &po), WB_OK);

	uint64_t  errors0 = ct_gauge(ct_inbox[cut], "source_errors");
	size_t    at_cut = ct_nposts();
	long long t0 = wbt_now_ms();
	cr_assert_eq(wbc_cut(ct_cl.inbox[cut]), 0);
	do { /* probes while a whole one fits in the cut (at least one) */
		wb_obj   *rep = NULL;
		long long c0 = wbt_now_ms();
		int       rc = wbt_call(probe, ct_home_req(ct_reader_on(cut), 0), &rep);
		long long took = wbt_now_ms() - c0;

		wb_msg_free(rep);
		if (rc == WB_OK) {
			ct_fail("inbox %u answered while cut off", cut);
		} else if (rc != WB_ETIMEDOUT && rc != WB_EUNAVAIL) {
			ct_fail(
			    "inbox %u cut off: %s, not a transport error", cut, wb_err_name(rc));
		} else if (took > wbt_ms(CT_PROBE_MS) + wbt_ms(1000)) {
			ct_fail("a call to the cut inbox took %lld ms, its deadline is %d", took,
			    wbt_ms(CT_PROBE_MS));
		} else {
			failed++;
		}
		for (unsigned k = 0; k < CT_INBOX; k++) {
			if (k != cut) {
				rc = wbt_call(ct_inbox[k], ct_home_req(ct_reader_on(k), 0), &rep);
				wb_msg_free(rep);
				if (rc != WB_OK) {
					ct_fail("inbox %u, not cut off, failed: %s", k,
					    wb_err_name(rc));
				} else {
					served++;
				}
			}
		}
	} while (wbt_now_ms() - t0 < CT_CUT_MS - wbt_ms(CT_PROBE_MS));
	if (wbt_now_ms() - t0 < CT_CUT_MS) {
		wbt_sleep_ms((int)(CT_CUT_MS - (wbt_now_ms() - t0)));
	}
	cr_assert_eq(wbc_heal(ct_cl.inbox[cut]), 0);
	size_t at_heal = ct_nposts();
	cr_assert_gt(at_heal, at_cut, "no post was made while inbox %u was cut off", cut);
	bool more = ct_wait_posts(at_heal + 30, wbt_ms(30000));
	ct_load_stop(th);
	rt_client_close(probe);
	cr_assert(more, "the load stalled at %zu posts after the heal", ct_nposts());
	cr_assert_eq(atomic_load(&ct_nfail), 0, "see the failures above");
	cr_assert_gt(failed, 0);
	cr_assert_gt(served, 0);
	long long ms = ct_wait_caught_up(wbt_ms(60000));
	ct_check_homes();
	fprintf(stderr,
	    "cluster: inbox %u cut off for %d ms at %zu posts (%d calls refused, %d "
	    "served elsewhere), healed at %zu, %zu in all; caught up %lld ms after the "
	    "load; its source errors %llu, seq gaps %llu\n",
	    cut, CT_CUT_MS, at_cut, failed, served, at_heal, ct_w.nposts, ms,
	    (unsigned long long)(ct_gauge(ct_inbox[cut], "source_errors") - errors0),
	    (unsigned long long)ct_gauge(ct_inbox[cut], "seq_gaps"));
	ct_stop();
}

/* ct_netns_of tells whether pid runs in the namespace /run/netns/<netns>. */
static bool
ct_netns_of(int pid, const char *netns)
{
	char        a[64], b[128];
	struct stat sa, sb;

	snprintf(a, sizeof(a), "/proc/%d/ns/net", pid);
	snprintf(b, sizeof(b), "/run/netns/%s", netns);
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/*
 * The harness: a daemon runs in its host's namespace and is reached at its
 * address; cut off, it does not answer, and healed it does again; killed
 * (-9) and restarted, it answers at the same address; after wbc_close no
 * namespace or link of the run is left.
 */
Test(cluster, harness_hosts, .fini = wbc_fini, .timeout = 120)
{
	char      url[2][WBC_URL_MAX], prefix[32], what[64];
	wbc_host *h[2];

	ct_open_net();
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(wbc_host_add(ct_net, i == 0 ? "a" : "b", &h[i]), 0);
		cr_assert_eq(wbc_url(url[i], sizeof(url[i]), h[i], "tcp", WBC_REP_PORT), 0);
		const char *env[] = { NULL, NULL };
		char        e[WBC_URL_MAX + 32];
		snprintf(e, sizeof(e), "WARBLE_PING_URL=%s", url[i]);
		env[0] = e;
		cr_assert_eq(wbc_start(h[i], "warble-ping", NULL, env, url[i], wbt_ms(20000)), 0);
		cr_assert(ct_netns_of(wbc_daemon(h[i])->pid, wbc_host_netns(h[i])),
		    "warble-ping does not run in %s", wbc_host_netns(h[i]));
	}
	cr_assert_neq(strcmp(wbc_host_addr(h[0]), wbc_host_addr(h[1])), 0);

	cr_assert_eq(wbc_cut(h[0]), 0);
	long long t0 = wbt_now_ms();
	int       rc = wbt_ping(url[0], wbt_ms(1000));
	cr_assert(
	    rc == WB_ETIMEDOUT || rc == WB_EUNAVAIL, "a cut host answered: %s", wb_err_name(rc));
	cr_assert_leq(wbt_now_ms() - t0, wbt_ms(1000) + wbt_ms(1000));
	cr_assert_eq(wbt_ping(url[1], wbt_ms(5000)), WB_OK, "the other host was cut too");
	cr_assert_eq(wbc_heal(h[0]), 0);
	cr_assert_eq(wbt_wait_ready(wbc_daemon(h[0]), url[0], wbt_ms(15000)), 0);

	int old = wbc_daemon(h[0])->pid;
	cr_assert_eq(wbc_restart(h[0], SIGKILL, wbt_ms(20000)), 0);
	cr_assert_neq(wbc_daemon(h[0])->pid, old);
	cr_assert(ct_netns_of(wbc_daemon(h[0])->pid, wbc_host_netns(h[0])));
	cr_assert_eq(wbt_ping(url[0], wbt_ms(5000)), WB_OK);

	cr_assert_eq(wbc_partition(h[1], 200), 0);
	cr_assert_eq(wbt_wait_ready(wbc_daemon(h[1]), url[1], wbt_ms(15000)), 0);

	wbc_prefix(prefix, sizeof(prefix), (int)getpid());
	cr_assert_gt(wbc_leftovers(prefix, NULL, 0), 0);
	cr_assert_eq(wbc_close(ct_net), 0);
	ct_net = NULL;
	cr_assert_eq(wbc_leftovers(prefix, what, sizeof(what)), 0, "left behind: %s", what);
}

/*
 * A test process that dies without cleaning up (SIGKILL: no .fini, no
 * atexit) leaves nothing behind: its guard removes the namespaces and
 * links once it is gone.
 */
Test(cluster, harness_crash_leaves_nothing, .fini = wbc_fini, .timeout = 120)
{
	char  prefix[32], what[64];
	pid_t child;
	int   st = 0;

	ct_open_net(); /* the skips, and a network of this process that must survive the child */
	if ((child = fork()) == 0) {
		wbc_net  *n;
		wbc_host *h;
		char      why[256];

		if (wbc_open(&n, why, sizeof(why)) != 0 || wbc_host_add(n, "doomed", &h) != 0 ||
		    wbc_host_add(n, "doomed2", &h) != 0) {
			_exit(2);
		}
		raise(SIGKILL);
		_exit(3);
	}
	cr_assert_gt(child, 0);
	cr_assert_eq(waitpid(child, &st, 0), child);
	cr_assert(
	    WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the child did not get to die: %d", st);
	wbc_prefix(prefix, sizeof(prefix), (int)child);
	long long deadline = wbt_now_ms() + wbt_ms(15000);
	while (wbc_leftovers(prefix, what, sizeof(what)) > 0 && wbt_now_ms() < deadline) {
		wbt_sleep_ms(20);
	}
	cr_assert_eq(wbc_leftovers(prefix, what, sizeof(what)), 0, "left behind: %s", what);
	wbc_prefix(prefix, sizeof(prefix), (int)getpid());
	cr_assert_eq(wbc_leftovers(prefix, NULL, 0), 1, "the parent's bridge went too");
	cr_assert_eq(wbc_close(ct_net), 0);
	ct_net = NULL;
}

/*
 * What a run left behind whose guard did not finish (names of a pid that
 * is gone) is removed by the next wbc_open; names of live processes are
 * not touched.
 */
Test(cluster, harness_sweeps_stale_names, .fini = wbc_fini, .timeout = 120)
{
	char  stale[32], mine[32], what[64];
	pid_t gone;

	ct_open_net();
	cr_assert_eq(wbc_close(ct_net), 0);
	ct_net = NULL;
	if ((gone = fork()) == 0) {
		_exit(0);
	}
	cr_assert_gt(gone, 0);
	cr_assert_eq(waitpid(gone, NULL, 0), gone);
	wbc_prefix(stale, sizeof(stale), (int)gone);
	cr_assert_eq(wbc_ip_run(NULL, 0, "netns add %sx", stale), 0);
	cr_assert_eq(wbc_ip_run(NULL, 0, "link add %sbr type bridge", stale), 0);

	ct_open_net();
	cr_assert_eq(wbc_leftovers(stale, what, sizeof(what)), 0, "not swept: %s", what);
	wbc_prefix(mine, sizeof(mine), (int)getpid());
	cr_assert_eq(wbc_leftovers(mine, NULL, 0), 1, "the live run's bridge was swept");
	cr_assert_eq(wbc_close(ct_net), 0);
	ct_net = NULL;
}
