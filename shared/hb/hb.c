/*
 * hb.c - tables, families, single-cell reads and writes, batches.
 *
 * Durability: every write goes through RocksDB's WAL.  With
 * hb_table_opts.sync off (the default), a killed process loses nothing
 * that hb_put or hb_write acknowledged (the WAL is in the OS page cache);
 * a power cut or kernel crash may lose the last acknowledged writes, but a
 * batch is still all or nothing.  With sync on, the WAL is fsync'ed before
 * a write returns and nothing acknowledged is lost.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hb_int.h"

static __thread char hb_errbuf[256];

struct hb_batch {
	rocksdb_writebatch_t *wb;
	hb_table             *t; /* the table the batch's operations are for */
	size_t                n; /* operations added */
	/* keys put into families with max versions: a later range delete in
	 * the same batch point-deletes them too (see hb_batch_delete_range).
	 * Entries: fam(2) | len(2) | key */
	uint8_t *keys;
	size_t   keys_len, keys_cap;
};

const char *
hb_last_error(void)
{
	return hb_errbuf;
}

int
hb_err_set(int code, const char *msg)
{
	snprintf(hb_errbuf, sizeof(hb_errbuf), "%s", msg ? msg : "");
	return code;
}

int
hb_err_rocks(char *err)
{
	int code = WB_EIO;

	if (err == NULL) {
		return WB_EIO;
	}
	if (strncmp(err, "Corruption", 10) == 0) {
		code = WB_ECORRUPT;
	}
	hb_err_set(code, err);
	rocksdb_free(err);
	return code;
}

/* hb_fam_check validates one family's settings. */
static int
hb_fam_check(const hb_family_opts *o)
{
	if (o->name == NULL || o->name[0] == '\0') {
		return WB_EINVAL;
	}
	if (o->row_len > HB_MAX_PART) {
		return WB_EINVAL;
	}
	if (o->qual_len > HB_MAX_PART && o->qual_len != HB_NONE) {
		return WB_EINVAL;
	}
	if (o->compression > HB_COMPRESS_ZSTD || o->bloom_bits < 0 || o->bloom_bits > 64) {
		return WB_EINVAL;
	}
	/* A counter is one cell at version 0: no TTL, no version mapping. */
	if (o->counter && (o->ttl_ms != 0 || o->version_ms != NULL)) {
		return WB_EINVAL;
	}
	return WB_OK;
}

/*
 * hb_fam_options builds the RocksDB options of one family.  Block-based
 * tables with delta-encoded keys; compressed families get 16 KiB blocks
 * (ZSTD/LZ4 find more to share); a bloom filter is on rows (prefix) for
 * fixed-length rows, on whole keys otherwise.
 */
static int
hb_fam_options(hb_table *t, hb_fam *f)
{
	const hb_family_opts *o = &f->o;

	if ((f->opts = rocksdb_options_create()) == NULL ||
	    (f->bbt = rocksdb_block_based_options_create()) == NULL) {
		return WB_ENOMEM;
	}
	if (o->ascending_puts) {
		/*
		 * A skip list insert normally searches from the top unless the
		 * key lands right after the previous insert; a fan-out's keys
		 * interleave with other posts' cells of the same readers, so
		 * every insert searched the whole list.  With a hint (one, for
		 * the empty prefix of every key) an insert climbs from the last
		 * insert only as far as it must.  The C API has no setter.
		 */
		rocksdb_options_t *base = f->opts;
		char              *err = NULL;
		if ((f->opts = rocksdb_options_create()) == NULL) {
			rocksdb_options_destroy(base);
			return WB_ENOMEM;
		}
		rocksdb_get_options_from_string(base,
		    "memtable_insert_with_hint_prefix_extractor=rocksdb.FixedPrefix.0", f->opts,
		    &err);
		rocksdb_options_destroy(base);
		if (err != NULL) {
			return hb_err_rocks(err);
		}
	}
	if (o->write_buffer_mb > 0) {
		rocksdb_options_set_write_buffer_size(f->opts, (size_t)o->write_buffer_mb << 20);
	}
	if (o->write_buffers > 0) {
		rocksdb_options_set_max_write_buffer_number(f->opts, (int)o->write_buffers);
	}
	rocksdb_block_based_options_set_block_cache(f->bbt, t->cache);
	rocksdb_block_based_options_set_format_version(f->bbt, 5);
	rocksdb_block_based_options_set_cache_index_and_filter_blocks(f->bbt, 1);
	rocksdb_block_based_options_set_pin_l0_filter_and_index_blocks_in_cache(f->bbt, 1);
	if (o->compression != HB_COMPRESS_NONE) {
		rocksdb_block_based_options_set_block_size(f->bbt, 16 * 1024);
		rocksdb_block_based_options_set_block_restart_interval(f->bbt, 16);
	}
	f->prefix_rows = o->row_len != HB_VARLEN && !o->counter;
	if (f->prefix_rows) {
		rocksdb_options_set_prefix_extractor(
		    f->opts, rocksdb_slicetransform_create_fixed_prefix(o->row_len));
	}
	if (o->bloom_bits > 0) {
		rocksdb_block_based_options_set_filter_policy(
		    f->bbt, rocksdb_filterpolicy_create_bloom_full(o->bloom_bits));
		/* cells are found by seeking (version unknown): whole keys
		 * only help the exact Get of counters */
		rocksdb_block_based_options_set_whole_key_filtering(f->bbt, f->prefix_rows ? 0 : 1);
	}
	rocksdb_options_set_block_based_table_factory(f->opts, f->bbt);
	switch (o->compression) {
	case HB_COMPRESS_LZ4:
		rocksdb_options_set_compression(f->opts, rocksdb_lz4_compression);
		break;
	case HB_COMPRESS_ZSTD:
		rocksdb_options_set_compression(f->opts, rocksdb_zstd_compression);
		break;
	default:
		rocksdb_options_set_compression(f->opts, rocksdb_no_compression);
		break;
	}
	if (o->counter) {
		rocksdb_options_set_merge_operator(f->opts, hb_counter_merge());
	}
	if (o->blob_min_bytes > 0) {
		rocksdb_options_set_enable_blob_files(f->opts, 1);
		rocksdb_options_set_min_blob_size(f->opts, o->blob_min_bytes);
		rocksdb_options_set_enable_blob_gc(f->opts, 1);
	}
	rocksdb_compactionfilterfactory_t *ff = hb_filter_factory(f);
	if (ff != NULL) {
		rocksdb_options_set_compaction_filter_factory(f->opts, ff);
	}
	return WB_OK;
}

/* hb_table_free releases everything of a table; the db must be closed. */
static void
hb_table_free(hb_table *t)
{
	for (size_t i = 0; i < t->nfams; i++) {
		if (t->fams[i].opts) {
			rocksdb_options_destroy(t->fams[i].opts);
		}
		if (t->fams[i].bbt) {
			rocksdb_block_based_options_destroy(t->fams[i].bbt);
		}
		free(t->fams[i].name);
	}
	free(t->fams);
	free(t->extra);
	if (t->extra_opts) {
		rocksdb_options_destroy(t->extra_opts);
	}
	if (t->dbopts) {
		rocksdb_options_destroy(t->dbopts);
	}
	if (t->wo) {
		rocksdb_writeoptions_destroy(t->wo);
	}
	if (t->ro) {
		rocksdb_readoptions_destroy(t->ro);
	}
	if (t->cache) {
		rocksdb_cache_destroy(t->cache);
	}
	free(t);
}

int
hb_open(hb_table **out, const char *path, const hb_family_opts *fams, size_t nfams,
    const hb_table_opts *opts)
{
	hb_table *t;
	char     *err = NULL, **ondisk = NULL;
	size_t    nondisk = 0;
	int       rv;

	if (out == NULL || path == NULL || fams == NULL || nfams == 0 || nfams > 1000) {
		return hb_err_set(WB_EINVAL, "bad arguments");
	}
	*out = NULL;
	for (size_t i = 0; i < nfams; i++) {
		if ((rv = hb_fam_check(&fams[i])) != WB_OK) {
			return hb_err_set(rv, "bad family settings");
		}
		for (size_t j = 0; j < i; j++) {
			if (strcmp(fams[i].name, fams[j].name) == 0) {
				return hb_err_set(WB_EINVAL, "duplicate family");
			}
		}
	}
	if ((t = calloc(1, sizeof(*t))) == NULL ||
	    (t->fams = calloc(nfams, sizeof(*t->fams))) == NULL) {
		free(t);
		return hb_err_set(WB_ENOMEM, "out of memory");
	}
	t->nfams = nfams;
	if (opts != NULL) {
		t->now_ms = opts->now_ms;
		t->now_arg = opts->now_arg;
		t->read_only = opts->read_only;
	}
	size_t cache_mb = opts && opts->cache_mb ? opts->cache_mb : 64;
	t->cache = rocksdb_cache_create_lru(cache_mb << 20);
	t->dbopts = rocksdb_options_create();
	t->extra_opts = rocksdb_options_create();
	t->wo = rocksdb_writeoptions_create();
	t->ro = rocksdb_readoptions_create();
	rocksdb_options_set_create_if_missing(t->dbopts, !t->read_only);
	rocksdb_options_set_create_missing_column_families(t->dbopts, !t->read_only);
	rocksdb_options_set_max_background_jobs(t->dbopts, 2);
	rocksdb_options_set_keep_log_file_num(t->dbopts, 2);
	rocksdb_options_set_info_log_level(t->dbopts, 2); /* warnings */
	rocksdb_writeoptions_set_sync(t->wo, opts && opts->sync ? 1 : 0);
	for (size_t i = 0; i < nfams; i++) {
		if (fams[i].ascending_puts) { /* the hint of batches inserted concurrently */
			rocksdb_writeoptions_set_memtable_insert_hint_per_batch(t->wo, 1);
		}
	}
	for (size_t i = 0; i < nfams; i++) {
		hb_fam *f = &t->fams[i];
		f->o = fams[i];
		f->t = t;
		f->fmt.row_len = fams[i].row_len;
		f->fmt.qual_len = fams[i].qual_len;
		if ((f->name = strdup(fams[i].name)) == NULL ||
		    (rv = hb_fam_options(t, f)) != WB_OK) {
			hb_table_free(t);
			return hb_err_set(WB_ENOMEM, "out of memory");
		}
		f->o.name = f->name;
	}

	/* RocksDB must open every column family on disk: the caller's, the
	 * default one and any other (kept open with default settings). */
	ondisk = rocksdb_list_column_families(t->dbopts, path, &nondisk, &err);
	if (err != NULL && t->read_only) { /* nothing to read, and nothing may be made */
		rocksdb_free(ondisk);
		hb_table_free(t);
		hb_err_rocks(err);
		return WB_ENOTFOUND;
	}
	if (err != NULL) { /* no database yet (or not a database: open says) */
		rocksdb_free(err);
		err = NULL;
		rocksdb_free(ondisk); /* RocksDB returns malloc(0) even on error */
		ondisk = NULL;
		nondisk = 0;
	}
	for (size_t i = 0; t->read_only && i < nfams; i++) { /* nothing may be made */
		bool there = false;
		for (size_t j = 0; j < nondisk && !there; j++) {
			there = strcmp(ondisk[j], fams[i].name) == 0;
		}
		if (!there) {
			if (ondisk != NULL) {
				rocksdb_list_column_families_destroy(ondisk, nondisk);
			}
			hb_table_free(t);
			return hb_err_set(WB_ENOTFOUND, "a family is not on disk");
		}
	}
	size_t                           n = nfams + nondisk + 1, k = 0;
	const char                     **names = calloc(n, sizeof(*names));
	const rocksdb_options_t        **copts = calloc(n, sizeof(*copts));
	rocksdb_column_family_handle_t **handles = calloc(n, sizeof(*handles));
	t->extra = calloc(n, sizeof(*t->extra));
	if (names == NULL || copts == NULL || handles == NULL || t->extra == NULL) {
		rv = hb_err_set(WB_ENOMEM, "out of memory");
		goto done;
	}
	for (size_t i = 0; i < nfams; i++) {
		names[k] = t->fams[i].name;
		copts[k++] = t->fams[i].opts;
	}
	size_t first_extra = k;
	bool   need_default = true;
	for (size_t i = 0; i < nfams; i++) {
		if (strcmp(t->fams[i].name, "default") == 0) {
			need_default = false;
		}
	}
	if (need_default) {
		names[k] = "default";
		copts[k++] = t->extra_opts;
	}
	for (size_t i = 0; i < nondisk; i++) {
		bool known = strcmp(ondisk[i], "default") == 0;
		for (size_t j = 0; j < nfams && !known; j++) {
			known = strcmp(ondisk[i], t->fams[j].name) == 0;
		}
		if (!known) {
			names[k] = ondisk[i];
			copts[k++] = t->extra_opts;
		}
	}
	if (t->read_only) {
		t->db = rocksdb_open_for_read_only_column_families(
		    t->dbopts, path, (int)k, names, copts, handles, 0, &err);
	} else {
		t->db = rocksdb_open_column_families(
		    t->dbopts, path, (int)k, names, copts, handles, &err);
	}
	if (err != NULL) {
		t->db = NULL;
		rv = hb_err_rocks(err);
		goto done;
	}
	for (size_t i = 0; i < nfams; i++) {
		t->fams[i].cf = handles[i];
		if (strcmp(t->fams[i].name, "default") == 0) {
			t->dflt = handles[i];
		}
	}
	for (size_t i = first_extra; i < k; i++) {
		t->extra[t->nextra++] = handles[i];
	}
	if (need_default) {
		t->dflt = handles[first_extra];
	}
	rv = WB_OK;
done:
	if (ondisk != NULL) {
		rocksdb_list_column_families_destroy(ondisk, nondisk);
	}
	free(names);
	free(copts);
	free(handles);
	if (rv != WB_OK) {
		hb_table_free(t);
		return rv;
	}
	*out = t;
	return WB_OK;
}

void
hb_close(hb_table *t)
{
	if (t == NULL) {
		return;
	}
	rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
	rocksdb_flushoptions_set_wait(fo, 1);
	for (size_t i = 0; !t->read_only && i < t->nfams; i++) {
		char *err = NULL;
		rocksdb_flush_cf(t->db, fo, t->fams[i].cf, &err);
		if (err != NULL) {
			hb_err_rocks(err); /* the WAL still has it */
		}
	}
	rocksdb_flushoptions_destroy(fo);
	for (size_t i = 0; i < t->nfams; i++) {
		rocksdb_column_family_handle_destroy(t->fams[i].cf);
	}
	for (size_t i = 0; i < t->nextra; i++) {
		rocksdb_column_family_handle_destroy(t->extra[i]);
	}
	rocksdb_close(t->db);
	/*
	 * RocksDB has destroyed every compaction filter once its close returns.
	 * The acquire pairs with hb_filter_destroy's release: it is the hand-off
	 * that orders the filters' reads of the families before their free, in
	 * code ThreadSanitizer sees (RocksDB's own locks are invisible to it).
	 */
	if (atomic_load_explicit(&t->filters, memory_order_acquire) != 0) {
		hb_err_set(WB_EIO, "hb_close: a compaction filter outlived the db; table leaked");
		return;
	}
	hb_table_free(t);
}

/* hb_cell_args checks the row and qualifier of a cell operation. */
static int
hb_cell_args(const hb_fam *f, const void *row, size_t row_len, const void *qual, size_t qual_len)
{
	int rv;

	if ((row == NULL && row_len != 0) || (qual == NULL && qual_len != 0)) {
		return WB_EINVAL;
	}
	if ((rv = hb_key_check_row(&f->fmt, row_len)) != WB_OK) {
		return rv;
	}
	return hb_key_check_qual(&f->fmt, qual_len);
}

int
hb_put(hb_table *t, int fam, const void *row, size_t row_len, const void *qual, size_t qual_len,
    uint64_t version, const void *val, size_t val_len)
{
	hb_fam *f = hb_fam_get(t, fam);
	uint8_t key[HB_KEY_MAX];
	char   *err = NULL;
	int     rv;

	if (f == NULL || f->o.counter || (val == NULL && val_len != 0) || t->read_only) {
		return WB_EINVAL;
	}
	if ((rv = hb_cell_args(f, row, row_len, qual, qual_len)) != WB_OK) {
		return rv;
	}
	if (version == HB_LATEST) {
		version = hb_now(t);
	}
	size_t n = hb_key_encode(key, &f->fmt, row, row_len, qual, qual_len, version);
	rocksdb_put_cf(t->db, t->wo, f->cf, (const char *)key, n, val, val_len, &err);
	return err ? hb_err_rocks(err) : WB_OK;
}

/* hb_cell_make copies a cell into one allocation. */
static hb_cell *
hb_cell_make(const void *row, size_t row_len, const void *qual, size_t qual_len, uint64_t version,
    const void *val, size_t val_len)
{
	hb_cell *c = malloc(sizeof(*c) + row_len + qual_len + val_len + 1);
	uint8_t *p;

	if (c == NULL) {
		return NULL;
	}
	p = (uint8_t *)(c + 1);
	if (row_len) {
		memcpy(p, row, row_len);
	}
	c->row = p;
	c->row_len = row_len;
	p += row_len;
	if (qual_len) {
		memcpy(p, qual, qual_len);
	}
	c->qual = p;
	c->qual_len = qual_len;
	p += qual_len;
	if (val_len) {
		memcpy(p, val, val_len);
	}
	p[val_len] = 0; /* handy for text values */
	c->value = p;
	c->value_len = val_len;
	c->version = version;
	return c;
}

/*
 * hb_column_range checks a column's row and qualifier against family f
 * (NULL: no such family) and writes the keys that bound its versions <=
 * version: begin = [col|~version] (*cl + 8 bytes) and end = [col|FF..FF|00]
 * (*cl + 9 bytes, past every version of the column).  Both hold
 * HB_KEY_MAX + 1 bytes.
 */
static int
hb_column_range(size_t *cl, uint8_t *begin, uint8_t *end, const hb_fam *f, const void *row,
    size_t row_len, const void *qual, size_t qual_len, uint64_t version)
{
	int rv;

	if (f == NULL) {
		return WB_EINVAL;
	}
	if ((rv = hb_cell_args(f, row, row_len, qual, qual_len)) != WB_OK) {
		return rv;
	}
	*cl = hb_key_column(begin, &f->fmt, row, row_len, qual, qual_len);
	memcpy(end, begin, *cl);
	memset(end + *cl, 0xFF, 8);
	end[*cl + 8] = 0;
	hb_key_put_version(begin + *cl, version);
	return WB_OK;
}

int
hb_get(hb_table *t, int fam, const void *row, size_t row_len, const void *qual, size_t qual_len,
    hb_cell **out)
{
	hb_fam *f = hb_fam_get(t, fam);
	uint8_t key[HB_KEY_MAX + 1], upper[HB_KEY_MAX + 1];
	char   *err = NULL;
	size_t  cl;
	int     rv;

	if (out == NULL) {
		return WB_EINVAL;
	}
	*out = NULL;
	/*
	 * Seek to the column's newest possible key; the upper bound ends the
	 * column, so tombstones of other columns are never walked:
	 *   [col|00..00]  ...versions...  [col|FF..FF] < [col|FF..FF|00]
	 */
	rv = hb_column_range(&cl, key, upper, f, row, row_len, qual, qual_len, HB_LATEST);
	if (rv != WB_OK) {
		return rv;
	}

	rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
	rocksdb_readoptions_set_iterate_upper_bound(ro, (const char *)upper, cl + 9);
	if (f->prefix_rows) {
		rocksdb_readoptions_set_prefix_same_as_start(ro, 1);
	}
	rocksdb_iterator_t *it = rocksdb_create_iterator_cf(t->db, ro, f->cf);
	rocksdb_iter_seek(it, (const char *)key, cl + 8);
	rv = WB_ENOTFOUND;
	if (rocksdb_iter_valid(it)) {
		size_t      klen, vlen;
		const char *k = rocksdb_iter_key(it, &klen);
		const char *v = rocksdb_iter_value(it, &vlen);
		if (klen == cl + 8 && memcmp(k, key, cl) == 0) {
			uint64_t version = hb_key_version((const uint8_t *)k, klen);
			/* the clock may be a system call: only read it for TTL */
			if (f->o.ttl_ms == 0 || !hb_expired(f, version, hb_now(t))) {
				*out = hb_cell_make(row, row_len, qual, qual_len, version, v, vlen);
				rv = *out ? WB_OK : WB_ENOMEM;
			}
		}
	} else {
		rocksdb_iter_get_error(it, &err);
		if (err != NULL) {
			rv = hb_err_rocks(err);
		}
	}
	rocksdb_iter_destroy(it);
	rocksdb_readoptions_destroy(ro);
	return rv;
}

bool
hb_live(hb_table *t, int fam, uint64_t version)
{
	hb_fam *f = hb_fam_get(t, fam);

	return f != NULL && (f->o.ttl_ms == 0 || !hb_expired(f, version, hb_now(t)));
}

void
hb_cell_free(hb_cell *c)
{
	free(c);
}

int
hb_attr_get(hb_table *t, const char *name, char *buf, size_t cap, size_t *len)
{
	char  *err = NULL, *v;
	size_t vlen = 0;

	v = rocksdb_get_cf(t->db, t->ro, t->dflt, name, strlen(name), &vlen, &err);
	if (err != NULL) {
		return hb_err_rocks(err);
	}
	if (v == NULL) {
		return WB_ENOTFOUND;
	}
	if (vlen >= cap) {
		rocksdb_free(v);
		return hb_err_set(WB_ETOOBIG, "attribute longer than its buffer");
	}
	memcpy(buf, v, vlen);
	buf[vlen] = '\0';
	*len = vlen;
	rocksdb_free(v);
	return WB_OK;
}

int
hb_attr_set(hb_table *t, const char *name, const void *value, size_t len)
{
	char *err = NULL;

	if (t->read_only) {
		return WB_EINVAL;
	}
	rocksdb_put_cf(t->db, t->wo, t->dflt, name, strlen(name), value, len, &err);
	return err != NULL ? hb_err_rocks(err) : WB_OK;
}

int
hb_counter_get(hb_table *t, int fam, const void *row, size_t row_len, const void *qual,
    size_t qual_len, int64_t *out)
{
	hb_fam *f = hb_fam_get(t, fam);
	uint8_t key[HB_KEY_MAX];
	char   *err = NULL;
	int     rv;

	if (out == NULL) {
		return WB_EINVAL;
	}
	*out = 0;
	if (f == NULL || !f->o.counter) {
		return WB_EINVAL;
	}
	if ((rv = hb_cell_args(f, row, row_len, qual, qual_len)) != WB_OK) {
		return rv;
	}
	size_t                   n = hb_key_encode(key, &f->fmt, row, row_len, qual, qual_len, 0);
	rocksdb_pinnableslice_t *ps =
	    rocksdb_get_pinned_cf(t->db, t->ro, f->cf, (const char *)key, n, &err);
	if (err != NULL) {
		return hb_err_rocks(err);
	}
	if (ps == NULL) {
		return WB_OK;
	}
	size_t         vlen;
	const uint8_t *v = (const uint8_t *)rocksdb_pinnableslice_value(ps, &vlen);
	rv = WB_OK;
	if (vlen != 8) {
		rv = hb_err_set(WB_ECORRUPT, "counter value is not 8 bytes");
	} else {
		uint64_t x = 0;
		for (int i = 7; i >= 0; i--) {
			x = (x << 8) | v[i];
		}
		*out = (int64_t)x;
	}
	rocksdb_pinnableslice_destroy(ps);
	return rv;
}

int
hb_batch_new(hb_batch **out)
{
	hb_batch *b;

	if (out == NULL) {
		return WB_EINVAL;
	}
	if ((b = calloc(1, sizeof(*b))) == NULL || (b->wb = rocksdb_writebatch_create()) == NULL) {
		free(b);
		*out = NULL;
		return WB_ENOMEM;
	}
	*out = b;
	return WB_OK;
}

void
hb_batch_free(hb_batch *b)
{
	if (b == NULL) {
		return;
	}
	rocksdb_writebatch_destroy(b->wb);
	free(b->keys);
	free(b);
}

void
hb_batch_clear(hb_batch *b)
{
	if (b == NULL) {
		return;
	}
	rocksdb_writebatch_clear(b->wb);
	b->t = NULL;
	b->n = 0;
	b->keys_len = 0;
}

size_t
hb_batch_count(const hb_batch *b)
{
	return b ? b->n : 0;
}

/* hb_batch_fam checks a batch operation's table and family. */
static hb_fam *
hb_batch_fam(hb_batch *b, hb_table *t, int fam)
{
	hb_fam *f = hb_fam_get(t, fam);

	if (b == NULL || f == NULL || (b->t != NULL && b->t != t)) {
		return NULL;
	}
	b->t = t;
	return f;
}

/* hb_batch_keep_key remembers a key put into a family with max versions. */
static int
hb_batch_keep_key(hb_batch *b, const hb_fam *f, const uint8_t *key, size_t n)
{
	size_t need = b->keys_len + 4 + n;

	if (need > b->keys_cap) {
		size_t   cap = b->keys_cap ? b->keys_cap * 2 : 1024;
		uint8_t *k;
		while (cap < need) {
			cap *= 2;
		}
		if ((k = realloc(b->keys, cap)) == NULL) {
			return WB_ENOMEM;
		}
		b->keys = k;
		b->keys_cap = cap;
	}
	uint16_t fam = (uint16_t)(f - f->t->fams), len = (uint16_t)n;
	memcpy(b->keys + b->keys_len, &fam, 2);
	memcpy(b->keys + b->keys_len + 2, &len, 2);
	memcpy(b->keys + b->keys_len + 4, key, n);
	b->keys_len = need;
	return WB_OK;
}

int
hb_batch_put(hb_batch *b, hb_table *t, int fam, const void *row, size_t row_len, const void *qual,
    size_t qual_len, uint64_t version, const void *val, size_t val_len)
{
	hb_fam *f = hb_batch_fam(b, t, fam);
	uint8_t key[HB_KEY_MAX];
	int     rv;

	if (f == NULL || f->o.counter || (val == NULL && val_len != 0)) {
		return WB_EINVAL;
	}
	if ((rv = hb_cell_args(f, row, row_len, qual, qual_len)) != WB_OK) {
		return rv;
	}
	if (version == HB_LATEST) {
		version = hb_now(t);
	}
	size_t n = hb_key_encode(key, &f->fmt, row, row_len, qual, qual_len, version);
	if (f->o.max_versions != 0 && hb_batch_keep_key(b, f, key, n) != WB_OK) {
		return WB_ENOMEM;
	}
	rocksdb_writebatch_put_cf(b->wb, f->cf, (const char *)key, n, val, val_len);
	b->n++;
	return WB_OK;
}

int
hb_batch_delete_version(hb_batch *b, hb_table *t, int fam, const void *row, size_t row_len,
    const void *qual, size_t qual_len, uint64_t version)
{
	hb_fam *f = hb_batch_fam(b, t, fam);
	uint8_t key[HB_KEY_MAX];
	int     rv;

	if (f == NULL || version == HB_LATEST) {
		return WB_EINVAL;
	}
	if ((rv = hb_cell_args(f, row, row_len, qual, qual_len)) != WB_OK) {
		return rv;
	}
	size_t n = hb_key_encode(key, &f->fmt, row, row_len, qual, qual_len, version);
	rocksdb_writebatch_delete_cf(b->wb, f->cf, (const char *)key, n);
	b->n++;
	return WB_OK;
}

/* hb_bytes_cmp compares like RocksDB's bytewise comparator. */
static int
hb_bytes_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);

	return c ? c : (al > bl) - (al < bl);
}

/*
 * hb_batch_delete_range deletes [begin, end) of a family.
 *
 * RocksDB hands cells covered by a range tombstone to the compaction
 * filter, and a flush drops older point tombstones a newer range tombstone
 * covers.  The filter would then count deleted cells as versions and drop
 * live versions written later beyond max versions.  So in families with
 * max versions a range delete is written as point tombstones: one for each
 * cell now in the range and each cell this batch put there before.  A cell
 * another thread writes between this call and hb_write survives the
 * delete.  Families without max versions get one range tombstone.
 */
static void
hb_batch_delete_range(
    hb_batch *b, hb_fam *f, const uint8_t *begin, size_t blen, const uint8_t *end, size_t elen)
{
	/* ascending puts: the memtable hint RocksDB 7.8 shares with range tombstones (hb_clear) */
	if (f->o.max_versions == 0 && !f->o.ascending_puts) {
		rocksdb_writebatch_delete_range_cf(
		    b->wb, f->cf, (const char *)begin, blen, (const char *)end, elen);
		return;
	}
	rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
	rocksdb_readoptions_set_iterate_upper_bound(ro, (const char *)end, elen);
	rocksdb_readoptions_set_total_order_seek(ro, 1);
	rocksdb_iterator_t *it = rocksdb_create_iterator_cf(f->t->db, ro, f->cf);
	for (rocksdb_iter_seek(it, (const char *)begin, blen); rocksdb_iter_valid(it);
	     rocksdb_iter_next(it)) {
		size_t      klen;
		const char *k = rocksdb_iter_key(it, &klen);
		rocksdb_writebatch_delete_cf(b->wb, f->cf, k, klen);
	}
	rocksdb_iter_destroy(it);
	rocksdb_readoptions_destroy(ro);
	/* and what this batch put there before */
	uint16_t fam = (uint16_t)(f - f->t->fams);
	for (size_t off = 0; off < b->keys_len;) {
		uint16_t kf, kl;
		memcpy(&kf, b->keys + off, 2);
		memcpy(&kl, b->keys + off + 2, 2);
		const uint8_t *k = b->keys + off + 4;
		if (kf == fam && hb_bytes_cmp(k, kl, begin, blen) >= 0 &&
		    hb_bytes_cmp(k, kl, end, elen) < 0) {
			rocksdb_writebatch_delete_cf(b->wb, f->cf, (const char *)k, kl);
		}
		off += 4 + (size_t)kl;
	}
}

int
hb_batch_delete_column(hb_batch *b, hb_table *t, int fam, const void *row, size_t row_len,
    const void *qual, size_t qual_len, uint64_t version)
{
	hb_fam *f = hb_batch_fam(b, t, fam);
	uint8_t begin[HB_KEY_MAX + 1], end[HB_KEY_MAX + 1];
	size_t  cl;
	int     rv;

	/* versions <= version: [col|~version, col|FF..FF|00) */
	rv = hb_column_range(&cl, begin, end, f, row, row_len, qual, qual_len, version);
	if (rv != WB_OK) {
		return rv;
	}
	hb_batch_delete_range(b, f, begin, cl + 8, end, cl + 9);
	b->n++;
	return WB_OK;
}

int
hb_batch_delete_row(hb_batch *b, hb_table *t, int fam, const void *row, size_t row_len)
{
	hb_fam *f = hb_batch_fam(b, t, fam);
	uint8_t begin[HB_KEY_PART_MAX], end[HB_KEY_MAX + 16];
	int     rv;

	if (f == NULL) {
		return WB_EINVAL;
	}
	if (row == NULL && row_len != 0) {
		return WB_EINVAL;
	}
	if ((rv = hb_key_check_row(&f->fmt, row_len)) != WB_OK) {
		return rv;
	}
	/* every key of the row starts with enc(row): [enc(row), successor) */
	size_t bl = (size_t)(hb_key_part(begin, row, row_len, f->fmt.row_len) - begin);
	size_t el = bl;
	memcpy(end, begin, bl);
	if (!hb_key_successor(end, &el)) {
		/* an all-0xFF fixed row: pad past the longest possible key */
		memset(end + bl, 0xFF, sizeof(end) - bl);
		el = sizeof(end);
	}
	hb_batch_delete_range(b, f, begin, bl, end, el);
	b->n++;
	return WB_OK;
}

int
hb_batch_add(hb_batch *b, hb_table *t, int fam, const void *row, size_t row_len, const void *qual,
    size_t qual_len, int64_t delta)
{
	hb_fam  *f = hb_batch_fam(b, t, fam);
	uint8_t  key[HB_KEY_MAX], v[8];
	uint64_t d = (uint64_t)delta;
	int      rv;

	if (f == NULL || !f->o.counter) {
		return WB_EINVAL;
	}
	if ((rv = hb_cell_args(f, row, row_len, qual, qual_len)) != WB_OK) {
		return rv;
	}
	size_t n = hb_key_encode(key, &f->fmt, row, row_len, qual, qual_len, 0);
	for (int i = 0; i < 8; i++) {
		v[i] = (uint8_t)(d >> (8 * i));
	}
	rocksdb_writebatch_merge_cf(b->wb, f->cf, (const char *)key, n, (const char *)v, 8);
	b->n++;
	return WB_OK;
}

int
hb_write(hb_table *t, hb_batch *b)
{
	char *err = NULL;

	if (t == NULL || b == NULL || (b->t != NULL && b->t != t) || t->read_only) {
		return WB_EINVAL;
	}
	if (rocksdb_writebatch_count(b->wb) == 0) {
		return WB_OK;
	}
	hb_quiet();
	rocksdb_write(t->db, t->wo, b->wb, &err);
	return err ? hb_err_rocks(err) : WB_OK;
}

int
hb_flush(hb_table *t, int fam)
{
	hb_fam *f = hb_fam_get(t, fam);
	char   *err = NULL;

	if (f == NULL || t->read_only) {
		return WB_EINVAL;
	}
	rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
	rocksdb_flushoptions_set_wait(fo, 1);
	rocksdb_flush_cf(t->db, fo, f->cf, &err);
	rocksdb_flushoptions_destroy(fo);
	return err ? hb_err_rocks(err) : WB_OK;
}

/*
 * hb_row_bounds writes the key range of the rows [start_row, stop_row) of
 * f: every key of a row r starts with enc(r), and enc() keeps the rows'
 * order with no part a prefix of another, so [enc(start), enc(stop))
 * holds exactly those rows' keys.  A NULL end is open: begin is then
 * empty, end past the longest possible key.
 */
static int
hb_row_bounds(const hb_fam *f, const void *start_row, size_t start_len, const void *stop_row,
    size_t stop_len, uint8_t *begin, size_t *blen, uint8_t *end, size_t *elen)
{
	int rv;

	*blen = 0;
	if (start_row != NULL) {
		if ((rv = hb_key_check_row(&f->fmt, start_len)) != WB_OK) {
			return rv;
		}
		*blen = (size_t)(hb_key_part(begin, start_row, start_len, f->fmt.row_len) - begin);
	}
	if (stop_row != NULL) {
		if ((rv = hb_key_check_row(&f->fmt, stop_len)) != WB_OK) {
			return rv;
		}
		*elen = (size_t)(hb_key_part(end, stop_row, stop_len, f->fmt.row_len) - end);
	} else {
		memset(end, 0xFF, HB_KEY_MAX + 16);
		*elen = HB_KEY_MAX + 16;
	}
	return WB_OK;
}

int
hb_delete_range(hb_table *t, int fam, const void *start_row, size_t start_len, const void *stop_row,
    size_t stop_len)
{
	hb_fam  *f = hb_fam_get(t, fam);
	uint8_t  begin[HB_KEY_PART_MAX], end[HB_KEY_MAX + 16];
	size_t   bl, el;
	hb_batch b = { 0 };
	int      rv;

	if (f == NULL || t->read_only) {
		return WB_EINVAL;
	}
	if ((rv = hb_row_bounds(
	         f, start_row, start_len, stop_row, stop_len, begin, &bl, end, &el)) != WB_OK) {
		return rv;
	}
	if (hb_bytes_cmp(begin, bl, end, el) >= 0) {
		return WB_OK; /* an empty range */
	}
	if ((b.wb = rocksdb_writebatch_create()) == NULL) {
		return WB_ENOMEM;
	}
	hb_batch_delete_range(&b, f, begin, bl, end, el);
	b.n++;
	rv = hb_write(t, &b);
	rocksdb_writebatch_destroy(b.wb);
	free(b.keys);
	return rv;
}

int
hb_compact_range(hb_table *t, int fam, const void *start_row, size_t start_len,
    const void *stop_row, size_t stop_len)
{
	hb_fam *f = hb_fam_get(t, fam);
	uint8_t begin[HB_KEY_PART_MAX], end[HB_KEY_MAX + 16];
	size_t  bl, el;
	int     rv;

	if (f == NULL || t->read_only) {
		return WB_EINVAL;
	}
	if ((rv = hb_row_bounds(
	         f, start_row, start_len, stop_row, stop_len, begin, &bl, end, &el)) != WB_OK) {
		return rv;
	}
	rocksdb_compactoptions_t *co = rocksdb_compactoptions_create();
	if (co == NULL) {
		return WB_ENOMEM;
	}
	rocksdb_compactoptions_set_exclusive_manual_compaction(co, 0);
	/* RocksDB's end is inclusive: a key equal to enc(stop) is a row not deleted, and harmless */
	rocksdb_compact_range_cf_opt(t->db, f->cf, co,
	    start_row != NULL ? (const char *)begin : NULL, bl, (const char *)end, el);
	rocksdb_compactoptions_destroy(co);
	return WB_OK;
}

int
hb_compact(hb_table *t, int fam)
{
	hb_fam *f = hb_fam_get(t, fam);
	int     rv;

	if (f == NULL) {
		return WB_EINVAL;
	}
	if ((rv = hb_flush(t, fam)) != WB_OK) {
		return rv;
	}
	/* force the bottommost level through the filter too */
	rocksdb_compactoptions_t *co = rocksdb_compactoptions_create();
	rocksdb_compactoptions_set_bottommost_level_compaction(co, 2 /* kForce */);
	rocksdb_compactoptions_set_exclusive_manual_compaction(co, 0);
	rocksdb_compact_range_cf_opt(t->db, f->cf, co, NULL, 0, NULL, 0);
	rocksdb_compactoptions_destroy(co);
	return WB_OK;
}

int
hb_checkpoint(hb_table *t, const char *dir)
{
	rocksdb_checkpoint_t *cp;
	char                 *err = NULL;

	if (t == NULL || dir == NULL || dir[0] == '\0' || t->read_only) {
		return WB_EINVAL;
	}
	if ((cp = rocksdb_checkpoint_object_create(t->db, &err)) == NULL || err != NULL) {
		return err ? hb_err_rocks(err) : WB_ENOMEM;
	}
	/* 0: flush the memtables first, so the copy holds files, not a WAL to replay */
	rocksdb_checkpoint_create(cp, dir, 0, &err);
	rocksdb_checkpoint_object_destroy(cp);
	return err ? hb_err_rocks(err) : WB_OK;
}

#define HB_CLEAR_BATCH 65536 /* deletes per write while clearing */

int
hb_clear(hb_table *t, int fam)
{
	hb_fam *f = hb_fam_get(t, fam);
	char   *err = NULL;
	size_t  n = 0;

	if (f == NULL || t->read_only) {
		return WB_EINVAL;
	}
	/*
	 * One delete per key rather than one range delete: a family with
	 * ascending_puts has a memtable insert hint, which RocksDB 7.8 shares
	 * between the family's skip list and its range tombstones' one, and
	 * asserts (or corrupts the memtable) on the first range delete.
	 */
	rocksdb_iterator_t   *it = rocksdb_create_iterator_cf(t->db, t->ro, f->cf);
	rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
	if (it == NULL || wb == NULL) {
		rocksdb_iter_destroy(it);
		rocksdb_writebatch_destroy(wb);
		return WB_ENOMEM;
	}
	for (rocksdb_iter_seek_to_first(it); err == NULL && rocksdb_iter_valid(it);
	     rocksdb_iter_next(it)) {
		size_t      klen;
		const char *k = rocksdb_iter_key(it, &klen);
		rocksdb_writebatch_delete_cf(wb, f->cf, k, klen);
		if (++n % HB_CLEAR_BATCH == 0) {
			rocksdb_write(t->db, t->wo, wb, &err);
			rocksdb_writebatch_clear(wb);
		}
	}
	if (err == NULL) {
		rocksdb_iter_get_error(it, &err);
	}
	if (err == NULL && rocksdb_writebatch_count(wb) > 0) {
		rocksdb_write(t->db, t->wo, wb, &err);
	}
	rocksdb_writebatch_destroy(wb);
	rocksdb_iter_destroy(it);
	return err ? hb_err_rocks(err) : WB_OK;
}

/* hb_prop_u64 reads a numeric property of a column family. */
static uint64_t
hb_prop_u64(hb_table *t, hb_fam *f, const char *name)
{
	char    *v = rocksdb_property_value_cf(t->db, f->cf, name);
	uint64_t x = 0;

	if (v != NULL) {
		x = strtoull(v, NULL, 10);
		rocksdb_free(v);
	}
	return x;
}

uint64_t
hb_disk_bytes(void *table)
{
	hb_table *t = table;
	uint64_t  total = 0;

	for (size_t i = 0; i < t->nfams; i++) {
		total += hb_prop_u64(t, &t->fams[i], "rocksdb.total-sst-files-size");
	}
	return total;
}

int
hb_family_stats(hb_table *t, int fam, uint64_t *disk_bytes, uint64_t *keys)
{
	hb_fam *f = hb_fam_get(t, fam);

	if (f == NULL) {
		return WB_EINVAL;
	}
	if (disk_bytes) {
		*disk_bytes = hb_prop_u64(t, f, "rocksdb.total-sst-files-size");
	}
	if (keys) {
		*keys = hb_prop_u64(t, f, "rocksdb.estimate-num-keys");
	}
	return WB_OK;
}
