/*
 * wbt_png.c - PNG images made in memory for the media tests (wbt_png.h).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wbt_png.h"

uint32_t
wbt_png_crc(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++) {
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
		}
	}
	return c ^ 0xffffffffu;
}

/* wbt_png_be32 writes v big-endian at p. */
static void
wbt_png_be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* wbt_png_chunk writes a chunk (length, type, data, CRC) at p and returns the bytes written. */
static size_t
wbt_png_chunk(unsigned char *p, const char *type, const unsigned char *data, size_t n)
{
	wbt_png_be32(p, (uint32_t)n);
	memcpy(p + 4, type, 4);
	if (n > 0) {
		memcpy(p + 8, data, n);
	}
	wbt_png_be32(p + 8 + n, wbt_png_crc(p + 4, n + 4));
	return n + 12;
}

unsigned char *
wbt_png(uint32_t width, uint32_t height, uint32_t seed, size_t *len)
{
	static const unsigned char sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	size_t                     raw_n = (size_t)height * (1 + (size_t)width);
	size_t                     blocks = raw_n / 65535 + 1;
	size_t                     z_n = 2 + blocks * 5 + raw_n + 4;
	unsigned char             *raw = malloc(raw_n), *z = malloc(z_n);
	unsigned char             *out = malloc(8 + 25 + 12 + z_n + 12), ihdr[13];
	uint32_t                   a = 1, b = 0;
	size_t                     at = 0, zo = 0;

	if (raw == NULL || z == NULL || out == NULL || width == 0 || height == 0) {
		free(raw);
		free(z);
		free(out);
		return NULL;
	}
	for (uint32_t y = 0; y < height; y++) { /* filter 0, then a pattern of seed */
		unsigned char *row = raw + (size_t)y * (1 + width);
		row[0] = 0;
		for (uint32_t x = 0; x < width; x++) {
			row[1 + x] = (unsigned char)(x * 7 + y * 13 + seed * 31 + ((x ^ y) & seed));
		}
	}
	for (size_t i = 0; i < raw_n; i++) {
		a = (a + raw[i]) % 65521;
		b = (b + a) % 65521;
	}
	z[zo++] = 0x78; /* deflate, 32 KiB window, no dictionary, fastest */
	z[zo++] = 0x01;
	for (size_t off = 0; off < raw_n || off == 0; off += 65535) {
		size_t   n = raw_n - off < 65535 ? raw_n - off : 65535;
		uint16_t ln = (uint16_t)n;
		z[zo++] = off + n == raw_n ? 1 : 0; /* BFINAL, BTYPE 00: stored */
		z[zo++] = (unsigned char)ln;
		z[zo++] = (unsigned char)(ln >> 8);
		z[zo++] = (unsigned char)~ln;
		z[zo++] = (unsigned char)(~ln >> 8);
		memcpy(z + zo, raw + off, n);
		zo += n;
		if (off + n == raw_n) {
			break;
		}
	}
	wbt_png_be32(z + zo, (b << 16) | a);
	zo += 4;

	wbt_png_be32(ihdr, width);
	wbt_png_be32(ihdr + 4, height);
	ihdr[8] = 8;  /* bit depth */
	ihdr[9] = 0;  /* greyscale */
	ihdr[10] = 0; /* deflate */
	ihdr[11] = 0; /* adaptive filtering */
	ihdr[12] = 0; /* not interlaced */
	memcpy(out, sig, 8);
	at = 8;
	at += wbt_png_chunk(out + at, "IHDR", ihdr, sizeof(ihdr));
	at += wbt_png_chunk(out + at, "IDAT", z, zo);
	at += wbt_png_chunk(out + at, "IEND", NULL, 0);
	free(raw);
	free(z);
	*len = at;
	return out;
}

int
wbt_write_file(const char *path, const void *data, size_t len)
{
	const char *p = data;
	int         fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0) {
		return -1;
	}
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w <= 0) {
			close(fd);
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return close(fd);
}
