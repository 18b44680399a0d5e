/*
 * gw_names.h - the gateway's cache of usernames.
 *
 * A username never changes, so the mappings uid -> name and name -> uid
 * stay true once the user service has said them, until the account is
 * deleted: the gateway keeps them in memory and hydration skips user.get
 * when every author is known.  A deletion (the revocation feed's
 * "closed", gw_tokens.h) is forgotten at once, both ways, so the name,
 * free again after its hold, never resolves to the dead uid; and for
 * GW_NAMES_GONE_MS after, a put of that uid (an answer fetched before the
 * deletion, arriving after it) is ignored.  Only answers from the user
 * service go in (never a miss), and the cache is bounded: two tables of
 * GW_NAMES_SLOTS entries each, in sets of four, a newcomer taking the
 * slot of its set put longest ago.  Safe to use from many threads.
 */
#ifndef GW_NAMES_H
#define GW_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GW_NAME_MAX      32                     /* longest username (the user service's limit) */
#define GW_NAMES_SLOTS   (1u << 16)             /* entries per table (about 3 MiB each) */
#define GW_NAMES_GONE_MS (600 * UINT64_C(1000)) /* a deleted uid is not put back this long */

typedef struct gw_names gw_names;

/* gw_names_open makes an empty cache of slots entries per table (0: GW_NAMES_SLOTS, rounded up to a power of two). */
int gw_names_open(gw_names **out, size_t slots);

/* gw_names_close frees the cache; NULL is ignored. */
void gw_names_close(gw_names *n);

/* gw_names_name copies uid's name into out (GW_NAME_MAX + 1 bytes) if known. */
bool gw_names_name(gw_names *n, uint64_t uid, char *out);

/* gw_names_uid gives the uid of name (any letter case) if known. */
bool gw_names_uid(gw_names *n, const char *name, size_t len, uint64_t *uid);

/* gw_names_put records that uid is called name (ignored if name is empty or too long, or uid was
 * forgotten within GW_NAMES_GONE_MS). */
void gw_names_put(gw_names *n, uint64_t uid, const char *name, size_t len);

/* gw_names_forget drops every entry of uid (its account was deleted), both ways. */
void gw_names_forget(gw_names *n, uint64_t uid);

#endif
