/*
 * hb_filter.c - what RocksDB runs for the store in the background: the
 * compaction filter that drops excess versions and expired cells, and the
 * i64 add merge operator of counter families.
 *
 * The factory makes one filter per (sub)compaction, so a filter's state is
 * used by one thread only: it walks the compaction's keys in order and
 * counts consecutive versions of the same column (newest first).  RocksDB
 * 7.8's C API only has the legacy callback, and it never frees a rewritten
 * value, so the filter only ever drops, never rewrites.
 *
 * A filter only sees the keys of its compaction.  Versions of a column in
 * files outside the compaction are not counted (more is kept; reads still
 * apply max versions).  A version deleted by a tombstone that lies outside
 * the compaction is still counted, so deleting a newer version does not
 * bring back versions beyond max versions once compaction dropped them
 * (HBase behaves the same way); reads before that compaction may show them.
 * Row and column deletes in such families are point tombstones, never range
 * tombstones (see hb_batch_delete_range in hb.c): RocksDB passes cells under
 * a range tombstone to the filter, which would count them.
 */
#include <stdlib.h>
#include <string.h>

#include "hb_int.h"

typedef struct hb_filter {
	hb_fam  *f;
	uint64_t now;
	uint8_t *col;
	size_t   col_len;
	size_t   col_cap;
	uint32_t idx; /* versions of the current column seen so far */
	bool     have_col;
} hb_filter;

static void
hb_filter_destroy(void *arg)
{
	hb_filter *flt = arg;
	hb_table  *t = flt->f->t;

	free(flt->col);
	free(flt);
	/* release: this thread's reads of the family come before its free */
	atomic_fetch_sub_explicit(&t->filters, 1, memory_order_release);
}

static const char *
hb_filter_name(void *arg)
{
	(void)arg;
	return "hb.versions";
}

/* hb_filter_filter decides about one cell: 1 drops it, 0 keeps it. */
static unsigned char
hb_filter_filter(void *arg, int level, const char *key, size_t klen, const char *val, size_t vlen,
    char **new_val, size_t *new_len, unsigned char *changed)
{
	hb_filter *flt = arg;
	hb_fam    *f = flt->f;
	size_t     clen;

	(void)level, (void)val, (void)vlen, (void)new_val, (void)new_len;
	*changed = 0;
	if (klen < 8) {
		return 0; /* not a cell key: keep */
	}
	clen = klen - 8;
	if (!flt->have_col || clen != flt->col_len || memcmp(key, flt->col, clen) != 0) {
		if (clen > flt->col_cap) {
			uint8_t *n = realloc(flt->col, clen);
			if (n == NULL) {
				/* no memory: stop counting, keep everything */
				flt->have_col = false;
				return 0;
			}
			flt->col = n;
			flt->col_cap = clen;
		}
		memcpy(flt->col, key, clen);
		flt->col_len = clen;
		flt->have_col = true;
		flt->idx = 0;
	}
	uint32_t idx = flt->idx++;
	if (f->o.max_versions != 0 && idx >= f->o.max_versions) {
		return 1;
	}
	return hb_expired(f, hb_key_version((const uint8_t *)key, klen), flt->now) ? 1 : 0;
}

static rocksdb_compactionfilter_t *
hb_filter_create(void *arg, rocksdb_compactionfiltercontext_t *ctx)
{
	hb_fam    *f = arg;
	hb_filter *flt;

	(void)ctx;
	if ((flt = calloc(1, sizeof(*flt))) == NULL) {
		return NULL; /* RocksDB then compacts without a filter */
	}
	atomic_fetch_add_explicit(&f->t->filters, 1, memory_order_relaxed);
	flt->f = f;
	flt->now = hb_now(f->t);
	return rocksdb_compactionfilter_create(
	    flt, hb_filter_destroy, hb_filter_filter, hb_filter_name);
}

static void
hb_filter_factory_destroy(void *arg)
{
	(void)arg; /* the family outlives the factory */
}

static const char *
hb_filter_factory_name(void *arg)
{
	(void)arg;
	return "hb.versions.factory";
}

rocksdb_compactionfilterfactory_t *
hb_filter_factory(hb_fam *f)
{
	if (f->o.counter || (f->o.max_versions == 0 && f->o.ttl_ms == 0)) {
		return NULL;
	}
	return rocksdb_compactionfilterfactory_create(
	    f, hb_filter_factory_destroy, hb_filter_create, hb_filter_factory_name);
}

/*
 * Counters: a cell value and every merge operand is an int64, 8 bytes
 * little-endian.  A value of another length (never written by hb) counts
 * as 0 rather than failing reads and compactions.
 */
static int64_t
hb_counter_decode(const char *p, size_t len)
{
	uint64_t v = 0;

	if (p == NULL || len != 8) {
		return 0;
	}
	for (int i = 7; i >= 0; i--) {
		v = (v << 8) | (uint8_t)p[i];
	}
	return (int64_t)v;
}

static char *
hb_counter_encode(int64_t sum, unsigned char *success, size_t *len)
{
	uint8_t *out = malloc(8);
	uint64_t v = (uint64_t)sum;

	if (out == NULL) {
		*success = 0;
		return NULL;
	}
	for (int i = 0; i < 8; i++) {
		out[i] = (uint8_t)(v >> (8 * i));
	}
	*success = 1;
	*len = 8;
	return (char *)out;
}

static int64_t
hb_counter_sum(int64_t sum, const char *const *ops, const size_t *lens, int n)
{
	uint64_t s = (uint64_t)sum; /* wraps like two's complement */

	for (int i = 0; i < n; i++) {
		s += (uint64_t)hb_counter_decode(ops[i], lens[i]);
	}
	return (int64_t)s;
}

static char *
hb_counter_full_merge(void *arg, const char *key, size_t klen, const char *old, size_t old_len,
    const char *const *ops, const size_t *lens, int n, unsigned char *success, size_t *new_len)
{
	(void)arg, (void)key, (void)klen;
	return hb_counter_encode(
	    hb_counter_sum(hb_counter_decode(old, old_len), ops, lens, n), success, new_len);
}

static char *
hb_counter_partial_merge(void *arg, const char *key, size_t klen, const char *const *ops,
    const size_t *lens, int n, unsigned char *success, size_t *new_len)
{
	(void)arg, (void)key, (void)klen;
	return hb_counter_encode(hb_counter_sum(0, ops, lens, n), success, new_len);
}

static void
hb_counter_delete_value(void *arg, const char *val, size_t len)
{
	(void)arg, (void)len;
	free((void *)val);
}

static void
hb_counter_destroy(void *arg)
{
	(void)arg;
}

static const char *
hb_counter_name(void *arg)
{
	(void)arg;
	return "hb.i64add";
}

rocksdb_mergeoperator_t *
hb_counter_merge(void)
{
	return rocksdb_mergeoperator_create(NULL, hb_counter_destroy, hb_counter_full_merge,
	    hb_counter_partial_merge, hb_counter_delete_value, hb_counter_name);
}
