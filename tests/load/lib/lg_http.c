/*
 * lg_http.c - Warble's HTTP/JSON API as a warble-load backend: GET
 * /api/v1/home on keep-alive connections, each response read to its
 * Content-Length and parsed, as a browser or an app would.
 */
#include <jansson.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lg_warble.h"

#define LG_HTTP_BUF (1u << 20) /* a home page of 20 posts is a few KiB */

struct lg_conn {
	lg_warble *w;
	int        fd;
	char      *buf;
	size_t     len; /* bytes in buf, possibly the start of the next response */
};

static lg_conn *
lg_http_open(void *ctx)
{
	lg_conn        *c = calloc(1, sizeof(*c));
	lg_warble      *w = ctx;
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *ai = NULL;
	char            port[16];
	int             one = 1;

	if (c == NULL || (c->buf = malloc(LG_HTTP_BUF)) == NULL) {
		free(c);
		return NULL;
	}
	c->w = w;
	c->fd = -1;
	snprintf(port, sizeof(port), "%d", w->http_port);
	if (getaddrinfo(w->http_host, port, &hints, &ai) != 0 ||
	    (c->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(c->fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		if (c->fd >= 0) {
			close(c->fd);
		}
		if (ai != NULL) {
			freeaddrinfo(ai);
		}
		free(c->buf);
		free(c);
		return NULL;
	}
	freeaddrinfo(ai);
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return c;
}

static void
lg_http_close(lg_conn *c)
{
	if (c != NULL) {
		close(c->fd);
		free(c->buf);
		free(c);
	}
}

/* lg_http_fill reads more of the response into c->buf; -1 if the connection ended or the buffer is full. */
static int
lg_http_fill(lg_conn *c)
{
	ssize_t n;

	if (c->len == LG_HTTP_BUF) {
		return -1;
	}
	n = recv(c->fd, c->buf + c->len, LG_HTTP_BUF - c->len, 0);
	if (n <= 0) {
		return -1;
	}
	c->len += (size_t)n;
	return 0;
}

/* lg_http_content_length finds Content-Length in a response head (-1 if absent). */
static long
lg_http_content_length(const char *head, size_t hlen)
{
	static const char key[] = "\r\ncontent-length:";

	for (size_t i = 0; i + sizeof(key) - 1 < hlen; i++) {
		if (strncasecmp(head + i, key, sizeof(key) - 1) == 0) {
			return strtol(head + i + sizeof(key) - 1, NULL, 10);
		}
	}
	return -1;
}

static int
lg_http_home(lg_conn *c, uint32_t u, size_t *n)
{
	char    req[512], *end;
	int     k = snprintf(req, sizeof(req),
	        "GET /api/v1/home?limit=20 HTTP/1.1\r\nHost: %s\r\n"
	            "Authorization: Bearer %s\r\n\r\n",
	        c->w->http_host, c->w->token[u]);
	size_t  head;
	long    clen;
	json_t *root;
	bool    ok;

	*n = 0;
	if (send(c->fd, req, (size_t)k, MSG_NOSIGNAL) != k) {
		return -1;
	}
	while ((end = memmem(c->buf, c->len, "\r\n\r\n", 4)) == NULL) {
		if (lg_http_fill(c) != 0) {
			return -1;
		}
	}
	head = (size_t)(end - c->buf) + 4;
	if ((clen = lg_http_content_length(c->buf, head)) < 0 ||
	    (size_t)clen > LG_HTTP_BUF - head) {
		return -1; /* the gateway sends every reply with a length */
	}
	while (c->len < head + (size_t)clen) {
		if (lg_http_fill(c) != 0) {
			return -1;
		}
	}
	int status = c->len > 12 ? atoi(c->buf + 9) : 0; /* "HTTP/1.1 200" */
	root = json_loadb(c->buf + head, (size_t)clen, 0, NULL);
	ok = status == 200 && root != NULL;
	*n = json_array_size(json_object_get(root, "posts"));
	json_decref(root);
	memmove(c->buf, c->buf + head + clen, c->len - head - (size_t)clen);
	c->len -= head + (size_t)clen;
	return ok ? 0 : -1;
}

void
lg_http_backend(lg_warble *w, lg_backend *b)
{
	memset(b, 0, sizeof(*b));
	b->name = "warble-http";
	b->ctx = w;
	b->conn_open = lg_http_open;
	b->conn_close = lg_http_close;
	b->home = lg_http_home;
}
