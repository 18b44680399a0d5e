/*
 * inbox_cache.h - the newest cells of recently read inboxes, in memory.
 *
 * A home read without a cursor asks only for the newest page of one row,
 * and the same readers come back again and again.  The cache keeps, for
 * each reader it has room for, the newest `window` cells of their row as
 * the store holds them, kept current by the fan-out that writes the
 * store.  It is a read-through cache: a miss reads the store and fills
 * the entry, and every write to a row updates or drops that row's entry
 * after the store has taken it.  A fill carries the generation of its
 * slot's stripe read before the store was, and is dropped if any write
 * touched the stripe since: a fill can never put back what a write has
 * replaced.
 * Every function takes a NULL cache as one that never has an entry.
 */
#ifndef INBOX_CACHE_H
#define INBOX_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define INBOX_CACHE_CELLS 24 /* cells kept per reader: a default page, its "more", 3 deletes */

typedef struct inbox_cache inbox_cache;

/* A cell of an inbox: the post id (the cell's version) and its author. */
typedef struct inbox_cell {
	uint64_t id, author;
} inbox_cell;

/* inbox_cache_open makes a cache of slots readers (a power of two, rounded up), each with up to window cells; 0 readers: *out is NULL (no cache). */
int inbox_cache_open(inbox_cache **out, size_t slots, unsigned window);

/* inbox_cache_close frees c; NULL is ignored. */
void inbox_cache_close(inbox_cache *c);

/* inbox_cache_window returns the cells kept per reader (0 for no cache). */
unsigned inbox_cache_window(const inbox_cache *c);

/* inbox_cache_get copies the newest want cells of uid's inbox (fewer if the inbox has fewer) into out and returns how many, or -1 when the cache cannot tell; *gen is what to pass to inbox_cache_fill after reading the store. */
int inbox_cache_get(inbox_cache *c, uint64_t uid, size_t want, inbox_cell *out, uint64_t *gen);

/* inbox_cache_fill keeps cells[0..n) (newest first, as read from the store after inbox_cache_get gave gen) as uid's entry; complete says the row has no other cell. */
void inbox_cache_fill(
    inbox_cache *c, uint64_t uid, uint64_t gen, const inbox_cell *cells, size_t n, bool complete);

/* inbox_cache_put adds cell to uid's entry, if it has one: call it once the store has the cell. */
void inbox_cache_put(inbox_cache *c, uint64_t uid, inbox_cell cell);

/* inbox_cache_del removes post id from uid's entry, if it has one: call it once the store has deleted it. */
void inbox_cache_del(inbox_cache *c, uint64_t uid, uint64_t id);

/* inbox_cache_drop forgets uid's entry: call it once the store has taken a write to the row that is neither a put nor a delete of one cell. */
void inbox_cache_drop(inbox_cache *c, uint64_t uid);

/* inbox_cache_clear forgets every entry. */
void inbox_cache_clear(inbox_cache *c);

#endif
