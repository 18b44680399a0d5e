/*
 * rt_http_head_fuzz.c - libFuzzer target for the request head parser
 * (rt_http_head_end, rt_http_head_parse).
 *
 * Input: the bytes a client sent.  A head is found only with its blank
 * line, never past the input; a parsed head has a method made of token
 * characters, a target without spaces or control bytes and a version of
 * 1.x, every string inside the parsed copy; a refused one has a
 * status of 400, 413 or 505 and a reason.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
hh_fail(const char *what)
{
	fprintf(stderr, "rt_http_head_fuzz: %s\n", what);
	abort();
}

/* hh_inside tells whether s is a NUL-terminated string inside buf[0..n]. */
static bool
hh_inside(const char *s, const char *buf, size_t n)
{
	return s != NULL && s >= buf && s <= buf + n && memchr(s, '\0', (size_t)(buf + n + 1 - s));
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char  buf[RT_HTTP_HEAD_MAX + 1];
	rt_http_head h;
	const char  *why = NULL;
	size_t       n;
	int          st;

	if (size > RT_HTTP_HEAD_MAX) {
		return 0;
	}
	if ((n = rt_http_head_end((const char *)data, size)) == 0) {
		return 0;
	}
	if (n > size || (data[n - 1] != '\n')) {
		hh_fail("a head must end with its blank line, inside the input");
	}
	memcpy(buf, data, n);
	buf[n] = '\0';
	st = rt_http_head_parse(buf, n, &h, &why);
	if (st != 0) {
		if ((st != 400 && st != 413 && st != 505) || why == NULL || why[0] == '\0') {
			hh_fail("a refused head needs 400, 413 or 505 and a reason");
		}
		return 0;
	}
	if (!hh_inside(h.method, buf, n) || !hh_inside(h.target, buf, n) || h.method[0] == '\0' ||
	    h.target[0] == '\0' || h.minor < 0 || h.minor > 9) {
		hh_fail("a parsed head needs a method, a target and a version");
	}
	for (const char *t = h.target; *t != '\0'; t++) {
		if ((unsigned char)*t <= 0x20 || (unsigned char)*t >= 0x7f) {
			hh_fail("a target holds a space or a control byte");
		}
	}
	if (h.authorization != NULL && !hh_inside(h.authorization, buf, n)) {
		hh_fail("Authorization points outside the head");
	}
	if (h.request_id != NULL && !hh_inside(h.request_id, buf, n)) {
		hh_fail("X-Request-Id points outside the head");
	}
	return 0;
}
