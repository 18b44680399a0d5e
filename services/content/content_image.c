/*
 * content_image.c - the libvips side of an upload (the pipeline is drawn
 * in content_image.h).
 *
 * Why each step is what it is:
 *
 * - Each type goes to its own loader (pngload_buffer, jpegload_buffer,
 *   gifload_buffer, webpload_buffer), never to vips_image_new_from_buffer,
 *   which would sniff the bytes and could pick any of the other loaders
 *   libvips has (SVG, PDF, TIFF, ImageMagick ...).  Every other loader is
 *   blocked too (vips_operation_block_set), in case one is reached
 *   another way.
 * - fail_on VIPS_FAIL_ON_WARNING: libjpeg reports corrupt entropy data
 *   and a premature end only as warnings, so no lower level refuses a
 *   damaged JPEG.  The loader sees only the bytes up to the image's end
 *   (the container walk found it), and whatever follows is refused
 *   before: a decoder would stop at the end and say nothing.
 * - Sequential access: the loader streams rows into the one memory copy
 *   (vips_image_copy_memory) instead of first decoding into a buffer of
 *   its own at the file's bit depth (16-bit PNG: 8 bytes a pixel) and
 *   then converting.  The copy holds 8-bit sRGB or grey, with alpha if
 *   any; rotation, the writes and the preview all read it.
 * - Colour: an embedded ICC profile converts the pixels to sRGB (and is
 *   dropped with the rest); without one, CMYK, 16-bit and other spaces go
 *   to sRGB (or 8-bit grey) through vips_colourspace.  The written files
 *   carry no profile: browsers take untagged images as sRGB.
 * - vips_autorot turns a still image upright by its EXIF orientation
 *   (then dropped); an animation is left as it is.
 * - strip on every save: no EXIF, XMP, IPTC, ICC profile, PNG text
 *   chunk, GIF comment or WebP metadata chunk is written.  Debian 12's
 *   libvips (8.14.1) ignores strip when it writes a WebP and always adds
 *   an EXIF chunk of its own: those chunks are cut out of what it wrote
 *   (content_container_webp_strip).  A JPEG keeps
 *   only the JFIF header libjpeg always writes (version and pixel
 *   density); a GIF or WebP animation keeps its frame delays and loop
 *   count, which are the animation itself.
 * - GIF is written again as GIF (libvips' cgif saver, quantised with
 *   libimagequant), every frame kept; WebP keeps its frames too, and a
 *   lossless still WebP is written lossless.  A PNG that was indexed
 *   colour is written indexed again, so it does not grow threefold.
 */
#include "content_image.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vips/vips.h>

#include "rt_log.h"
#include "wb_errors.h"

#define IMAGE_JPEG_Q    85 /* quality of a JPEG written again */
#define IMAGE_WEBP_Q    85 /* quality of a lossy WebP written again */
#define IMAGE_PREVIEW_Q 80 /* quality of a preview (lossy WebP) */

static pthread_once_t image_once = PTHREAD_ONCE_INIT;
static int            image_init_rc = WB_EINTERNAL;

/* image_vips_log sends libvips' messages about hostile input to the debug log, not stderr. */
static void
image_vips_log(const char *domain, GLogLevelFlags level, const char *msg, void *arg)
{
	(void)level;
	(void)arg;
	RT_DEBUGF("libvips: %s: %s", domain != NULL ? domain : "-", msg);
}

static void
image_shutdown(void)
{
	vips_shutdown();
}

static void
image_init_once(void)
{
	static const char *const loaders[] = { "VipsForeignLoadPngBuffer",
		"VipsForeignLoadJpegBuffer", "VipsForeignLoadNsgifBuffer",
		"VipsForeignLoadWebpBuffer" };

	if (vips_init("warble") != 0) {
		RT_ERRORF("libvips does not start: %s", vips_error_buffer());
		return;
	}
	g_log_set_handler("VIPS", G_LOG_LEVEL_MASK, image_vips_log, NULL);
	vips_cache_set_max(0);
	vips_cache_set_max_mem(0);
	vips_cache_set_max_files(0);
	vips_concurrency_set(1);
	vips_operation_block_set("VipsForeignLoad", TRUE);
	for (size_t i = 0; i < sizeof(loaders) / sizeof(loaders[0]); i++) {
		vips_operation_block_set(loaders[i], FALSE);
	}
	/* Once shut down, libvips cannot start again: a content service
	 * closed and opened again in one process keeps it; exit ends it. */
	atexit(image_shutdown);
	image_init_rc = WB_OK;
}

int
content_image_init(void)
{
	pthread_once(&image_once, image_init_once);
	return image_init_rc;
}

void
content_image_file_free(content_image_file *f)
{
	if (f == NULL) {
		return;
	}
	g_free(f->data);
	memset(f, 0, sizeof(*f));
}

/* image_refuse writes why and returns rc; the decoder's own words go to the debug log. */
static int image_refuse(int rc, char *why, size_t why_len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int
image_refuse(int rc, char *why, size_t why_len, const char *fmt, ...)
{
	va_list ap;
	char   *vips = vips_error_buffer_copy();

	va_start(ap, fmt);
	if (why_len > 0) {
		vsnprintf(why, why_len, fmt, ap);
	}
	va_end(ap);
	if (vips != NULL && vips[0] != '\0') {
		RT_DEBUGF("image refused: %s (libvips: %s)", why_len > 0 ? why : "", vips);
	}
	g_free(vips);
	return rc;
}

/* image_load opens p[0..n) with the loader of type t (a GIF or WebP with every frame). */
static int
image_load(content_image_type t, const uint8_t *p, size_t n, VipsFailOn fail, VipsImage **out)
{
	void *buf = (void *)p; /* the loaders take a non-const pointer but only read it */

	switch (t) {
	case CONTENT_IMAGE_PNG:
		return vips_pngload_buffer(
		    buf, n, out, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", fail, NULL);
	case CONTENT_IMAGE_JPEG:
		return vips_jpegload_buffer(
		    buf, n, out, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", fail, NULL);
	case CONTENT_IMAGE_GIF:
		return vips_gifload_buffer(
		    buf, n, out, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", fail, "n", -1, NULL);
	case CONTENT_IMAGE_WEBP:
		return vips_webpload_buffer(
		    buf, n, out, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", fail, "n", -1, NULL);
	}
	return -1;
}

/* image_srgb gives in's pixels as 8-bit sRGB or grey (alpha kept) into *out, still lazily. */
static int
image_srgb(VipsImage *in, VipsImage **out)
{
	VipsInterpretation want, now = vips_image_guess_interpretation(in);

	if (vips_image_get_typeof(in, VIPS_META_ICC_NAME) != 0) {
		if (vips_icc_transform(in, out, "srgb", "embedded", TRUE, "depth", 8, NULL) == 0) {
			return 0;
		}
		vips_error_clear(); /* a profile lcms cannot use: convert without it */
	}
	want = now == VIPS_INTERPRETATION_B_W || now == VIPS_INTERPRETATION_GREY16
	           ? VIPS_INTERPRETATION_B_W
	           : VIPS_INTERPRETATION_sRGB;
	if (now == want && vips_image_get_format(in) == VIPS_FORMAT_UCHAR) {
		*out = in;
		g_object_ref(in);
		return 0;
	}
	if (vips_colourspace(in, out, want, NULL) != 0) {
		return -1;
	}
	if (vips_image_get_format(*out) != VIPS_FORMAT_UCHAR) {
		VipsImage *t = *out;
		int        rc = vips_cast_uchar(t, out, NULL);
		g_object_unref(t);
		return rc;
	}
	return 0;
}

/* image_webp_save writes im as a WebP with no metadata chunk (content_container_webp_strip). */
static int
image_webp_save(VipsImage *im, int q, bool lossless, void **buf, size_t *len)
{
	if (vips_webpsave_buffer(im, buf, len, "strip", TRUE, "Q", q, "lossless", lossless, NULL) !=
	    0) {
		return -1;
	}
	if (content_container_webp_strip(*buf, *len, len) != WB_OK) {
		vips_error("content", "%s", "the WebP written is not whole");
		return -1;
	}
	return 0;
}

/* image_save writes im as type t, with no metadata; lossless for a WebP. */
static int
image_save(
    VipsImage *im, content_image_type t, bool lossless, bool palette, void **buf, size_t *len)
{
	switch (t) {
	case CONTENT_IMAGE_PNG:
		return vips_pngsave_buffer(im, buf, len, "strip", TRUE, "palette", palette, NULL);
	case CONTENT_IMAGE_JPEG:
		return vips_jpegsave_buffer(
		    im, buf, len, "strip", TRUE, "Q", IMAGE_JPEG_Q, "optimize_coding", TRUE, NULL);
	case CONTENT_IMAGE_GIF:
		return vips_gifsave_buffer(im, buf, len, "strip", TRUE, NULL);
	case CONTENT_IMAGE_WEBP:
		return image_webp_save(im, IMAGE_WEBP_Q, lossless, buf, len);
	}
	return -1;
}

/* image_preview writes the first frame of im (frames of page_h rows) at most CONTENT_PREVIEW_SIDE
 * px a side as a WebP. */
static int
image_preview(VipsImage *im, int page_h, content_image_file *out)
{
	VipsImage *frame = NULL, *small = NULL, *bare = NULL;
	int        rc = -1;

	if (vips_crop(im, &frame, 0, 0, vips_image_get_width(im), page_h, NULL) == 0 &&
	    vips_thumbnail_image(frame, &small, CONTENT_PREVIEW_SIDE, "height",
	        CONTENT_PREVIEW_SIDE, "size", VIPS_SIZE_DOWN, NULL) == 0 &&
	    vips_copy(small, &bare, NULL) == 0) {
		/* one frame: nothing of the animation may make the saver cut it in pages */
		vips_image_remove(bare, VIPS_META_PAGE_HEIGHT);
		vips_image_remove(bare, VIPS_META_N_PAGES);
		vips_image_remove(bare, "delay");
		vips_image_remove(bare, "loop");
		out->type = CONTENT_IMAGE_WEBP;
		out->width = (uint32_t)vips_image_get_width(bare);
		out->height = (uint32_t)vips_image_get_height(bare);
		out->frames = 1;
		rc = image_webp_save(bare, IMAGE_PREVIEW_Q, false, &out->data, &out->len);
	}
	VIPS_UNREF(bare);
	VIPS_UNREF(small);
	VIPS_UNREF(frame);
	return rc;
}

/* image_pages reads a loaded image's frame count and frame height (1 and its height: a still). */
static void
image_pages(VipsImage *im, int *pages, int *page_h)
{
	*page_h = vips_image_get_page_height(im);
	*pages = *page_h > 0 ? vips_image_get_height(im) / *page_h : 1;
	if (*pages < 1 || *page_h <= 0) {
		*pages = 1;
		*page_h = vips_image_get_height(im);
	}
}

int
content_image_encode(content_image_file *orig, content_image_file *preview, const uint8_t *p,
    size_t n, const content_image_opts *o, char *why, size_t why_len)
{
	content_container k;
	VipsImage        *in = NULL, *srgb = NULL, *mem = NULL, *up = NULL;
	VipsFailOn        fail = o->lenient ? VIPS_FAIL_ON_NONE : VIPS_FAIL_ON_WARNING;
	uint64_t          pixels;
	int               pages, page_h, rc;

	memset(orig, 0, sizeof(*orig));
	memset(preview, 0, sizeof(*preview));
	if (why_len > 0) {
		why[0] = '\0';
	}
	if ((rc = content_image_init()) != WB_OK) {
		return image_refuse(rc, why, why_len, "images cannot be decoded here (libvips)");
	}
	if (content_container_scan(p, n, &k) != WB_OK) {
		return image_refuse(WB_EMEDIATYPE, why, why_len, "%s", k.why);
	}
	if (k.pictures < n && !o->lenient) {
		return image_refuse(WB_EMEDIATYPE, why, why_len,
		    "%zu bytes follow the end of the %s image (a file joined to another is "
		    "refused)",
		    n - k.pictures, content_image_mime(k.type) + 6);
	}
	/* before a loader runs: the WebP and GIF loaders allocate their canvas at once */
	pixels = (uint64_t)k.width * k.height * k.frames;
	if (pixels > o->max_pixels) {
		return image_refuse(WB_ETOOBIG, why, why_len,
		    "an image of %ux%u pixels%s exceeds the limit of %llu pixels", k.width,
		    k.height, k.frames > 1 ? " a frame, every frame counted," : "",
		    (unsigned long long)o->max_pixels);
	}
	if (image_load(k.type, p, k.end, fail, &in) != 0) {
		return image_refuse(WB_EMEDIATYPE, why, why_len,
		    "the %s image's header cannot be decoded", content_image_mime(k.type) + 6);
	}
	pixels = (uint64_t)vips_image_get_width(in) * (uint64_t)vips_image_get_height(in);
	if (pixels > o->max_pixels) {
		rc = image_refuse(WB_ETOOBIG, why, why_len,
		    "an image of %dx%d pixels (every frame counted) exceeds the limit of %llu "
		    "pixels",
		    vips_image_get_width(in), vips_image_get_height(in),
		    (unsigned long long)o->max_pixels);
		g_object_unref(in);
		return rc;
	}
	image_pages(in, &pages, &page_h);
	rc = image_srgb(in, &srgb);
	if (rc == 0 && (mem = vips_image_copy_memory(srgb)) == NULL) {
		rc = -1;
	}
	if (rc != 0) {
		rc = image_refuse(WB_EMEDIATYPE, why, why_len,
		    "the %s image's data is damaged or cut short", content_image_mime(k.type) + 6);
		goto done;
	}
	if (pages == 1) {
		if (vips_autorot(mem, &up, NULL) != 0) {
			rc =
			    image_refuse(WB_EMEDIATYPE, why, why_len, "the image cannot be turned");
			goto done;
		}
		page_h = vips_image_get_height(up);
	} else {
		up = mem;
		g_object_ref(up);
	}
	orig->type = k.type;
	orig->width = (uint32_t)vips_image_get_width(up);
	orig->height = (uint32_t)page_h;
	orig->frames = (uint32_t)pages;
	if (image_save(up, k.type, k.lossless, k.palette, &orig->data, &orig->len) != 0 ||
	    image_preview(up, page_h, preview) != 0) {
		rc = image_refuse(WB_EMEDIATYPE, why, why_len,
		    "the %s image cannot be written again", content_image_mime(k.type) + 6);
		goto done;
	}
	if (orig->len > o->max_bytes || preview->len > o->max_bytes) {
		rc = image_refuse(WB_ETOOBIG, why, why_len,
		    "written again without its metadata, the image takes %zu bytes, over %zu",
		    orig->len, o->max_bytes);
		goto done;
	}
	rc = WB_OK;
done:
	VIPS_UNREF(up);
	VIPS_UNREF(mem);
	VIPS_UNREF(srgb);
	VIPS_UNREF(in);
	if (rc != WB_OK) {
		content_image_file_free(orig);
		content_image_file_free(preview);
	}
	return rc;
}
