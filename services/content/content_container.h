/*
 * content_container.h - where an uploaded image file ends: a walk of the
 * container structure of a PNG, JPEG, GIF or WebP file (its chunks,
 * segments or blocks, never its pixels), so that bytes after the image
 * are found and refused.  Decoders stop at the image's end and ignore
 * what follows, which is how a PNG followed by an HTML page (a polyglot)
 * or an EXIF block after a JPEG's end would otherwise pass.
 *
 * The walk also reads the size the header declares (a frame's width and
 * height, and the number of frames), so that the pixel limit is checked
 * before any decoder runs: libvips' WebP and GIF loaders allocate the
 * whole canvas when they open a file, before a caller could look at it.
 *
 * The type is read from the magic bytes, never from a name or a declared
 * type.  Every function reads only p[0..n), whatever the bytes say.
 */
#ifndef CONTENT_CONTAINER_H
#define CONTENT_CONTAINER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The four types; the values are stored in media cells (content_schema.h). */
typedef enum content_image_type {
	CONTENT_IMAGE_PNG = 1,
	CONTENT_IMAGE_JPEG,
	CONTENT_IMAGE_GIF,
	CONTENT_IMAGE_WEBP,
} content_image_type;

/* What the walk found. */
typedef struct content_container {
	content_image_type type;
	uint32_t           width, height; /* as declared: the canvas of a GIF or WebP */
	uint32_t           frames;        /* GIF images, WebP ANMF chunks; 1 otherwise */
	size_t             end;           /* the first image is p[0..end) */
	size_t             pictures;      /* JPEG: where the whole JPEG pictures after it end */
	bool               palette;       /* PNG: indexed colour (IHDR colour type 3) */
	bool               lossless;      /* WebP: a VP8L bitstream and no animation */
	const char        *why;           /* when refused: what is wrong, for the reply */
} content_container;

/*
 * content_container_scan walks p[0..n): WB_OK if it starts with one whole
 * image of the four types, whose end it gives, or WB_EMEDIATYPE (out->why
 * says why): no such type, a zero width or height, a chunk, segment or
 * block cut short or out of place, a PNG without image data or end chunk, a JPEG without a scan or
 * end marker, a GIF without an image or trailer, a WebP whose RIFF size
 * is not what it holds.  After a JPEG's end marker, the further whole
 * JPEG pictures of a multi-picture file (MPF: a depth map, a preview, a
 * gain map) are walked too, up to out->pictures; anything else there is
 * left for the caller to refuse.  out->pictures is out->end for the
 * other types.
 */
int content_container_scan(const uint8_t *p, size_t n, content_container *out);

/*
 * content_container_webp_strip removes the EXIF, XMP and ICCP chunks of
 * the WebP p[0..n) in place, clears their flags in its VP8X chunk and
 * sets *out_n to the new length: WB_OK, or WB_EMEDIATYPE (p untouched)
 * if p is not a whole WebP.  libvips 8.14.1 (Debian 12's) writes them
 * whatever its strip option says (fixed upstream in 8.14.2).
 */
int content_container_webp_strip(uint8_t *p, size_t n, size_t *out_n);

/* content_image_mime returns "image/png", "image/jpeg", "image/gif" or
 * "image/webp" for t, NULL for anything else. */
const char *content_image_mime(content_image_type t);

#endif
