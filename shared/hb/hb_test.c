/*
 * hb_test.c - the store against its contract: HBase ordering, a randomized
 * comparison with an in-memory model, TTL, max versions and compaction,
 * counters, paging, atomic batches under SIGKILL and error paths.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <pthread.h>
#include <rocksdb/c.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hb.h"

/* ---- helpers ----------------------------------------------------------- */

static char tdir[256];

static int
rm_entry(const char *p, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb, (void)type, (void)ftw;
	return remove(p);
}

static void
tdir_make(void)
{
	snprintf(tdir, sizeof(tdir), "/tmp/hb_test.XXXXXX");
	cr_assert_not_null(mkdtemp(tdir));
}

static void
tdir_remove(void)
{
	if (tdir[0]) {
		nftw(tdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	}
	tdir[0] = 0;
}

static uint64_t clock_now = 1700000000000ull;

static uint64_t
test_clock(void *arg)
{
	(void)arg;
	return clock_now;
}

/* raw_count counts the keys of a column family with the raw RocksDB API
 * (the table must be closed). */
static size_t
raw_count(const char *path, const char *fam)
{
	rocksdb_options_t *o = rocksdb_options_create();
	char              *err = NULL;
	size_t             n = 0, count = 0;
	char             **names = rocksdb_list_column_families(o, path, &n, &err);
	cr_assert_null(err, "list: %s", err);
	const rocksdb_options_t        **opts = calloc(n, sizeof(*opts));
	rocksdb_column_family_handle_t **h = calloc(n, sizeof(*h));
	int                              idx = -1;
	for (size_t i = 0; i < n; i++) {
		opts[i] = o;
		if (strcmp(names[i], fam) == 0) {
			idx = (int)i;
		}
	}
	cr_assert_geq(idx, 0, "family %s on disk", fam);
	rocksdb_t *db = rocksdb_open_column_families(
	    o, path, (int)n, (const char *const *)names, opts, h, &err);
	cr_assert_null(err, "open: %s", err);
	rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
	rocksdb_iterator_t    *it = rocksdb_create_iterator_cf(db, ro, h[idx]);
	for (rocksdb_iter_seek_to_first(it); rocksdb_iter_valid(it); rocksdb_iter_next(it)) {
		count++;
	}
	rocksdb_iter_destroy(it);
	rocksdb_readoptions_destroy(ro);
	for (size_t i = 0; i < n; i++) {
		rocksdb_column_family_handle_destroy(h[i]);
	}
	rocksdb_close(db);
	rocksdb_list_column_families_destroy(names, n);
	rocksdb_options_destroy(o);
	free(opts);
	free(h);
	return count;
}

static int
bytes_cmp(const void *a, size_t al, const void *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);
	return c ? c : (al > bl) - (al < bl);
}

/* ---- ordering ---------------------------------------------------------- */

Test(hb, hbase_order_and_versions, .init = tdir_make, .fini = tdir_remove)
{
	hb_family_opts f[] = { { .name = "c" } };
	hb_table      *t;
	static const struct {
		const char *s;
		size_t      n;
	} rows[] = { { "", 0 }, { "\0", 1 }, { "a", 1 }, { "a\0", 2 }, { "a\0\0", 3 },
		{ "a\0\x01", 3 }, { "a\x01", 2 }, { "ab", 2 }, { "b", 1 }, { "\xff", 1 } };
	const size_t nrows = sizeof(rows) / sizeof(rows[0]);

	cr_assert_eq(hb_open(&t, tdir, f, 1, NULL), WB_OK, "%s", hb_last_error());
	/* write in reverse, each row with quals "q" and "q\0" and 3 versions */
	for (size_t i = nrows; i-- > 0;) {
		for (uint64_t v = 1; v <= 3; v++) {
			cr_assert_eq(
			    hb_put(t, 0, rows[i].s, rows[i].n, "q\0", 2, v, "x", 1), WB_OK);
			cr_assert_eq(hb_put(t, 0, rows[i].s, rows[i].n, "q", 1, v, "y", 1), WB_OK);
		}
	}
	hb_scan *s;
	hb_cell  c;
	size_t   n = 0;
	cr_assert_eq(hb_scan_open(&s, t, 0, NULL), WB_OK);
	while (hb_scan_next(s, &c) == WB_OK) {
		size_t   r = n / 6, q = (n / 3) % 2;
		uint64_t v = 3 - n % 3;
		cr_assert_eq(c.row_len, rows[r].n, "cell %zu row", n);
		cr_assert(memcmp(c.row, rows[r].s, c.row_len) == 0, "cell %zu row bytes", n);
		cr_assert_eq(c.qual_len, q ? 2 : 1, "cell %zu: q before q\\0", n);
		cr_assert_eq(c.version, v, "cell %zu: newest first", n);
		n++;
	}
	hb_scan_close(s);
	cr_assert_eq(n, nrows * 6);

	hb_cell *g;
	cr_assert_eq(hb_get(t, 0, "a\0", 2, "q", 1, &g), WB_OK);
	cr_assert_eq(g->version, 3);
	cr_assert_eq(g->value_len, 1);
	cr_assert_eq(((const char *)g->value)[0], 'y');
	hb_cell_free(g);
	cr_assert_eq(hb_get(t, 0, "a\0", 2, "r", 1, &g), WB_ENOTFOUND);
	cr_assert_null(g);
	cr_assert_eq(hb_get(t, 0, "zz", 2, "q", 1, &g), WB_ENOTFOUND);

	/* row_prefix "a\0" finds a\0, a\0\0, a\0\x01 only */
	hb_scan_opts o = { .row_prefix = "a\0", .row_prefix_len = 2, .max_versions = 1 };
	cr_assert_eq(hb_scan_open(&s, t, 0, &o), WB_OK);
	n = 0;
	while (hb_scan_next(s, &c) == WB_OK) {
		cr_assert(c.row_len >= 2 && memcmp(c.row, "a\0", 2) == 0);
		cr_assert_eq(c.version, 3);
		n++;
	}
	hb_scan_close(s);
	cr_assert_eq(n, 3 * 2);
	hb_close(t);
}

/* ---- randomized comparison with a model -------------------------------- */

#define NR 20
#define NQ 5
#define NV 12

enum { F_PLAIN, F_CAPPED, F_INBOX, F_COUNT, NFAM };

typedef struct part {
	uint8_t b[12];
	size_t  n;
} part;

typedef struct model {
	part     rows[NFAM][NR]; /* sorted */
	part     quals[NFAM][NQ];
	int      nq[NFAM];
	bool     present[NFAM][NR][NQ][NV + 1];
	uint32_t val[NFAM][NR][NQ][NV + 1];
	int64_t  cnt[NR][NQ];
} model;

static model M;

static int
part_cmp(const void *a, const void *b)
{
	const part *x = a, *y = b;
	return bytes_cmp(x->b, x->n, y->b, y->n);
}

static void
model_init(void)
{
	static const char  *tricky[] = { "", "\0", "a", "a\0", "a\0\0", "a\x01", "ab", "abc", "b",
		 "\xff", "a\0\xff" };
	static const size_t tl[] = { 0, 1, 1, 2, 3, 2, 2, 3, 1, 1, 3 };
	memset(&M, 0, sizeof(M));
	for (int f = 0; f < NFAM; f++) {
		for (int r = 0; r < NR; r++) {
			part *p = &M.rows[f][r];
		again:
			if (f == F_INBOX) {
				p->n = 8;
				for (int i = 0; i < 8; i++) {
					p->b[i] = (uint8_t)(rand() % 3 == 0 ? 0 : rand() % 4);
				}
			} else if (r < 11) {
				p->n = tl[r];
				memcpy(p->b, tricky[r], tl[r]);
			} else {
				p->n = 1 + (size_t)rand() % 5;
				for (size_t i = 0; i < p->n; i++) {
					p->b[i] = (uint8_t)("\0ab\xff"[rand() % 4]);
				}
			}
			for (int j = 0; j < r; j++) {
				if (part_cmp(&M.rows[f][j], p) == 0) {
					goto again;
				}
			}
		}
		qsort(M.rows[f], NR, sizeof(part), part_cmp);
		M.nq[f] = f == F_INBOX ? 1 : NQ;
		for (int q = 0; q < M.nq[f] && f != F_INBOX; q++) {
			part *p = &M.quals[f][q];
		againq:
			p->n = (size_t)rand() % 4;
			for (size_t i = 0; i < p->n; i++) {
				p->b[i] = (uint8_t)("\0qz"[rand() % 3]);
			}
			for (int j = 0; j < q; j++) {
				if (part_cmp(&M.quals[f][j], p) == 0) {
					goto againq;
				}
			}
		}
		if (f != F_INBOX) {
			qsort(M.quals[f], (size_t)M.nq[f], sizeof(part), part_cmp);
		}
	}
}

static const hb_family_opts rfams[NFAM] = {
	{ .name = "plain" },
	{ .name = "capped", .max_versions = 3, .compression = HB_COMPRESS_LZ4 },
	{ .name = "inbox",
	    .row_len = 8,
	    .qual_len = HB_NONE,
	    .compression = HB_COMPRESS_ZSTD,
	    .bloom_bits = 10 },
	{ .name = "count", .counter = true, .bloom_bits = 10 },
};

/* model_newest returns the newest present version or 0. */
static int
model_newest(int f, int r, int q)
{
	for (int v = NV; v >= 1; v--) {
		if (M.present[f][r][q][v]) {
			return v;
		}
	}
	return 0;
}

typedef struct mcell {
	int r, q, v;
} mcell;

/* model_scan lists up to cap expected cells of a scan. */
static size_t
model_scan(int f, const hb_scan_opts *o, mcell *out, size_t cap)
{
	size_t n = 0;
	for (int r = 0; r < NR && n < cap; r++) {
		part *row = &M.rows[f][r];
		int   rs =
                    o->start_row ? bytes_cmp(row->b, row->n, o->start_row, o->start_row_len) : 1;
		if (rs < 0) {
			continue;
		}
		if (o->stop_row && bytes_cmp(row->b, row->n, o->stop_row, o->stop_row_len) >= 0) {
			continue;
		}
		if (o->row_prefix_len && (row->n < o->row_prefix_len ||
		                             memcmp(row->b, o->row_prefix, o->row_prefix_len))) {
			continue;
		}
		for (int q = 0; q < M.nq[f] && n < cap; q++) {
			part *qu = &M.quals[f][q];
			if (rs == 0 && o->start_qual &&
			    bytes_cmp(qu->b, qu->n, o->start_qual, o->start_qual_len) < 0) {
				continue;
			}
			if (o->qual_prefix_len &&
			    (qu->n < o->qual_prefix_len ||
			        memcmp(qu->b, o->qual_prefix, o->qual_prefix_len))) {
				continue;
			}
			uint32_t fidx = 0, ridx = 0;
			for (int v = NV; v >= 1 && n < cap; v--) {
				if (!M.present[f][r][q][v]) {
					continue;
				}
				uint32_t i = fidx++;
				if (rfams[f].max_versions && i >= rfams[f].max_versions) {
					break;
				}
				if ((uint64_t)v < o->min_version) {
					break;
				}
				if (o->max_version && (uint64_t)v > o->max_version) {
					continue;
				}
				if (o->max_versions && ridx >= o->max_versions) {
					break;
				}
				ridx++;
				out[n++] = (mcell) { r, q, v };
			}
		}
	}
	return n;
}

static hb_table *dbg_t; /* the random test's table, for dump_column */

/* dump_column prints a column as the model and the store see it. */
static void
dump_column(int f, int r, int q)
{
	part *row = &M.rows[f][r], *qu = &M.quals[f][q];
	fprintf(stderr, "model r%d q%d:", r, q);
	for (int v = NV; v >= 1; v--) {
		if (M.present[f][r][q][v]) {
			fprintf(stderr, " %d", v);
		}
	}
	fprintf(stderr, "\nstore:");
	hb_scan_opts o = { .start_row = row->b,
		.start_row_len = row->n,
		.start_qual = qu->b,
		.start_qual_len = qu->n,
		.limit = 20 };
	hb_scan     *s;
	hb_cell      c;
	if (hb_scan_open(&s, dbg_t, f, &o) == WB_OK) {
		while (hb_scan_next(s, &c) == WB_OK &&
		       bytes_cmp(c.row, c.row_len, row->b, row->n) == 0 &&
		       bytes_cmp(c.qual, c.qual_len, qu->b, qu->n) == 0) {
			fprintf(stderr, " %llu", (unsigned long long)c.version);
		}
		hb_scan_close(s);
	}
	fprintf(stderr, "\n");
}

static void
check_cell(int f, const hb_cell *c, const mcell *m, int op)
{
	part *row = &M.rows[f][m->r], *qu = &M.quals[f][m->q];
	if (c->version != (uint64_t)m->v || bytes_cmp(c->qual, c->qual_len, qu->b, qu->n) ||
	    bytes_cmp(c->row, c->row_len, row->b, row->n)) {
		dump_column(f, m->r, m->q);
	}
	cr_assert(bytes_cmp(c->row, c->row_len, row->b, row->n) == 0,
	    "op %d fam %d: row differs (want r%d q%d v%d, got v%llu)", op, f, m->r, m->q, m->v,
	    (unsigned long long)c->version);
	cr_assert(bytes_cmp(c->qual, c->qual_len, qu->b, qu->n) == 0,
	    "op %d fam %d: qual differs (want q%d)", op, f, m->q);
	cr_assert_eq(c->version, (uint64_t)m->v, "op %d fam %d: version", op, f);
	cr_assert_eq(c->value_len, 4);
	uint32_t v;
	memcpy(&v, c->value, 4);
	cr_assert_eq(v, M.val[f][m->r][m->q][m->v], "op %d: value", op);
}

static void
random_scan(hb_table *t, int op)
{
	int          f = rand() % 3;
	hb_scan_opts o = { 0 };
	part         sr, stop, pre, qpre;
	int          r;

	if (rand() % 3 == 0) {
		sr = M.rows[f][rand() % NR];
		o.start_row = sr.b, o.start_row_len = sr.n;
		if (f != F_INBOX && rand() % 2) {
			part *q = &M.quals[f][rand() % NQ];
			o.start_qual = q->b, o.start_qual_len = q->n;
		}
	}
	if (rand() % 5 == 0) {
		stop = M.rows[f][rand() % NR];
		o.stop_row = stop.b, o.stop_row_len = stop.n;
	}
	if (rand() % 5 == 0) {
		pre = M.rows[f][rand() % NR];
		pre.n = pre.n ? (size_t)rand() % (pre.n + 1) : 0;
		o.row_prefix = pre.b, o.row_prefix_len = pre.n;
	}
	if (f != F_INBOX && rand() % 6 == 0) {
		qpre = M.quals[f][rand() % NQ];
		qpre.n = qpre.n ? 1 + (size_t)rand() % qpre.n : 0;
		o.qual_prefix = qpre.b, o.qual_prefix_len = qpre.n;
	}
	if (rand() % 4 == 0) {
		o.max_versions = 1 + (uint32_t)(rand() % 4);
	}
	if (rand() % 5 == 0) {
		o.min_version = (uint64_t)(rand() % NV);
	}
	if (rand() % 5 == 0) {
		o.max_version = 1 + (uint64_t)(rand() % NV);
	}
	o.limit = rand() % 40 == 0 ? 0 : 1 + (size_t)(rand() % 25);

	static mcell want[NR * NQ * NV];
	size_t       pages = o.limit ? 4 : 1;
	size_t       cap = o.limit ? pages * o.limit + 1 : NR * NQ * NV;
	size_t       nwant = model_scan(f, &o, want, cap), got = 0;
	uint8_t      resume[4200];
	size_t       rlen = 0;

	for (size_t p = 0; p < pages; p++) {
		hb_scan *s;
		hb_cell  c;
		o.resume = rlen ? resume : NULL;
		o.resume_len = rlen;
		cr_assert_eq(hb_scan_open(&s, t, f, &o), WB_OK, "op %d", op);
		while ((r = hb_scan_next(s, &c)) == WB_OK) {
			cr_assert_lt(got, nwant, "op %d fam %d: extra cell v%llu", op, f,
			    (unsigned long long)c.version);
			check_cell(f, &c, &want[got], op);
			got++;
		}
		cr_assert_eq(r, WB_EEND);
		const void *k;
		cr_assert_eq(hb_scan_resume(s, &k, &rlen), WB_OK);
		if (rlen) {
			memcpy(resume, k, rlen);
		}
		hb_scan_close(s);
		if (rlen == 0) {
			break;
		}
		cr_assert_lt(got, nwant, "op %d fam %d: resume key but model done", op, f);
	}
	if (rlen == 0) {
		cr_assert_eq(
		    got, nwant, "op %d fam %d: missing cells (%zu of %zu)", op, f, got, nwant);
	} else {
		cr_assert_eq(got, pages * o.limit);
	}
}

/* random_write adds one write to b and applies it to the model. */
static void
random_write(hb_table *t, hb_batch *b)
{
	int   f = rand() % 4, r = rand() % NR, q = rand() % M.nq[f == F_COUNT ? 0 : f];
	int   v = 1 + rand() % NV, kind = rand() % 10;
	part *row = &M.rows[f][r], *qu = &M.quals[f][q];

	if (f == F_COUNT) {
		if (kind < 8) {
			int64_t d = (int64_t)(rand() % 2001) - 1000;
			cr_assert_eq(hb_batch_add(b, t, f, row->b, row->n, qu->b, qu->n, d), WB_OK);
			M.cnt[r][q] += d;
		} else {
			cr_assert_eq(hb_batch_delete_column(
			                 b, t, f, row->b, row->n, qu->b, qu->n, HB_LATEST),
			    WB_OK);
			M.cnt[r][q] = 0;
		}
		return;
	}
	if (kind < 6) {
		uint32_t x = (uint32_t)rand();
		cr_assert_eq(
		    hb_batch_put(b, t, f, row->b, row->n, qu->b, qu->n, (uint64_t)v, &x, 4), WB_OK);
		M.present[f][r][q][v] = true;
		M.val[f][r][q][v] = x;
	} else if (kind < 8 && f != F_CAPPED) {
		cr_assert_eq(
		    hb_batch_delete_version(b, t, f, row->b, row->n, qu->b, qu->n, (uint64_t)v),
		    WB_OK);
		M.present[f][r][q][v] = false;
	} else if (kind < 9) {
		uint64_t upto = rand() % 4 == 0 ? HB_LATEST : (uint64_t)v;
		cr_assert_eq(
		    hb_batch_delete_column(b, t, f, row->b, row->n, qu->b, qu->n, upto), WB_OK);
		for (int i = 1; i <= NV; i++) {
			if ((uint64_t)i <= upto) {
				M.present[f][r][q][i] = false;
			}
		}
	} else {
		cr_assert_eq(hb_batch_delete_row(b, t, f, row->b, row->n), WB_OK);
		memset(M.present[f][r], 0, sizeof(M.present[f][r]));
	}
}

Test(hb, random_against_model, .init = tdir_make, .fini = tdir_remove, .timeout = 600)
{
	hb_table *t;
	hb_batch *b;
	const int nops = 100000;

	srand(20240601);
	model_init();
	cr_assert_eq(hb_open(&t, tdir, rfams, NFAM, NULL), WB_OK, "%s", hb_last_error());
	dbg_t = t;
	cr_assert_eq(hb_batch_new(&b), WB_OK);
	for (int op = 0; op < nops; op++) {
		int k = rand() % 100;
		if (op > 0 && op % 25000 == 0) {
			hb_close(t);
			cr_assert_eq(hb_open(&t, tdir, rfams, NFAM, NULL), WB_OK);
			dbg_t = t;
		}
		if (op > 0 && op % 9000 == 0) {
			cr_assert_eq(hb_compact(t, rand() % NFAM), WB_OK);
		}
		if (k < 25) { /* one put */
			int      f = rand() % 3, r = rand() % NR, q = rand() % M.nq[f];
			int      v = 1 + rand() % NV;
			uint32_t x = (uint32_t)rand();
			part    *row = &M.rows[f][r], *qu = &M.quals[f][q];
			cr_assert_eq(
			    hb_put(t, f, row->b, row->n, qu->b, qu->n, (uint64_t)v, &x, 4), WB_OK);
			M.present[f][r][q][v] = true;
			M.val[f][r][q][v] = x;
		} else if (k < 45) { /* get latest */
			int      f = rand() % 3, r = rand() % NR, q = rand() % M.nq[f];
			part    *row = &M.rows[f][r], *qu = &M.quals[f][q];
			hb_cell *c;
			int      rv = hb_get(t, f, row->b, row->n, qu->b, qu->n, &c);
			int      v = model_newest(f, r, q);
			if (v == 0) {
				cr_assert_eq(rv, WB_ENOTFOUND, "op %d fam %d: get found v%llu", op,
				    f, rv == WB_OK ? (unsigned long long)c->version : 0ull);
			} else {
				cr_assert_eq(rv, WB_OK, "op %d fam %d: get", op, f);
				mcell m = { r, q, v };
				check_cell(f, c, &m, op);
				hb_cell_free(c);
			}
		} else if (k < 52) { /* counter get */
			int     r = rand() % NR, q = rand() % NQ;
			int64_t x;
			part   *row = &M.rows[F_COUNT][r], *qu = &M.quals[F_COUNT][q];
			cr_assert_eq(
			    hb_counter_get(t, F_COUNT, row->b, row->n, qu->b, qu->n, &x), WB_OK);
			cr_assert_eq(x, M.cnt[r][q], "op %d: counter", op);
		} else if (k < 65) { /* scan */
			random_scan(t, op);
		} else { /* a batch of 1..8 writes */
			int n = 1 + rand() % 8;
			hb_batch_clear(b);
			for (int i = 0; i < n; i++) {
				random_write(t, b);
			}
			cr_assert_eq(hb_batch_count(b), (size_t)n);
			cr_assert_eq(hb_write(t, b), WB_OK);
		}
	}
	/* a final full check of every family after compaction */
	for (int f = 0; f < NFAM; f++) {
		cr_assert_eq(hb_compact(t, f), WB_OK);
	}
	for (int i = 0; i < 200; i++) {
		random_scan(t, nops + i);
	}
	hb_batch_free(b);
	hb_close(t);
}

/* ---- TTL ---------------------------------------------------------------- */

Test(hb, ttl_with_injected_clock, .init = tdir_make, .fini = tdir_remove)
{
	hb_family_opts f[] = { { .name = "sess", .ttl_ms = 1000 }, { .name = "keep" } };
	hb_table_opts  to = { .now_ms = test_clock };
	hb_table      *t;
	hb_cell       *c;

	clock_now = 1700000000000ull;
	cr_assert_eq(hb_open(&t, tdir, f, 2, &to), WB_OK);
	for (int i = 0; i < 100; i++) {
		char row[16];
		int  n = snprintf(row, sizeof(row), "tok%03d", i);
		/* half written at t0, half at t0+600 */
		uint64_t v = clock_now + (i < 50 ? 0 : 600);
		cr_assert_eq(hb_put(t, 0, row, (size_t)n, "", 0, v, "u", 1), WB_OK);
		cr_assert_eq(hb_put(t, 1, row, (size_t)n, "", 0, v, "u", 1), WB_OK);
	}
	cr_assert_eq(hb_put(t, 0, "now", 3, "", 0, HB_LATEST, "n", 1), WB_OK);
	cr_assert_eq(hb_get(t, 0, "now", 3, "", 0, &c), WB_OK);
	cr_assert_eq(c->version, clock_now, "HB_LATEST is the injected clock");
	hb_cell_free(c);

	clock_now += 999;
	cr_assert_eq(hb_get(t, 0, "tok000", 6, "", 0, &c), WB_OK);
	hb_cell_free(c);
	clock_now += 1; /* t0 + 1000: the first half expires */
	cr_assert_eq(hb_get(t, 0, "tok000", 6, "", 0, &c), WB_ENOTFOUND);
	cr_assert_eq(hb_get(t, 0, "tok050", 6, "", 0, &c), WB_OK);
	hb_cell_free(c);
	cr_assert_eq(hb_get(t, 1, "tok000", 6, "", 0, &c), WB_OK, "no TTL in keep");
	hb_cell_free(c);

	hb_scan *s;
	hb_cell  sc;
	size_t   n = 0;
	cr_assert_eq(hb_scan_open(&s, t, 0, NULL), WB_OK);
	while (hb_scan_next(s, &sc) == WB_OK) {
		n++;
	}
	hb_scan_close(s);
	cr_assert_eq(n, 50, "scan skips expired cells");

	cr_assert_eq(hb_compact(t, 0), WB_OK);
	cr_assert_eq(hb_compact(t, 1), WB_OK);
	hb_close(t);
	cr_assert_eq(raw_count(tdir, "sess"), 50, "compaction dropped the expired half");
	cr_assert_eq(raw_count(tdir, "keep"), 100);

	clock_now += 10000;
	cr_assert_eq(hb_open(&t, tdir, f, 2, &to), WB_OK);
	cr_assert_eq(hb_get(t, 0, "tok099", 6, "", 0, &c), WB_ENOTFOUND);
	cr_assert_eq(hb_compact(t, 0), WB_OK);
	hb_close(t);
	cr_assert_eq(raw_count(tdir, "sess"), 0);
}

/* ---- max versions and compaction -------------------------------------- */

static uint64_t
ms_of_postid(uint64_t v)
{
	return v >> 22; /* like a post id: ms in the high bits */
}

Test(hb, max_versions_compaction, .init = tdir_make, .fini = tdir_remove)
{
	hb_family_opts f[] = { { .name = "tl",
	    .row_len = 8,
	    .qual_len = HB_NONE,
	    .max_versions = 5,
	    .compression = HB_COMPRESS_ZSTD,
	    .bloom_bits = 10,
	    .version_ms = ms_of_postid,
	    .ttl_ms = 86400000ull * 365 } };
	hb_table_opts  to = { .now_ms = test_clock };
	hb_table      *t;
	uint8_t        row[8];

	clock_now = 1700000000000ull;
	cr_assert_eq(hb_open(&t, tdir, f, 1, &to), WB_OK);
	for (uint64_t r = 0; r < 50; r++) {
		hb_u64_be(row, r);
		for (uint64_t i = 1; i <= 20; i++) {
			uint64_t v = (clock_now - 1000 + i) << 22, a = r * 100 + i;
			cr_assert_eq(hb_put(t, 0, row, 8, NULL, 0, v, &a, 8), WB_OK);
		}
		if (r % 10 == 0) {
			cr_assert_eq(hb_flush(t, 0), WB_OK);
		}
	}
	/* reads see 5 versions before any compaction */
	hb_u64_be(row, 7);
	hb_scan_opts o = { .row_prefix = row, .row_prefix_len = 8 };
	hb_scan     *s;
	hb_cell      c;
	size_t       n = 0;
	cr_assert_eq(hb_scan_open(&s, t, 0, &o), WB_OK);
	while (hb_scan_next(s, &c) == WB_OK) {
		cr_assert_eq(c.version, (clock_now - 1000 + 20 - n) << 22);
		n++;
	}
	hb_scan_close(s);
	cr_assert_eq(n, 5);

	/* row 3: delete it, then write older versions: they must survive */
	hb_batch *b;
	hb_u64_be(row, 3);
	cr_assert_eq(hb_batch_new(&b), WB_OK);
	cr_assert_eq(hb_batch_delete_row(b, t, 0, row, 8), WB_OK);
	cr_assert_eq(hb_write(t, b), WB_OK);
	for (uint64_t i = 1; i <= 3; i++) {
		uint64_t v = (clock_now - 5000 + i) << 22, a = i;
		cr_assert_eq(hb_put(t, 0, row, 8, NULL, 0, v, &a, 8), WB_OK);
	}
	hb_batch_free(b);

	uint64_t bytes0, keys0, bytes1, keys1;
	cr_assert_eq(hb_flush(t, 0), WB_OK);
	cr_assert_eq(hb_family_stats(t, 0, &bytes0, &keys0), WB_OK);
	cr_assert_eq(hb_compact(t, 0), WB_OK);
	cr_assert_eq(hb_family_stats(t, 0, &bytes1, &keys1), WB_OK);
	cr_assert_lt(bytes1, bytes0, "compaction shrank the family (%llu -> %llu)",
	    (unsigned long long)bytes0, (unsigned long long)bytes1);
	cr_assert_leq(keys1, 49 * 5 + 3 + 5, "estimated keys %llu", (unsigned long long)keys1);

	n = 0;
	o.row_prefix = row;
	cr_assert_eq(hb_scan_open(&s, t, 0, &o), WB_OK);
	while (hb_scan_next(s, &c) == WB_OK) {
		n++;
	}
	hb_scan_close(s);
	cr_assert_eq(n, 3, "versions written after a row delete survive compaction");
	hb_close(t);
	cr_assert_eq(raw_count(tdir, "tl"), 49 * 5 + 3);
}

/* scan_versions reads row's versions with o into v (at most cap); returns the count. */
static size_t
scan_versions(hb_table *t, hb_scan_opts *o, uint64_t *v, size_t cap)
{
	hb_scan *s;
	hb_cell  c;
	size_t   n = 0;

	cr_assert_eq(hb_scan_open(&s, t, 0, o), WB_OK);
	while (n < cap && hb_scan_next(s, &c) == WB_OK) {
		v[n++] = c.version;
	}
	hb_scan_close(s);
	return n;
}

Test(hb, all_versions_beyond_max, .init = tdir_make, .fini = tdir_remove)
{
	hb_family_opts f[] = {
		{ .name = "tl", .row_len = 8, .qual_len = HB_NONE, .max_versions = 3 }
	};
	hb_table *t;
	hb_batch *b;
	uint8_t   row[8];
	uint64_t  v[16];
	size_t    n;

	cr_assert_eq(hb_open(&t, tdir, f, 1, NULL), WB_OK);
	hb_u64_be(row, 9);
	for (uint64_t i = 1; i <= 6; i++) {
		cr_assert_eq(hb_put(t, 0, row, 8, NULL, 0, i, &i, 8), WB_OK);
	}
	hb_scan_opts o = { .row_prefix = row, .row_prefix_len = 8 };
	n = scan_versions(t, &o, v, 16);
	cr_assert(n == 3 && v[0] == 6 && v[2] == 4, "reads see max versions: %zu", n);
	o.all_versions = true;
	n = scan_versions(t, &o, v, 16);
	cr_assert_eq(n, 6, "all_versions sees the 6 not yet compacted away");
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(v[i], 6 - i);
	}
	o.max_versions = 2; /* the scan's own max still applies */
	cr_assert_eq(scan_versions(t, &o, v, 16), 2);
	o.max_versions = 0;
	o.limit = 4; /* and paging resumes past max versions */
	hb_scan *s;
	hb_cell  c;
	cr_assert_eq(hb_scan_open(&s, t, 0, &o), WB_OK);
	while (hb_scan_next(s, &c) == WB_OK) {
		;
	}
	const void *k;
	size_t      klen;
	uint8_t     resume[64];
	cr_assert_eq(hb_scan_resume(s, &k, &klen), WB_OK);
	cr_assert(klen > 0 && klen <= sizeof(resume));
	memcpy(resume, k, klen);
	hb_scan_close(s);
	o.resume = resume;
	o.resume_len = klen;
	n = scan_versions(t, &o, v, 16);
	cr_assert(n == 2 && v[0] == 2 && v[1] == 1, "second page: %zu", n);

	/* deleting the newest brings the hidden ones back into reads... */
	cr_assert_eq(hb_batch_new(&b), WB_OK);
	cr_assert_eq(hb_batch_delete_version(b, t, 0, row, 8, NULL, 0, 6), WB_OK);
	cr_assert_eq(hb_batch_delete_version(b, t, 0, row, 8, NULL, 0, 5), WB_OK);
	cr_assert_eq(hb_write(t, b), WB_OK);
	o = (hb_scan_opts) { .row_prefix = row, .row_prefix_len = 8 };
	n = scan_versions(t, &o, v, 16);
	cr_assert(n == 3 && v[0] == 4 && v[2] == 2, "hidden versions are back: %zu", n);
	/* ...so a delete of "every cell" must find them with all_versions */
	o.all_versions = true;
	n = scan_versions(t, &o, v, 16);
	cr_assert_eq(n, 4);
	hb_batch_clear(b);
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(hb_batch_delete_version(b, t, 0, row, 8, NULL, 0, v[i]), WB_OK);
	}
	cr_assert_eq(hb_write(t, b), WB_OK);
	hb_batch_free(b);
	o.all_versions = false;
	cr_assert_eq(scan_versions(t, &o, v, 16), 0);
	hb_close(t);
}

/* ---- fan-out write path ------------------------------------------------ */

#define FAN_ROWS  8000
#define FAN_POSTS 6

typedef struct fan_half {
	hb_table *t;
	uint64_t  first, n, version;
	int       rc;
} fan_half;

/* fan_half_write puts version into rows [first, first + n) in one batch, ascending. */
static void *
fan_half_write(void *arg)
{
	fan_half *h = arg;
	hb_batch *b;
	uint8_t   row[8], val[8];

	h->rc = hb_batch_new(&b);
	hb_u64_be(val, h->version);
	for (uint64_t r = h->first; h->rc == WB_OK && r < h->first + h->n; r++) {
		hb_u64_be(row, r);
		h->rc = hb_batch_put(b, h->t, 0, row, 8, NULL, 0, h->version, val, 8);
	}
	if (h->rc == WB_OK) {
		h->rc = hb_write(h->t, b);
	}
	hb_batch_free(b);
	return NULL;
}

/* fan_check reads every row back: FAN_POSTS versions, newest first, plus row 5's stray one. */
static void
fan_check(hb_table *t)
{
	hb_scan *s;
	hb_cell  c;
	uint64_t want_row = 0, k = 0, cells = 0;

	cr_assert_eq(hb_scan_open(&s, t, 0, NULL), WB_OK);
	while (hb_scan_next(s, &c) == WB_OK) {
		uint64_t r = hb_be_u64(c.row);
		uint64_t nv = FAN_POSTS + (r == 5 ? 1 : 0);
		cr_assert_eq(r, want_row, "row %llu, expected %llu", (unsigned long long)r,
		    (unsigned long long)want_row);
		uint64_t v = r == 5 && k == nv - 1 ? 1 : (uint64_t)(FAN_POSTS + 10 - k);
		cr_assert_eq(c.version, v, "row %llu cell %llu: version %llu",
		    (unsigned long long)r, (unsigned long long)k, (unsigned long long)c.version);
		cr_assert_eq(hb_be_u64(c.value), v);
		cells++;
		if (++k == nv) {
			k = 0;
			want_row++;
		}
	}
	hb_scan_close(s);
	cr_assert_eq(cells, (uint64_t)FAN_ROWS * FAN_POSTS + 1);
}

Test(hb, ascending_puts_fanout, .init = tdir_make, .fini = tdir_remove, .timeout = 120)
{
	/* the inbox's write path: memtable insert hints, a tiny memtable so
	 * writes switch memtables and flush mid-way, two writer threads */
	hb_family_opts f[] = { { .name = "tl",
	    .row_len = 8,
	    .qual_len = HB_NONE,
	    .max_versions = 100,
	    .compression = HB_COMPRESS_ZSTD,
	    .ascending_puts = true,
	    .write_buffer_mb = 1,
	    .write_buffers = 2 } };
	hb_table      *t;
	uint8_t        row[8], val[8];

	cr_assert_eq(hb_open(&t, tdir, f, 1, NULL), WB_OK);
	/* posts 11..16 in ascending version order, each to every row; one
	 * stray older cell out of order in between */
	for (uint64_t p = 0; p < FAN_POSTS; p++) {
		uint64_t  v = 11 + p, half = FAN_ROWS / 2 - (uint64_t)p * 7;
		fan_half  h1 = { t, 0, half, v, 0 }, h2 = { t, half, FAN_ROWS - half, v, 0 };
		pthread_t th;
		cr_assert_eq(pthread_create(&th, NULL, fan_half_write, &h1), 0);
		fan_half_write(&h2);
		pthread_join(th, NULL);
		cr_assert_eq(h1.rc, WB_OK);
		cr_assert_eq(h2.rc, WB_OK);
		if (p == 2) {
			hb_u64_be(row, 5);
			hb_u64_be(val, 1);
			cr_assert_eq(hb_put(t, 0, row, 8, NULL, 0, 1, val, 8), WB_OK);
		}
	}
	fan_check(t);
	hb_close(t);
	cr_assert_eq(hb_open(&t, tdir, f, 1, NULL), WB_OK);
	fan_check(t);
	hb_close(t);
}

/* ---- counters ---------------------------------------------------------- */

Test(hb, counters, .init = tdir_make, .fini = tdir_remove)
{
	hb_family_opts f[] = { { .name = "n", .row_len = 8, .counter = true } };
	hb_table      *t;
	hb_batch      *b;
	uint8_t        row[8];
	int64_t        x;

	hb_u64_be(row, 42);
	cr_assert_eq(hb_open(&t, tdir, f, 1, NULL), WB_OK);
	cr_assert_eq(hb_counter_get(t, 0, row, 8, "fans", 4, &x), WB_OK);
	cr_assert_eq(x, 0);
	cr_assert_eq(hb_batch_new(&b), WB_OK);
	for (int i = 0; i < 1000; i++) {
		cr_assert_eq(hb_batch_add(b, t, 0, row, 8, "fans", 4, i % 3 == 0 ? -1 : 2), WB_OK);
		if (i % 100 == 99) {
			cr_assert_eq(hb_write(t, b), WB_OK);
			hb_batch_clear(b);
		}
	}
	cr_assert_eq(hb_counter_get(t, 0, row, 8, "fans", 4, &x), WB_OK);
	cr_assert_eq(x, 334 * -1 + 666 * 2);
	cr_assert_eq(hb_compact(t, 0), WB_OK);
	hb_close(t);
	cr_assert_eq(hb_open(&t, tdir, f, 1, NULL), WB_OK);
	cr_assert_eq(hb_counter_get(t, 0, row, 8, "fans", 4, &x), WB_OK);
	cr_assert_eq(x, 998);
	cr_assert_eq(hb_put(t, 0, row, 8, "fans", 4, 1, "x", 1), WB_EINVAL, "no puts to counters");
	cr_assert_eq(hb_batch_add(b, t, 0, row, 7, "fans", 4, 1), WB_EINVAL);
	hb_batch_free(b);
	hb_close(t);
}

/* ---- checkpoints and clearing ------------------------------------------ */

/* count_cells counts the live cells of family fam. */
static size_t
count_cells(hb_table *t, int fam)
{
	hb_scan *s;
	hb_cell  c;
	size_t   n = 0;

	cr_assert_eq(hb_scan_open(&s, t, fam, NULL), WB_OK);
	while (hb_scan_next(s, &c) == WB_OK) {
		n++;
	}
	hb_scan_close(s);
	return n;
}

Test(hb, checkpoint_and_clear, .init = tdir_make, .fini = tdir_remove)
{
	hb_family_opts f[] = {
		{ .name = "a", .row_len = 8, .qual_len = HB_NONE, .ascending_puts = true },
		{ .name = "b", .row_len = HB_VARLEN }
	};
	hb_table *t, *c;
	uint8_t   row[8];
	char      path[512], copy[512];

	snprintf(path, sizeof(path), "%s/db", tdir);
	snprintf(copy, sizeof(copy), "%s/copy", tdir);
	cr_assert_eq(hb_open(&t, path, f, 2, NULL), WB_OK);
	for (uint64_t i = 1; i <= 500; i++) {
		hb_u64_be(row, i);
		cr_assert_eq(hb_put(t, 0, row, 8, NULL, 0, i, "v", 1), WB_OK);
		cr_assert_eq(hb_put(t, 1, "r", 1, row, 8, 1, "w", 1), WB_OK);
	}
	cr_assert_eq(hb_checkpoint(t, copy), WB_OK, "%s", hb_last_error());
	cr_assert_neq(hb_checkpoint(t, copy), WB_OK, "a checkpoint never overwrites");
	cr_assert_eq(hb_checkpoint(NULL, copy), WB_EINVAL);
	cr_assert_eq(hb_checkpoint(t, ""), WB_EINVAL);
	/* writes after the checkpoint stay out of the copy */
	hb_u64_be(row, 501);
	cr_assert_eq(hb_put(t, 0, row, 8, NULL, 0, 501, "v", 1), WB_OK);
	cr_assert_eq(hb_clear(t, 0), WB_OK);
	cr_assert_eq(hb_clear(t, 7), WB_EINVAL);
	cr_assert_eq(count_cells(t, 0), 0, "cleared");
	cr_assert_eq(count_cells(t, 1), 500, "the other family untouched");
	cr_assert_eq(hb_put(t, 0, row, 8, NULL, 0, 502, "v", 1), WB_OK);
	cr_assert_eq(count_cells(t, 0), 1, "writes after a clear show");
	cr_assert_eq(hb_open(&c, copy, f, 2, NULL), WB_OK, "%s", hb_last_error());
	cr_assert_eq(count_cells(c, 0), 500);
	cr_assert_eq(count_cells(c, 1), 500);
	hb_close(c);
	hb_close(t);
	cr_assert_eq(hb_open(&t, path, f, 2, NULL), WB_OK);
	cr_assert_eq(count_cells(t, 0), 1, "the clear survives a reopen");
	hb_close(t);
}

/* first_row returns the first row (8 bytes, big-endian) of family fam, 0 if it is empty. */
static uint64_t
first_row(hb_table *t, int fam)
{
	hb_scan *s;
	hb_cell  c;
	uint64_t r = 0;

	cr_assert_eq(hb_scan_open(&s, t, fam, NULL), WB_OK);
	if (hb_scan_next(s, &c) == WB_OK) {
		r = hb_be_u64(c.row);
	}
	hb_scan_close(s);
	return r;
}

Test(hb, delete_range, .init = tdir_make, .fini = tdir_remove)
{
	hb_family_opts f[] = {
		{ .name = "log",
		    .row_len = 8,
		    .qual_len = HB_NONE,
		    .compression = HB_COMPRESS_LZ4 },
		{ .name = "capped", .row_len = 8, .qual_len = HB_NONE, .max_versions = 2 },
		{ .name = "var", .row_len = HB_VARLEN },
	};
	hb_table *t;
	uint8_t   row[8], stop[8];
	char      val[200], name[16];
	uint64_t  before, after;

	memset(val, 'v', sizeof(val));
	cr_assert_eq(hb_open(&t, tdir, f, 3, NULL), WB_OK);
	for (uint64_t i = 1; i <= 20000; i++) {
		hb_u64_be(row, i);
		cr_assert_eq(hb_put(t, 0, row, 8, NULL, 0, 0, val, sizeof(val)), WB_OK);
		if (i <= 100) {
			cr_assert_eq(hb_put(t, 1, row, 8, NULL, 0, 1, "a", 1), WB_OK);
			cr_assert_eq(hb_put(t, 1, row, 8, NULL, 0, 2, "b", 1), WB_OK);
			snprintf(name, sizeof(name), "r%03llu", (unsigned long long)i);
			cr_assert_eq(hb_put(t, 2, name, strlen(name), "q", 1, 1, "c", 1), WB_OK);
		}
	}
	cr_assert_eq(hb_flush(t, 0), WB_OK);
	cr_assert_eq(hb_family_stats(t, 0, &before, NULL), WB_OK);
	cr_assert_gt(before, 0);

	/* rows [1, 15001) of the log: one tombstone; the rest untouched */
	hb_u64_be(row, 1);
	hb_u64_be(stop, 15001);
	cr_assert_eq(hb_delete_range(t, 0, row, 8, stop, 8), WB_OK, "%s", hb_last_error());
	cr_assert_eq(count_cells(t, 0), 5000);
	cr_assert_eq(first_row(t, 0), 15001);
	cr_assert_eq(hb_compact_range(t, 0, row, 8, stop, 8), WB_OK);
	cr_assert_eq(hb_family_stats(t, 0, &after, NULL), WB_OK);
	cr_assert_lt(after, before / 2, "compaction reclaims the range: %llu -> %llu bytes",
	    (unsigned long long)before, (unsigned long long)after);
	cr_assert_eq(count_cells(t, 0), 5000);

	/* an empty or reversed range deletes nothing; a new row below the range shows */
	cr_assert_eq(hb_delete_range(t, 0, stop, 8, row, 8), WB_OK);
	cr_assert_eq(hb_delete_range(t, 0, stop, 8, stop, 8), WB_OK);
	cr_assert_eq(count_cells(t, 0), 5000);
	cr_assert_eq(hb_put(t, 0, row, 8, NULL, 0, 0, "x", 1), WB_OK);
	cr_assert_eq(first_row(t, 0), 1, "a write after the delete is read");

	/* a family with max versions (one delete per cell), and rows up to the end */
	hb_u64_be(row, 51);
	cr_assert_eq(hb_delete_range(t, 1, row, 8, NULL, 0), WB_OK);
	cr_assert_eq(count_cells(t, 1), 100, "50 rows of 2 versions left");
	cr_assert_eq(hb_put(t, 1, row, 8, NULL, 0, 3, "c", 1), WB_OK);
	cr_assert_eq(count_cells(t, 1), 101);
	/* variable-length rows: ["r010", "r020") */
	cr_assert_eq(hb_delete_range(t, 2, "r010", 4, "r020", 4), WB_OK);
	cr_assert_eq(count_cells(t, 2), 90);
	/* from the start */
	cr_assert_eq(hb_delete_range(t, 2, NULL, 0, "r005", 4), WB_OK);
	cr_assert_eq(count_cells(t, 2), 86);

	/* bad arguments */
	cr_assert_eq(hb_delete_range(t, 0, row, 7, stop, 8), WB_EINVAL, "a row of the wrong size");
	cr_assert_eq(hb_delete_range(t, 9, row, 8, stop, 8), WB_EINVAL);
	cr_assert_eq(hb_delete_range(NULL, 0, row, 8, stop, 8), WB_EINVAL);
	cr_assert_eq(hb_compact_range(t, 0, row, 8, stop, 4), WB_EINVAL);
	cr_assert_eq(hb_compact_range(t, 9, NULL, 0, NULL, 0), WB_EINVAL);
	hb_close(t);

	/* the delete survives a reopen */
	cr_assert_eq(hb_open(&t, tdir, f, 3, NULL), WB_OK);
	cr_assert_eq(count_cells(t, 0), 5001);
	cr_assert_eq(count_cells(t, 1), 101);
	cr_assert_eq(count_cells(t, 2), 86);
	hb_close(t);
	cr_assert_eq(raw_count(tdir, "log"), 5001, "the deleted keys are gone from disk");
}

Test(hb, attributes, .init = tdir_make, .fini = tdir_remove)
{
	hb_family_opts f[] = { { .name = "a", .row_len = HB_VARLEN } };
	hb_table      *t, *c;
	char           path[512], copy[512], buf[32];
	size_t         len = 0;

	snprintf(path, sizeof(path), "%s/db", tdir);
	snprintf(copy, sizeof(copy), "%s/copy", tdir);
	cr_assert_eq(hb_open(&t, path, f, 1, NULL), WB_OK);
	cr_assert_eq(hb_attr_get(t, "layout", buf, sizeof(buf), &len), WB_ENOTFOUND);
	cr_assert_eq(hb_attr_set(t, "layout", "relation 1/3", 12), WB_OK);
	cr_assert_eq(hb_attr_get(t, "layout", buf, sizeof(buf), &len), WB_OK);
	cr_assert_eq(len, 12);
	cr_assert_str_eq(buf, "relation 1/3");
	cr_assert_eq(hb_attr_get(t, "layout", buf, 12, &len), WB_ETOOBIG, "no room for the NUL");
	cr_assert_eq(hb_put(t, 0, "r", 1, NULL, 0, 1, "v", 1), WB_OK);
	cr_assert_eq(count_cells(t, 0), 1, "an attribute is no cell");
	cr_assert_eq(hb_checkpoint(t, copy), WB_OK);
	hb_close(t);
	cr_assert_eq(hb_open(&t, path, f, 1, NULL), WB_OK);
	cr_assert_eq(hb_attr_get(t, "layout", buf, sizeof(buf), &len), WB_OK, "kept on reopen");
	cr_assert_str_eq(buf, "relation 1/3");
	hb_close(t);
	cr_assert_eq(hb_open(&c, copy, f, 1, NULL), WB_OK);
	cr_assert_eq(
	    hb_attr_get(c, "layout", buf, sizeof(buf), &len), WB_OK, "and in a checkpoint");
	hb_close(c);
}

/*
 * A read-only open (a stopped daemon's store, inspected by a test): the
 * cells, the attributes and the WAL's unflushed writes read back; every
 * kind of write is refused; nothing is made where there is no table or
 * family; the files are as they were after the close.
 */
Test(hb, read_only, .init = tdir_make, .fini = tdir_remove)
{
	hb_family_opts      f[] = { { .name = "a", .row_len = 8, .qual_len = HB_NONE },
		     { .name = "b", .row_len = HB_VARLEN } };
	const hb_table_opts ro = { .read_only = true };
	hb_table           *t;
	hb_batch           *b;
	hb_cell            *c;
	uint8_t             row[8];
	char                path[512], copy[512], buf[32];
	size_t              len = 0;
	struct stat         st;

	snprintf(path, sizeof(path), "%s/db", tdir);
	snprintf(copy, sizeof(copy), "%s/copy", tdir);
	cr_assert_eq(hb_open(&t, path, f, 2, &ro), WB_ENOTFOUND, "no table: nothing is made");
	cr_assert_neq(stat(path, &st), 0);
	cr_assert_eq(hb_open(&t, path, f, 1, NULL), WB_OK);
	hb_u64_be(row, 42);
	cr_assert_eq(hb_put(t, 0, row, 8, NULL, 0, 7, "x", 1), WB_OK);
	cr_assert_eq(hb_attr_set(t, "layout", "inbox 0/1", 9), WB_OK);
	hb_close(t);
	cr_assert_eq(hb_open(&t, path, f, 2, &ro), WB_ENOTFOUND, "family b was never made");
	cr_assert_eq(hb_open(&t, path, f, 1, NULL), WB_OK);
	cr_assert_eq(hb_put(t, 0, row, 8, NULL, 0, 8, "y", 1), WB_OK); /* in the WAL only */
	hb_close(t);

	cr_assert_eq(hb_open(&t, path, f, 1, &ro), WB_OK);
	cr_assert_eq(hb_get(t, 0, row, 8, NULL, 0, &c), WB_OK);
	cr_assert_eq(c->version, 8);
	hb_cell_free(c);
	cr_assert_eq(count_cells(t, 0), 2);
	cr_assert_eq(hb_attr_get(t, "layout", buf, sizeof(buf), &len), WB_OK);
	cr_assert_str_eq(buf, "inbox 0/1");
	cr_assert_eq(hb_put(t, 0, row, 8, NULL, 0, 9, "z", 1), WB_EINVAL);
	cr_assert_eq(hb_batch_new(&b), WB_OK);
	cr_assert_eq(hb_batch_put(b, t, 0, row, 8, NULL, 0, 9, "z", 1), WB_OK);
	cr_assert_eq(hb_write(t, b), WB_EINVAL);
	hb_batch_free(b);
	cr_assert_eq(hb_attr_set(t, "layout", "x", 1), WB_EINVAL);
	cr_assert_eq(hb_flush(t, 0), WB_EINVAL);
	cr_assert_eq(hb_compact(t, 0), WB_EINVAL);
	cr_assert_eq(hb_clear(t, 0), WB_EINVAL);
	cr_assert_eq(hb_checkpoint(t, copy), WB_EINVAL);
	hb_table *again;
	cr_assert_eq(hb_open(&again, path, f, 1, &ro), WB_OK, "readers share a table");
	cr_assert_eq(count_cells(again, 0), 2);
	hb_close(again);
	hb_close(t);
	cr_assert_eq(hb_open(&t, path, f, 1, NULL), WB_OK, "opens for writes again");
	cr_assert_eq(count_cells(t, 0), 2);
	hb_close(t);
}

/* ---- paging ------------------------------------------------------------ */

Test(hb, paging_with_resume, .init = tdir_make, .fini = tdir_remove)
{
	hb_family_opts f[] = { { .name = "tl", .row_len = 8, .qual_len = HB_NONE } };
	hb_table      *t;
	uint8_t        row[8];

	cr_assert_eq(hb_open(&t, tdir, f, 1, NULL), WB_OK);
	for (uint64_t r = 1; r <= 3; r++) {
		hb_u64_be(row, r);
		for (uint64_t v = 1; v <= 95; v++) {
			cr_assert_eq(hb_put(t, 0, row, 8, NULL, 0, v, &v, 8), WB_OK);
		}
	}
	hb_u64_be(row, 2);
	hb_scan_opts o = { .row_prefix = row, .row_prefix_len = 8, .limit = 20 };
	uint8_t      resume[64];
	size_t       rlen = 0, total = 0;
	uint64_t     expect = 95;
	for (int page = 0; page < 10; page++) {
		hb_scan *s;
		hb_cell  c;
		o.resume = rlen ? resume : NULL;
		o.resume_len = rlen;
		cr_assert_eq(hb_scan_open(&s, t, 0, &o), WB_OK);
		while (hb_scan_next(s, &c) == WB_OK) {
			cr_assert_eq(hb_be_u64(c.row), 2);
			cr_assert_eq(c.version, expect--);
			total++;
		}
		const void *k;
		cr_assert_eq(hb_scan_resume(s, &k, &rlen), WB_OK);
		if (rlen) {
			memcpy(resume, k, rlen);
		}
		hb_scan_close(s);
		if (rlen == 0) {
			break;
		}
		cr_assert_eq(rlen, 16);
	}
	cr_assert_eq(total, 95);
	/* a version range: newest first within [10, 30] */
	o = (hb_scan_opts) { .row_prefix = row,
		.row_prefix_len = 8,
		.min_version = 10,
		.max_version = 30,
		.max_versions = 4 };
	hb_scan *s;
	hb_cell  c;
	cr_assert_eq(hb_scan_open(&s, t, 0, &o), WB_OK);
	for (uint64_t v = 30; v > 26; v--) {
		cr_assert_eq(hb_scan_next(s, &c), WB_OK);
		cr_assert_eq(c.version, v);
	}
	cr_assert_eq(hb_scan_next(s, &c), WB_EEND);
	hb_scan_close(s);
	hb_close(t);
}

/* ---- atomic batches under SIGKILL ------------------------------------- */

#define CRASH_CELLS 300

static void
crash_child(const char *path, int wfd)
{
	hb_family_opts f[] = { { .name = "b", .row_len = 8, .qual_len = 4 } };
	hb_table      *t;
	hb_batch      *b;
	char           val[200];
	uint8_t        row[8], q[4];

	if (hb_open(&t, path, f, 1, NULL) != WB_OK || hb_batch_new(&b) != WB_OK) {
		_exit(2);
	}
	/* continue after what is already there */
	uint64_t first = 0;
	for (;;) {
		hb_cell *c;
		hb_u64_be(row, first);
		q[0] = q[1] = q[2] = q[3] = 0;
		if (hb_get(t, 0, row, 8, q, 4, &c) != WB_OK) {
			break;
		}
		hb_cell_free(c);
		first++;
	}
	memset(val, 'v', sizeof(val));
	for (uint64_t n = first; n < first + 100000; n++) {
		hb_batch_clear(b);
		hb_u64_be(row, n);
		for (uint32_t i = 0; i < CRASH_CELLS; i++) {
			hb_u64_be(val, n);
			q[0] = (uint8_t)(i >> 24), q[1] = (uint8_t)(i >> 16);
			q[2] = (uint8_t)(i >> 8), q[3] = (uint8_t)i;
			hb_batch_put(b, t, 0, row, 8, q, 4, 1, val, sizeof(val));
		}
		if (hb_write(t, b) != WB_OK) {
			_exit(3);
		}
		if (write(wfd, "x", 1) != 1) {
			_exit(4);
		}
	}
	_exit(0);
}

Test(hb, scan_opts_id_row, .init = tdir_make, .fini = tdir_remove)
{
	hb_family_opts f[] = { { .name = "tl", .row_len = 8, .qual_len = HB_NONE } };
	hb_table      *t;
	hb_scan       *s;
	hb_cell        c;
	uint8_t        row[8];
	uint64_t       ids[] = { 0xFE, 0xFF, 0x100 }, v;
	hb_scan_opts   o;

	cr_assert_eq(hb_open(&t, tdir, f, 1, NULL), WB_OK);
	for (size_t i = 0; i < 3; i++) {
		hb_u64_be(row, ids[i]);
		for (v = 1; v <= 10; v++) {
			cr_assert_eq(hb_put(t, 0, row, 8, NULL, 0, v, row, 8), WB_OK);
		}
	}
	memset(&o, 0xAA, sizeof(o));
	hb_scan_opts_id_row(&o, row, 0xFF);
	cr_assert_eq(hb_be_u64(row), 0xFF);
	cr_assert(o.start_row == row && o.start_row_len == 8 && o.row_prefix == row &&
	          o.row_prefix_len == 8);
	cr_assert(o.stop_row == NULL && o.start_qual == NULL && o.qual_prefix == NULL &&
	              o.resume == NULL && o.max_versions == 0 && o.min_version == 0 &&
	              o.max_version == 0 && o.limit == 0 && !o.all_versions,
	    "every other setting is zero");
	/* the whole row, newest first, none of its neighbours */
	cr_assert_eq(hb_scan_open(&s, t, 0, &o), WB_OK);
	for (v = 10; hb_scan_next(s, &c) == WB_OK; v--) {
		cr_assert_eq(hb_be_u64(c.row), 0xFF);
		cr_assert_eq(hb_be_u64(c.value), 0xFF);
		cr_assert_eq(c.version, v);
	}
	cr_assert_eq(v, 0, "all 10 versions");
	hb_scan_close(s);
	/* with version bounds and a limit */
	o.min_version = 3;
	o.max_version = 8;
	o.limit = 4;
	cr_assert_eq(hb_scan_open(&s, t, 0, &o), WB_OK);
	for (v = 8; v > 4; v--) {
		cr_assert_eq(hb_scan_next(s, &c), WB_OK);
		cr_assert_eq(c.version, v);
	}
	cr_assert_eq(hb_scan_next(s, &c), WB_EEND);
	hb_scan_close(s);
	hb_close(t);
}

Test(hb, batches_atomic_under_sigkill, .init = tdir_make, .fini = tdir_remove, .timeout = 120)
{
	hb_family_opts f[] = { { .name = "b", .row_len = 8, .qual_len = 4 } };
	srand((unsigned)time(NULL));
	for (int round = 0; round < 4; round++) {
		int pfd[2];
		cr_assert_eq(pipe(pfd), 0);
		pid_t pid = fork();
		cr_assert_geq(pid, 0);
		if (pid == 0) {
			close(pfd[0]);
			crash_child(tdir, pfd[1]);
		}
		close(pfd[1]);
		/* wait for a random number of committed batches, then kill */
		int      want = 5 + rand() % 60, seen = 0;
		uint64_t deadline = (uint64_t)time(NULL) + 30;
		while (seen < want && (uint64_t)time(NULL) < deadline) {
			struct pollfd p = { .fd = pfd[0], .events = POLLIN };
			char          buf[64];
			if (poll(&p, 1, 1000) > 0) {
				ssize_t r = read(pfd[0], buf, sizeof(buf));
				if (r <= 0) {
					break;
				}
				seen += (int)r;
			}
		}
		cr_assert_geq(seen, want, "child made progress");
		usleep((useconds_t)(rand() % 3000));
		kill(pid, SIGKILL);
		int st;
		waitpid(pid, &st, 0);
		close(pfd[0]);
		cr_assert(WIFSIGNALED(st), "child was killed, status %d", st);

		hb_table *t;
		cr_assert_eq(hb_open(&t, tdir, f, 1, NULL), WB_OK, "%s", hb_last_error());
		hb_scan *s;
		hb_cell  c;
		uint64_t cur = UINT64_MAX, rows = 0, cells = 0;
		cr_assert_eq(hb_scan_open(&s, t, 0, NULL), WB_OK);
		int rv;
		while ((rv = hb_scan_next(s, &c)) == WB_OK) {
			uint64_t r = hb_be_u64(c.row);
			if (r != cur) {
				if (cur != UINT64_MAX) {
					cr_assert_eq(cells, CRASH_CELLS,
					    "batch %llu has %llu cells", (unsigned long long)cur,
					    (unsigned long long)cells);
				}
				cr_assert_eq(r, rows, "batches are a prefix");
				cur = r, cells = 0, rows++;
			}
			cr_assert_eq(hb_be_u64(c.value), r);
			cells++;
		}
		cr_assert_eq(rv, WB_EEND);
		cr_assert_eq(cells, CRASH_CELLS, "last batch whole");
		cr_assert_geq(rows, (uint64_t)seen, "acknowledged batches survive");
		hb_scan_close(s);
		hb_close(t);
	}
}

/* ---- error paths ------------------------------------------------------- */

Test(hb, error_paths, .init = tdir_make, .fini = tdir_remove)
{
	hb_family_opts f[] = { { .name = "fixed", .row_len = 8, .qual_len = 4 },
		{ .name = "none", .qual_len = HB_NONE } };
	hb_table      *t;
	hb_cell       *c;
	char           path[300], big[HB_MAX_PART + 1];
	uint8_t        row[8] = { 0 };

	/* a path that is a file */
	snprintf(path, sizeof(path), "%s/file", tdir);
	int fd = open(path, O_CREAT | O_WRONLY, 0600);
	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(hb_open(&t, path, f, 2, NULL), WB_EIO);
	cr_assert_null(t);
	cr_assert_neq(hb_last_error()[0], 0, "RocksDB's message is kept");

	cr_assert_eq(hb_open(&t, tdir, f, 0, NULL), WB_EINVAL);
	cr_assert_eq(hb_open(NULL, tdir, f, 2, NULL), WB_EINVAL);
	hb_family_opts dup[] = { { .name = "a" }, { .name = "a" } };
	cr_assert_eq(hb_open(&t, tdir, dup, 2, NULL), WB_EINVAL);
	hb_family_opts noname[] = { { .name = NULL } };
	cr_assert_eq(hb_open(&t, tdir, noname, 1, NULL), WB_EINVAL);
	hb_family_opts badctr[] = { { .name = "c", .counter = true, .ttl_ms = 5 } };
	cr_assert_eq(hb_open(&t, tdir, badctr, 1, NULL), WB_EINVAL);

	cr_assert_eq(hb_open(&t, tdir, f, 2, NULL), WB_OK);
	cr_assert_eq(hb_put(t, 0, row, 7, "abcd", 4, 1, "v", 1), WB_EINVAL);
	cr_assert_eq(hb_put(t, 0, row, 8, "abc", 3, 1, "v", 1), WB_EINVAL);
	cr_assert_eq(hb_put(t, 0, row, 8, "abcd", 4, 1, "v", 1), WB_OK);
	cr_assert_eq(hb_put(t, 2, row, 8, "abcd", 4, 1, "v", 1), WB_EINVAL);
	cr_assert_eq(hb_put(t, -1, row, 8, "abcd", 4, 1, "v", 1), WB_EINVAL);
	cr_assert_eq(
	    hb_put(t, 1, "r", 1, "q", 1, 1, "v", 1), WB_EINVAL, "HB_NONE takes no qualifier");
	cr_assert_eq(hb_put(t, 1, "r", 1, NULL, 0, 1, NULL, 5), WB_EINVAL);
	memset(big, 'x', sizeof(big));
	cr_assert_eq(hb_put(t, 1, big, sizeof(big), NULL, 0, 1, "v", 1), WB_ETOOBIG);
	cr_assert_eq(hb_get(t, 1, big, sizeof(big), NULL, 0, &c), WB_ETOOBIG);
	cr_assert_eq(hb_get(t, 0, row, 3, "abcd", 4, &c), WB_EINVAL);
	cr_assert_eq(hb_get(t, 9, row, 8, "abcd", 4, &c), WB_EINVAL);
	int64_t x;
	cr_assert_eq(
	    hb_counter_get(t, 0, row, 8, "abcd", 4, &x), WB_EINVAL, "not a counter family");

	hb_batch *b;
	cr_assert_eq(hb_batch_new(&b), WB_OK);
	cr_assert_eq(hb_batch_put(b, t, 0, row, 9, "abcd", 4, 1, "v", 1), WB_EINVAL);
	cr_assert_eq(hb_batch_delete_row(b, t, 0, row, 2), WB_EINVAL);
	cr_assert_eq(hb_batch_delete_version(b, t, 5, row, 8, "abcd", 4, 1), WB_EINVAL);
	cr_assert_eq(hb_batch_add(b, t, 0, row, 8, "abcd", 4, 1), WB_EINVAL);
	cr_assert_eq(hb_batch_count(b), 0);
	cr_assert_eq(hb_write(t, b), WB_OK, "empty batch");
	hb_batch_free(b);

	hb_scan     *s;
	hb_scan_opts o = { .start_row = row, .start_row_len = 5 };
	cr_assert_eq(hb_scan_open(&s, t, 0, &o), WB_EINVAL);
	o = (hb_scan_opts) { .start_qual = "abcd", .start_qual_len = 4 };
	cr_assert_eq(hb_scan_open(&s, t, 0, &o), WB_EINVAL, "start_qual needs start_row");
	o = (hb_scan_opts) { .row_prefix = row, .row_prefix_len = 9 };
	cr_assert_eq(hb_scan_open(&s, t, 0, &o), WB_EINVAL);
	o = (hb_scan_opts) { .qual_prefix = "x", .qual_prefix_len = 1 };
	cr_assert_eq(hb_scan_open(&s, t, 1, &o), WB_EINVAL);
	o = (hb_scan_opts) { .resume = "abc", .resume_len = 3 };
	cr_assert_eq(hb_scan_open(&s, t, 0, &o), WB_EINVAL);
	cr_assert_eq(hb_scan_open(&s, t, 3, NULL), WB_EINVAL);
	/* a garbage resume key of a valid length is only a position */
	o = (hb_scan_opts) { .resume = "\xff\xff\xff\xff\xff\xff\xff\xff\xff", .resume_len = 9 };
	cr_assert_eq(hb_scan_open(&s, t, 1, &o), WB_OK);
	hb_cell sc;
	cr_assert_eq(hb_scan_next(s, &sc), WB_EEND);
	hb_scan_close(s);
	hb_scan_close(NULL);
	hb_close(NULL);
	hb_batch_free(NULL);
	cr_assert_eq(hb_compact(t, 7), WB_EINVAL);
	cr_assert_eq(hb_family_stats(t, 7, NULL, NULL), WB_EINVAL);
	hb_close(t);

	/* a family unknown to the caller stays on disk and opens again */
	hb_family_opts one[] = { { .name = "none", .qual_len = HB_NONE } };
	cr_assert_eq(hb_open(&t, tdir, one, 1, NULL), WB_OK, "%s", hb_last_error());
	hb_close(t);
	cr_assert_eq(hb_open(&t, tdir, f, 2, NULL), WB_OK);
	cr_assert_eq(hb_get(t, 0, row, 8, "abcd", 4, &c), WB_OK);
	hb_cell_free(c);
	hb_close(t);
}

/*
 * A close while a background compaction runs: the compaction filter reads
 * its family on RocksDB's thread and hb_close then frees the families, so
 * the filters must be gone first (hb_close checks; ASan would see a late
 * read).  Twelve flushes of 20k rows leave L0 compactions running at close.
 */
Test(hb, close_during_background_compaction, .init = tdir_make, .fini = tdir_remove, .timeout = 120)
{
	hb_family_opts f[] = {
		{ .name = "tl", .row_len = 8, .qual_len = HB_NONE, .max_versions = 2 }
	};
	hb_table *t;
	uint8_t   row[8];

	for (uint64_t round = 0; round < 3; round++) {
		cr_assert_eq(hb_open(&t, tdir, f, 1, NULL), WB_OK);
		for (uint64_t flush = 0; flush < 12; flush++) {
			for (uint64_t r = 0; r < 20000; r++) {
				uint64_t v = round * 1000 + flush + 1, a = r;
				hb_u64_be(row, r);
				cr_assert_eq(hb_put(t, 0, row, 8, NULL, 0, v, &a, 8), WB_OK);
			}
			cr_assert_eq(hb_flush(t, 0), WB_OK);
		}
		hb_close(t);
	}
	cr_assert_geq(raw_count(tdir, "tl"), 20000 * 2, "every row keeps its newest versions");
}

/* hb_next_id_row steps over 8-byte id rows with one seek each, and names a row of another size. */
Test(hb, next_id_row, .init = tdir_make, .fini = tdir_remove)
{
	hb_family_opts f[] = { { .name = "c" } };
	hb_table      *t;
	uint8_t        row[8];
	uint64_t       got = 0;

	cr_assert_eq(hb_open(&t, tdir, f, 1, NULL), WB_OK, "%s", hb_last_error());
	for (uint64_t id = 5; id <= 9; id += 4) {
		hb_u64_be(row, id);
		cr_assert_eq(hb_put(t, 0, row, 8, "q", 1, 1, "x", 1), WB_OK);
		cr_assert_eq(hb_put(t, 0, row, 8, "r", 1, 1, "x", 1), WB_OK);
	}
	cr_assert_eq(hb_next_id_row(t, 0, 0, &got), WB_OK);
	cr_assert_eq(got, 5);
	cr_assert_eq(hb_next_id_row(t, 0, 5, &got), WB_OK);
	cr_assert_eq(got, 5);
	cr_assert_eq(hb_next_id_row(t, 0, 6, &got), WB_OK);
	cr_assert_eq(got, 9);
	cr_assert_eq(hb_next_id_row(t, 0, 10, &got), WB_EEND);
	cr_assert_eq(
	    hb_put(t, 0, "\xff\xff\xff\xff\xff\xff\xff\xff\x01", 9, "q", 1, 1, "x", 1), WB_OK);
	cr_assert_eq(hb_next_id_row(t, 0, 10, &got), WB_ECORRUPT);
	hb_close(t);
}
