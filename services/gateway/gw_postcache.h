/*
 * gw_postcache.h - the gateway's cache of post records for hydration.
 *
 * A post never changes after it is published; it can only be deleted, and
 * every delete passes through a gateway.  So the gateway keeps the
 * records post.get brought (id, author, text, time), and those of the
 * text-only posts published through it, and home timelines ask the
 * content service only for the posts it lacks.  Bounded: one table in
 * sets of four slots, a newcomer taking the slot of its set put longest
 * ago, each entry trusted for ttl_ms.
 *
 * Deletes: gw_postcache_forget drops a post once the content service has
 * deleted it.  A reader that fetched the post just before the delete must
 * not put it back afterwards, so every put carries the delete epoch read
 * before its fetch, and is ignored if a delete came in between.  Timelines
 * ask the cache only for ids the inbox lists, so a post deleted through
 * another gateway can be shown here until the inbox applies the delete
 * event, and for ttl_ms at most: an entry past ttl_ms is still served
 * when the inbox that listed it had applied every delete older than
 * ttl_ms (its lag), since a deleted post is then no longer listed.
 * Safe to use from many threads.
 */
#ifndef GW_POSTCACHE_H
#define GW_POSTCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wb_proto.h"

#define GW_POSTCACHE_SLOTS  (1u << 16) /* default entries */
#define GW_POSTCACHE_TTL_MS 10000      /* default trust in an entry */

typedef struct gw_postcache gw_postcache;

/* gw_postcache_open makes an empty cache of slots entries (rounded up to a power of two; 0: none, every lookup misses). */
int gw_postcache_open(gw_postcache **out, size_t slots, uint64_t ttl_ms);

/* gw_postcache_close frees the cache; NULL is ignored. */
void gw_postcache_close(gw_postcache *c);

/* gw_postcache_epoch reads the delete epoch: take it before fetching the posts to put. */
uint64_t gw_postcache_epoch(gw_postcache *c);

/* gw_postcache_get fills dst with post id's record (id, author, text, time) if cached and fresh, or cached and listed by a source lag_ms behind content's deletes with lag_ms < ttl_ms (UINT64_MAX: not known); false on a miss. */
bool gw_postcache_get(gw_postcache *c, uint64_t id, uint64_t lag_ms, wb_obj *dst);

/* gw_postcache_put caches a post record fetched after epoch was read (ignored if a post was deleted since). */
void gw_postcache_put(gw_postcache *c, uint64_t epoch, const wb_obj *post);

/* gw_postcache_rich tells whether post has columns beyond id, author, text and time (a title, a category or images). */
bool gw_postcache_rich(const wb_obj *post);

/* gw_postcache_forget drops post id after its deletion and advances the delete epoch. */
void gw_postcache_forget(gw_postcache *c, uint64_t id);

#endif
