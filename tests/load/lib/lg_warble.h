/*
 * lg_warble.h - warble-load's side of Warble: the cluster it runs, or a
 * running deployment it did not start, bulk setup through the internal
 * ops (user.register_many, rel.follow_many split by follower shard), the
 * inbox's gauges over every shard, each server process's CPU, and the
 * mixed-workload backend over the SDK.
 *
 * Accounts:  graph user i = "gu<i>",  fan pool j = "fp<j>",
 *            celebrity k = "cel<k>"; every password LG_PASSWORD.
 *
 * A running deployment (lg_warble_attach) is reached as its daemons
 * reach each other: the user service at WARBLE_USER_URL, each sharded
 * service's shards at WARBLE_RELATION_URLS, WARBLE_CONTENT_URLS and
 * WARBLE_INBOX_URLS (empty: the one address of WARBLE_RELATION_URL, ...),
 * and clients at the gateways given.  Its server processes are told apart
 * by their stats (the host of the address and process_start_ms): a
 * process hosting several services (`warble --shard`) counts once, under
 * the first of its roles in the order gateway, user, relation, content,
 * inbox.
 */
#ifndef LG_WARBLE_H
#define LG_WARBLE_H

#include "lg.h"
#include "lg_media.h"
#include "lg_report.h"
#include "wbt_cluster.h"

#define LG_PASSWORD "load-test-password"

#define LG_MAX_GATEWAYS 16
#define LG_URL_MAX      256
#define LG_MAX_PROCS    (LG_MAX_GATEWAYS + 1 + 3 * 64)

/* The roles a server process's CPU is charged to; a process with several takes the first. */
enum { LG_ROLE_GATEWAY, LG_ROLE_USER, LG_ROLE_RELATION, LG_ROLE_CONTENT, LG_ROLE_INBOX, LG_ROLES };

/* One server process of a running deployment: an address it answers stats on, and its role. */
typedef struct lg_proc {
	struct rt_client *c;
	int               role;
} lg_proc;

typedef struct lg_warble {
	wbt_cluster       cl;      /* the daemons warble-load started (none if running) */
	bool              running; /* a deployment warble-load did not start (lg_warble_attach) */
	struct rt_client *user;
	struct rt_shards *rel, *content, *inbox;
	char              gateway[LG_MAX_GATEWAYS][LG_URL_MAX]; /* the clients' gateways */
	unsigned          ngateways, next_gateway;
	struct rt_client *gw[LG_MAX_GATEWAYS]; /* each gateway's stats (running) */
	struct rt_tls    *tls; /* the admin identity, with WARBLE_TLS_DIR (running) */
	lg_proc           procs[LG_MAX_PROCS]; /* every server process (running) */
	int               nprocs;
	uint32_t          n;    /* graph users */
	uint64_t         *guid; /* uid of graph user i */
	char (*token)[128];     /* session tokens (64 characters today) */
	uint64_t  npool;
	uint64_t *puid;                  /* uid of fan pool account j */
	char      http_host[LG_URL_MAX]; /* the gateway's HTTP/JSON API: host and port */
	int       http_port;
	char      http_url[LG_URL_MAX + 16]; /* "http://host:port" */
} lg_warble;

/* lg_warble_start runs the cluster in shape (extra_env reaches every daemon) and dials the internal services. */
int lg_warble_start(lg_warble *w, const char *const *extra_env, wbt_shape shape);

/*
 * lg_warble_attach dials a running deployment: the gateways (comma-separated,
 * at most LG_MAX_GATEWAYS), its HTTP/JSON API (http://host:port; NULL:
 * WARBLE_HTTP_URL or its default) and the internal services from the
 * environment; every address must answer, and its processes are told apart.
 */
int lg_warble_attach(lg_warble *w, const char *gateways, const char *http_url);

/* lg_warble_describe prints the deployment's shards and processes on one line. */
void lg_warble_describe(const lg_warble *w, FILE *f);

/* lg_warble_gateway returns the gateway of the next client (round robin over them). */
const char *lg_warble_gateway(lg_warble *w);

/* lg_warble_stop stops the daemons (none if running) and frees everything. */
void lg_warble_stop(lg_warble *w);

/* lg_warble_register creates accounts prefix<0..count) with user.register_many; uids[i] gets each uid. */
int lg_warble_register(lg_warble *w, const char *prefix, uint64_t count, uint64_t *uids);

/* lg_warble_follow_many makes each of fans[0..n) follow target (rel.follow_many in pages,
 * each to the fans' own relation shard). */
int lg_warble_follow_many(lg_warble *w, uint64_t target, const uint64_t *fans, size_t n);

/* lg_warble_login_graph logs every graph user in (tokens kept for the SDK). */
int lg_warble_login_graph(lg_warble *w);

/* lg_warble_login logs account name in through user.login; tok (len bytes) gets the session token. */
int lg_warble_login(lg_warble *w, const char *name, char *tok, size_t len);

/* lg_warble_post_as publishes text as uid through content's own post.publish (setup: no session); *id gets the post id. */
int lg_warble_post_as(lg_warble *w, uint64_t uid, const char *text, uint64_t *id);

/* lg_warble_gauge_sum adds up a gauge over every shard of s (UINT64_MAX if a shard lacks it
 * or is unreachable). */
uint64_t lg_warble_gauge_sum(struct rt_shards *s, const char *name);

/* lg_warble_visible reads every inbox shard's histogram of posts' commit to visible, summed
 * (false if a shard has none or does not answer). */
bool lg_warble_visible(lg_warble *w, lg_vis *v);

/* lg_warble_content_last is the sum of every content shard's log_last_seq (UINT64_MAX on error). */
uint64_t lg_warble_content_last(lg_warble *w);

/*
 * lg_warble_wait_inbox waits until every inbox shard applied every event
 * of the relation shards it consumes and content_last events of the
 * content shards (each consumes all of them: its content_applied sums
 * their positions; running, at least their log_last_seq sum now); false
 * on timeout.
 */
bool lg_warble_wait_inbox(lg_warble *w, uint64_t content_last, int timeout_s);

/*
 * lg_warble_wait_applied waits until every inbox shard's content_applied
 * reaches target (a post is in every inbox once it passes the sum of the
 * content shards' log_last_seq read after its publish).  Each poll is a
 * stats reply, which costs its inbox CPU, so it polls one shard at a time,
 * shard 0 until it is there, then the next (the shards work at once: the
 * later ones are there or nearly), waiting 2% of the time waited so far
 * between polls, at least poll_us: the polls cost the inboxes a small
 * share of a long fan-out's CPU, and about the same whatever their count.
 * *done_us gets the time (lg_now_us) the last one got there, *polls the
 * stats calls made; false after timeout_s.
 */
bool lg_warble_wait_applied(lg_warble *w, uint64_t target, uint64_t poll_us, int timeout_s,
    uint64_t *done_us, uint64_t *polls);

/* lg_warble_role_cpu is the CPU (us) of a running deployment's processes of role (an
 * lg_servers cpu_us; 0 if a stats read failed). */
uint64_t lg_warble_role_cpu(void *w, int role);

/* lg_warble_role_rss is the resident memory (bytes, now) of a running deployment's processes
 * of role. */
uint64_t lg_warble_role_rss(lg_warble *w, int role);

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
