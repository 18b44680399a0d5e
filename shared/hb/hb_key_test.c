/*
 * hb_key_test.c - key encoding: HBase order, round trips, bad lengths.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "hb_key.h"

static const hb_keyfmt var = { HB_VARLEN, HB_VARLEN };

static int
key_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);
	return c ? c : (al > bl) - (al < bl);
}

/* raw_cmp: the order rows and qualifiers must have (shorter prefix first). */
static int
raw_cmp(const char *a, size_t al, const char *b, size_t bl)
{
	return key_cmp((const uint8_t *)a, al, (const uint8_t *)b, bl);
}

struct part {
	const char *s;
	size_t      n;
};

#define P(x)                     \
	{                        \
		x, sizeof(x) - 1 \
	}
static const struct part parts[] = {
	P(""),
	P("\0"),
	P("\0\0"),
	P("\0\x01"),
	P("\x01"),
	P("a"),
	P("a\0"),
	P("a\0\0"),
	P("a\0\x01"),
	P("a\0\xff"),
	P("a\x01"),
	P("ab"),
	P("abc"),
	P("ab\0c"),
	P("b"),
	P("\xff"),
	P("\xff\0"),
	P("\xff\xff"),
};
#define NPARTS (sizeof(parts) / sizeof(parts[0]))

Test(hb_key, rows_sort_in_hbase_order)
{
	uint8_t ka[HB_KEY_MAX], kb[HB_KEY_MAX];

	for (size_t i = 0; i < NPARTS; i++) {
		for (size_t j = 0; j < NPARTS; j++) {
			for (int q = 0; q < 3; q++) {
				/* the row decides, whatever the qualifiers */
				size_t la = hb_key_encode(
				    ka, &var, parts[i].s, parts[i].n, parts[q].s, parts[q].n, 5);
				size_t lb = hb_key_encode(kb, &var, parts[j].s, parts[j].n,
				    parts[NPARTS - 1 - q].s, parts[NPARTS - 1 - q].n, 7);
				int want = raw_cmp(parts[i].s, parts[i].n, parts[j].s, parts[j].n);
				int got = key_cmp(ka, la, kb, lb);
				if (want != 0) {
					cr_assert((want < 0) == (got < 0),
					    "rows %zu vs %zu: want %d got %d", i, j, want, got);
				}
			}
		}
	}
}

Test(hb_key, qualifiers_then_versions_newest_first)
{
	uint8_t ka[HB_KEY_MAX], kb[HB_KEY_MAX];

	for (size_t i = 0; i < NPARTS; i++) {
		for (size_t j = 0; j < NPARTS; j++) {
			size_t la = hb_key_encode(ka, &var, "r", 1, parts[i].s, parts[i].n, 9);
			size_t lb = hb_key_encode(kb, &var, "r", 1, parts[j].s, parts[j].n, 3);
			int    want = raw_cmp(parts[i].s, parts[i].n, parts[j].s, parts[j].n);
			int    got = key_cmp(ka, la, kb, lb);
			if (want == 0) {
				cr_assert(got < 0, "version 9 sorts before 3");
			} else {
				cr_assert((want < 0) == (got < 0), "quals %zu vs %zu", i, j);
			}
		}
	}
	uint64_t vs[] = { 0, 1, 2, 1000, UINT64_MAX - 1 };
	for (size_t i = 0; i + 1 < 5; i++) {
		size_t la = hb_key_encode(ka, &var, "r", 1, "q", 1, vs[i + 1]);
		size_t lb = hb_key_encode(kb, &var, "r", 1, "q", 1, vs[i]);
		cr_assert(key_cmp(ka, la, kb, lb) < 0, "newer first");
	}
}

Test(hb_key, escape_layout)
{
	uint8_t              k[HB_KEY_MAX];
	size_t               n = hb_key_encode(k, &var, "a\0", 2, "", 0, UINT64_MAX - 1);
	static const uint8_t want[] = { 'a', 0, 0xFF, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1 };
	cr_assert_eq(n, sizeof(want));
	cr_assert(memcmp(k, want, n) == 0);
}

Test(hb_key, round_trip)
{
	uint8_t     k[HB_KEY_MAX], scratch[HB_KEY_MAX];
	hb_keyparts kp;
	srand(7);
	for (int it = 0; it < 20000; it++) {
		char   r[40], q[40];
		size_t rl = (size_t)rand() % 40, ql = (size_t)rand() % 40;
		for (size_t i = 0; i < rl; i++) {
			r[i] = (char)(rand() % 4 == 0 ? 0 : rand());
		}
		for (size_t i = 0; i < ql; i++) {
			q[i] = (char)(rand() % 4 == 0 ? 0 : rand());
		}
		uint64_t v = ((uint64_t)rand() << 32) ^ (uint64_t)rand();
		size_t   n = hb_key_encode(k, &var, r, rl, q, ql, v);
		cr_assert_eq(hb_key_decode(&var, k, n, scratch, &kp), WB_OK);
		cr_assert_eq(kp.row_len, rl);
		cr_assert_eq(kp.qual_len, ql);
		cr_assert(memcmp(kp.row, r, rl) == 0);
		cr_assert(memcmp(kp.qual, q, ql) == 0);
		cr_assert_eq(kp.version, v);
		cr_assert_eq(kp.col_len, n - 8);
	}
}

Test(hb_key, fixed_and_none)
{
	hb_keyfmt   inbox = { 8, HB_NONE }, ids = { 8, 4 };
	uint8_t     k[HB_KEY_MAX], scratch[HB_KEY_MAX], row[8];
	hb_keyparts kp;

	hb_u64_be(row, 0x0102000000000304ull);
	size_t n = hb_key_encode(k, &inbox, row, 8, NULL, 0, 42);
	cr_assert_eq(n, 16, "inbox key is reader(8) | ~version(8)");
	cr_assert_eq(hb_key_decode(&inbox, k, n, scratch, &kp), WB_OK);
	cr_assert_eq(hb_be_u64(kp.row), 0x0102000000000304ull);
	cr_assert_eq(kp.qual_len, 0);
	cr_assert_eq(kp.version, 42);

	n = hb_key_encode(k, &ids, row, 8, "\0\0\0\x05", 4, 1);
	cr_assert_eq(n, 20);
	cr_assert_eq(hb_key_decode(&ids, k, n, scratch, &kp), WB_OK);
	cr_assert(memcmp(kp.qual, "\0\0\0\x05", 4) == 0);

	cr_assert_eq(hb_key_check_row(&inbox, 7), WB_EINVAL);
	cr_assert_eq(hb_key_check_row(&inbox, 8), WB_OK);
	cr_assert_eq(hb_key_check_qual(&inbox, 1), WB_EINVAL);
	cr_assert_eq(hb_key_check_qual(&inbox, 0), WB_OK);
	cr_assert_eq(hb_key_check_qual(&ids, 3), WB_EINVAL);
	cr_assert_eq(hb_key_check_row(&var, HB_MAX_PART + 1), WB_ETOOBIG);
	cr_assert_eq(hb_key_check_qual(&var, HB_MAX_PART), WB_OK);
}

Test(hb_key, malformed_keys_are_rejected)
{
	uint8_t              scratch[64];
	hb_keyparts          kp;
	hb_keyfmt            inbox = { 8, HB_NONE };
	static const uint8_t no_term[] = { 'a', 'b', 1, 2, 3, 4, 5, 6, 7, 8 };
	static const uint8_t bad_esc[] = { 'a', 0, 7, 0, 1, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8 };
	static const uint8_t trailing[] = { 'a', 0, 1, 0, 1, 'x', 1, 2, 3, 4, 5, 6, 7, 8 };

	cr_assert_eq(hb_key_decode(&var, no_term, sizeof(no_term), scratch, &kp), WB_ECORRUPT);
	cr_assert_eq(hb_key_decode(&var, bad_esc, sizeof(bad_esc), scratch, &kp), WB_ECORRUPT);
	cr_assert_eq(hb_key_decode(&var, trailing, sizeof(trailing), scratch, &kp), WB_ECORRUPT);
	cr_assert_eq(hb_key_decode(&var, no_term, 5, scratch, &kp), WB_ECORRUPT);
	cr_assert_eq(hb_key_decode(&inbox, no_term, 10, scratch, &kp), WB_ECORRUPT);
}

Test(hb_key, successor)
{
	uint8_t b[4] = { 'a', 0xFF, 0xFF, 0 };
	size_t  n = 3;
	cr_assert(hb_key_successor(b, &n));
	cr_assert_eq(n, 1);
	cr_assert_eq(b[0], 'b');
	uint8_t f[2] = { 0xFF, 0xFF };
	n = 2;
	cr_assert_not(hb_key_successor(f, &n));
}
