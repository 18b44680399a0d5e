/*
 * hb_key.h - cell key encoding of the store (internal to shared/hb).
 *
 * A cell key sorts, under RocksDB's bytewise comparator, in HBase order:
 * rows ascending, qualifiers ascending, versions newest first.
 *
 *   +-----------+-----------------+--------------------------------+
 *   | enc(row)  | enc(qualifier)  | big-endian(UINT64_MAX-version) |
 *   +-----------+-----------------+--------------------------------+
 *   |<------- column prefix ----->|<------------ 8 bytes --------->|
 *
 * enc() of a variable-length part:  each 0x00 becomes 0x00 0xFF, then the
 * terminator 0x00 0x01.  Since 0x01 < 0xFF, "a" < "a\0" < "ab":
 *
 *   "a"    -> 61 00 01
 *   "a\0"  -> 61 00 FF 00 01
 *   "ab"   -> 61 62 00 01
 *
 * A fixed-length part is stored raw; a HB_NONE qualifier takes 0 bytes.
 * Every key of a column is its column prefix plus exactly 8 bytes.
 */
#ifndef HB_KEY_H
#define HB_KEY_H

#include <stddef.h>
#include <stdint.h>

#include "hb.h"

/* The longest encoded part and key. */
#define HB_KEY_PART_MAX (2 * HB_MAX_PART + 2)
#define HB_KEY_MAX      (2 * HB_KEY_PART_MAX + 8)

/* A family's key format: HB_VARLEN or fixed lengths (qual also HB_NONE). */
typedef struct hb_keyfmt {
	unsigned row_len;
	unsigned qual_len;
} hb_keyfmt;

/* A decoded key; row and qual point into the key or into scratch. */
typedef struct hb_keyparts {
	const uint8_t *row;
	size_t         row_len;
	const uint8_t *qual;
	size_t         qual_len;
	uint64_t       version;
	size_t         col_len; /* bytes of the column prefix */
} hb_keyparts;

/* hb_key_check_row says whether a row length fits the format (WB_OK,
 * WB_EINVAL for a wrong fixed length, WB_ETOOBIG past HB_MAX_PART). */
int hb_key_check_row(const hb_keyfmt *f, size_t row_len);

/* hb_key_check_qual does the same for a qualifier (HB_NONE: must be empty). */
int hb_key_check_qual(const hb_keyfmt *f, size_t qual_len);

/* hb_key_escape writes src with 0x00 escaped, no terminator (a prefix of
 * enc() of every part that starts with src); returns the end. */
uint8_t *hb_key_escape(uint8_t *dst, const void *src, size_t len);

/* hb_key_part writes enc(src) for a part of fixed length fixed (HB_VARLEN:
 * escaped and terminated; HB_NONE: nothing); returns the end. */
uint8_t *hb_key_part(uint8_t *dst, const void *src, size_t len, unsigned fixed);

/* hb_key_column writes the column prefix enc(row) enc(qual); returns its length.
 * Lengths must have passed the checks above; dst holds HB_KEY_MAX bytes. */
size_t hb_key_column(uint8_t *dst, const hb_keyfmt *f, const void *row, size_t row_len,
    const void *qual, size_t qual_len);

/* hb_key_encode writes a whole cell key; returns its length. */
size_t hb_key_encode(uint8_t *dst, const hb_keyfmt *f, const void *row, size_t row_len,
    const void *qual, size_t qual_len, uint64_t version);

/* hb_key_put_version writes the 8 version bytes at dst. */
void hb_key_put_version(uint8_t *dst, uint64_t version);

/* hb_key_version reads the version from a key of at least 8 bytes. */
uint64_t hb_key_version(const uint8_t *key, size_t len);

/* hb_key_decode splits a key; escaped parts are unescaped into scratch
 * (at least len bytes) when they contain 0x00.  WB_ECORRUPT if malformed. */
int hb_key_decode(
    const hb_keyfmt *f, const uint8_t *key, size_t len, uint8_t *scratch, hb_keyparts *out);

/* hb_key_successor turns buf[0..*len) into the smallest string greater than
 * every string it prefixes (drops trailing 0xFF, increments); returns 0 if
 * there is none (all 0xFF). */
int hb_key_successor(uint8_t *buf, size_t *len);

#endif
