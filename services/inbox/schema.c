/*
 * schema.c - the inbox service's family settings (layouts in schema.h).
 */
#include "schema.h"

#include "wb_id.h"

void inbox_schema_families(hb_family_opts *fams, uint32_t max_versions, uint64_t ttl_ms)
{
	fams[INBOX_FAM_TL] = (hb_family_opts){
		.name         = "tl",
		.max_versions = max_versions,
		.ttl_ms       = ttl_ms,
		.row_len      = 8,
		.qual_len     = HB_NONE,
		.compression  = HB_COMPRESS_ZSTD,
		.version_ms   = wb_id_ms,
		.ascending_puts = true,
	};
	fams[INBOX_FAM_META] = (hb_family_opts){
		.name         = "meta",
		.max_versions = 1,
		.qual_len     = HB_NONE,
	};
}
