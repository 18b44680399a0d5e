/*
 * rt_rate.h - a failure limiter with growing waits.  Each key counts its
 * failures within a window; past `free` of them, every further failure
 * makes the key wait before its next try (rt_rate_check answers
 * RATE_LIMITED with the time left), the first wait wait_ms, each next
 * one twice as long, up to wait_max_ms.  Nothing sleeps: a caller that is
 * refused answers at once.  A success forgets the key's failures and, for
 * remember_ms, marks the key as one that succeeded (rt_rate_known): the
 * user service keys logins by account and address, and lets an address
 * that logged in to an account before past that account's ceiling.
 *
 * With free = N and wait_ms = wait_max_ms = the window it is a plain rate
 * limit: N events a window, then nothing until the window ends.
 *
 * Fixed memory: `slots` slots, picked by a keyed hash (SipHash with a
 * random key, so nobody can aim collisions at a victim's slot).  A key
 * whose slot holds another key takes the slot over, except from a key
 * still waiting; then the newcomer goes untracked until the wait ends.
 * Thread-safe (one mutex per limiter).
 *
 *   slot: | key (<= 48 bytes) | fails | window start | wait until | known until |
 */
#ifndef RT_RATE_H
#define RT_RATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RT_RATE_SLOTS 4096 /* slots when the options give none */
#define RT_RATE_KEY   48   /* longer keys are compared on their first 48 bytes */

typedef struct rt_rate rt_rate;

typedef struct rt_rate_opts {
	unsigned free;      /* failures in a window before the first wait (0: the limiter is off) */
	uint64_t window_ms; /* failures are counted from a key's first one for this long */
	uint64_t wait_ms;   /* the first wait; each further failure doubles it */
	uint64_t wait_max_ms; /* the longest wait (0: wait_ms) */
	uint64_t remember_ms; /* how long a success marks its key known (0: not at all) */
	size_t   slots;       /* keys tracked at once (0: RT_RATE_SLOTS) */
} rt_rate_opts;

/* rt_rate_open creates a limiter. */
int rt_rate_open(rt_rate **out, const rt_rate_opts *opts);

/* rt_rate_close frees the limiter; NULL is ignored. */
void rt_rate_close(rt_rate *r);

/* rt_rate_check returns WB_OK if key may try at now_ms, else WB_ERATE with the ms left in *retry_ms. */
int rt_rate_check(rt_rate *r, const void *key, size_t len, uint64_t now_ms, uint64_t *retry_ms);

/* rt_rate_fail counts a failure of key at now_ms (a wait begins past the free ones); the wait it set, ms (0: none). */
uint64_t rt_rate_fail(rt_rate *r, const void *key, size_t len, uint64_t now_ms);

/* rt_rate_success forgets key's failures and marks it known until now_ms + remember_ms. */
void rt_rate_success(rt_rate *r, const void *key, size_t len, uint64_t now_ms);

/* rt_rate_known tells whether key succeeded within remember_ms of now_ms. */
bool rt_rate_known(rt_rate *r, const void *key, size_t len, uint64_t now_ms);

#endif
