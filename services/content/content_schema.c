/*
 * content_schema.c - the content service's family settings (layouts in content_schema.h).
 */
#include "content_schema.h"

#include "evlog.h"
#include "wb_id.h"

void
content_schema_families(hb_family_opts *fams)
{
	fams[CONTENT_FAM_POST] = (hb_family_opts) {
		.name = "post",
		.row_len = 8,
		.qual_len = HB_NONE,
		.compression = HB_COMPRESS_LZ4,
		.bloom_bits = 10,
	};
	fams[CONTENT_FAM_PIDX] = (hb_family_opts) {
		.name = "pidx",
		.max_versions = 1,
		.row_len = 8,
		.qual_len = HB_NONE,
		.bloom_bits = 10,
	};
	fams[CONTENT_FAM_META] = (hb_family_opts) {
		.name = "meta",
		.max_versions = 1,
		.qual_len = HB_NONE,
	};
	fams[CONTENT_FAM_LOG] = evlog_family("log");
	fams[CONTENT_FAM_PCAT] = (hb_family_opts) {
		.name = "pcat",
		.row_len = 8,
		.qual_len = HB_VARLEN,
		.bloom_bits = 10,
	};
	fams[CONTENT_FAM_UPLOAD] = (hb_family_opts) {
		.name = "upload",
		.ttl_ms = CONTENT_UPLOAD_TTL_MS,
		.version_ms = wb_id_ms,
		.row_len = 8,
		.qual_len = HB_NONE,
		.blob_min_bytes = CONTENT_BLOB_MIN,
	};
	fams[CONTENT_FAM_MEDIA] = (hb_family_opts) {
		.name = "media",
		.row_len = 8,
		.qual_len = HB_NONE,
		.bloom_bits = 10,
		.blob_min_bytes = CONTENT_BLOB_MIN,
	};
	fams[CONTENT_FAM_UPLOAD_PREVIEW] = fams[CONTENT_FAM_UPLOAD];
	fams[CONTENT_FAM_UPLOAD_PREVIEW].name = "upload_preview";
	fams[CONTENT_FAM_MEDIA_PREVIEW] = fams[CONTENT_FAM_MEDIA];
	fams[CONTENT_FAM_MEDIA_PREVIEW].name = "media_preview";
}
