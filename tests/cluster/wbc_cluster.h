/*
 * wbc_cluster.h - a whole Warble on wbc hosts: one process per host, the
 * user service and the gateway once, content, relation and the inbox in
 * as many shards as asked.
 *
 *   wbc_cluster c;
 *   wbc_shape   s = { .content = 1, .relation = 2, .inbox = 3 };
 *   wbc_cluster_start(&c, net, &s, NULL);   hosts user, relation0, relation1,
 *                                           content0, inbox0..2, gateway
 *   c.inbox_url[wb_uid_shard(uid, c.ninbox)]   the reader's inbox shard
 *   wbc_restart(c.inbox[1], SIGKILL, ..)       kill -9 and restart in place
 *
 * Every daemon listens on port WBC_REP_PORT of its host's address (its
 * event PUB on WBC_PUB_PORT, the gateway's HTTP on WBC_HTTP_PORT, its
 * admin port, /metrics, on WBC_ADMIN_PORT), keeps
 * its data in <wbt_dir>/<host>, runs as shard i/N of its service
 * (WARBLE_SHARD) and is given every other service's addresses: the lists
 * in shard order (WARBLE_RELATION_URLS, ...), and as the singular
 * variable of another service, its shard 0 (what a process that does not
 * know shards reads).  Passwords are hashed at libsodium's minimum cost,
 * as in wbt_cluster.h.
 */
#ifndef WBC_CLUSTER_H
#define WBC_CLUSTER_H

#include "wbc.h"

#define WBC_SHARDS_MAX 4 /* per service, within WBC_HOSTS_MAX hosts in all */
#define WBC_REP_PORT   7100
#define WBC_PUB_PORT   7101
#define WBC_HTTP_PORT  8080
#define WBC_ADMIN_PORT 9100 /* every daemon's admin port (WARBLE_METRICS_URL), on its host */

/* How many shards of each sharded service (0 counts as 1). */
typedef struct wbc_shape {
	unsigned content, relation, inbox;
} wbc_shape;

typedef struct wbc_cluster {
	wbc_net  *net;
	unsigned  ncontent, nrelation, ninbox;
	wbc_host *user, *gateway;
	wbc_host *content[WBC_SHARDS_MAX], *relation[WBC_SHARDS_MAX], *inbox[WBC_SHARDS_MAX];
	char      user_url[WBC_URL_MAX], gateway_url[WBC_URL_MAX], http_url[WBC_URL_MAX];
	char      content_url[WBC_SHARDS_MAX][WBC_URL_MAX];
	char      content_pub_url[WBC_SHARDS_MAX][WBC_URL_MAX];
	char      relation_url[WBC_SHARDS_MAX][WBC_URL_MAX];
	char      relation_pub_url[WBC_SHARDS_MAX][WBC_URL_MAX];
	char      inbox_url[WBC_SHARDS_MAX][WBC_URL_MAX];
} wbc_cluster;

/*
 * wbc_cluster_start makes the hosts on n and starts every daemon (user,
 * relation, content, inbox, gateway), each waited for until it answers
 * ping (20 s each, scaled by wbt_ms); extra_env ("KEY=VALUE",
 * NULL-terminated, may be NULL) reaches every daemon and overrides the
 * defaults.  0, or -1 with a message and the log tail.
 */
int wbc_cluster_start(
    wbc_cluster *c, wbc_net *n, const wbc_shape *shape, const char *const *extra_env);

/*
 * wbc_cluster_stop sends SIGTERM to every daemon, gateway first, each given timeout_ms; 0 if all
 * exited 0.
 */
int wbc_cluster_stop(wbc_cluster *c, int timeout_ms);

#endif
