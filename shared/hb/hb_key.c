/*
 * hb_key.c - cell key encoding; see hb_key.h for the layout.
 */
#include <string.h>

#include "hb_key.h"

int
hb_key_check_row(const hb_keyfmt *f, size_t row_len)
{
	if (f->row_len == HB_VARLEN) {
		return row_len > HB_MAX_PART ? WB_ETOOBIG : WB_OK;
	}
	return row_len == f->row_len ? WB_OK : WB_EINVAL;
}

int
hb_key_check_qual(const hb_keyfmt *f, size_t qual_len)
{
	if (f->qual_len == HB_NONE) {
		return qual_len == 0 ? WB_OK : WB_EINVAL;
	}
	if (f->qual_len == HB_VARLEN) {
		return qual_len > HB_MAX_PART ? WB_ETOOBIG : WB_OK;
	}
	return qual_len == f->qual_len ? WB_OK : WB_EINVAL;
}

uint8_t *
hb_key_escape(uint8_t *dst, const void *src, size_t len)
{
	const uint8_t *p = src, *end = p + len;

	while (p < end) {
		const uint8_t *z = memchr(p, 0, (size_t)(end - p));
		size_t         n = z ? (size_t)(z - p) : (size_t)(end - p);

		memcpy(dst, p, n);
		dst += n;
		p += n;
		if (z) {
			*dst++ = 0x00;
			*dst++ = 0xFF;
			p++;
		}
	}
	return dst;
}

uint8_t *
hb_key_part(uint8_t *dst, const void *src, size_t len, unsigned fixed)
{
	if (fixed == HB_NONE) {
		return dst;
	}
	if (fixed != HB_VARLEN) {
		memcpy(dst, src, len);
		return dst + len;
	}
	dst = hb_key_escape(dst, src, len);
	*dst++ = 0x00;
	*dst++ = 0x01;
	return dst;
}

size_t
hb_key_column(uint8_t *dst, const hb_keyfmt *f, const void *row, size_t row_len, const void *qual,
    size_t qual_len)
{
	uint8_t *p = hb_key_part(dst, row, row_len, f->row_len);

	p = hb_key_part(p, qual, qual_len, f->qual_len);
	return (size_t)(p - dst);
}

void
hb_key_put_version(uint8_t *dst, uint64_t version)
{
	hb_u64_be(dst, UINT64_MAX - version);
}

uint64_t
hb_key_version(const uint8_t *key, size_t len)
{
	return UINT64_MAX - hb_be_u64(key + len - 8);
}

size_t
hb_key_encode(uint8_t *dst, const hb_keyfmt *f, const void *row, size_t row_len, const void *qual,
    size_t qual_len, uint64_t version)
{
	size_t n = hb_key_column(dst, f, row, row_len, qual, qual_len);

	hb_key_put_version(dst + n, version);
	return n + 8;
}

/*
 * hb_key_part_decode reads one part starting at key[*pos]; end is where
 * the version begins.  A part without escapes points into the key.
 */
static int
hb_key_part_decode(const uint8_t *key, size_t end, size_t *pos, unsigned fixed, uint8_t **scratch,
    const uint8_t **out, size_t *out_len)
{
	size_t p = *pos;

	if (fixed == HB_NONE) {
		*out = key + p;
		*out_len = 0;
		return WB_OK;
	}
	if (fixed != HB_VARLEN) {
		if (end - p < fixed) {
			return WB_ECORRUPT;
		}
		*out = key + p;
		*out_len = fixed;
		*pos = p + fixed;
		return WB_OK;
	}
	/* Fast path: the first 0x00 is the terminator. */
	const uint8_t *z = memchr(key + p, 0, end - p);
	if (z == NULL || (size_t)(z - key) + 1 >= end) {
		return WB_ECORRUPT;
	}
	if (z[1] == 0x01) {
		*out = key + p;
		*out_len = (size_t)(z - (key + p));
		*pos = (size_t)(z - key) + 2;
		return WB_OK;
	}
	uint8_t *dst = *scratch, *start = dst;
	while (p < end) {
		uint8_t c = key[p++];
		if (c != 0x00) {
			*dst++ = c;
			continue;
		}
		if (p >= end) {
			return WB_ECORRUPT;
		}
		c = key[p++];
		if (c == 0x01) {
			*out = start;
			*out_len = (size_t)(dst - start);
			*scratch = dst;
			*pos = p;
			return WB_OK;
		}
		if (c != 0xFF) {
			return WB_ECORRUPT;
		}
		*dst++ = 0x00;
	}
	return WB_ECORRUPT;
}

int
hb_key_decode(
    const hb_keyfmt *f, const uint8_t *key, size_t len, uint8_t *scratch, hb_keyparts *out)
{
	size_t pos = 0, end;
	int    rv;

	if (len < 8) {
		return WB_ECORRUPT;
	}
	end = len - 8;
	if ((rv = hb_key_part_decode(
	         key, end, &pos, f->row_len, &scratch, &out->row, &out->row_len)) != WB_OK) {
		return rv;
	}
	if ((rv = hb_key_part_decode(
	         key, end, &pos, f->qual_len, &scratch, &out->qual, &out->qual_len)) != WB_OK) {
		return rv;
	}
	if (pos != end) {
		return WB_ECORRUPT;
	}
	out->col_len = end;
	out->version = hb_key_version(key, len);
	return WB_OK;
}

int
hb_key_successor(uint8_t *buf, size_t *len)
{
	size_t n = *len;

	while (n > 0 && buf[n - 1] == 0xFF) {
		n--;
	}
	if (n == 0) {
		return 0;
	}
	buf[n - 1]++;
	*len = n;
	return 1;
}

void
hb_u64_be(void *dst, uint64_t v)
{
	uint8_t *p = dst;

	for (int i = 7; i >= 0; i--) {
		p[i] = (uint8_t)v;
		v >>= 8;
	}
}

uint64_t
hb_be_u64(const void *src)
{
	const uint8_t *p = src;
	uint64_t       v = 0;

	for (int i = 0; i < 8; i++) {
		v = (v << 8) | p[i];
	}
	return v;
}
