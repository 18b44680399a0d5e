/*
 * gw_rate.h - the gateway's per-client login failure limiter: after
 * max_fails failed logins from one key (an HTTP client's address) within
 * window_ms, the key is locked for cooldown_ms and its logins answer 429
 * RATE_LIMITED without reaching the user service.  (The user service
 * limits each username the same way: services/user/user_rate.h.)
 *
 * Fixed memory: GW_RATE_SLOTS slots, picked by a keyed hash (SipHash
 * with a random key, so nobody can aim collisions at a victim's slot).  A
 * key whose slot holds another key's failures takes the slot over, except
 * from a key still locked out; then the newcomer goes untracked until the
 * lock ends (the per-username limit of the user service still applies).
 *
 *   slot: | key (<= 48 bytes) | fails | window start ms | locked until ms |
 */
#ifndef GW_RATE_H
#define GW_RATE_H

#include <stddef.h>
#include <stdint.h>

#define GW_RATE_SLOTS 4096
#define GW_RATE_KEY   48 /* longer keys are compared on their first 48 bytes */

typedef struct gw_rate gw_rate;

/* gw_rate_open creates a limiter; max_fails 0 disables it. */
int gw_rate_open(gw_rate **out, unsigned max_fails, uint64_t window_ms,
    uint64_t cooldown_ms);

/* gw_rate_close frees the limiter; NULL is ignored. */
void gw_rate_close(gw_rate *r);

/* gw_rate_check returns WB_OK if key may try at now_ms, else WB_ERATE with the ms left in *retry_ms. */
int gw_rate_check(gw_rate *r, const void *key, size_t len, uint64_t now_ms,
    uint64_t *retry_ms);

/* gw_rate_fail counts a failure of key at now_ms (locking it at max_fails). */
void gw_rate_fail(gw_rate *r, const void *key, size_t len, uint64_t now_ms);

/* gw_rate_ok forgets key's failures after a success. */
void gw_rate_ok(gw_rate *r, const void *key, size_t len);

#endif
