/*
 * rel_block_test.c - blocks in warble-relation, over ipc:// with
 * rt_client beside a real warble-user: on one shard (both sides in one
 * batch), and across two shards (the blocked user's side pushed by the
 * blocker's shard), with that shard stopped while blocks and unblocks
 * are made: each side must end as the last change says.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "rt_client.h"
#include "wb_proto.h"
#include "wb_slot.h"
#include "wbt.h"

#define RB_SHARDS 2

static char        rb_user_url[160], rb_rel_url[RB_SHARDS][160], rb_pub_url[RB_SHARDS][160];
static char        rb_env[RB_SHARDS][8][400];
static wbt_daemon *rb_user, *rb_rel[RB_SHARDS];
static rt_client  *rb_ucli, *rb_rcli[RB_SHARDS];
static unsigned    rb_n; /* relation shards started */

/* rb_spawn_rel starts relation shard i of rb_n with the environment rb_env[i]. */
static wbt_daemon *
rb_spawn_rel(unsigned i)
{
	const char *env[9];

	for (int k = 0; k < 8; k++) {
		env[k] = rb_env[i][k][0] != '\0' ? rb_env[i][k] : NULL;
	}
	env[8] = NULL;
	return wbt_spawn("warble-relation", NULL, env);
}

/* rb_start starts warble-user and n relation shards, each knowing the others. */
static void
rb_start(unsigned n)
{
	char data[200], e_data[220], e_uurl[200], list[400] = "";
	int  len = 0;

	rb_n = n;
	cr_assert_eq(wbt_ipc_url(rb_user_url, sizeof(rb_user_url), "user"), 0);
	cr_assert_eq(wbt_path(data, sizeof(data), "data-user"), 0);
	snprintf(e_data, sizeof(e_data), "WARBLE_DATA=%s", data);
	snprintf(e_uurl, sizeof(e_uurl), "WARBLE_USER_URL=%s", rb_user_url);
	const char *uenv[] = { e_data, e_uurl, "WARBLE_PWHASH_OPS=1", "WARBLE_PWHASH_MEM=8192",
		NULL };
	rb_user = wbt_spawn("warble-user", NULL, uenv);
	cr_assert_not_null(rb_user);
	for (unsigned i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "rel%u", i);
		cr_assert_eq(wbt_ipc_url(rb_rel_url[i], sizeof(rb_rel_url[i]), name), 0);
		snprintf(name, sizeof(name), "relpub%u", i);
		cr_assert_eq(wbt_ipc_url(rb_pub_url[i], sizeof(rb_pub_url[i]), name), 0);
		len += snprintf(
		    list + len, sizeof(list) - (size_t)len, "%s%s", i ? "," : "", rb_rel_url[i]);
	}
	for (unsigned i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "data-rel%u", i);
		cr_assert_eq(wbt_path(data, sizeof(data), name), 0);
		snprintf(rb_env[i][0], sizeof(rb_env[i][0]), "WARBLE_DATA=%s", data);
		snprintf(rb_env[i][1], sizeof(rb_env[i][1]), "WARBLE_USER_URL=%s", rb_user_url);
		snprintf(
		    rb_env[i][2], sizeof(rb_env[i][2]), "WARBLE_RELATION_URL=%s", rb_rel_url[i]);
		snprintf(rb_env[i][3], sizeof(rb_env[i][3]), "WARBLE_RELATION_PUB_URL=%s",
		    rb_pub_url[i]);
		snprintf(rb_env[i][4], sizeof(rb_env[i][4]), "WARBLE_SHARD=%u/%u", i, n);
		snprintf(rb_env[i][5], sizeof(rb_env[i][5]), "WARBLE_RELATION_URLS=%s", list);
		snprintf(rb_env[i][6], sizeof(rb_env[i][6]), "WARBLE_WORKERS=4");
		rb_env[i][7][0] = '\0';
		cr_assert_not_null(rb_rel[i] = rb_spawn_rel(i));
	}
	cr_assert_eq(wbt_wait_ready(rb_user, rb_user_url, wbt_ms(10000)), 0);
	cr_assert_eq(rt_client_open(&rb_ucli, rb_user_url, NULL), WB_OK);
	for (unsigned i = 0; i < n; i++) {
		cr_assert_eq(wbt_wait_ready(rb_rel[i], rb_rel_url[i], wbt_ms(10000)), 0);
		cr_assert_eq(rt_client_open(&rb_rcli[i], rb_rel_url[i], NULL), WB_OK);
	}
}

static void
rb_teardown(void)
{
	rt_client_close(rb_ucli);
	rb_ucli = NULL;
	for (unsigned i = 0; i < RB_SHARDS; i++) {
		rt_client_close(rb_rcli[i]);
		rb_rcli[i] = NULL;
	}
	wbt_cleanup();
}

TestSuite(rel_block, .fini = rb_teardown, .timeout = 120);

/* rb_user_on registers users named <prefix><k> until one lands on shard s of rb_n; its uid. */
static uint64_t
rb_user_on(const char *prefix, unsigned s)
{
	for (int k = 0; k < 64; k++) {
		char     name[32];
		uint64_t uid;
		wb_obj  *req = wb_request(WB_OP_USER_REGISTER), *rep = NULL;

		snprintf(name, sizeof(name), "%s%d", prefix, k);
		wb_set_cstr(req, WB_F_NAME, name);
		wb_set_cstr(req, WB_F_PASSWORD, "password1");
		cr_assert_eq(wbt_call(rb_ucli, req, &rep), WB_OK, "register %s", name);
		cr_assert(wb_get_u64(rep, WB_F_UID, &uid));
		wb_msg_free(rep);
		if (wb_uid_shard(uid, rb_n) == s) {
			return uid;
		}
	}
	cr_assert_fail("no user of shard %u in 64 tries", s);
	return 0;
}

/* rb_cli is the client of uid's shard. */
static rt_client *
rb_cli(uint64_t uid)
{
	return rb_rcli[wb_uid_shard(uid, rb_n)];
}

/* rb_pair sends op {uid, target} to uid's shard; returns the code, *msg its message. */
static int
rb_pair(wb_op op, uint64_t uid, uint64_t target, char *msg, size_t len)
{
	wb_obj     *req = wb_request(op), *rep = NULL;
	const char *m = NULL;
	int         rc;

	wb_set_u64(req, WB_F_UID, uid);
	wb_set_u64(req, WB_F_TARGET, target);
	rc = wbt_call(rb_cli(uid), req, &rep);
	if (msg != NULL) {
		(void)wb_reply_code(rep, &m);
		snprintf(msg, len, "%s", m != NULL ? m : "");
	}
	wb_msg_free(rep);
	return rc;
}

/* rb_ask reads rel.is_following {uid, target} on uid's shard. */
static void
rb_ask(uint64_t uid, uint64_t target, bool *followed, bool *blocking, bool *blocked_by)
{
	wb_obj *req = wb_request(WB_OP_REL_IS_FOLLOWING), *rep = NULL;

	wb_set_u64(req, WB_F_UID, uid);
	wb_set_u64(req, WB_F_TARGET, target);
	cr_assert_eq(wbt_call(rb_cli(uid), req, &rep), WB_OK);
	*followed = *blocking = *blocked_by = true;
	cr_assert(wb_get_bool(rep, WB_F_FOLLOWED, followed));
	cr_assert(wb_get_bool(rep, WB_F_BLOCKING, blocking));
	cr_assert(wb_get_bool(rep, WB_F_BLOCKED_BY, blocked_by));
	wb_msg_free(rep);
}

/* rb_blocks reads whom uid blocks (at most 8). */
static size_t
rb_blocks(uint64_t uid, uint64_t *out)
{
	wb_obj         *req = wb_request(WB_OP_REL_BLOCKS), *rep = NULL;
	const uint64_t *v = NULL;
	size_t          n = 0;

	wb_set_u64(req, WB_F_UID, uid);
	cr_assert_eq(wbt_call(rb_cli(uid), req, &rep), WB_OK);
	(void)wb_get_u64s(rep, WB_F_UIDS, &v, &n);
	cr_assert_leq(n, 8);
	memcpy(out, v, n * sizeof(*v));
	wb_msg_free(rep);
	return n;
}

/* rb_following_count reads uid's "following" count on uid's shard. */
static uint64_t
rb_following_count(uint64_t uid)
{
	wb_obj       *req = wb_request(WB_OP_REL_COUNTS), *rep = NULL;
	const wb_obj *users = NULL;
	size_t        n = 0;
	uint64_t      v;

	wb_set_u64s(req, WB_F_UIDS, &uid, 1);
	cr_assert_eq(wbt_call(rb_cli(uid), req, &rep), WB_OK);
	cr_assert(wb_get_objs(rep, WB_F_USERS, &users, &n) && n == 1);
	v = wb_u64(&users[0], WB_F_FOLLOWING, 99);
	wb_msg_free(rep);
	return v;
}

/* rb_log_types counts the follow and unfollow events in shard s's log. */
static void
rb_log_types(unsigned s, int *follows, int *unfollows)
{
	wb_obj       *req = wb_request(WB_OP_REL_LOG), *rep = NULL;
	const wb_obj *evs = NULL;
	size_t        n = 0;

	*follows = *unfollows = 0;
	wb_set_u64(req, WB_F_FROM, 1);
	cr_assert_eq(wbt_call(rb_rcli[s], req, &rep), WB_OK);
	(void)wb_get_objs(rep, WB_F_EVENTS, &evs, &n);
	for (size_t i = 0; i < n; i++) {
		const char *t = wb_str(&evs[i], WB_F_TYPE, "");
		*follows += strcmp(t, "follow") == 0;
		*unfollows += strcmp(t, "unfollow") == 0;
	}
	wb_msg_free(rep);
}

/* rb_gauge reads a gauge of relation shard s's stats. */
static uint64_t
rb_gauge(unsigned s, const char *name)
{
	wb_obj  *rep = NULL;
	uint64_t v;

	cr_assert_eq(wbt_call(rb_rcli[s], wb_request(WB_OP_STATS), &rep), WB_OK);
	v = wbt_gauge(rep, name);
	wb_msg_free(rep);
	return v;
}

/* rb_check asserts what uid and other hold of each other: follows each way and the block. */
static void
rb_check(uint64_t a, uint64_t b, bool a_blocks_b)
{
	bool f, blocking, blocked_by;

	rb_ask(a, b, &f, &blocking, &blocked_by);
	cr_assert(!f, "%llu still follows %llu", (unsigned long long)a, (unsigned long long)b);
	cr_assert_eq(blocking, a_blocks_b);
	cr_assert(!blocked_by);
	rb_ask(b, a, &f, &blocking, &blocked_by);
	cr_assert(!f, "%llu still follows %llu", (unsigned long long)b, (unsigned long long)a);
	cr_assert(!blocking);
	cr_assert_eq(blocked_by, a_blocks_b);
}

/* rb_rules runs the rules of a block between a and b (wherever they live). */
static void
rb_rules(uint64_t a, uint64_t b)
{
	char     msg[200];
	uint64_t got[8];
	bool     f, blocking, blocked_by;

	cr_assert_eq(rb_pair(WB_OP_REL_FOLLOW, a, b, NULL, 0), WB_OK);
	cr_assert_eq(rb_pair(WB_OP_REL_FOLLOW, b, a, NULL, 0), WB_OK);
	cr_assert_eq(rb_following_count(a), 1);

	/* the block ends both follows, and refuses them again, each way */
	cr_assert_eq(rb_pair(WB_OP_REL_BLOCK, a, b, NULL, 0), WB_OK);
	rb_check(a, b, true);
	cr_assert_eq(rb_following_count(a), 0);
	cr_assert_eq(rb_following_count(b), 0);
	cr_assert_eq(rb_pair(WB_OP_REL_FOLLOW, b, a, msg, sizeof(msg)), WB_EBLOCKED);
	cr_assert(strstr(msg, "blocks you") != NULL, "message: %s", msg);
	cr_assert_eq(rb_pair(WB_OP_REL_FOLLOW, a, b, msg, sizeof(msg)), WB_EBLOCKED);
	cr_assert(strstr(msg, "unblock") != NULL, "message: %s", msg);
	cr_assert_eq(rb_blocks(a, got), 1);
	cr_assert_eq(got[0], b);
	cr_assert_eq(rb_blocks(b, got), 0);

	/* again: nothing changes */
	cr_assert_eq(rb_pair(WB_OP_REL_BLOCK, a, b, NULL, 0), WB_OK);
	cr_assert_eq(rb_blocks(a, got), 1);

	/* b blocks a too; a lifts its block: b's still stands */
	cr_assert_eq(rb_pair(WB_OP_REL_BLOCK, b, a, NULL, 0), WB_OK);
	cr_assert_eq(rb_pair(WB_OP_REL_UNBLOCK, a, b, NULL, 0), WB_OK);
	rb_ask(a, b, &f, &blocking, &blocked_by);
	cr_assert(!blocking && blocked_by);
	cr_assert_eq(rb_pair(WB_OP_REL_FOLLOW, a, b, NULL, 0), WB_EBLOCKED);
	cr_assert_eq(rb_blocks(a, got), 0);
	cr_assert_eq(rb_pair(WB_OP_REL_UNBLOCK, b, a, NULL, 0), WB_OK);
	cr_assert_eq(rb_pair(WB_OP_REL_UNBLOCK, b, a, NULL, 0), WB_OK);

	/* lifted both ways: following works again */
	cr_assert_eq(rb_pair(WB_OP_REL_FOLLOW, a, b, NULL, 0), WB_OK);
	cr_assert_eq(rb_pair(WB_OP_REL_FOLLOW, b, a, NULL, 0), WB_OK);
	rb_ask(a, b, &f, &blocking, &blocked_by);
	cr_assert(f && !blocking && !blocked_by);

	/* bad pairs */
	cr_assert_eq(rb_pair(WB_OP_REL_BLOCK, a, a, NULL, 0), WB_EINVAL);
	cr_assert_eq(rb_pair(WB_OP_REL_BLOCK, a, 999999999, NULL, 0), WB_ENOUSER);
}

Test(rel_block, one_shard)
{
	uint64_t a, b;
	int      follows, unfollows;

	rb_start(1);
	a = rb_user_on("one_a", 0);
	b = rb_user_on("one_b", 0);
	rb_rules(a, b);
	/* 4 follows, the block's 2 unfollows (one batch), nothing for the blocks themselves */
	rb_log_types(0, &follows, &unfollows);
	cr_assert_eq(follows, 4);
	cr_assert_eq(unfollows, 2);
}

/* rb_wait_block waits until b's shard holds a's block of b as on says. */
static void
rb_wait_block(uint64_t a, uint64_t b, bool on)
{
	long long deadline = wbt_now_ms() + wbt_ms(20000);

	for (;;) {
		bool f, blocking, blocked_by;

		rb_ask(b, a, &f, &blocking, &blocked_by);
		if (blocked_by == on && (!on || !f)) {
			return;
		}
		cr_assert_lt(wbt_now_ms(), deadline,
		    "%llu's shard never took the %s of %llu (followed %d, blocked_by %d)",
		    (unsigned long long)b, on ? "block" : "unblock", (unsigned long long)a, f,
		    blocked_by);
		wbt_sleep_ms(50);
	}
}

Test(rel_block, two_shards)
{
	uint64_t a, b, got[8];
	int      follows, unfollows;
	bool     f, blocking, blocked_by;

	rb_start(2);
	a = rb_user_on("two_a", 0);
	b = rb_user_on("two_b", 1);
	rb_rules(a, b);
	cr_assert_eq(rb_gauge(0, "blocks_pending"), 0);
	cr_assert_geq(rb_gauge(0, "blocks_pushed"), 2);
	rb_log_types(0, &follows, &unfollows);
	cr_assert_eq(follows, 2);
	cr_assert_eq(unfollows, 1); /* a's follow of b, ended on a's shard */
	rb_log_types(1, &follows, &unfollows);
	cr_assert_eq(follows, 2);
	cr_assert_eq(unfollows, 1); /* b's follow of a, ended on b's shard by the push */

	/* a block asked of the wrong shard is refused before it writes anything */
	wb_obj *req = wb_request(WB_OP_REL_BLOCK);
	wb_set_u64(req, WB_F_UID, a);
	wb_set_u64(req, WB_F_TARGET, b);
	cr_assert_eq(wbt_call(rb_rcli[1], req, NULL), WB_EWRONGSHARD);

	/* b's shard down: a's block is acknowledged, and b's side follows once it is back */
	cr_assert_eq(wbt_stop(rb_rel[1], SIGKILL, wbt_ms(5000)), 128 + SIGKILL);
	cr_assert_eq(rb_pair(WB_OP_REL_BLOCK, a, b, NULL, 0), WB_OK);
	cr_assert_eq(rb_pair(WB_OP_REL_UNBLOCK, a, b, NULL, 0), WB_OK);
	cr_assert_eq(rb_pair(WB_OP_REL_BLOCK, a, b, NULL, 0), WB_OK);
	rb_ask(a, b, &f, &blocking, &blocked_by);
	cr_assert(!f && blocking);
	cr_assert_not_null(rb_rel[1] = rb_spawn_rel(1));
	cr_assert_eq(wbt_wait_ready(rb_rel[1], rb_rel_url[1], wbt_ms(10000)), 0);
	rb_wait_block(a, b, true);
	cr_assert_eq(rb_pair(WB_OP_REL_FOLLOW, b, a, NULL, 0), WB_EBLOCKED);
	rb_log_types(1, &follows, &unfollows);
	cr_assert_eq(unfollows, 2, "b's follow of a did not end with the block pushed late");

	/* an older gen arriving late changes nothing */
	req = wb_request(WB_OP_REL_BLOCK_PEER);
	wb_set_u64(req, WB_F_UID, b);
	wb_set_u64(req, WB_F_TARGET, a);
	wb_set_u64(req, WB_F_SEQ, 1);
	wb_set_bool(req, WB_F_BLOCKING, false);
	cr_assert_eq(wbt_call(rb_rcli[1], req, NULL), WB_OK);
	rb_ask(b, a, &f, &blocking, &blocked_by);
	cr_assert(blocked_by, "a stale unblock undid the block");

	/* the unblock while b's shard is down reaches it too */
	cr_assert_eq(wbt_stop(rb_rel[1], SIGKILL, wbt_ms(5000)), 128 + SIGKILL);
	cr_assert_eq(rb_pair(WB_OP_REL_UNBLOCK, a, b, NULL, 0), WB_OK);
	cr_assert_eq(rb_blocks(a, got), 0);
	cr_assert_not_null(rb_rel[1] = rb_spawn_rel(1));
	cr_assert_eq(wbt_wait_ready(rb_rel[1], rb_rel_url[1], wbt_ms(10000)), 0);
	rb_wait_block(a, b, false);
	cr_assert_eq(rb_pair(WB_OP_REL_FOLLOW, b, a, NULL, 0), WB_OK);
}

Test(rel_block, shards_need_each_address)
{
	char        data[200], e_data[220], e_rurl[200], url[160];
	const char *env[] = { e_data, e_rurl, "WARBLE_SHARD=0/2", NULL };
	wbt_daemon *d;

	cr_assert_eq(wbt_path(data, sizeof(data), "data-lone"), 0);
	cr_assert_eq(wbt_ipc_url(url, sizeof(url), "lone"), 0);
	snprintf(e_data, sizeof(e_data), "WARBLE_DATA=%s", data);
	snprintf(e_rurl, sizeof(e_rurl), "WARBLE_RELATION_URL=%s", url);
	cr_assert_not_null(d = wbt_spawn("warble-relation", NULL, env));
	cr_assert_gt(wbt_wait_exit(d, wbt_ms(10000)), 0,
	    "a shard of two without the shards' addresses started");
}
