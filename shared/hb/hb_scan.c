/*
 * hb_scan.c - row-range scans over a family.
 *
 * A scan is one RocksDB iterator between a lower key (start row and
 * qualifier, row prefix, resume key) and an upper bound (stop row, the
 * successor of the row prefix).  It streams cell by cell and keeps only
 * the current column's prefix to count its versions, newest first:
 *
 *   fam_idx  versions of the column passed so far (the family's max
 *            versions, like the compaction filter; not applied with
 *            all_versions, which finds the cells beyond it that no
 *            compaction dropped yet, so that a delete can reach them)
 *   ret_idx  versions of the column returned so far (the scan's max)
 *
 * A column is left with one seek to [col|FF..FF|00] once nothing more of
 * it can be returned (max reached, expired, older than min_version, or a
 * qualifier outside qual_prefix).
 *
 * Paging: hb_scan_resume positions on the next cell the scan would return
 * and gives its key.  A scan opened with that key starts there; when
 * versions are counted it first re-reads the column from its newest
 * version (at most max versions cells) to restore the counts.
 */
#include <stdlib.h>
#include <string.h>

#include "hb_int.h"

struct hb_scan {
	hb_table              *t;
	hb_fam                *f;
	rocksdb_readoptions_t *ro;
	rocksdb_iterator_t    *it;
	size_t                 kmax; /* size of each buffer below */
	uint8_t               *lower, *upper, *col, *scratch, *resume, *qprefix;
	size_t                 lower_len, upper_len, col_len, resume_len, qprefix_len;
	bool                   has_upper, have_col;
	uint32_t               fam_max, scan_max, fam_idx, ret_idx;
	uint64_t               min_v, max_v, now;
	size_t                 limit, returned;
	const uint8_t         *key; /* the positioned cell's key */
	size_t                 klen;
	bool                   positioned; /* iterator is on the next cell to return */
	bool                   need_next;  /* iterator is on a consumed cell */
	bool                   done;
	int                    err;
};

/* hb_scan_part_max is the longest encoding of a part of fixed length n. */
static size_t
hb_scan_part_max(unsigned n)
{
	if (n == HB_NONE) {
		return 0;
	}
	return n == HB_VARLEN ? HB_KEY_PART_MAX : n;
}

/* hb_scan_cmp compares byte strings like RocksDB's bytewise comparator. */
static int
hb_scan_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	int c = memcmp(a, b, alen < blen ? alen : blen);

	if (c != 0) {
		return c;
	}
	return alen < blen ? -1 : alen > blen;
}

/* hb_scan_seek_past_column moves to the first key after the current column. */
static void
hb_scan_seek_past_column(hb_scan *s)
{
	memcpy(s->scratch, s->col, s->col_len);
	memset(s->scratch + s->col_len, 0xFF, 8);
	s->scratch[s->col_len + 8] = 0;
	rocksdb_iter_seek(s->it, (const char *)s->scratch, s->col_len + 9);
}

/* hb_scan_qual_ok says whether a new column's qualifier passes qual_prefix. */
static int
hb_scan_qual_ok(hb_scan *s, const uint8_t *key, size_t klen, bool *ok)
{
	hb_keyparts kp;
	int         rv;

	*ok = true;
	if (s->qprefix_len == 0) {
		return WB_OK;
	}
	if ((rv = hb_key_decode(&s->f->fmt, key, klen, s->scratch, &kp)) != WB_OK) {
		return rv;
	}
	*ok = kp.qual_len >= s->qprefix_len && memcmp(kp.qual, s->qprefix, s->qprefix_len) == 0;
	return WB_OK;
}

/* hb_scan_advance positions the iterator on the next cell to return, or
 * sets done (or err). */
static void
hb_scan_advance(hb_scan *s)
{
	if (s->positioned || s->done || s->err) {
		return;
	}
	if (s->need_next) {
		rocksdb_iter_next(s->it);
		s->need_next = false;
	}
	for (;;) {
		if (!rocksdb_iter_valid(s->it)) {
			char *err = NULL;
			rocksdb_iter_get_error(s->it, &err);
			if (err != NULL) {
				s->err = hb_err_rocks(err);
			}
			s->done = true;
			return;
		}
		size_t         klen;
		const uint8_t *key = (const uint8_t *)rocksdb_iter_key(s->it, &klen);
		if (klen < 8 || klen > s->kmax) {
			s->err = hb_err_set(WB_ECORRUPT, "bad cell key length");
			return;
		}
		size_t clen = klen - 8;
		if (!s->have_col || clen != s->col_len || memcmp(key, s->col, clen) != 0) {
			bool ok;
			memcpy(s->col, key, clen);
			s->col_len = clen;
			s->have_col = true;
			s->fam_idx = s->ret_idx = 0;
			if ((s->err = hb_scan_qual_ok(s, key, klen, &ok)) != WB_OK) {
				return;
			}
			if (!ok) {
				hb_scan_seek_past_column(s);
				continue;
			}
		}
		uint64_t version = hb_key_version(key, klen);
		uint32_t idx = s->fam_idx++;
		if ((s->fam_max && idx >= s->fam_max) ||
		    (s->scan_max && s->ret_idx >= s->scan_max) || version < s->min_v ||
		    hb_expired(s->f, version, s->now)) {
			hb_scan_seek_past_column(s);
			continue;
		}
		if (version > s->max_v) {
			if (s->fam_max == 0) { /* nothing to count: jump */
				memcpy(s->scratch, s->col, clen);
				hb_key_put_version(s->scratch + clen, s->max_v);
				rocksdb_iter_seek(s->it, (const char *)s->scratch, klen);
			} else {
				rocksdb_iter_next(s->it);
			}
			continue;
		}
		s->key = key;
		s->klen = klen;
		s->positioned = true;
		return;
	}
}

/* hb_scan_consume marks the positioned cell as read. */
static void
hb_scan_consume(hb_scan *s)
{
	s->positioned = false;
	s->need_next = true;
	s->ret_idx++;
}

/* hb_scan_bounds computes the lower key and the upper bound. */
static int
hb_scan_bounds(hb_scan *s, const hb_scan_opts *o)
{
	const hb_keyfmt *fmt = &s->f->fmt;
	uint8_t         *p;
	int              rv;

	s->lower_len = 0;
	if (o->start_row != NULL || o->start_row_len) {
		if ((o->start_row == NULL) ||
		    (rv = hb_key_check_row(fmt, o->start_row_len)) != WB_OK) {
			return o->start_row ? rv : WB_EINVAL;
		}
		p = hb_key_part(s->lower, o->start_row, o->start_row_len, fmt->row_len);
		if (o->start_qual != NULL) {
			if ((rv = hb_key_check_qual(fmt, o->start_qual_len)) != WB_OK) {
				return rv;
			}
			p = hb_key_part(p, o->start_qual, o->start_qual_len, fmt->qual_len);
		}
		s->lower_len = (size_t)(p - s->lower);
	} else if (o->start_qual != NULL || o->start_qual_len) {
		return WB_EINVAL; /* a start qualifier needs its start row */
	}
	if (o->row_prefix_len > 0) {
		size_t max = fmt->row_len == HB_VARLEN ? HB_MAX_PART : fmt->row_len;
		if (o->row_prefix == NULL || o->row_prefix_len > max) {
			return WB_EINVAL;
		}
		uint8_t *pre = s->scratch;
		size_t   n;
		if (fmt->row_len == HB_VARLEN) {
			n = (size_t)(hb_key_escape(pre, o->row_prefix, o->row_prefix_len) - pre);
		} else {
			memcpy(pre, o->row_prefix, n = o->row_prefix_len);
		}
		if (hb_scan_cmp(pre, n, s->lower, s->lower_len) > 0) {
			memcpy(s->lower, pre, n);
			s->lower_len = n;
		}
		if (hb_key_successor(pre, &n)) {
			memcpy(s->upper, pre, n);
			s->upper_len = n;
			s->has_upper = true;
		}
	}
	if (o->stop_row != NULL || o->stop_row_len) {
		if ((o->stop_row == NULL) ||
		    (rv = hb_key_check_row(fmt, o->stop_row_len)) != WB_OK) {
			return o->stop_row ? rv : WB_EINVAL;
		}
		uint8_t *stop = s->scratch;
		size_t   n =
		    (size_t)(hb_key_part(stop, o->stop_row, o->stop_row_len, fmt->row_len) - stop);
		if (!s->has_upper || hb_scan_cmp(stop, n, s->upper, s->upper_len) < 0) {
			memcpy(s->upper, stop, n);
			s->upper_len = n;
			s->has_upper = true;
		}
	}
	if (o->qual_prefix_len > 0) {
		if (o->qual_prefix == NULL || o->qual_prefix_len > HB_MAX_PART ||
		    fmt->qual_len == HB_NONE ||
		    (fmt->qual_len != HB_VARLEN && o->qual_prefix_len > fmt->qual_len)) {
			return WB_EINVAL;
		}
		memcpy(s->qprefix, o->qual_prefix, o->qual_prefix_len);
		s->qprefix_len = o->qual_prefix_len;
	}
	return WB_OK;
}

void
hb_scan_opts_id_row(hb_scan_opts *o, uint8_t row[8], uint64_t id)
{
	hb_u64_be(row, id);
	*o = (hb_scan_opts) {
		.start_row = row,
		.start_row_len = 8,
		.row_prefix = row,
		.row_prefix_len = 8,
	};
}

int
hb_scan_open(hb_scan **out, hb_table *t, int fam, const hb_scan_opts *opts)
{
	static const hb_scan_opts none;
	hb_fam                   *f = hb_fam_get(t, fam);
	hb_scan                  *s;
	int                       rv;

	if (out == NULL) {
		return WB_EINVAL;
	}
	*out = NULL;
	if (f == NULL) {
		return WB_EINVAL;
	}
	if (opts == NULL) {
		opts = &none;
	}
	if (opts->resume_len > 0 && opts->resume == NULL) {
		return WB_EINVAL;
	}

	/* buffers sized for the family's longest key (32 bytes for an inbox;
	 * an escaped row prefix fits the longest escaped row) */
	size_t kmax = hb_scan_part_max(f->fmt.row_len) + hb_scan_part_max(f->fmt.qual_len) + 16;
	if (opts->resume_len > kmax || opts->qual_prefix_len > HB_MAX_PART) {
		return WB_EINVAL;
	}
	if ((s = malloc(sizeof(*s) + 5 * kmax + opts->qual_prefix_len)) == NULL) {
		return WB_ENOMEM;
	}
	memset(s, 0, sizeof(*s));
	uint8_t *p = (uint8_t *)(s + 1);
	s->lower = p, p += kmax;
	s->upper = p, p += kmax;
	s->col = p, p += kmax;
	s->scratch = p, p += kmax;
	s->resume = p, p += kmax;
	s->qprefix = p;
	s->kmax = kmax;
	s->t = t;
	s->f = f;
	s->now = f->o.ttl_ms ? hb_now(t) : 0; /* the clock may be a system call */
	s->fam_max = opts->all_versions ? 0 : f->o.max_versions;
	s->scan_max = opts->max_versions;
	s->min_v = opts->min_version;
	s->max_v = opts->max_version ? opts->max_version : UINT64_MAX;
	s->limit = opts->limit;
	if ((rv = hb_scan_bounds(s, opts)) != WB_OK) {
		free(s);
		return rv;
	}

	s->ro = rocksdb_readoptions_create();
	if (s->has_upper) {
		rocksdb_readoptions_set_iterate_upper_bound(
		    s->ro, (const char *)s->upper, s->upper_len);
	}
	/* one whole fixed-length row: the row bloom filter may skip files */
	if (f->prefix_rows && opts->row_prefix_len == f->fmt.row_len) {
		rocksdb_readoptions_set_prefix_same_as_start(s->ro, 1);
	} else {
		rocksdb_readoptions_set_total_order_seek(s->ro, 1);
	}
	s->it = rocksdb_create_iterator_cf(t->db, s->ro, f->cf);

	const uint8_t *target = s->lower;
	size_t         tlen = s->lower_len;
	bool           recount = false;
	if (opts->resume_len > 0) {
		const uint8_t *r = opts->resume;
		size_t         rl = opts->resume_len;
		if (rl < 8) {
			hb_scan_close(s);
			return WB_EINVAL;
		}
		memcpy(s->resume, r, rl);
		if (s->fam_max || s->scan_max) {
			/* start at the column's newest version to recount */
			memcpy(s->scratch, r, rl - 8);
			hb_key_put_version(s->scratch + rl - 8, HB_LATEST);
			recount = true;
			if (hb_scan_cmp(s->scratch, rl, target, tlen) > 0) {
				target = s->scratch, tlen = rl;
			}
		} else if (hb_scan_cmp(s->resume, rl, target, tlen) > 0) {
			target = s->resume, tlen = rl;
		}
	}
	if (tlen > 0) {
		rocksdb_iter_seek(s->it, (const char *)target, tlen);
	} else {
		rocksdb_iter_seek_to_first(s->it);
	}
	if (recount) {
		for (uint32_t n = 0; n < UINT32_MAX; n++) {
			hb_scan_advance(s);
			if (!s->positioned) {
				break;
			}
			size_t      klen;
			const char *k = rocksdb_iter_key(s->it, &klen);
			if (hb_scan_cmp((const uint8_t *)k, klen, s->resume, opts->resume_len) >=
			    0) {
				break;
			}
			hb_scan_consume(s);
		}
	}
	*out = s;
	return WB_OK;
}

int
hb_scan_next(hb_scan *s, hb_cell *cell)
{
	hb_keyparts kp;
	int         rv;

	if (s == NULL || cell == NULL) {
		return WB_EINVAL;
	}
	if (s->err) {
		return s->err;
	}
	if (s->limit && s->returned >= s->limit) {
		return WB_EEND;
	}
	hb_scan_advance(s);
	if (s->err) {
		return s->err;
	}
	if (s->done) {
		return WB_EEND;
	}
	size_t      vlen;
	const char *val = rocksdb_iter_value(s->it, &vlen);
	if ((rv = hb_key_decode(&s->f->fmt, s->key, s->klen, s->scratch, &kp)) != WB_OK) {
		return s->err = hb_err_set(rv, "bad cell key");
	}
	cell->row = kp.row;
	cell->row_len = kp.row_len;
	cell->qual = kp.qual;
	cell->qual_len = kp.qual_len;
	cell->version = kp.version;
	cell->value = val;
	cell->value_len = vlen;
	hb_scan_consume(s);
	s->returned++;
	return WB_OK;
}

int
hb_scan_resume(hb_scan *s, const void **key, size_t *len)
{
	if (s == NULL || key == NULL || len == NULL) {
		return WB_EINVAL;
	}
	*key = NULL;
	*len = 0;
	if (s->err) {
		return s->err;
	}
	hb_scan_advance(s);
	if (s->err) {
		return s->err;
	}
	if (s->done) {
		return WB_OK;
	}
	size_t      klen;
	const char *k = rocksdb_iter_key(s->it, &klen);
	memcpy(s->resume, k, klen);
	*key = s->resume;
	*len = klen;
	return WB_OK;
}

void
hb_scan_close(hb_scan *s)
{
	if (s == NULL) {
		return;
	}
	if (s->it) {
		rocksdb_iter_destroy(s->it);
	}
	if (s->ro) {
		rocksdb_readoptions_destroy(s->ro);
	}
	free(s);
}

int
hb_next_id_row(hb_table *t, int fam, uint64_t id, uint64_t *row)
{
	uint8_t      start[8];
	hb_scan_opts o = { .start_row = start, .start_row_len = 8, .limit = 1 };
	hb_scan     *s = NULL;
	hb_cell      cell;
	int          rc;

	hb_u64_be(start, id);
	if ((rc = hb_scan_open(&s, t, fam, &o)) == WB_OK &&
	    (rc = hb_scan_next(s, &cell)) == WB_OK) {
		if (cell.row_len == 8) {
			*row = hb_be_u64(cell.row);
		} else {
			rc = WB_ECORRUPT;
		}
	}
	hb_scan_close(s);
	return rc;
}
