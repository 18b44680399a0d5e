/*
 * rt_listen.c - listening sockets for tcp:// and ipc:// URLs (rt_listen.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "rt_listen.h"
#include "wb_errors.h"

#define RT_LISTEN_BACKLOG 128

bool
rt_listen_supports(const char *url)
{
	return url != NULL && (strncmp(url, "tcp://", 6) == 0 || strncmp(url, "ipc://", 6) == 0);
}

/* rt_listen_err maps a failed bind or listen to a wb_err. */
static int
rt_listen_err(int e)
{
	return e == EADDRINUSE || e == EADDRNOTAVAIL || e == EACCES ? WB_EINVAL : WB_EUNAVAIL;
}

/* rt_listen_stale tells whether the socket file at un is left by a server that is gone (a connect is refused). */
static bool
rt_listen_stale(const struct sockaddr_un *un)
{
	int  probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool stale = probe >= 0 && connect(probe, (const struct sockaddr *)un, sizeof(*un)) != 0 &&
	             errno == ECONNREFUSED;

	if (probe >= 0) {
		close(probe);
	}
	return stale;
}

/* rt_listen_ipc binds and listens on an ipc path. */
static int
rt_listen_ipc(const char *path, int *fd)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	int                s, e = 0;

	if (path[0] == '\0' || strlen(path) >= sizeof(un.sun_path)) {
		return WB_EINVAL;
	}
	memcpy(un.sun_path, path, strlen(path) + 1);
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0) {
		return WB_EUNAVAIL;
	}
	if (bind(s, (struct sockaddr *)&un, sizeof(un)) != 0) {
		e = errno;
		if (e == EADDRINUSE && rt_listen_stale(&un)) {
			unlink(path);
			e = bind(s, (struct sockaddr *)&un, sizeof(un)) == 0 ? 0 : errno;
		}
	}
	if (e == 0 && listen(s, RT_LISTEN_BACKLOG) != 0) {
		e = errno;
	}
	if (e != 0) {
		close(s);
		return rt_listen_err(e);
	}
	*fd = s;
	return WB_OK;
}

/* rt_listen_tcp binds and listens on host:port (host empty or * for every address). */
static int
rt_listen_tcp(const char *hp, int *fd)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *res, *a;
	const char     *colon = strrchr(hp, ':');
	char            host[256], port[16];
	int             s = -1, one = 1, e = EADDRNOTAVAIL;

	if (colon == NULL || colon[1] == '\0' || (size_t)(colon - hp) >= sizeof(host) ||
	    strlen(colon + 1) >= sizeof(port)) {
		return WB_EINVAL;
	}
	if (hp[0] == '[' && colon > hp + 1 && colon[-1] == ']') {
		snprintf(host, sizeof(host), "%.*s", (int)(colon - hp - 2), hp + 1);
	} else {
		snprintf(host, sizeof(host), "%.*s", (int)(colon - hp), hp);
	}
	snprintf(port, sizeof(port), "%s", colon + 1);
	if (getaddrinfo(
	        host[0] == '\0' || strcmp(host, "*") == 0 ? NULL : host, port, &hints, &res) != 0) {
		return WB_EINVAL;
	}
	for (a = res; a != NULL; a = a->ai_next) {
		s = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (s < 0) {
			e = errno;
			continue;
		}
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(s, a->ai_addr, a->ai_addrlen) == 0 && listen(s, RT_LISTEN_BACKLOG) == 0) {
			break;
		}
		e = errno;
		close(s);
		s = -1;
	}
	freeaddrinfo(res);
	if (s < 0) {
		return rt_listen_err(e);
	}
	*fd = s;
	return WB_OK;
}

int
rt_listen_open(const char *url, int *fd)
{
	if (!rt_listen_supports(url)) {
		return WB_EINVAL;
	}
	return strncmp(url, "ipc://", 6) == 0 ? rt_listen_ipc(url + 6, fd)
	                                      : rt_listen_tcp(url + 6, fd);
}

void
rt_listen_close(const char *url, int fd)
{
	if (fd < 0) {
		return; /* never opened: an ipc path there is someone else's */
	}
	close(fd);
	if (url != NULL && strncmp(url, "ipc://", 6) == 0) {
		unlink(url + 6);
	}
}
