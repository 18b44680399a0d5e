/*
 * gw_sessions.h - the gateway checks signed session tokens itself, so a
 * request costs no user.auth hop.
 *
 * The user service signs tokens (proto/wb_session.h) with a key the
 * gateway fetches once (user.session_key), and lists every session that
 * ended before its expiry in a feed numbered by seq (user.revocations).
 * A thread here pulls that feed every poll_ms into two tables: ended
 * sessions (sid -> until) and users whose sessions began before a moment
 * are void (uid -> not-before).  A token is accepted here only while the
 * last complete pull began less than trust_ms ago; otherwise, and for
 * tokens this cannot judge (the earlier unsigned form, a MAC that does not
 * match the key it holds, tables full), the caller asks the user service.
 * So a logout, "log out everywhere" or password change elsewhere takes
 * effect here within trust_ms; one made through this gateway at once
 * (gw_sessions_sync before the reply).
 *
 * Memory: at most GW_SESSIONS_MAX entries per table (16 bytes each, at
 * most half full): about 32 MiB each when full.
 */
#ifndef GW_SESSIONS_H
#define GW_SESSIONS_H

#include <stddef.h>
#include <stdint.h>

#include "rt_client.h"

#define GW_SESSIONS_MAX (1u << 20) /* entries per table before checks fall back to asking */

typedef struct gw_sessions gw_sessions;

/* What gw_sessions_check decided. */
typedef enum gw_session_verdict {
	GW_SESSION_OK,  /* signed, live and not revoked: *uid is the user */
	GW_SESSION_BAD, /* signed by the key but expired or revoked */
	GW_SESSION_ASK, /* cannot judge here: ask the user service */
} gw_session_verdict;

/* gw_sessions_open starts the feed over user (which must outlive it); poll_ms 0 disables checking here (always ASK). */
int gw_sessions_open(gw_sessions **out, rt_client *user, int poll_ms, int trust_ms);

/* gw_sessions_close stops the feed thread and frees the tables; NULL is ignored. */
void gw_sessions_close(gw_sessions *s);

/* gw_sessions_check judges tok at the present moment. */
gw_session_verdict gw_sessions_check(gw_sessions *s, const char *tok, size_t len, uint64_t *uid);

/* gw_sessions_sync pulls the feed now, on the calling thread (after a session ended through this gateway); WB_OK or the pull's error. */
int gw_sessions_sync(gw_sessions *s);

/* gw_sessions_revoked returns the entries in both tables (a gauge). */
uint64_t gw_sessions_revoked(void *s);

#endif
