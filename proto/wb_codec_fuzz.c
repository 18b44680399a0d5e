/*
 * wb_codec_fuzz.c - libFuzzer target for the msgpack codec.
 *
 * Any input: wb_decode with the default limits must either fail with a
 * decoding error and a message, or give a message that passes through
 * wb_check_request and wb_reply_code, re-encodes, decodes again to an
 * equal message and re-encodes to the very same bytes.  wb_decode_head
 * of any prefix fails as cleanly, and of a whole message gives the
 * message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wb_proto.h"

static void
wb_fuzz_fail(const char *what, const char *err)
{
	fprintf(stderr, "wb_codec_fuzz: %s (%s)\n", what, err);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	wb_obj     *m, *m2;
	char        err[256] = "", *buf, *buf2;
	size_t      len, len2;
	const char *msg;
	wb_op       op;
	int         rv;

	rv = wb_decode_head(&m, data, size / 2, NULL, err, sizeof(err));
	if (rv != WB_OK && (m != NULL || err[0] == '\0')) {
		wb_fuzz_fail("a failed head decode must give NULL and a message", err);
	}
	wb_msg_free(m);
	err[0] = '\0';
	rv = wb_decode(&m, data, size, NULL, err, sizeof(err));
	if (rv != WB_OK) {
		if (m != NULL || err[0] == '\0' ||
		    (rv != WB_EBADMSG && rv != WB_ETOOBIG && rv != WB_ENOMEM)) {
			wb_fuzz_fail(
			    "a failed decode must give NULL, a decoding code and a message", err);
		}
		return 0;
	}
	err[0] = '\0';
	rv = wb_check_request(m, &op, err, sizeof(err));
	if (rv != WB_OK && err[0] == '\0') {
		wb_fuzz_fail("a rejected request must say why", "");
	}
	if (rv == WB_OK && (op == WB_OP_NONE || op != wb_op_of(m))) {
		wb_fuzz_fail("an accepted request must have its op", "");
	}
	(void)wb_reply_code(m, &msg);
	if (wb_decode_head(&m2, data, size, NULL, err, sizeof(err)) != WB_OK || !wb_equal(m, m2)) {
		wb_fuzz_fail("the head of a whole message must be the message", err);
	}
	wb_msg_free(m2);

	if (wb_encode_buf(m, &buf, &len) != WB_OK) {
		wb_fuzz_fail("a decoded message must encode", "");
	}
	if (len > size) {
		wb_fuzz_fail("re-encoding never grows a message", "");
	}
	if (wb_decode(&m2, buf, len, NULL, err, sizeof(err)) != WB_OK) {
		wb_fuzz_fail("a re-encoded message must decode", err);
	}
	if (!wb_equal(m, m2)) {
		wb_fuzz_fail("decode(encode(m)) != m", "");
	}
	if (wb_encode_buf(m2, &buf2, &len2) != WB_OK || len2 != len ||
	    memcmp(buf, buf2, len) != 0) {
		wb_fuzz_fail("encoding is not canonical", "");
	}
	free(buf);
	free(buf2);
	wb_msg_free(m);
	wb_msg_free(m2);
	return 0;
}
