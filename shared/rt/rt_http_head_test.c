/*
 * rt_http_head_test.c - the request head parser on its own: where a head
 * ends, the request line, the fields Warble's servers read, keep-alive
 * by version, and every refusal with its status.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "rt_http.h"

static char buf[RT_HTTP_HEAD_MAX + 1];

/* parse copies a whole head and parses it; the status (0 when parsed). */
static int
parse(const char *head, rt_http_head *h)
{
	const char *why = NULL;
	size_t      n = strlen(head);
	int         st;

	cr_assert_eq(rt_http_head_end(head, n), n, "not a whole head: %s", head);
	memcpy(buf, head, n + 1);
	st = rt_http_head_parse(buf, n, h, &why);
	if (st != 0) {
		cr_assert(why != NULL && why[0] != '\0', "status %d without a reason", st);
	}
	return st;
}

Test(http_head, end)
{
	cr_assert_eq(rt_http_head_end("GET / HTTP/1.1\r\nHost: x\r\n", 25), 0);
	cr_assert_eq(rt_http_head_end("GET / HTTP/1.1\r\nHost: x\r\n\r", 26), 0);
	cr_assert_eq(rt_http_head_end("GET / HTTP/1.1\r\nHost: x\r\n\r\nBODY", 31), 27);
	cr_assert_eq(rt_http_head_end("GET / HTTP/1.1\nHost: x\n\nBODY", 28), 24);
	cr_assert_eq(rt_http_head_end("", 0), 0);
}

Test(http_head, fields)
{
	rt_http_head h;

	cr_assert_eq(parse("POST /api/v1/posts?x=1 HTTP/1.1\r\nHost: x\r\n"
	                   "authorization:   Bearer abc  \r\nContent-Length: 12\r\n"
	                   "Expect: 100-continue\r\nx-request-id: ab-1\r\n\r\n",
	                 &h),
	    0);
	cr_assert_str_eq(h.method, "POST");
	cr_assert_str_eq(h.target, "/api/v1/posts?x=1");
	cr_assert_eq(h.minor, 1);
	cr_assert_str_eq(h.authorization, "Bearer abc");
	cr_assert_str_eq(h.request_id, "ab-1");
	cr_assert(h.has_length && h.content_length == 12);
	cr_assert(h.expect_continue && !h.close && !h.chunked);

	cr_assert_eq(parse("GET / HTTP/1.1\r\nConnection: keep-alive, Close\r\n\r\n", &h), 0);
	cr_assert(h.close);
	cr_assert_eq(parse("GET / HTTP/1.0\r\n\r\n", &h), 0);
	cr_assert(h.close, "HTTP/1.0 closes unless asked to keep the connection");
	cr_assert_eq(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &h), 0);
	cr_assert(!h.close);
	cr_assert_eq(parse("GET / HTTP/1.1\nTransfer-Encoding: chunked\n\n", &h), 0);
	cr_assert(h.chunked);
	cr_assert_eq(
	    parse("GET / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", &h), 0);
	cr_assert_eq(h.content_length, 5);
}

/*
 * A later 1.x keeps its minor (a server serves it as 1.1); a NUL inside a
 * field name is refused, not read as the name before it.
 */
Test(http_head, minor_and_nul)
{
	static const char nul[] = "GET / HTTP/1.1\r\nContent-Length\0x: 5\r\n\r\n";
	rt_http_head      h;
	const char       *why = NULL;

	cr_assert_eq(parse("GET / HTTP/1.2\r\n\r\n", &h), 0);
	cr_assert_eq(h.minor, 2);
	cr_assert(!h.close);
	memcpy(buf, nul, sizeof(nul));
	cr_assert_eq(rt_http_head_end(buf, sizeof(nul) - 1), sizeof(nul) - 1);
	cr_assert_eq(rt_http_head_parse(buf, sizeof(nul) - 1, &h, &why), 400);
	cr_assert(!h.has_length, "the field was read as Content-Length");
}

Test(http_head, odd_bytes_in_values)
{
	rt_http_head h;

	cr_assert_eq(parse("GET / HTTP/1.1\r\nUser-Agent: caf\xc3\xa9\r\n\r\n", &h), 0);
	cr_assert_eq(parse("GET / HTTP/1.1\r\nUser-Agent: a\tb\r\n\r\n", &h), 0);
	cr_assert_eq(parse("GET / HTTP/1.1\r\nUser-Agent: \tlatin \xe9\r\n\r\n", &h), 0);
	cr_assert_eq(parse("GET / HTTP/1.1\r\nUser-Agent: a\x01z\r\n\r\n", &h), 400);
	cr_assert_eq(parse("GET / HTTP/1.1\r\nUser-Agent: a\x7f\r\n\r\n", &h), 400);
	cr_assert_eq(parse("GET / HTTP/1.1\r\nUser-Agent: a\rb\r\n\r\n", &h), 400);
}

Test(http_head, refusals)
{
	static const struct {
		const char *head;
		int         status;
	} bad[] = {
		{ "GET /\r\n\r\n", 400 },                      /* no version */
		{ "GET  / HTTP/1.1\r\n\r\n", 400 },            /* two spaces */
		{ "G(T / HTTP/1.1\r\n\r\n", 400 },             /* not a token */
		{ "GET / HTTP/1.1 \r\n\r\n", 400 },            /* trailing space */
		{ "GET /\x01 HTTP/1.1\r\n\r\n", 400 },         /* control byte in the target */
		{ "GET /caf\xc3\xa9 HTTP/1.1\r\n\r\n", 400 },  /* raw UTF-8 in the target */
		{ "GET / HTTP/2.0\r\n\r\n", 505 },             /* another major version */
		{ "GET / HTTPS/1.1\r\n\r\n", 400 },            /* not HTTP */
		{ "GET / HTTP/1.1\r\n folded\r\n\r\n", 400 },  /* obs-fold */
		{ "GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400 }, /* space before the colon */
		{ "GET / HTTP/1.1\r\nno colon\r\n\r\n", 400 }, /* no colon */
		{ "GET / HTTP/1.1\r\n: x\r\n\r\n", 400 },      /* no name */
		{ "GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400 },
		{ "GET / HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n", 400 },
		{ "GET / HTTP/1.1\r\nContent-Length:\r\n\r\n", 400 },
		{ "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400 },
		{ "GET / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", 413 },
	};
	rt_http_head h;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(parse(bad[i].head, &h), bad[i].status, "case %zu: %s", i, bad[i].head);
	}
}
