/*
 * wbt_png.h - real PNG images for the tests of uploads and media, made
 * in memory: 8-bit greyscale, the pixel data in stored (uncompressed)
 * deflate blocks, every CRC and the Adler-32 right, so any decoder takes
 * them.
 */
#ifndef WBT_PNG_H
#define WBT_PNG_H

#include <stddef.h>
#include <stdint.h>

/* wbt_png returns a width x height PNG (malloc'd, *len bytes) whose pixels depend on seed; NULL if out of memory. */
unsigned char *wbt_png(uint32_t width, uint32_t height, uint32_t seed, size_t *len);

/* wbt_png_crc returns the CRC-32 of PNG chunks (ISO 3309) of p[0..n), bit by bit (small images). */
uint32_t wbt_png_crc(const unsigned char *p, size_t n);

/* wbt_write_file writes len bytes to path (created or truncated); 0, or -1. */
int wbt_write_file(const char *path, const void *data, size_t len);

#endif
