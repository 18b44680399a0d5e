/*
 * user_schema.c - the user service's column family settings (layouts in user_schema.h).
 */
#include "evlog.h"
#include "user_check.h"
#include "user_schema.h"

/* user_schema fills fams[USER_FAM_COUNT] with the families. */
void
user_schema(hb_family_opts *fams, uint64_t session_ttl_ms, uint64_t name_hold_ms)
{
	fams[USER_FAM_INFO] = (hb_family_opts) {
		.name = "info",
		.max_versions = 1,
		.row_len = 8,
		.qual_len = HB_VARLEN,
		.bloom_bits = 10,
	};
	fams[USER_FAM_NAME] = (hb_family_opts) {
		.name = "name",
		.max_versions = 1,
		.row_len = HB_VARLEN,
		.qual_len = HB_NONE,
		.bloom_bits = 10,
	};
	fams[USER_FAM_SESSION] = (hb_family_opts) {
		.name = "session",
		.max_versions = 1,
		.ttl_ms = session_ttl_ms,
		.row_len = USER_TOKEN_HASH,
		.qual_len = HB_NONE,
		.bloom_bits = 10,
	};
	fams[USER_FAM_META] = (hb_family_opts) {
		.name = "meta",
		.max_versions = 1,
		.row_len = HB_VARLEN,
		.qual_len = HB_NONE,
	};
	fams[USER_FAM_REVOKE] = (hb_family_opts) {
		.name = "revoke",
		.max_versions = 1,
		.ttl_ms = session_ttl_ms,
		.row_len = 8,
		.qual_len = HB_NONE,
	};
	fams[USER_FAM_HOLD] = (hb_family_opts) {
		.name = "hold",
		.max_versions = 1,
		.ttl_ms = name_hold_ms > 0 ? name_hold_ms : 1, /* 0: no hold, none kept */
		.row_len = USER_HOLD_KEY,
		.qual_len = HB_NONE,
		.bloom_bits = 10,
	};
	fams[USER_FAM_LOG] = evlog_family("log");
}
