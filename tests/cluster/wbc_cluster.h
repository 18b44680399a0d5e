/*
 * wbc_cluster.h - a whole Warble on wbc hosts, in one of two shapes.
 *
 * Daemons: one process per host; the user service once, any number of
 * gateways, content, relation and the inbox in as many shards as asked.
 *
 *   wbc_cluster c;
 *   wbc_shape   s = { .content = 2, .relation = 2, .inbox = 3, .gateways = 2 };
 *   wbc_cluster_start(&c, net, &s, NULL);   hosts user, relation0..1, content0..1,
 *                                           inbox0..2, gateway0..1
 *   c.inbox_url[wb_uid_shard(uid, c.ninbox)]   the reader's inbox shard
 *   wbc_restart(c.inbox[1], SIGKILL, ..)       kill -9 and restart in place
 *
 * Every daemon listens on port WBC_REP_PORT of its host's address (its
 * event PUB, relation's, content's and the user service's, on
 * WBC_PUB_PORT, a gateway's HTTP on WBC_HTTP_PORT, its admin port,
 * /metrics, on WBC_ADMIN_PORT), keeps its data in
 * <data>/<host> (data: wbt_dir(), or the folder given to
 * wbc_cluster_run), runs as shard i/N of its service (WARBLE_SHARD) and
 * is given every other service's addresses: the lists in shard order
 * (WARBLE_RELATION_URLS, ...), and as the singular variable of another
 * service, its shard 0 (what a process that does not know shards
 * reads).
 *
 * One binary (.one = N): N hosts warble0..N-1, each running `warble
 * --shard i/N` (shard i of relation, content and inbox, and a gateway;
 * host 0 also --user), each service on its own port of the host's
 * address (the defaults of proto/wb_services.h: gateway 7100, user 7101,
 * relation 7102, content 7103, inbox 7104, PUBs 7111, 7112 and 7113, HTTP
 * 8080).  The host arrays then name the same hosts: c.inbox[i] ==
 * c.relation[i] == c.gateway[i], and c.user == c.gateway[0].
 *
 * Passwords are hashed at libsodium's minimum cost, as in wbt_cluster.h.
 */
#ifndef WBC_CLUSTER_H
#define WBC_CLUSTER_H

#include "wbc.h"

#define WBC_SHARDS_MAX 4 /* per service, and gateways, within WBC_HOSTS_MAX hosts in all */
#define WBC_REP_PORT   7100
#define WBC_PUB_PORT   7101
#define WBC_HTTP_PORT  8080
#define WBC_ADMIN_PORT 9100 /* every daemon's admin port (WARBLE_METRICS_URL), on its host */
#define WBC_DATA_MAX   200  /* characters of a data folder */

/* How many shards of each sharded service and how many gateways (0 counts as 1), or .one. */
typedef struct wbc_shape {
	unsigned content, relation, inbox, gateways;
	unsigned
	    one; /* > 0: that many `warble --shard i/one` processes instead (the rest ignored) */
} wbc_shape;

typedef struct wbc_cluster {
	wbc_net  *net;
	unsigned  one; /* the shape's .one */
	unsigned  ncontent, nrelation, ninbox, ngateway;
	wbc_host *user;
	wbc_host *gateway[WBC_SHARDS_MAX];
	wbc_host *content[WBC_SHARDS_MAX], *relation[WBC_SHARDS_MAX], *inbox[WBC_SHARDS_MAX];
	char      user_url[WBC_URL_MAX], user_pub_url[WBC_URL_MAX]; /* its events: deletions */
	char      gateway_url[WBC_SHARDS_MAX][WBC_URL_MAX], http_url[WBC_SHARDS_MAX][WBC_URL_MAX];
	char      content_url[WBC_SHARDS_MAX][WBC_URL_MAX];
	char      content_pub_url[WBC_SHARDS_MAX][WBC_URL_MAX];
	char      relation_url[WBC_SHARDS_MAX][WBC_URL_MAX];
	char      relation_pub_url[WBC_SHARDS_MAX][WBC_URL_MAX];
	char      inbox_url[WBC_SHARDS_MAX][WBC_URL_MAX];
	char      data[WBC_DATA_MAX]; /* the data folders' parent: <data>/<host> */
} wbc_cluster;

/*
 * wbc_cluster_start makes the hosts on n and starts every daemon (user,
 * relation, content, inbox, gateways) with their data in wbt_dir(), each
 * waited for until it answers ping (20 s each, scaled by wbt_ms);
 * extra_env ("KEY=VALUE", NULL-terminated, may be NULL) reaches every
 * daemon and overrides the defaults.  0, or -1 with a message and the
 * log tail.
 */
int wbc_cluster_start(
    wbc_cluster *c, wbc_net *n, const wbc_shape *shape, const char *const *extra_env);

/*
 * wbc_cluster_run starts every daemon of a stopped cluster again on its
 * hosts and addresses, with its data in <data>/<host> (say a backup
 * restored there, host by host), as wbc_cluster_start does; 0 or -1.
 */
int wbc_cluster_run(wbc_cluster *c, const char *data, const char *const *extra_env);

/*
 * wbc_cluster_stop sends SIGTERM to every daemon, gateways first, each given timeout_ms; 0 if all
 * exited 0.
 */
int wbc_cluster_stop(wbc_cluster *c, int timeout_ms);

/*
 * wbc_cluster_store writes the folder of svc's store ("relation", ...) on
 * host h into buf: <data>/<host>/<svc>; 0, or -1 if it does not fit.
 */
int wbc_cluster_store(
    const wbc_cluster *c, const wbc_host *h, const char *svc, char *buf, size_t n);

/*
 * wbc_cluster_env_urls writes, as "KEY=VALUE" strings into v (at most
 * max, NULL-terminated), the addresses a client of every service's own
 * port needs: WARBLE_USER_URL, the singular and the list of each sharded
 * service (warblectl's admin commands read them); returns how many (the
 * strings are malloc'd: free each).
 */
int wbc_cluster_env_urls(const wbc_cluster *c, char **v, int max);

#endif
