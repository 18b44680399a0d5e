/*
 * cluster_test.c - Warble across hosts (suite "cluster"): the user
 * service once, two gateways, relation and content in two shards each
 * and the inbox in three, every process on a host of its own (ct.h,
 * wbc_cluster.h); the same flows on `warble --shard` processes are
 * cluster_one_test.c, the faults cluster_fault_test.c, the gateways'
 * bounds cluster_gateway_test.c, backup and restore cluster_admin_test.c.
 *
 *   flows        users act through the SDK, half through each gateway,
 *                and every home, timeline, count and list page equals the
 *                model (ct_seed_flows); misrouted requests get WRONG_SHARD
 *                naming the owner; /readyz and /metrics name every shard
 *   big_account  an account whose 20,000 fans (5,000 sanitized) live on
 *                every inbox shard: each post in exactly its fans'
 *                inboxes, summed over the shards, fanned out in pages of
 *                1,000 across the relation shards
 *   hybrid       flows with WARBLE_FANOUT_LIMIT=3: the users with four
 *                followers or more, summed over the relation shards, are
 *                big on the inbox shards that see enough of their fans, and
 *                every home (merged with their outboxes) is exact through
 *                follows, unfollows, deletes and crossings both ways
 *
 * Each test ends by stopping the daemons and reading every store back
 * from its files: no row outside its shard's slots.  Needs root (each
 * test skips otherwise).
 */
#include "ct_flows.h"

static const char *const ct_env[] = { CT_ENV_BACKFILL, NULL };

Test(cluster, flows, .fini = ct_fini, .timeout = 300)
{
	ct_start(CT_SHAPE, ct_env);
	ct_seed_flows(0xC1u);
	ct_misroutes();
	ct_ops_endpoints();
	ct_tls_refusals();
	ct_stop(true);
}

Test(cluster, big_account, .fini = ct_fini, .timeout = 300)
{
	/* fan-out pages and runs of 1,000 (10,000 and 131,072 by default): each inbox shard pages
	 * through each relation shard's part of its slots, a page fetched ahead while the last run
	 * is written */
	const char *const env[] = { CT_ENV_BACKFILL, "WARBLE_INBOX_FANOUT_PAGE=1000",
		"WARBLE_INBOX_FANOUT_RUN=1000", NULL };

	ct_start(CT_SHAPE, env);
	ct_big_account();
	ct_stop(true);
}

Test(cluster, hybrid, .fini = ct_fini, .timeout = 300)
{
	const char *const env[] = { CT_ENV_BACKFILL, "WARBLE_FANOUT_LIMIT=3", NULL };
	uint64_t          outboxed = 0, up = 0, down = 0;

	ct_start(CT_SHAPE, env);
	ct_seed_flows(0xC2u);
	for (unsigned k = 0; k < ct_cl.ninbox; k++) {
		outboxed += wbt_stat(ct_inbox[k], "outbox_posts");
		up += wbt_stat(ct_inbox[k], "fanout_crossed_up");
		down += wbt_stat(ct_inbox[k], "fanout_crossed_down");
	}
	fprintf(stderr, "cluster: hybrid: %llu posts to outboxes, %llu crossings up, %llu down\n",
	    (unsigned long long)outboxed, (unsigned long long)up, (unsigned long long)down);
	cr_assert_gt(outboxed, 0, "no post went to an outbox: the test tested nothing");
	ct_stop(true);
}
