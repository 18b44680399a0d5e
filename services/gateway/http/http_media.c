/*
 * http_media.c - an image as HTTP serves it: GET and HEAD /media/{media}
 * and /media/{media}/preview with a strong ETag (304 on If-None-Match),
 * one byte range (206, 416; If-Range), long immutable caching and
 * headers that keep a browser from treating the bytes as anything but the
 * image type the content service decoded them as.  A media id never names
 * other bytes (its original and its preview are written once, at the
 * upload), so the id is the ETag, "-preview" added for the preview.
 */
#include <stdio.h>
#include <string.h>

#include "http_int.h"
#include "wb_id.h"

#define HTTP_MEDIA_HEADERS                                         \
	"X-Content-Type-Options: nosniff\r\n"                      \
	"Content-Security-Policy: default-src 'none'; sandbox\r\n" \
	"Accept-Ranges: bytes\r\n"

/* http_etag_match tells whether an If-None-Match value lists etag (or is "*"). */
static bool
http_etag_match(const char *inm, const char *etag)
{
	size_t n = strlen(etag);

	for (const char *p = inm; *p != '\0';) {
		while (*p == ' ' || *p == '\t' || *p == ',') {
			p++;
		}
		if (*p == '*') {
			return true;
		}
		if (strncmp(p, "W/", 2) == 0) {
			p += 2; /* a weak comparison matches a strong tag (RFC 9110 13.1.2) */
		}
		if (strncmp(p, etag, n) == 0 && (p[n] == '\0' || p[n] == ',' || p[n] == ' ')) {
			return true;
		}
		while (*p != '\0' && *p != ',') {
			p++;
		}
	}
	return false;
}

/*
 * http_range_num reads a decimal at *p, advancing it; false if there is
 * none.  One past 64 bits reads as UINT64_MAX: every position in an image
 * is smaller, which is what such a number means in a range (RFC 9110
 * 14.1.2: a last position past the end is the end, a suffix longer than
 * the image is the whole image, a first position past it unsatisfiable).
 */
static bool
http_range_num(const char **p, uint64_t *v)
{
	const char *s = *p;

	*v = 0;
	if (*s < '0' || *s > '9') {
		return false;
	}
	for (; *s >= '0' && *s <= '9'; s++) {
		uint64_t d = (uint64_t)(*s - '0');
		*v = *v > (UINT64_MAX - d) / 10 ? UINT64_MAX : *v * 10 + d;
	}
	*p = s;
	return true;
}

/*
 * http_range reads a Range header for len bytes: 1 and [*first, *last]
 * for one satisfiable range, 0 to answer with the whole body (no header,
 * or one this server does not take: several ranges, another unit, bad
 * syntax), -1 for a range wholly past the end (416).
 */
static int
http_range(const char *h, size_t len, uint64_t *first, uint64_t *last)
{
	const char *p = h;
	uint64_t    a, b;

	if (h == NULL || strncmp(p, "bytes=", 6) != 0) {
		return 0;
	}
	p += 6;
	if (*p == '-') { /* the last b bytes */
		p++;
		if (!http_range_num(&p, &b) || *p != '\0') {
			return 0;
		}
		if (b == 0 || len == 0) {
			return -1;
		}
		*first = b >= len ? 0 : len - b;
		*last = len - 1;
		return 1;
	}
	if (!http_range_num(&p, &a) || *p++ != '-') {
		return 0;
	}
	b = UINT64_MAX;
	if (*p != '\0' && (!http_range_num(&p, &b) || b < a)) {
		return 0;
	}
	if (*p != '\0') {
		return 0; /* several ranges: the whole body is a valid answer */
	}
	if (a >= len) {
		return -1;
	}
	*first = a;
	*last = b < len ? b : len - 1;
	return 1;
}

/*
 * http_if_range tells whether the Range of a request with If-Range value
 * v may be honoured for an image whose ETag is etag: only for that very
 * tag, compared strongly (a weak one never matches).  These responses
 * carry no Last-Modified, so a date never matches either: the whole image
 * is sent (RFC 9110 13.1.5).
 */
static bool
http_if_range(const char *v, const char *etag)
{
	return v == NULL || strcmp(v, etag) == 0;
}

void
http_media(http_job *j)
{
	const void *data = NULL;
	const char *media = wb_str(j->rep, WB_F_MEDIA, "");
	const char *type = wb_str(j->rep, WB_F_TYPE, "application/octet-stream");
	size_t      len = 0;
	bool public = false;
	bool     preview = false;
	uint64_t first = 0, last = 0;
	char     etag[WB_MEDIA_ID_MAX + 16];
	int      k, range;

	(void)wb_get_bin(j->rep, WB_F_DATA, &data, &len);
	(void)wb_get_bool(j->rep, WB_F_PUBLIC, &public);
	(void)wb_get_bool(j->rep, WB_F_PREVIEW, &preview);
	snprintf(etag, sizeof(etag), "\"%s%s\"", media, preview ? "-preview" : "");
	k = snprintf(j->headers, sizeof(j->headers),
	    "ETag: %s\r\nCache-Control: %s, max-age=31536000, immutable\r\n" HTTP_MEDIA_HEADERS,
	    etag, public ? "public" : "private");
	if (j->head.if_none_match != NULL && http_etag_match(j->head.if_none_match, etag)) {
		http_respond(j, 304, type, "", 0);
		return;
	}
	range = http_if_range(j->head.if_range, etag)
	            ? http_range(j->head.range, len, &first, &last)
	            : 0; /* another version's range: the whole of this one */
	if (range < 0) {
		/* an error: JSON, not cached, and the length the range missed */
		snprintf(j->headers, sizeof(j->headers),
		    "Content-Range: bytes */%zu\r\nCache-Control: no-store\r\n" HTTP_MEDIA_HEADERS,
		    len);
		http_fail(j, 416, "RANGE_NOT_SATISFIABLE",
		    "the range starts past the end of the image (%zu bytes)", len);
		return;
	}
	if (range > 0) {
		snprintf(j->headers + k, sizeof(j->headers) - (size_t)k,
		    "Content-Range: bytes %llu-%llu/%zu\r\n", (unsigned long long)first,
		    (unsigned long long)last, len);
		http_respond(j, 206, type, (const char *)data + first, (size_t)(last - first + 1));
		return;
	}
	http_respond(j, 200, type, data, len);
}
