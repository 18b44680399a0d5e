/*
 * hb_bench.c - the store against raw RocksDB doing the same work: the
 * same options, write options and key layout (inbox-like family: row =
 * reader id, 8 bytes; no qualifier; version = post id; value = author id):
 *
 *   key = reader(8, big-endian) | ~postid(8, big-endian)    value = author(8)
 *
 * Prints puts/s (batched and single), gets/s (newest version of a row),
 * scan cells/s (first page of 50 of a row) for both and their ratio, then
 * bytes on disk per inbox cell after a full compaction.
 *
 *   hb_bench [--quick]
 */
#include <ftw.h>
#include <rocksdb/c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hb.h"

#define EPOCH_MS UINT64_C(1577836800000)
#define PAGE     50
#define BATCH    1000

static int    quick;
static size_t readers = 2000, per_reader = 800, nsingle = 100000, nget = 200000, nscan = 20000;

/* now_s is this thread's CPU time: other work on a shared machine and
 * RocksDB's background threads do not count, so hb/raw compares the
 * foreground cost of the same work. */
static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t
rnd(void)
{
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	return rng;
}

static int
rm_entry(const char *p, const struct stat *sb, int type, struct FTW *ftw)
{
	(void)sb, (void)type, (void)ftw;
	return remove(p);
}

static void
die(const char *what, char *err)
{
	fprintf(stderr, "hb_bench: %s: %s\n", what, err ? err : hb_last_error());
	exit(1);
}

/* A post: time-ordered id (ms since 2020 | node | seq) and its author. */
typedef struct post {
	uint64_t id, author;
} post;

static post  *posts;
static size_t nposts;

/* make_posts: 30 days of posts by 20k authors (user ids up to 2M). */
static void
make_posts(void)
{
	nposts = quick ? 50000 : 400000;
	posts = malloc(nposts * sizeof(*posts));
	uint64_t ms = UINT64_C(1717200000000) - EPOCH_MS, seq = 0;
	for (size_t i = 0; i < nposts; i++) {
		uint64_t step = rnd() % (30ull * 86400000 / nposts * 2 + 1);
		seq = step ? 0 : seq + 1;
		ms += step;
		posts[i].id = (ms << 22) | ((rnd() % 4) << 16) | (seq & 0xFFFF);
		posts[i].author = 1 + (rnd() % 20000) * 97;
	}
}

/* reader_post: the j-th (oldest first) inbox entry of reader r. */
static const post *
reader_post(size_t r, size_t j)
{
	size_t stride = nposts / per_reader;
	return &posts[j * stride + (r * 7919 + j * 31) % stride];
}

static void
enc_key(uint8_t *k, uint64_t reader, uint64_t version)
{
	hb_u64_be(k, reader);
	hb_u64_be(k + 8, UINT64_MAX - version);
}

/* ---- raw RocksDB, set up like hb's family (see hb_fam_options) ---- */

typedef struct raw {
	rocksdb_t                           *db;
	rocksdb_options_t                   *o;
	rocksdb_block_based_table_options_t *bbt;
	rocksdb_cache_t                     *cache;
	rocksdb_writeoptions_t              *wo;
	rocksdb_column_family_handle_t      *cf[2];
} raw;

static void
raw_open(raw *r, const char *path)
{
	char              *err = NULL;
	rocksdb_options_t *dbo = rocksdb_options_create();
	r->cache = rocksdb_cache_create_lru(64 << 20);
	r->o = rocksdb_options_create();
	r->bbt = rocksdb_block_based_options_create();
	rocksdb_block_based_options_set_block_cache(r->bbt, r->cache);
	rocksdb_block_based_options_set_format_version(r->bbt, 5);
	rocksdb_block_based_options_set_cache_index_and_filter_blocks(r->bbt, 1);
	rocksdb_block_based_options_set_pin_l0_filter_and_index_blocks_in_cache(r->bbt, 1);
	rocksdb_block_based_options_set_block_size(r->bbt, 16 * 1024);
	rocksdb_block_based_options_set_block_restart_interval(r->bbt, 16);
	rocksdb_options_set_prefix_extractor(r->o, rocksdb_slicetransform_create_fixed_prefix(8));
	rocksdb_block_based_options_set_filter_policy(
	    r->bbt, rocksdb_filterpolicy_create_bloom_full(10));
	rocksdb_block_based_options_set_whole_key_filtering(r->bbt, 0);
	rocksdb_options_set_block_based_table_factory(r->o, r->bbt);
	rocksdb_options_set_compression(r->o, rocksdb_zstd_compression);
	rocksdb_options_set_create_if_missing(dbo, 1);
	rocksdb_options_set_create_missing_column_families(dbo, 1);
	rocksdb_options_set_max_background_jobs(dbo, 2);
	rocksdb_options_set_keep_log_file_num(dbo, 2);
	rocksdb_options_set_info_log_level(dbo, 2);
	const char              *names[2] = { "tl", "default" };
	const rocksdb_options_t *opts[2] = { r->o, dbo };
	r->db = rocksdb_open_column_families(dbo, path, 2, names, opts, r->cf, &err);
	if (err) {
		die("raw open", err);
	}
	r->wo = rocksdb_writeoptions_create();
	rocksdb_options_destroy(dbo);
}

static void
raw_close(raw *r)
{
	rocksdb_column_family_handle_destroy(r->cf[0]);
	rocksdb_column_family_handle_destroy(r->cf[1]);
	rocksdb_close(r->db);
	rocksdb_writeoptions_destroy(r->wo);
	rocksdb_options_destroy(r->o);
	rocksdb_block_based_options_destroy(r->bbt);
	rocksdb_cache_destroy(r->cache);
}

/* ---- the work, once per side ---- */

static hb_table *T;
static raw       R;

static double
load(int use_hb, size_t j0, size_t j1)
{
	hb_batch             *b = NULL;
	rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
	uint8_t               row[8], k[16];
	char                 *err = NULL;
	size_t                n = 0;

	if (hb_batch_new(&b) != WB_OK) {
		die("batch", NULL);
	}
	double t0 = now_s();
	/* fan-out order: post by post, to every reader that gets it */
	for (size_t j = j0; j < j1; j++) {
		for (size_t r = 0; r < readers; r++) {
			const post *p = reader_post(r, j);
			uint8_t     v[8];
			hb_u64_be(v, p->author);
			if (use_hb) {
				hb_u64_be(row, 1000 + r);
				if (hb_batch_put(b, T, 0, row, 8, NULL, 0, p->id, v, 8) != WB_OK) {
					die("batch put", NULL);
				}
			} else {
				enc_key(k, 1000 + r, p->id);
				rocksdb_writebatch_put_cf(
				    wb, R.cf[0], (const char *)k, 16, (const char *)v, 8);
			}
			if (++n % BATCH == 0) {
				if (use_hb) {
					if (hb_write(T, b) != WB_OK) {
						die("write", NULL);
					}
					hb_batch_clear(b);
				} else {
					rocksdb_write(R.db, R.wo, wb, &err);
					if (err) {
						die("raw write", err);
					}
					rocksdb_writebatch_clear(wb);
				}
			}
		}
	}
	if (use_hb ? hb_write(T, b) != WB_OK : (rocksdb_write(R.db, R.wo, wb, &err), err != NULL)) {
		die("write", err);
	}
	double dt = now_s() - t0;
	hb_batch_free(b);
	rocksdb_writebatch_destroy(wb);
	return dt;
}

static double
single_puts(int use_hb, uint64_t base)
{
	uint8_t row[8], k[16], v[8];
	char   *err = NULL;

	double t0 = now_s();
	for (size_t i = 0; i < nsingle; i++) {
		uint64_t r = 1000 + rnd() % readers, id = base + (i << 10);
		hb_u64_be(v, i);
		if (use_hb) {
			hb_u64_be(row, r);
			if (hb_put(T, 0, row, 8, NULL, 0, id, v, 8) != WB_OK) {
				die("put", NULL);
			}
		} else {
			enc_key(k, r, id);
			rocksdb_put_cf(
			    R.db, R.wo, R.cf[0], (const char *)k, 16, (const char *)v, 8, &err);
			if (err) {
				die("raw put", err);
			}
		}
	}
	return (double)nsingle / (now_s() - t0);
}

static double
gets(int use_hb)
{
	uint8_t  row[8], k[16], up[17];
	uint64_t sum = 0;

	rng = 42;
	double t0 = now_s();
	for (size_t i = 0; i < nget; i++) {
		uint64_t r = 1000 + rnd() % (readers + readers / 10); /* 10% misses */
		if (use_hb) {
			hb_cell *c;
			hb_u64_be(row, r);
			if (hb_get(T, 0, row, 8, NULL, 0, &c) == WB_OK) {
				sum += c->version;
				hb_cell_free(c);
			}
		} else {
			enc_key(k, r, UINT64_MAX);
			memcpy(up, k, 8);
			memset(up + 8, 0xFF, 8);
			up[16] = 0;
			rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
			rocksdb_readoptions_set_iterate_upper_bound(ro, (const char *)up, 17);
			rocksdb_readoptions_set_prefix_same_as_start(ro, 1);
			rocksdb_iterator_t *it = rocksdb_create_iterator_cf(R.db, ro, R.cf[0]);
			rocksdb_iter_seek(it, (const char *)k, 16);
			if (rocksdb_iter_valid(it)) {
				size_t      kl, vl;
				const char *kk = rocksdb_iter_key(it, &kl);
				const char *vv = rocksdb_iter_value(it, &vl);
				if (kl == 16 && memcmp(kk, k, 8) == 0) {
					char *copy = malloc(vl); /* hb_get hands out a copy too */
					memcpy(copy, vv, vl);
					sum += UINT64_MAX - hb_be_u64(kk + 8);
					free(copy);
				}
			}
			rocksdb_iter_destroy(it);
			rocksdb_readoptions_destroy(ro);
		}
	}
	double rate = (double)nget / (now_s() - t0);
	if (sum == 0) {
		die("gets found nothing", NULL);
	}
	return rate;
}

static double
scans(int use_hb)
{
	uint8_t  row[8], k[16], up[8];
	size_t   cells = 0;
	uint64_t sum = 0;

	rng = 4242;
	double t0 = now_s();
	for (size_t i = 0; i < nscan; i++) {
		uint64_t r = 1000 + rnd() % readers;
		if (use_hb) {
			hb_scan *s;
			hb_cell  c;
			hb_u64_be(row, r);
			hb_scan_opts o = { .row_prefix = row, .row_prefix_len = 8, .limit = PAGE };
			if (hb_scan_open(&s, T, 0, &o) != WB_OK) {
				die("scan", NULL);
			}
			while (hb_scan_next(s, &c) == WB_OK) {
				sum += hb_be_u64(c.value) + c.version;
				cells++;
			}
			hb_scan_close(s);
		} else {
			enc_key(k, r, UINT64_MAX);
			hb_u64_be(up, r + 1);
			rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
			rocksdb_readoptions_set_iterate_upper_bound(ro, (const char *)up, 8);
			rocksdb_readoptions_set_prefix_same_as_start(ro, 1);
			rocksdb_iterator_t *it = rocksdb_create_iterator_cf(R.db, ro, R.cf[0]);
			size_t              n = 0;
			for (rocksdb_iter_seek(it, (const char *)k, 16);
			     n < PAGE && rocksdb_iter_valid(it); rocksdb_iter_next(it), n++) {
				size_t      kl, vl;
				const char *kk = rocksdb_iter_key(it, &kl);
				const char *vv = rocksdb_iter_value(it, &vl);
				sum += hb_be_u64(vv) + UINT64_MAX - hb_be_u64(kk + 8);
			}
			cells += n;
			rocksdb_iter_destroy(it);
			rocksdb_readoptions_destroy(ro);
		}
	}
	double rate = (double)cells / (now_s() - t0);
	if (sum == 0) {
		die("scans found nothing", NULL);
	}
	return rate;
}

static uint64_t
raw_sst_bytes(void)
{
	char    *v = rocksdb_property_value_cf(R.db, R.cf[0], "rocksdb.total-sst-files-size");
	uint64_t x = v ? strtoull(v, NULL, 10) : 0;
	rocksdb_free(v);
	return x;
}

static void
row_print(const char *what, double raw_rate, double hb_rate)
{
	printf("%-28s %12.0f %12.0f %8.3f\n", what, raw_rate, hb_rate, hb_rate / raw_rate);
}

static double
best(double a, double b)
{
	return a > b ? a : b;
}

int
main(int argc, char **argv)
{
	char dir[] = "/tmp/hb_bench.XXXXXX", hbdir[64], rawdir[64];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			quick = 1;
		} else {
			fprintf(stderr, "usage: hb_bench [--quick]\n");
			return 2;
		}
	}
	if (quick) {
		readers = 300, per_reader = 400, nsingle = 20000, nget = 30000, nscan = 3000;
	}
	if (mkdtemp(dir) == NULL) {
		die("mkdtemp", NULL);
	}
	snprintf(hbdir, sizeof(hbdir), "%s/hb", dir);
	snprintf(rawdir, sizeof(rawdir), "%s/raw", dir);
	make_posts();

	hb_family_opts fam = { .name = "tl",
		.row_len = 8,
		.qual_len = HB_NONE,
		.compression = HB_COMPRESS_ZSTD,
		.bloom_bits = 10 };
	if (hb_open(&T, hbdir, &fam, 1, NULL) != WB_OK) {
		die("hb_open", NULL);
	}
	raw_open(&R, rawdir);

	size_t cells = readers * per_reader;
	printf("hb_bench: %zu readers x %zu inbox entries = %zu cells%s\n", readers, per_reader,
	    cells, quick ? " (quick)" : "");
	printf("(rates per second of the benchmark thread's CPU time; best of 3 for reads and "
	       "single puts)\n");
	printf("%-28s %12s %12s %8s\n", "operation", "raw/s", "hb/s", "hb/raw");
	/* load in alternating chunks so warm-up and noise hit both sides */
	double lr = 0, lh = 0;
	for (size_t c = 0; c < 8; c++) {
		size_t j0 = per_reader * c / 8, j1 = per_reader * (c + 1) / 8;
		lr += load(0, j0, j1);
		lh += load(1, j0, j1);
	}
	row_print("batched puts (1000/batch)", (double)cells / lr, (double)cells / lh);

	/* compact both: the read figures and the disk figure use settled files */
	char                   *err = NULL;
	rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
	rocksdb_flushoptions_set_wait(fo, 1);
	rocksdb_flush_cf(R.db, fo, R.cf[0], &err);
	if (err) {
		die("flush", err);
	}
	rocksdb_flushoptions_destroy(fo);
	rocksdb_compactoptions_t *co = rocksdb_compactoptions_create();
	rocksdb_compactoptions_set_bottommost_level_compaction(co, 2);
	rocksdb_compact_range_cf_opt(R.db, R.cf[0], co, NULL, 0, NULL, 0);
	rocksdb_compactoptions_destroy(co);
	if (hb_compact(T, 0) != WB_OK) {
		die("compact", NULL);
	}
	uint64_t hb_bytes, hb_keys, raw_bytes = raw_sst_bytes();
	hb_family_stats(T, 0, &hb_bytes, &hb_keys);

	double gr = 0, gh = 0;
	for (int i = 0; i < 3; i++) {
		gr = best(gr, gets(0)), gh = best(gh, gets(1));
	}
	row_print("gets (newest version)", gr, gh);
	double sr = 0, sh = 0;
	for (int i = 0; i < 3; i++) {
		sr = best(sr, scans(0)), sh = best(sh, scans(1));
	}
	row_print("scan cells (pages of 50)", sr, sh);
	uint64_t base = (UINT64_C(1719900000000) - EPOCH_MS) << 22;
	double   pr = 0, ph = 0;
	for (uint64_t i = 0; i < 3; i++) {
		pr = best(pr, single_puts(0, base + i)), ph = best(ph, single_puts(1, base + i));
	}
	row_print("single puts", pr, ph);

	printf(
	    "\nbytes on disk per inbox cell after compaction (%zu cells, key 16 B + value 8 B):\n",
	    cells);
	printf("  raw RocksDB  %10llu B  %6.2f B/cell\n", (unsigned long long)raw_bytes,
	    (double)raw_bytes / (double)cells);
	printf("  hb           %10llu B  %6.2f B/cell  (estimated keys %llu)\n",
	    (unsigned long long)hb_bytes, (double)hb_bytes / (double)cells,
	    (unsigned long long)hb_keys);

	hb_close(T);
	raw_close(&R);
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(posts);
	return 0;
}
