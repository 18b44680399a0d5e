/*
 * rt_rate.h - login failure limiter: after max_fails failed logins of one
 * key within window_ms, the key is locked for cooldown_ms and every login
 * of it is refused (RATE_LIMITED) without checking the password.  The
 * gateway keys it by client address, the user service by username;
 * each limit still applies when the other one lets a login through.
 *
 * Fixed memory: RT_RATE_SLOTS slots, picked by a keyed hash (SipHash
 * with a random key, so nobody can aim collisions at a victim's slot).  A
 * key whose slot holds another key's failures takes the slot over, except
 * from a key still locked out; then the newcomer goes untracked until the
 * lock ends.  Thread-safe (one mutex per limiter).
 *
 *   slot: | key (<= 48 bytes) | fails | window start ms | locked until ms |
 */
#ifndef RT_RATE_H
#define RT_RATE_H

#include <stddef.h>
#include <stdint.h>

#define RT_RATE_SLOTS 4096
#define RT_RATE_KEY   48 /* longer keys are compared on their first 48 bytes */

typedef struct rt_rate rt_rate;

/* rt_rate_open creates a limiter; max_fails 0 disables it. */
int rt_rate_open(rt_rate **out, unsigned max_fails, uint64_t window_ms, uint64_t cooldown_ms);

/* rt_rate_close frees the limiter; NULL is ignored. */
void rt_rate_close(rt_rate *r);

/* rt_rate_check returns WB_OK if key may try at now_ms, else WB_ERATE with the ms left in *retry_ms. */
int rt_rate_check(rt_rate *r, const void *key, size_t len, uint64_t now_ms, uint64_t *retry_ms);

/* rt_rate_fail counts a failure of key at now_ms (locking it at max_fails). */
void rt_rate_fail(rt_rate *r, const void *key, size_t len, uint64_t now_ms);

/* rt_rate_success forgets key's failures after a successful login. */
void rt_rate_success(rt_rate *r, const void *key, size_t len);

#endif
