/*
 * hb_int.h - the table and family structs shared by the store's files.
 */
#ifndef HB_INT_H
#define HB_INT_H

#include <rocksdb/c.h>
#include <stdatomic.h>
#include <time.h>

#include "hb.h"
#include "hb_key.h"

typedef struct hb_fam {
	hb_family_opts                       o; /* name points at name below */
	char                                *name;
	hb_keyfmt                            fmt;
	struct hb_table                     *t;
	rocksdb_column_family_handle_t      *cf;
	rocksdb_options_t                   *opts;
	rocksdb_block_based_table_options_t *bbt;
	bool                                 prefix_rows; /* fixed-row prefix extractor */
} hb_fam;

struct hb_table {
	rocksdb_t              *db;
	rocksdb_options_t      *dbopts;
	rocksdb_writeoptions_t *wo;
	rocksdb_readoptions_t  *ro; /* plain point reads (no bounds) */
	rocksdb_cache_t        *cache;
	rocksdb_filterpolicy_t *bloom; /* owned by the table options */
	hb_fam                 *fams;
	size_t                  nfams;
	/* column families present on disk that the caller did not name */
	rocksdb_column_family_handle_t **extra;
	size_t                           nextra;
	rocksdb_column_family_handle_t  *dflt; /* RocksDB's default family: the attributes */
	rocksdb_options_t               *extra_opts;
	uint64_t (*now_ms)(void *arg);
	void *now_arg;
	bool  read_only; /* opened with hb_table_opts.read_only: no write of any kind */
	/* compaction filters alive on RocksDB's threads (see hb_close) */
	atomic_uint filters;
};

/* hb_now returns the table's clock in Unix ms (a test's clock, if set). */
static inline uint64_t
hb_now(const hb_table *t)
{
	struct timespec ts;

	if (t->now_ms != NULL) {
		return t->now_ms(t->now_arg);
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* hb_expired says whether a version of a family is past its TTL at now. */
static inline bool
hb_expired(const hb_fam *f, uint64_t version, uint64_t now)
{
	if (f->o.ttl_ms == 0) {
		return false;
	}
	uint64_t ms = f->o.version_ms ? f->o.version_ms(version) : version;
	return ms <= now && now - ms >= f->o.ttl_ms;
}

/*
 * hb_quiet turns RocksDB's perf counters off on the calling thread (once):
 * on by default, they cost every key comparison in a memtable a
 * thread-local access, through a call into the shared library.
 */
static inline void
hb_quiet(void)
{
	static _Thread_local bool quiet;

	if (!quiet) {
		rocksdb_set_perf_level(rocksdb_disable);
		quiet = true;
	}
}

/* hb_fam_get checks a family index and returns the family or NULL (every family operation starts here). */
static inline hb_fam *
hb_fam_get(hb_table *t, int fam)
{
	hb_quiet();
	if (t == NULL || fam < 0 || (size_t)fam >= t->nfams) {
		return NULL;
	}
	return &t->fams[fam];
}

/* hb_err_rocks converts a RocksDB error string (freed here) to a code and
 * keeps its text for hb_last_error. */
int hb_err_rocks(char *err);

/* hb_err_set keeps msg for hb_last_error and returns code. */
int hb_err_set(int code, const char *msg);

/* hb_filter_factory creates the compaction filter factory of a family
 * (max versions and TTL), or NULL if it needs none. */
rocksdb_compactionfilterfactory_t *hb_filter_factory(hb_fam *f);

/* hb_counter_merge creates the i64 add merge operator of counter families. */
rocksdb_mergeoperator_t *hb_counter_merge(void);

#endif
