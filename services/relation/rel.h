/*
 * rel.h - the relation service: who follows whom, with exact counts,
 * and a durable log of follow/unfollow events for the inbox.
 *
 *   rel.follow       {uid, target}         -> {}
 *   rel.unfollow     {uid, target}         -> {}
 *   rel.following    {uid, after?, limit?} -> {uids, next?}
 *   rel.fans         {uid, after?, limit?} -> {uids, next?}
 *   rel.is_following {uid, target}         -> {followed}
 *   rel.counts       {uids}                -> {users: [{uid, following, followers}]}
 *   rel.log          {from, limit?}        -> {events, last}
 */
#ifndef REL_SVC_H
#define REL_SVC_H

#include "evlog.h"
#include "hb.h"
#include "rt_client.h"
#include "rt_daemon.h"
#include "rt_server.h"

#define REL_LIST_DEFAULT     100   /* list page size when no limit is given */
#define REL_LIST_MAX         10000 /* largest list page (fan-out pages) */
#define REL_COUNTS_MAX       1000  /* most uids one rel.counts takes */
#define REL_FOLLOWED_DEFAULT 1000  /* rel.followed page size when no limit is given */
#define REL_FOLLOWED_MAX     10000 /* largest rel.followed page */

typedef struct rel_svc rel_svc;

/* rel_svc_open creates the service over a table (families from rel_schema), its
 * event log, and two clients of the user service to check users exist: users for
 * a follow's pair, bulk_users (a longer deadline) for rel.follow_many's batches. */
int rel_svc_open(rel_svc **out, hb_table *t, evlog *log, rt_client *users, rt_client *bulk_users);

/* rel_svc_route registers the service's handlers and gauges on a server. */
int rel_svc_route(rel_svc *r, rt_server *s);

/* rel_svc_close frees the service (after its server is closed); NULL is ignored. */
void rel_svc_close(rel_svc *r);

/* rel_service describes warble-relation to rt_daemon_main (rel_daemon.c). */
extern const rt_service rel_service;

#endif
