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
