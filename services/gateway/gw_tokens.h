/*
 * gw_tokens.h - a small cache of session token -> uid, so that not every
 * request costs a user.auth round trip.  Entries live at most ttl_ms
 * (<= 1000) counted from before the user service was asked, so a revoked
 * or expired session stops working everywhere within ttl_ms.  Fixed size
 * (direct-mapped slots), so memory never grows with traffic.
 */
#ifndef GW_TOKENS_H
#define GW_TOKENS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wb_clock.h"

#define GW_TOKENS_SLOTS 4096 /* cached sessions */
#define GW_TOKENS_LEN   128  /* longer tokens are not cached */

typedef struct gw_tokens gw_tokens;

/* gw_tokens_open creates a cache whose entries live ttl_ms (0 disables caching). */
int gw_tokens_open(gw_tokens **out, int ttl_ms);

/* gw_tokens_close frees the cache; NULL is ignored. */
void gw_tokens_close(gw_tokens *t);

/* gw_tokens_get finds a live entry for tok; false if absent or expired. */
bool gw_tokens_get(gw_tokens *t, const char *tok, size_t len, uint64_t *uid);

/* gw_tokens_put caches tok -> uid, valid ttl_ms from asked_ms (wb_mono_us() / 1000 before the user service was asked). */
void gw_tokens_put(gw_tokens *t, const char *tok, size_t len, uint64_t uid, uint64_t asked_ms);

/* gw_tokens_drop forgets tok (after logout). */
void gw_tokens_drop(gw_tokens *t, const char *tok, size_t len);

#endif
