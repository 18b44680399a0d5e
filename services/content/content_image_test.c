/*
 * content_image_test.c - uploads decoded by libvips and written again:
 * for each type (PNG, JPEG, GIF, WebP) an image carrying every kind of
 * metadata (tests/support/wbt_img.h: GPS in EXIF, XMP, IPTC, text chunks,
 * comments) comes back with none of it, in its own type; bytes after the
 * image's end are refused (a polyglot, an EXIF block after a JPEG's end)
 * but the further pictures of a multi-picture JPEG are dropped; truncated
 * and corrupt files are refused; the EXIF orientation is applied; colour
 * goes to 8-bit sRGB; frames are kept; the preview is at most 640 px a
 * side; the pixel limit counts every frame.  Base images are made here
 * with libvips itself, or are the 5x3 files of the container tests
 * (written by Python's zlib, by hand and by cwebp 1.2.4; each decodes).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <vips/vips.h>

#include "content_image.h"
#include "wb_errors.h"
#include "wbt_img.h"
#include "wbt_png.h"

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

static const content_image_opts opts = { .max_pixels = 25000000, .max_bytes = 3 << 20 };

/* An encode's results, freed by done(). */
typedef struct enc {
	content_image_file orig, preview;
	char               why[256];
	int                rc;
} enc;

/* encode runs the pipeline on a heap copy of exactly n bytes, so ASan sees any read past it. */
static enc
encode_with(const void *p, size_t n, const content_image_opts *o)
{
	enc      e;
	uint8_t *c = malloc(n > 0 ? n : 1);

	cr_assert_not_null(c);
	if (n > 0) {
		memcpy(c, p, n);
	}
	e.rc = content_image_encode(&e.orig, &e.preview, c, n, o, e.why, sizeof(e.why));
	free(c);
	if (e.rc != WB_OK) {
		cr_assert_null(e.orig.data, "a refusal leaves nothing to free");
		cr_assert(e.why[0] != '\0', "a refusal says why");
	}
	return e;
}

static enc
encode(const void *p, size_t n)
{
	return encode_with(p, n, &opts);
}

static void
done(enc *e)
{
	content_image_file_free(&e->orig);
	content_image_file_free(&e->preview);
}

/* clean checks that an accepted image and its preview carry no metadata, and the types. */
static void
clean(const enc *e, content_image_type t, const char *what)
{
	char why[128];

	cr_assert_eq(e->rc, WB_OK, "%s: refused: %s", what, e->why);
	cr_assert_eq(e->orig.type, t, "%s: type %d, want %d", what, e->orig.type, t);
	cr_assert(wbt_img_clean(e->orig.data, e->orig.len, why, sizeof(why)), "%s: %s", what, why);
	cr_assert_eq(e->preview.type, CONTENT_IMAGE_WEBP);
	cr_assert(wbt_img_clean(e->preview.data, e->preview.len, why, sizeof(why)),
	    "%s preview: %s", what, why);
	/* what was written decodes again, to the same sizes */
	enc again = encode(e->orig.data, e->orig.len);
	cr_assert_eq(again.rc, WB_OK, "%s: written again, refused: %s", what, again.why);
	cr_assert_eq(again.orig.width, e->orig.width);
	cr_assert_eq(again.orig.height, e->orig.height);
	done(&again);
}

/* refused checks that p[0..n) is refused with rc. */
static void
refused(const void *p, size_t n, int rc, const char *what)
{
	enc e = encode(p, n);

	cr_assert_eq(
	    e.rc, rc, "%s: %s, want %s (%s)", what, wb_err_name(e.rc), wb_err_name(rc), e.why);
	done(&e);
}

/* A base image made with libvips: w x h, RGB, a gradient, its blue blue. */
static VipsImage *
base_blue(int w, int h, int blue)
{
	VipsImage *xy, *rgb, *u8, *out;

	cr_assert_eq(vips_xyz(&xy, w, h, NULL), 0);
	cr_assert_eq(vips_bandjoin_const1(xy, &rgb, blue, NULL), 0);
	cr_assert_eq(vips_cast_uchar(rgb, &u8, NULL), 0);
	cr_assert_eq(vips_copy(u8, &out, "interpretation", VIPS_INTERPRETATION_sRGB, NULL), 0);
	g_object_unref(xy);
	g_object_unref(rgb);
	g_object_unref(u8);
	return out;
}

static VipsImage *
base(int w, int h)
{
	return base_blue(w, h, 128);
}

/* A saved image's bytes (g_free them). */
typedef struct file {
	void  *p;
	size_t n;
} file;

static file
save(VipsImage *im, const char *suffix)
{
	file f = { 0 };

	cr_assert_eq(vips_image_write_to_buffer(im, suffix, &f.p, &f.n, NULL), 0, "%s: %s", suffix,
	    vips_error_buffer());
	return f;
}

static file
base_file(int w, int h, const char *suffix)
{
	VipsImage *im = base(w, h);
	file       f = save(im, suffix);

	g_object_unref(im);
	return f;
}

static void
init(void)
{
	cr_assert_eq(content_image_init(), WB_OK);
}

TestSuite(content_image, .init = init);

/* --- the container walk ------------------------------------------------ */

Test(content_image, each_type_walks_to_its_end_with_its_mime)
{
	static const struct {
		const uint8_t     *p;
		size_t             n;
		content_image_type t;
	} f[] = {
		{ png_5x3, sizeof(png_5x3), CONTENT_IMAGE_PNG },
		{ gif_5x3, sizeof(gif_5x3), CONTENT_IMAGE_GIF },
		{ webp_vp8_5x3, sizeof(webp_vp8_5x3), CONTENT_IMAGE_WEBP },
		{ webp_vp8l_5x3, sizeof(webp_vp8l_5x3), CONTENT_IMAGE_WEBP },
		{ webp_vp8x_5x3, sizeof(webp_vp8x_5x3), CONTENT_IMAGE_WEBP },
	};
	content_container k;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		cr_assert_eq(
		    content_container_scan(f[i].p, f[i].n, &k), WB_OK, "%zu: %s", i, k.why);
		cr_assert_eq(k.type, f[i].t);
		cr_assert_eq(k.end, f[i].n, "%zu: end %zu of %zu", i, k.end, f[i].n);
		cr_assert_eq(k.pictures, f[i].n);
	}
	cr_assert(content_container_scan(webp_vp8l_5x3, sizeof(webp_vp8l_5x3), &k) == WB_OK &&
	          k.lossless);
	cr_assert(
	    content_container_scan(webp_vp8_5x3, sizeof(webp_vp8_5x3), &k) == WB_OK && !k.lossless);
	cr_assert_str_eq(content_image_mime(CONTENT_IMAGE_PNG), "image/png");
	cr_assert_str_eq(content_image_mime(CONTENT_IMAGE_JPEG), "image/jpeg");
	cr_assert_str_eq(content_image_mime(CONTENT_IMAGE_GIF), "image/gif");
	cr_assert_str_eq(content_image_mime(CONTENT_IMAGE_WEBP), "image/webp");
	cr_assert_null(content_image_mime(0));
	cr_assert_null(content_image_mime(CONTENT_IMAGE_WEBP + 1));
}

/* Every prefix of a whole file is refused by the walk: none reaches its end. */
Test(content_image, every_truncation_is_refused)
{
	file              j = base_file(13, 5, ".jpg[strip]");
	content_container k;
	struct {
		const uint8_t *p;
		size_t         n;
	} f[] = {
		{ png_5x3, sizeof(png_5x3) },
		{ gif_5x3, sizeof(gif_5x3) },
		{ webp_vp8_5x3, sizeof(webp_vp8_5x3) },
		{ webp_vp8x_5x3, sizeof(webp_vp8x_5x3) },
		{ j.p, j.n },
	};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		cr_assert_eq(content_container_scan(f[i].p, f[i].n, &k), WB_OK);
		for (size_t n = 0; n < f[i].n; n++) {
			uint8_t *c = malloc(n + 1);
			memcpy(c, f[i].p, n);
			cr_assert_eq(content_container_scan(c, n, &k), WB_EMEDIATYPE,
			    "file %zu cut at %zu of %zu bytes", i, n, f[i].n);
			cr_assert_not_null(k.why);
			free(c);
		}
	}
	g_free(j.p);
}

Test(content_image, strangers_and_damaged_structures_are_refused)
{
	uint8_t           b[sizeof(png_5x3)];
	content_container k;

	cr_assert_eq(content_container_scan((const uint8_t *)"%PDF-1.7\n", 9, &k), WB_EMEDIATYPE);
	cr_assert_eq(content_container_scan((const uint8_t *)"<svg/>", 6, &k), WB_EMEDIATYPE);
	cr_assert_eq(content_container_scan((const uint8_t *)"BM\0\0", 4, &k), WB_EMEDIATYPE);
	cr_assert_eq(content_container_scan(NULL, 0, &k), WB_EMEDIATYPE);
	/* a PNG without IDAT: the IHDR, then IEND */
	memcpy(b, png_5x3, 33);
	memcpy(b + 33, png_5x3 + sizeof(png_5x3) - 12, 12);
	cr_assert_eq(content_container_scan(b, 45, &k), WB_EMEDIATYPE);
	cr_assert(strstr(k.why, "IDAT") != NULL, "%s", k.why);
	/* a chunk type that is not four letters, a length past the end */
	memcpy(b, png_5x3, sizeof(b));
	b[37] = '1';
	cr_assert_eq(content_container_scan(b, sizeof(b), &k), WB_EMEDIATYPE);
	memcpy(b, png_5x3, sizeof(b));
	b[33] = 0x7f;
	cr_assert_eq(content_container_scan(b, sizeof(b), &k), WB_EMEDIATYPE);
	/* a GIF block of no known kind, a WebP that starts with another chunk */
	uint8_t g[sizeof(gif_5x3)];
	memcpy(g, gif_5x3, sizeof(g));
	g[19] = 0x2d;
	cr_assert_eq(content_container_scan(g, sizeof(g), &k), WB_EMEDIATYPE);
	uint8_t w[sizeof(webp_vp8_5x3)];
	memcpy(w, webp_vp8_5x3, sizeof(w));
	memcpy(w + 12, "EXIF", 4);
	cr_assert_eq(content_container_scan(w, sizeof(w), &k), WB_EMEDIATYPE);
}

Test(content_image, trailing_bytes_and_further_jpeg_pictures_are_found)
{
	file              j = base_file(13, 5, ".jpg[strip]");
	size_t            n;
	uint8_t          *two = wbt_img_join(j.p, j.n, j.p, j.n, &n), *tail;
	content_container k;

	cr_assert_eq(content_container_scan(two, n, &k), WB_OK);
	cr_assert_eq(k.end, j.n);
	cr_assert_eq(k.pictures, n, "the second picture is walked too");
	free(two);
	tail = wbt_img_join(j.p, j.n, "<html>", 6, &n);
	cr_assert_eq(content_container_scan(tail, n, &k), WB_OK);
	cr_assert_eq(k.pictures, j.n, "what follows is no picture");
	free(tail);
	tail = wbt_img_join(png_5x3, sizeof(png_5x3), "\0", 1, &n);
	cr_assert_eq(content_container_scan(tail, n, &k), WB_OK);
	cr_assert_eq(k.end, sizeof(png_5x3));
	free(tail);
	g_free(j.p);
}

Test(content_image, webp_strip_drops_metadata_chunks_only)
{
	size_t            n, m;
	uint8_t          *w = wbt_img_webp_meta(webp_vp8_5x3, sizeof(webp_vp8_5x3), 5, 3, &n);
	content_container k;
	char              why[128];

	cr_assert_not_null(w);
	cr_assert_not(wbt_img_clean(w, n, why, sizeof(why)));
	cr_assert_eq(content_container_webp_strip(w, n, &m), WB_OK);
	cr_assert(wbt_img_clean(w, m, why, sizeof(why)), "%s", why);
	cr_assert_eq(content_container_scan(w, m, &k), WB_OK);
	cr_assert_eq(k.end, m);
	cr_assert_eq(w[20] & (0x20 | 0x08 | 0x04), 0, "the VP8X flags are cleared");
	cr_assert(memmem(w, m, "VP8 ", 4) != NULL, "the image chunk stays");
	cr_assert_eq(content_container_webp_strip((uint8_t *)png_5x3, 20, &m), WB_EMEDIATYPE);
	free(w);
}

/* --- decoded and written again: no metadata ---------------------------- */

Test(content_image, png_text_xmp_and_exif_chunks_are_gone)
{
	size_t   n, m;
	uint8_t *png = wbt_png(120, 80, 3, &n);
	uint8_t *meta = wbt_img_png_meta(png, n, &m);
	enc      e = encode(meta, m);

	clean(&e, CONTENT_IMAGE_PNG, "png");
	cr_assert_eq(e.orig.width, 120);
	cr_assert_eq(e.orig.height, 80);
	cr_assert_eq(e.orig.frames, 1);
	done(&e);
	free(png);
	free(meta);
}

Test(content_image, jpeg_exif_gps_xmp_iptc_and_comments_are_gone)
{
	file     j = base_file(40, 30, ".jpg[strip]");
	size_t   m;
	uint8_t *meta = wbt_img_jpeg_meta(j.p, j.n, 0, &m);
	enc      e = encode(meta, m);

	clean(&e, CONTENT_IMAGE_JPEG, "jpeg");
	cr_assert_eq(e.orig.width, 40);
	cr_assert_eq(e.orig.height, 30);
	done(&e);
	free(meta);
	g_free(j.p);
}

Test(content_image, gif_comment_and_xmp_extensions_are_gone)
{
	size_t   m;
	uint8_t *meta = wbt_img_gif_meta(gif_5x3, sizeof(gif_5x3), &m);
	enc      e = encode(meta, m);

	clean(&e, CONTENT_IMAGE_GIF, "gif");
	cr_assert_eq(e.orig.width, 5);
	cr_assert_eq(e.orig.height, 3);
	done(&e);
	free(meta);
}

Test(content_image, webp_exif_and_xmp_chunks_are_gone)
{
	size_t   m;
	uint8_t *meta = wbt_img_webp_meta(webp_vp8_5x3, sizeof(webp_vp8_5x3), 5, 3, &m);
	enc      e = encode(meta, m);

	clean(&e, CONTENT_IMAGE_WEBP, "webp");
	done(&e);
	free(meta);
	meta = wbt_img_webp_meta(webp_vp8l_5x3, sizeof(webp_vp8l_5x3), 5, 3, &m);
	e = encode(meta, m);
	clean(&e, CONTENT_IMAGE_WEBP, "lossless webp");
	cr_assert(memmem(e.orig.data, e.orig.len, "VP8L", 4) != NULL, "lossless stays lossless");
	done(&e);
	free(meta);
	e = encode(webp_vp8x_5x3, sizeof(webp_vp8x_5x3));
	clean(&e, CONTENT_IMAGE_WEBP, "webp with alpha");
	done(&e);
}

/* --- what follows the end of an image ---------------------------------- */

Test(content_image, data_after_the_end_is_refused)
{
	file     j = base_file(40, 30, ".jpg[strip]");
	size_t   tn, n, xn;
	uint8_t *tiff = wbt_img_exif(1, &tn), seg[512], *x;
	char     why[64];

	/* an EXIF block with a GPS position after the JPEG's end marker */
	cr_assert_lt(tn + 10, sizeof(seg));
	seg[0] = 0xff;
	seg[1] = 0xe1;
	seg[2] = (uint8_t)((tn + 8) >> 8);
	seg[3] = (uint8_t)(tn + 8);
	memcpy(seg + 4, "Exif\0\0", 6);
	memcpy(seg + 10, tiff, tn);
	x = wbt_img_join(j.p, j.n, seg, tn + 10, &n);
	refused(x, n, WB_EMEDIATYPE, "EXIF after the end");
	/* leniently (an image stored already), the image stays and the block goes */
	content_image_opts lenient = opts;
	lenient.lenient = true;
	enc e = encode_with(x, n, &lenient);
	clean(&e, CONTENT_IMAGE_JPEG, "lenient");
	cr_assert(wbt_img_clean(e.orig.data, e.orig.len, why, sizeof(why)), "%s", why);
	done(&e);
	free(x);
	/* a polyglot: a PNG, then an HTML page */
	static const char html[] =
	    "<html><body><script>alert(document.cookie)</script></body></html>";
	x = wbt_img_join(png_5x3, sizeof(png_5x3), html, sizeof(html) - 1, &xn);
	refused(x, xn, WB_EMEDIATYPE, "PNG + HTML");
	free(x);
	x = wbt_img_join(gif_5x3, sizeof(gif_5x3), html, sizeof(html) - 1, &xn);
	refused(x, xn, WB_EMEDIATYPE, "GIF + HTML");
	free(x);
	x = wbt_img_join(webp_vp8_5x3, sizeof(webp_vp8_5x3), html, sizeof(html) - 1, &xn);
	refused(x, xn, WB_EMEDIATYPE, "WebP + HTML");
	free(x);
	free(tiff);
	g_free(j.p);
}

Test(content_image, a_multi_picture_jpeg_keeps_its_first_picture_only)
{
	file   first = base_file(40, 30, ".jpg[strip]"), second = base_file(24, 24, ".jpg[strip]");
	size_t sn, n;
	uint8_t *secret = wbt_img_jpeg_meta(second.p, second.n, 1, &sn);
	uint8_t *mpo = wbt_img_join(first.p, first.n, secret, sn, &n);
	enc      e = encode(mpo, n);

	clean(&e, CONTENT_IMAGE_JPEG, "multi-picture");
	cr_assert_eq(e.orig.width, 40, "the first picture");
	cr_assert_eq(e.orig.height, 30);
	done(&e);
	free(mpo);
	free(secret);
	g_free(first.p);
	g_free(second.p);
}

/* --- truncated and corrupt --------------------------------------------- */

Test(content_image, truncated_and_corrupt_images_are_refused)
{
	size_t   n;
	uint8_t *png = wbt_png(64, 48, 1, &n), *c;
	file     j = base_file(64, 48, ".jpg[strip,Q=90]");

	/* a PNG whose IDAT is cut, its IEND still after it */
	c = malloc(n);
	memcpy(c, png, 33 + 8 + 100);
	memcpy(c + 33 + 8 + 100, png + n - 12, 12);
	refused(c, 33 + 8 + 100 + 12, WB_EMEDIATYPE, "PNG cut in its IDAT");
	/* a PNG whose pixels' CRC is wrong */
	memcpy(c, png, n);
	c[n - 12 - 5] ^= 0x55;
	refused(c, n, WB_EMEDIATYPE, "PNG with a bad CRC");
	free(c);
	/* a JPEG whose scan is cut short, its end marker right after */
	c = malloc(j.n);
	memcpy(c, j.p, j.n - 2);
	memcpy(c + j.n / 2, "\xff\xd9", 2);
	refused(c, j.n / 2 + 2, WB_EMEDIATYPE, "JPEG cut in its scan");
	free(c);
	/* random bytes after a valid head */
	c = malloc(n);
	memcpy(c, png, n);
	for (size_t i = 33 + 8 + 2; i < n - 16; i++) {
		c[i] = (uint8_t)(i * 131 + 7);
	}
	refused(c, n, WB_EMEDIATYPE, "PNG of noise");
	free(c);
	free(png);
	g_free(j.p);
}

/* --- what the pixels become -------------------------------------------- */

Test(content_image, the_exif_orientation_is_applied)
{
	file     j = base_file(40, 30, ".jpg[strip]");
	size_t   m;
	uint8_t *turned = wbt_img_jpeg_meta(j.p, j.n, 6, &m);
	enc      e = encode(turned, m);

	clean(&e, CONTENT_IMAGE_JPEG, "orientation 6");
	cr_assert_eq(e.orig.width, 30, "turned a quarter: width %u", e.orig.width);
	cr_assert_eq(e.orig.height, 40);
	cr_assert_eq(e.preview.width, 30);
	cr_assert_eq(e.preview.height, 40);
	done(&e);
	free(turned);
	/* a PNG's eXIf orientation too */
	size_t   n;
	uint8_t *png = wbt_png(50, 20, 2, &n), *meta = wbt_img_png_meta(png, n, &m);
	e = encode(meta, m);
	cr_assert_eq(e.rc, WB_OK, "%s", e.why);
	cr_assert_eq(e.orig.width, 50, "orientation 1 leaves it");
	done(&e);
	free(png);
	free(meta);
	g_free(j.p);
}

Test(content_image, colour_becomes_8_bit_srgb_without_a_profile)
{
	VipsImage *im = base(32, 16), *u16, *cmyk, *tagged;
	VipsBlob  *p3 = NULL;
	file       f;
	enc        e;

	/* 16-bit PNG */
	cr_assert_eq(vips_cast_ushort(im, &u16, NULL), 0);
	VipsImage *rgb16;
	cr_assert_eq(vips_copy(u16, &rgb16, "interpretation", VIPS_INTERPRETATION_RGB16, NULL), 0);
	f = save(rgb16, ".png[bitdepth=16]");
	e = encode(f.p, f.n);
	clean(&e, CONTENT_IMAGE_PNG, "16-bit png");
	cr_assert_eq(((uint8_t *)e.orig.data)[24], 8, "8 bits a sample");
	done(&e);
	g_free(f.p);
	/* CMYK JPEG */
	VipsImage *four;
	cr_assert_eq(vips_bandjoin_const1(im, &four, 40, NULL), 0);
	cr_assert_eq(vips_copy(four, &cmyk, "interpretation", VIPS_INTERPRETATION_CMYK, NULL), 0);
	f = save(cmyk, ".jpg[strip]");
	e = encode(f.p, f.n);
	clean(&e, CONTENT_IMAGE_JPEG, "cmyk jpeg");
	enc back = encode(e.orig.data, e.orig.len);
	cr_assert_eq(back.rc, WB_OK);
	done(&back);
	done(&e);
	g_free(f.p);
	/* an image tagged with a Display P3 profile: converted, the profile gone */
	cr_assert_eq(vips_profile_load("p3", &p3, NULL), 0);
	cr_assert_eq(vips_copy(im, &tagged, NULL), 0);
	size_t      plen;
	const void *pdata = vips_blob_get(p3, &plen);
	vips_image_set_blob_copy(tagged, VIPS_META_ICC_NAME, pdata, plen);
	f = save(tagged, ".png");
	cr_assert(memmem(f.p, f.n, "iCCP", 4) != NULL, "the upload carries its profile");
	e = encode(f.p, f.n);
	clean(&e, CONTENT_IMAGE_PNG, "p3 png");
	cr_assert_null(memmem(e.orig.data, e.orig.len, "iCCP", 4));
	done(&e);
	g_free(f.p);
	vips_area_unref((VipsArea *)p3);
	g_object_unref(tagged);
	g_object_unref(four);
	g_object_unref(cmyk);
	g_object_unref(rgb16);
	g_object_unref(u16);
	g_object_unref(im);
}

Test(content_image, an_indexed_png_stays_indexed)
{
	VipsImage *im = base(64, 64);
	file       f = save(im, ".png[palette,strip]");
	enc        e = encode(f.p, f.n);

	cr_assert_eq(((uint8_t *)f.p)[25], 3, "the upload is indexed colour");
	clean(&e, CONTENT_IMAGE_PNG, "indexed png");
	cr_assert_eq(((uint8_t *)e.orig.data)[25], 3, "written indexed again");
	done(&e);
	g_free(f.p);
	g_object_unref(im);
}

Test(content_image, animations_keep_their_frames_and_the_preview_is_the_first)
{
	VipsImage         *frames[3], *strip, *anim;
	int                delays[3] = { 100, 100, 100 };
	const char        *suffix[] = { ".gif", ".webp" };
	content_image_type type[] = { CONTENT_IMAGE_GIF, CONTENT_IMAGE_WEBP };

	for (int i = 0; i < 3; i++) {
		frames[i] =
		    base_blue(40, 30, 40 + 80 * i); /* unlike: an encoder merges like frames */
	}
	cr_assert_eq(vips_arrayjoin(frames, &strip, 3, "across", 1, NULL), 0);
	cr_assert_eq(vips_copy(strip, &anim, NULL), 0);
	vips_image_set_int(anim, VIPS_META_PAGE_HEIGHT, 30);
	vips_image_set_array_int(anim, "delay", delays, 3);
	vips_image_set_int(anim, "loop", 0);
	for (int t = 0; t < 2; t++) {
		file f = save(anim, suffix[t]);
		enc  e = encode(f.p, f.n);

		clean(&e, type[t], suffix[t]);
		cr_assert_eq(e.orig.width, 40);
		cr_assert_eq(e.orig.height, 30, "%s: a frame's height", suffix[t]);
		cr_assert_eq(e.orig.frames, 3, "%s: %u frames", suffix[t], e.orig.frames);
		cr_assert_eq(e.preview.width, 40);
		cr_assert_eq(e.preview.height, 30, "the preview is one frame");
		cr_assert_null(memmem(e.preview.data, e.preview.len, "ANMF", 4));
		/* the pixel limit counts every frame */
		content_image_opts small = opts;
		small.max_pixels = 40 * 30 * 2;
		enc big = encode_with(f.p, f.n, &small);
		cr_assert_eq(big.rc, WB_ETOOBIG, "%s: %s", suffix[t], big.why);
		done(&big);
		done(&e);
		g_free(f.p);
	}
	g_object_unref(anim);
	g_object_unref(strip);
	for (int i = 0; i < 3; i++) {
		g_object_unref(frames[i]);
	}
}

Test(content_image, the_preview_is_at_most_640_px_a_side)
{
	size_t   n;
	uint8_t *wide = wbt_png(2000, 1000, 4, &n);
	enc      e = encode(wide, n);

	clean(&e, CONTENT_IMAGE_PNG, "wide");
	cr_assert_eq(e.preview.width, 640);
	cr_assert_eq(e.preview.height, 320);
	done(&e);
	free(wide);
	file tall = base_file(300, 1300, ".jpg");
	e = encode(tall.p, tall.n);
	cr_assert_eq(e.rc, WB_OK, "%s", e.why);
	cr_assert_eq(e.preview.height, 640);
	cr_assert_leq(e.preview.width, 148);
	done(&e);
	g_free(tall.p);
	file small = base_file(300, 200, ".webp");
	e = encode(small.p, small.n);
	cr_assert_eq(e.rc, WB_OK, "%s", e.why);
	cr_assert_eq(e.preview.width, 300, "never enlarged");
	cr_assert_eq(e.preview.height, 200);
	done(&e);
	g_free(small.p);
}

Test(content_image, the_pixel_and_byte_limits_hold)
{
	size_t             n;
	uint8_t           *png = wbt_png(200, 100, 5, &n);
	content_image_opts o = opts;
	enc                e;

	o.max_pixels = 200 * 100 - 1;
	e = encode_with(png, n, &o);
	cr_assert_eq(e.rc, WB_ETOOBIG, "%s", e.why);
	cr_assert(strstr(e.why, "200x100") != NULL, "%s", e.why);
	done(&e);
	o.max_pixels = 200 * 100;
	e = encode_with(png, n, &o);
	cr_assert_eq(e.rc, WB_OK, "%s", e.why);
	done(&e);
	o.max_bytes = 100;
	e = encode_with(png, n, &o);
	cr_assert_eq(e.rc, WB_ETOOBIG, "%s", e.why);
	done(&e);
	free(png);
}

/* The size a header declares is checked before any loader runs (libvips' WebP and GIF loaders
 * allocate their canvas at once): a bomb is refused, whatever its data. */
Test(content_image, declared_sizes_are_checked_before_any_decoder)
{
	uint8_t           png[sizeof(png_5x3)], gif[sizeof(gif_5x3)], webp[sizeof(webp_vp8x_5x3)];
	file              j = base_file(13, 5, ".jpg[strip]");
	content_container k;

	memcpy(png, png_5x3, sizeof(png));
	memcpy(png + 16, "\0\x01\x86\xa0\0\x01\x86\xa0", 8); /* 100000 x 100000 */
	refused(png, sizeof(png), WB_ETOOBIG, "PNG");
	memcpy(gif, gif_5x3, sizeof(gif));
	memcpy(gif + 6, "\xff\xff\xff\xff", 4); /* 65535 x 65535 */
	refused(gif, sizeof(gif), WB_ETOOBIG, "GIF");
	memcpy(webp, webp_vp8x_5x3, sizeof(webp));
	memcpy(webp + 24, "\xff\x3f\0\xff\x3f\0", 6); /* a 16384 x 16384 canvas */
	cr_assert_eq(content_container_scan(webp, sizeof(webp), &k), WB_OK);
	cr_assert_eq(k.width, 16384);
	cr_assert_eq(k.height, 16384);
	refused(webp, sizeof(webp), WB_ETOOBIG, "WebP");
	/* a JPEG's frame header: 65535 x 65535, and a height left for later (DNL) */
	uint8_t *jp = j.p;
	size_t   sof = 2;
	while (sof + 4 < j.n && !(jp[sof] == 0xff && jp[sof + 1] == 0xc0)) {
		sof += 2 + ((size_t)jp[sof + 2] << 8 | jp[sof + 3]);
	}
	cr_assert_lt(sof + 9, j.n, "no SOF0");
	memcpy(jp + sof + 5, "\xff\xff\xff\xff", 4);
	refused(jp, j.n, WB_ETOOBIG, "JPEG");
	memcpy(jp + sof + 5, "\0\0", 2);
	refused(jp, j.n, WB_EMEDIATYPE, "JPEG of height 0");
	g_free(j.p);
}

/* Only the four loaders run: another type libvips reads is refused before it. */
Test(content_image, other_types_libvips_reads_are_refused)
{
	VipsImage *im = base(8, 8);
	file       tif = save(im, ".tif"), ppm = save(im, ".ppm");

	refused(tif.p, tif.n, WB_EMEDIATYPE, "TIFF");
	refused(ppm.p, ppm.n, WB_EMEDIATYPE, "PPM");
	refused("<svg xmlns=\"http://www.w3.org/2000/svg\"/>", 41, WB_EMEDIATYPE, "SVG");
	VipsImage *out = NULL;
	cr_assert_neq(vips_tiffload_buffer(tif.p, tif.n, &out, NULL), 0, "blocked");
	vips_error_clear();
	g_free(tif.p);
	g_free(ppm.p);
	g_object_unref(im);
}
