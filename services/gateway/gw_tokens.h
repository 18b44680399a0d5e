/*
 * gw_tokens.h - the gateway checks session tokens itself, so a request
 * costs no user.auth hop, and holds nothing that could make one.
 *
 * The user service signs tokens with an Ed25519 key only it holds
 * (proto/wb_session.h); the gateway fetches the public keys
 * (user.session_keys) and checks signatures with them.  A verified token
 * goes into a cache (the token itself -> uid, session, expiry), since a
 * signature check costs tens of microseconds and a cache hit well under
 * one.  The user service lists every session that ended before its
 * expiry in a feed numbered by seq (user.revocations); a thread here
 * pulls it every poll_ms into two tables: ended sessions (sid -> until)
 * and users whose sessions began before a moment are void (uid ->
 * not-before).  Each reply of the feed names the current key, so a
 * rotation is learned with the next pull.  Revocations are checked on
 * every request, cached token or not.
 *
 * A "closed" record (an account deleted, user_delete.c) comes after the
 * "all" record that ends its sessions; it is handed to the closed
 * callback, with which the gateway forgets the account's name.
 *
 * A token is accepted here only while the last complete pull began less
 * than trust_ms ago; otherwise, and for tokens this cannot judge (a key
 * it has not fetched yet, tables full), the caller asks the user service.
 * So a logout, "log out everywhere" or password change elsewhere takes
 * effect here within trust_ms; one made through this gateway at once
 * (gw_tokens_sync before the reply).
 *
 * Memory: at most GW_TOKENS_REVOKED entries per revocation table (24
 * bytes each, at most half full: about 48 MiB each when full), and
 * GW_TOKENS_CACHED verified tokens (about 2.4 MiB).
 */
#ifndef GW_TOKENS_H
#define GW_TOKENS_H

#include <stddef.h>
#include <stdint.h>

#include "rt_client.h"

#define GW_TOKENS_REVOKED (1u << 20) /* entries per table before checks fall back to asking */
#define GW_TOKENS_CACHED  (1u << 14) /* verified tokens kept, in sets of four */

typedef struct gw_tokens gw_tokens;

/* What gw_tokens_check decided. */
typedef enum gw_token_verdict {
	GW_TOKEN_OK,  /* signed, live and not revoked: *uid is the user */
	GW_TOKEN_BAD, /* malformed, forged, expired or revoked */
	GW_TOKEN_ASK, /* cannot judge here: ask the user service */
} gw_token_verdict;

/* A gw_tokens_closed_fn hears of a deleted account, on the thread that pulled the feed. */
typedef void (*gw_tokens_closed_fn)(void *arg, uint64_t uid);

/* gw_tokens_open starts the feed over user (which must outlive it); poll_ms 0 disables checking
 * here (always ASK); closed (may be NULL) hears of every deleted account the feed names (with
 * poll_ms 0 too: the feed is then pulled for that alone, every 250 ms). */
int gw_tokens_open(gw_tokens **out, rt_client *user, int poll_ms, int trust_ms,
    gw_tokens_closed_fn closed, void *closed_arg);

/* gw_tokens_close stops the feed thread and frees the tables; NULL is ignored. */
void gw_tokens_close(gw_tokens *t);

/* gw_tokens_check judges tok at the present moment. */
gw_token_verdict gw_tokens_check(gw_tokens *t, const char *tok, size_t len, uint64_t *uid);

/* gw_tokens_sync pulls the feed now, on the calling thread (after a session ended through this gateway); WB_OK or the pull's error. */
int gw_tokens_sync(gw_tokens *t);

/* gw_tokens_revoked returns the entries in both revocation tables (a gauge). */
uint64_t gw_tokens_revoked(void *t);

#endif
