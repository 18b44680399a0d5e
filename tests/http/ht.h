/*
 * ht.h - a small HTTP/1.1 client over a plain socket for the gateway's
 * tests, and a cluster whose gateway serves HTTP on a free 127.0.0.1 port.
 * Header-only (static functions): included by http_test.c and
 * browser_test.c.
 *
 *   ht_res r;
 *   ht_request(port, "POST", "/api/v1/users", NULL, "{...}", &r);
 *   ... r.status, ht_header(&r, "Allow"), r.body (NUL-terminated) ...
 *   ht_res_free(&r);
 *
 * Every read and write has a deadline (HT_DEADLINE_MS); a raw variant
 * sends arbitrary bytes, to test malformed and oversized requests.
 */
#ifndef HT_H
#define HT_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "wbt.h"
#include "wbt_cluster.h"

#define HT_DEADLINE_MS  30000
#define HT_MAX_RESPONSE (8 << 20)
#define HT_FN           __attribute__((unused)) static

typedef struct ht_res {
	int    status; /* 0 if the connection closed without a response */
	char  *head;   /* status line and headers, NUL-terminated */
	char  *body;   /* NUL-terminated */
	size_t len;    /* body bytes */
} ht_res;

HT_FN void
ht_res_free(ht_res *r)
{
	free(r->head);
	free(r->body);
	memset(r, 0, sizeof(*r));
}

/* ht_connect opens a TCP connection to 127.0.0.1:port; -1 on failure. */
HT_FN int
ht_connect(int port)
{
	struct sockaddr_in sa;
	int                fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0) {
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* ht_send writes all of buf within the deadline; 0 or -1. */
HT_FN int
ht_send(int fd, const char *buf, size_t len)
{
	long long end = wbt_now_ms() + HT_DEADLINE_MS;

	while (len > 0) {
		struct pollfd p = { fd, POLLOUT, 0 };
		ssize_t       n;

		if (poll(&p, 1, (int)(end - wbt_now_ms())) <= 0) {
			return -1;
		}
		if ((n = send(fd, buf, len, MSG_NOSIGNAL)) < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				continue;
			}
			return -1;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ht_read_response reads one response (Content-Length framed, else until EOF) within timeout_ms. */
HT_FN int
ht_read_response(int fd, ht_res *r, int timeout_ms)
{
	size_t    cap = 4096, len = 0, want = (size_t)-1, hlen = 0;
	char     *buf = malloc(cap), *sep;
	long long end = wbt_now_ms() + timeout_ms;

	memset(r, 0, sizeof(*r));
	if (buf == NULL) {
		return -1;
	}
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t       n;
		long long     left = end - wbt_now_ms();

		if (hlen > 0 && len - hlen >= want) {
			break;
		}
		if (left <= 0 || poll(&p, 1, (int)left) <= 0) {
			free(buf);
			return -1; /* timed out */
		}
		if (len + 4096 + 1 > cap) {
			char *nb;
			if (cap >= HT_MAX_RESPONSE || (nb = realloc(buf, cap * 2)) == NULL) {
				free(buf);
				return -1;
			}
			buf = nb;
			cap *= 2;
		}
		if ((n = recv(fd, buf + len, cap - len - 1, 0)) < 0) {
			if (errno == EINTR) {
				continue;
			}
			if (errno == ECONNRESET) {
				break;
			}
			free(buf);
			return -1;
		}
		if (n == 0) {
			break; /* EOF */
		}
		len += (size_t)n;
		buf[len] = '\0';
		if (hlen == 0 && (sep = strstr(buf, "\r\n\r\n")) != NULL) {
			const char *cl;
			hlen = (size_t)(sep - buf) + 4;
			for (cl = buf;
			     (cl = strcasestr(cl, "\r\nContent-Length:")) != NULL && cl < sep;
			     cl++) {
				want = strtoull(cl + 17, NULL, 10);
				break;
			}
		}
	}
	if (hlen == 0) {
		free(buf);
		return 0; /* closed without a (complete) response: status 0 */
	}
	if (want != (size_t)-1 && len - hlen > want) {
		len = hlen + want;
	}
	r->head = strndup(buf, hlen - 2);
	r->len = len - hlen;
	r->body = malloc(r->len + 1);
	if (r->head == NULL || r->body == NULL) {
		free(buf);
		return -1;
	}
	memcpy(r->body, buf + hlen, r->len);
	r->body[r->len] = '\0';
	sscanf(r->head, "HTTP/1.%*d %d", &r->status);
	free(buf);
	return 0;
}

/* ht_raw sends raw bytes on a new connection and reads one response; -1 on transport failure (status 0: closed). */
HT_FN int
ht_raw(int port, const char *bytes, size_t len, ht_res *r, int timeout_ms)
{
	int fd = ht_connect(port), rc;

	memset(r, 0, sizeof(*r));
	if (fd < 0) {
		return -1;
	}
	if (ht_send(fd, bytes, len) != 0) {
		/* The server may answer and close before reading everything. */
	}
	rc = ht_read_response(fd, r, timeout_ms);
	close(fd);
	return rc;
}

/* ht_request sends one request (token: Bearer token or NULL; body: JSON or NULL); -1 on transport failure. */
HT_FN int
ht_request(
    int port, const char *method, const char *path, const char *token, const char *body, ht_res *r)
{
	char   head[2048];
	size_t blen = body != NULL ? strlen(body) : 0;
	int    n, rc;
	char  *all;

	n = snprintf(head, sizeof(head),
	    "%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n%s%s%s"
	    "%s"
	    "Content-Length: %zu\r\n\r\n",
	    method, path, port, token ? "Authorization: Bearer " : "", token ? token : "",
	    token ? "\r\n" : "", body ? "Content-Type: application/json\r\n" : "", blen);
	if (n < 0 || (size_t)n >= sizeof(head) || (all = malloc((size_t)n + blen)) == NULL) {
		return -1;
	}
	memcpy(all, head, (size_t)n);
	if (blen > 0) {
		memcpy(all + n, body, blen);
	}
	rc = ht_raw(port, all, (size_t)n + blen, r, HT_DEADLINE_MS);
	free(all);
	return rc;
}

/* ht_header finds a response header's value (copied into buf); NULL if absent. */
HT_FN const char *
ht_header(const ht_res *r, const char *name, char *buf, size_t n)
{
	char        key[128];
	const char *p;

	snprintf(key, sizeof(key), "\r\n%s:", name);
	if (r->head == NULL || (p = strcasestr(r->head, key)) == NULL) {
		return NULL;
	}
	p += strlen(key);
	while (*p == ' ') {
		p++;
	}
	snprintf(buf, n, "%.*s", (int)strcspn(p, "\r\n"), p);
	return buf;
}

/* ht_root writes the repository root into buf: the current folder if it holds rel, else three levels above the test binary (<root>/build/test/x); 0 or -1. */
HT_FN int
ht_root(char *buf, size_t n, const char *rel)
{
	char    exe[900], probe[1200];
	ssize_t k;

	if (access(rel, R_OK) == 0 && getcwd(buf, n) != NULL) {
		return 0;
	}
	if ((k = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0) {
		return -1;
	}
	exe[k] = '\0';
	for (int up = 0; up < 3; up++) {
		char *slash = strrchr(exe, '/');
		if (slash == NULL) {
			return -1;
		}
		*slash = '\0';
	}
	snprintf(probe, sizeof(probe), "%s/%s", exe, rel);
	if (access(probe, R_OK) != 0) {
		return -1;
	}
	snprintf(buf, n, "%s", exe);
	return 0;
}

/* ht_wait_http waits until c's gateway answers /healthz over HTTP on port: 0, or -1 (log tail printed). */
HT_FN int
ht_wait_http(wbt_cluster *c, int port)
{
	for (long long end = wbt_now_ms() + 20000; wbt_now_ms() < end; wbt_sleep_ms(50)) {
		ht_res r;
		if (ht_request(port, "GET", "/healthz", NULL, NULL, &r) == 0 && r.status == 200) {
			ht_res_free(&r);
			return 0;
		}
		ht_res_free(&r);
		if (!wbt_alive(c->gateway)) {
			break;
		}
	}
	fprintf(stderr, "ht: the gateway's HTTP did not answer on port %d\n", port);
	wbt_log_tail(c->gateway, 20);
	return -1;
}

/* ht_cluster_start_as starts a cluster of the given shape (extra env may be NULL) whose gateway serves HTTP on a free port; returns the port once /healthz answers, or -1. */
HT_FN int
ht_cluster_start_as(wbt_cluster *c, const char *const *extra, wbt_shape shape)
{
	static char url[64];
	const char *env[24];
	int         k = 0, port = wbt_free_port();

	if (port < 0) {
		return -1;
	}
	snprintf(url, sizeof(url), "WARBLE_HTTP_URL=http://127.0.0.1:%d", port);
	env[k++] = url;
	for (int i = 0; extra != NULL && extra[i] != NULL && k < 23; i++) {
		env[k++] = extra[i];
	}
	env[k] = NULL;
	if (wbt_cluster_start_as(c, env, shape) != 0) {
		return -1;
	}
	return ht_wait_http(c, port) == 0 ? port : -1;
}

/* ht_cluster_start is ht_cluster_start_as in the shape the test run names (WBT_ANY). */
HT_FN int
ht_cluster_start(wbt_cluster *c, const char *const *extra)
{
	return ht_cluster_start_as(c, extra, WBT_ANY);
}

#endif
