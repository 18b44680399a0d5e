/*
 * lg_disk.h - on-disk size of the inbox, measured offline after a run.
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

#endif
