/*
 * rt_stats.c - per-operation request counters and latency histograms,
 * recorded with relaxed atomics (no lock on the request path).
 *
 *   bucket   0      1      2      3     ...   i                 25
 *   us      [0,1)  [1,2)  [2,4)  [4,8)  ...  [2^(i-1), 2^i)    >= 2^24
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "rt_stats.h"

typedef struct rt_op_stats {
	atomic_uint_fast64_t count;
	atomic_uint_fast64_t errors;
	atomic_uint_fast64_t sum_us;
	atomic_uint_fast64_t hist[RT_HIST_BUCKETS];
} rt_op_stats;

struct rt_stats {
	rt_op_stats ops[WB_OP_COUNT];
};

/* rt_stats_new creates an empty table of per-op stats. */
rt_stats *
rt_stats_new(void)
{
	return calloc(1, sizeof(rt_stats));
}

/* rt_stats_free frees it. */
void
rt_stats_free(rt_stats *s)
{
	free(s);
}

static size_t
rt_stats_bucket(uint64_t us)
{
	size_t b = us == 0 ? 0 : (size_t)(64 - __builtin_clzll(us));

	return b < RT_HIST_BUCKETS ? b : RT_HIST_BUCKETS - 1;
}

/* rt_stats_record counts one request of op that took us microseconds; failed if it replied an error. */
void
rt_stats_record(rt_stats *s, wb_op op, uint64_t us, bool failed)
{
	rt_op_stats *o;

	if ((unsigned)op >= WB_OP_COUNT) {
		op = WB_OP_NONE;
	}
	o = &s->ops[op];
	atomic_fetch_add_explicit(&o->count, 1, memory_order_relaxed);
	if (failed) {
		atomic_fetch_add_explicit(&o->errors, 1, memory_order_relaxed);
	}
	atomic_fetch_add_explicit(&o->sum_us, us, memory_order_relaxed);
	atomic_fetch_add_explicit(&o->hist[rt_stats_bucket(us)], 1, memory_order_relaxed);
}

/* rt_stats_fill adds a STATS array (one object per op seen: name, count, errors, sum_us, hist) to rep. */
int
rt_stats_fill(rt_stats *s, wb_obj *rep)
{
	size_t  n = 0, i = 0;
	wb_obj *objs;
	int     rv;

	for (int op = 0; op < WB_OP_COUNT; op++) {
		if (atomic_load_explicit(&s->ops[op].count, memory_order_relaxed) > 0) {
			n++;
		}
	}
	if (n == 0) {
		return WB_OK;
	}
	if ((objs = wb_add_objs(rep, WB_F_STATS, n)) == NULL) {
		return WB_ENOMEM;
	}
	for (int op = 0; op < WB_OP_COUNT && i < n; op++) {
		rt_op_stats *o = &s->ops[op];
		uint64_t    *h;
		uint64_t     count = atomic_load_explicit(&o->count, memory_order_relaxed);

		if (count == 0) {
			continue;
		}
		if ((rv = wb_set_cstr(&objs[i], WB_F_NAME, wb_op_name((wb_op)op))) != 0 ||
		    (rv = wb_set_u64(&objs[i], WB_F_COUNT, count)) != 0 ||
		    (rv = wb_set_u64(&objs[i], WB_F_ERRORS,
		         atomic_load_explicit(&o->errors, memory_order_relaxed))) != 0 ||
		    (rv = wb_set_u64(&objs[i], WB_F_SUM_US,
		         atomic_load_explicit(&o->sum_us, memory_order_relaxed))) != 0) {
			return rv;
		}
		if ((h = wb_add_u64s(&objs[i], WB_F_HIST, RT_HIST_BUCKETS)) == NULL) {
			return WB_ENOMEM;
		}
		for (size_t b = 0; b < RT_HIST_BUCKETS; b++) {
			h[b] = atomic_load_explicit(&o->hist[b], memory_order_relaxed);
		}
		i++;
	}
	return WB_OK;
}

/* rt_hist_quantile estimates quantile q (0..1) in us from a histogram. */
uint64_t
rt_hist_quantile(const uint64_t *hist, size_t n, double q)
{
	uint64_t total = 0, cum = 0;
	double   target;

	for (size_t i = 0; i < n; i++) {
		total += hist[i];
	}
	if (total == 0) {
		return 0;
	}
	if (!(q > 0)) {
		q = 0; /* also catches NaN */
	}
	if (q > 1) {
		q = 1;
	}
	target = q * (double)total;
	if (target < 1) {
		target = 1;
	}
	for (size_t i = 0; i < n; i++) {
		double lo, hi, frac;

		if (hist[i] == 0 || (double)(cum + hist[i]) < target) {
			cum += hist[i];
			continue;
		}
		/* Interpolate linearly inside the bucket [lo, hi). */
		lo = i == 0 ? 0 : (double)(UINT64_C(1) << (i - 1 < 63 ? i - 1 : 63));
		hi = i == 0 ? 1 : lo * 2;
		frac = (target - (double)cum) / (double)hist[i];
		return (uint64_t)(lo + (hi - lo) * frac);
	}
	return 0; /* unreachable with total > 0 */
}
