/*
 * http_buf.h - a growable byte buffer for HTTP bodies (JSON replies,
 * Prometheus text).  Buffers live in recycled request jobs, so steady
 * traffic allocates nothing here.
 */
#ifndef HTTP_BUF_H
#define HTTP_BUF_H

#include <stddef.h>

typedef struct http_buf {
	char  *p;
	size_t len, cap;
} http_buf;

/* http_buf_reserve makes room for n more bytes (plus a NUL); returns a wb_err. */
int http_buf_reserve(http_buf *b, size_t n);

/* http_buf_add appends n bytes; returns a wb_err. */
int http_buf_add(http_buf *b, const void *p, size_t n);

/* http_buf_printf appends formatted text; returns a wb_err. */
int http_buf_printf(http_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* http_buf_clear empties b, keeping its memory. */
void http_buf_clear(http_buf *b);

/* http_buf_free releases b's memory. */
void http_buf_free(http_buf *b);

#endif
