/*
 * rt_uidset.h - a set of uids, each held for a while after it was added:
 * the accounts being deleted, which a service refuses to write for while
 * requests made before the deletion may still be in flight.
 *
 * An open-addressing table of (uid, added ms), grown at half load; an
 * entry older than hold_ms no longer counts and is dropped when the table
 * grows.  Memory: 16 bytes a slot, at most twice the uids added within
 * hold_ms.  Thread-safe (one mutex).
 */
#ifndef RT_UIDSET_H
#define RT_UIDSET_H

#include <stdbool.h>
#include <stdint.h>

typedef struct rt_uidset rt_uidset;

/* rt_uidset_open makes an empty set whose entries count for hold_ms after they are added. */
int rt_uidset_open(rt_uidset **out, uint64_t hold_ms);

/* rt_uidset_close frees the set; NULL is ignored. */
void rt_uidset_close(rt_uidset *s);

/* rt_uidset_add puts uid (nonzero) in the set as of now_ms (again: from now_ms on). */
int rt_uidset_add(rt_uidset *s, uint64_t uid, uint64_t now_ms);

/* rt_uidset_has tells whether uid was added within hold_ms before now_ms. */
bool rt_uidset_has(rt_uidset *s, uint64_t uid, uint64_t now_ms);

/* rt_uidset_count returns the entries still held at now_ms (a gauge's figure). */
uint64_t rt_uidset_count(rt_uidset *s, uint64_t now_ms);

#endif
