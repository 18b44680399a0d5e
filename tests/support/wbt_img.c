/*
 * wbt_img.c - metadata inserted into real images, and the check that an
 * image holds none (wbt_img.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wbt_img.h"
#include "wbt_png.h"

#define WBT_XMP                                                                           \
	"<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF "                                 \
	"xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><rdf:Description "     \
	"xmlns:exif=\"http://ns.adobe.com/exif/1.0/\" exif:GPSLatitude=\"" WBT_IMG_SECRET \
	"\"/></rdf:RDF></x:xmpmeta>"
#define WBT_XMP_NS "http://ns.adobe.com/xap/1.0/"

/* A growing byte buffer; any failure leaves p NULL for good. */
typedef struct wbt_buf {
	unsigned char *p;
	size_t         n, cap;
	bool           failed;
} wbt_buf;

static void
wbt_put(wbt_buf *b, const void *p, size_t n)
{
	if (b->failed) {
		return;
	}
	if (b->n + n > b->cap) {
		size_t         cap = (b->n + n) * 2 + 64;
		unsigned char *q = realloc(b->p, cap);
		if (q == NULL) {
			free(b->p);
			b->p = NULL;
			b->failed = true;
			return;
		}
		b->p = q;
		b->cap = cap;
	}
	if (n > 0) {
		memcpy(b->p + b->n, p, n);
	}
	b->n += n;
}

static void
wbt_put_str(wbt_buf *b, const char *s)
{
	wbt_put(b, s, strlen(s));
}

static void
wbt_put_byte(wbt_buf *b, unsigned v)
{
	unsigned char c = (unsigned char)v;
	wbt_put(b, &c, 1);
}

static void
wbt_put_be16(wbt_buf *b, uint32_t v)
{
	unsigned char c[2] = { (unsigned char)(v >> 8), (unsigned char)v };
	wbt_put(b, c, 2);
}

static void
wbt_put_be32(wbt_buf *b, uint32_t v)
{
	unsigned char c[4] = { (unsigned char)(v >> 24), (unsigned char)(v >> 16),
		(unsigned char)(v >> 8), (unsigned char)v };
	wbt_put(b, c, 4);
}

static void
wbt_put_le32(wbt_buf *b, uint32_t v)
{
	unsigned char c[4] = { (unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
		(unsigned char)(v >> 24) };
	wbt_put(b, c, 4);
}

/* wbt_done hands the buffer out. */
static unsigned char *
wbt_done(wbt_buf *b, size_t *len)
{
	if (b->failed) {
		return NULL;
	}
	*len = b->n;
	return b->p;
}

static uint32_t
wbt_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t
wbt_le32(const unsigned char *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* wbt_ifd_entry writes one 12-byte IFD entry (big-endian TIFF). */
static void
wbt_ifd_entry(wbt_buf *b, uint32_t tag, uint32_t type, uint32_t count, uint32_t value)
{
	wbt_put_be16(b, tag);
	wbt_put_be16(b, type);
	wbt_put_be32(b, count);
	wbt_put_be32(b, value);
}

unsigned char *
wbt_img_exif(int o, size_t *len)
{
	/*
	 *  0  "MM" 42 -> IFD0 at 8
	 *  8  IFD0: ImageDescription, Orientation?, GPS IFD pointer; next 0
	 *     GPS IFD: version 2.2, latitude ref N, processing method; next 0
	 *     the description's text, the processing method's bytes
	 */
	static const char method[8] = "ASCII\0\0";
	wbt_buf           b = { 0 };
	uint32_t          k = o > 0 ? 3 : 2, secret = (uint32_t)strlen(WBT_IMG_SECRET) + 1;
	uint32_t          gps = 8 + 2 + 12 * k + 4, data = gps + 2 + 12 * 3 + 4;

	wbt_put(&b, "MM\0\x2a", 4);
	wbt_put_be32(&b, 8);
	wbt_put_be16(&b, k);
	wbt_ifd_entry(&b, 0x010e, 2, secret, data); /* ImageDescription, ASCII */
	if (o > 0) {
		wbt_ifd_entry(&b, 0x0112, 3, 1, (uint32_t)o << 16); /* Orientation, SHORT */
	}
	wbt_ifd_entry(&b, 0x8825, 4, 1, gps); /* GPSInfo, LONG */
	wbt_put_be32(&b, 0);
	wbt_put_be16(&b, 3);
	wbt_ifd_entry(&b, 0x0000, 1, 4, 0x02020000);                 /* GPSVersionID, BYTE */
	wbt_ifd_entry(&b, 0x0001, 2, 2, 0x4e000000);                 /* GPSLatitudeRef "N", ASCII */
	wbt_ifd_entry(&b, 0x001b, 7, 8 + secret - 1, data + secret); /* GPSProcessingMethod */
	wbt_put_be32(&b, 0);
	wbt_put(&b, WBT_IMG_SECRET, secret);
	wbt_put(&b, method, sizeof(method));
	wbt_put(&b, WBT_IMG_SECRET, secret - 1);
	return wbt_done(&b, len);
}

/* wbt_png_chunk appends a PNG chunk with its CRC. */
static void
wbt_png_chunk(wbt_buf *b, const char *type, const void *data, size_t n)
{
	size_t at = b->n + 4;

	wbt_put_be32(b, (uint32_t)n);
	wbt_put(b, type, 4);
	wbt_put(b, data, n);
	if (!b->failed) {
		wbt_put_be32(b, wbt_png_crc(b->p + at, n + 4));
	}
}

/* wbt_zlib_stored appends s as a zlib stream of one stored block. */
static void
wbt_zlib_stored(wbt_buf *b, const char *s)
{
	uint32_t n = (uint32_t)strlen(s), a = 1, c = 0;

	for (uint32_t i = 0; i < n; i++) {
		a = (a + (unsigned char)s[i]) % 65521;
		c = (c + a) % 65521;
	}
	wbt_put(b, "\x78\x01\x01", 3);
	wbt_put_byte(b, n & 0xff);
	wbt_put_byte(b, n >> 8);
	wbt_put_byte(b, ~n & 0xff);
	wbt_put_byte(b, (~n >> 8) & 0xff);
	wbt_put(b, s, n);
	wbt_put_be32(b, c << 16 | a);
}

unsigned char *
wbt_img_png_meta(const void *png, size_t n, size_t *len)
{
	const unsigned char *p = png;
	wbt_buf              b = { 0 }, z = { 0 }, it = { 0 };
	size_t               tn = 0;
	unsigned char       *tiff;

	if (n < 33 + 12 || memcmp(p, "\x89PNG\r\n\x1a\n", 8) != 0 ||
	    memcmp(p + 12, "IHDR", 4) != 0 || (tiff = wbt_img_exif(1, &tn)) == NULL) {
		return NULL;
	}
	wbt_put(&b, p, 33);
	wbt_png_chunk(&b, "tEXt", "Comment\0shot at " WBT_IMG_SECRET,
	    sizeof("Comment\0shot at " WBT_IMG_SECRET) - 1);
	wbt_put(&z, "Description\0\0", 13);
	wbt_zlib_stored(&z, "taken at " WBT_IMG_SECRET);
	if (!z.failed) {
		wbt_png_chunk(&b, "zTXt", z.p, z.n);
	}
	wbt_put(&it, "XML:com.adobe.xmp\0\0\0\0\0", 22);
	wbt_put_str(&it, WBT_XMP);
	if (!it.failed) {
		wbt_png_chunk(&b, "iTXt", it.p, it.n);
	}
	wbt_png_chunk(&b, "eXIf", tiff, tn);
	wbt_put(&b, p + 33, n - 33);
	free(z.p);
	free(it.p);
	free(tiff);
	b.failed |= z.failed || it.failed;
	return wbt_done(&b, len);
}

/* wbt_jpeg_seg appends the JPEG segment ff marker, length, head and body. */
static void
wbt_jpeg_seg(wbt_buf *b, unsigned marker, const void *head, size_t hn, const void *body, size_t n)
{
	wbt_put_byte(b, 0xff);
	wbt_put_byte(b, marker);
	wbt_put_be16(b, (uint32_t)(hn + n + 2));
	wbt_put(b, head, hn);
	wbt_put(b, body, n);
}

unsigned char *
wbt_img_jpeg_meta(const void *jpeg, size_t n, int o, size_t *len)
{
	const unsigned char *p = jpeg;
	wbt_buf              b = { 0 }, ip = { 0 };
	size_t               at = 2, tn = 0;
	unsigned char       *tiff;

	if (n < 4 || p[0] != 0xff || p[1] != 0xd8 || (tiff = wbt_img_exif(o, &tn)) == NULL) {
		return NULL;
	}
	/* right after the JFIF APP0 (if any), before any EXIF of the image's
	 * own: a reader keeps the first EXIF it finds */
	if (n >= 6 && p[2] == 0xff && p[3] == 0xe0) {
		at += 2 + ((size_t)p[4] << 8 | p[5]);
	}
	if (at > n) {
		free(tiff);
		return NULL;
	}
	wbt_put(&b, p, at);
	wbt_jpeg_seg(&b, 0xe1, "Exif\0\0", 6, tiff, tn);
	wbt_jpeg_seg(&b, 0xe1, WBT_XMP_NS, sizeof(WBT_XMP_NS), WBT_XMP, strlen(WBT_XMP));
	/* Photoshop's IPTC block: 8BIM 0404, then the IPTC caption dataset 2:120 */
	wbt_put(&ip, "8BIM\x04\x04\0\0", 8);
	wbt_put_be32(&ip, 5 + (uint32_t)strlen(WBT_IMG_SECRET) + 1);
	wbt_put(&ip, "\x1c\x02\x78", 3);
	wbt_put_be16(&ip, (uint32_t)strlen(WBT_IMG_SECRET));
	wbt_put_str(&ip, WBT_IMG_SECRET);
	wbt_put_byte(&ip, 0);
	if (!ip.failed) {
		wbt_jpeg_seg(&b, 0xed, "Photoshop 3.0", 14, ip.p, ip.n);
	}
	wbt_jpeg_seg(&b, 0xfe, "shot at ", 8, WBT_IMG_SECRET, strlen(WBT_IMG_SECRET));
	wbt_put(&b, p + at, n - at);
	b.failed |= ip.failed;
	free(ip.p);
	free(tiff);
	return wbt_done(&b, len);
}

/* wbt_gif_blocks appends s as GIF sub-blocks and their terminator. */
static void
wbt_gif_blocks(wbt_buf *b, const char *s)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n; i += 255) {
		size_t k = n - i < 255 ? n - i : 255;
		wbt_put_byte(b, (unsigned)k);
		wbt_put(b, s + i, k);
	}
	wbt_put_byte(b, 0);
}

unsigned char *
wbt_img_gif_meta(const void *gif, size_t n, size_t *len)
{
	const unsigned char *p = gif;
	wbt_buf              b = { 0 };
	size_t               at = 13;

	if (n < 14 || (memcmp(p, "GIF89a", 6) != 0 && memcmp(p, "GIF87a", 6) != 0)) {
		return NULL;
	}
	if (p[10] & 0x80) {
		at += (size_t)3 << ((p[10] & 7) + 1);
	}
	if (at >= n) {
		return NULL;
	}
	wbt_put(&b, "GIF89a", 6); /* extensions need 89a */
	wbt_put(&b, p + 6, at - 6);
	wbt_put(&b, "\x21\xfe", 2);
	wbt_gif_blocks(&b, "shot at " WBT_IMG_SECRET);
	wbt_put(&b, "\x21\xff\x0bXMP DataXMP", 14);
	wbt_gif_blocks(&b, WBT_XMP);
	wbt_put(&b, p + at, n - at);
	return wbt_done(&b, len);
}

/* wbt_riff_chunk appends a RIFF chunk, padded to even. */
static void
wbt_riff_chunk(wbt_buf *b, const char *fourcc, const void *data, size_t n)
{
	wbt_put(b, fourcc, 4);
	wbt_put_le32(b, (uint32_t)n);
	wbt_put(b, data, n);
	if (n & 1) {
		wbt_put_byte(b, 0);
	}
}

unsigned char *
wbt_img_webp_meta(const void *webp, size_t n, uint32_t width, uint32_t height, size_t *len)
{
	const unsigned char *p = webp;
	wbt_buf              b = { 0 };
	unsigned char        x[10] = { 0x08 | 0x04 }; /* EXIF and XMP present */
	unsigned char       *tiff;
	size_t               tn = 0;
	uint32_t             size;

	if (n < 20 || memcmp(p, "RIFF", 4) != 0 || memcmp(p + 8, "WEBP", 4) != 0 ||
	    (memcmp(p + 12, "VP8 ", 4) != 0 && memcmp(p + 12, "VP8L", 4) != 0) ||
	    (size = wbt_le32(p + 16)) > n - 20 || width == 0 || height == 0) {
		return NULL;
	}
	if ((tiff = wbt_img_exif(1, &tn)) == NULL) {
		return NULL;
	}
	for (int i = 0; i < 3; i++) {
		x[4 + i] = (unsigned char)((width - 1) >> (8 * i));
		x[7 + i] = (unsigned char)((height - 1) >> (8 * i));
	}
	wbt_put(&b, "RIFF\0\0\0\0WEBP", 12);
	wbt_riff_chunk(&b, "VP8X", x, sizeof(x));
	wbt_riff_chunk(&b, (const char *)p + 12, p + 20, size);
	wbt_riff_chunk(&b, "EXIF", tiff, tn);
	wbt_riff_chunk(&b, "XMP ", WBT_XMP, strlen(WBT_XMP));
	free(tiff);
	if (!b.failed) {
		uint32_t riff = (uint32_t)b.n - 8;
		memcpy(b.p + 4,
		    (unsigned char[4]) { (unsigned char)riff, (unsigned char)(riff >> 8),
		        (unsigned char)(riff >> 16), (unsigned char)(riff >> 24) },
		    4);
	}
	return wbt_done(&b, len);
}

unsigned char *
wbt_img_join(const void *a, size_t an, const void *b, size_t bn, size_t *len)
{
	wbt_buf o = { 0 };

	wbt_put(&o, a, an);
	wbt_put(&o, b, bn);
	return wbt_done(&o, len);
}

/* wbt_found writes what into out and returns false (for wbt_img_clean). */
static bool
wbt_found(char *out, size_t cap, const char *fmt, const char *what)
{
	if (cap > 0) {
		snprintf(out, cap, fmt, what);
	}
	return false;
}

/* wbt_clean_png: only image chunks (IHDR PLTE tRNS IDAT IEND) and the colour and density ones
 * libpng may write. */
static bool
wbt_clean_png(const unsigned char *p, size_t n, char *what, size_t cap)
{
	static const char *const ok[] = { "IHDR", "PLTE", "tRNS", "IDAT", "IEND", "pHYs", "gAMA",
		"cHRM", "sRGB", "bKGD", "sBIT" };
	char                     type[5] = { 0 };

	for (size_t at = 8; at + 12 <= n;) {
		size_t len = wbt_be32(p + at);
		bool   known = false;
		memcpy(type, p + at + 4, 4);
		for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
			known |= strcmp(type, ok[i]) == 0;
		}
		if (!known) {
			return wbt_found(what, cap, "a %s chunk", type);
		}
		at += 12 + len;
		if (strcmp(type, "IEND") == 0) {
			return at == n ? true : wbt_found(what, cap, "%s", "bytes after IEND");
		}
	}
	return wbt_found(what, cap, "%s", "no IEND");
}

/* wbt_clean_jpeg: before the first scan, only APP0 (JFIF) and image segments; nothing after EOI. */
static bool
wbt_clean_jpeg(const unsigned char *p, size_t n, char *what, size_t cap)
{
	char m[16];

	for (size_t at = 2; at + 4 <= n && p[at] == 0xff;) {
		unsigned mk = p[at + 1];
		if (mk == 0xda) {
			break;
		}
		if ((mk >= 0xe1 && mk <= 0xef) || mk == 0xfe) {
			snprintf(m, sizeof(m), "%02x", mk);
			return wbt_found(what, cap, "a segment ff %s", m);
		}
		at += 2 + ((size_t)p[at + 2] << 8 | p[at + 3]);
	}
	if (n < 2 || p[n - 2] != 0xff || p[n - 1] != 0xd9) {
		return wbt_found(what, cap, "%s", "bytes after the end marker");
	}
	return true;
}

/* wbt_clean_gif: no comment, plain text or application extension but NETSCAPE2.0 (loops). */
static bool
wbt_clean_gif(const unsigned char *p, size_t n, char *what, size_t cap)
{
	size_t at = 13;

	if (n > 10 && (p[10] & 0x80)) {
		at += (size_t)3 << ((p[10] & 7) + 1);
	}
	while (at < n) {
		unsigned char b = p[at];
		if (b == 0x3b) {
			return at + 1 == n ? true
			                   : wbt_found(what, cap, "%s", "bytes after the trailer");
		}
		if (b == 0x21 && at + 1 < n) {
			unsigned char label = p[at + 1];
			if (label == 0xfe || label == 0x01) {
				return wbt_found(what, cap, "%s", "a comment or text extension");
			}
			if (label == 0xff &&
			    (at + 14 > n || memcmp(p + at + 3, "NETSCAPE2.0", 11) != 0)) {
				return wbt_found(what, cap, "%s", "an application extension");
			}
			at += 2;
		} else if (b == 0x2c && at + 10 < n) {
			unsigned char f = p[at + 9];
			at += 10 + ((f & 0x80) ? (size_t)3 << ((f & 7) + 1) : 0) + 1;
		} else {
			return wbt_found(what, cap, "%s", "a block of no known kind");
		}
		while (at < n && p[at] != 0) { /* sub-blocks */
			at += 1 + p[at];
		}
		at++;
	}
	return wbt_found(what, cap, "%s", "no trailer");
}

/* wbt_clean_webp: no EXIF, XMP or ICCP chunk, and nothing after the RIFF. */
static bool
wbt_clean_webp(const unsigned char *p, size_t n, char *what, size_t cap)
{
	char cc[5] = { 0 };

	if (8 + (size_t)wbt_le32(p + 4) != n) {
		return wbt_found(what, cap, "%s", "bytes outside the RIFF");
	}
	for (size_t at = 12; at + 8 <= n;) {
		size_t size = wbt_le32(p + at + 4);
		memcpy(cc, p + at, 4);
		if (strcmp(cc, "EXIF") == 0 || strcmp(cc, "XMP ") == 0 || strcmp(cc, "ICCP") == 0) {
			return wbt_found(what, cap, "a %s chunk", cc);
		}
		at += 8 + size + (size & 1);
	}
	return true;
}

bool
wbt_img_clean(const void *data, size_t n, char *what, size_t cap)
{
	static const char *const marks[] = { WBT_IMG_SECRET, "Exif\0", WBT_XMP_NS, "adobe:ns:meta",
		"Photoshop 3.0", "8BIM", "XML:com.adobe.xmp", "ICC_PROFILE" };
	const unsigned char     *p = data;

	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		if (memmem(p, n, marks[i], strlen(marks[i]) + (i == 1)) != NULL) {
			return wbt_found(what, cap, "\"%s\"", marks[i]);
		}
	}
	if (n >= 8 && memcmp(p, "\x89PNG", 4) == 0) {
		return wbt_clean_png(p, n, what, cap);
	}
	if (n >= 2 && p[0] == 0xff && p[1] == 0xd8) {
		return wbt_clean_jpeg(p, n, what, cap);
	}
	if (n >= 13 && memcmp(p, "GIF", 3) == 0) {
		return wbt_clean_gif(p, n, what, cap);
	}
	if (n >= 12 && memcmp(p, "RIFF", 4) == 0 && memcmp(p + 8, "WEBP", 4) == 0) {
		return wbt_clean_webp(p, n, what, cap);
	}
	return wbt_found(what, cap, "%s", "not an image of the four types");
}
