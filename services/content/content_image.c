/*
 * content_image.c - image type and size from the header, and the JPEG
 * metadata strip.  The headers read (BE/LE: big/little-endian):
 *
 *   PNG   89 'PNG' 0d 0a 1a 0a, then the IHDR chunk: length 13 (BE32)
 *         'IHDR' width height (BE32) depth colour compression filter
 *         interlace, CRC (4)
 *   GIF   'GIF87a' or 'GIF89a', width height (LE16), flags, bg, aspect
 *   WebP  'RIFF' size (LE32) 'WEBP', then one chunk: fourcc size (LE32)
 *           'VP8 '  frame tag (LE24: key frame, profile, shown, partition
 *                   size), 9d 01 2a, width height (LE16, low 14 bits)
 *           'VP8L'  2f, LE32: width-1 (14 bits) height-1 (14) alpha (1)
 *                   version (3)
 *           'VP8X'  flags (1) reserved (3) width-1 height-1 (LE24)
 *   JPEG  ff d8, segments up to the first scan, then the scan's data:
 *           ff [ff fill bytes] marker [length (BE16, counting itself) data]
 *         standalone markers (01, d0-d7) have no length; SOF (c0-cf but
 *         c4, c8, cc): precision, height width (BE16), components, 3 bytes
 *         each; SOS (da): components, 2 bytes each, 3 bytes.
 */
#include "content_image.h"

#include <string.h>

#include "wb_errors.h"

#define IMAGE_DIM_MAX 0x7fffffffu /* PNG's limit; every other format's is below */

/* image_seg is one segment of a JPEG head: p[start..end) from its first
 * 0xff (fill bytes included), its marker, and its data p[body..end). */
typedef struct image_seg {
	size_t  start, body, end;
	uint8_t marker;
} image_seg;

static uint32_t
image_be16(const uint8_t *p)
{
	return ((uint32_t)p[0] << 8) | p[1];
}

static uint32_t
image_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static uint32_t
image_le16(const uint8_t *p)
{
	return p[0] | ((uint32_t)p[1] << 8);
}

static uint32_t
image_le24(const uint8_t *p)
{
	return image_le16(p) | ((uint32_t)p[2] << 16);
}

static uint32_t
image_le32(const uint8_t *p)
{
	return image_le24(p) | ((uint32_t)p[3] << 24);
}

static int
image_done(content_image_info *out, content_image_type t, uint32_t w, uint32_t h)
{
	if (w == 0 || h == 0 || w > IMAGE_DIM_MAX || h > IMAGE_DIM_MAX) {
		return WB_EMEDIATYPE;
	}
	out->type = t;
	out->width = w;
	out->height = h;
	return WB_OK;
}

static int
image_png(const uint8_t *p, size_t n, content_image_info *out)
{
	static const uint8_t ihdr[8] = { 0, 0, 0, 13, 'I', 'H', 'D', 'R' };
	/* The bit depths each colour type allows, bit d for depth d. */
	static const uint32_t depths[7] = {
		[0] = 0x10116, [2] = 0x10100, [3] = 0x116, [4] = 0x10100, [6] = 0x10100
	};
	uint8_t depth, colour;

	if (n < 8 + 8 + 13 + 4 || memcmp(p + 8, ihdr, sizeof(ihdr)) != 0) {
		return WB_EMEDIATYPE;
	}
	depth = p[24];
	colour = p[25];
	if (colour > 6 || depth > 16 || ((depths[colour] >> depth) & 1) == 0 || p[26] != 0 ||
	    p[27] != 0 || p[28] > 1) {
		return WB_EMEDIATYPE;
	}
	return image_done(out, CONTENT_IMAGE_PNG, image_be32(p + 16), image_be32(p + 20));
}

static int
image_gif(const uint8_t *p, size_t n, content_image_info *out)
{
	if (n < 6 + 7) {
		return WB_EMEDIATYPE;
	}
	return image_done(out, CONTENT_IMAGE_GIF, image_le16(p + 6), image_le16(p + 8));
}

static int
image_webp(const uint8_t *p, size_t n, content_image_info *out)
{
	const uint8_t *c;
	uint32_t       riff, size, bits;

	if (n < 20) {
		return WB_EMEDIATYPE;
	}
	c = p + 20;
	/* The file holds the RIFF, and the RIFF 'WEBP' and the first chunk. */
	riff = image_le32(p + 4);
	size = image_le32(p + 16);
	if (riff > n - 8 || riff < 12 || size > riff - 12) {
		return WB_EMEDIATYPE;
	}
	if (memcmp(p + 12, "VP8 ", 4) == 0) {
		if (size < 10) {
			return WB_EMEDIATYPE;
		}
		/* a shown key frame of a known profile, its first partition inside */
		bits = image_le24(c);
		if ((bits & 1) != 0 || ((bits >> 1) & 7) > 3 || ((bits >> 4) & 1) == 0 ||
		    (bits >> 5) >= size || memcmp(c + 3, "\x9d\x01\x2a", 3) != 0) {
			return WB_EMEDIATYPE;
		}
		return image_done(out, CONTENT_IMAGE_WEBP, image_le16(c + 6) & 0x3fff,
		    image_le16(c + 8) & 0x3fff);
	}
	if (memcmp(p + 12, "VP8L", 4) == 0) {
		if (size < 5 || c[0] != 0x2f || (bits = image_le32(c + 1)) >> 29 != 0) {
			return WB_EMEDIATYPE;
		}
		return image_done(
		    out, CONTENT_IMAGE_WEBP, (bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1);
	}
	if (memcmp(p + 12, "VP8X", 4) == 0 && size == 10) {
		return image_done(
		    out, CONTENT_IMAGE_WEBP, image_le24(c + 4) + 1, image_le24(c + 7) + 1);
	}
	return WB_EMEDIATYPE;
}

/* image_jpeg_next reads the segment at p[pos..n) into *s: 0, or -1 if there
 * is none there or it does not fit. */
static int
image_jpeg_next(const uint8_t *p, size_t n, size_t pos, image_seg *s)
{
	size_t i = pos, len;

	if (i >= n || p[i] != 0xff) {
		return -1;
	}
	while (i < n && p[i] == 0xff) {
		i++;
	}
	if (i == n) {
		return -1;
	}
	s->start = pos;
	s->marker = p[i++];
	if (s->marker == 0x01 || (s->marker >= 0xd0 && s->marker <= 0xd7)) {
		s->body = s->end = i;
		return 0;
	}
	if (s->marker == 0x00 || s->marker == 0xd8 || s->marker == 0xd9 || n - i < 2) {
		return -1;
	}
	len = image_be16(p + i);
	if (len < 2 || n - i < len) {
		return -1;
	}
	s->body = i + 2;
	s->end = i + len;
	return 0;
}

/* image_jpeg walks a JPEG head from its SOI to its first SOS: one SOF
 * before it, whose size it returns, and *scan, where the SOS starts. */
static int
image_jpeg(const uint8_t *p, size_t n, content_image_info *out, size_t *scan)
{
	uint32_t  w = 0, h = 0;
	image_seg s;

	for (size_t pos = 2; image_jpeg_next(p, n, pos, &s) == 0; pos = s.end) {
		const uint8_t *b = p + s.body;
		size_t         bn = s.end - s.body;
		uint8_t        m = s.marker;

		if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc) {
			if (w != 0 || bn < 6 || b[5] == 0 || bn != 6 + 3 * (size_t)b[5]) {
				return WB_EMEDIATYPE;
			}
			h = image_be16(b + 1);
			w = image_be16(b + 3);
			if (w == 0 || h == 0) {
				return WB_EMEDIATYPE; /* a height of 0 waits for a DNL: refused */
			}
		} else if (m == 0xda) {
			if (w == 0 || bn < 1 || b[0] == 0 || bn != 4 + 2 * (size_t)b[0]) {
				return WB_EMEDIATYPE;
			}
			*scan = s.start;
			return image_done(out, CONTENT_IMAGE_JPEG, w, h);
		}
	}
	return WB_EMEDIATYPE;
}

/* image_probe is content_image_probe, which also gives a JPEG's *scan. */
static int
image_probe(const uint8_t *p, size_t n, content_image_info *out, size_t *scan)
{
	if (n >= 8 && memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0) {
		return image_png(p, n, out);
	}
	if (n >= 2 && p[0] == 0xff && p[1] == 0xd8) {
		return image_jpeg(p, n, out, scan);
	}
	if (n >= 6 && (memcmp(p, "GIF87a", 6) == 0 || memcmp(p, "GIF89a", 6) == 0)) {
		return image_gif(p, n, out);
	}
	if (n >= 12 && memcmp(p, "RIFF", 4) == 0 && memcmp(p + 8, "WEBP", 4) == 0) {
		return image_webp(p, n, out);
	}
	return WB_EMEDIATYPE;
}

int
content_image_probe(const uint8_t *p, size_t n, content_image_info *out)
{
	size_t scan;

	return image_probe(p, n, out, &scan);
}

const char *
content_image_mime(content_image_type t)
{
	switch (t) {
	case CONTENT_IMAGE_PNG:
		return "image/png";
	case CONTENT_IMAGE_JPEG:
		return "image/jpeg";
	case CONTENT_IMAGE_GIF:
		return "image/gif";
	case CONTENT_IMAGE_WEBP:
		return "image/webp";
	}
	return NULL;
}

/* image_jpeg_keep says whether the strip keeps a segment of the head. */
static int
image_jpeg_keep(const uint8_t *p, const image_seg *s)
{
	const uint8_t *b = p + s->body;
	size_t         bn = s->end - s->body;

	if (s->marker == 0xe2) {
		return bn >= 12 && memcmp(b, "ICC_PROFILE", 12) == 0; /* with its NUL */
	}
	if (s->marker == 0xee) {
		return bn >= 5 && memcmp(b, "Adobe", 5) == 0;
	}
	return s->marker != 0xfe && (s->marker < 0xe1 || s->marker > 0xef);
}

int
content_image_strip(uint8_t *p, size_t n, size_t *out_n)
{
	content_image_info info;
	size_t             scan = 0, w = 2;
	image_seg          s;
	int                rv;

	if ((rv = image_probe(p, n, &info, &scan)) != WB_OK) {
		return rv;
	}
	if (info.type != CONTENT_IMAGE_JPEG) {
		*out_n = n;
		return WB_OK;
	}
	/* The head was walked: every segment up to scan is there.  Kept ones
	 * move down; a write never passes the segment being read. */
	for (size_t pos = 2; pos < scan && image_jpeg_next(p, n, pos, &s) == 0; pos = s.end) {
		if (image_jpeg_keep(p, &s)) {
			memmove(p + w, p + s.start, s.end - s.start);
			w += s.end - s.start;
		}
	}
	memmove(p + w, p + scan, n - scan);
	*out_n = w + n - scan;
	return WB_OK;
}
