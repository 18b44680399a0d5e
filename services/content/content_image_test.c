/*
 * content_image_test.c - image type and size from the header: real 5x3
 * PNG, GIF and WebP files (written by Python's zlib, by hand and by
 * cwebp 1.2.4; each decodes) and a 13x5 grey baseline JPEG built here
 * segment by segment (djpeg decodes it); every truncation, lies, zero and
 * huge sizes, and the JPEG metadata strip.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "content_image.h"
#include "wb_errors.h"

static const uint8_t png_5x3[] = { 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00,
	0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x03, 0x08, 0x02,
	0x00, 0x00, 0x00, 0xd4, 0x54, 0x52, 0xaf, 0x00, 0x00, 0x00, 0x10, 0x49, 0x44, 0x41, 0x54,
	0x78, 0xda, 0x63, 0x50, 0x68, 0x78, 0x80, 0x8c, 0x18, 0x08, 0xf0, 0x01, 0x11, 0x0e, 0x16,
	0x81, 0x24, 0xe7, 0xee, 0xf3, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42,
	0x60, 0x82 };

static const uint8_t gif_5x3[] = { 0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 0x05, 0x00, 0x03, 0x00, 0x80,
	0x00, 0x00, 0x20, 0x80, 0xe0, 0xff, 0xff, 0xff, 0x2c, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00,
	0x03, 0x00, 0x00, 0x02, 0x0c, 0x04, 0x41, 0x10, 0x04, 0x41, 0x10, 0x04, 0x41, 0x10, 0x04,
	0x41, 0x14, 0x00, 0x3b };

static const uint8_t webp_vp8_5x3[] = { 0x52, 0x49, 0x46, 0x46, 0x3a, 0x00, 0x00, 0x00, 0x57, 0x45,
	0x42, 0x50, 0x56, 0x50, 0x38, 0x20, 0x2e, 0x00, 0x00, 0x00, 0x30, 0x02, 0x00, 0x9d, 0x01,
	0x2a, 0x05, 0x00, 0x03, 0x00, 0x02, 0xc0, 0x4c, 0x25, 0xa0, 0x02, 0x74, 0xba, 0x01, 0xf8,
	0x00, 0x03, 0x21, 0x06, 0xfb, 0x80, 0x00, 0xfe, 0x0c, 0x1c, 0xff, 0xf9, 0x29, 0xaf, 0xf1,
	0xb6, 0xf1, 0x3f, 0xf8, 0xb3, 0x91, 0x88, 0xec, 0xbc, 0x00, 0x00 };

static const uint8_t webp_vp8l_5x3[] = { 0x52, 0x49, 0x46, 0x46, 0x1e, 0x00, 0x00, 0x00, 0x57, 0x45,
	0x42, 0x50, 0x56, 0x50, 0x38, 0x4c, 0x11, 0x00, 0x00, 0x00, 0x2f, 0x04, 0x80, 0x00, 0x00,
	0x07, 0x50, 0xc0, 0x82, 0x14, 0xbc, 0xff, 0x81, 0x88, 0xe8, 0x7f, 0x00, 0x00 };

/* VP8X (alpha), ALPH, VP8: a lossy image with transparency. */
static const uint8_t webp_vp8x_5x3[] = { 0x52, 0x49, 0x46, 0x46, 0x5e, 0x00, 0x00, 0x00, 0x57, 0x45,
	0x42, 0x50, 0x56, 0x50, 0x38, 0x58, 0x0a, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, 0x00, 0x04,
	0x00, 0x00, 0x02, 0x00, 0x00, 0x41, 0x4c, 0x50, 0x48, 0x0a, 0x00, 0x00, 0x00, 0x01, 0x07,
	0x50, 0xc0, 0x88, 0x08, 0x44, 0x44, 0xff, 0x03, 0x56, 0x50, 0x38, 0x20, 0x2e, 0x00, 0x00,
	0x00, 0x30, 0x02, 0x00, 0x9d, 0x01, 0x2a, 0x05, 0x00, 0x03, 0x00, 0x02, 0xc0, 0x4c, 0x25,
	0xa0, 0x02, 0x74, 0xba, 0x01, 0xf8, 0x00, 0x03, 0x21, 0x06, 0xfb, 0x80, 0x00, 0xfe, 0x0c,
	0x1c, 0xff, 0xf9, 0x29, 0xaf, 0xf1, 0xb6, 0xf1, 0x3f, 0xf8, 0xb3, 0x91, 0x88, 0xec, 0xbc,
	0x00, 0x00 };

#define GPS_SECRET "GPS-LOCATION-SECRET"

typedef struct img {
	uint8_t b[1024];
	size_t  n;
} img;

static void
put(img *m, const void *p, size_t len)
{
	cr_assert_leq(m->n + len, sizeof(m->b));
	memcpy(m->b + m->n, p, len);
	m->n += len;
}

/* seg appends the marker segment ff marker, length, body. */
static void
seg(img *m, uint8_t marker, const void *body, size_t len)
{
	uint8_t h[4] = { 0xff, marker, (uint8_t)((len + 2) >> 8), (uint8_t)(len + 2) };

	put(m, h, sizeof(h));
	put(m, body, len);
}

#define SEG(m, marker, lit) seg((m), (marker), (lit), sizeof(lit) - 1)

static void
jpeg_soi_jfif(img *m)
{
	put(m, "\xff\xd8", 2);
	SEG(m, 0xe0, "JFIF\0\1\1\0\0\1\0\1\0\0");
}

/* jpeg_frame appends the tables and a one-component frame of w x h: an
 * all-ones quantisation table, one-code DC and AC Huffman tables. */
static void
jpeg_frame(img *m, uint8_t sof, uint16_t w, uint16_t h)
{
	uint8_t q[65], dht[36] = { [1] = 1, [18] = 0x10, [19] = 1 };
	uint8_t f[9] = { 8, (uint8_t)(h >> 8), (uint8_t)h, (uint8_t)(w >> 8), (uint8_t)w, 1, 1,
		0x11, 0 };

	memset(q, 1, sizeof(q));
	q[0] = 0;
	seg(m, 0xdb, q, sizeof(q));
	seg(m, sof, f, sizeof(f));
	seg(m, 0xc4, dht, sizeof(dht));
}

/* jpeg_scan appends the SOS, the scan of two blocks of 8x8 (DC 0, end of
 * block, twice) and the EOI; it returns where the SOS starts. */
static size_t
jpeg_scan(img *m)
{
	size_t at = m->n;

	SEG(m, 0xda, "\1\1\0\0\x3f\0");
	put(m, "\x0f\xff\xd9", 3);
	return at;
}

static void
jpeg_plain(img *m)
{
	m->n = 0;
	jpeg_soi_jfif(m);
	jpeg_frame(m, 0xc0, 13, 5);
	jpeg_scan(m);
}

/* jpeg_meta builds the plain JPEG with EXIF (a GPS secret), XMP, a comment
 * and Photoshop's APP13 around an ICC profile and an Adobe APP14, and the
 * JPEG the strip must give (want). */
static void
jpeg_meta(img *m, img *want)
{
	m->n = want->n = 0;
	jpeg_soi_jfif(m);
	jpeg_soi_jfif(want);
	SEG(m, 0xe1, "Exif\0\0MM\0\x2a\0\0\0\x08\0\0\0\0\0\0" GPS_SECRET);
	SEG(m, 0xe1,
	    "http://ns.adobe.com/xap/1.0/\0<x:xmpmeta><exif:GPS>" GPS_SECRET
	    "</exif:GPS></x:xmpmeta>");
	SEG(m, 0xe2, "ICC_PROFILE\0\1\1fake profile");
	SEG(want, 0xe2, "ICC_PROFILE\0\1\1fake profile");
	SEG(m, 0xe2, "ICC_PROFILX\0\1\1" GPS_SECRET); /* not ICC: dropped */
	SEG(m, 0xfe, "shot at " GPS_SECRET);
	SEG(m, 0xee, "Adobe\0\x64\0\0\0\0\0");
	SEG(want, 0xee, "Adobe\0\x64\0\0\0\0\0");
	SEG(m, 0xed, "Photoshop 3.0\0" GPS_SECRET);
	SEG(m, 0xef, GPS_SECRET);
	jpeg_frame(m, 0xc0, 13, 5);
	jpeg_frame(want, 0xc0, 13, 5);
	SEG(m, 0xe1, "Exif\0\0" GPS_SECRET); /* after the frame, still before the scan */
	jpeg_scan(m);
	jpeg_scan(want);
}

static void
check_probe(const uint8_t *p, size_t n, content_image_type t, uint32_t w, uint32_t h)
{
	content_image_info info = { 0 };

	cr_assert_eq(content_image_probe(p, n, &info), WB_OK);
	cr_assert_eq(info.type, t);
	cr_assert_eq(info.width, w);
	cr_assert_eq(info.height, h);
}

/* refused probes exactly p[0..n) from a heap copy of n bytes, so that ASan
 * sees any read past it. */
static int
refused(const void *p, size_t n)
{
	content_image_info info = { .type = 99, .width = 7, .height = 7 };
	uint8_t           *c = malloc(n > 0 ? n : 1);
	int                rv;

	cr_assert_not_null(c);
	if (n > 0) {
		memcpy(c, p, n);
	}
	rv = content_image_probe(c, n, &info);
	free(c);
	cr_assert(rv == WB_OK || (info.type == 99 && info.width == 7), "a refusal leaves *out");
	return rv == WB_EMEDIATYPE;
}

Test(content_image, each_format_with_its_size_and_mime)
{
	img j;

	check_probe(png_5x3, sizeof(png_5x3), CONTENT_IMAGE_PNG, 5, 3);
	check_probe(gif_5x3, sizeof(gif_5x3), CONTENT_IMAGE_GIF, 5, 3);
	check_probe(webp_vp8_5x3, sizeof(webp_vp8_5x3), CONTENT_IMAGE_WEBP, 5, 3);
	check_probe(webp_vp8l_5x3, sizeof(webp_vp8l_5x3), CONTENT_IMAGE_WEBP, 5, 3);
	check_probe(webp_vp8x_5x3, sizeof(webp_vp8x_5x3), CONTENT_IMAGE_WEBP, 5, 3);
	jpeg_plain(&j);
	check_probe(j.b, j.n, CONTENT_IMAGE_JPEG, 13, 5);

	cr_assert_str_eq(content_image_mime(CONTENT_IMAGE_PNG), "image/png");
	cr_assert_str_eq(content_image_mime(CONTENT_IMAGE_JPEG), "image/jpeg");
	cr_assert_str_eq(content_image_mime(CONTENT_IMAGE_GIF), "image/gif");
	cr_assert_str_eq(content_image_mime(CONTENT_IMAGE_WEBP), "image/webp");
	cr_assert_null(content_image_mime(0));
	cr_assert_null(content_image_mime(CONTENT_IMAGE_WEBP + 1));
}

Test(content_image, gif87a_trailing_bytes_and_jpeg_variants)
{
	uint8_t g[sizeof(gif_5x3)];
	img     j;

	memcpy(g, gif_5x3, sizeof(g));
	g[4] = '7';
	check_probe(g, sizeof(g), CONTENT_IMAGE_GIF, 5, 3);

	/* bytes after the RIFF (a sloppy uploader) do not hide the image */
	uint8_t w[sizeof(webp_vp8l_5x3) + 3] = { 0 };
	memcpy(w, webp_vp8l_5x3, sizeof(webp_vp8l_5x3));
	check_probe(w, sizeof(w), CONTENT_IMAGE_WEBP, 5, 3);

	/* progressive and arithmetic frames; fill bytes and a standalone marker */
	static const uint8_t sofs[] = { 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd,
		0xce, 0xcf };
	for (size_t i = 0; i < sizeof(sofs); i++) {
		j.n = 0;
		jpeg_soi_jfif(&j);
		put(&j, "\xff\xff\xff", 3);
		jpeg_frame(&j, sofs[i], 640, 480);
		put(&j, "\xff\xd0", 2);
		jpeg_scan(&j);
		check_probe(j.b, j.n, CONTENT_IMAGE_JPEG, 640, 480);
	}
}

Test(content_image, every_truncation_is_refused_until_the_header_is_whole)
{
	img    j;
	size_t sos;

	j.n = 0;
	jpeg_soi_jfif(&j);
	jpeg_frame(&j, 0xc0, 13, 5);
	sos = jpeg_scan(&j);
	const struct {
		const uint8_t *p;
		size_t         n, head; /* the shortest prefix that probes */
	} s[] = {
		{ png_5x3, sizeof(png_5x3), 8 + 8 + 13 + 4 },
		{ gif_5x3, sizeof(gif_5x3), 13 },
		{ webp_vp8_5x3, sizeof(webp_vp8_5x3), sizeof(webp_vp8_5x3) },
		{ webp_vp8l_5x3, sizeof(webp_vp8l_5x3), sizeof(webp_vp8l_5x3) },
		{ webp_vp8x_5x3, sizeof(webp_vp8x_5x3), sizeof(webp_vp8x_5x3) },
		{ j.b, j.n, sos + 10 },
	};

	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++) {
		content_image_info want;

		cr_assert_eq(content_image_probe(s[i].p, s[i].n, &want), WB_OK);
		for (size_t k = 0; k <= s[i].n; k++) {
			if (k < s[i].head) {
				cr_assert(refused(s[i].p, k), "sample %zu, %zu bytes", i, k);
			} else {
				check_probe(s[i].p, k, want.type, want.width, want.height);
			}
		}
	}
	cr_assert(refused(NULL, 0));
	cr_assert_eq(content_image_probe(NULL, 0, &(content_image_info) { 0 }), WB_EMEDIATYPE);
}

Test(content_image, lies_and_strangers_are_refused)
{
	uint8_t b[256];
	img     j;

	jpeg_plain(&j);
	/* a PNG signature before a JPEG, a JPEG's before a PNG */
	memcpy(b, png_5x3, 8);
	memcpy(b + 8, j.b, j.n);
	cr_assert(refused(b, 8 + j.n));
	memcpy(b, "\xff\xd8", 2);
	memcpy(b + 2, png_5x3, sizeof(png_5x3));
	cr_assert(refused(b, 2 + sizeof(png_5x3)));
	/* a GIF signature before a WebP, a RIFF that is a WAVE */
	memcpy(b, "GIF89a", 6);
	memcpy(b + 6, webp_vp8l_5x3, sizeof(webp_vp8l_5x3));
	cr_assert_eq(content_image_probe(b, 6 + sizeof(webp_vp8l_5x3), &(content_image_info) { 0 }),
	    WB_OK, "a GIF header is a GIF header, whatever follows");
	memcpy(b, webp_vp8l_5x3, sizeof(webp_vp8l_5x3));
	memcpy(b + 8, "WAVE", 4);
	cr_assert(refused(b, sizeof(webp_vp8l_5x3)));

	cr_assert(refused("GIF88a\5\0\3\0\0\0\0", 13));
	cr_assert(refused("BM\x3a\0\0\0\0\0\0\0\x36\0\0\0\x28\0\0\0", 18));
	cr_assert(refused("<svg xmlns=\"http://www.w3.org/2000/svg\"/>", 41));
	cr_assert(refused("\0\0\0\x18"
	                  "ftypheic",
	    12));
	memset(b, 0xff, sizeof(b));
	cr_assert(refused(b, sizeof(b)));
	b[1] = 0xd8;
	cr_assert(refused(b, sizeof(b)), "SOI then fill bytes to the end");
}

Test(content_image, zero_sizes_are_refused)
{
	uint8_t b[sizeof(webp_vp8x_5x3)];
	img     j;

	memcpy(b, png_5x3, sizeof(png_5x3));
	b[19] = 0;
	cr_assert(refused(b, sizeof(png_5x3)), "PNG width 0");
	memcpy(b, png_5x3, sizeof(png_5x3));
	b[23] = 0;
	cr_assert(refused(b, sizeof(png_5x3)), "PNG height 0");
	memcpy(b, gif_5x3, sizeof(gif_5x3));
	b[6] = 0;
	cr_assert(refused(b, sizeof(gif_5x3)), "GIF width 0");
	memcpy(b, gif_5x3, sizeof(gif_5x3));
	b[8] = 0;
	cr_assert(refused(b, sizeof(gif_5x3)), "GIF height 0");
	memcpy(b, webp_vp8_5x3, sizeof(webp_vp8_5x3));
	b[26] = 0;
	cr_assert(refused(b, sizeof(webp_vp8_5x3)), "VP8 width 0");
	b[26] = 0x05;
	b[29] = 0xc0; /* scale bits set, size 0 */
	b[28] = 0;
	cr_assert(refused(b, sizeof(webp_vp8_5x3)), "VP8 height 0");

	j.n = 0;
	jpeg_soi_jfif(&j);
	jpeg_frame(&j, 0xc0, 13, 0);
	jpeg_scan(&j);
	cr_assert(refused(j.b, j.n), "JPEG height 0 (a DNL later)");
	j.n = 0;
	jpeg_soi_jfif(&j);
	jpeg_frame(&j, 0xc0, 0, 5);
	jpeg_scan(&j);
	cr_assert(refused(j.b, j.n), "JPEG width 0");
}

Test(content_image, inconsistent_headers_are_refused)
{
	uint8_t b[sizeof(webp_vp8x_5x3)];
	img     j;

#define MUTATE(src, at, val, why)                              \
	do {                                                   \
		memcpy(b, (src), sizeof(src));                 \
		b[(at)] = (val);                               \
		cr_assert(refused(b, sizeof(src)), "%s", why); \
	} while (0)
	MUTATE(png_5x3, 11, 12, "IHDR length 12");
	MUTATE(png_5x3, 12, 'i', "first chunk not IHDR");
	MUTATE(png_5x3, 24, 7, "bit depth 7");
	MUTATE(png_5x3, 24, 4, "RGB at depth 4");
	MUTATE(png_5x3, 25, 5, "colour type 5");
	MUTATE(png_5x3, 26, 1, "compression 1");
	MUTATE(png_5x3, 27, 1, "filter 1");
	MUTATE(png_5x3, 28, 2, "interlace 2");
	MUTATE(webp_vp8_5x3, 4, 0x3b, "RIFF one byte longer than the file");
	MUTATE(webp_vp8_5x3, 4, 0x30, "RIFF shorter than its chunk");
	MUTATE(webp_vp8_5x3, 4, 0x05, "RIFF shorter than a chunk header");
	MUTATE(webp_vp8_5x3, 16, 0x2f, "VP8 chunk longer than the RIFF");
	MUTATE(webp_vp8_5x3, 20, 0x31, "VP8 not a key frame");
	MUTATE(webp_vp8_5x3, 20, 0x20, "VP8 frame not shown");
	MUTATE(webp_vp8_5x3, 20, 0x38, "VP8 profile 4");
	MUTATE(webp_vp8_5x3, 21, 0x22, "VP8 first partition past the chunk");
	MUTATE(webp_vp8_5x3, 24, 0x02, "VP8 start code");
	MUTATE(webp_vp8_5x3, 15, 'Z', "unknown chunk");
	MUTATE(webp_vp8l_5x3, 20, 0x2e, "VP8L signature");
	MUTATE(webp_vp8l_5x3, 24, 0x20, "VP8L version 1");
	MUTATE(webp_vp8x_5x3, 16, 0x0b, "VP8X of 11 bytes");
#undef MUTATE
	check_probe(png_5x3, sizeof(png_5x3), CONTENT_IMAGE_PNG, 5, 3);
	memcpy(b, png_5x3, sizeof(png_5x3));
	b[25] = 3; /* a palette of 8 bits, and interlaced: fine */
	b[28] = 1;
	check_probe(b, sizeof(png_5x3), CONTENT_IMAGE_PNG, 5, 3);

	/* JPEG: two frames, a scan before its frame, EOI before the frame, a
	 * frame or scan whose length disagrees with its components, a segment
	 * length below 2, a byte between segments, FF 00 */
	j.n = 0;
	jpeg_soi_jfif(&j);
	jpeg_frame(&j, 0xc0, 13, 5);
	jpeg_frame(&j, 0xc2, 13, 5);
	jpeg_scan(&j);
	cr_assert(refused(j.b, j.n), "two frames");
	j.n = 0;
	jpeg_soi_jfif(&j);
	jpeg_scan(&j);
	jpeg_frame(&j, 0xc0, 13, 5);
	jpeg_scan(&j);
	cr_assert(refused(j.b, j.n), "scan before the frame");
	j.n = 0;
	jpeg_soi_jfif(&j);
	put(&j, "\xff\xd9", 2);
	jpeg_frame(&j, 0xc0, 13, 5);
	jpeg_scan(&j);
	cr_assert(refused(j.b, j.n), "EOI before the frame");
	j.n = 0;
	jpeg_soi_jfif(&j);
	SEG(&j, 0xc0, "\x08\0\5\0\x0d\2\1\x11\0");
	jpeg_scan(&j);
	cr_assert(refused(j.b, j.n), "SOF of 2 components, 1 given");
	j.n = 0;
	jpeg_soi_jfif(&j);
	jpeg_frame(&j, 0xc0, 13, 5);
	SEG(&j, 0xda, "\2\1\0\0\x3f\0");
	cr_assert(refused(j.b, j.n), "SOS of 2 components, 1 given");
	for (int k = 0; k < 4; k++) {
		static const char *junk[] = { "\xff\xfe\0\1", "\xff\xfe\0\0", "\x00", "\xff\x00" };
		j.n = 0;
		jpeg_soi_jfif(&j);
		put(&j, junk[k], k < 2 ? 4 : k == 2 ? 1 : 2);
		jpeg_frame(&j, 0xc0, 13, 5);
		jpeg_scan(&j);
		cr_assert(refused(j.b, j.n), "junk %d", k);
	}
}

Test(content_image, huge_sizes_are_read_as_given)
{
	uint8_t b[sizeof(png_5x3)];
	img     j;

	memcpy(b, png_5x3, sizeof(b));
	memcpy(b + 16, "\0\1\x86\xa0\0\1\x86\xa0", 8);
	check_probe(b, sizeof(b), CONTENT_IMAGE_PNG, 100000, 100000);
	memcpy(b + 16, "\x7f\xff\xff\xff\x7f\xff\xff\xff", 8);
	check_probe(b, sizeof(b), CONTENT_IMAGE_PNG, 0x7fffffff, 0x7fffffff);
	b[16] = 0x80;
	cr_assert(refused(b, sizeof(b)), "PNG width 2^31 and more");

	uint8_t x[sizeof(webp_vp8x_5x3)];
	memcpy(x, webp_vp8x_5x3, sizeof(x));
	memset(x + 24, 0xff, 6);
	check_probe(x, sizeof(x), CONTENT_IMAGE_WEBP, 1 << 24, 1 << 24);
	uint8_t l[sizeof(webp_vp8l_5x3)];
	memcpy(l, webp_vp8l_5x3, sizeof(l));
	memcpy(l + 21, "\xff\xff\xff\x0f", 4);
	check_probe(l, sizeof(l), CONTENT_IMAGE_WEBP, 1 << 14, 1 << 14);
	memcpy(b, gif_5x3, 13);
	memset(b + 6, 0xff, 4);
	check_probe(b, 13, CONTENT_IMAGE_GIF, 65535, 65535);

	j.n = 0;
	jpeg_soi_jfif(&j);
	jpeg_frame(&j, 0xc0, 65535, 65535);
	jpeg_scan(&j);
	check_probe(j.b, j.n, CONTENT_IMAGE_JPEG, 65535, 65535);
}

Test(content_image, strip_removes_exif_xmp_and_comments_only)
{
	img                m, want, orig;
	size_t             n = 0;
	content_image_info info;

	jpeg_meta(&m, &want);
	orig = m;
	cr_assert_not_null(memmem(m.b, m.n, GPS_SECRET, strlen(GPS_SECRET)));
	check_probe(m.b, m.n, CONTENT_IMAGE_JPEG, 13, 5);
	cr_assert_eq(content_image_strip(m.b, m.n, &n), WB_OK);
	cr_assert_eq(n, want.n, "%zu bytes, want %zu", n, want.n);
	cr_assert_arr_eq(
	    m.b, want.b, n, "APP0, ICC, Adobe, tables, frame and scan kept as they were");
	cr_assert_null(memmem(m.b, n, GPS_SECRET, strlen(GPS_SECRET)));
	cr_assert_arr_eq(
	    m.b + n - 13, orig.b + orig.n - 13, 13, "the scan is the same to the byte");
	cr_assert_eq(content_image_probe(m.b, n, &info), WB_OK);
	cr_assert_eq(info.width, 13);
	cr_assert_eq(info.height, 5);

	/* stripping again changes nothing; nor does stripping a plain JPEG */
	cr_assert_eq(content_image_strip(m.b, n, &n), WB_OK);
	cr_assert_eq(n, want.n);
	cr_assert_arr_eq(m.b, want.b, n);
	jpeg_plain(&m);
	orig = m;
	cr_assert_eq(content_image_strip(m.b, m.n, &n), WB_OK);
	cr_assert_eq(n, orig.n);
	cr_assert_arr_eq(m.b, orig.b, n);
}

Test(content_image, strip_keeps_other_types_and_refuses_what_probe_refuses)
{
	uint8_t b[sizeof(webp_vp8x_5x3)];
	size_t  n = 12345;
	img     m, want, orig;

	memcpy(b, webp_vp8x_5x3, sizeof(b));
	cr_assert_eq(content_image_strip(b, sizeof(b), &n), WB_OK);
	cr_assert_eq(n, sizeof(b));
	cr_assert_arr_eq(b, webp_vp8x_5x3, sizeof(b));
	memcpy(b, png_5x3, sizeof(png_5x3));
	cr_assert_eq(content_image_strip(b, sizeof(png_5x3), &n), WB_OK);
	cr_assert_eq(n, sizeof(png_5x3));
	cr_assert_arr_eq(b, png_5x3, sizeof(png_5x3));

	memcpy(b, "not an image at all", 19);
	cr_assert_eq(content_image_strip(b, 19, &n), WB_EMEDIATYPE);

	/* a JPEG head cut before its scan, or with two frames, stays as it is */
	jpeg_meta(&m, &want);
	orig = m;
	for (size_t k = 0; k < m.n - 3; k++) {
		n = 12345;
		cr_assert_eq(content_image_strip(m.b, k, &n), WB_EMEDIATYPE, "%zu bytes", k);
		cr_assert_eq(n, 12345);
		cr_assert_arr_eq(m.b, orig.b, m.n, "%zu bytes", k);
	}
	m.n -= 13; /* SOS, scan, EOI */
	jpeg_frame(&m, 0xc1, 13, 5);
	jpeg_scan(&m);
	orig = m;
	cr_assert_eq(content_image_strip(m.b, m.n, &n), WB_EMEDIATYPE);
	cr_assert_arr_eq(m.b, orig.b, m.n);
}
