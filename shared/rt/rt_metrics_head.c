/*
 * rt_metrics_head.c - the request head of the admin port (see
 * rt_metrics.c): finding its end, then its request line and the header
 * fields that matter to a GET without a body.  Pure: no I/O, no state.
 *
 *   METHOD SP path[?query] SP HTTP/1.x CRLF
 *   (field-name ":" field-value CRLF)*
 *   CRLF
 *
 * Bare LF line ends are taken as CRLF.  A control byte other than a tab,
 * or DEL, anywhere in the head, a folded line, a field without a name, a
 * body announced (Content-Length above 0, Transfer-Encoding) or a version
 * other than HTTP/1.0 and 1.1 is refused.
 */
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "rt_metrics_int.h"

size_t
rt_metrics_head_end(const char *p, size_t n)
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

/* rt_metrics_tchar tells whether c may be in a token (a method or a field name). */
static bool
rt_metrics_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

/* rt_metrics_line cuts the line at *pp (before end) in place, without its CR LF; NULL at end. */
static char *
rt_metrics_line(char **pp, char *end)
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
	return p;
}

/* rt_metrics_has_token tells whether the comma-separated list v holds token (any case). */
static bool
rt_metrics_has_token(const char *v, const char *token)
{
	size_t n = strlen(token);

	for (const char *p = v; *p != '\0';) {
		p += strspn(p, " \t,");
		size_t k = strcspn(p, " \t,");
		if (k == n && strncasecmp(p, token, n) == 0) {
			return true;
		}
		p += k;
	}
	return false;
}

/* rt_metrics_no_body tells whether a Content-Length value announces no body: digits, all 0. */
static bool
rt_metrics_no_body(const char *v)
{
	size_t z = strspn(v, "0");

	return z > 0 && v[z + strspn(v + z, " \t")] == '\0';
}

int
rt_metrics_head_parse(char *buf, size_t n, rt_metrics_req *r, const char **why)
{
	char *p = buf, *end = buf + n, *line, *sp, *target, *version, *q;
	bool  close = false, keep = false, v10;

	memset(r, 0, sizeof(*r));
	*why = "malformed request line";
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];
		if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f) {
			*why = "a control byte in the request head";
			return 400;
		}
	}
	/* METHOD SP target SP version, each one space apart */
	if ((line = rt_metrics_line(&p, end)) == NULL || (sp = strchr(line, ' ')) == NULL ||
	    sp == line) {
		return 400;
	}
	*sp = '\0';
	target = sp + 1;
	if (target[0] != '/' || (sp = strchr(target, ' ')) == NULL) {
		return 400;
	}
	*sp = '\0';
	version = sp + 1;
	for (const char *m = line; *m != '\0'; m++) {
		if (!rt_metrics_tchar((unsigned char)*m)) {
			return 400;
		}
	}
	if (strchr(target, '\t') != NULL || strncmp(version, "HTTP/", 5) != 0 ||
	    strpbrk(version, " \t") != NULL) {
		return 400;
	}
	if (strcmp(version, "HTTP/1.1") != 0 && strcmp(version, "HTTP/1.0") != 0) {
		*why = "only HTTP/1.0 and 1.1 are served";
		return 505;
	}
	v10 = strcmp(version, "HTTP/1.0") == 0;
	r->method = line;
	if ((q = strchr(target, '?')) != NULL) {
		*q = '\0'; /* no page takes a query */
	}
	r->path = target;
	while ((line = rt_metrics_line(&p, end)) != NULL && line[0] != '\0') {
		char *colon = strchr(line, ':'), *v;

		if (line[0] == ' ' || line[0] == '\t') {
			*why = "folded header line";
			return 400;
		}
		if (colon == NULL || colon == line) {
			*why = "malformed header line";
			return 400;
		}
		*colon = '\0';
		for (const char *k = line; *k != '\0'; k++) {
			if (!rt_metrics_tchar((unsigned char)*k)) {
				*why = "malformed header name";
				return 400;
			}
		}
		v = colon + 1 + strspn(colon + 1, " \t");
		if (strcasecmp(line, "Transfer-Encoding") == 0 ||
		    (strcasecmp(line, "Content-Length") == 0 && !rt_metrics_no_body(v))) {
			*why = "this port takes no request body";
			return 400;
		}
		if (strcasecmp(line, "Connection") == 0) {
			close |= rt_metrics_has_token(v, "close");
			keep |= rt_metrics_has_token(v, "keep-alive");
		}
	}
	/* HTTP/1.1 keeps the connection unless told; 1.0 only if asked */
	r->close = close || (v10 && !keep);
	return 0;
}
