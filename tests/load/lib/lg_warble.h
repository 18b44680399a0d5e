/*
 * lg_warble.h - warble-load's side of Warble: the cluster it runs, bulk
 * setup through the internal ops (user.register_many, rel.follow_many),
 * the inbox's gauges, and the mixed-workload backend over the SDK.
 *
 * Accounts:  graph user i = "gu<i>",  fan pool j = "fp<j>",
 *            celebrity k = "cel<k>"; every password LG_PASSWORD.
 */
#ifndef LG_WARBLE_H
#define LG_WARBLE_H

#include "lg.h"
#include "lg_media.h"
#include "wbt_cluster.h"

#define LG_PASSWORD "load-test-password"

typedef struct lg_warble {
	wbt_cluster       cl;
	struct rt_client *user, *rel, *content, *inbox;
	uint32_t          n;    /* graph users */
	uint64_t         *guid; /* uid of graph user i */
	char (*token)[128];     /* session tokens (64 characters today) */
	uint64_t  npool;
	uint64_t *puid;      /* uid of fan pool account j */
	int       http_port; /* the gateway's HTTP/JSON API on 127.0.0.1 */
} lg_warble;

/* lg_warble_start runs the cluster in shape (extra_env reaches every daemon) and dials the internal services. */
int lg_warble_start(lg_warble *w, const char *const *extra_env, wbt_shape shape);

/* lg_warble_stop stops the daemons and frees everything. */
void lg_warble_stop(lg_warble *w);

/* lg_warble_register creates accounts prefix<0..count) with user.register_many; uids[i] gets each uid. */
int lg_warble_register(lg_warble *w, const char *prefix, uint64_t count, uint64_t *uids);

/* lg_warble_follow_many makes each of fans[0..n) follow target (rel.follow_many in pages). */
int lg_warble_follow_many(lg_warble *w, uint64_t target, const uint64_t *fans, size_t n);

/* lg_warble_login_graph logs every graph user in (tokens kept for the SDK). */
int lg_warble_login_graph(lg_warble *w);

/* lg_warble_login logs account name in through user.login; tok (len bytes) gets the session token. */
int lg_warble_login(lg_warble *w, const char *name, char *tok, size_t len);

/* lg_warble_post_as publishes text as uid through content's own post.publish (setup: no session); *id gets the post id. */
int lg_warble_post_as(lg_warble *w, uint64_t uid, const char *text, uint64_t *id);

/* lg_warble_gauge reads a gauge of service url's stats (UINT64_MAX if absent or unreachable). */
uint64_t lg_warble_gauge(struct rt_client *c, const char *name);

/* lg_warble_wait_inbox waits until the inbox applied every relation and content event (false on timeout). */
bool lg_warble_wait_inbox(lg_warble *w, uint64_t content_last, int timeout_s);

/* lg_warble_inbox_newest reads the newest post id in uid's inbox (0 if empty, UINT64_MAX on error). */
uint64_t lg_warble_inbox_newest(lg_warble *w, uint64_t uid);

/* lg_warble_backend fills b with the SDK-based mixed-workload backend. */
void lg_warble_backend(lg_warble *w, lg_backend *b);

/* lg_http_backend fills b with home reads over the gateway's HTTP/JSON API (keep-alive connections); the rest of b stays empty. */
void lg_http_backend(lg_warble *w, lg_backend *b);

/* lg_warble_publish publishes text as the account (name, password) through the SDK; ack_us gets the call's time. */
int lg_warble_publish(
    lg_warble *w, const char *name, const char *text, uint64_t *id, uint64_t *ack_us);

/* lg_warble_media_backend fills b with the media phase over the gateway's msgpack ops: upload as
 * the graph user, publish the images in posts of four, download them without a token (public). */
void lg_warble_media_backend(lg_warble *w, lg_media_backend *b);

#endif
