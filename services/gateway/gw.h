/*
 * gw.h - the gateway: Warble's public API on top of the four services.
 *
 *            SDK / warblectl (msgpack REQ)      HTTP/JSON (later)
 *                        \                        /
 *                     gw_dispatch(op, req, rep, client)
 *                        /      |         |       \
 *                    user   relation   content   inbox     (rt_client each)
 *
 * Every public operation is a function taking a decoded request and
 * filling a reply object, independent of the transport, so the msgpack
 * server and an HTTP layer share the same logic.  Handlers run on worker
 * threads and block on downstream calls; a gw is safe to use from many
 * threads at once.
 */
#ifndef GW_H
#define GW_H

#include <stdint.h>
#include <sys/socket.h>

#include "rt_client.h"
#include "rt_daemon.h"
#include "wb_proto.h"

#define GW_PAGE_DEFAULT 20   /* page size when the request gives none */
#define GW_PAGE_MAX     100  /* largest public page */
#define GW_AUTH_TTL_MAX 1000 /* ms a cached token may outlive its revocation */

typedef struct gw gw;

/* The downstream services, in the order of gw_opts' URLs. */
typedef enum gw_svc { GW_USER = 0, GW_RELATION, GW_CONTENT, GW_INBOX, GW_SVC_COUNT } gw_svc;

typedef struct gw_opts {
	const char *urls[GW_SVC_COUNT]; /* downstream REP URLs */
	int         timeout_ms;         /* per downstream call (default 5000) */
	int         auth_cache_ms;      /* token cache lifetime, 0..1000 (0: off) */
	int session_check_ms; /* check signed tokens here, trusting the revocation feed this long (0: off) */
	unsigned login_fails; /* failed logins from one client address that lock it (default 20) */
	uint64_t login_window_ms;   /* ... counted within this window (default 60000) */
	uint64_t login_cooldown_ms; /* how long its logins answer RATE_LIMITED (default 60000) */
	size_t   post_cache;        /* post records cached for hydration (0: none) */
	uint64_t post_cache_ms;     /* how long one is trusted (0: none cached) */
} gw_opts;

/* gw_open dials the four services (in the background) and sets up the token cache. */
int gw_open(gw **out, const gw_opts *opts);

/* gw_close closes the downstream clients and frees g; NULL is ignored. */
void gw_close(gw *g);

/* gw_daemon_opts are warble-gateway's own options (gw_daemon.c). */
extern rt_opt gw_daemon_opts[];

/* gw_daemon_config checks gw_daemon_opts' values; nonzero if one is bad. */
int gw_daemon_config(void);

/* gw_daemon_open dials the services and registers the public operations on env's server. */
int gw_daemon_open(const rt_env *env, void **out);

/* gw_daemon_start serves HTTP once the msgpack API listens. */
int gw_daemon_start(void *d);

/* gw_daemon_close stops HTTP and closes the clients; NULL is ignored. */
void gw_daemon_close(void *d);

/* gw_dispatch runs public operation op on req from client (read by logins only; NULL or family 0 if unknown), filling rep (a success or an error reply); returns its wb_err. */
int gw_dispatch(
    gw *g, wb_op op, const wb_obj *req, wb_obj *rep, const struct sockaddr_storage *client);

/* gw_handler is gw_dispatch in rt_server's handler shape (arg is the gw); op comes from req. */
int gw_handler(void *arg, const wb_obj *req, wb_obj *rep);

/* gw_is_public tells whether op is one of the gateway's public operations. */
int gw_is_public(wb_op op);

/* --- internal: shared by the handler files --------------------------------- */

/* gw_mix64 spreads a 64-bit key over every bit (splitmix64's finalizer), for the caches' slot indexes. */
static inline uint64_t
gw_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* gw_call sends req (always consumed) to svc; WB_OK gives *out, an error is written into rep. */
int gw_call(gw *g, gw_svc svc, wb_obj *req, wb_obj **out, wb_obj *rep);

/* gw_call_start sends req (always consumed) to svc without waiting for the reply; NULL if it could not start (gw_call_finish then fails). */
rt_pending *gw_call_start(gw *g, gw_svc svc, wb_obj *req);

/* gw_call_finish waits for a call from gw_call_start (always ending it); results as gw_call. */
int gw_call_finish(gw_svc svc, rt_pending *p, wb_obj **out, wb_obj *rep);

/* gw_auth resolves req's token to the caller's uid (cached up to auth_cache_ms); errors go into rep. */
int gw_auth(gw *g, const wb_obj *req, uint64_t *uid, wb_obj *rep);

/* gw_auth_optional is gw_auth for operations where a token is optional: *uid is 0 without a valid one. */
int gw_auth_optional(gw *g, const wb_obj *req, uint64_t *uid, wb_obj *rep);

/* gw_auth_sync makes sessions ended through this gateway (logout, log out everywhere, password change) take effect here before the reply. */
void gw_auth_sync(gw *g);

/* gw_auth_forget drops token from the cache (after logout). */
void gw_auth_forget(gw *g, const char *token, size_t len);

/* gw_name_cache returns g's uid <-> username cache (gw_names.h). */
struct gw_names *gw_name_cache(gw *g);

/* gw_post_cache returns g's cache of post records (gw_postcache.h). */
struct gw_postcache *gw_post_cache(gw *g);

/* gw_lookup resolves a username to a uid (WB_ENOUSER if unknown; cached once known); errors go into rep. */
int gw_lookup(gw *g, const char *name, uint64_t *uid, wb_obj *rep);

/* gw_limit reads an optional LIMIT field: GW_PAGE_DEFAULT if absent, capped at GW_PAGE_MAX, 0 is invalid. */
int gw_limit(const wb_obj *req, uint64_t *limit, wb_obj *rep);

/* gw_hydrate_posts fetches posts ids (newest first; authors, if not NULL, their authors as hints) and their authors' names into rep's POSTS, skipping missing posts. */
int gw_hydrate_posts(gw *g, const uint64_t *ids, const uint64_t *authors, size_t n, wb_obj *rep);

/* gw_copy_posts copies post records into rep's POSTS, with author_name set to name. */
int gw_copy_posts(const wb_obj *posts, size_t n, const char *name, wb_obj *rep);

/* gw_hydrate_users fetches users uids into rep's USERS (same order), skipping unknown ones. */
int gw_hydrate_users(gw *g, const uint64_t *uids, size_t n, wb_obj *rep);

/* gw_profile_fill makes rep a success reply holding uid's record and counts (and followed, if viewer is nonzero and not uid). */
int gw_profile_fill(gw *g, uint64_t uid, uint64_t viewer, wb_obj *rep);

/* gw_copy_user copies the user fields of src (uid, name, display, bio, created) into dst. */
int gw_copy_user(const wb_obj *src, wb_obj *dst);

/* The public operations: each fills rep and returns its wb_err. */
int gw_op_register(gw *g, const wb_obj *req, wb_obj *rep);
int gw_op_login(gw *g, const wb_obj *req, wb_obj *rep);
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
int gw_op_change_password(gw *g, const wb_obj *req, wb_obj *rep);

#endif
