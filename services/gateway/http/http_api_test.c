/*
 * http_api_test.c - the HTTP router on its own (http_parse): routes
 * and their {name}/{id}/{media} segments, a post's page, an image's preview route,
 * percent-decoding, 404 and 405 with the
 * allowed methods, and paths that fill the decoded-segment buffer (an
 * empty segment after a full buffer once wrote one byte past it; the
 * sanitizer build catches any return of that).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "http_int.h"

static wb_obj *q;

static void
setup(void)
{
	q = wb_msg_new();
	cr_assert_not_null(q);
}

static void
teardown(void)
{
	wb_msg_free(q);
}

TestSuite(http_api, .init = setup, .fini = teardown);

static int
parse(const char *method, const char *uri, http_parsed *out)
{
	return http_parse(method, uri, q, out);
}

/* The request's name field as a C string ("" when absent). */
static const char *
name_of(char *buf, size_t n)
{
	const char *s;
	size_t      len;

	buf[0] = '\0';
	if (wb_get_str(q, WB_F_NAME, &s, &len) && len < n) {
		memcpy(buf, s, len);
		buf[len] = '\0';
	}
	return buf;
}

Test(http_api, routes_carry_op_version_and_name)
{
	http_parsed out;
	char        name[64];

	cr_assert_eq(parse("GET", "/api/v1/users/alice/posts?limit=5", &out), 0, "%s", out.msg);
	cr_assert_eq(wb_op_of(q), WB_OP_TIMELINE);
	cr_assert(wb_has(q, WB_F_V));
	cr_assert_str_eq(name_of(name, sizeof(name)), "alice");
	cr_assert(wb_has(q, WB_F_LIMIT));

	cr_assert_eq(parse("HEAD", "/api/v1/users/bob", &out), 0, "%s", out.msg);
	cr_assert_eq(wb_op_of(q), WB_OP_PROFILE);
	cr_assert_str_eq(name_of(name, sizeof(name)), "bob");

	cr_assert_eq(parse("GET", "/healthz", &out), 0);
	cr_assert_not(wb_has(q, WB_F_OP), "an operational route builds no request");
}

/* An image and its preview: one op, the preview route sets its flag, a query cannot. */
Test(http_api, media_and_its_preview)
{
	http_parsed out;
	const char *s;
	size_t      n;
	bool        pv;

	cr_assert_eq(parse("GET", "/media/7-123", &out), 0, "%s", out.msg);
	cr_assert_eq(wb_op_of(q), WB_OP_MEDIA);
	cr_assert(wb_get_str(q, WB_F_MEDIA, &s, &n) && n == 5 && memcmp(s, "7-123", 5) == 0);
	cr_assert_not(wb_has(q, WB_F_PREVIEW));
	cr_assert_eq(parse("HEAD", "/media/7-123/preview", &out), 0, "%s", out.msg);
	cr_assert_eq(wb_op_of(q), WB_OP_MEDIA);
	cr_assert(wb_get_str(q, WB_F_MEDIA, &s, &n) && n == 5 && memcmp(s, "7-123", 5) == 0);
	cr_assert(wb_get_bool(q, WB_F_PREVIEW, &pv) && pv);
	cr_assert_eq(parse("GET", "/media/7-123?preview=true", &out), 400, "not a query field");
	cr_assert_eq(parse("GET", "/media/7-123/full", &out), 404);
	cr_assert_eq(parse("POST", "/media/7-123/preview", &out), 405);
}

/* One post's page and its delete share a path: the method picks the op, the id is a decimal string. */
Test(http_api, a_post_by_its_id)
{
	http_parsed out;
	uint64_t    id = 0;

	cr_assert_eq(parse("GET", "/api/v1/posts/912316145371971584", &out), 0, "%s", out.msg);
	cr_assert_eq(wb_op_of(q), WB_OP_POST);
	cr_assert(wb_get_u64(q, WB_F_ID, &id) && id == 912316145371971584ull);
	cr_assert_eq(parse("HEAD", "/api/v1/posts/7", &out), 0, "%s", out.msg);
	cr_assert_eq(wb_op_of(q), WB_OP_POST);
	cr_assert_eq(parse("DELETE", "/api/v1/posts/7", &out), 0, "%s", out.msg);
	cr_assert_eq(wb_op_of(q), WB_OP_DELETE);
	cr_assert_eq(parse("GET", "/api/v1/posts/seven", &out), 400);
	cr_assert_str_eq(out.error, "BAD_MESSAGE");
	cr_assert_eq(parse("GET", "/api/v1/posts/7?limit=1", &out), 400, "it takes no query");
	cr_assert_eq(parse("PUT", "/api/v1/posts/7", &out), 405);
	cr_assert_str_eq(out.allow, "DELETE, GET, HEAD");
}

Test(http_api, segments_are_percent_decoded)
{
	http_parsed out;
	char        name[64];

	cr_assert_eq(parse("GET", "/api/v1/users/a%6cice", &out), 0, "%s", out.msg);
	cr_assert_str_eq(name_of(name, sizeof(name)), "alice");
	cr_assert_eq(parse("GET", "/api/v1/users/a%6", &out), 400);
	cr_assert_str_eq(out.error, "BAD_MESSAGE");
	cr_assert_eq(parse("GET", "/api/v1/users/a%00b", &out), 400, "an escaped NUL is refused");
}

Test(http_api, unknown_paths_and_methods_are_named)
{
	http_parsed out;

	cr_assert_eq(parse("GET", "/api/v1/nothing", &out), 404);
	cr_assert_str_eq(out.error, "NOT_FOUND");
	cr_assert(strstr(out.msg, "/api/v1/nothing") != NULL, "%s", out.msg);

	cr_assert_eq(parse("POST", "/api/v1/home", &out), 405);
	cr_assert_str_eq(out.error, "METHOD_NOT_ALLOWED");
	cr_assert_str_eq(out.allow, "GET, HEAD");

	cr_assert_eq(parse("GET", "", &out), 400, "a path must start with '/'");
}

/* The decoded bytes a path's segments need: each byte, and a NUL per segment (a trailing slash starts none). */
static size_t
decoded_need(const char *path)
{
	size_t need = 0, n = strlen(path);

	for (size_t i = 0; i < n; i++) {
		need += path[i] != '/' || i + 1 < n;
	}
	return need;
}

/* Paths around the decode buffer's size: what fits routes (404), what does not is a 400. */
Test(http_api, full_segment_buffer_is_refused_not_overrun)
{
	http_parsed out;
	char        uri[2048];
	const char *tails[] = { "//", "///", "///x", "//x/", "/x", "" };

	for (size_t t = 0; t < sizeof(tails) / sizeof(tails[0]); t++) {
		for (size_t len = 500; len <= 515; len++) {
			uri[0] = '/';
			memset(uri + 1, 'a', len);
			snprintf(uri + 1 + len, sizeof(uri) - 1 - len, "%s", tails[t]);
			int want = decoded_need(uri) > HTTP_PATH_MAX ? 400 : 404;
			cr_assert_eq(parse("GET", uri, &out), want, "len %zu tail \"%s\": %s", len,
			    tails[t], out.msg);
		}
	}
	cr_assert_eq(parse("GET", "/api/v1/users/alice/posts/", &out), 0, "%s", out.msg);
	cr_assert_eq(parse("GET", "/a/b/c/d/e/f/g/h/i", &out), 400, "too deep");
}
