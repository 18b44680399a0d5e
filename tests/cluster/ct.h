/*
 * ct.h - the cluster suite's fixture, shared by the tests of tests/cluster:
 * a sharded Warble on hosts of its own (wbc_cluster.h), the test's
 * clients of every shard, and a model of what was acknowledged that
 * every store, timeline, list and home must agree with.
 *
 *   users      registered and logged in through the SDK, user i through
 *              gateway i % ngateway (so half the calls go through each of
 *              two); users 0..nauthors-1 are the authors of the load
 *   crowd      readers made with the bulk operations on the shards' own
 *              ports (user.register_many, rel.follow_many split by the
 *              follower's relation shard), who follow authors 0 and 1
 *   follows    follows[u][v] of every pair of users: 1, 0, or CT_UNKNOWN
 *              after a call whose reply a fault ate (read back later)
 *   posts      every post acknowledged, and every attempt whose reply was
 *              lost (ambiguous: it may or may not be stored); each text
 *              is unique, so the authors' timelines, read from the
 *              content shards, decide them: every acknowledged post once,
 *              an ambiguous one at most once, nothing else
 *   homes      read straight from each reader's inbox shard: exactly the
 *              posts, decided as above, of whom the reader follows
 *              (WARBLE_BACKFILL is above any author's posts, and no home
 *              reaches the inbox's cap of 800)
 *
 * ct_stop stops every daemon and then reads every shard's store from its
 * files (wbc_stores.h): no row outside its shard's slots.
 *
 * Sizes shrink in a sanitized build (CT_SANITIZED: ASan in the test, or
 * WARBLE_TEST_SLOW above 1 for sanitized daemons), the checks do not.
 * Needs root: every test skips without it (and under WARBLE_TEST_MODE=one,
 * since the suite runs its own shapes whatever the mode).
 */
#ifndef CT_H
#define CT_H

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rt_client.h"
#include "warble.h"
#include "wb_id.h"
#include "wb_slot.h"
#include "wbc.h"
#include "wbc_cluster.h"
#include "wbc_stores.h"
#include "wbt.h"

#if defined(__SANITIZE_ADDRESS__)
#define CT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CT_ASAN 1
#endif
#endif
#ifndef CT_ASAN
#define CT_ASAN 0
#endif
/* the test or its daemons run under a sanitizer: smaller setups, same checks */
#define CT_SANITIZED (CT_ASAN || wbt_ms(1) > 1)

#define CT_CALL_MS      5000 /* a direct call's deadline (scaled) */
#define CT_SDK_MS       15000
#define CT_PAGE         100 /* inbox.home's and post.timeline's largest page */
#define CT_HOME_MAX     800 /* posts an inbox keeps (WARBLE_INBOX_MAX) */
#define CT_USERS_MAX    64
#define CT_CROWD_MAX    1200
#define CT_POSTS_MAX    4096
#define CT_PASSWORD     "cluster-pass-1"
#define CT_FAIL_SHOWN   10
#define CT_UNKNOWN      2 /* follows[u][v]: the reply of the last change was lost */
#define CT_FANS         (CT_SANITIZED ? 5000 : 20000) /* the big account's fans */
#define CT_BULK         (CT_SANITIZED ? 2000 : 10000) /* uids per bulk call */
#define CT_CAUGHT_UP_MS 60000                         /* scaled */

/* The shape of the five-daemon tests: one user service, two gateways, and shards. */
#define CT_SHAPE ((wbc_shape) { .content = 2, .relation = 2, .inbox = 3, .gateways = 2 })

/* a follow backfills every post of the followee, so a home is exactly the followees' posts */
#define CT_ENV_BACKFILL "WARBLE_BACKFILL=1000"

/* A post: acknowledged, or an attempt whose reply was lost (id 0 until decided). */
typedef struct ct_post {
	uint64_t  id, author;
	unsigned  seq;    /* its text is "p<seq>" */
	long long ack_ms; /* when its reply came (wbt_now_ms) */
} ct_post;

/* A user of the model. */
typedef struct ct_user {
	char           name[24];
	uint64_t       uid;
	warble_client *sdk; /* logged in, through gateway gw */
	unsigned       gw;
} ct_user;

/* What was acknowledged (see above). */
typedef struct ct_world {
	unsigned        nusers, nauthors;
	ct_user         u[CT_USERS_MAX];
	uint8_t         follows[CT_USERS_MAX][CT_USERS_MAX];
	long long       changed[CT_USERS_MAX][CT_USERS_MAX]; /* when the last change's reply came */
	uint64_t        crowd[CT_CROWD_MAX];
	size_t          ncrowd;
	pthread_mutex_t mu;
	ct_post         posts[CT_POSTS_MAX]; /* acknowledged */
	size_t          nposts;
	ct_post         maybe[CT_POSTS_MAX]; /* replies lost */
	size_t          nmaybe;
	ct_post         truth[CT_POSTS_MAX]; /* what the content shards hold, once decided */
	size_t          ntruth;
	atomic_uint     seq;        /* the next post's text */
	atomic_bool     stop;       /* the load's threads end */
	atomic_bool     faults;     /* a fault is under way: a failed write is ambiguous */
	atomic_ulong    nwrites;    /* writes acknowledged by the load */
	atomic_ulong    nambiguous; /* writes whose reply a fault ate */
	atomic_ulong    nfollows;   /* follows and unfollows acknowledged by the load */
} ct_world;

static wbc_net    *ct_net;
static wbc_cluster ct_cl;
static rt_client  *ct_usvc, *ct_content[WBC_SHARDS_MAX], *ct_rel[WBC_SHARDS_MAX],
    *ct_inbox[WBC_SHARDS_MAX];
static ct_world     ct_w = { .mu = PTHREAD_MUTEX_INITIALIZER };
static atomic_ulong ct_nfail;

/*
 * ct_fail records a failure seen on any thread (Criterion asserts belong to the test's), printing
 * the first few.
 */
static inline void __attribute__((format(printf, 1, 2))) ct_fail(const char *fmt, ...)
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
static inline uint64_t
ct_rand(uint64_t *s)
{
	uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* ct_cmp_u64 orders u64 ascending. */
static inline int
ct_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* ct_cmp_fan orders uids as fans lists are: by slot, then uid. */
static inline int
ct_cmp_fan(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	unsigned sx = wb_slot(x), sy = wb_slot(y);

	return sx != sy ? (sx < sy ? -1 : 1) : x < y ? -1 : x > y;
}

/* ct_cmp_desc orders posts newest (largest id) first. */
static inline int
ct_cmp_desc(const void *a, const void *b)
{
	uint64_t x = ((const ct_post *)a)->id, y = ((const ct_post *)b)->id;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* ct_open_net opens the hosts' network, or skips the test where it cannot be made. */
static inline void
ct_open_net(void)
{
	const char *mode = getenv("WARBLE_TEST_MODE");
	char        why[512];
	int         rc;

	if (mode != NULL && strcmp(mode, "one") == 0) {
		cr_skip_test("the cluster suite runs its own shapes whatever the mode: make test "
		             "runs it");
	}
	rc = wbc_open(&ct_net, why, sizeof(why));
	if (rc == WBC_SKIP) {
		cr_skip_test("%s", why);
	}
	cr_assert_eq(rc, 0, "cannot make the hosts' network: %s", why);
}

/* ct_clients opens the test's client of every shard of the running cluster. */
static inline void
ct_clients(void)
{
	rt_client_opts o = { .timeout_ms = wbt_ms(CT_CALL_MS) };

	cr_assert_eq(rt_client_open(&ct_usvc, ct_cl.user_url, &o), WB_OK);
	for (unsigned i = 0; i < ct_cl.ncontent; i++) {
		cr_assert_eq(rt_client_open(&ct_content[i], ct_cl.content_url[i], &o), WB_OK);
	}
	for (unsigned j = 0; j < ct_cl.nrelation; j++) {
		cr_assert_eq(rt_client_open(&ct_rel[j], ct_cl.relation_url[j], &o), WB_OK);
	}
	for (unsigned k = 0; k < ct_cl.ninbox; k++) {
		cr_assert_eq(rt_client_open(&ct_inbox[k], ct_cl.inbox_url[k], &o), WB_OK);
	}
}

/* ct_clients_close closes them. */
static inline void
ct_clients_close(void)
{
	rt_client_close(ct_usvc);
	ct_usvc = NULL;
	for (unsigned i = 0; i < WBC_SHARDS_MAX; i++) {
		rt_client_close(ct_content[i]);
		rt_client_close(ct_rel[i]);
		rt_client_close(ct_inbox[i]);
		ct_content[i] = ct_rel[i] = ct_inbox[i] = NULL;
	}
}

/* ct_start starts a cluster of shape with extra_env (may be NULL) and the test's clients of it. */
static inline void
ct_start(wbc_shape shape, const char *const *extra_env)
{
	long long t0 = wbt_now_ms();
	int       hosts;

	ct_open_net();
	cr_assert_eq(
	    wbc_cluster_start(&ct_cl, ct_net, &shape, extra_env), 0, "the cluster did not start");
	ct_clients();
	hosts = shape.one
	            ? (int)shape.one
	            : 1 + (int)(ct_cl.ngateway + ct_cl.ncontent + ct_cl.nrelation + ct_cl.ninbox);
	fprintf(stderr,
	    "cluster: %d hosts up in %lld ms (%s: content x%u, relation x%u, inbox x%u, "
	    "gateways x%u)\n",
	    hosts, wbt_now_ms() - t0, shape.one ? "warble --shard" : "daemons", ct_cl.ncontent,
	    ct_cl.nrelation, ct_cl.ninbox, ct_cl.ngateway);
}

/* ct_fini closes the test's clients and the SDK sessions, then the network and the daemons. */
static inline void
ct_fini(void)
{
	atomic_store(&ct_w.stop, true);
	for (unsigned u = 0; u < CT_USERS_MAX; u++) {
		warble_close(ct_w.u[u].sdk);
		ct_w.u[u].sdk = NULL;
	}
	ct_clients_close();
	wbc_fini();
}

/*
 * ct_check_stores reads every shard's store of the stopped cluster from
 * its files: no cell of a user outside the shard's slots, and data on
 * some shard of each service (else the scan proves nothing).
 */
static inline void
ct_check_stores(void)
{
	static const char *const svcs[] = { "relation", "content", "inbox" };
	char                     line[512];
	size_t                   off = 0;

	for (int k = 0; k < 3; k++) {
		unsigned   n = k == 0 ? ct_cl.nrelation : k == 1 ? ct_cl.ncontent : ct_cl.ninbox;
		wbc_host **h = k == 0 ? ct_cl.relation : k == 1 ? ct_cl.content : ct_cl.inbox;
		uint64_t   total = 0;
		for (unsigned i = 0; i < n; i++) {
			wbc_store_report r;
			char             path[512], why[512];
			cr_assert_eq(
			    wbc_cluster_store(&ct_cl, h[i], svcs[k], path, sizeof(path)), 0);
			cr_assert_eq(wbc_stores_check(
			                 path, svcs[k], (wb_shard) { i, n }, &r, why, sizeof(why)),
			    0, "%s", why);
			cr_assert_eq(r.foreign, 0,
			    "%s/%u holds %llu cells of other shards' users (of %llu): %s", svcs[k],
			    i, (unsigned long long)r.foreign, (unsigned long long)r.cells, r.first);
			total += r.cells;
			off += (size_t)snprintf(line + off, sizeof(line) - off, " %s/%u %llu",
			    svcs[k], i, (unsigned long long)r.cells);
			off = off < sizeof(line) ? off : sizeof(line) - 1;
		}
		cr_assert_gt(
		    total, 0, "no %s shard holds a user's cell: the check proves nothing", svcs[k]);
	}
	fprintf(stderr, "cluster: every store read back, no cell outside its shard:%s\n", line);
}

/* ct_halt closes the test's clients and stops every daemon (each must exit 0); the hosts stay. */
static inline void
ct_halt(void)
{
	ct_clients_close();
	cr_assert_eq(wbc_cluster_stop(&ct_cl, wbt_ms(15000)), 0, "a daemon did not stop cleanly");
}

/*
 * ct_stop stops every daemon (ct_halt), reads every store back
 * (ct_check_stores) if scan, and removes the hosts; nothing may be left.
 */
static inline void
ct_stop(bool scan)
{
	char prefix[32], what[64];

	ct_halt();
	if (scan) {
		ct_check_stores();
	}
	wbc_prefix(prefix, sizeof(prefix), (int)getpid());
	cr_assert_eq(wbc_close(ct_net), 0);
	ct_net = NULL;
	cr_assert_eq(wbc_leftovers(prefix, what, sizeof(what)), 0, "left behind: %s", what);
}

/* ct_log_last asks a content (post.log) or relation shard (rel.log) for its log's last seq. */
static inline uint64_t
ct_log_last(rt_client *c, wb_op op)
{
	wb_obj  *req = wb_request(op), *rep = NULL;
	uint64_t last = 0;
	int      rc;

	cr_assert_not_null(req);
	wb_set_u64(req, WB_F_FROM, UINT64_MAX / 2);
	wb_set_u64(req, WB_F_LIMIT, 1);
	rc = wbt_call_retry(c, req, &rep);
	cr_assert_eq(rc, WB_OK, "%s: %s", wb_op_name(op), wb_err_name(rc));
	cr_assert(wb_get_u64(rep, WB_F_LAST, &last), "%s gave no last seq", wb_op_name(op));
	wb_msg_free(rep);
	return last;
}

/* ct_rel_of returns the relation shards [*lo, *hi) whose slots overlap inbox shard k's. */
static inline void
ct_rel_of(unsigned k, unsigned *lo, unsigned *hi)
{
	unsigned slo, shi;

	wb_shard_slots((wb_shard) { k, ct_cl.ninbox }, &slo, &shi);
	*lo = wb_slot_shard(slo, ct_cl.nrelation);
	*hi = wb_slot_shard(shi - 1, ct_cl.nrelation) + 1;
}

/*
 * ct_wait_caught_up waits until every inbox shard has applied all that
 * every content log and the logs of its relation shards hold now (call
 * it once every write was acknowledged) and says events_behind 0; fails
 * the test at the deadline.  Returns the ms it took.
 */
static inline long long
ct_wait_caught_up(int timeout_ms)
{
	long long t0 = wbt_now_ms(), deadline = t0 + timeout_ms;
	uint64_t  content = 0, rel[WBC_SHARDS_MAX];

	for (unsigned i = 0; i < ct_cl.ncontent; i++) {
		content +=
		    ct_log_last(ct_content[i], WB_OP_POST_LOG); /* content_applied sums them */
	}
	for (unsigned j = 0; j < ct_cl.nrelation; j++) {
		rel[j] = ct_log_last(ct_rel[j], WB_OP_REL_LOG);
	}
	for (unsigned k = 0; k < ct_cl.ninbox; k++) {
		unsigned lo, hi;
		uint64_t want = 0, ca = 0, ra = 0, behind = 0;

		ct_rel_of(k, &lo, &hi);
		for (unsigned j = lo; j < hi; j++) {
			want += rel[j]; /* relation_applied sums its relation shards' */
		}
		for (;;) {
			ca = wbt_stat(ct_inbox[k], "content_applied");
			ra = wbt_stat(ct_inbox[k], "relation_applied");
			behind = wbt_stat(ct_inbox[k], "events_behind");
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

/* ct_bulk_call sends one bulk setup request (freed) on c: a long deadline, no retry. */
static inline int
ct_bulk_call(const char *url, wb_obj *req, wb_obj **rep)
{
	rt_client_opts o = { .timeout_ms = wbt_ms(120000) };
	rt_client     *c = NULL;
	int            rc;

	cr_assert_eq(rt_client_open(&c, url, &o), WB_OK);
	rc = wbt_call(c, req, rep);
	rt_client_close(c);
	return rc;
}

/*
 * ct_register_many registers prefix0 .. prefix<n-1> with user.register_many on the user service's
 * own port, CT_BULK a call; their uids go to uids.
 */
static inline void
ct_register_many(const char *prefix, size_t n, uint64_t *uids)
{
	for (size_t off = 0; off < n; off += CT_BULK) {
		size_t          k = n - off < CT_BULK ? n - off : CT_BULK;
		wb_obj         *req = wb_request(WB_OP_USER_REGISTER_MANY), *rep = NULL;
		const uint64_t *got;
		size_t          ngot = 0;
		int             rc;

		cr_assert_not_null(req);
		wb_set_cstr(req, WB_F_NAME, prefix);
		wb_set_cstr(req, WB_F_PASSWORD, CT_PASSWORD);
		wb_set_u64(req, WB_F_FROM, off);
		wb_set_u64(req, WB_F_LIMIT, k);
		rc = ct_bulk_call(ct_cl.user_url, req, &rep);
		cr_assert_eq(rc, WB_OK, "user.register_many %s: %s", prefix, wb_err_name(rc));
		cr_assert(wb_get_u64s(rep, WB_F_UIDS, &got, &ngot) && ngot == k,
		    "user.register_many %s gave %zu uids, want %zu", prefix, ngot, k);
		memcpy(uids + off, got, k * sizeof(*uids));
		wb_msg_free(rep);
	}
}

/*
 * ct_follow_many makes each of uids[0..n) follow target with rel.follow_many on each follower's
 * relation shard (the only one that takes it), CT_BULK a call.
 */
static inline void
ct_follow_many(uint64_t target, const uint64_t *uids, size_t n)
{
	uint64_t *part = calloc(n > 0 ? n : 1, sizeof(*part));
	uint64_t  added = 0;

	cr_assert_not_null(part);
	for (unsigned j = 0; j < ct_cl.nrelation; j++) {
		size_t np = 0;
		for (size_t i = 0; i < n; i++) {
			if (wb_uid_shard(uids[i], ct_cl.nrelation) == j) {
				part[np++] = uids[i];
			}
		}
		for (size_t off = 0; off < np; off += CT_BULK) {
			size_t  k = np - off < CT_BULK ? np - off : CT_BULK;
			wb_obj *req = wb_request(WB_OP_REL_FOLLOW_MANY), *rep = NULL;
			wb_set_u64(req, WB_F_TARGET, target);
			wb_set_u64s(req, WB_F_UIDS, part + off, k);
			int rc = ct_bulk_call(ct_cl.relation_url[j], req, &rep);
			cr_assert_eq(
			    rc, WB_OK, "rel.follow_many on shard %u: %s", j, wb_err_name(rc));
			added += wb_u64(rep, WB_F_COUNT, 0);
			wb_msg_free(rep);
		}
	}
	free(part);
	cr_assert_eq(
	    added, n, "rel.follow_many made %llu follows of %zu", (unsigned long long)added, n);
}

/* ct_sdk opens an SDK client of gateway g. */
static inline warble_client *
ct_sdk(unsigned g)
{
	warble_client *c = NULL;

	cr_assert_lt(g, ct_cl.ngateway);
	cr_assert_eq(warble_open(&c, ct_cl.gateway_url[g], wbt_ms(CT_SDK_MS)), WARBLE_OK);
	return c;
}

/*
 * ct_join registers name through gateway g with the SDK and logs in there; returns the session
 * and *uid.
 */
static inline warble_client *
ct_join(unsigned g, const char *name, uint64_t *uid)
{
	warble_client *c = ct_sdk(g);
	uint64_t       again = 0;
	int            rc;

	rc = warble_register(c, name, CT_PASSWORD, uid);
	cr_assert_eq(rc, WARBLE_OK, "register %s through gateway %u: %s: %s", name, g,
	    warble_errname(rc), warble_errmsg(c));
	rc = warble_login(c, name, CT_PASSWORD, &again);
	cr_assert_eq(rc, WARBLE_OK, "login %s through gateway %u: %s: %s", name, g,
	    warble_errname(rc), warble_errmsg(c));
	cr_assert_eq(again, *uid);
	return c;
}

/*
 * ct_users registers n users of the model through the SDK, user i
 * through gateway i % ngateway, the first nauthors the load's authors,
 * and with spread checks they land on every shard of every service (else
 * a test proves less than it says).
 */
static inline void
ct_users(unsigned n, unsigned nauthors, const char *prefix, bool spread)
{
	unsigned per_rel[WBC_SHARDS_MAX] = { 0 }, per_inbox[WBC_SHARDS_MAX] = { 0 },
	         per_content[WBC_SHARDS_MAX] = { 0 };

	cr_assert_leq(n, CT_USERS_MAX);
	ct_w.nusers = n;
	ct_w.nauthors = nauthors;
	for (unsigned u = 0; u < n; u++) {
		ct_user *x = &ct_w.u[u];
		snprintf(x->name, sizeof(x->name), "%s%u", prefix, u);
		x->gw = u % ct_cl.ngateway;
		x->sdk = ct_join(x->gw, x->name, &x->uid);
		per_rel[wb_uid_shard(x->uid, ct_cl.nrelation)]++;
		per_inbox[wb_uid_shard(x->uid, ct_cl.ninbox)]++;
		if (u < nauthors || nauthors == 0) {
			per_content[wb_uid_shard(x->uid, ct_cl.ncontent)]++;
		}
	}
	for (unsigned j = 0; spread && j < ct_cl.nrelation; j++) {
		cr_assert_gt(per_rel[j], 0, "no user on relation shard %u: make more", j);
	}
	for (unsigned k = 0; spread && k < ct_cl.ninbox; k++) {
		cr_assert_gt(per_inbox[k], 0, "no user on inbox shard %u: make more", k);
	}
	for (unsigned i = 0; spread && i < ct_cl.ncontent; i++) {
		cr_assert_gt(per_content[i], 0, "no author on content shard %u: make more", i);
	}
}

/* ct_crowd registers n readers with the bulk operations, each following users 0 and 1. */
static inline void
ct_crowd(size_t n)
{
	cr_assert_leq(n, CT_CROWD_MAX);
	ct_register_many("crowd", n, ct_w.crowd);
	for (unsigned a = 0; a < 2; a++) {
		ct_follow_many(ct_w.u[a].uid, ct_w.crowd, n);
	}
	ct_w.ncrowd = n;
}

/*
 * ct_relate makes user u follow (or unfollow) user v through u's gateway
 * and records it: the call's code (a lost reply, during a fault, makes
 * the pair CT_UNKNOWN).
 */
static inline int
ct_relate(unsigned u, unsigned v, bool follow)
{
	ct_user *x = &ct_w.u[u];
	int      rc = follow ? warble_follow(x->sdk, ct_w.u[v].name)
	                     : warble_unfollow(x->sdk, ct_w.u[v].name);

	pthread_mutex_lock(&ct_w.mu);
	if (rc == WARBLE_OK) {
		ct_w.follows[u][v] = follow;
	} else if (rc == WARBLE_EUNAVAIL || rc == WARBLE_ETIMEDOUT) {
		ct_w.follows[u][v] = CT_UNKNOWN;
	}
	ct_w.changed[u][v] = wbt_now_ms();
	pthread_mutex_unlock(&ct_w.mu);
	return rc;
}

/*
 * ct_world_make registers nauthors authors and nreaders readers through
 * the SDK (half through each gateway), ncrowd readers with the bulk
 * operations, and random follows of the authors (from seed) through the
 * followers' gateways: a reader follows each author one time in 3, an
 * author each other author one time in author_odds.
 */
static inline void
ct_world_make(
    uint64_t seed, unsigned nauthors, unsigned nreaders, size_t ncrowd, unsigned author_odds)
{
	uint64_t rng = seed;

	ct_users(nauthors + nreaders, nauthors, "user", true);
	for (unsigned u = 0; u < ct_w.nusers; u++) {
		for (unsigned a = 0; a < nauthors; a++) {
			if (u != a && ct_rand(&rng) % (u < nauthors ? author_odds : 3) == 0) {
				cr_assert_eq(ct_relate(u, a, true), WARBLE_OK, "%s",
				    warble_errmsg(ct_w.u[u].sdk));
			}
		}
	}
	ct_crowd(ncrowd);
}

/* ct_post_record appends p to the acknowledged posts (maybe: to those whose reply was lost). */
static inline void
ct_post_record(ct_post p, bool maybe)
{
	pthread_mutex_lock(&ct_w.mu);
	p.ack_ms = wbt_now_ms();
	if (!maybe && ct_w.nposts < CT_POSTS_MAX) {
		ct_w.posts[ct_w.nposts++] = p;
	} else if (maybe && ct_w.nmaybe < CT_POSTS_MAX) {
		ct_w.maybe[ct_w.nmaybe++] = p;
	}
	pthread_mutex_unlock(&ct_w.mu);
}

/*
 * ct_publish posts as user u through u's gateway, a text of its own, and
 * records it; the SDK's code.  A transport error while faults are under
 * way makes the attempt ambiguous; any other failure is a test failure.
 */
static inline int
ct_publish(unsigned u, warble_client *via)
{
	ct_post  p = { .author = ct_w.u[u].uid, .seq = atomic_fetch_add(&ct_w.seq, 1) };
	char     text[32];
	uint64_t id = 0;
	int      rc;

	snprintf(text, sizeof(text), "p%u", p.seq);
	rc = warble_post(via != NULL ? via : ct_w.u[u].sdk, text, &id);
	if (rc == WARBLE_OK && id != 0) {
		p.id = id;
		ct_post_record(p, false);
		atomic_fetch_add(&ct_w.nwrites, 1);
	} else if ((rc == WARBLE_EUNAVAIL || rc == WARBLE_ETIMEDOUT) && atomic_load(&ct_w.faults)) {
		ct_post_record(p, true);
		atomic_fetch_add(&ct_w.nambiguous, 1);
	} else {
		ct_fail("%s: post %s: %s: %s", ct_w.u[u].name, text, warble_errname(rc),
		    warble_errmsg(via != NULL ? via : ct_w.u[u].sdk));
	}
	return rc;
}

/* ct_forget_post drops an acknowledged post the test deleted. */
static inline void
ct_forget_post(uint64_t id)
{
	pthread_mutex_lock(&ct_w.mu);
	for (size_t p = 0; p < ct_w.nposts; p++) {
		if (ct_w.posts[p].id == id) {
			memmove(&ct_w.posts[p], &ct_w.posts[p + 1],
			    (ct_w.nposts - p - 1) * sizeof(ct_w.posts[0]));
			ct_w.nposts--;
			break;
		}
	}
	pthread_mutex_unlock(&ct_w.mu);
}

/* ct_user_of returns the index of the model's user uid (-1 if none). */
static inline int
ct_user_of(uint64_t uid)
{
	for (unsigned u = 0; u < ct_w.nusers; u++) {
		if (ct_w.u[u].uid == uid) {
			return (int)u;
		}
	}
	return -1;
}

/*
 * ct_timeline reads uid's posts straight from its content shard, page by
 * page, newest first, into out (id, author, seq from the text); the
 * count.
 */
static inline size_t
ct_timeline(uint64_t uid, ct_post *out, size_t cap)
{
	unsigned i = wb_uid_shard(uid, ct_cl.ncontent);
	uint64_t before = 0;
	size_t   n = 0;

	for (int pages = 0; pages < CT_POSTS_MAX / CT_PAGE + 2; pages++) {
		wb_obj       *req = wb_request(WB_OP_POST_TIMELINE), *rep = NULL;
		const wb_obj *posts = NULL;
		size_t        np = 0;

		wb_set_u64(req, WB_F_UID, uid);
		wb_set_u64(req, WB_F_LIMIT, CT_PAGE);
		if (before != 0) {
			wb_set_u64(req, WB_F_BEFORE, before);
		}
		int rc = wbt_call_retry(ct_content[i], req, &rep);
		cr_assert_eq(rc, WB_OK, "post.timeline %llu on content %u: %s",
		    (unsigned long long)uid, i, wb_err_name(rc));
		(void)wb_get_objs(rep, WB_F_POSTS, &posts, &np);
		for (size_t k = 0; k < np; k++) {
			const char *text = wb_str(&posts[k], WB_F_TEXT, "");
			cr_assert_lt(n, cap, "%llu has more posts than the test made",
			    (unsigned long long)uid);
			cr_assert_eq(text[0], 'p', "a post the test did not make: '%s'", text);
			out[n++] = (ct_post) { .id = wb_u64(&posts[k], WB_F_ID, 0),
				.author = wb_u64(&posts[k], WB_F_AUTHOR, uid),
				.seq = (unsigned)strtoul(text + 1, NULL, 10) };
		}
		before = wb_u64(rep, WB_F_NEXT, 0);
		wb_msg_free(rep);
		if (before == 0 || np == 0) {
			return n;
		}
	}
	cr_assert_fail("post.timeline %llu never ended", (unsigned long long)uid);
	return n;
}

/*
 * ct_decide_posts reads every user's posts from the content shards into
 * ct_w.truth and checks them against what was acknowledged: every
 * acknowledged post there once, with its id and author; an attempt whose
 * reply was lost at most once; nothing else.  Returns how many of the
 * ambiguous attempts were stored.
 */
static inline size_t
ct_decide_posts(void)
{
	static ct_post tl[CT_POSTS_MAX];
	static int32_t by_seq[CT_POSTS_MAX * 2]; /* 1 + truth index, 0 none */
	unsigned       nseq = atomic_load(&ct_w.seq);
	size_t         stored = 0;

	cr_assert_leq(nseq, CT_POSTS_MAX * 2);
	memset(by_seq, 0, sizeof(by_seq));
	ct_w.ntruth = 0;
	for (unsigned u = 0; u < ct_w.nusers; u++) {
		size_t n = ct_timeline(ct_w.u[u].uid, tl, CT_POSTS_MAX);
		for (size_t k = 0; k < n; k++) {
			cr_assert_lt(tl[k].seq, nseq, "%s holds post '%u' never sent",
			    ct_w.u[u].name, tl[k].seq);
			cr_assert_eq(by_seq[tl[k].seq], 0,
			    "post p%u is stored twice (ids %llu, %llu)", tl[k].seq,
			    (unsigned long long)ct_w.truth[by_seq[tl[k].seq] - 1].id,
			    (unsigned long long)tl[k].id);
			cr_assert_eq(tl[k].author, ct_w.u[u].uid);
			cr_assert_lt(ct_w.ntruth, CT_POSTS_MAX);
			ct_w.truth[ct_w.ntruth] = tl[k];
			by_seq[tl[k].seq] = (int32_t)++ct_w.ntruth;
		}
	}
	for (size_t p = 0; p < ct_w.nposts; p++) {
		const ct_post *a = &ct_w.posts[p];
		int32_t        t = by_seq[a->seq];
		cr_assert_neq(t, 0, "acknowledged post p%u (id %llu) of %llu is lost", a->seq,
		    (unsigned long long)a->id, (unsigned long long)a->author);
		cr_assert_eq(ct_w.truth[t - 1].id, a->id,
		    "p%u is stored as %llu, acknowledged as %llu", a->seq,
		    (unsigned long long)ct_w.truth[t - 1].id, (unsigned long long)a->id);
	}
	for (size_t p = 0; p < ct_w.nmaybe; p++) {
		stored += by_seq[ct_w.maybe[p].seq] != 0;
	}
	cr_assert_eq(ct_w.ntruth, ct_w.nposts + stored,
	    "%zu posts stored: %zu acknowledged, %zu of %zu ambiguous, and others", ct_w.ntruth,
	    ct_w.nposts, stored, ct_w.nmaybe);
	return stored;
}

/* ct_following reads uid's followees straight from its relation shard, page by page; the count. */
static inline size_t
ct_following(uint64_t uid, uint64_t *out, size_t cap)
{
	unsigned j = wb_uid_shard(uid, ct_cl.nrelation);
	uint64_t after = 0;
	size_t   n = 0;

	for (int pages = 0; pages < 1000; pages++) {
		wb_obj         *req = wb_request(WB_OP_REL_FOLLOWING), *rep = NULL;
		const uint64_t *v = NULL;
		size_t          k = 0;

		wb_set_u64(req, WB_F_UID, uid);
		wb_set_u64(req, WB_F_LIMIT, 100);
		if (after != 0) {
			wb_set_u64(req, WB_F_AFTER, after);
		}
		int rc = wbt_call_retry(ct_rel[j], req, &rep);
		cr_assert_eq(
		    rc, WB_OK, "rel.following %llu: %s", (unsigned long long)uid, wb_err_name(rc));
		(void)wb_get_u64s(rep, WB_F_UIDS, &v, &k);
		cr_assert_leq(n + k, cap);
		memcpy(out + n, v, k * sizeof(*v));
		n += k;
		after = wb_u64(rep, WB_F_NEXT, 0);
		wb_msg_free(rep);
		if (after == 0) {
			return n;
		}
	}
	cr_assert_fail("rel.following never ended");
	return n;
}

/*
 * ct_decide_follows reads every user's followees from the relation
 * shards: a pair whose last change was acknowledged must be as
 * acknowledged; one whose reply was lost takes what is stored.  Returns
 * how many were decided so.
 */
static inline unsigned
ct_decide_follows(void)
{
	uint64_t got[CT_USERS_MAX + CT_USERS_MAX];
	unsigned decided = 0;

	for (unsigned u = 0; u < ct_w.nusers; u++) {
		size_t n = ct_following(ct_w.u[u].uid, got, sizeof(got) / sizeof(got[0]));
		for (unsigned v = 0; v < ct_w.nusers; v++) {
			bool there = false;
			for (size_t k = 0; k < n && !there; k++) {
				there = got[k] == ct_w.u[v].uid;
			}
			if (ct_w.follows[u][v] == CT_UNKNOWN) {
				ct_w.follows[u][v] = there;
				decided++;
			} else {
				cr_assert_eq(there, ct_w.follows[u][v] == 1,
				    "%s %s %s, acknowledged the other way", ct_w.u[u].name,
				    there ? "follows" : "does not follow", ct_w.u[v].name);
			}
		}
		for (size_t k = 0; k < n; k++) {
			cr_assert_geq(ct_user_of(got[k]), 0, "%s follows %llu, never followed",
			    ct_w.u[u].name, (unsigned long long)got[k]);
		}
	}
	return decided;
}

/* ct_home_req makes inbox.home {uid, limit, before?}. */
static inline wb_obj *
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
 * ct_home reads uid's whole home from its inbox shard on c (NULL: the
 * test's client of it), page by page, into ids and authors; the count,
 * or -1 after ct_fail.
 */
static inline long
ct_home(rt_client *c, uint64_t uid, uint64_t *ids, uint64_t *authors, size_t cap)
{
	unsigned k = wb_uid_shard(uid, ct_cl.ninbox);
	uint64_t before = 0;
	size_t   n = 0;

	for (int pages = 0; pages <= CT_HOME_MAX / CT_PAGE + 1; pages++) {
		wb_obj       *rep = NULL;
		const wb_obj *posts = NULL;
		size_t        np = 0;
		int           rc =
		    wbt_call_retry(c != NULL ? c : ct_inbox[k], ct_home_req(uid, before), &rep);

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

/* ct_check_home compares uid's home (read on c, NULL: the test's) with want[0..n), newest first. */
static inline bool
ct_check_home(rt_client *c, const char *who, uint64_t uid, const ct_post *want, size_t n)
{
	uint64_t ids[CT_HOME_MAX + CT_PAGE], authors[CT_HOME_MAX + CT_PAGE];
	long     got = ct_home(c, uid, ids, authors, CT_HOME_MAX + CT_PAGE);

	if (got < 0) {
		return false;
	}
	for (size_t i = 0; i < (size_t)got && i < n; i++) {
		if (ids[i] != want[i].id || authors[i] != want[i].author) {
			ct_fail("%s %llu (inbox %u): post %zu of %zu is %llu by %llu, want %llu by "
			        "%llu",
			    who, (unsigned long long)uid, wb_uid_shard(uid, ct_cl.ninbox), i, n,
			    (unsigned long long)ids[i], (unsigned long long)authors[i],
			    (unsigned long long)want[i].id, (unsigned long long)want[i].author);
			return false;
		}
	}
	if ((size_t)got != n) {
		ct_fail("%s %llu (inbox %u) holds %ld posts, want %zu", who,
		    (unsigned long long)uid, wb_uid_shard(uid, ct_cl.ninbox), got, n);
		return false;
	}
	return true;
}

/*
 * ct_want fills want with the posts (of ct_w.truth) of user u and of the
 * users u follows (u < 0: a crowd reader, who follows users 0 and 1),
 * newest first; the count.
 */
static inline size_t
ct_want(int u, ct_post *want)
{
	size_t n = 0;

	for (size_t p = 0; p < ct_w.ntruth; p++) {
		int a = ct_user_of(ct_w.truth[p].author);
		if (a >= 0 && (u < 0 ? a < 2 : a == u || ct_w.follows[u][a] == 1)) {
			want[n++] = ct_w.truth[p];
		}
	}
	cr_assert_leq(n, CT_HOME_MAX, "the model overflows an inbox: make fewer posts");
	qsort(want, n, sizeof(want[0]), ct_cmp_desc);
	return n;
}

/*
 * ct_check_homes checks, once the posts and follows are decided, every
 * user's home and every crowd_step-th crowd reader's (0: none), read from
 * their inbox shards, against the model; returns the homes compared.
 */
static inline size_t
ct_check_homes(size_t crowd_step)
{
	static ct_post want[CT_POSTS_MAX];
	unsigned long  before = atomic_load(&ct_nfail);
	size_t         homes = 0, n;

	for (unsigned u = 0; u < ct_w.nusers; u++, homes++) {
		n = ct_want((int)u, want);
		ct_check_home(NULL, ct_w.u[u].name, ct_w.u[u].uid, want, n);
	}
	n = ct_want(-1, want);
	for (size_t i = 0; crowd_step > 0 && i < ct_w.ncrowd; i += crowd_step, homes++) {
		ct_check_home(NULL, "crowd reader", ct_w.crowd[i], want, n);
	}
	cr_assert_eq(atomic_load(&ct_nfail), before, "%lu homes differ from the model",
	    atomic_load(&ct_nfail) - before);
	return homes;
}

/* ct_reader_on returns a user of the model whose inbox is on shard k and who follows someone. */
static inline uint64_t
ct_reader_on(unsigned k)
{
	for (unsigned u = ct_w.nauthors; u < ct_w.nusers; u++) {
		bool any = false;
		for (unsigned a = 0; a < ct_w.nusers; a++) {
			any |= ct_w.follows[u][a] == 1;
		}
		if (any && wb_uid_shard(ct_w.u[u].uid, ct_cl.ninbox) == k) {
			return ct_w.u[u].uid;
		}
	}
	for (size_t i = 0; i < ct_w.ncrowd; i++) {
		if (wb_uid_shard(ct_w.crowd[i], ct_cl.ninbox) == k) {
			return ct_w.crowd[i];
		}
	}
	cr_assert_fail("no reader who follows someone on inbox shard %u", k);
	return 0;
}

/* --- the load: authors publishing, readers following and unfollowing ---------------------- */

#define CT_LOAD_THREADS 4   /* publishing threads */
#define CT_LOAD_GAP_MS  100 /* each thread's pause after a post: about 40 posts a second */
#define CT_FOLLOWERS    2   /* following threads */
#define CT_FOLLOW_GAP   60  /* each one's pause after a follow or unfollow, ms */
#define CT_PER_AUTHOR   45  /* posts of one author at most: under any backfill, homes under 800 */

/* The load's threads. */
typedef struct ct_load {
	pthread_t th[CT_LOAD_THREADS + CT_FOLLOWERS];
	int       n;
} ct_load;

/*
 * ct_load_publish publishes as the authors of thread t in turn, each
 * through its own gateway, paced, until told to stop or each has posted
 * CT_PER_AUTHOR.
 */
static inline void *
ct_load_publish(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;

	for (unsigned n = 0; n < CT_PER_AUTHOR && !atomic_load(&ct_w.stop); n++) {
		for (unsigned a = t; a < ct_w.nauthors && !atomic_load(&ct_w.stop);
		     a += CT_LOAD_THREADS) {
			ct_publish(a, NULL);
			wbt_sleep_ms(wbt_ms(CT_LOAD_GAP_MS)); /* as many posts in a slower build */
		}
	}
	return NULL;
}

/*
 * ct_load_follow has the readers of thread t (every CT_FOLLOWERS-th, so
 * no pair has two changes in flight) follow or unfollow an author at
 * random, through their own gateways, until told to stop.  A pair whose
 * reply a fault ate is left alone after.
 */
static inline void *
ct_load_follow(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;
	uint64_t rng = 0xF0110u + t;
	unsigned nreaders = ct_w.nusers - ct_w.nauthors;

	while (!atomic_load(&ct_w.stop) && nreaders >= CT_FOLLOWERS) {
		unsigned r = ct_w.nauthors + t +
		             CT_FOLLOWERS * (unsigned)(ct_rand(&rng) % (nreaders / CT_FOLLOWERS));
		unsigned a = (unsigned)(ct_rand(&rng) % ct_w.nauthors);
		uint8_t  was = ct_w.follows[r][a];

		if (was == CT_UNKNOWN) {
			continue;
		}
		int rc = ct_relate(r, a, !was);
		if (rc == WARBLE_OK) {
			atomic_fetch_add(&ct_w.nfollows, 1);
		} else if ((rc == WARBLE_EUNAVAIL || rc == WARBLE_ETIMEDOUT) &&
		           atomic_load(&ct_w.faults)) {
			atomic_fetch_add(&ct_w.nambiguous, 1);
		} else {
			ct_fail("%s %s %s: %s: %s", ct_w.u[r].name, was ? "unfollow" : "follow",
			    ct_w.u[a].name, warble_errname(rc), warble_errmsg(ct_w.u[r].sdk));
		}
		wbt_sleep_ms(wbt_ms(CT_FOLLOW_GAP));
	}
	return NULL;
}

/* ct_load_start starts the publishing threads, and the following ones if follows. */
static inline void
ct_load_start(ct_load *l, bool follows)
{
	atomic_store(&ct_w.stop, false);
	l->n = 0;
	for (uintptr_t t = 0; t < CT_LOAD_THREADS; t++) {
		cr_assert_eq(pthread_create(&l->th[l->n++], NULL, ct_load_publish, (void *)t), 0);
	}
	for (uintptr_t t = 0; follows && t < CT_FOLLOWERS; t++) {
		cr_assert_eq(pthread_create(&l->th[l->n++], NULL, ct_load_follow, (void *)t), 0);
	}
}

/* ct_load_stop stops them and waits for them. */
static inline void
ct_load_stop(ct_load *l)
{
	atomic_store(&ct_w.stop, true);
	for (int t = 0; t < l->n; t++) {
		pthread_join(l->th[t], NULL);
	}
	l->n = 0;
}

/* ct_nposts returns how many posts were acknowledged so far. */
static inline size_t
ct_nposts(void)
{
	pthread_mutex_lock(&ct_w.mu);
	size_t n = ct_w.nposts;
	pthread_mutex_unlock(&ct_w.mu);
	return n;
}

/* ct_wait_posts waits (bounded) until at least n posts were acknowledged; false at the deadline. */
static inline bool
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

/* --- HTTP, for /readyz and /metrics ---------------------------------------------------- */

/*
 * ct_http_get sends GET path to url ("http://198.18.S.N:8080") and reads
 * the whole response (Connection: close) into a malloc'd string; its
 * status in *status (0 if none came within timeout_ms).
 */
static inline char *
ct_http_get(const char *url, const char *path, int *status, int timeout_ms)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	char               host[64], req[256];
	int                port = 0, fd;
	size_t             cap = 1 << 16, len = 0;
	char              *buf = malloc(cap);
	long long          end = wbt_now_ms() + timeout_ms;

	*status = 0;
	cr_assert_not_null(buf);
	cr_assert_eq(sscanf(url, "http://%63[^:]:%d", host, &port), 2, "%s", url);
	cr_assert_eq(inet_pton(AF_INET, host, &sa.sin_addr), 1);
	sa.sin_port = htons((uint16_t)port);
	cr_assert_geq(fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), 0);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		buf[0] = '\0';
		return buf;
	}
	int n = snprintf(req, sizeof(req),
	    "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, host);
	if (send(fd, req, (size_t)n, MSG_NOSIGNAL) != n) {
		len = 0;
	}
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		long long     left = end - wbt_now_ms();
		ssize_t       k;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
			break;
		}
		if (len + 4096 + 1 > cap) {
			cr_assert_not_null(buf = realloc(buf, cap *= 2));
		}
		if ((k = recv(fd, buf + len, cap - len - 1, 0)) <= 0) {
			break;
		}
		len += (size_t)k;
	}
	close(fd);
	buf[len] = '\0';
	(void)sscanf(buf, "HTTP/1.%*d %d", status);
	return buf;
}

#endif
