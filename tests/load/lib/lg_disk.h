/*
 * lg_disk.h - on-disk size of the inbox and of the content store's
 * images, measured offline after a run.
 */
#ifndef LG_DISK_H
#define LG_DISK_H

#include "lg.h"

typedef struct lg_disk {
	uint64_t cells;              /* live inbox entries after compaction */
	uint64_t sst_bytes;          /* table files after compaction */
	uint64_t folder_bytes;       /* the whole store before (WAL, logs included) */
	uint64_t folder_after_bytes; /* and after */
} lg_disk;

/* lg_disk_inbox compacts the stopped inbox store at path (its cap and TTL) and measures it; 0 or -1. */
int lg_disk_inbox(const char *path, uint32_t cap, uint64_t ttl_ms, lg_disk *out);

/* lg_disk_media opens the stopped content store at path, flushes its image families (upload,
 * media) and sums what holds images: every blob file (only those families keep values in blob
 * files) and the two families' table files (keys and blob pointers), into *flushed; then
 * compacts both families (which drops blobs no longer referenced) and sums again into
 * *compacted; 0 or -1. */
int lg_disk_media(const char *path, uint64_t *flushed, uint64_t *compacted);

#endif
