/*
 * rel.h - the relation service: who follows whom, with exact counts,
 * and a durable log of follow/unfollow events for the inbox.
 *
 *   rel.follow       {uid, target}         -> {}   (on uid's shard)
 *   rel.unfollow     {uid, target}         -> {}   (on uid's shard)
 *   rel.following    {uid, after?, limit?} -> {uids, next?}   (on uid's shard)
 *   rel.fans         {uid, after?, limit?, slots?} -> {uids, next?}
 *                                             (the fans on this shard, in
 *                                             (slot, uid) order)
 *   rel.is_following {uid, target}         -> {followed}   (on uid's shard)
 *   rel.counts       {uids}                -> {users: [{uid, following, followers}]}
 *                                             (this shard's part: the sums
 *                                             over every shard are the counts)
 *   rel.log          {from, limit?}        -> {events, last}   (this shard's log)
 *   rel.block        {uid, target}         -> {}   (on uid's shard; rel_block.c)
 *   rel.unblock      {uid, target}         -> {}   (on uid's shard)
 *   rel.blocks       {uid, after?, limit?} -> {uids, next?}   (on uid's shard)
 *   rel.block_peer   {uid, target, seq, blocking} -> {}   (on uid's shard: from target's)
 *   rel.following_many {uids, after?, limit?} -> {users: [{uid, uids}]}   (rel_suggest.c)
 *   rel.unrelated    {uid, uids}           -> {uids}   (on uid's shard)
 *   rel.popular      {limit?}              -> {users: [{uid, followers}]}   (this shard's)
 *
 * It follows the user service's log of deletions and erases each deleted
 * account's edges on this shard (rel_erase.c).
 */
#ifndef REL_SVC_H
#define REL_SVC_H

#include "evlog.h"
#include "evlog_sub.h"
#include "hb.h"
#include "rt_client.h"
#include "rt_daemon.h"
#include "rt_server.h"
#include "rt_shards.h"

#define REL_LIST_DEFAULT     100   /* list page size when no limit is given */
#define REL_LIST_MAX         10000 /* largest list page (fan-out pages) */
#define REL_COUNTS_MAX       1000  /* most uids one rel.counts takes */
#define REL_FOLLOWED_DEFAULT 1000  /* rel.followed page size when no limit is given */
#define REL_FOLLOWED_MAX     10000 /* largest rel.followed page */

typedef struct rel_svc rel_svc;

/* rel_svc_open creates shard `shard` of the service over a table (families from
 * rel_schema), its event log, two clients of the user service to check users
 * exist: users for a follow's pair, bulk_users (a longer deadline) for
 * rel.follow_many's batches, and peers, every relation shard in order, to which
 * blocks of other shards' users go (NULL with one shard). */
int rel_svc_open(rel_svc **out, hb_table *t, evlog *log, wb_shard shard, rt_client *users,
    rt_client *bulk_users, rt_shards *peers);

/* rel_svc_start starts what runs beside the handlers (the outbox of blocks), once served. */
int rel_svc_start(rel_svc *r);

/* rel_routes is the service's route table (handlers take the rel_svc). */
extern const rt_route rel_routes[];

/* rel_svc_gauges adds the service's figures to a server's stats. */
int rel_svc_gauges(rel_svc *r, rt_server *s);

/* rel_erase_apply applies an event of the user service's log (an evlog_apply_fn; arg is the
 * rel_svc): "erase" {uid} erases that account's edges on this shard (rel_erase.c). */
int rel_erase_apply(void *arg, evlog_sub *s, const wb_obj *ev, hb_batch *b);

/* rel_upgrade moves a store of a release before shards to this one's keys (rel_upgrade.c). */
int rel_upgrade(hb_table *t, const char *dir);

/* rel_svc_close frees the service (after its server is closed); NULL is ignored. */
void rel_svc_close(rel_svc *r);

/* rel_service describes warble-relation to rt_daemon_main (rel_daemon.c). */
extern const rt_service rel_service;

#endif
