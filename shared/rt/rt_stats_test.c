/*
 * rt_stats_test.c - histogram buckets, quantile estimates and the STATS
 * objects, also through the codec.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "rt_stats.h"

Test(rt_stats, quantiles_of_known_histograms)
{
	uint64_t h[RT_HIST_BUCKETS] = { 0 };

	cr_assert_eq(rt_hist_quantile(h, RT_HIST_BUCKETS, 0.5), 0, "empty");
	/* 100 requests all in [512, 1024) us */
	h[10] = 100;
	uint64_t p50 = rt_hist_quantile(h, RT_HIST_BUCKETS, 0.5);
	cr_assert(p50 >= 512 && p50 < 1024, "p50 %lu", (unsigned long)p50);
	cr_assert_eq(p50, 768);
	cr_assert_eq(rt_hist_quantile(h, RT_HIST_BUCKETS, 1.0), 1024);
	/* 90 fast ([1,2) us), 10 slow ([65536,131072) us) */
	memset(h, 0, sizeof(h));
	h[1] = 90;
	h[17] = 10;
	cr_assert_lt(rt_hist_quantile(h, RT_HIST_BUCKETS, 0.5), 2);
	cr_assert_leq(rt_hist_quantile(h, RT_HIST_BUCKETS, 0.9), 2);
	uint64_t p99 = rt_hist_quantile(h, RT_HIST_BUCKETS, 0.99);
	cr_assert(p99 >= 65536 && p99 < 131072, "p99 %lu", (unsigned long)p99);
	/* out-of-range q is clamped, NaN-safe */
	cr_assert_lt(rt_hist_quantile(h, RT_HIST_BUCKETS, -1), 2);
	cr_assert_eq(rt_hist_quantile(h, RT_HIST_BUCKETS, 7), 131072);
	cr_assert_lt(rt_hist_quantile(h, RT_HIST_BUCKETS, __builtin_nan("")), 2);
	/* quantiles never decrease */
	uint64_t prev = 0;
	for (double q = 0; q <= 1.0; q += 0.01) {
		uint64_t v = rt_hist_quantile(h, RT_HIST_BUCKETS, q);
		cr_assert_geq(v, prev);
		prev = v;
	}
}

static const wb_obj *
find_op(const wb_obj *rep, const char *name)
{
	const wb_obj *st;
	size_t        n;
	if (!wb_get_objs(rep, WB_F_STATS, &st, &n)) {
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (strcmp(wb_str(&st[i], WB_F_NAME, ""), name) == 0) {
			return &st[i];
		}
	}
	return NULL;
}

Test(rt_stats, record_fill_and_round_trip)
{
	rt_stats *s = rt_stats_new();
	wb_obj   *rep = wb_msg_new(), *back = NULL;
	char     *buf;
	size_t    len;
	char      err[128];

	cr_assert_not_null(s);
	for (int i = 0; i < 1000; i++) {
		rt_stats_record(s, WB_OP_PING, 3, false); /* bucket 2: [2,4) */
	}
	rt_stats_record(s, WB_OP_POST_GET, 0, true);
	rt_stats_record(s, WB_OP_POST_GET, 1u << 30, false); /* last bucket */
	rt_stats_record(s, (wb_op)9999, 5, true);            /* bogus op: counted as "?" */
	cr_assert_eq(rt_stats_fill(s, rep), WB_OK);
	wb_reply_ok(rep);
	cr_assert_eq(wb_encode_buf(rep, &buf, &len), WB_OK);
	cr_assert_eq(
	    wb_decode(&back, buf, len, &wb_limits_default, err, sizeof(err)), WB_OK, "%s", err);
	free(buf);

	const wb_obj   *o = find_op(back, "ping");
	const uint64_t *h;
	size_t          hn;
	cr_assert_not_null(o);
	cr_assert_eq(wb_u64(o, WB_F_COUNT, 0), 1000);
	cr_assert_eq(wb_u64(o, WB_F_ERRORS, 1), 0);
	cr_assert_eq(wb_u64(o, WB_F_SUM_US, 0), 3000);
	cr_assert(wb_get_u64s(o, WB_F_HIST, &h, &hn));
	cr_assert_eq(hn, RT_HIST_BUCKETS);
	cr_assert_eq(h[2], 1000);
	uint64_t p50 = rt_hist_quantile(h, hn, 0.5);
	cr_assert(p50 >= 2 && p50 < 4);

	o = find_op(back, "post.get");
	cr_assert_not_null(o);
	cr_assert_eq(wb_u64(o, WB_F_COUNT, 0), 2);
	cr_assert_eq(wb_u64(o, WB_F_ERRORS, 0), 1);
	cr_assert(wb_get_u64s(o, WB_F_HIST, &h, &hn));
	cr_assert_eq(h[0], 1);
	cr_assert_eq(h[RT_HIST_BUCKETS - 1], 1);
	cr_assert_not_null(find_op(back, "?"));
	cr_assert_null(find_op(back, "stats"), "ops never seen are left out");

	wb_msg_free(back);
	wb_msg_free(rep);
	rt_stats_free(s);
}

Test(rt_stats, empty_table_adds_nothing)
{
	rt_stats *s = rt_stats_new();
	wb_obj   *rep = wb_msg_new();
	cr_assert_eq(rt_stats_fill(s, rep), WB_OK);
	cr_assert_not(wb_has(rep, WB_F_STATS));
	wb_msg_free(rep);
	rt_stats_free(s);
}
