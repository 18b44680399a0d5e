/*
 * hb_key_fuzz.c - libFuzzer target for the store's cell key encoding.
 *
 * The input picks a key format (variable or fixed rows; variable, fixed
 * or no qualifiers) and two cells (row, qualifier, version).  For each:
 * encode, decode back to the same parts, the column prefix is the key
 * less its 8 version bytes.  For the pair: the encoded keys compare
 * (memcmp, RocksDB's bytewise order) exactly as HBase orders the cells:
 * row ascending, qualifier ascending, version descending.  A column
 * prefix's successor sorts above every key of that column.  Any input
 * is also decoded as a raw key: an error or parts that re-encode to it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hb_key.h"
#include "wb_errors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct hk_cell {
	const uint8_t *row, *qual;
	size_t         row_len, qual_len;
	uint64_t       version;
} hk_cell;

static void
hk_fail(const char *what)
{
	fprintf(stderr, "hb_key_fuzz: %s\n", what);
	abort();
}

/* hk_take reads a length-prefixed part (first byte: length, capped by what is left). */
static const uint8_t *
hk_take(const uint8_t **p, size_t *n, size_t want, size_t *len)
{
	const uint8_t *s = *p;

	if (want > *n) {
		want = *n;
	}
	*len = want;
	*p += want;
	*n -= want;
	return s;
}

static uint64_t
hk_u64(const uint8_t **p, size_t *n)
{
	uint64_t v = 0;

	for (int i = 0; i < 8 && *n > 0; i++) {
		v = v << 8 | **p;
		(*p)++;
		(*n)--;
	}
	return v;
}

static int
hk_cmp_bytes(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	int c = memcmp(a, b, an < bn ? an : bn);

	if (c != 0) {
		return c < 0 ? -1 : 1;
	}
	return an < bn ? -1 : an > bn ? 1 : 0;
}

/* hk_cmp orders two cells as HBase does. */
static int
hk_cmp(const hk_cell *a, const hk_cell *b)
{
	int c = hk_cmp_bytes(a->row, a->row_len, b->row, b->row_len);

	if (c == 0) {
		c = hk_cmp_bytes(a->qual, a->qual_len, b->qual, b->qual_len);
	}
	if (c == 0 && a->version != b->version) {
		c = a->version > b->version ? -1 : 1; /* newest first */
	}
	return c;
}

/* hk_parse reads one cell of format f from the input. */
static void
hk_parse(const hb_keyfmt *f, const uint8_t **p, size_t *n, hk_cell *c)
{
	size_t want;

	want = f->row_len != HB_VARLEN ? f->row_len : (*n > 0 ? (size_t)(*p)[0] % 40 : 0);
	if (f->row_len == HB_VARLEN && *n > 0) {
		(*p)++;
		(*n)--;
	}
	c->row = hk_take(p, n, want, &c->row_len);
	if (f->qual_len == HB_NONE) {
		c->qual = (const uint8_t *)"";
		c->qual_len = 0;
	} else {
		want = f->qual_len != HB_VARLEN ? f->qual_len : (*n > 0 ? (size_t)(*p)[0] % 40 : 0);
		if (f->qual_len == HB_VARLEN && *n > 0) {
			(*p)++;
			(*n)--;
		}
		c->qual = hk_take(p, n, want, &c->qual_len);
	}
	c->version = hk_u64(p, n);
}

/* hk_valid tells whether c fits f (a fixed part must be whole). */
static int
hk_valid(const hb_keyfmt *f, const hk_cell *c)
{
	return hb_key_check_row(f, c->row_len) == WB_OK &&
	       hb_key_check_qual(f, c->qual_len) == WB_OK;
}

/* hk_roundtrip encodes c into key and checks decode, column and version. */
static size_t
hk_roundtrip(const hb_keyfmt *f, const hk_cell *c, uint8_t *key)
{
	static uint8_t scratch[HB_KEY_MAX];
	uint8_t        col[HB_KEY_MAX];
	hb_keyparts    kp;
	size_t n = hb_key_encode(key, f, c->row, c->row_len, c->qual, c->qual_len, c->version);
	size_t cn = hb_key_column(col, f, c->row, c->row_len, c->qual, c->qual_len);

	if (n > HB_KEY_MAX || cn + 8 != n || memcmp(col, key, cn) != 0) {
		hk_fail("the column prefix is not the key less 8 version bytes");
	}
	if (hb_key_version(key, n) != c->version) {
		hk_fail("version does not round-trip");
	}
	if (hb_key_decode(f, key, n, scratch, &kp) != WB_OK) {
		hk_fail("a key we encoded does not decode");
	}
	if (kp.row_len != c->row_len || memcmp(kp.row, c->row, c->row_len) != 0 ||
	    kp.qual_len != c->qual_len ||
	    (c->qual_len && memcmp(kp.qual, c->qual, c->qual_len) != 0) ||
	    kp.version != c->version || kp.col_len != cn) {
		hk_fail("decode(encode(cell)) != cell");
	}
	/* the successor of the column prefix is above every key of the column */
	size_t sl = cn;
	if (hb_key_successor(col, &sl) && hk_cmp_bytes(col, sl, key, n) <= 0) {
		hk_fail("the column's successor does not sort above its keys");
	}
	return n;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const hb_keyfmt fmts[] = {
		{ HB_VARLEN, HB_VARLEN },
		{ HB_VARLEN, HB_NONE },
		{ 8, HB_NONE },
		{ 8, HB_VARLEN },
		{ 8, 8 },
		{ HB_VARLEN, 8 },
		{ 4, 2 },
	};
	static uint8_t ka[HB_KEY_MAX], kb[HB_KEY_MAX], scratch[HB_KEY_MAX];
	const uint8_t *p = data;
	size_t         n = size;
	hb_keyfmt      f;
	hk_cell        a, b;
	hb_keyparts    kp;

	if (size < 1) {
		return 0;
	}
	f = fmts[data[0] % (sizeof(fmts) / sizeof(fmts[0]))];
	/* any bytes as a raw key: an error, or parts that re-encode to it */
	if (size - 1 <= HB_KEY_MAX &&
	    hb_key_decode(&f, data + 1, size - 1, scratch, &kp) == WB_OK) {
		hk_cell c = { kp.row, kp.qual, kp.row_len, kp.qual_len, kp.version };
		if (c.qual == NULL) {
			c.qual = (const uint8_t *)"";
		}
		if (!hk_valid(&f, &c)) {
			hk_fail("a decoded key has parts its format refuses");
		}
		/* copy: kp may point into scratch, which hk_roundtrip reuses */
		uint8_t row[HB_MAX_PART], qual[HB_MAX_PART];
		memcpy(row, c.row, c.row_len);
		memcpy(qual, c.qual, c.qual_len);
		c.row = row;
		c.qual = qual;
		size_t k = hk_roundtrip(&f, &c, ka);
		if (k != size - 1 || memcmp(ka, data + 1, k) != 0) {
			hk_fail("a decodable key is not the encoding of its parts");
		}
	}
	p++;
	n--;
	hk_parse(&f, &p, &n, &a);
	hk_parse(&f, &p, &n, &b);
	if (!hk_valid(&f, &a) || !hk_valid(&f, &b)) {
		return 0;
	}
	size_t la = hk_roundtrip(&f, &a, ka);
	size_t lb = hk_roundtrip(&f, &b, kb);
	int    want = hk_cmp(&a, &b), got = hk_cmp_bytes(ka, la, kb, lb);
	if (want != got) {
		hk_fail("bytewise key order differs from HBase cell order");
	}
	return 0;
}
