/*
 * content_container.c - the end of an image file, from its container
 * structure (BE/LE: big/little-endian):
 *
 *   PNG   89 'PNG' 0d 0a 1a 0a, then chunks: length (BE32) type (4
 *         letters) data CRC (4); IHDR first (13 bytes: width height (BE32)
 *         depth colour ...), IDAT (the pixels), IEND last (empty)
 *   JPEG  ff d8, segments: ff [ff fill bytes] marker [length (BE16,
 *         counting itself) data]; 01 and d0-d7 stand alone; a scan (SOS,
 *         da) is followed by its entropy-coded data, in which ff is
 *         always followed by 00 (a stuffed ff) or d0-d7 (a restart), up to
 *         the next marker; ff d9 (EOI) ends the picture.  A multi-picture
 *         file (MPF) puts its other pictures, each ff d8 .. ff d9, after it.
 *   GIF   'GIF87a' or 'GIF89a', width height (LE16) flags bg aspect, the
 *         global colour table (3 << (flags & 7) + 1 bytes if flags & 80),
 *         then blocks: 21 (extension: label, sub-blocks), 2c (image:
 *         9 bytes, its local colour table, LZW code size, sub-blocks), 3b
 *         (trailer); a sub-block is a length byte and that many bytes, a
 *         zero length ends them
 *   WebP  'RIFF' size (LE32) 'WEBP', then chunks up to 8 + size: fourcc
 *         size (LE32) data, padded to even; the first is VP8, VP8L or
 *         VP8X (flags: 02 animation), ANMF chunks are animation frames
 */
#include "content_container.h"

#include <string.h>

#include "wb_errors.h"

static uint32_t
container_be16(const uint8_t *p)
{
	return ((uint32_t)p[0] << 8) | p[1];
}

static uint32_t
container_be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static uint32_t
container_le16(const uint8_t *p)
{
	return p[0] | ((uint32_t)p[1] << 8);
}

static uint32_t
container_le24(const uint8_t *p)
{
	return container_le16(p) | ((uint32_t)p[2] << 16);
}

static uint32_t
container_le32(const uint8_t *p)
{
	return p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* container_refuse records why and returns WB_EMEDIATYPE. */
static int
container_refuse(content_container *out, const char *why)
{
	out->why = why;
	return WB_EMEDIATYPE;
}

/* container_letters tells whether the 4 bytes at p are ASCII letters (a PNG chunk type). */
static bool
container_letters(const uint8_t *p)
{
	for (int i = 0; i < 4; i++) {
		uint8_t c = p[i] | 0x20;
		if (c < 'a' || c > 'z') {
			return false;
		}
	}
	return true;
}

static int
container_png(const uint8_t *p, size_t n, content_container *out)
{
	bool idat = false;

	for (size_t pos = 8;;) {
		if (n - pos < 12) {
			return container_refuse(out, "a PNG chunk is cut short (no IEND chunk)");
		}
		uint32_t       len = container_be32(p + pos);
		const uint8_t *type = p + pos + 4;

		if (len > 0x7fffffffu || !container_letters(type)) {
			return container_refuse(out, "a PNG chunk is damaged");
		}
		if (n - pos - 12 < len) {
			return container_refuse(out, "a PNG chunk is cut short");
		}
		bool ihdr = memcmp(type, "IHDR", 4) == 0;
		if (ihdr != (pos == 8) || (ihdr && len != 13)) {
			return container_refuse(out, "a PNG does not start with one IHDR chunk");
		}
		if (ihdr) {
			out->width = container_be32(p + pos + 8);
			out->height = container_be32(p + pos + 12);
			out->palette = p[pos + 8 + 9] == 3;
		}
		if (memcmp(type, "IDAT", 4) == 0) {
			idat = true;
		}
		pos += 12 + (size_t)len;
		if (memcmp(type, "IEND", 4) == 0) {
			if (!idat) {
				return container_refuse(
				    out, "a PNG without image data (no IDAT chunk)");
			}
			out->end = pos;
			return WB_OK;
		}
	}
}

/* container_entropy returns where the entropy-coded data from pos ends: the next marker, or n. */
static size_t
container_entropy(const uint8_t *p, size_t n, size_t pos)
{
	while (pos < n) {
		const uint8_t *ff = memchr(p + pos, 0xff, n - pos);

		if (ff == NULL) {
			return n;
		}
		pos = (size_t)(ff - p);
		if (pos + 1 >= n) {
			return n;
		}
		uint8_t b = p[pos + 1];
		if (b == 0x00 || (b >= 0xd0 && b <= 0xd7)) {
			pos += 2; /* a stuffed ff or a restart marker: still the scan's data */
		} else {
			return pos; /* a marker (or fill bytes before one) */
		}
	}
	return n;
}

/* container_jpeg walks one JPEG picture at p[0..n) up to its EOI, whose end it puts in *end. */
static int
container_jpeg(const uint8_t *p, size_t n, size_t *end, content_container *out)
{
	bool frame = false, scan = false;

	if (n < 2 || p[0] != 0xff || p[1] != 0xd8) {
		return container_refuse(out, "not a JPEG picture");
	}
	for (size_t pos = 2;;) {
		size_t i = pos;

		if (i >= n) {
			return container_refuse(out, "a JPEG is cut short (no end marker)");
		}
		if (p[i] != 0xff) {
			return container_refuse(out, "a JPEG segment does not start with a marker");
		}
		while (i < n && p[i] == 0xff) {
			i++;
		}
		if (i == n) {
			return container_refuse(out, "a JPEG is cut short (no end marker)");
		}
		uint8_t m = p[i++];
		if (m == 0xd9) {
			if (!scan) {
				return container_refuse(out, "a JPEG without a scan");
			}
			*end = i;
			return WB_OK;
		}
		if (m == 0x01 || (m >= 0xd0 && m <= 0xd7)) {
			pos = i;
			continue;
		}
		if (m == 0x00 || m == 0xd8) {
			return container_refuse(out, "a JPEG has a marker out of place");
		}
		if (n - i < 2 || container_be16(p + i) < 2 || n - i < container_be16(p + i)) {
			return container_refuse(out, "a JPEG segment is cut short");
		}
		pos = i + container_be16(p + i);
		if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc) {
			if (frame || pos - i < 8) {
				return container_refuse(
				    out, "a JPEG frame header is damaged or repeated");
			}
			frame = true;
			out->height =
			    container_be16(p + i + 3); /* 0: the height comes later (DNL) */
			out->width = container_be16(p + i + 5);
		} else if (m == 0xda) {
			if (!frame) {
				return container_refuse(
				    out, "a JPEG scan comes before its frame header");
			}
			scan = true;
			pos = container_entropy(p, n, pos);
		}
	}
}

static int
container_gif_blocks(const uint8_t *p, size_t n, size_t *pos)
{
	for (;;) {
		if (*pos >= n) {
			return -1;
		}
		size_t len = p[(*pos)++];
		if (len == 0) {
			return 0;
		}
		if (n - *pos < len) {
			return -1;
		}
		*pos += len;
	}
}

static int
container_gif(const uint8_t *p, size_t n, content_container *out)
{
	size_t pos = 13, images = 0;

	if (n < 13) {
		return container_refuse(out, "a GIF header is cut short");
	}
	out->width = container_le16(p + 6);
	out->height = container_le16(p + 8);
	if (p[10] & 0x80) {
		pos += (size_t)3 << ((p[10] & 7) + 1);
	}
	for (;;) {
		if (pos >= n) {
			return container_refuse(out, "a GIF is cut short (no trailer)");
		}
		switch (p[pos]) {
		case 0x3b:
			if (images == 0) {
				return container_refuse(out, "a GIF without an image");
			}
			out->end = pos + 1;
			out->frames = (uint32_t)(images > UINT32_MAX ? UINT32_MAX : images);
			return WB_OK;
		case 0x21:
			pos += 2;
			if (pos > n || container_gif_blocks(p, n, &pos) != 0) {
				return container_refuse(out, "a GIF extension is cut short");
			}
			break;
		case 0x2c:
			if (n - pos < 11) {
				return container_refuse(out, "a GIF image is cut short");
			}
			if (p[pos + 9] & 0x80) {
				pos += (size_t)3 << ((p[pos + 9] & 7) + 1);
			}
			pos += 10;
			if (pos >= n || p[pos] > 11) {
				return container_refuse(out, "a GIF image is cut short or damaged");
			}
			pos++;
			if (container_gif_blocks(p, n, &pos) != 0) {
				return container_refuse(out, "a GIF image is cut short");
			}
			images++;
			break;
		default:
			return container_refuse(out, "a GIF block of no known kind");
		}
	}
}

/*
 * container_webp_size reads the size a WebP chunk (fourcc at cc, size
 * bytes of data after 8) declares into out: VP8X's canvas (width-1,
 * height-1, LE24 at 4 and 7) when it is the first chunk; else the first
 * VP8 key frame's (a start code 9d 01 2a at 3, then 14-bit sizes, LE16 at
 * 6 and 8) or VP8L's (a signature 2f, then LE32: 14 bits width-1, 14 bits
 * height-1).  A chunk of no size or a damaged one leaves out as it was.
 */
static void
container_webp_size(const uint8_t *cc, uint32_t size, bool first, content_container *out)
{
	const uint8_t *c = cc + 8;

	if (memcmp(cc, "VP8X", 4) == 0 && first && size >= 10) {
		out->width = container_le24(c + 4) + 1;
		out->height = container_le24(c + 7) + 1;
	} else if (out->width != 0) {
		return; /* the canvas, or the first frame's, is the size */
	} else if (memcmp(cc, "VP8 ", 4) == 0 && size >= 10 &&
	           memcmp(c + 3, "\x9d\x01\x2a", 3) == 0) {
		out->width = container_le16(c + 6) & 0x3fff;
		out->height = container_le16(c + 8) & 0x3fff;
	} else if (memcmp(cc, "VP8L", 4) == 0 && size >= 5 && c[0] == 0x2f) {
		uint32_t bits = container_le32(c + 1);
		out->width = (bits & 0x3fff) + 1;
		out->height = ((bits >> 14) & 0x3fff) + 1;
	}
}

static int
container_webp(const uint8_t *p, size_t n, content_container *out)
{
	uint32_t riff = container_le32(p + 4), frames = 0;
	bool     vp8l = false, anim = false;
	size_t   end, pos = 12;

	if (riff < 4 || riff > n - 8) {
		return container_refuse(out, "a WebP is cut short (its RIFF size is past its end)");
	}
	end = 8 + (size_t)riff;
	while (pos < end) {
		const uint8_t *cc = p + pos;
		if (end - pos < 8 || container_le32(cc + 4) > end - pos - 8) {
			return container_refuse(out, "a WebP chunk is cut short");
		}
		uint32_t size = container_le32(cc + 4);
		if (pos == 12 && memcmp(cc, "VP8 ", 4) != 0 && memcmp(cc, "VP8L", 4) != 0 &&
		    memcmp(cc, "VP8X", 4) != 0) {
			return container_refuse(
			    out, "a WebP does not start with a VP8, VP8L or VP8X chunk");
		}
		container_webp_size(cc, size, pos == 12, out);
		if (memcmp(cc, "VP8X", 4) == 0 && size >= 1 && (cc[8] & 0x02) != 0) {
			anim = true;
		}
		if (memcmp(cc, "ANMF", 4) == 0) {
			anim = true;
			frames += frames < UINT32_MAX;
		}
		if (memcmp(cc, "VP8L", 4) == 0) {
			vp8l = true;
		}
		pos +=
		    8 + (size_t)size + (size & 1); /* may pass end by the last chunk's pad byte */
	}
	if (pos == 12) {
		return container_refuse(out, "a WebP without an image chunk");
	}
	out->lossless = vp8l && !anim;
	out->frames = frames > 0 ? frames : 1;
	out->end = end;
	return WB_OK;
}

int
content_container_scan(const uint8_t *p, size_t n, content_container *out)
{
	int rc;

	memset(out, 0, sizeof(*out));
	if (n >= 8 && memcmp(p, "\x89PNG\r\n\x1a\n", 8) == 0) {
		out->type = CONTENT_IMAGE_PNG;
		rc = container_png(p, n, out);
	} else if (n >= 3 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff) {
		out->type = CONTENT_IMAGE_JPEG;
		rc = container_jpeg(p, n, &out->end, out);
	} else if (n >= 6 && (memcmp(p, "GIF87a", 6) == 0 || memcmp(p, "GIF89a", 6) == 0)) {
		out->type = CONTENT_IMAGE_GIF;
		rc = container_gif(p, n, out);
	} else if (n >= 12 && memcmp(p, "RIFF", 4) == 0 && memcmp(p + 8, "WEBP", 4) == 0) {
		out->type = CONTENT_IMAGE_WEBP;
		rc = container_webp(p, n, out);
	} else {
		return container_refuse(out, "not a PNG, JPEG, GIF or WebP image (the type is read "
		                             "from the bytes, whatever the file is called)");
	}
	if (rc != WB_OK) {
		return rc;
	}
	if (out->width == 0 || out->height == 0) {
		return container_refuse(
		    out, "an image of no width or height (or a damaged header)");
	}
	if (out->frames == 0) {
		out->frames = 1;
	}
	out->pictures = out->end;
	if (out->type == CONTENT_IMAGE_JPEG) {
		content_container more = { 0 };
		size_t            len;
		while (out->pictures < n &&
		       container_jpeg(p + out->pictures, n - out->pictures, &len, &more) == WB_OK) {
			out->pictures += len;
		}
	}
	return WB_OK;
}

int
content_container_webp_strip(uint8_t *p, size_t n, size_t *out_n)
{
	content_container k;
	size_t            w = 12;

	if (content_container_scan(p, n, &k) != WB_OK || k.type != CONTENT_IMAGE_WEBP ||
	    k.end != n) {
		return WB_EMEDIATYPE;
	}
	/* The walk checked every chunk; kept ones move down, never past the one being read. */
	for (size_t pos = 12; pos < n;) {
		size_t size = container_le32(p + pos + 4), step = 8 + size + (size & 1);

		if (step > n - pos) {
			step = n - pos; /* the last chunk's missing pad byte */
		}
		if (memcmp(p + pos, "EXIF", 4) != 0 && memcmp(p + pos, "XMP ", 4) != 0 &&
		    memcmp(p + pos, "ICCP", 4) != 0) {
			memmove(p + w, p + pos, step);
			if (memcmp(p + w, "VP8X", 4) == 0 && size >= 1) {
				p[w + 8] &= (uint8_t) ~(0x20 | 0x08 | 0x04); /* ICC, EXIF, XMP */
			}
			w += step;
		}
		pos += step;
	}
	for (int i = 0; i < 4; i++) {
		p[4 + i] = (uint8_t)((w - 8) >> (8 * i));
	}
	*out_n = w;
	return WB_OK;
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
