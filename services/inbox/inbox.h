/*
 * inbox.h - the inbox service: every reader's home timeline as post ids,
 * filled by fan-out on write from the content and relation event logs;
 * a deleted account's inbox goes with the user service's log (inbox_erase.c).
 */
#ifndef INBOX_H
#define INBOX_H

#include <stdbool.h>
#include <stdint.h>

#include "evlog_sub.h"
#include "hb.h"
#include "rt_daemon.h"
#include "rt_server.h"
#include "wb_slot.h"

#define INBOX_PAGE_DEFAULT 20           /* inbox.home default limit */
#define INBOX_PAGE_MAX     100          /* inbox.home largest limit */
#define INBOX_FANS_PAGE    10000        /* fans per rel.fans page, at most */
#define INBOX_FANS_RUN     131072       /* fans sorted and written together (1 MiB of uids) */
#define INBOX_MAX_DEFAULT  800          /* posts kept per inbox when inbox_opts gives none */
#define INBOX_LOG_PAGE     1000         /* events per post.log / rel.log page */
#define INBOX_MERGE_MAX    WB_BATCH_MAX /* queued posts written as one, at most (one rel.fans batch) */
#define INBOX_REBUILD_MAX  100000       /* largest inbox.rebuild limit (posts per follow) */

typedef struct inbox inbox;

typedef struct inbox_opts {
	/* Each service's shards in order (comma-separated), or the one address
	 * when the list is empty or NULL: */
	const char *content_urls, *content_url;         /* content REP (post.log, post.timeline) */
	const char *relation_urls, *relation_url;       /* relation REP (rel.fans, rel.log) */
	const char *content_pub_urls, *content_pub_url; /* content events */
	const char *relation_pub_urls, *relation_pub_url; /* relation events */
	const char *user_url, *user_pub_url; /* the user service (user.log) and its deletions */
	wb_shard    shard;                   /* the readers it keeps (0 of 1: all) */
	rt_tls     *tls;       /* its TLS identity for the calls and event links (NULL: plain) */
	uint32_t    backfill;  /* posts copied into an inbox on follow */
	uint32_t    poll_ms;   /* pull a quiet source's log this often */
	uint32_t    fans_page; /* fans per rel.fans page (default INBOX_FANS_PAGE) */
	uint32_t    fans_run;  /* fans sorted and written together (default INBOX_FANS_RUN) */
	uint32_t
	    max_versions; /* posts kept per inbox (the tl family's cap; 0: INBOX_MAX_DEFAULT) */
	uint64_t ttl_ms;  /* how long a post stays in inboxes (0: forever) */
	bool     rebuild; /* rebuild every inbox once started (inbox_rebuild.c) */
	uint32_t
	    cache_readers; /* readers whose newest posts are kept in memory (inbox_cache.h; 0: none) */
	uint64_t fanout_limit; /* followers over which posts go to an outbox (0: never) */
} inbox_opts;

/* inbox_open prepares the service over an open table (nothing runs yet). */
int inbox_open(inbox **out, hb_table *t, const inbox_opts *opts);

/* inbox_upgrade renames the applied positions of a store of a release before shards (inbox_upgrade.c). */
int inbox_upgrade(hb_table *t);

/* inbox_routes is the service's route table (handlers take the inbox). */
extern const rt_route inbox_routes[];

/* inbox_gauges adds the fan-out figures to a server's stats. */
int inbox_gauges(inbox *in, rt_server *s);

/* inbox_start dials the sources, subscribes to their events and starts the applier. */
int inbox_start(inbox *in);

/* inbox_stop closes the subscriptions and stops the applier (an event half applied is replayed on the next start). */
void inbox_stop(inbox *in);

/* inbox_close frees the service (stopping it first if needed); NULL is ignored. */
void inbox_close(inbox *in);

/* inbox_service describes warble-inbox to rt_daemon_main (inbox_daemon.c). */
extern const rt_service inbox_service;

/* inbox_home handles inbox.home {uid, before?, limit?} -> {posts: [{id, author}], next?}. */
int inbox_home(void *arg, const wb_obj *req, wb_obj *rep);

/* inbox_rebuild handles inbox.rebuild {limit?}: asks the applier to rebuild every inbox (see inbox_rebuild.c) and replies as inbox_rebuild_status. */
int inbox_rebuild(void *arg, const wb_obj *req, wb_obj *rep);

/* inbox_rebuild_status handles inbox.rebuild_status {} -> {state, done, total, count, limit, elapsed_ms, msg?}. */
int inbox_rebuild_status(void *arg, const wb_obj *req, wb_obj *rep);

/* inbox_erase_apply applies an event of the user service's log (an evlog_apply_fn; arg is the
 * inbox): "erase" {uid} drops that reader's inbox row (inbox_erase.c). */
int inbox_erase_apply(void *arg, evlog_sub *s, const wb_obj *ev, hb_batch *b);

/* inbox_backup_logs adds the applied seqs to a backup's reply as LOGS [{source, seq}], read from the store after the checkpoint. */
int inbox_backup_logs(void *arg, wb_obj *rep);

#endif
