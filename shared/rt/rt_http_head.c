/*
 * rt_http_head.c - the request head of HTTP/1.0 and 1.1 (RFC 9112):
 * finding its end, then its request line and the header fields Warble's
 * servers use (rt_http.h).  Pure: no I/O, no state (fuzzed by
 * rt_http_head_fuzz.c).
 *
 *   METHOD SP request-target SP HTTP/1.x CRLF
 *   (field-name ":" OWS field-value OWS CRLF)*
 *   CRLF
 *
 * Bare LF line ends are taken as CRLF.  Field values may hold tabs and
 * bytes 0x80-0xFF (obs-text); any other control byte, DEL, a folded line
 * or white space before a colon is refused (400), as RFC 9112 allows.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "rt_http.h"

size_t
rt_http_head_end(const char *p, size_t n)
{
	const char *nl = p, *end = p + n;

	while ((nl = memchr(nl, '\n', (size_t)(end - nl))) != NULL) {
		nl++;
		if (nl < end && *nl == '\n') {
			return (size_t)(nl + 1 - p);
		}
		if (nl + 1 < end && nl[0] == '\r' && nl[1] == '\n') {
			return (size_t)(nl + 2 - p);
		}
	}
	return 0;
}

/* rt_http_tchar tells whether c may be in a token (a method or a field name). */
static bool
rt_http_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/*
 * rt_http_line cuts the line at *pp (ending before end), NUL-terminating
 * it; returns it and its length in *len, or NULL at end.
 */
static char *
rt_http_line(char **pp, char *end, size_t *len)
{
	char *p = *pp, *nl;

	if (p >= end || (nl = memchr(p, '\n', (size_t)(end - p))) == NULL) {
		return NULL;
	}
	*pp = nl + 1;
	if (nl > p && nl[-1] == '\r') {
		nl--;
	}
	*nl = '\0';
	*len = (size_t)(nl - p);
	return p;
}

/* rt_http_has_token tells whether the comma-separated list v holds tok (any case). */
static bool
rt_http_has_token(const char *v, const char *tok)
{
	size_t n = strlen(tok);

	while (*v != '\0') {
		while (*v == ' ' || *v == '\t' || *v == ',') {
			v++;
		}
		if (strncasecmp(v, tok, n) == 0 &&
		    (v[n] == '\0' || v[n] == ',' || v[n] == ' ' || v[n] == '\t')) {
			return true;
		}
		while (*v != '\0' && *v != ',') {
			v++;
		}
	}
	return false;
}

static int
rt_http_head_fail(const char **why, int status, const char *msg)
{
	*why = msg;
	return status;
}

/* rt_http_head_field takes in one header field (name and value NUL-terminated); 0 or a status. */
static int
rt_http_head_field(rt_http_head *h, const char *name, const char *v, bool *keep, const char **why)
{
	uint64_t len = 0;
	size_t   i;

	if (strcasecmp(name, "Content-Length") == 0) {
		for (i = 0; v[i] >= '0' && v[i] <= '9' && i < 18; i++) {
			len = len * 10 + (uint64_t)(v[i] - '0');
		}
		if (i == 0 || v[i] != '\0') {
			return v[i] >= '0' && v[i] <= '9'
			           ? rt_http_head_fail(why, 413, "Content-Length too large")
			           : rt_http_head_fail(why, 400, "bad Content-Length");
		}
		if (h->has_length && len != h->content_length) {
			return rt_http_head_fail(why, 400, "two different Content-Lengths");
		}
		h->has_length = true;
		h->content_length = len;
	} else if (strcasecmp(name, "Transfer-Encoding") == 0) {
		h->chunked = true;
	} else if (strcasecmp(name, "Connection") == 0) {
		h->close |= rt_http_has_token(v, "close");
		*keep |= rt_http_has_token(v, "keep-alive");
	} else if (strcasecmp(name, "Authorization") == 0) {
		h->authorization = v;
	} else if (strcasecmp(name, "X-Request-Id") == 0) {
		h->request_id = v;
	} else if (strcasecmp(name, "Range") == 0) {
		h->range = v;
	} else if (strcasecmp(name, "If-None-Match") == 0) {
		h->if_none_match = v;
	} else if (strcasecmp(name, "X-Forwarded-For") == 0) {
		h->forwarded_for = v; /* the last line: a trusted proxy appends its own */
	} else if (strcasecmp(name, "If-Range") == 0) {
		h->if_range = v;
	} else if (strcasecmp(name, "Expect") == 0) {
		h->expect_continue = strcasecmp(v, "100-continue") == 0;
	}
	return 0;
}

int
rt_http_head_parse(char *buf, size_t n, rt_http_head *h, const char **why)
{
	char  *p = buf, *end = buf + n, *line, *sp;
	size_t len;
	bool   keep = false;
	int    rc;

	memset(h, 0, sizeof(*h));
	*why = "malformed request";
	if ((line = rt_http_line(&p, end, &len)) == NULL) {
		return 400;
	}
	/* the request line: three parts, one space apart */
	for (size_t i = 0; i < len; i++) {
		if ((unsigned char)line[i] <= 0x20 && line[i] != ' ') {
			return rt_http_head_fail(why, 400, "control byte in the request line");
		}
		if ((unsigned char)line[i] >= 0x7f) {
			return rt_http_head_fail(why, 400, "byte over 0x7E in the request line");
		}
	}
	h->method = line;
	if ((sp = strchr(line, ' ')) == NULL || sp == line) {
		return 400;
	}
	*sp = '\0';
	for (const char *m = line; *m != '\0'; m++) {
		if (!rt_http_tchar((unsigned char)*m)) {
			return rt_http_head_fail(why, 400, "bad method");
		}
	}
	h->target = sp + 1;
	if ((sp = strchr(h->target, ' ')) == NULL || sp == h->target) {
		return 400;
	}
	*sp = '\0';
	if (strncmp(sp + 1, "HTTP/", 5) != 0 || strlen(sp + 1) != 8 || sp[7] != '.' ||
	    sp[6] < '0' || sp[6] > '9' || sp[8] < '0' || sp[8] > '9') {
		return rt_http_head_fail(why, 400, "bad HTTP version");
	}
	if (sp[6] != '1') {
		return rt_http_head_fail(why, 505, "only HTTP/1.0 and HTTP/1.1 are served");
	}
	h->minor = sp[8] - '0';
	/* the header fields, up to the empty line */
	while ((line = rt_http_line(&p, end, &len)) != NULL && len > 0) {
		char *colon, *v, *e;

		if (line[0] == ' ' || line[0] == '\t') {
			return rt_http_head_fail(why, 400, "folded header line");
		}
		if ((colon = memchr(line, ':', len)) == NULL || colon == line) {
			return rt_http_head_fail(why, 400, "header line without a name");
		}
		*colon = '\0';
		for (const char *c = line; c < colon; c++) { /* a NUL in the name too */
			if (!rt_http_tchar((unsigned char)*c)) {
				return rt_http_head_fail(why, 400, "bad header name");
			}
		}
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++) {
		}
		for (e = v; e < line + len; e++) {
			unsigned char c = (unsigned char)*e;
			if ((c < 0x20 && c != '\t') || c == 0x7f) {
				return rt_http_head_fail(
				    why, 400, "control byte in a header value");
			}
		}
		while (e > v && (e[-1] == ' ' || e[-1] == '\t')) {
			e--;
		}
		*e = '\0';
		if ((rc = rt_http_head_field(h, line, v, &keep, why)) != 0) {
			return rc;
		}
	}
	if (line == NULL) {
		return 400; /* no empty line: not a whole head */
	}
	if (h->minor == 0 && !keep) {
		h->close = true;
	}
	return 0;
}
