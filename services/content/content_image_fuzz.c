/*
 * content_image_fuzz.c - libFuzzer target for the image header reader.
 *
 * Any input, from a heap copy of exactly its size: content_image_probe
 * refuses it (WB_EMEDIATYPE) or gives a type with a MIME name and nonzero
 * sizes; content_image_strip gives the same verdict, leaves a refused
 * input and every type but JPEG as they were, never lengthens a JPEG, and
 * gives bytes that probe to the same type and size and that a second
 * strip leaves as they are.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "content_image.h"
#include "wb_errors.h"

static void
image_fuzz_fail(const char *what)
{
	fprintf(stderr, "content_image_fuzz: %s\n", what);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	content_image_info info, again;
	uint8_t           *p = malloc(size > 0 ? size : 1);
	size_t             n = 0, n2 = 0;
	int                rv, rv2;

	if (p == NULL) {
		return 0;
	}
	if (size > 0) {
		memcpy(p, data, size);
	}
	rv = content_image_probe(p, size, &info);
	if (rv != WB_OK && rv != WB_EMEDIATYPE) {
		image_fuzz_fail("probe gives WB_OK or WB_EMEDIATYPE");
	}
	if (rv == WB_OK &&
	    (content_image_mime(info.type) == NULL || info.width == 0 || info.height == 0)) {
		image_fuzz_fail("an accepted image has a type and a size");
	}
	rv2 = content_image_strip(p, size, &n);
	if (rv2 != rv) {
		image_fuzz_fail("strip refuses exactly what probe refuses");
	}
	if ((rv != WB_OK || info.type != CONTENT_IMAGE_JPEG) &&
	    ((rv == WB_OK && n != size) || (size > 0 && memcmp(p, data, size) != 0))) {
		image_fuzz_fail("strip changes nothing but a JPEG");
	}
	if (rv == WB_OK) {
		if (n > size) {
			image_fuzz_fail("strip never lengthens");
		}
		if (content_image_probe(p, n, &again) != WB_OK || again.type != info.type ||
		    again.width != info.width || again.height != info.height) {
			image_fuzz_fail("the stripped image probes to the same type and size");
		}
		if (content_image_strip(p, n, &n2) != WB_OK || n2 != n) {
			image_fuzz_fail("a second strip changes nothing");
		}
	}
	free(p);
	return 0;
}
