/*
 * content_image.h - what an uploaded image is, read from its first bytes:
 * the type (PNG, JPEG, GIF or WebP, by magic bytes, never by name or
 * declared type) and the width and height its header gives; and the
 * removal of a JPEG's metadata (EXIF, XMP, comments) before it is stored.
 *
 * Only headers are read: nothing is decoded, so a header may still lie
 * about the pixels after it.  Sizes are returned as given; refusing an
 * image that is too large is the caller's job.  Every function reads
 * only p[0..n), whatever the bytes say.
 */
#ifndef CONTENT_IMAGE_H
#define CONTENT_IMAGE_H

#include <stddef.h>
#include <stdint.h>

typedef enum content_image_type {
	CONTENT_IMAGE_PNG = 1,
	CONTENT_IMAGE_JPEG,
	CONTENT_IMAGE_GIF,
	CONTENT_IMAGE_WEBP,
} content_image_type;

typedef struct content_image_info {
	content_image_type type;
	uint32_t           width, height;
} content_image_info;

/* content_image_probe decides the type of p[0..n) from its magic bytes and
 * reads width and height from its header into *out: WB_OK, or
 * WB_EMEDIATYPE if it is none of the four types, or its header is
 * truncated, inconsistent or gives a zero dimension (*out is then left
 * alone).  A JPEG's head must reach its first scan (SOS). */
int content_image_probe(const uint8_t *p, size_t n, content_image_info *out);

/* content_image_mime returns "image/png", "image/jpeg", "image/gif" or
 * "image/webp" for t, NULL for anything else. */
const char *content_image_mime(content_image_type t);

/* content_image_strip removes the metadata from a JPEG in place: before
 * the first scan it drops the APP1 (EXIF, XMP), APP2 to APP15 and COM
 * segments, except APP2 "ICC_PROFILE" and APP14 "Adobe" (which the colours
 * need), keeps every other segment and everything from the scan on byte
 * for byte, and sets *out_n to the new length; the result probes to the
 * same size.  Another image type is left as it is (*out_n = n).  It
 * refuses exactly what content_image_probe refuses (WB_EMEDIATYPE), and
 * then leaves p untouched. */
int content_image_strip(uint8_t *p, size_t n, size_t *out_n);

#endif
