/*
 * rt_stats.h - per-operation counters and latency histograms.
 *
 * Latencies go into log2 buckets of microseconds: bucket i counts
 * requests that took [2^(i-1), 2^i) us (bucket 0: under 1 us), the last
 * bucket everything slower.  Recording is lock-free.
 */
#ifndef RT_STATS_H
#define RT_STATS_H

#include <stdint.h>

#include "wb_proto.h"

#define RT_HIST_BUCKETS 26 /* up to ~33 s */

typedef struct rt_stats rt_stats;

/* rt_stats_new creates an empty table of per-op stats. */
rt_stats *rt_stats_new(void);

/* rt_stats_free frees it. */
void rt_stats_free(rt_stats *s);

/* rt_stats_record counts one request of op that took us microseconds; failed if it replied an error. */
void rt_stats_record(rt_stats *s, wb_op op, uint64_t us, bool failed);

/* rt_stats_fill adds a STATS array (one object per op seen: name, count, errors, sum_us, hist) to rep. */
int rt_stats_fill(rt_stats *s, wb_obj *rep);

/* rt_hist_quantile estimates quantile q (0..1) in us from a histogram. */
uint64_t rt_hist_quantile(const uint64_t *hist, size_t n, double q);

#endif
