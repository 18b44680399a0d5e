/*
 * http_parse_fuzz.c - libFuzzer target for the HTTP router and query
 * parser (http_parse: method + URI -> route and request object).
 *
 * Input: the first byte picks a method, the rest is the URI; half the
 * time it is glued to a real API prefix so the fuzzer reaches the
 * routes' parameters and query strings fast.  Every URI either routes
 * (then an API route's object carries its op and version and passes
 * wb_check_request, or is refused with a message) or gets a 4xx/503 with
 * an error name and a NUL-terminated message; a 405 names the allowed
 * methods.  The object survives a msgpack round trip.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
hf_fail(const char *what, const char *uri)
{
	fprintf(stderr, "http_parse_fuzz: %s (uri \"%s\")\n", what, uri);
	abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = { "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD",
		"OPTIONS", "get" };
	static const char *const prefixes[] = { "", "/api/v1/users/", "/api/v1/users/alice/posts?",
		"/api/v1/me/following/", "/api/v1/posts/", "/api/v1/home?",
		"/api/v1/users/bob/fans?", "/api/v1/users/bob/following?limit=3&" };
	static wb_obj           *q;
	char                     uri[4096];
	http_parsed              out;
	const char              *method;
	size_t                   pl;
	int                      st;
	wb_op                    op;
	char                     err[256];

	if (size < 1 || size > 3000) {
		return 0;
	}
	if (q == NULL && (q = wb_msg_new()) == NULL) {
		abort();
	}
	method = methods[data[0] % 8];
	const char *pre = prefixes[(data[0] >> 3) % 8];
	pl = strlen(pre);
	memcpy(uri, pre, pl);
	memcpy(uri + pl, data + 1, size - 1);
	uri[pl + size - 1] = '\0'; /* nng hands a C string: an embedded NUL ends it */

	st = http_parse(method, uri, q, &out);
	if (st == 0) {
		if (out.route == NULL) {
			hf_fail("routed without a route", uri);
		}
		if (wb_has(q, WB_F_OP)) {
			err[0] = '\0';
			if (wb_op_of(q) == WB_OP_NONE || !wb_has(q, WB_F_V)) {
				hf_fail("an API route's request lacks op or version", uri);
			}
			if (wb_check_request(q, &op, err, sizeof(err)) != WB_OK && err[0] == '\0') {
				hf_fail("a refused request must say why", uri);
			}
		}
	} else {
		if ((st != 400 && st != 404 && st != 405 && st != 503) || out.error == NULL ||
		    memchr(out.msg, '\0', sizeof(out.msg)) == NULL || out.msg[0] == '\0') {
			hf_fail("an error needs a client status, a name and a message", uri);
		}
		if (st == 405 && out.allow[0] == '\0') {
			hf_fail("a 405 must name the allowed methods", uri);
		}
	}
	char   *buf;
	size_t  len;
	wb_obj *m2 = NULL;
	if (wb_encode_buf(q, &buf, &len) != WB_OK ||
	    wb_decode(&m2, buf, len, NULL, err, sizeof(err)) != WB_OK) {
		hf_fail("the request object does not survive msgpack", uri);
	}
	if (!wb_equal(q, m2)) {
		hf_fail("msgpack round trip changed the request", uri);
	}
	wb_msg_free(m2);
	free(buf);
	return 0;
}
