/*
 * http_buf.h - a growable byte buffer for HTTP bodies (JSON replies,
 * Prometheus text).  Buffers live in recycled request jobs, so steady
 * traffic allocates nothing here.
 */
#ifndef HTTP_BUF_H
#define HTTP_BUF_H

#include <stddef.h>

typedef struct gw_buf {
	char  *p;
	size_t len, cap;
} gw_buf;

/* gw_buf_reserve makes room for n more bytes (plus a NUL); returns a wb_err. */
int gw_buf_reserve(gw_buf *b, size_t n);

/* gw_buf_add appends n bytes; returns a wb_err. */
int gw_buf_add(gw_buf *b, const void *p, size_t n);

/* gw_buf_printf appends formatted text; returns a wb_err. */
int gw_buf_printf(gw_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* gw_buf_clear empties b, keeping its memory. */
void gw_buf_clear(gw_buf *b);

/* gw_buf_free releases b's memory. */
void gw_buf_free(gw_buf *b);

#endif
