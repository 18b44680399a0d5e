/*
 * wbt_cluster.h - a whole Warble (user, relation, content, inbox,
 * gateway) as real processes for integration tests.
 *
 *   Test(x, y, .fini = wbt_cleanup, .timeout = 60) {
 *       wbt_cluster c;
 *       cr_assert_eq(wbt_cluster_start(&c, NULL), 0);
 *       ... talk to c.gateway_url (or any service URL) ...
 *       cr_assert_eq(wbt_cluster_stop(&c, 10000), 0);
 *   }
 *
 * Every daemon listens on ipc:// in the test's temp dir (wbt_dir), keeps
 * its data under <dir>/<prefix>data, and hashes passwords with libsodium's
 * minimum argon2id cost so tests stay fast.  Its admin port (/metrics,
 * WARBLE_METRICS_URL) is any free port of 127.0.0.1, as wbt_spawn gives
 * every daemon: wbt_metrics_port(c.inbox_url) finds it (in one warble
 * process, every URL gives the same port).  extra_env ("KEY=VALUE",
 * NULL-terminated) reaches every daemon and overrides the defaults, e.g.
 * { "WARBLE_SESSION_TTL=1", NULL }; a WARBLE_DATA there names the data
 * folder to use instead (a restored backup).  Daemons are killed by the harness at
 * the end of the test whatever happens (wbt.h).
 *
 * Two shapes.  WARBLE_TEST_MODE=one (make test-one) runs every cluster of
 * wbt_cluster_start as one `warble` process hosting all five services
 * (the five slots then name that one daemon: a restart or stop of any
 * slot is of the whole process); unset or `five`, the five daemons.  A
 * test that kills, stops or pauses one daemon and not the others starts
 * its cluster with wbt_cluster_start_as(.., WBT_FIVE) in both runs.
 */
#ifndef WBT_CLUSTER_H
#define WBT_CLUSTER_H

#include "wbt.h"

#define WBT_URL_MAX 160

typedef struct wbt_cluster {
	char               user_url[WBT_URL_MAX];
	char               relation_url[WBT_URL_MAX];
	char               content_url[WBT_URL_MAX];
	char               inbox_url[WBT_URL_MAX];
	char               gateway_url[WBT_URL_MAX];
	char               relation_pub_url[WBT_URL_MAX];
	char               content_pub_url[WBT_URL_MAX];
	char               user_pub_url[WBT_URL_MAX];
	char               data[WBT_URL_MAX];
	wbt_daemon        *user, *relation, *content, *inbox, *gateway;
	const char *const *extra_env; /* as given to wbt_cluster_start (kept for restarts) */
} wbt_cluster;

typedef enum wbt_shape {
	WBT_ANY,  /* as WARBLE_TEST_MODE says */
	WBT_FIVE, /* five daemons */
	WBT_ONE,  /* one warble process */
} wbt_shape;

/* wbt_cluster_start starts the cluster in the shape WARBLE_TEST_MODE names and waits (up to 20 s) until every service answers ping; 0, or -1 with a message and log tails. */
int wbt_cluster_start(wbt_cluster *c, const char *const *extra_env);

/* wbt_cluster_start_as is wbt_cluster_start in the given shape. */
int wbt_cluster_start_as(wbt_cluster *c, const char *const *extra_env, wbt_shape shape);

/* wbt_cluster_is_one tells whether c is one warble process. */
bool wbt_cluster_is_one(const wbt_cluster *c);

/*
 * wbt_cluster_restart sends sig (0: none, the daemon is already gone) to
 * the daemon in slot (&c->inbox, ...), waits for it to exit, and starts
 * the same program again with the same URLs, data folder and environment
 * (extra_env as given to wbt_cluster_start, which must still be valid);
 * *slot is then the new daemon (every slot, for one warble process).  Waits until it answers ping (up to
 * 20 s); 0, or -1 with a message.  Call it from the test's main thread.
 */
int wbt_cluster_restart(wbt_cluster *c, wbt_daemon **slot, int sig);

/* wbt_cluster_env writes the cluster's URL variables ("WARBLE_GATEWAY_URL=...", ...) into env (room for n, NULL-terminated) for spawning clients; returns the count. */
int wbt_cluster_env(const wbt_cluster *c, char bufs[][WBT_URL_MAX + 32], const char **env, int n);

/* wbt_cluster_stop stops the daemons (gateway first) with SIGTERM, each within timeout_ms; 0 if all exited cleanly. */
int wbt_cluster_stop(wbt_cluster *c, int timeout_ms);

#endif
