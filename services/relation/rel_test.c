/*
 * rel_test.c - warble-relation (with a real warble-user beside it)
 * driven over ipc:// with rt_client: follows, lists, counts, the event
 * log, concurrency and a missing user service.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_client.h"
#include "rt_pubsub.h"
#include "wb_proto.h"
#include "wb_slot.h"
#include "wbt.h"

static char        user_url[160], rel_url[160], pub_url[160];
static wbt_daemon *user_d, *rel_d;
static rt_client  *ucli, *rcli;

static void
rt_setup(void)
{
	char data[200], e_data[220], e_uurl[200], e_rurl[200], e_purl[220], upub[160], e_upub[200];

	cr_assert_eq(wbt_ipc_url(user_url, sizeof(user_url), "user"), 0);
	cr_assert_eq(wbt_ipc_url(rel_url, sizeof(rel_url), "rel"), 0);
	cr_assert_eq(wbt_ipc_url(pub_url, sizeof(pub_url), "relpub"), 0);
	cr_assert_eq(wbt_path(data, sizeof(data), "data"), 0);
	snprintf(e_data, sizeof(e_data), "WARBLE_DATA=%s", data);
	snprintf(e_uurl, sizeof(e_uurl), "WARBLE_USER_URL=%s", user_url);
	snprintf(e_rurl, sizeof(e_rurl), "WARBLE_RELATION_URL=%s", rel_url);
	snprintf(e_purl, sizeof(e_purl), "WARBLE_RELATION_PUB_URL=%s", pub_url);
	cr_assert_eq(wbt_ipc_url(upub, sizeof(upub), "userpub"), 0);
	snprintf(e_upub, sizeof(e_upub), "WARBLE_USER_PUB_URL=%s", upub);
	const char *env[] = { e_data, e_uurl, e_rurl, e_purl, e_upub, "WARBLE_PWHASH_OPS=1",
		"WARBLE_PWHASH_MEM=8192", "WARBLE_WORKERS=4", NULL };
	user_d = wbt_spawn("warble-user", NULL, env);
	rel_d = wbt_spawn("warble-relation", NULL, env);
	cr_assert_not_null(user_d);
	cr_assert_not_null(rel_d);
	cr_assert_eq(wbt_wait_ready(user_d, user_url, 10000), 0);
	cr_assert_eq(wbt_wait_ready(rel_d, rel_url, 10000), 0);
	cr_assert_eq(rt_client_open(&ucli, user_url, NULL), WB_OK);
	cr_assert_eq(rt_client_open(&rcli, rel_url, NULL), WB_OK);
}

static void
rt_teardown(void)
{
	rt_client_close(ucli);
	rt_client_close(rcli);
	ucli = rcli = NULL;
	wbt_cleanup();
}

TestSuite(relation, .init = rt_setup, .fini = rt_teardown, .timeout = 120);

/* rt_do sends req (freed here) through c; *rep kept if rep != NULL. */
static int
rt_do(rt_client *c, wb_obj *req, wb_obj **rep)
{
	wb_obj *r = NULL;
	int     rc;

	cr_assert_not_null(req);
	rc = rt_call(c, req, &r);
	wb_msg_free(req);
	if (rep != NULL) {
		*rep = r;
	} else {
		wb_msg_free(r);
	}
	return rc;
}

/* rt_users registers n users named <prefix><i> and writes their uids. */
static void
rt_users(const char *prefix, int n, uint64_t *uids)
{
	for (int i = 0; i < n; i++) {
		char    name[32];
		wb_obj *req = wb_request(WB_OP_USER_REGISTER), *rep;

		snprintf(name, sizeof(name), "%s%d", prefix, i);
		wb_set_cstr(req, WB_F_NAME, name);
		wb_set_cstr(req, WB_F_PASSWORD, "password1");
		cr_assert_eq(rt_do(ucli, req, &rep), WB_OK, "register %s", name);
		cr_assert(wb_get_u64(rep, WB_F_UID, &uids[i]));
		wb_msg_free(rep);
	}
}

static int
rt_edge(wb_op op, uint64_t uid, uint64_t target)
{
	wb_obj *req = wb_request(op);

	wb_set_u64(req, WB_F_UID, uid);
	wb_set_u64(req, WB_F_TARGET, target);
	return rt_do(rcli, req, NULL);
}

static bool
rt_is_following(uint64_t uid, uint64_t target)
{
	wb_obj *req = wb_request(WB_OP_REL_IS_FOLLOWING), *rep;
	bool    f = false;

	wb_set_u64(req, WB_F_UID, uid);
	wb_set_u64(req, WB_F_TARGET, target);
	cr_assert_eq(rt_do(rcli, req, &rep), WB_OK);
	cr_assert(wb_get_bool(rep, WB_F_FOLLOWED, &f));
	wb_msg_free(rep);
	return f;
}

static void
rt_counts(uint64_t uid, uint64_t *following, uint64_t *followers)
{
	wb_obj       *req = wb_request(WB_OP_REL_COUNTS), *rep;
	const wb_obj *users;
	size_t        n;

	wb_set_u64s(req, WB_F_UIDS, &uid, 1);
	cr_assert_eq(rt_do(rcli, req, &rep), WB_OK);
	cr_assert(wb_get_objs(rep, WB_F_USERS, &users, &n));
	cr_assert_eq(n, 1);
	cr_assert_eq(wb_u64(&users[0], WB_F_UID, 0), uid);
	*following = wb_u64(&users[0], WB_F_FOLLOWING, 999999);
	*followers = wb_u64(&users[0], WB_F_FOLLOWERS, 999999);
	wb_msg_free(rep);
}

/* rt_page reads one page of a list; returns the count and sets *next (0 if none). */
static size_t
rt_page(wb_op op, uint64_t uid, bool has_after, uint64_t after, uint64_t limit, uint64_t *out,
    uint64_t *next)
{
	wb_obj         *req = wb_request(op), *rep;
	const uint64_t *v;
	size_t          n = 0;

	wb_set_u64(req, WB_F_UID, uid);
	if (has_after) {
		wb_set_u64(req, WB_F_AFTER, after);
	}
	if (limit > 0) {
		wb_set_u64(req, WB_F_LIMIT, limit);
	}
	cr_assert_eq(rt_do(rcli, req, &rep), WB_OK);
	if (wb_get_u64s(rep, WB_F_UIDS, &v, &n)) {
		memcpy(out, v, n * sizeof(uint64_t));
	}
	*next = wb_u64(rep, WB_F_NEXT, 0);
	wb_msg_free(rep);
	return n;
}

/* rt_list_all pages through a whole list with page size limit; returns its length. */
static size_t
rt_list_all(wb_op op, uint64_t uid, uint64_t limit, uint64_t *out, size_t cap)
{
	size_t   total = 0;
	uint64_t next = 0;
	bool     first = true;

	for (int pages = 0; pages < 100000; pages++) {
		uint64_t page[10000];
		size_t   n = rt_page(op, uid, !first, next, limit, page, &next);
		cr_assert_leq(n, limit);
		cr_assert_leq(total + n, cap);
		memcpy(out + total, page, n * sizeof(uint64_t));
		total += n;
		first = false;
		if (next == 0) {
			return total;
		}
		cr_assert_eq(n, limit, "a page with a cursor is full");
		cr_assert_eq(next, page[n - 1]);
	}
	cr_assert_fail("list never ended");
	return 0;
}

/* rt_log_read reads events from seq from; returns their count, filling types/uids/targets. */
static size_t
rt_log_read(
    uint64_t from, char (*types)[16], uint64_t *uids, uint64_t *targets, size_t cap, uint64_t *last)
{
	size_t total = 0;

	for (int i = 0; i < 1000; i++) {
		wb_obj       *req = wb_request(WB_OP_REL_LOG), *rep;
		const wb_obj *evs;
		size_t        n = 0;

		wb_set_u64(req, WB_F_FROM, from);
		cr_assert_eq(rt_do(rcli, req, &rep), WB_OK);
		*last = wb_u64(rep, WB_F_LAST, 0);
		if (!wb_get_objs(rep, WB_F_EVENTS, &evs, &n) || n == 0) {
			wb_msg_free(rep);
			return total;
		}
		for (size_t k = 0; k < n; k++) {
			cr_assert_eq(
			    wb_u64(&evs[k], WB_F_SEQ, 0), from + k, "seqs are consecutive");
			cr_assert_lt(total, cap);
			snprintf(types[total], 16, "%s", wb_str(&evs[k], WB_F_TYPE, "?"));
			uids[total] = wb_u64(&evs[k], WB_F_UID, 0);
			targets[total] = wb_u64(&evs[k], WB_F_TARGET, 0);
			cr_assert_gt(wb_u64(&evs[k], WB_F_TIME, 0), 0);
			total++;
		}
		from += n;
		wb_msg_free(rep);
	}
	cr_assert_fail("log never ended");
	return 0;
}

Test(relation, follow_unfollow_idempotent_with_events)
{
	uint64_t u[3], fing, fers, last;
	char     types[16][16];
	uint64_t uids[16], targets[16];

	rt_users("ann", 3, u);
	cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, u[0], u[1]), WB_OK);
	cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, u[0], u[1]), WB_OK);
	cr_assert(rt_is_following(u[0], u[1]));
	cr_assert_not(rt_is_following(u[1], u[0]));
	rt_counts(u[0], &fing, &fers);
	cr_assert_eq(fing, 1);
	cr_assert_eq(fers, 0);
	rt_counts(u[1], &fing, &fers);
	cr_assert_eq(fing, 0);
	cr_assert_eq(fers, 1);

	cr_assert_eq(rt_edge(WB_OP_REL_UNFOLLOW, u[0], u[1]), WB_OK);
	cr_assert_eq(rt_edge(WB_OP_REL_UNFOLLOW, u[0], u[1]), WB_OK);
	cr_assert_eq(rt_edge(WB_OP_REL_UNFOLLOW, u[0], u[2]), WB_OK); /* never followed */
	cr_assert_not(rt_is_following(u[0], u[1]));
	rt_counts(u[0], &fing, &fers);
	cr_assert_eq(fing, 0);
	rt_counts(u[1], &fing, &fers);
	cr_assert_eq(fers, 0);
	cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, u[2], u[0]), WB_OK);

	/* exactly one event per change, in order, seqs 1.. */
	size_t n = rt_log_read(1, types, uids, targets, 16, &last);
	cr_assert_eq(n, 3);
	cr_assert_eq(last, 3);
	cr_assert_str_eq(types[0], "follow");
	cr_assert_eq(uids[0], u[0]);
	cr_assert_eq(targets[0], u[1]);
	cr_assert_str_eq(types[1], "unfollow");
	cr_assert_eq(uids[1], u[0]);
	cr_assert_eq(targets[1], u[1]);
	cr_assert_str_eq(types[2], "follow");
	cr_assert_eq(uids[2], u[2]);
	/* reading from the middle, and past the end */
	n = rt_log_read(3, types, uids, targets, 16, &last);
	cr_assert_eq(n, 1);
	cr_assert_eq(uids[0], u[2]);
	cr_assert_eq(rt_log_read(4, types, uids, targets, 16, &last), 0);
	cr_assert_eq(last, 3);
}

Test(relation, self_and_missing_users)
{
	uint64_t u[2], fing, fers, last;
	char     types[4][16];
	uint64_t uids[4], targets[4];

	rt_users("bea", 2, u);
	cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, u[0], u[0]), WB_ESELF);
	cr_assert_eq(rt_edge(WB_OP_REL_UNFOLLOW, u[0], u[0]), WB_ESELF);
	cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, u[0], 9999), WB_ENOUSER);
	cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, 9999, u[0]), WB_ENOUSER);
	cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, 0, u[0]), WB_ENOUSER);
	cr_assert_eq(rt_edge(WB_OP_REL_UNFOLLOW, u[0], 9999), WB_OK);
	cr_assert_not(rt_is_following(u[0], 9999));
	rt_counts(u[0], &fing, &fers);
	cr_assert_eq(fing + fers, 0);
	cr_assert_eq(rt_log_read(1, types, uids, targets, 4, &last), 0);
	cr_assert_eq(last, 0);
	/* a user registered after a failed check can be followed */
	uint64_t late;
	rt_users("late", 1, &late);
	cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, u[0], late), WB_OK);
	cr_assert(rt_is_following(u[0], late));
}

#define RT_MANY 300

static int
rt_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* rt_cmp_slot orders uids as a fans row does: by slot, then uid. */
static int
rt_cmp_slot(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	unsigned sx = wb_slot(x), sy = wb_slot(y);

	return sx != sy ? (sx < sy ? -1 : 1) : (x < y ? -1 : x > y);
}

Test(relation, lists_page_in_uid_order)
{
	static uint64_t u[RT_MANY], order[RT_MANY], got[RT_MANY];
	uint64_t        page[200], next, fing, fers;
	size_t          n;

	rt_users("cat", RT_MANY, u); /* uids run past 255: byte order must not matter */
	/* u[0] follows everyone and everyone follows u[0], in a shuffled order */
	for (int i = 0; i < RT_MANY - 1; i++) {
		order[i] = u[i + 1];
	}
	srand(7);
	for (int i = RT_MANY - 2; i > 0; i--) {
		int      k = rand() % (i + 1);
		uint64_t t = order[i];
		order[i] = order[k];
		order[k] = t;
	}
	for (int i = 0; i < RT_MANY - 1; i++) {
		cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, u[0], order[i]), WB_OK);
		cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, order[i], u[0]), WB_OK);
	}
	qsort(order, RT_MANY - 1, sizeof(uint64_t), rt_cmp_u64);
	rt_counts(u[0], &fing, &fers);
	cr_assert_eq(fing, RT_MANY - 1);
	cr_assert_eq(fers, RT_MANY - 1);

	/* the one page rule: limit 0 is refused, above the maximum gives the maximum */
	wb_obj *req = wb_request(WB_OP_REL_FANS);
	wb_set_u64(req, WB_F_UID, u[0]);
	wb_set_u64(req, WB_F_LIMIT, 0);
	cr_assert_eq(rt_do(rcli, req, NULL), WB_EINVAL, "limit 0");

	/* fans come in (slot, uid) order: one slot range is one run of them */
	uint64_t fan_order[RT_MANY];
	memcpy(fan_order, order, (RT_MANY - 1) * sizeof(uint64_t));
	qsort(fan_order, RT_MANY - 1, sizeof(uint64_t), rt_cmp_slot);
	uint64_t limits[] = { 1, 7, 64, 100, RT_MANY - 1, RT_MANY, 10000 };
	for (size_t li = 0; li < sizeof(limits) / sizeof(limits[0]); li++) {
		n = rt_list_all(WB_OP_REL_FOLLOWING, u[0], limits[li], got, RT_MANY);
		cr_assert_eq(n, RT_MANY - 1, "limit %llu", (unsigned long long)limits[li]);
		cr_assert_eq(memcmp(got, order, n * sizeof(uint64_t)), 0);
		n = rt_list_all(WB_OP_REL_FANS, u[0], limits[li], got, RT_MANY);
		cr_assert_eq(n, RT_MANY - 1);
		cr_assert_eq(memcmp(got, fan_order, n * sizeof(uint64_t)), 0);
	}
	/* default limit 100, and a cursor between two uids */
	n = rt_page(WB_OP_REL_FOLLOWING, u[0], false, 0, 0, page, &next);
	cr_assert_eq(n, 100);
	cr_assert_eq(next, order[99]);
	n = rt_page(WB_OP_REL_FANS, u[0], true, fan_order[10], 5, page, &next);
	cr_assert_eq(n, 5);
	cr_assert_eq(page[0], fan_order[11], "the page after a fan starts at the next one");
	/* a slot range: exactly the fans whose slots are in it, in order */
	uint64_t slots[2] = { wb_slot(fan_order[20]), wb_slot(fan_order[40]) + 1 }, inrange = 0;
	for (int i = 0; i < RT_MANY - 1; i++) {
		inrange += wb_slot(fan_order[i]) >= slots[0] && wb_slot(fan_order[i]) < slots[1];
	}
	req = wb_request(WB_OP_REL_FANS);
	wb_set_u64(req, WB_F_UID, u[0]);
	wb_set_u64(req, WB_F_LIMIT, RT_MANY);
	wb_set_u64s(req, WB_F_SLOTS, slots, 2);
	wb_obj         *rep;
	const uint64_t *in = NULL;
	size_t          nin = 0;
	cr_assert_eq(rt_do(rcli, req, &rep), WB_OK);
	cr_assert(wb_get_u64s(rep, WB_F_UIDS, &in, &nin));
	cr_assert_eq(
	    nin, inrange, "%zu fans in the slots, %llu expected", nin, (unsigned long long)inrange);
	for (size_t i = 0; i < nin; i++) {
		cr_assert(wb_slot(in[i]) >= slots[0] && wb_slot(in[i]) < slots[1]);
	}
	wb_msg_free(rep);
	uint64_t bad[2] = { 10, 10 };
	req = wb_request(WB_OP_REL_FANS);
	wb_set_u64(req, WB_F_UID, u[0]);
	wb_set_u64s(req, WB_F_SLOTS, bad, 2);
	cr_assert_eq(rt_do(rcli, req, NULL), WB_EINVAL, "an empty range");
	n = rt_page(WB_OP_REL_FOLLOWING, u[0], true, UINT64_MAX, 5, page, &next);
	cr_assert_eq(n, 0);
	cr_assert_eq(next, 0);
	/* someone else's lists hold only u[0] */
	n = rt_page(WB_OP_REL_FOLLOWING, u[5], false, 0, 10, page, &next);
	cr_assert_eq(n, 1);
	cr_assert_eq(page[0], u[0]);
	cr_assert_eq(next, 0);
	n = rt_page(WB_OP_REL_FANS, 123456, false, 0, 10, page, &next);
	cr_assert_eq(n, 0);
}

/* rt_followed reads one page of rel.followed; returns the count and sets *next (0 if none). */
static size_t
rt_followed(bool has_after, uint64_t after, uint64_t limit, uint64_t *out, uint64_t *next)
{
	wb_obj         *req = wb_request(WB_OP_REL_FOLLOWED), *rep;
	const uint64_t *v;
	size_t          n = 0;

	if (has_after) {
		wb_set_u64(req, WB_F_AFTER, after);
	}
	if (limit > 0) {
		wb_set_u64(req, WB_F_LIMIT, limit);
	}
	cr_assert_eq(rt_do(rcli, req, &rep), WB_OK);
	if (wb_get_u64s(rep, WB_F_UIDS, &v, &n)) {
		memcpy(out, v, n * sizeof(uint64_t));
	}
	*next = wb_u64(rep, WB_F_NEXT, 0);
	cr_assert(wb_has(rep, WB_F_TOTAL), "an estimate of the edges");
	wb_msg_free(rep);
	return n;
}

Test(relation, followed_pages_the_users_with_fans)
{
	uint64_t u[6], got[8], next;
	wb_obj  *req, *rep = NULL;

	rt_users("fd", 6, u);
	cr_assert_eq(rt_followed(false, 0, 0, got, &next), 0, "nobody is followed yet");
	/* followed: u1 (by u0, u2), u3 (by u0), u5 (by u4, later unfollowed by u4 and refollowed) */
	cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, u[0], u[1]), WB_OK);
	cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, u[2], u[1]), WB_OK);
	cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, u[0], u[3]), WB_OK);
	cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, u[4], u[5]), WB_OK);
	cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, u[4], u[2]), WB_OK);
	cr_assert_eq(rt_edge(WB_OP_REL_UNFOLLOW, u[4], u[2]), WB_OK); /* u2 has no fan left */
	cr_assert_eq(rt_followed(false, 0, 0, got, &next), 3);
	cr_assert_eq(next, 0);
	cr_assert(got[0] == u[1] && got[1] == u[3] && got[2] == u[5], "ascending, no u2");
	cr_assert_eq(rt_followed(false, 0, 2, got, &next), 2);
	cr_assert_eq(next, u[3], "the cursor is the last uid of a full page");
	cr_assert_eq(rt_followed(true, next, 2, got, &next), 1);
	cr_assert(got[0] == u[5] && next == 0);
	cr_assert_eq(rt_followed(true, UINT64_MAX, 2, got, &next), 0);
	req = wb_request(WB_OP_REL_FOLLOWED);
	wb_set_u64(req, WB_F_LIMIT, 0);
	cr_assert_eq(rt_do(rcli, req, &rep), WB_EINVAL, "limit 0");
	wb_msg_free(rep);
	req = wb_request(WB_OP_REL_FOLLOWED);
	wb_set_u64(req, WB_F_UID, 1);
	cr_assert_eq(rt_do(rcli, req, &rep), WB_EINVAL, "no uid field");
	wb_msg_free(rep);
}

#define RT_THREADS 8
#define RT_USERS   6
#define RT_OPS     150

struct rt_worker {
	unsigned        seed;
	const uint64_t *u;
	int             errors;
};

static void *
rt_worker_main(void *arg)
{
	struct rt_worker *w = arg;

	for (int i = 0; i < RT_OPS; i++) {
		/* half the traffic hits one pair, the rest spreads over all pairs */
		int a = 0, b = 1;
		if (rand_r(&w->seed) % 2) {
			a = rand_r(&w->seed) % RT_USERS;
			b = (a + 1 + rand_r(&w->seed) % (RT_USERS - 1)) % RT_USERS;
		}
		wb_op op = rand_r(&w->seed) % 2 ? WB_OP_REL_FOLLOW : WB_OP_REL_UNFOLLOW;
		if (rt_edge(op, w->u[a], w->u[b]) != WB_OK) {
			w->errors++;
		}
	}
	return NULL;
}

Test(relation, counts_exact_under_concurrency)
{
	uint64_t         u[RT_USERS];
	pthread_t        th[RT_THREADS];
	struct rt_worker w[RT_THREADS];
	static char      types[RT_THREADS * RT_OPS + 1][16];
	static uint64_t  uids[RT_THREADS * RT_OPS + 1], targets[RT_THREADS * RT_OPS + 1];
	bool             edge[RT_USERS][RT_USERS] = { { false } };
	uint64_t         list[RT_USERS], last;

	rt_users("dog", RT_USERS, u);
	for (int i = 0; i < RT_THREADS; i++) {
		w[i] = (struct rt_worker) { .seed = 1000u + (unsigned)i, .u = u };
		cr_assert_eq(pthread_create(&th[i], NULL, rt_worker_main, &w[i]), 0);
	}
	for (int i = 0; i < RT_THREADS; i++) {
		pthread_join(th[i], NULL);
		cr_assert_eq(w[i].errors, 0);
	}

	/* replay the log: it must describe exactly the state we read back */
	size_t n = rt_log_read(1, types, uids, targets, RT_THREADS * RT_OPS + 1, &last);
	cr_assert_eq(n, last);
	cr_assert_gt(n, 0);
	for (size_t k = 0; k < n; k++) {
		int a = -1, b = -1;
		for (int i = 0; i < RT_USERS; i++) {
			a = u[i] == uids[k] ? i : a;
			b = u[i] == targets[k] ? i : b;
		}
		cr_assert(a >= 0 && b >= 0);
		bool follow = strcmp(types[k], "follow") == 0;
		cr_assert(follow || strcmp(types[k], "unfollow") == 0, "type %s", types[k]);
		cr_assert_neq(edge[a][b], follow, "event %zu changes nothing", k + 1);
		edge[a][b] = follow;
	}
	for (int i = 0; i < RT_USERS; i++) {
		uint64_t fing, fers, nf = 0, nr = 0;
		rt_counts(u[i], &fing, &fers);
		size_t nl = rt_list_all(WB_OP_REL_FOLLOWING, u[i], 100, list, RT_USERS);
		cr_assert_eq(
		    fing, nl, "following count %llu, list %zu", (unsigned long long)fing, nl);
		for (size_t k = 0; k < nl; k++) {
			cr_assert(rt_is_following(u[i], list[k]));
		}
		size_t nfans = rt_list_all(WB_OP_REL_FANS, u[i], 2, list, RT_USERS);
		cr_assert_eq(
		    fers, nfans, "followers count %llu, fans %zu", (unsigned long long)fers, nfans);
		for (int j = 0; j < RT_USERS; j++) {
			nf += edge[i][j];
			nr += edge[j][i];
			cr_assert_eq(rt_is_following(u[i], u[j]), edge[i][j]);
		}
		cr_assert_eq(fing, nf);
		cr_assert_eq(fers, nr);
	}
}

Test(relation, counts_batch_limits)
{
	uint64_t *many = calloc(1001, sizeof(uint64_t));
	wb_obj   *req, *rep;

	cr_assert_not_null(many);
	req = wb_request(WB_OP_REL_COUNTS);
	wb_set_u64s(req, WB_F_UIDS, many, 1001);
	cr_assert_eq(rt_do(rcli, req, NULL), WB_EINVAL);
	req = wb_request(WB_OP_REL_COUNTS);
	wb_set_u64s(req, WB_F_UIDS, many, 1000);
	cr_assert_eq(rt_do(rcli, req, &rep), WB_OK);
	const wb_obj *users;
	size_t        n;
	cr_assert(wb_get_objs(rep, WB_F_USERS, &users, &n));
	cr_assert_eq(n, 1000);
	wb_msg_free(rep);
	free(many);
}

struct rt_heard {
	pthread_mutex_t mu;
	int             follows;
};

static void
rt_sub_cb(void *arg, const wb_obj *msg)
{
	struct rt_heard *h = arg;
	const wb_obj    *evs;
	size_t           n = 0;

	if (strcmp(wb_str(msg, WB_F_SOURCE, ""), "relation/0") != 0 ||
	    !wb_get_objs(msg, WB_F_EVENTS, &evs, &n)) {
		return;
	}
	pthread_mutex_lock(&h->mu);
	for (size_t i = 0; i < n; i++) {
		h->follows += strcmp(wb_str(&evs[i], WB_F_TYPE, ""), "follow") == 0;
	}
	pthread_mutex_unlock(&h->mu);
}

Test(relation, events_are_published)
{
	uint64_t        u[2];
	struct rt_heard h = { .mu = PTHREAD_MUTEX_INITIALIZER };
	rt_sub         *sub;
	int             heard = 0;

	rt_users("eve", 2, u);
	cr_assert_eq(rt_sub_open(&sub, pub_url, NULL, rt_sub_cb, &h), WB_OK);
	/* the subscriber connects in the background: toggle until one arrives */
	long long t0 = wbt_now_ms();
	while (heard == 0 && wbt_now_ms() - t0 < 10000) {
		cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, u[0], u[1]), WB_OK);
		cr_assert_eq(rt_edge(WB_OP_REL_UNFOLLOW, u[0], u[1]), WB_OK);
		wbt_sleep_ms(20);
		pthread_mutex_lock(&h.mu);
		heard = h.follows;
		pthread_mutex_unlock(&h.mu);
	}
	rt_sub_close(sub);
	cr_assert_gt(heard, 0, "no follow event published within 10 s");
}

Test(relation, user_service_down)
{
	uint64_t u[3];

	rt_users("fay", 3, u);
	cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, u[0], u[1]), WB_OK); /* caches both */
	cr_assert_eq(wbt_stop(user_d, SIGTERM, 10000), 0);
	/* known users still work; an unknown one cannot be checked */
	cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, u[1], u[0]), WB_OK);
	int rc = rt_edge(WB_OP_REL_FOLLOW, u[0], u[2]);
	cr_assert(rc == WB_EUNAVAIL || rc == WB_ETIMEDOUT, "rc %s", wb_err_name(rc));
	cr_assert_not(rt_is_following(u[0], u[2]));
	cr_assert(wbt_alive(rel_d));
	cr_assert_eq(wbt_stop(rel_d, SIGTERM, 10000), 0);
}

/* rt_gauge reads a gauge of relation's stats (UINT64_MAX if absent). */
static uint64_t
rt_gauge(const char *name)
{
	wb_obj  *rep = NULL;
	uint64_t v = UINT64_MAX;

	if (rt_do(rcli, wb_request(WB_OP_STATS), &rep) == WB_OK) {
		v = wbt_gauge(rep, name);
	}
	wb_msg_free(rep);
	return v;
}

#define RT_ERASE_FANS 2500 /* more than two of the erasure's pages */

Test(relation, erases_a_deleted_account)
{
	static char     types[RT_ERASE_FANS + 16][16];
	static uint64_t uids[RT_ERASE_FANS + 16], targets[RT_ERASE_FANS + 16];
	uint64_t        u[4], fans[RT_ERASE_FANS], following, followers, last, before;
	wb_obj         *req, *rep;
	const uint64_t *v;
	size_t          n;

	rt_users("ex", 4, u); /* u[0] is deleted; u[1] follows it and it follows u[1], u[2] */
	req = wb_request(WB_OP_USER_REGISTER_MANY);
	wb_set_cstr(req, WB_F_NAME, "exfan");
	wb_set_u64(req, WB_F_FROM, 0);
	wb_set_u64(req, WB_F_LIMIT, RT_ERASE_FANS);
	wb_set_cstr(req, WB_F_PASSWORD, "password1");
	cr_assert_eq(rt_do(ucli, req, &rep), WB_OK);
	cr_assert(wb_get_u64s(rep, WB_F_UIDS, &v, &n) && n == RT_ERASE_FANS);
	memcpy(fans, v, sizeof(fans));
	wb_msg_free(rep);
	req = wb_request(WB_OP_REL_FOLLOW_MANY);
	wb_set_u64(req, WB_F_TARGET, u[0]);
	wb_set_u64s(req, WB_F_UIDS, fans, RT_ERASE_FANS);
	cr_assert_eq(rt_do(rcli, req, NULL), WB_OK);
	cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, u[1], u[0]), WB_OK);
	cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, u[0], u[1]), WB_OK);
	cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, u[0], u[2]), WB_OK);
	cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, u[3], u[1]), WB_OK); /* untouched */
	rt_counts(u[0], &following, &followers);
	cr_assert(following == 2 && followers == RT_ERASE_FANS + 1);
	(void)rt_log_read(UINT64_MAX / 2, types, uids, targets, 1, &before);

	/* deleted in the user service: relation erases it from its log */
	req = wb_request(WB_OP_USER_DELETE_NAME);
	wb_set_cstr(req, WB_F_NAME, "ex0");
	cr_assert_eq(rt_do(ucli, req, NULL), WB_OK);
	long long deadline = wbt_now_ms() + wbt_ms(30000);
	while (rt_gauge("user_applied") != 1) {
		cr_assert_lt(wbt_now_ms(), deadline, "relation never applied the deletion");
		wbt_sleep_ms(20);
	}
	cr_assert_eq(rt_gauge("user_behind"), 0);
	cr_assert_eq(rt_gauge("erased_edges"), RT_ERASE_FANS + 3);

	/* every edge of it gone, both sides' counts exact */
	rt_counts(u[0], &following, &followers);
	cr_assert(following == 0 && followers == 0, "%llu %llu", (unsigned long long)following,
	    (unsigned long long)followers);
	cr_assert_eq(rt_list_all(WB_OP_REL_FANS, u[0], 1000, uids, RT_ERASE_FANS + 16), 0);
	cr_assert_eq(rt_list_all(WB_OP_REL_FOLLOWING, u[0], 1000, uids, RT_ERASE_FANS + 16), 0);
	rt_counts(u[1], &following, &followers);
	cr_assert(following == 0 && followers == 1, "u1: %llu %llu", (unsigned long long)following,
	    (unsigned long long)followers);
	rt_counts(u[2], &following, &followers);
	cr_assert(following == 0 && followers == 0);
	for (size_t i = 0; i < RT_ERASE_FANS; i += 97) {
		rt_counts(fans[i], &following, &followers);
		cr_assert_eq(
		    following, 0, "fan %zu still follows %llu", i, (unsigned long long)following);
	}
	cr_assert(rt_is_following(u[3], u[1]), "another edge went too");
	cr_assert_eq(rt_list_all(WB_OP_REL_FANS, u[1], 1000, uids, 16), 1);

	/* its log: an unfollow for each fan (their inboxes lose its posts), then erased */
	n = rt_log_read(before + 1, types, uids, targets, RT_ERASE_FANS + 16, &last);
	cr_assert_eq(n, RT_ERASE_FANS + 2, "%zu events", n);
	for (size_t i = 0; i + 1 < n; i++) {
		cr_assert_str_eq(types[i], "unfollow");
		cr_assert_eq(targets[i], u[0]);
	}
	cr_assert_str_eq(types[n - 1], "erased");
	cr_assert_eq(uids[n - 1], u[0]);

	/* nothing of it comes back: a follow of it is no such user */
	cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, u[3], u[0]), WB_ENOUSER);
	cr_assert_eq(rt_edge(WB_OP_REL_FOLLOW, u[0], u[3]), WB_ENOUSER);

	/* a restart applies nothing twice */
	cr_assert_eq(wbt_stop(rel_d, SIGTERM, 10000), 0);
	char e_data[220], e_uurl[200], e_rurl[200], e_purl[220];
	char data[200], upub[160], e_upub[200]; /* the same folder and addresses as rt_setup's */
	cr_assert_eq(wbt_path(data, sizeof(data), "data"), 0);
	cr_assert_eq(wbt_ipc_url(upub, sizeof(upub), "userpub"), 0);
	snprintf(e_data, sizeof(e_data), "WARBLE_DATA=%s", data);
	snprintf(e_uurl, sizeof(e_uurl), "WARBLE_USER_URL=%s", user_url);
	snprintf(e_rurl, sizeof(e_rurl), "WARBLE_RELATION_URL=%s", rel_url);
	snprintf(e_purl, sizeof(e_purl), "WARBLE_RELATION_PUB_URL=%s", pub_url);
	snprintf(e_upub, sizeof(e_upub), "WARBLE_USER_PUB_URL=%s", upub);
	const char *env[] = { e_data, e_uurl, e_rurl, e_purl, e_upub, NULL };
	cr_assert_not_null(rel_d = wbt_spawn("warble-relation", NULL, env));
	cr_assert_eq(wbt_wait_ready(rel_d, rel_url, 10000), 0);
	wbt_sleep_ms(300); /* its consumer reads the user log on start */
	cr_assert_eq(rt_gauge("user_applied"), 1);
	cr_assert_eq(rt_gauge("erased_edges"), 0, "the erasure ran again");
	(void)rt_log_read(before + 1, types, uids, targets, RT_ERASE_FANS + 16, &last);
	cr_assert_eq(last, before + RT_ERASE_FANS + 2, "events logged again");
}
