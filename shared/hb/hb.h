/*
 * hb.h - the HBase data model on RocksDB.
 *
 * A table is one RocksDB database; a family is a column family with its
 * own settings; a cell is (row, family, qualifier, version) -> value, and
 * versions of a column are read newest first.  Keys within a family sort,
 * under RocksDB's default bytewise comparator, in HBase order:
 *
 *   +-----------+-----------------+--------------------------------+
 *   | enc(row)  | enc(qualifier)  | big-endian(UINT64_MAX-version) |
 *   +-----------+-----------------+--------------------------------+
 *
 * enc() of a variable-length part escapes 0x00 as 0x00 0xFF and ends with
 * 0x00 0x01, so "a" < "a\0" < "ab" and no part is a prefix of another.  A
 * family may declare fixed-length rows or qualifiers (say 8-byte big-endian
 * ids): those are stored raw.  A qualifier length of HB_NONE means the
 * family has no qualifiers at all (0 bytes), like an inbox row whose only
 * column is versioned by post id:  key = reader(8) | ~postid(8).
 *
 * Max versions and TTL are applied on every read and dropped for good at
 * compaction.  TTL counts from the cell's version read as a time (HBase's
 * timestamp); a family can say how to turn its versions into Unix ms.
 * As in HBase, deleting one of a column's newest versions lets a read
 * show the version beyond the limit again until a compaction that does
 * not see the delete drops it ("major compactions change query
 * results"); the inbox's cap is a bound, not an exact count, for that.
 *
 * All functions return a wb_err code (0 = WB_OK) and never abort on bad
 * input or I/O errors.  A table is safe to use from many threads.
 */
#ifndef HB_H
#define HB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wb_errors.h"

#define HB_VARLEN   0          /* row_len/qual_len: variable length, escaped */
#define HB_NONE     0xFFFFu    /* qual_len: the family has no qualifiers */
#define HB_LATEST   UINT64_MAX /* version argument: the newest version */
#define HB_MAX_PART 1024       /* longest row or qualifier, bytes (else WB_ETOOBIG) */

typedef struct hb_table hb_table;
typedef struct hb_batch hb_batch;
typedef struct hb_scan  hb_scan;

typedef enum hb_compression {
	HB_COMPRESS_NONE = 0,
	HB_COMPRESS_LZ4,
	HB_COMPRESS_ZSTD,
} hb_compression;

/* A column family's settings.  Zero means: unlimited versions, no TTL,
 * variable-length rows and qualifiers, no compression, no bloom filter. */
typedef struct hb_family_opts {
	const char    *name;
	uint32_t       max_versions;
	uint64_t       ttl_ms;
	unsigned       row_len;  /* HB_VARLEN or fixed bytes */
	unsigned       qual_len; /* HB_VARLEN, HB_NONE or fixed bytes */
	hb_compression compression;
	int            bloom_bits; /* bits per key, 0 = no bloom filter */
	bool           counter;    /* cells are u64 counters (hb_batch_add) */
	size_t
	    blob_min_bytes; /* values this large live in blob files, apart from the keys (0: never) */
	/* version_ms maps a version to Unix ms for TTL; NULL: version is ms. */
	uint64_t (*version_ms)(uint64_t version);
	/* Write path (zero: RocksDB's defaults). */
	bool     ascending_puts;  /* batches put ascending runs of keys (fan-out) */
	unsigned write_buffer_mb; /* memtable size, MiB (default 64) */
	unsigned write_buffers;   /* memtables in memory before writes stall (default 2) */
} hb_family_opts;

/* Table-wide settings. */
typedef struct hb_table_opts {
	bool   sync;     /* fsync the WAL on every write (power-loss safe) */
	size_t cache_mb; /* block cache, MiB (default 64) */
	/* now_ms is the clock used for TTL (tests inject one); NULL: wall clock. */
	uint64_t (*now_ms)(void *arg);
	void *now_arg;
	/* read_only opens an existing table for reads alone, beside nothing that writes it (a stopped
	 * daemon's store, to inspect): every family named must be on disk, and writes, flushes,
	 * compactions and attribute updates answer WB_EINVAL. */
	bool read_only;
} hb_table_opts;

/* A cell as read back.  Pointers are valid until the next call on the
 * scan (or, for hb_get, until hb_cell_free). */
typedef struct hb_cell {
	const void *row;
	size_t      row_len;
	const void *qual;
	size_t      qual_len;
	uint64_t    version;
	const void *value;
	size_t      value_len;
} hb_cell;

/* hb_open opens (creating if needed) the table at path with the given
 * families; families are then named by their index in fams. */
int hb_open(hb_table **out, const char *path, const hb_family_opts *fams, size_t nfams,
    const hb_table_opts *opts);

/* hb_close flushes and closes a table; NULL is ignored. */
void hb_close(hb_table *t);

/* hb_last_error returns RocksDB's message for the last failure on this thread, or "". */
const char *hb_last_error(void);

/* hb_put writes one cell (version HB_LATEST means now). */
int hb_put(hb_table *t, int fam, const void *row, size_t row_len, const void *qual, size_t qual_len,
    uint64_t version, const void *val, size_t val_len);

/* hb_get reads the newest live version of a column into a malloc'd cell
 * freed with hb_cell_free; WB_ENOTFOUND if none. */
int hb_get(hb_table *t, int fam, const void *row, size_t row_len, const void *qual, size_t qual_len,
    hb_cell **out);

/* hb_live tells whether a cell of version in family fam is still read (within the family's TTL by the table's clock). */
bool hb_live(hb_table *t, int fam, uint64_t version);

/* hb_cell_free frees a cell returned by hb_get. */
void hb_cell_free(hb_cell *c);

/*
 * hb_attr_get reads a table attribute (HBase's table descriptor values: a
 * name -> bytes map beside the families, in RocksDB's default family, so
 * checkpoints carry it) into buf (cap bytes, NUL-terminated) and its
 * length into *len; WB_ENOTFOUND if unset, WB_ETOOBIG if it does not fit.
 */
int hb_attr_get(hb_table *t, const char *name, char *buf, size_t cap, size_t *len);

/* hb_attr_set writes a table attribute (through the WAL). */
int hb_attr_set(hb_table *t, const char *name, const void *value, size_t len);

/* hb_counter_get reads a counter cell (0 if it was never added to). */
int hb_counter_get(hb_table *t, int fam, const void *row, size_t row_len, const void *qual,
    size_t qual_len, int64_t *out);

/* hb_batch_new creates an empty batch: writes that commit all or nothing. */
int hb_batch_new(hb_batch **out);

/* hb_batch_free frees a batch; NULL is ignored. */
void hb_batch_free(hb_batch *b);

/* hb_batch_clear empties a batch for reuse. */
void hb_batch_clear(hb_batch *b);

/* hb_batch_count returns the number of operations in a batch. */
size_t hb_batch_count(const hb_batch *b);

/* hb_batch_put adds a cell write (version HB_LATEST means now). */
int hb_batch_put(hb_batch *b, hb_table *t, int fam, const void *row, size_t row_len,
    const void *qual, size_t qual_len, uint64_t version, const void *val, size_t val_len);

/* hb_batch_delete_version deletes exactly one version of a column. */
int hb_batch_delete_version(hb_batch *b, hb_table *t, int fam, const void *row, size_t row_len,
    const void *qual, size_t qual_len, uint64_t version);

/* hb_batch_delete_column deletes all versions <= version of a column
 * (HB_LATEST: every version). */
int hb_batch_delete_column(hb_batch *b, hb_table *t, int fam, const void *row, size_t row_len,
    const void *qual, size_t qual_len, uint64_t version);

/* hb_batch_delete_row deletes every cell of a row in a family. */
int hb_batch_delete_row(hb_batch *b, hb_table *t, int fam, const void *row, size_t row_len);

/* hb_batch_add adds delta to a counter cell (family declared counter). */
int hb_batch_add(hb_batch *b, hb_table *t, int fam, const void *row, size_t row_len,
    const void *qual, size_t qual_len, int64_t delta);

/* hb_write commits a batch atomically. */
int hb_write(hb_table *t, hb_batch *b);

/* Scan settings.  Zero/NULL means unbounded / no filter / family max. */
typedef struct hb_scan_opts {
	const void *start_row; /* first row, inclusive */
	size_t      start_row_len;
	const void *start_qual; /* in start_row only: first qualifier, inclusive */
	size_t      start_qual_len;
	const void *stop_row; /* last row, exclusive */
	size_t      stop_row_len;
	const void *row_prefix; /* only rows starting with these bytes */
	size_t      row_prefix_len;
	const void *qual_prefix; /* only qualifiers starting with these bytes */
	size_t      qual_prefix_len;
	uint32_t    max_versions; /* per column; 0 = the family's */
	uint64_t    min_version;  /* versions in [min_version, max_version] */
	uint64_t    max_version;  /* 0 = no upper bound */
	size_t      limit;        /* cells per page; 0 = no limit */
	const void *resume;       /* resume key from hb_scan_resume */
	size_t      resume_len;
	bool        all_versions; /* also versions beyond the family's max versions, not yet
	                           * compacted away (a delete of newer ones would bring them
	                           * back): for finding every cell to delete */
} hb_scan_opts;

/* hb_scan_opts_id_row sets o to scan only the fixed 8-byte row of id,
 * newest version first, every other setting zero (the caller adds version
 * bounds, a limit and the like); id is written big-endian into row, which
 * must stay valid until hb_scan_open. */
void hb_scan_opts_id_row(hb_scan_opts *o, uint8_t row[8], uint64_t id);

/* hb_scan_open starts a scan over a family (opts may be NULL: everything). */
int hb_scan_open(hb_scan **out, hb_table *t, int fam, const hb_scan_opts *opts);

/* hb_scan_next reads the next live cell; WB_EEND when the scan or page is done. */
int hb_scan_next(hb_scan *s, hb_cell *cell);

/* hb_scan_resume gives the key to resume after the last cell read (len 0
 * if the scan reached its end); valid until the next call on s. */
int hb_scan_resume(hb_scan *s, const void **key, size_t *len);

/* hb_scan_close ends a scan; NULL is ignored. */
void hb_scan_close(hb_scan *s);

/* hb_next_id_row finds the first row of fam at or above id among rows
 * keyed by an 8-byte id (one seek): WB_EEND if none, WB_ECORRUPT if that
 * row's key is not 8 bytes. */
int hb_next_id_row(hb_table *t, int fam, uint64_t id, uint64_t *row);

/*
 * hb_delete_range deletes every cell of the rows [start_row, stop_row) of
 * a family in one atomic write (stop_row NULL: to the family's end).  A
 * family without max versions or ascending puts gets one range tombstone
 * whatever the range holds; the others get one delete per cell now in the
 * range (hb_batch_delete_row says why), so keep their ranges small.  The
 * space returns at compaction (hb_compact_range).
 */
int hb_delete_range(hb_table *t, int fam, const void *start_row, size_t start_len,
    const void *stop_row, size_t stop_len);

/* hb_compact_range compacts the rows [start_row, stop_row) of a family (NULL: that end open),
 * its memtable first if it holds some: what a delete there left behind is dropped from disk. */
int hb_compact_range(hb_table *t, int fam, const void *start_row, size_t start_len,
    const void *stop_row, size_t stop_len);

/* hb_compact runs a full compaction of a family (drops expired and excess versions). */
int hb_compact(hb_table *t, int fam);

/* hb_flush flushes a family's memtable to disk. */
int hb_flush(hb_table *t, int fam);

/*
 * hb_checkpoint writes a consistent copy of the whole table, every family
 * as of one instant, into dir (a folder that must not exist yet; its
 * parent must), while the table keeps serving: RocksDB hard-links the
 * immutable files when dir is on the same file system and copies them
 * otherwise.  The copy opens with hb_open like any table.
 */
int hb_checkpoint(hb_table *t, const char *dir);

/* hb_clear deletes every cell of a family (one delete per key, in large batches; the space returns at compaction). */
int hb_clear(hb_table *t, int fam);

/* hb_family_stats reports a family's live on-disk bytes (SST files) and estimated key count. */
int hb_family_stats(hb_table *t, int fam, uint64_t *disk_bytes, uint64_t *keys);

/* hb_disk_bytes returns a table's live on-disk bytes (SST files) over all
 * its families; its argument is the hb_table, so it serves directly as a
 * stats gauge (rt_server_gauge(srv, "store_bytes", hb_disk_bytes, t)). */
uint64_t hb_disk_bytes(void *table);

/* hb_u64_be writes v big-endian into 8 bytes (for id rows and qualifiers). */
void hb_u64_be(void *dst, uint64_t v);

/* hb_be_u64 reads 8 big-endian bytes. */
uint64_t hb_be_u64(const void *src);

#endif
