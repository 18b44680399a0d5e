/*
 * rt_http.h - what Warble's HTTP/1.x servers share: the request head
 * (RFC 9112) parsed in place, the reason phrase of a status, and the
 * http:// URL a server is given.  The gateway's public API
 * (services/gateway/http) and every daemon's admin port (rt_metrics.h)
 * read their requests with it; each then refuses what it does not serve.
 *
 *   METHOD SP request-target SP HTTP/1.x CRLF
 *   (field-name ":" OWS field-value OWS CRLF)*
 *   CRLF
 */
#ifndef RT_HTTP_H
#define RT_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RT_HTTP_HEAD_MAX 8192 /* a request head's bytes, request line to blank line (431 above) */

/* A request head, parsed in place (every string points into the parsed buffer). */
typedef struct rt_http_head {
	const char *method;
	const char *target;         /* origin-form: path and query */
	int         minor;          /* HTTP/1.minor, 0-9 (a server takes a minor above 1 as 1.1) */
	const char *authorization;  /* NULL if absent */
	const char *request_id;     /* X-Request-Id, NULL if absent */
	const char *range;          /* Range, NULL if absent */
	const char *if_none_match;  /* If-None-Match, NULL if absent */
	const char *forwarded_for;  /* the last X-Forwarded-For line, NULL if absent */
	const char *if_range;       /* If-Range, NULL if absent */
	uint64_t    content_length; /* 0 if absent */
	bool        has_length;
	bool        chunked;         /* a Transfer-Encoding was sent */
	bool        close;           /* close after the reply (Connection: close, or HTTP/1.0) */
	bool        expect_continue; /* Expect: 100-continue */
} rt_http_head;

/*
 * rt_http_head_end returns the length of the request head at the front
 * of p (its blank line included), or 0 if it has not all arrived.
 */
size_t rt_http_head_end(const char *p, size_t n);

/*
 * rt_http_head_parse parses a whole head (buf, n bytes from
 * rt_http_head_end, NUL-terminated) in place into h; 0, or the HTTP
 * status to refuse it with (400, 413 or 505) and *why.
 */
int rt_http_head_parse(char *buf, size_t n, rt_http_head *h, const char **why);

/* rt_http_reason returns the reason phrase of status ("Unknown" for one Warble never sends). */
const char *rt_http_reason(int status);

/*
 * rt_http_tcp_url turns http://host:port[/] into tcp://host:port
 * (malloc'd); NULL if url is not one, or out of memory.
 */
char *rt_http_tcp_url(const char *url);

#endif
