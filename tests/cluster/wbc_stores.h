/*
 * wbc_stores.h - what a shard's store holds, read from its files: every
 * row that belongs to a user must belong to one of the shard's slots.
 *
 * The store of a stopped daemon is opened read-only (hb_table_opts
 * .read_only) with its service's own families (rel_schema.h,
 * content_schema.h, inbox_schema.h), and each family whose rows name a
 * user is scanned whole, every version; the uid that owns a cell, as the
 * service's key layout says, must have its slot in the shard's range
 * (wb_slot.h):
 *
 *   relation  follow  row = follower                         owner: row
 *             fans    row = followee, qual = slot | follower  owner: follower
 *                                                             (and slot = wb_slot(follower))
 *             count   row = uid, "following"                  owner: row
 *                     row = uid, "followers" (a part: each shard counts its own fans; any uid)
 *             fan     the layout before shards: must be empty
 *   content   post, pcat, upload, media, *_preview  row = author
 *             pidx    row = post id -> author                 owner: the author, and the
 *                                                             id's node is its slot group
 *   inbox     tl      row = reader                            owner: row
 *
 * The families of logs, positions and settings (log, meta) name no user.
 */
#ifndef WBC_STORES_H
#define WBC_STORES_H

#include <stddef.h>
#include <stdint.h>

#include "wb_slot.h"

/* What one store held. */
typedef struct wbc_store_report {
	uint64_t cells;      /* cells whose owner was checked */
	uint64_t rows;       /* distinct rows scanned */
	uint64_t foreign;    /* cells of an owner outside the shard's slots (or a layout broken) */
	char     first[200]; /* the first of those, described */
} wbc_store_report;

/*
 * wbc_stores_check reads the store of svc ("relation", "content" or
 * "inbox") at path, made as shard s (its daemon stopped), into *r;
 * returns 0, or -1 with why if it cannot be read (r then says nothing).
 */
int wbc_stores_check(
    const char *path, const char *svc, wb_shard s, wbc_store_report *r, char *why, size_t why_len);

#endif
