/*
 * wb_slot.h - where a user's data lives: 4,096 fixed slots, and shards
 * that each own a contiguous range of them.
 *
 *   slot(uid) = splitmix64_finalizer(uid) mod 4096
 *
 *   splitmix64_finalizer(x):            (all arithmetic mod 2^64)
 *       x = x + 0x9e3779b97f4a7c15
 *       x = (x xor (x >> 30)) * 0xbf58476d1ce4e5b9
 *       x = (x xor (x >> 27)) * 0x94d049bb133111eb
 *       return x xor (x >> 31)
 *
 *   test vectors (wb_slot_test.c):  uid 1 -> 3265, 2 -> 1742, 3 -> 4077,
 *   42 -> 3733, 1000 -> 328, 65536 -> 435, 2^32 -> 312, 2^64-1 -> 3104
 *
 * The slots form 64 groups of 64 (group = slot >> 6); shard i of N owns
 * the groups [floor(i*64/N), floor((i+1)*64/N)), so any N from 1 to 64
 * splits them, and a shard's slots are one range:
 *
 *   N = 3    groups  0..20 | 21..41 | 42..63
 *            slots   0..1343 | 1344..2687 | 2688..4095
 *
 * A client in another language routes a request by computing the same
 * function: everything about a reader (follows, fans kept by follower,
 * the inbox) lives on the reader's slot, posts on the author's.
 */
#ifndef WB_SLOT_H
#define WB_SLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WB_SLOTS       4096
#define WB_SLOT_GROUPS 64
#define WB_GROUP_SLOTS (WB_SLOTS / WB_SLOT_GROUPS)
#define WB_SHARDS_MAX  WB_SLOT_GROUPS /* a shard owns at least one group */

/* A shard's place: shard index of count. */
typedef struct wb_shard {
	unsigned index, count;
} wb_shard;

/* wb_slot returns uid's slot. */
unsigned wb_slot(uint64_t uid);

/* wb_slot_group returns the group of a slot. */
static inline unsigned
wb_slot_group(unsigned slot)
{
	return slot / WB_GROUP_SLOTS;
}

/* wb_group_shard returns the index of the shard of count that owns group. */
unsigned wb_group_shard(unsigned group, unsigned count);

/* wb_slot_shard returns the index of the shard of count that owns slot. */
unsigned wb_slot_shard(unsigned slot, unsigned count);

/* wb_uid_shard returns the index of the shard of count that owns uid's slot. */
unsigned wb_uid_shard(uint64_t uid, unsigned count);

/* wb_shard_slots gives the slots shard s owns: [*lo, *hi). */
void wb_shard_slots(wb_shard s, unsigned *lo, unsigned *hi);

/* wb_shard_owns tells whether shard s owns slot. */
bool wb_shard_owns(wb_shard s, unsigned slot);

/* wb_shard_parse reads "i/N" (0 <= i < N <= 64) into *s; false if malformed. */
bool wb_shard_parse(const char *text, wb_shard *s);

#endif
