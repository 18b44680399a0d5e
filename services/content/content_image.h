/*
 * content_image.h - an uploaded image decoded whole by libvips and written
 * again with no metadata, and its preview.
 *
 * The pipeline (content_image.c has the details):
 *
 *   bytes -> container walk (content_container.h): the type from the
 *            magic bytes, nothing after the image's end, and the declared
 *            width x height x frames <= the pixel limit
 *         -> the type's own libvips loader (no other loader can run),
 *            failing on any decoder warning, error or truncation; its
 *            header's size against the limit again, before a pixel is
 *            decoded
 *         -> colour to sRGB (through the embedded ICC profile if any),
 *            8 bits a sample, every pixel decoded into memory
 *         -> the EXIF orientation applied (a still image)
 *         -> the original: the same type again, stripped of every
 *            metadata block (EXIF, XMP, IPTC, ICC, text chunks, comments)
 *         -> the preview: the first frame, at most 640 px on its long
 *            side, as a WebP (also stripped)
 *
 * Memory: one call holds every pixel once (width x height x frames x at
 * most 4 bytes), plus what the decoder itself keeps (a progressive JPEG:
 * its coefficients, up to 8 bytes a pixel) and the file it writes (up to
 * about 4 bytes a pixel): CONTENT_IMAGE_PER_PIX bytes a pixel of the
 * limit at most (docs/benchmarks.md has a 25 MP progressive JPEG
 * measured).  Each call runs libvips with one worker thread; the caller
 * bounds how many run at once.
 */
#ifndef CONTENT_IMAGE_H
#define CONTENT_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "content_container.h"

#define CONTENT_PREVIEW_SIDE  640 /* a preview's longest side, pixels */
#define CONTENT_IMAGE_PER_PIX 16  /* bytes a pixel one decode may hold, at most */

/* What content_image_encode is allowed. */
typedef struct content_image_opts {
	uint64_t max_pixels; /* width x height x frames */
	size_t   max_bytes;  /* largest original or preview written */
	bool     lenient;    /* for images stored already: any warning and trailing data pass */
} content_image_opts;

/* One image written: its type, the size of one frame, and its bytes. */
typedef struct content_image_file {
	content_image_type type;
	uint32_t           width, height;
	uint32_t           frames; /* 1 for a still image */
	void              *data;   /* len bytes, freed by content_image_file_free */
	size_t             len;
} content_image_file;

/* content_image_init starts libvips once for the process (any later call
 * only returns the first one's result): no operation cache, one worker
 * thread a call, only the four loaders usable, its warnings kept out of
 * stderr; it shuts down at exit.  WB_EINTERNAL if libvips cannot start. */
int content_image_init(void);

/*
 * content_image_encode decodes p[0..n) whole and writes it again into
 * *orig and *preview (free both with content_image_file_free, also after
 * an error): WB_OK, WB_EMEDIATYPE for what is not one whole image of the
 * four types (why says what, at most why_len bytes with its NUL),
 * WB_ETOOBIG over o's limits, WB_ENOMEM.  Trailing data is refused, except
 * the further pictures of a multi-picture JPEG, which are dropped.
 */
int content_image_encode(content_image_file *orig, content_image_file *preview, const uint8_t *p,
    size_t n, const content_image_opts *o, char *why, size_t why_len);

/* content_image_file_free frees f's bytes and zeroes it; NULL is ignored. */
void content_image_file_free(content_image_file *f);

#endif
