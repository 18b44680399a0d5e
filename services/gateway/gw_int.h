/*
 * gw_int.h - the gateway's inside, shared by its files and by no other
 * module: the gw handle's fields, the helpers every operation uses
 * (gw.c; the caller's identity and address: gw_auth.c), hydration
 * (gw_hydrate.c) and the operations themselves (gw_account.c, gw_posts.c,
 * gw_social.c, gw_media.c), routed by gw_dispatch.c.
 */
#ifndef GW_INT_H
#define GW_INT_H

#include <stdatomic.h>
#include "gw.h"
#include "gw_names.h"
#include "gw_postcache.h"
#include "gw_tokens.h"
#include "rt_shards.h"

#define GW_ADDR_MAX 46 /* INET6_ADDRSTRLEN: an address's text and its NUL */
#define GW_PROXIES  32 /* trusted proxy ranges at most */

/* An address range: family (AF_INET, AF_INET6), its first bytes, and how many bits count. */
typedef struct gw_cidr {
	int     family;
	uint8_t addr[16];
	int     bits;
} gw_cidr;

struct gw {
	rt_shards    *svc[WB_SVC_COUNT]; /* each service's shards (user: one) */
	gw_tokens    *tokens;
	gw_names     *names;
	gw_postcache *posts;
	gw_cidr       proxies[GW_PROXIES]; /* trusted proxies (gw_auth.c) */
	int           nproxies;
	uint32_t      rid_nonce; /* this gateway's part of the request ids it makes */
	atomic_ullong rid_seq;   /* the ids made so far */
};

/* gw_shard returns the client of svc's shard that owns uid's slot (the user service: its one). */
rt_client *gw_shard(gw *g, wb_service svc, uint64_t uid);

/* gw_user returns the client of the user service (one shard). */
static inline rt_client *
gw_user(gw *g)
{
	return rt_shards_at(g->svc[WB_SVC_USER], 0);
}

/* gw_call sends req (always consumed) to c, a shard of svc; WB_OK gives *out, an error is written into rep. */
int gw_call(wb_service svc, rt_client *c, wb_obj *req, wb_obj **out, wb_obj *rep);

/* gw_call_start sends req (always consumed) to c, a shard of svc, without waiting for the reply; NULL if it could not start (gw_call_finish then fails). */
rt_pending *gw_call_start(rt_client *c, wb_obj *req);

/* gw_call_finish waits for a call from gw_call_start (always ending it); results as gw_call. */
int gw_call_finish(wb_service svc, rt_pending *p, wb_obj **out, wb_obj *rep);

/* gw_auth resolves req's token to the caller's uid (checked here, or by the user service); errors go into rep. */
int gw_auth(gw *g, const wb_obj *req, uint64_t *uid, wb_obj *rep);

/* gw_auth_optional is gw_auth for operations where a token is optional: *uid is 0 without a valid one. */
int gw_auth_optional(gw *g, const wb_obj *req, uint64_t *uid, wb_obj *rep);

/* gw_auth_sync makes sessions ended through this gateway (logout, log out everywhere, password change) take effect here before the reply. */
void gw_auth_sync(gw *g);

/* gw_auth_proxies parses the trusted proxies ("10.0.0.0/8, 2001:db8::1") into g; WB_EINVAL if one does not parse. */
int gw_auth_proxies(gw *g, const char *list);

/* gw_auth_addr writes the client's address into addr (GW_ADDR_MAX bytes; "" if unknown): the
 * peer's, or the X-Forwarded-For entry nearest to it that is not a trusted proxy when the peer is one. */
void gw_auth_addr(gw *g, const gw_from *from, char addr[GW_ADDR_MAX]);

/* gw_name_cache returns g's uid <-> username cache (gw_names.h). */
struct gw_names *gw_name_cache(gw *g);

/* gw_post_cache returns g's cache of post records (gw_postcache.h). */
struct gw_postcache *gw_post_cache(gw *g);

/* gw_lookup resolves a username to a uid (WB_ENOUSER if unknown; cached once known); errors go into rep. */
int gw_lookup(gw *g, const char *name, uint64_t *uid, wb_obj *rep);

/* gw_limit reads LIMIT by the one page rule (wb_page_limit): GW_PAGE_DEFAULT, GW_PAGE_MAX. */
int gw_limit(const wb_obj *req, uint64_t *limit, wb_obj *rep);

/* gw_hydrate_posts fetches posts ids (newest first; authors, if not NULL, their authors as hints; listed lag_ms behind content's deletes, UINT64_MAX if not known) and their authors' names into rep's POSTS, skipping missing posts. */
int gw_hydrate_posts(
    gw *g, const uint64_t *ids, const uint64_t *authors, size_t n, uint64_t lag_ms, wb_obj *rep);

/* gw_copy_posts copies post records into rep's POSTS, with author_name set to name. */
int gw_copy_posts(const wb_obj *posts, size_t n, const char *name, wb_obj *rep);

/* gw_hydrate_users fetches users uids into rep's USERS (same order), skipping unknown ones. */
int gw_hydrate_users(gw *g, const uint64_t *uids, size_t n, wb_obj *rep);

/* gw_hydrate_users_with is gw_hydrate_users that also sets field f (a U64) of user i to
 * vals[i] where that is not 0 (vals NULL: none). */
int gw_hydrate_users_with(
    gw *g, const uint64_t *uids, size_t n, wb_field f, const uint64_t *vals, wb_obj *rep);

/* What a viewer has with another user: follows them, blocks them, is blocked by them. */
typedef struct gw_rel {
	bool followed, blocking, blocked_by;
} gw_rel;

/* gw_relation reads what viewer has with uid (one rel.is_following, on viewer's relation
 * shard: every cell of it is viewer's); errors go into rep. */
int gw_relation(gw *g, uint64_t viewer, uint64_t uid, gw_rel *out, wb_obj *rep);

/* gw_relation_start starts gw_relation's call, to run beside another; gw_relation_finish
 * waits for it (always ending it). */
rt_pending *gw_relation_start(gw *g, uint64_t viewer, uint64_t uid);
int         gw_relation_finish(rt_pending *p, gw_rel *out, wb_obj *rep);

/* gw_profile_fill makes rep a success reply holding uid's record and counts (and followed,
 * blocking and blocked_by, if viewer is nonzero and not uid). */
int gw_profile_fill(gw *g, uint64_t uid, uint64_t viewer, wb_obj *rep);

/* gw_copy_user copies the user fields of src (uid, name, display, bio, created) into dst. */
int gw_copy_user(const wb_obj *src, wb_obj *dst);

/* The public operations: each fills rep and returns its wb_err; those that check a password
 * or register take the client's address too (gw_auth_addr). */
int gw_op_register(gw *g, const wb_obj *req, wb_obj *rep, const char *addr);
int gw_op_login(gw *g, const wb_obj *req, wb_obj *rep, const char *addr);
int gw_op_logout(gw *g, const wb_obj *req, wb_obj *rep);
int gw_op_whoami(gw *g, const wb_obj *req, wb_obj *rep);
int gw_op_publish(gw *g, const wb_obj *req, wb_obj *rep);
int gw_op_delete(gw *g, const wb_obj *req, wb_obj *rep);
int gw_op_home(gw *g, const wb_obj *req, wb_obj *rep);
int gw_op_timeline(gw *g, const wb_obj *req, wb_obj *rep);
int gw_op_follow(gw *g, const wb_obj *req, wb_obj *rep);
int gw_op_unfollow(gw *g, const wb_obj *req, wb_obj *rep);
int gw_op_following(gw *g, const wb_obj *req, wb_obj *rep);
int gw_op_fans(gw *g, const wb_obj *req, wb_obj *rep);
int gw_op_profile(gw *g, const wb_obj *req, wb_obj *rep);
int gw_op_update_profile(gw *g, const wb_obj *req, wb_obj *rep);
int gw_op_logout_all(gw *g, const wb_obj *req, wb_obj *rep);
int gw_op_change_password(gw *g, const wb_obj *req, wb_obj *rep, const char *addr);
int gw_op_upload(gw *g, const wb_obj *req, wb_obj *rep);
int gw_op_media(gw *g, const wb_obj *req, wb_obj *rep);
int gw_op_post(gw *g, const wb_obj *req, wb_obj *rep);
int gw_op_block(gw *g, const wb_obj *req, wb_obj *rep);
int gw_op_unblock(gw *g, const wb_obj *req, wb_obj *rep);
int gw_op_blocks(gw *g, const wb_obj *req, wb_obj *rep);
int gw_op_suggestions(gw *g, const wb_obj *req, wb_obj *rep);
int gw_op_delete_account(gw *g, const wb_obj *req, wb_obj *rep, const char *addr);

#endif
