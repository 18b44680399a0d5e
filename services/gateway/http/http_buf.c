/* http_buf.c - growable byte buffer (see http_buf.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_buf.h"
#include "wb_errors.h"

int
http_buf_reserve(http_buf *b, size_t n)
{
	size_t cap;
	char  *p;

	if (b->len + n + 1 <= b->cap) {
		return WB_OK;
	}
	cap = b->cap < 1024 ? 1024 : b->cap;
	while (cap < b->len + n + 1) {
		cap *= 2;
	}
	if ((p = realloc(b->p, cap)) == NULL) {
		return WB_ENOMEM;
	}
	b->p = p;
	b->cap = cap;
	return WB_OK;
}

int
http_buf_add(http_buf *b, const void *p, size_t n)
{
	if (http_buf_reserve(b, n) != WB_OK) {
		return WB_ENOMEM;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	b->p[b->len] = '\0';
	return WB_OK;
}

int
http_buf_printf(http_buf *b, const char *fmt, ...)
{
	va_list ap;
	int     n;

	if (http_buf_reserve(b, 128) != WB_OK) {
		return WB_ENOMEM;
	}
	va_start(ap, fmt);
	n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0) {
		return WB_EINTERNAL;
	}
	if ((size_t)n >= b->cap - b->len) {
		if (http_buf_reserve(b, (size_t)n) != WB_OK) {
			return WB_ENOMEM;
		}
		va_start(ap, fmt);
		vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
	}
	b->len += (size_t)n;
	return WB_OK;
}

void
http_buf_clear(http_buf *b)
{
	b->len = 0;
	if (b->p != NULL) {
		b->p[0] = '\0';
	}
}

void
http_buf_free(http_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}
