/*
 * rel_schema.c - the relation service's column family settings (layouts in rel_schema.h).
 */
#include "evlog.h"
#include "rel_schema.h"
#include "wb_slot.h"

/* rel_schema fills fams[REL_FAM_NFAMS] with the families. */
void
rel_schema(hb_family_opts *fams)
{
	fams[REL_FAM_FOLLOW] = (hb_family_opts) {
		.name = "follow",
		.max_versions = 1,
		.row_len = 8,
		.qual_len = 8,
		.compression = HB_COMPRESS_LZ4,
		.bloom_bits = 10,
	};
	fams[REL_FAM_FANS] = (hb_family_opts) {
		.name = "fans",
		.max_versions = 1,
		.row_len = 8,
		.qual_len = REL_FAN_QUAL,
		.compression = HB_COMPRESS_LZ4,
		.bloom_bits = 10,
	};
	fams[REL_FAM_FAN_OLD] = (hb_family_opts) {
		.name = "fan",
		.max_versions = 1,
		.row_len = 8,
		.qual_len = 8,
	};
	fams[REL_FAM_COUNT] = (hb_family_opts) {
		.name = "count",
		.row_len = 8,
		.qual_len = HB_VARLEN,
		.counter = true,
	};
	fams[REL_FAM_LOG] = evlog_family("log");
	fams[REL_FAM_BLOCK] = (hb_family_opts) {
		.name = "block",
		.max_versions = 1,
		.row_len = 8,
		.qual_len = REL_BLOCK_QUAL,
		.bloom_bits = 10,
	};
	fams[REL_FAM_BPEND] = (hb_family_opts) {
		.name = "bpend",
		.max_versions = 1,
		.row_len = 8,
		.qual_len = 8,
	};
	fams[REL_FAM_META] = (hb_family_opts) {
		.name = "meta",
		.max_versions = 1,
		.row_len = HB_VARLEN,
		.qual_len = HB_NONE,
	};
}

void
rel_fan_qual(uint8_t q[REL_FAN_QUAL], uint64_t follower)
{
	unsigned slot = wb_slot(follower);

	q[0] = (uint8_t)(slot >> 8);
	q[1] = (uint8_t)slot;
	hb_u64_be(q + 2, follower);
}

void
rel_block_qual(uint8_t q[REL_BLOCK_QUAL], unsigned way, uint64_t other)
{
	q[0] = (uint8_t)way;
	hb_u64_be(q + 1, other);
}
