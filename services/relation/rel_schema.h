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
 * fan      the same edges reversed: row = followee uid, qualifier =
 *          follower uid.  Written in the same batch as the follow cell.
 *
 * count    counter cells (u64 add): row = uid (8 BE), qualifiers
 *          "following" and "followers".  Changed in the same batch as the
 *          edge, so they never drift from the lists.
 *
 * log      the event log (evlog): row = seq (8 BE) -> {seq, type, uid,
 *          target, time}, type "follow" or "unfollow".
 */
#ifndef REL_SCHEMA_H
#define REL_SCHEMA_H

#include "hb.h"

enum rel_fam { REL_FAM_FOLLOW = 0, REL_FAM_FAN, REL_FAM_COUNT, REL_FAM_LOG, REL_FAM_NFAMS };

#define REL_Q_FOLLOWING "following"
#define REL_Q_FOLLOWERS "followers"
#define REL_VERSION     0 /* the version of every edge cell */

/* rel_schema fills fams[REL_FAM_NFAMS] with the families. */
void rel_schema(hb_family_opts *fams);

#endif
