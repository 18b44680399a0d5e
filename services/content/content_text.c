/*
 * content_text.c - a strict UTF-8 validator (RFC 3629, Unicode table 3-7).
 *
 *   code points          byte 1   byte 2   byte 3   byte 4
 *   U+0000..U+007F       00..7F
 *   U+0080..U+07FF       C2..DF   80..BF
 *   U+0800..U+0FFF       E0       A0..BF   80..BF
 *   U+1000..U+CFFF       E1..EC   80..BF   80..BF
 *   U+D000..U+D7FF       ED       80..9F   80..BF          (no surrogates)
 *   U+E000..U+FFFF       EE..EF   80..BF   80..BF
 *   U+10000..U+3FFFF     F0       90..BF   80..BF   80..BF
 *   U+40000..U+FFFFF     F1..F3   80..BF   80..BF   80..BF
 *   U+100000..U+10FFFF   F4       80..8F   80..BF   80..BF
 *
 * Everything else (C0, C1, F5..FF, stray continuation bytes, truncated
 * sequences, overlong forms) is rejected.
 *
 * A blank text shows nothing: every code point is Unicode's White_Space
 * (U+0009..U+000D, U+0020, U+0085, U+00A0, U+1680, U+2000..U+200A,
 * U+2028, U+2029, U+202F, U+205F, U+3000) or a zero-width format
 * character that renders nothing alone (U+180E, U+200B..U+200D, U+2060,
 * U+FEFF).  None of them takes four bytes.
 */
#include "content_text.h"

#include <stdint.h>

#include "wb_errors.h"

long
text_utf8_count(const char *s, size_t n)
{
	const uint8_t *p = (const uint8_t *)s, *end = p + n;
	long           count = 0;
	while (p < end) {
		uint8_t c = *p;
		if (c < 0x80) {
			p++;
			count++;
			continue;
		}
		size_t  len;
		uint8_t lo = 0x80, hi = 0xBF; /* range of the second byte */
		if (c >= 0xC2 && c <= 0xDF) {
			len = 2;
		} else if (c >= 0xE0 && c <= 0xEF) {
			len = 3;
			if (c == 0xE0) {
				lo = 0xA0;
			} else if (c == 0xED) {
				hi = 0x9F;
			}
		} else if (c >= 0xF0 && c <= 0xF4) {
			len = 4;
			if (c == 0xF0) {
				lo = 0x90;
			} else if (c == 0xF4) {
				hi = 0x8F;
			}
		} else {
			return -1;
		}
		if ((size_t)(end - p) < len) {
			return -1;
		}
		if (p[1] < lo || p[1] > hi) {
			return -1;
		}
		for (size_t i = 2; i < len; i++) {
			if (p[i] < 0x80 || p[i] > 0xBF) {
				return -1;
			}
		}
		p += len;
		count++;
	}
	return count;
}

/* text_blank_cp tells whether code point c is blank (the list above). */
static bool
text_blank_cp(uint32_t c)
{
	return (c >= 0x09 && c <= 0x0D) || c == 0x20 || c == 0x85 || c == 0xA0 || c == 0x1680 ||
	       c == 0x180E || (c >= 0x2000 && c <= 0x200D) || c == 0x2028 || c == 0x2029 ||
	       c == 0x202F || c == 0x205F || c == 0x2060 || c == 0x3000 || c == 0xFEFF;
}

bool
text_blank(const char *s, size_t n)
{
	const uint8_t *p = (const uint8_t *)s, *end = p + n;

	while (p < end) {
		uint32_t c = *p;
		size_t   len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;

		if ((size_t)(end - p) < len || len == 4) {
			return false; /* cut short (not valid UTF-8), or above U+FFFF: none blank */
		}
		if (len == 2) {
			c = (c & 0x1F) << 6 | (p[1] & 0x3F);
		} else if (len == 3) {
			c = (c & 0x0F) << 12 | (uint32_t)(p[1] & 0x3F) << 6 | (p[2] & 0x3F);
		}
		if (!text_blank_cp(c)) {
			return false;
		}
		p += len;
	}
	return true;
}

int
text_check(const char *s, size_t n)
{
	if (s == NULL || n == 0) {
		return WB_EBADTEXT;
	}
	long cps = text_utf8_count(s, n);
	if (cps < 0) {
		return WB_EBADTEXT;
	}
	if (cps > TEXT_MAX_CODEPOINTS) {
		return WB_ETOOLONG;
	}
	return WB_OK;
}
