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
	REL_FAM_META,
	REL_FAM_NFAMS
};

#define REL_FAN_QUAL 10 /* bytes of a fans qualifier: slot (2 BE), follower uid (8 BE) */

#define REL_Q_FOLLOWING "following"
#define REL_Q_FOLLOWERS "followers"
#define REL_VERSION     0 /* the version of every edge cell */

/* rel_schema fills fams[REL_FAM_NFAMS] with the families. */
void rel_schema(hb_family_opts *fams);

/* rel_fan_qual writes the fans qualifier of follower into q. */
void rel_fan_qual(uint8_t q[REL_FAN_QUAL], uint64_t follower);

#endif
