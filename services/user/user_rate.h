/*
 * user_rate.h - login failure limiter: after max_fails failed logins of one
 * key (a username) within window_ms, the key is locked for cooldown_ms and
 * every login of it answers RATE_LIMITED without checking the password.
 *
 * Fixed memory: USER_RATE_SLOTS slots, picked by a keyed hash (SipHash
 * with a random key, so nobody can aim collisions at a victim's slot).  A
 * key whose slot holds another key's failures takes the slot over, except
 * from a key still locked out; then the newcomer goes untracked until the
 * lock ends (the per-client limit of the gateway still applies).
 *
 *   slot: | key (<= 48 bytes) | fails | window start ms | locked until ms |
 */
#ifndef USER_RATE_H
#define USER_RATE_H

#include <stddef.h>
#include <stdint.h>

#define USER_RATE_SLOTS 4096
#define USER_RATE_KEY   48 /* longer keys are compared on their first 48 bytes */

typedef struct user_rate user_rate;

/* user_rate_open creates a limiter; max_fails 0 disables it. */
int user_rate_open(user_rate **out, unsigned max_fails, uint64_t window_ms,
    uint64_t cooldown_ms);

/* user_rate_close frees the limiter; NULL is ignored. */
void user_rate_close(user_rate *r);

/* user_rate_check returns WB_OK if key may try at now_ms, else WB_ERATE with the ms left in *retry_ms. */
int user_rate_check(user_rate *r, const void *key, size_t len, uint64_t now_ms,
    uint64_t *retry_ms);

/* user_rate_fail counts a failure of key at now_ms (locking it at max_fails). */
void user_rate_fail(user_rate *r, const void *key, size_t len, uint64_t now_ms);

/* user_rate_ok forgets key's failures after a success. */
void user_rate_ok(user_rate *r, const void *key, size_t len);

#endif
