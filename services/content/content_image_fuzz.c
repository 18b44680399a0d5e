/*
 * content_image_fuzz.c - libFuzzer target for an upload's whole path: the
 * container walk, then libvips (decoded whole, written again, preview).
 *
 * Any input, from a heap copy of exactly its size: content_image_encode
 * refuses it (WB_EMEDIATYPE or WB_ETOOBIG, with a reason) or gives an
 * original of the input's type and a WebP preview, both nonempty, that
 * the walk takes whole, at most CONTENT_PREVIEW_SIDE px a side for the
 * preview.  The pixel limit here is FUZZ_IMAGE_PIXELS, so one decode
 * holds at most FUZZ_IMAGE_PIXELS x CONTENT_IMAGE_PER_PIX bytes (16 MB):
 * tests/fuzz.mk runs this target with a malloc limit above that (and
 * below what a bomb past the limit would ask).  libvips itself is
 * Debian's, not instrumented: coverage guides the walk and the calls,
 * and ASan checks every byte Warble's code touches.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "content_image.h"
#include "wb_errors.h"

#define FUZZ_IMAGE_PIXELS 1000000 /* 1 MP: 16 MB a decode at most */

static void
image_fuzz_fail(const char *what)
{
	fprintf(stderr, "content_image_fuzz: %s\n", what);
	abort();
}

/* image_fuzz_whole tells whether f's bytes are one whole image of its type. */
static bool
image_fuzz_whole(const content_image_file *f)
{
	content_container k;

	return f->len > 0 && content_container_scan(f->data, f->len, &k) == WB_OK &&
	       k.type == f->type && k.end == f->len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const content_image_opts o = { .max_pixels = FUZZ_IMAGE_PIXELS,
		.max_bytes = 3 << 20 };
	content_image_file              orig, preview;
	content_container               k;
	uint8_t                        *p = malloc(size > 0 ? size : 1);
	char                            why[256];
	int                             rc;

	if (p == NULL) {
		return 0;
	}
	if (size > 0) {
		memcpy(p, data, size);
	}
	rc = content_image_encode(&orig, &preview, p, size, &o, why, sizeof(why));
	if (rc != WB_OK && rc != WB_EMEDIATYPE && rc != WB_ETOOBIG) {
		image_fuzz_fail("a refusal is BAD_MEDIA or TOO_LARGE");
	}
	if (rc != WB_OK && why[0] == '\0') {
		image_fuzz_fail("a refusal says why");
	}
	if (rc == WB_OK) {
		if (content_container_scan(p, size, &k) != WB_OK || k.pictures != size) {
			image_fuzz_fail("only a whole image with nothing after it passes");
		}
		if (orig.type != k.type || !image_fuzz_whole(&orig)) {
			image_fuzz_fail("the original is one whole image of the upload's type");
		}
		if (preview.type != CONTENT_IMAGE_WEBP || !image_fuzz_whole(&preview) ||
		    preview.width == 0 || preview.height == 0 ||
		    preview.width > CONTENT_PREVIEW_SIDE || preview.height > CONTENT_PREVIEW_SIDE) {
			image_fuzz_fail("the preview is a whole WebP of at most 640 px a side");
		}
		if ((uint64_t)orig.width * orig.height * orig.frames > FUZZ_IMAGE_PIXELS) {
			image_fuzz_fail("the pixel limit holds");
		}
	}
	content_image_file_free(&orig);
	content_image_file_free(&preview);
	free(p);
	return 0;
}
