/* wb_id_test.c - post ids: order, uniqueness, clock trouble and floors. */
#include <criterion/criterion.h>

#include "wb_id.h"
#include "wb_clock.h"

#define T0 (WB_ID_EPOCH_MS + UINT64_C(200000000000)) /* some ms after the epoch */

Test(wb_id, layout_and_time)
{
	wb_idgen *g = wb_idgen_new();
	unsigned  node = 5;
	uint64_t  id = wb_id_next(g, node, T0);

	cr_assert_eq(wb_id_ms(id), T0);
	cr_assert_eq((id >> WB_ID_SEQ_BITS) & WB_ID_NODE_MAX, 5, "node bits");
	cr_assert_eq(id & 0xffff, 0, "first id of a ms has sequence 0");
	cr_assert_leq(wb_id_min(T0), id);
	cr_assert_gt(wb_id_min(T0 + 1), id);
	cr_assert_eq(wb_id_min(0), 0);
	cr_assert_eq(wb_id_node(id), 5);
	cr_assert_eq(wb_id_node(wb_id_next(g, 63, T0)), 63, "one generator, any node");
	wb_idgen_free(g);
}

Test(wb_id, monotonic_within_one_ms_and_across)
{
	wb_idgen *g = wb_idgen_new();
	unsigned  node = 1;
	uint64_t  prev = 0;

	for (int i = 0; i < 5000; i++) {
		uint64_t id = wb_id_next(g, node, T0 + (uint64_t)i / 1000);
		cr_assert_gt(id, prev, "id %d", i);
		cr_assert_eq(wb_id_ms(id), T0 + (uint64_t)i / 1000);
		prev = id;
	}
	wb_idgen_free(g);
}

Test(wb_id, clock_going_back_never_goes_back)
{
	wb_idgen *g = wb_idgen_new();
	unsigned  node = 0;
	uint64_t  a = wb_id_next(g, node, T0 + 1000);
	uint64_t  b = wb_id_next(g, node, T0); /* the clock jumped back a second */
	uint64_t  c = wb_id_next(g, node, T0 + 500);

	cr_assert_gt(b, a);
	cr_assert_gt(c, b);
	cr_assert_eq(wb_id_ms(c), T0 + 1000, "ids stay on the newest ms seen");
	uint64_t d = wb_id_next(g, node, T0 + 1001);
	cr_assert_gt(d, c);
	cr_assert_eq(wb_id_ms(d), T0 + 1001);
	wb_idgen_free(g);
}

Test(wb_id, sequence_exhaustion_borrows_the_next_ms)
{
	wb_idgen *g = wb_idgen_new();
	unsigned  node = 3;
	uint64_t  prev = 0, id = 0;

	for (unsigned i = 0; i < (1u << WB_ID_SEQ_BITS); i++) {
		id = wb_id_next(g, node, T0);
		cr_assert_gt(id, prev);
		prev = id;
	}
	cr_assert_eq(wb_id_ms(id), T0);
	cr_assert_eq(id & 0xffff, 0xffff);
	id = wb_id_next(g, node, T0);
	cr_assert_gt(id, prev);
	cr_assert_eq(wb_id_ms(id), T0 + 1, "the 65537th id of a ms moves to the next ms");
	cr_assert_eq(id & 0xffff, 0);
	/* the real clock reaching that ms does not reissue it */
	uint64_t next = wb_id_next(g, node, T0 + 1);
	cr_assert_gt(next, id);
	wb_idgen_free(g);
}

Test(wb_id, floor_after_restart)
{
	wb_idgen *g = wb_idgen_new();
	unsigned  node = 2;
	uint64_t  last = wb_id_next(g, node, T0 + 5000);
	wb_idgen_free(g);

	/* restarted with a clock behind the newest stored id */
	g = wb_idgen_new();
	wb_idgen_floor(g, last);
	for (int i = 0; i < 100; i++) {
		uint64_t id = wb_id_next(g, node, T0);
		cr_assert_gt(id, last);
		last = id;
	}
	/* a floor below what was issued changes nothing */
	wb_idgen_floor(g, 1);
	cr_assert_gt(wb_id_next(g, node, T0), last);
	wb_idgen_free(g);
}

Test(wb_id, clock_before_epoch)
{
	wb_idgen *g = wb_idgen_new();
	unsigned  node = 0;
	uint64_t  a = wb_id_next(g, node, 1000);
	uint64_t  b = wb_id_next(g, node, 1000);
	cr_assert_gt(b, a);
	cr_assert_gt(wb_now_ms(), WB_ID_EPOCH_MS);
	wb_idgen_free(g);
}

Test(wb_media_id, round_trip_and_refusals)
{
	char     buf[WB_MEDIA_ID_MAX];
	uint64_t a, id;

	cr_assert_str_eq(wb_media_id_format(buf, 7, 123), "7-123");
	cr_assert(wb_media_id_parse("7-123", 5, &a, &id));
	cr_assert_eq(a, 7);
	cr_assert_eq(id, 123);
	wb_media_id_format(buf, UINT64_MAX, UINT64_MAX);
	cr_assert_eq(strlen(buf), WB_MEDIA_ID_MAX - 1);
	cr_assert(wb_media_id_parse(buf, strlen(buf), &a, &id));
	cr_assert_eq(a, UINT64_MAX);
	cr_assert_eq(id, UINT64_MAX);
	static const char *bad[] = { "", "-", "7-", "-7", "07-1", "7-01", "0-1", "1-0", "7_1",
		"7-1-2", "a-1", "7-1x", "18446744073709551616-1", "1-18446744073709551616",
		" 7-1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_not(wb_media_id_parse(bad[i], strlen(bad[i]), &a, &id), "%s", bad[i]);
	}
}
