/*
 * http_json_fuzz.c - libFuzzer target for the JSON <-> wb_obj mapping of the
 * HTTP API (json.h).
 *
 * The first input byte picks a route's body (register/login, update
 * profile, publish, or every field); the rest is the JSON body.  A body
 * is refused with a code and a message, or gives an object that:
 * passes wb_check_request as the route's operation or is refused with a
 * message; encodes to JSON that parses back (all fields allowed) to an
 * equal object, and encodes to the very same JSON again; and survives a
 * msgpack round trip.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_buf.h"
#include "http_json.h"
#include "wb_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
jf_fail(const char *what, const char *err)
{
	fprintf(stderr, "json_fuzz: %s (%s)\n", what, err);
	abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct {
		wb_op   op;
		wb_mask body;
	} routes[] = {
		{ WB_OP_REGISTER, WB_M(NAME) | WB_M(PASSWORD) },
		{ WB_OP_LOGIN, WB_M(NAME) | WB_M(PASSWORD) },
		{ WB_OP_UPDATE_PROFILE, WB_M(DISPLAY) | WB_M(BIO) },
		{ WB_OP_PUBLISH, WB_M(TEXT) | WB_M(TITLE) | WB_M(CATEGORY) | WB_M(IMAGES) },
		{ WB_OP_NONE, ~(wb_mask)0 },
	};
	const wb_mask all = ~(wb_mask)0;
	char          err[256] = "";
	wb_obj       *m, *m2, *req;
	http_buf      j1 = { 0 }, j2 = { 0 };
	wb_op         op;
	int           rc, r;

	if (size < 1) {
		return 0;
	}
	r = data[0] % (int)(sizeof(routes) / sizeof(routes[0]));
	if ((m = wb_msg_new()) == NULL || (m2 = wb_msg_new()) == NULL) {
		abort();
	}
	rc =
	    http_json_to_obj(m, (const char *)data + 1, size - 1, routes[r].body, err, sizeof(err));
	if (rc != WB_OK) {
		if (err[0] == '\0' || (rc != WB_EBADMSG && rc != WB_EINVAL && rc != WB_ETOOBIG)) {
			jf_fail("a refused body must say why with a client error", err);
		}
		goto done;
	}
	/* as the route's request */
	if (routes[r].op != WB_OP_NONE && (req = wb_request(routes[r].op)) != NULL) {
		if (http_json_to_obj(req, (const char *)data + 1, size - 1, routes[r].body, err,
		        sizeof(err)) != WB_OK) {
			jf_fail("a body parsed once must parse twice", err);
		}
		if (routes[r].op == WB_OP_UPDATE_PROFILE || routes[r].op == WB_OP_PUBLISH) {
			wb_set_cstr(req, WB_F_TOKEN, "t");
		}
		err[0] = '\0';
		if (wb_check_request(req, &op, err, sizeof(err)) != WB_OK && err[0] == '\0') {
			jf_fail("a rejected request must say why", "");
		}
		wb_msg_free(req);
	}
	/* JSON round trip */
	if (http_json_from_obj(m, 0, &j1) != WB_OK) {
		jf_fail("a parsed object must encode", "");
	}
	if (http_json_to_obj(m2, j1.p, j1.len, all, err, sizeof(err)) != WB_OK) {
		fprintf(stderr, "json: %.*s\n", (int)j1.len, j1.p);
		jf_fail("our own JSON must parse", err);
	}
	if (!wb_equal(m, m2)) {
		jf_fail("parse(encode(m)) != m", "");
	}
	if (http_json_from_obj(m2, 0, &j2) != WB_OK || j1.len != j2.len ||
	    memcmp(j1.p, j2.p, j1.len) != 0) {
		jf_fail("JSON encoding is not canonical", "");
	}
	/* and through msgpack */
	{
		char   *buf;
		size_t  len;
		wb_obj *m3;

		if (wb_encode_buf(m, &buf, &len) != WB_OK) {
			jf_fail("a parsed object must encode to msgpack", "");
		}
		if (wb_decode(&m3, buf, len, NULL, err, sizeof(err)) != WB_OK) {
			jf_fail("its msgpack must decode", err);
		}
		if (!wb_equal(m, m3)) {
			jf_fail("msgpack round trip changed the object", "");
		}
		wb_msg_free(m3);
		free(buf);
	}
done:
	http_buf_free(&j1);
	http_buf_free(&j2);
	wb_msg_free(m);
	wb_msg_free(m2);
	return 0;
}
