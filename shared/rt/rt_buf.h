/*
 * rt_buf.h - growing a byte buffer by doubling, for the buffers of the
 * serving core (rt_loop.c), the SP server (rt_server.c) and the SP client
 * (rt_sp.c).
 */
#ifndef RT_BUF_H
#define RT_BUF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#define RT_BUF_FIRST 4096 /* a buffer's first size */

/* rt_buf_grow makes room for need bytes in the buffer of *cap bytes at *buf; false if out of memory (the buffer is kept). */
static inline bool
rt_buf_grow(uint8_t **buf, size_t *cap, size_t need)
{
	size_t   n = *cap > 0 ? *cap : RT_BUF_FIRST;
	uint8_t *p;

	if (need <= *cap) {
		return true;
	}
	while (n < need) {
		n *= 2;
	}
	if ((p = realloc(*buf, n)) == NULL) {
		return false;
	}
	*buf = p;
	*cap = n;
	return true;
}

#endif
