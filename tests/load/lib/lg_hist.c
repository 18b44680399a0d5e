/*
 * lg_hist.c - latency histograms.
 *
 *   bucket index = pow * 64 + sub, where pow = floor(log2(us)) - 5 (values
 *   below 64 us are exact in power 0) and sub the next 6 bits: every bucket
 *   is at most 1/64 (1.6%) wide relative to its values.
 */
#include <math.h>
#include <string.h>

#include "lg.h"

/* lg_hist_index maps microseconds to a bucket. */
static size_t
lg_hist_index(uint64_t us)
{
	if (us < LG_HIST_SUB) {
		return (size_t)us;
	}
	int    top = 63 - __builtin_clzll(us); /* >= 6 */
	size_t pow = (size_t)(top - 5);
	size_t sub = (size_t)(us >> (top - 6)) - LG_HIST_SUB;
	size_t i = pow * LG_HIST_SUB + sub;

	return i < LG_HIST_N ? i : LG_HIST_N - 1;
}

/* lg_hist_value gives a bucket's midpoint in microseconds. */
static double
lg_hist_value(size_t i)
{
	size_t pow = i / LG_HIST_SUB, sub = i % LG_HIST_SUB;

	if (pow == 0) {
		return (double)sub;
	}
	double lo = ldexp((double)(LG_HIST_SUB + sub), (int)pow - 1);
	return lo + ldexp(1.0, (int)pow - 1) / 2;
}

void
lg_hist_add(lg_hist *h, uint64_t us)
{
	h->b[lg_hist_index(us)]++;
	h->n++;
	h->sum_us += us;
	if (us > h->max_us) {
		h->max_us = us;
	}
}

void
lg_hist_merge(lg_hist *dst, const lg_hist *src)
{
	for (size_t i = 0; i < LG_HIST_N; i++) {
		dst->b[i] += src->b[i];
	}
	dst->n += src->n;
	dst->sum_us += src->sum_us;
	if (src->max_us > dst->max_us) {
		dst->max_us = src->max_us;
	}
}

double
lg_hist_q(const lg_hist *h, double q)
{
	if (h->n == 0) {
		return 0;
	}
	uint64_t want = (uint64_t)ceil(q * (double)h->n), seen = 0;
	if (want == 0) {
		want = 1;
	}
	for (size_t i = 0; i < LG_HIST_N; i++) {
		seen += h->b[i];
		if (seen >= want) {
			double v = lg_hist_value(i);
			return v > (double)h->max_us ? (double)h->max_us : v;
		}
	}
	return (double)h->max_us;
}

void
lg_hist_dump(const lg_hist *h, FILE *f)
{
	/* percentiles 0..99.999 on a log scale of 1/(1-p) */
	for (double k = 0; k <= 5.0 + 1e-9; k += 0.05) {
		double p = 1.0 - pow(10.0, -k);
		fprintf(f, "%.6f %.4f\n", p * 100.0, lg_hist_q(h, p) / 1000.0);
	}
}
