/*
 * rel_schema.h - the relation service's table: column families and key layouts.
 *
 * follow   who a user follows: one cell per edge, empty value, version 0
 *
 *     row = follower uid (8 BE)   qualifier = followee uid (8 BE)
 *     +-------------------------+-------------------------+
 *     | 00 00 00 00 00 00 00 07 | 00 00 00 00 00 00 00 2a |  -> ""
 *     +-------------------------+-------------------------+
 *
 *     so a user's followees are one row, in ascending uid order, and a
 *     page cursor is just the last uid seen (start_qual = after + 1).
 *
 * fans     the same edges reversed, kept on the follower's shard: row =
 *          followee uid, qualifier = the follower's slot, then its uid.
 *          Written in the same batch as the follow cell.
 *
 *     row = followee uid (8 BE)   qualifier = slot (2 BE) | follower uid (8 BE)
 *     +-------------------------+-------+-------------------------+
 *     | 00 00 00 00 00 00 00 2a | 0e 95 | 00 00 00 00 00 00 00 07 |  -> ""
 *     +-------------------------+-------+-------------------------+
 *
 *     so the fans of one followee that an inbox shard serves (a slot
 *     range) are one contiguous run of the row: rel.fans {slots} reads
 *     just them.  A shard holds the fans of its own slots only.
 *
 * fan      the fans of a release before shards (qualifier = follower uid,
 *          8 BE): moved into fans once, when such a store is first opened
 *          (rel_upgrade.c), and empty after.
 *
 * count    counter cells (u64 add): row = uid (8 BE), qualifiers
 *          "following" and "followers".  Changed in the same batch as the
 *          edge, so they never drift from the lists; both live on the
 *          follower's shard, so a user's "following" is on their own
 *          shard and each shard holds the part of "followers" that its
 *          fans make (the count is the sum over the shards).
 *
 * log      the event log (evlog): row = seq (8 BE) -> {seq, type, uid,
 *          target, time}, type "follow" or "unfollow".
 *
 * block    the blocks between a user and others, both ways, on the user's
 *          own shard: row = uid, qualifier = way (1) | other uid (8 BE).
 *          Way 0: uid blocks other (written by uid's rel.block); way 1:
 *          other blocks uid (written by rel.block_peer, from other's shard,
 *          or in the same batch when both are on one shard).
 *
 *     row = uid (8 BE)            qualifier = way (1) | other uid (8 BE)
 *     +-------------------------+----+-------------------------+
 *     | 00 00 00 00 00 00 00 07 | 00 | 00 00 00 00 00 00 00 2a |  -> state (1) | gen (8 BE)
 *     +-------------------------+----+-------------------------+
 *
 *          state 1: the block stands; 0: lifted (the cell stays, so that
 *          the pair's gen only grows).  gen counts the pair's blocks and
 *          unblocks on the blocker's side: an older one arriving late at
 *          the other shard (a retry, a reply lost) changes nothing there.
 *          A user's blocks are one run of the row (way 0), in uid order;
 *          whether a and b see each other is two cells of a's row.
 *
 * bpend    the blocks and unblocks not yet known to the other user's
 *          shard: row = blocker uid (8 BE), qualifier = blocked uid
 *          (8 BE) -> gen (8 BE).  Written in the batch of the blocker's
 *          change, deleted once the other shard has taken that gen or a
 *          later one (rel_outbox.c); empty when both are on one shard.
 *          target, time}, type "follow" or "unfollow"; and, for a deleted
 *          account, "unfollow" for each of its fans here and "erased"
 *          {uid} once this shard holds nothing of it (rel_erase.c).
 *
 * meta     row = the name of a log this shard follows ("user") -> its
 *          applied seq (8 BE) and that event's mark (8 BE): the user
 *          service's deletions (evlog_sub.h).
 */
#ifndef REL_SCHEMA_H
#define REL_SCHEMA_H

#include "hb.h"

enum rel_fam {
	REL_FAM_FOLLOW = 0,
	REL_FAM_FANS,
	REL_FAM_COUNT,
	REL_FAM_LOG,
	REL_FAM_FAN_OLD,
	REL_FAM_BLOCK,
	REL_FAM_BPEND,
	REL_FAM_META,
	REL_FAM_NFAMS
};

#define REL_FAN_QUAL   10 /* bytes of a fans qualifier: slot (2 BE), follower uid (8 BE) */
#define REL_BLOCK_QUAL 9  /* bytes of a block qualifier: way (1), other uid (8 BE) */
#define REL_BLOCK_VAL  9  /* bytes of a block value: state (1), gen (8 BE) */
#define REL_BLOCK_OUT  0  /* way: the row's user blocks the other */
#define REL_BLOCK_IN   1  /* way: the other blocks the row's user */

#define REL_Q_FOLLOWING "following"
#define REL_Q_FOLLOWERS "followers"
#define REL_VERSION     0 /* the version of every edge cell */

/* rel_schema fills fams[REL_FAM_NFAMS] with the families. */
void rel_schema(hb_family_opts *fams);

/* rel_fan_qual writes the fans qualifier of follower into q. */
void rel_fan_qual(uint8_t q[REL_FAN_QUAL], uint64_t follower);

/* rel_block_qual writes the block qualifier of (way, other) into q. */
void rel_block_qual(uint8_t q[REL_BLOCK_QUAL], unsigned way, uint64_t other);

#endif
