/*
 * lg_disk.h - on-disk size of the inbox, of the content store's images
 * and, family by family, of the relation and content stores, measured
 * offline after a run.
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

#define LG_DISK_FAMS 16

typedef struct lg_disk_store {
	int         nfams;
	const char *name[LG_DISK_FAMS];  /* each family's name */
	uint64_t    bytes[LG_DISK_FAMS]; /* its table files after compaction */
	uint64_t    sst_bytes;           /* every family's */
	uint64_t    cells;               /* live cells of the counted family */
	uint64_t    value_bytes;         /* the sum of their values' lengths */
	uint64_t    folder_bytes;        /* the whole folder after (WAL, logs, blobs included) */
} lg_disk_store;

/* lg_disk_relation compacts every family of the stopped relation store at path and measures
 * each, counting the follow cells (one an edge); 0 or -1. */
int lg_disk_relation(const char *path, lg_disk_store *out);

/* lg_disk_content compacts every family of the stopped content store at path and measures
 * each, counting the post cells and their values' bytes; 0 or -1. */
int lg_disk_content(const char *path, lg_disk_store *out);

#endif
