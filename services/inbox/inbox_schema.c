/*
 * inbox_schema.c - the inbox service's family settings (layouts in inbox_schema.h).
 */
#include "inbox_schema.h"

#include "wb_id.h"

void
inbox_schema_families(hb_family_opts *fams, uint32_t max_versions, uint64_t ttl_ms)
{
	fams[INBOX_FAM_TL] = (hb_family_opts) {
		.name = "tl",
		.max_versions = max_versions,
		.ttl_ms = ttl_ms,
		.row_len = 8,
		.qual_len = HB_NONE,
		.compression = HB_COMPRESS_ZSTD,
		.version_ms = wb_id_ms,
		/* a fan-out page is one batch of ascending readers; a 1M
		 * fan-out is 53 MB of memtable (measured: 34 B entry + skip
		 * list links), so 64 MB x 2 takes one while the previous
		 * memtable flushes, and keeps memtables under 128 MB of RSS */
		.ascending_puts = true,
		.write_buffer_mb = 64,
		.write_buffers = 2,
	};
	fams[INBOX_FAM_META] = (hb_family_opts) {
		.name = "meta",
		.max_versions = 1,
		.qual_len = HB_NONE,
	};
	fams[INBOX_FAM_BIG] = (hb_family_opts) {
		.name = "big",
		.max_versions = 1,
		.row_len = 8,
		.qual_len = HB_NONE,
	};
	fams[INBOX_FAM_OUT] = (hb_family_opts) {
		.name = "out",
		.max_versions = max_versions,
		.ttl_ms = ttl_ms,
		.row_len = 8,
		.qual_len = HB_NONE,
		.compression = HB_COMPRESS_ZSTD,
		.version_ms = wb_id_ms,
	};
	fams[INBOX_FAM_BIGF] = (hb_family_opts) {
		.name = "bigf",
		.max_versions = 1,
		.row_len = 8,
		.qual_len = 8,
	};
}
