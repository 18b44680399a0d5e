/*
 * cluster_one_test.c - Warble as N identical `warble --shard i/N`
 * processes (suite "cluster_one"), each on a host of its own: shard i of
 * relation, content and inbox and a gateway in each, the user service in
 * the first too (--user); a reader's relation and inbox shards share a
 * process, so a fan-out reads their fans in-process (rt_local.h).
 *
 *   flows        ct_seed_flows through the processes' gateways (users on
 *                gateways 0 and 1), misrouted requests, /readyz and
 *                /metrics of every gateway
 *   big_account  20,000 fans (5,000 sanitized) over the three inbox
 *                shards, each post in exactly its fans' inboxes
 *   hybrid       flows with WARBLE_FANOUT_LIMIT=3 (the big accounts' posts
 *                merged from outboxes when read), every home exact
 *   processes_killed  each process killed (-9) in turn under publish and
 *                follow load through all three gateways, and restarted
 *                in place: nothing acknowledged lost or doubled, every
 *                home (users', and every 5th of a crowd's) as the stores
 *                say
 *
 * Each test ends by reading every store back (no row outside its shard).
 * Needs root (each test skips otherwise).
 */
#include "ct_flows.h"

#define CT_PROCESSES 3

static const char *const ct_env[] = { CT_ENV_BACKFILL, NULL };

Test(cluster_one, flows, .fini = ct_fini, .timeout = 300)
{
	ct_start((wbc_shape) { .one = CT_PROCESSES }, ct_env);
	ct_seed_flows(0xC5u);
	ct_misroutes();
	ct_ops_endpoints();
	ct_stop(true);
}

Test(cluster_one, big_account, .fini = ct_fini, .timeout = 300)
{
	ct_start((wbc_shape) { .one = CT_PROCESSES }, ct_env);
	ct_big_account();
	ct_stop(true);
}

/*
 * Each warble process killed (-9) in turn under publish and follow load
 * through the gateways of all three (a process is shard i of relation,
 * content and inbox and a gateway; the first also the user service) and
 * restarted in place: nothing acknowledged is lost or doubled, and every
 * home equals what the stores say it must hold.
 */
Test(cluster_one, processes_killed, .fini = ct_fini, .timeout = 300)
{
	ct_load  l;
	uint64_t rng = 0xC6u;

	ct_start((wbc_shape) { .one = CT_PROCESSES }, ct_env);
	ct_users(8 + 40, 8, "user", true);
	for (unsigned u = 0; u < ct_w.nusers; u++) {
		for (unsigned a = 0; a < 8; a++) {
			if (u != a && ct_rand(&rng) % 3 == 0) {
				cr_assert_eq(ct_relate(u, a, true), WARBLE_OK);
			}
		}
	}
	ct_crowd(600);
	atomic_store(&ct_w.faults, true);
	ct_load_start(&l, true);
	for (unsigned i = 0; i < CT_PROCESSES; i++) {
		unsigned h = (i + 1) % CT_PROCESSES;
		cr_assert(ct_wait_posts(ct_nposts() + 25, wbt_ms(60000)), "the load stalled at %zu",
		    ct_nposts());
		size_t at = ct_nposts();
		cr_assert_eq(wbc_restart(ct_cl.gateway[h], SIGKILL, wbt_ms(20000)), 0);
		fprintf(stderr, "cluster: warble%u killed at %zu posts, back at %zu\n", h, at,
		    ct_nposts());
	}
	bool more = ct_wait_posts(ct_nposts() + 25, wbt_ms(60000));
	ct_load_stop(&l);
	cr_assert(more, "the load stalled at %zu posts after the restarts", ct_nposts());
	cr_assert_eq(atomic_load(&ct_nfail), 0, "see the failures above");
	long long ms = ct_wait_caught_up(wbt_ms(CT_CAUGHT_UP_MS));
	size_t    stored = ct_decide_posts();
	unsigned  decided = ct_decide_follows();
	size_t    homes = ct_check_homes(5);
	fprintf(stderr,
	    "cluster: every warble process killed in turn: %zu posts and %lu follows acknowledged, "
	    "%lu replies lost (%zu of %zu posts stored, %u follows decided from the stores); "
	    "caught up in %lld ms; %zu homes equal to the recomputed ones\n",
	    ct_w.nposts, atomic_load(&ct_w.nfollows), atomic_load(&ct_w.nambiguous), stored,
	    ct_w.nmaybe, decided, ms, homes);
	ct_stop(true);
}

Test(cluster_one, hybrid, .fini = ct_fini, .timeout = 300)
{
	const char *const env[] = { CT_ENV_BACKFILL, "WARBLE_FANOUT_LIMIT=3", NULL };
	uint64_t          outboxed = 0;

	ct_start((wbc_shape) { .one = CT_PROCESSES }, env);
	ct_seed_flows(0xC3u);
	for (unsigned k = 0; k < ct_cl.ninbox; k++) {
		outboxed += wbt_stat(ct_inbox[k], "outbox_posts");
	}
	cr_assert_gt(outboxed, 0, "no post went to an outbox: the test tested nothing");
	ct_stop(true);
}
