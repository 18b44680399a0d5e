/*
 * content_schema.h - the content service's table: families and key layouts.
 *
 * post: one row per author, one versioned cell per post, newest first.
 *
 *   key:   +-------------------+------------------------------+
 *          | author uid (8 BE) | ~post id (8 BE) (the version)|   no qualifier
 *          +-------------------+------------------------------+
 *   value: +----------------------+
 *          | text (UTF-8, 1..280  |   a text-only post (and every post
 *          | code points, <=1120 B|   written before rich posts)
 *          +----------------------+
 *      or: +------+------------------------------------------------+
 *          | 0xFF | msgpack {text?, title?, category?, images?}    |
 *          +------+------------------------------------------------+
 *          A rich post: the seeds' "columns vary" content table, only
 *          the columns the post has; images are {media, type, width,
 *          height, alt?} (never the bytes).  0xFF never starts UTF-8,
 *          so the two forms cannot be confused.  The post's time is its
 *          id's ms (wb_id_ms), so it is not stored.
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
 * pcat: a user's posts by category, kept in the post's batch.
 *
 *   key:   +-------------------+-----------------+-------------------+
 *          | author uid (8 BE) | category (a-z0-9_) | ~post id (8 BE)|   value: empty
 *          +-------------------+-----------------+-------------------+
 *
 * upload: images uploaded and not yet attached; a TTL family (the
 *   upload's age is its id's ms), so an unused upload goes by itself.
 * media: images attached to posts, no TTL.
 * upload_preview, media_preview: each image's preview (content_image.h:
 *   a WebP, at most 640 px a side), beside it under the same key, in a
 *   family of its own so that a timeline's previews are read without the
 *   originals' bytes.  All four in blob files (RocksDB's BlobDB, HBase's
 *   MOB): the LSM tree holds only a pointer per image.
 *
 *   key:   +-------------------+--------------------------------+
 *          | author uid (8 BE) | ~media id (8 BE) (the version)  |   no qualifier
 *          +-------------------+--------------------------------+
 *   value: | type (1) | width (4 BE) | height (4 BE) | the file's bytes |
 *
 *   The bytes are what libvips wrote from the decoded upload, never the
 *   upload's own (width and height: of one frame).  An upload writes its
 *   image and its preview in one batch; attaching moves both from upload
 *   to media in the post's batch (a TTL is per family); deleting the post
 *   deletes both.
 *
 * meta: row "last_id" -> the newest id ever issued, post or media (8 BE),
 *   written with every post and upload, so a restarted service (even with
 *   its clock moved back) never issues an id twice, deleted posts' included.
 *   Row "reencoded" -> 1 (1 byte) once every image stored before images
 *   were decoded (their bytes as uploaded) has been written again and has
 *   a preview (content_reencode.c); a store without it runs that pass.
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
	CONTENT_FAM_PCAT,
	CONTENT_FAM_UPLOAD,
	CONTENT_FAM_MEDIA,
	CONTENT_FAM_UPLOAD_PREVIEW,
	CONTENT_FAM_MEDIA_PREVIEW,
	CONTENT_FAM_COUNT,
};

#define CONTENT_UPLOAD_TTL_MS (24 * 3600 * 1000ULL) /* an unattached upload's life */
#define CONTENT_BLOB_MIN      4096                  /* values this large go to blob files */

#define CONTENT_META_LAST_ID   "last_id"
#define CONTENT_META_REENCODED "reencoded"

/* content_schema_families fills fams (CONTENT_FAM_COUNT entries) with the table's families. */
void content_schema_families(hb_family_opts *fams);

#endif
