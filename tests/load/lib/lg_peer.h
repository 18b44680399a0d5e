/*
 * lg_peer.h - the systems Warble is measured against, in the same run,
 * on the same graph and posts (user numbers are Warble's uids):
 *
 *   Redis (lg_redis.c), fan-out on write as Twitter and Mastodon do it:
 *     fans:<uid>   set of follower uids
 *     tl:<uid>     home timeline, sorted set of post ids (score = id),
 *                  trimmed to the inbox cap after every insert
 *     utl:<uid>    the user's own posts, sorted set
 *     post:<id>    hash {author, name, text, time}
 *     home = ZREVRANGE tl 0 19, then HMGET of the 20 posts (pipelined);
 *     publish = HSET post + ZADD utl, then the fan-out: SSCAN the fans,
 *     pipelining ZADD + ZREMRANGEBYRANK per fan.
 *
 *   PostgreSQL (lg_pg.c), fan-out on read:
 *     users(uid pk, name), follows(follower, followee) pk (follower,
 *     followee), posts(id pk, author, text, time) + index (author, id desc);
 *     home = newest 20 posts whose author the reader follows (one join).
 *
 * Both compile to stubs that fail to open when their client library was
 * missing at build time (LG_HAVE_REDIS / LG_HAVE_PG).
 */
#ifndef LG_PEER_H
#define LG_PEER_H

#include "lg.h"

typedef struct lg_redis lg_redis;
typedef struct lg_pg    lg_pg;

/* lg_redis_open connects to host:port (cap: home timeline entries kept); 0 or -1. */
int  lg_redis_open(lg_redis **out, const char *host, int port, unsigned cap);
void lg_redis_close(lg_redis *r);

/* lg_redis_add_user records uid's name. */
int lg_redis_add_user(lg_redis *r, uint64_t uid, const char *name);

/* lg_redis_add_fans adds fans[0..n) to target's followers (pipelined). */
int lg_redis_add_fans(lg_redis *r, uint64_t target, const uint64_t *fans, size_t n);

/* lg_redis_publish stores post id by author and fans it out; *ack_us the store, *fanout_us the fan-out, *cells the timelines written. */
int lg_redis_publish(lg_redis *r, uint64_t author, uint64_t id, const char *text, uint64_t *ack_us,
    uint64_t *fanout_us, uint64_t *cells);

/* lg_redis_newest reads the newest id of uid's home timeline (0 if empty). */
uint64_t lg_redis_newest(lg_redis *r, uint64_t uid);

/* lg_redis_used_memory returns INFO memory's used_memory (0 if unknown). */
uint64_t lg_redis_used_memory(lg_redis *r);

/* lg_redis_server_pid returns the server's process id (INFO server; 0 if unknown). */
int lg_redis_server_pid(lg_redis *r);

/* lg_redis_backend serves the mixed workload; uids maps user numbers to uids. */
void lg_redis_backend(lg_redis *r, const uint64_t *uids, lg_backend *b);

/* lg_pg_open connects with conninfo and creates the schema (dropping old tables); 0 or -1. */
int  lg_pg_open(lg_pg **out, const char *conninfo);
void lg_pg_close(lg_pg *p);

/* lg_pg_copy_users / lg_pg_copy_follows bulk-load rows with COPY. */
int lg_pg_copy_users(lg_pg *p, const uint64_t *uids, const char *prefix, uint64_t n);
int lg_pg_copy_follows(lg_pg *p, uint64_t target, const uint64_t *fans, size_t n);

/* lg_pg_finish_setup creates the indexes and analyzes. */
int lg_pg_finish_setup(lg_pg *p);

/* lg_pg_publish inserts a post; *ack_us the insert's time. */
int lg_pg_publish(lg_pg *p, uint64_t author, uint64_t id, const char *text, uint64_t *ack_us);

/* lg_pg_newest reads the newest id of uid's home timeline (0 if empty). */
uint64_t lg_pg_newest(lg_pg *p, uint64_t uid);

/* lg_pg_db_bytes returns pg_database_size of the current database. */
uint64_t lg_pg_db_bytes(lg_pg *p);

/* lg_pg_server_pid returns the postmaster's process id, the parent of this connection's backend (0 if unknown). */
int lg_pg_server_pid(lg_pg *p);

/* lg_pg_backend serves the mixed workload (a connection per thread). */
void lg_pg_backend(lg_pg *p, const uint64_t *uids, lg_backend *b);

#endif
