/* wb_slot_test.c - the published slot function's vectors, and shards splitting the slots. */
#include <criterion/criterion.h>

#include "wb_slot.h"

Test(wb_slot, published_vectors)
{
	static const struct {
		uint64_t uid;
		unsigned slot;
	} v[] = {
		{ 1, 3265 },
		{ 2, 1742 },
		{ 3, 4077 },
		{ 42, 3733 },
		{ 1000, 328 },
		{ 65536, 435 },
		{ UINT64_C(4294967296), 312 },
		{ UINT64_MAX, 3104 },
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		cr_assert_eq(
		    wb_slot(v[i].uid), v[i].slot, "uid %llu", (unsigned long long)v[i].uid);
	}
}

Test(wb_slot, every_count_splits_the_slots_into_ranges)
{
	for (unsigned n = 1; n <= WB_SHARDS_MAX; n++) {
		unsigned next = 0;
		for (unsigned i = 0; i < n; i++) {
			wb_shard s = { i, n };
			unsigned lo, hi;
			wb_shard_slots(s, &lo, &hi);
			cr_assert_eq(lo, next, "shard %u/%u starts where the last ended", i, n);
			cr_assert_gt(hi, lo, "shard %u/%u owns a slot", i, n);
			cr_assert_eq(lo % WB_GROUP_SLOTS, 0, "whole groups");
			for (unsigned slot = lo; slot < hi; slot++) {
				cr_assert_eq(
				    wb_slot_shard(slot, n), i, "slot %u of %u shards", slot, n);
				cr_assert(wb_shard_owns(s, slot));
			}
			next = hi;
		}
		cr_assert_eq(next, WB_SLOTS, "%u shards cover every slot", n);
	}
	wb_shard three = { 1, 3 };
	unsigned lo, hi;
	wb_shard_slots(three, &lo, &hi);
	cr_assert_eq(lo, 1344);
	cr_assert_eq(hi, 2688);
}

Test(wb_slot, uids_spread_over_the_slots)
{
	unsigned per[WB_SLOTS] = { 0 }, most = 0;

	for (uint64_t uid = 1; uid <= 409600; uid++) {
		per[wb_slot(uid)]++;
	}
	for (unsigned s = 0; s < WB_SLOTS; s++) {
		most = per[s] > most ? per[s] : most;
	}
	cr_assert_lt(most, 150, "100 a slot on average, %u in the fullest", most);
}

Test(wb_slot, shard_parse)
{
	wb_shard s;

	cr_assert(wb_shard_parse("0/1", &s));
	cr_assert(s.index == 0 && s.count == 1);
	cr_assert(wb_shard_parse("63/64", &s));
	cr_assert(s.index == 63 && s.count == 64);
	const char *bad[] = { "", "1", "1/1", "0/0", "0/65", "-1/3", "1/3x", " 1/3", "1 /3", "a/b",
		"1/", "/3", "1/ 3", "1/+3", NULL };
	for (int i = 0; bad[i] != NULL; i++) {
		cr_assert_not(wb_shard_parse(bad[i], &s), "\"%s\" taken", bad[i]);
	}
	cr_assert_not(wb_shard_parse(NULL, &s));
}
