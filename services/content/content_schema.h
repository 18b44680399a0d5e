/*
 * content_schema.h - the content service's table: families and key layouts.
 *
 * post: one row per author, one versioned cell per post, newest first.
 *
 *   key:   +-------------------+------------------------------+
 *          | author uid (8 BE) | ~post id (8 BE) (the version)|   no qualifier
 *          +-------------------+------------------------------+
 *   value: +----------------------+
 *          | text (UTF-8, 1..280  |   the post's time is its id's ms
 *          | code points, <=1120 B|   (wb_id_ms), so it is not stored
 *          +----------------------+
 *
 *   A user's timeline is a scan of one row; a time range [since, until)
 *   is the version range [wb_id_min(since), wb_id_min(until)).
 *
 * pidx: post id -> author, to read posts by id.
 *
 *   key:   +------------------+---------------+
 *          | post id (8 BE)   | ~0 (8)        |   no qualifier
 *          +------------------+---------------+
 *   value: author uid (8 BE)
 *
 * meta: row "last_id" -> the newest post id ever issued (8 BE), written
 *   with every post, so a restarted service (even with its clock moved
 *   back) never issues an id twice, deleted posts' ids included.
 *
 * log: the event log (evlog_family): post and delete events.
 */
#ifndef CONTENT_SCHEMA_H
#define CONTENT_SCHEMA_H

#include "hb.h"

enum {
	CONTENT_FAM_POST = 0,
	CONTENT_FAM_PIDX,
	CONTENT_FAM_META,
	CONTENT_FAM_LOG,
	CONTENT_FAM_COUNT,
};

#define CONTENT_META_LAST_ID "last_id"

/* content_schema_families fills fams (CONTENT_FAM_COUNT entries) with the table's families. */
void content_schema_families(hb_family_opts *fams);

#endif
