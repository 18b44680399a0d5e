/*
 * cluster_block_test.c - blocks across hosts (suite "cluster_block"): the
 * five kinds of daemons of cluster_test.c (relation in two shards, the
 * inbox in three, two gateways), users acting through the SDK, the
 * blocker and the blocked each through a gateway of their own.
 *
 *   shards      a pair on different relation shards, blocked with both
 *               shards up, and a pair on one shard: the follows end both
 *               ways (each side read straight from its own shard), both
 *               refuse a follow (BLOCKED), neither home holds a post of
 *               the other (purged, and none after), timelines hidden both
 *               ways, counts exact; an unblock lets the blocked follow
 *               again and the backfill brings the posts back
 *   processes   the same on three `warble --shard i/3` processes
 *   shard_cut   the blocked user's relation shard cut off the network
 *               while the blocker blocks: the block is taken on the
 *               blocker's shard, and once healed the other shard learns
 *               of it by itself (the outbox): the blocked user's follow
 *               ends there and a new one is refused
 *
 *   race        pairs on two relation shards, each blocked while both
 *               follow each other again and again and both publish, four
 *               threads at once (a barrier a pair): in the end no follow
 *               either way on either shard, no post of either in the
 *               other's home, both follows refused
 *
 * Each test ends by stopping the daemons and reading every store back
 * (wbc_stores.c): no block cell outside its user's shard.  Needs root
 * (each test skips otherwise).
 */
#include "ct.h"

#define CB_USERS       12
#define CB_WAIT_MS     30000 /* the other shard takes the block (scaled) */
#define CB_RACE_USERS  40
#define CB_RACE_TRIES  4 /* follows each way, and posts, per pair */
#define CB_RACE_THREAD 4

/* The race's pairs (user indexes), and the session of every user. */
static unsigned          cb_pa[CB_RACE_USERS / 2], cb_pb[CB_RACE_USERS / 2], cb_npairs;
static char             *cb_token[CB_RACE_USERS];
static pthread_barrier_t cb_bar;

static const char *const cb_env[] = { CT_ENV_BACKFILL, NULL };

/* cb_rel returns user u's relation shard. */
static unsigned
cb_rel(unsigned u)
{
	return wb_uid_shard(ct_w.u[u].uid, ct_cl.nrelation);
}

/* cb_pair picks a pair of users not in the mask avoid, through different gateways, on different
 * relation shards or on the same one; false if none. */
static bool
cb_pair(bool same, uint64_t avoid, unsigned *a, unsigned *b)
{
	for (unsigned u = 0; u < ct_w.nusers; u++) {
		for (unsigned v = u + 1; v < ct_w.nusers; v++) {
			if ((avoid >> u & 1) == 0 && (avoid >> v & 1) == 0 &&
			    ct_w.u[u].gw != ct_w.u[v].gw && (cb_rel(u) == cb_rel(v)) == same) {
				*a = u;
				*b = v;
				return true;
			}
		}
	}
	return false;
}

/* cb_follows tells whether user u follows user v, read from u's relation shard. */
static bool
cb_follows(unsigned u, unsigned v)
{
	uint64_t uids[CT_USERS_MAX];
	size_t   n = ct_following(ct_w.u[u].uid, uids, CT_USERS_MAX);

	for (size_t i = 0; i < n; i++) {
		if (uids[i] == ct_w.u[v].uid) {
			return true;
		}
	}
	return false;
}

/* cb_home_by counts the posts by user v in user u's home, read from u's inbox shard. */
static long
cb_home_by(unsigned u, unsigned v)
{
	static uint64_t ids[CT_HOME_MAX + CT_PAGE], authors[CT_HOME_MAX + CT_PAGE];
	long n = ct_home(NULL, ct_w.u[u].uid, ids, authors, CT_HOME_MAX + CT_PAGE), k = 0;

	for (long i = 0; i < n; i++) {
		k += authors[i] == ct_w.u[v].uid;
	}
	return n < 0 ? -1 : k;
}

/* cb_timeline_len reads user v's timeline as user u sees it through u's gateway. */
static size_t
cb_timeline_len(unsigned u, unsigned v)
{
	warble_posts_t *p = NULL;
	size_t          n;

	cr_assert_eq(warble_timeline(ct_w.u[u].sdk, ct_w.u[v].name, 0, 0, &p), WARBLE_OK);
	n = p->n;
	warble_posts_free(p);
	return n;
}

/* cb_counts checks user u's following and fans counts, as another user's profile read shows. */
static void
cb_counts(unsigned viewer, unsigned u, uint64_t following, uint64_t followers)
{
	warble_user_t *p = NULL;

	cr_assert_eq(warble_profile(ct_w.u[viewer].sdk, ct_w.u[u].name, &p), WARBLE_OK);
	cr_assert_eq(p->following, following, "%s follows %llu", ct_w.u[u].name,
	    (unsigned long long)p->following);
	cr_assert_eq(p->followers, followers, "%s has %llu fans", ct_w.u[u].name,
	    (unsigned long long)p->followers);
	warble_user_free(p);
}

/* cb_befriend makes a and b follow each other and post once each; both homes hold both. */
static void
cb_befriend(unsigned a, unsigned b)
{
	cr_assert_eq(ct_relate(a, b, true), WARBLE_OK);
	cr_assert_eq(ct_relate(b, a, true), WARBLE_OK);
	cr_assert_eq(ct_publish(a, NULL), WARBLE_OK);
	cr_assert_eq(ct_publish(b, NULL), WARBLE_OK);
	ct_wait_caught_up(wbt_ms(CT_CAUGHT_UP_MS));
	cr_assert_eq(cb_home_by(a, b), 1);
	cr_assert_eq(cb_home_by(b, a), 1);
}

/*
 * cb_blocked checks every rule of a block of b by a that both shards
 * know: no follow either way on either shard, both follows refused,
 * neither home holds the other's posts (old or new), timelines hidden
 * both ways, the profiles say so through each one's gateway.
 */
static void
cb_blocked(unsigned a, unsigned b, unsigned other)
{
	warble_user_t *p = NULL;
	int            rc;

	cr_assert(!cb_follows(a, b), "%s still follows %s", ct_w.u[a].name, ct_w.u[b].name);
	cr_assert(!cb_follows(b, a), "%s still follows %s", ct_w.u[b].name, ct_w.u[a].name);
	rc = warble_follow(ct_w.u[b].sdk, ct_w.u[a].name);
	cr_assert_eq(rc, WARBLE_EBLOCKED, "the blocked follows again: %s", warble_errname(rc));
	cr_assert_str_eq(
	    warble_errmsg(ct_w.u[b].sdk), "this user blocks you: you cannot follow them");
	rc = warble_follow(ct_w.u[a].sdk, ct_w.u[b].name);
	cr_assert_eq(rc, WARBLE_EBLOCKED, "the blocker follows: %s", warble_errname(rc));
	cr_assert_eq(ct_publish(a, NULL), WARBLE_OK);
	cr_assert_eq(ct_publish(b, NULL), WARBLE_OK);
	ct_wait_caught_up(wbt_ms(CT_CAUGHT_UP_MS));
	cr_assert_eq(cb_home_by(a, b), 0, "a post of the blocked in the blocker's home");
	cr_assert_eq(cb_home_by(b, a), 0, "a post of the blocker in the blocked's home");
	cr_assert_eq(cb_timeline_len(a, b), 0);
	cr_assert_eq(cb_timeline_len(b, a), 0);
	cr_assert_gt(cb_timeline_len(other, a), 0, "others no longer read the blocker");
	cr_assert_gt(cb_timeline_len(other, b), 0, "others no longer read the blocked");
	cr_assert_eq(warble_profile(ct_w.u[b].sdk, ct_w.u[a].name, &p), WARBLE_OK);
	cr_assert(p->blocked_by && !p->blocking && !p->followed);
	warble_user_free(p);
	cr_assert_eq(warble_profile(ct_w.u[a].sdk, ct_w.u[b].name, &p), WARBLE_OK);
	cr_assert(p->blocking && !p->blocked_by && !p->followed);
	warble_user_free(p);
	cb_counts(other, a, 0, 0);
	cb_counts(other, b, 0, 0);
}

/* cb_unblocked lifts a's block of b: b follows a again, backfilled with a's posts. */
static void
cb_unblocked(unsigned a, unsigned b, long posts_of_a)
{
	long long deadline = wbt_now_ms() + wbt_ms(CB_WAIT_MS);
	int       rc;

	cr_assert_eq(warble_unblock(ct_w.u[a].sdk, ct_w.u[b].name), WARBLE_OK);
	while ((rc = ct_relate(b, a, true)) == WARBLE_EBLOCKED) {
		cr_assert_lt(
		    wbt_now_ms(), deadline, "the unblock never reached %s's shard", ct_w.u[b].name);
		wbt_sleep_ms(50);
	}
	cr_assert_eq(rc, WARBLE_OK, "%s", warble_errmsg(ct_w.u[b].sdk));
	ct_wait_caught_up(wbt_ms(CT_CAUGHT_UP_MS));
	cr_assert_eq(cb_home_by(b, a), posts_of_a, "the follow's backfill");
}

/* cb_shards runs the rules on shape: a pair on two relation shards, then one on one shard. */
static void
cb_shards(wbc_shape shape)
{
	unsigned a, b, c, d;

	ct_start(shape, cb_env);
	ct_users(CB_USERS, CB_USERS, "blk", true);
	cr_assert(cb_pair(false, 0, &a, &b), "no pair on two relation shards: make more users");
	cr_assert(cb_pair(true, UINT64_C(1) << a | UINT64_C(1) << b, &c, &d),
	    "no pair on one relation shard apart from the first: make more users");
	for (int k = 0; k < 2; k++) {
		unsigned x = k == 0 ? a : c, y = k == 0 ? b : d;
		unsigned other = 0;
		while (other == x || other == y) {
			other++;
		}
		fprintf(stderr, "cluster_block: %s (relation %u, gateway %u) blocks %s (%u, %u)\n",
		    ct_w.u[x].name, cb_rel(x), ct_w.u[x].gw, ct_w.u[y].name, cb_rel(y),
		    ct_w.u[y].gw);
		cb_befriend(x, y);
		cr_assert_eq(warble_block(ct_w.u[x].sdk, ct_w.u[y].name), WARBLE_OK, "%s",
		    warble_errmsg(ct_w.u[x].sdk));
		ct_w.follows[x][y] = ct_w.follows[y][x] = 0;
		cb_blocked(x, y, other);
		cb_unblocked(x, y, 2);
	}
	ct_stop(true);
}

Test(cluster_block, shards, .fini = ct_fini, .timeout = 300)
{
	cb_shards(CT_SHAPE);
}

Test(cluster_block, processes, .fini = ct_fini, .timeout = 300)
{
	cb_shards((wbc_shape) { .one = 3 });
}

Test(cluster_block, shard_cut, .fini = ct_fini, .timeout = 300)
{
	unsigned  a, b, other = 0;
	wbc_host *cut;
	long long t0, deadline;

	ct_start(CT_SHAPE, cb_env);
	ct_users(CB_USERS, CB_USERS, "cut", true);
	cr_assert(cb_pair(false, 0, &a, &b), "no pair on two relation shards: make more users");
	while (other == a || other == b) {
		other++;
	}
	cb_befriend(a, b);

	/* the blocked's shard cannot be told: the blocker's shard takes the block anyway */
	cut = ct_cl.relation[cb_rel(b)];
	cr_assert_eq(wbc_cut(cut), 0);
	int rc = warble_block(ct_w.u[a].sdk, ct_w.u[b].name);
	cr_assert_eq(wbc_heal(cut), 0);
	cr_assert_eq(rc, WARBLE_OK, "block with the other shard cut off: %s: %s",
	    warble_errname(rc), warble_errmsg(ct_w.u[a].sdk));
	cr_assert(!cb_follows(a, b), "the blocker's follow survived the block");
	ct_w.follows[a][b] = ct_w.follows[b][a] = 0;

	/* healed: the outbox tells the other shard, which ends the blocked's follow there */
	t0 = wbt_now_ms();
	deadline = t0 + wbt_ms(CB_WAIT_MS);
	while (cb_follows(b, a)) {
		cr_assert_lt(
		    wbt_now_ms(), deadline, "the block never reached %s's shard", ct_w.u[b].name);
		wbt_sleep_ms(50);
	}
	fprintf(stderr,
	    "cluster_block: the blocked's shard took the block %lld ms after the heal\n",
	    wbt_now_ms() - t0);
	cb_blocked(a, b, other);
	cb_unblocked(a, b, 2);
	ct_stop(true);
}

/* cb_race_follow follows whom as c's user again and again (undone but the last); false on a
 * failure other than BLOCKED. */
static bool
cb_race_follow(warble_client *c, unsigned pair, const char *whom)
{
	for (int k = 0; k < CB_RACE_TRIES; k++) {
		int rc = warble_follow(c, whom);
		if (rc == WARBLE_OK && k + 1 < CB_RACE_TRIES) {
			rc = warble_unfollow(c, whom);
		}
		if (rc != WARBLE_OK && rc != WARBLE_EBLOCKED) {
			ct_fail("pair %u: follow %s: %s: %s", pair, whom, warble_errname(rc),
			    warble_errmsg(c));
			return false;
		}
	}
	return true;
}

/* cb_race_run is thread t's part of every pair in turn: the block, a follow either way, or
 * the posts of both. */
static void *
cb_race_run(void *arg)
{
	unsigned       t = (unsigned)(uintptr_t)arg;
	warble_client *c = NULL;

	if (warble_open(&c, ct_cl.gateway_url[t % ct_cl.ngateway], wbt_ms(CT_SDK_MS)) !=
	    WARBLE_OK) {
		ct_fail("race thread %u: no client", t);
	}
	for (unsigned i = 0; i < cb_npairs; i++) {
		unsigned a = cb_pa[i], b = cb_pb[i];
		int      rc;

		pthread_barrier_wait(&cb_bar);
		if (c == NULL) {
			continue;
		}
		switch (t) {
		case 0:
			warble_set_token(c, cb_token[a]);
			if ((rc = warble_block(c, ct_w.u[b].name)) != WARBLE_OK) {
				ct_fail("pair %u: block: %s: %s", i, warble_errname(rc),
				    warble_errmsg(c));
			}
			break;
		case 1:
			warble_set_token(c, cb_token[b]);
			cb_race_follow(c, i, ct_w.u[a].name);
			break;
		case 2:
			warble_set_token(c, cb_token[a]);
			cb_race_follow(c, i, ct_w.u[b].name);
			break;
		default:
			for (int k = 0; k < CB_RACE_TRIES; k++) {
				unsigned u = k % 2 == 0 ? a : b;
				warble_set_token(c, cb_token[u]);
				ct_publish(u, c);
			}
			break;
		}
	}
	warble_close(c);
	return NULL;
}

Test(cluster_block, race, .fini = ct_fini, .timeout = 300)
{
	pthread_t th[CB_RACE_THREAD];
	bool      paired[CB_RACE_USERS] = { false };
	long long t0;

	ct_start(CT_SHAPE, cb_env);
	ct_users(CB_RACE_USERS, CB_RACE_USERS, "race", true);
	for (unsigned u = 0; u < CB_RACE_USERS; u++) {
		for (unsigned v = u + 1; v < CB_RACE_USERS && !paired[u]; v++) {
			if (!paired[v] && cb_rel(u) != cb_rel(v)) {
				paired[u] = paired[v] = true;
				cb_pa[cb_npairs] = u;
				cb_pb[cb_npairs++] = v;
			}
		}
		cb_token[u] = strdup(warble_token(ct_w.u[u].sdk));
		cr_assert_not_null(cb_token[u]);
	}
	cr_assert_geq(cb_npairs, CB_RACE_USERS / 4, "only %u pairs across the shards", cb_npairs);
	for (unsigned i = 0; i < cb_npairs; i++) {
		cr_assert_eq(ct_relate(cb_pa[i], cb_pb[i], true), WARBLE_OK);
		cr_assert_eq(ct_relate(cb_pb[i], cb_pa[i], true), WARBLE_OK);
		cr_assert_eq(ct_publish(cb_pa[i], NULL), WARBLE_OK);
		cr_assert_eq(ct_publish(cb_pb[i], NULL), WARBLE_OK);
	}
	ct_wait_caught_up(wbt_ms(CT_CAUGHT_UP_MS));

	cr_assert_eq(pthread_barrier_init(&cb_bar, NULL, CB_RACE_THREAD), 0);
	t0 = wbt_now_ms();
	for (uintptr_t t = 0; t < CB_RACE_THREAD; t++) {
		cr_assert_eq(pthread_create(&th[t], NULL, cb_race_run, (void *)t), 0);
	}
	for (unsigned t = 0; t < CB_RACE_THREAD; t++) {
		pthread_join(th[t], NULL);
	}
	pthread_barrier_destroy(&cb_bar);
	cr_assert_eq(atomic_load(&ct_nfail), 0, "see the failures above");
	fprintf(stderr, "cluster_block: %u pairs across the relation shards raced in %lld ms\n",
	    cb_npairs, wbt_now_ms() - t0);

	/* the pushes to the other shards are made before each block's reply; the inbox catches up */
	ct_wait_caught_up(wbt_ms(CT_CAUGHT_UP_MS));
	for (unsigned i = 0; i < cb_npairs; i++) {
		unsigned a = cb_pa[i], b = cb_pb[i];
		cr_assert(
		    !cb_follows(a, b), "pair %u: %s follows %s", i, ct_w.u[a].name, ct_w.u[b].name);
		cr_assert(
		    !cb_follows(b, a), "pair %u: %s follows %s", i, ct_w.u[b].name, ct_w.u[a].name);
		cr_assert_eq(
		    cb_home_by(a, b), 0, "pair %u: a post of the blocked in the blocker's home", i);
		cr_assert_eq(
		    cb_home_by(b, a), 0, "pair %u: a post of the blocker in the blocked's home", i);
		cr_assert_eq(warble_follow(ct_w.u[b].sdk, ct_w.u[a].name), WARBLE_EBLOCKED);
		ct_w.follows[a][b] = ct_w.follows[b][a] = 0;
	}
	for (unsigned u = 0; u < CB_RACE_USERS; u++) {
		free(cb_token[u]);
		cb_token[u] = NULL;
	}
	ct_stop(true);
}
