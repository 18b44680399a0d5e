/*
 * rt_http.c - the small pieces of an HTTP/1.x response Warble's servers
 * share (rt_http.h): the reason phrase of a status, and the URL to listen
 * on.  The request head is rt_http_head.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_http.h"

const char *
rt_http_reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 201:
		return "Created";
	case 206:
		return "Partial Content";
	case 304:
		return "Not Modified";
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 409:
		return "Conflict";
	case 413:
		return "Payload Too Large";
	case 415:
		return "Unsupported Media Type";
	case 416:
		return "Range Not Satisfiable";
	case 421:
		return "Misdirected Request";
	case 429:
		return "Too Many Requests";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return "Unknown";
	}
}

char *
rt_http_tcp_url(const char *url)
{
	size_t n;
	char  *t;

	if (url == NULL || strncmp(url, "http://", 7) != 0) {
		return NULL;
	}
	url += 7;
	n = strcspn(url, "/");
	if (n == 0 || strspn(url + n, "/") != strlen(url + n) || (t = malloc(n + 7)) == NULL) {
		return NULL;
	}
	snprintf(t, n + 7, "tcp://%.*s", (int)n, url);
	return t;
}
