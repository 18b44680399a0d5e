/*
 * inbox_schema.h - the inbox service's table: families and key layouts.
 *
 * tl: one row per reader, one versioned cell per post in the inbox.
 *
 *   key:   +-------------------+------------------------+
 *          | reader uid (8 BE) | ~post id (8 BE)        |   no qualifier
 *          +-------------------+------------------------+
 *   value: +-------------------+
 *          | author uid (8 BE) |
 *          +-------------------+
 *
 *   16 key bytes + 8 value bytes per entry before RocksDB's prefix
 *   compression and ZSTD.  Versions (post ids) read newest first, so a
 *   home page is one row scan; max versions (WARBLE_INBOX_MAX) and TTL
 *   (WARBLE_INBOX_TTL, counted from the id's time) bound each inbox.
 *
 * meta: row = source name ("content/0", "relation/1": the service and
 *   its shard) -> the last applied seq of that source (8 BE) and that
 *   event's mark (8 BE, inbox_event_mark; absent in stores of older
 *   builds), written in the same batch as the last inbox cells of the
 *   event.  A store of a release before shards named them "content" and
 *   "relation"; they are renamed on its first open (inbox_upgrade.c).
 *   Row "rebuild" -> the depth (4 BE) while a rebuild is unfinished.
 *
 * Hybrid fan-out (inbox_hybrid.c): the accounts this shard keeps as big
 * (over WARBLE_FANOUT_LIMIT followers) are not fanned out; their posts
 * go once into their outbox, and a home read merges the outboxes of the
 * big accounts its reader follows.
 *
 * big: row = a big account's uid (8 BE), no qualifier -> its follower
 *   count when it crossed (8 BE).  Present while the account is big here.
 *
 * out: one row per big account, one cell per recent post, as in tl.
 *
 *   key:   +-------------------+------------------------+
 *          | author uid (8 BE) | ~post id (8 BE)        |   no qualifier
 *          +-------------------+------------------------+
 *   value: +-------------------+
 *          | author uid (8 BE) |
 *          +-------------------+
 *
 *   The same cap and TTL as tl.
 *
 * bigf: the big accounts each reader of this shard follows.
 *
 *   key:   +-------------------+-------------------+-------------+
 *          | reader uid (8 BE) | followee (8 BE)   | ~0 (8 BE)   |
 *          +-------------------+-------------------+-------------+
 *   value: empty.  Written for a big account's fans when it crosses up
 *   and on a follow of a big account; deleted on unfollow and when it
 *   crosses down.
 */
#ifndef INBOX_SCHEMA_H
#define INBOX_SCHEMA_H

#include <stdint.h>

#include "hb.h"

enum {
	INBOX_FAM_TL = 0,
	INBOX_FAM_META,
	INBOX_FAM_BIG,
	INBOX_FAM_OUT,
	INBOX_FAM_BIGF,
	INBOX_FAM_COUNT,
};

/* inbox_schema_families fills fams (INBOX_FAM_COUNT entries); max_versions and ttl_ms bound each inbox. */
void inbox_schema_families(hb_family_opts *fams, uint32_t max_versions, uint64_t ttl_ms);

#endif
