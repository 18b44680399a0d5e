/*
 * rt_dial.c - parse a client URL and connect to it within a deadline
 * (rt_dial.h).
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "rt_dial.h"
#include "rt_dns.h"
#include "wb_clock.h"
#include "wb_errors.h"

struct rt_dial {
	bool               ipc;
	char               host[256], port[16]; /* tcp */
	rt_dns            *dns;                 /* tcp: host's addresses */
	struct sockaddr_un un;                  /* ipc */
};

bool
rt_dial_supports(const char *url)
{
	return url != NULL && (strncmp(url, "tcp://", 6) == 0 || strncmp(url, "ipc://", 6) == 0);
}

/* rt_dial_parse fills d's address from url; WB_EINVAL if it is not one rt_dial takes. */
static int
rt_dial_parse(rt_dial *d, const char *url)
{
	const char *hp, *colon;

	if (!rt_dial_supports(url)) {
		return WB_EINVAL;
	}
	if (strncmp(url, "ipc://", 6) == 0) {
		d->ipc = true;
		d->un.sun_family = AF_UNIX;
		if (strlen(url + 6) == 0 || strlen(url + 6) >= sizeof(d->un.sun_path)) {
			return WB_EINVAL;
		}
		memcpy(d->un.sun_path, url + 6, strlen(url + 6) + 1);
		return WB_OK;
	}
	hp = url + 6;
	if ((colon = strrchr(hp, ':')) == NULL || colon[1] == '\0' ||
	    (size_t)(colon - hp) >= sizeof(d->host) || strlen(colon + 1) >= sizeof(d->port)) {
		return WB_EINVAL;
	}
	/* [v6 address]:port, host:port; an empty host is the loopback */
	if (hp[0] == '[' && colon > hp && colon[-1] == ']') {
		snprintf(d->host, sizeof(d->host), "%.*s", (int)(colon - hp - 2), hp + 1);
	} else {
		snprintf(d->host, sizeof(d->host), "%.*s", (int)(colon - hp), hp);
	}
	snprintf(d->port, sizeof(d->port), "%s", colon + 1);
	return WB_OK;
}

int
rt_dial_open(rt_dial **out, const char *url)
{
	rt_dial *d;
	int      rc;

	*out = NULL;
	if ((d = calloc(1, sizeof(*d))) == NULL) {
		return WB_ENOMEM;
	}
	if ((rc = rt_dial_parse(d, url)) != WB_OK ||
	    (!d->ipc && (rc = rt_dns_open(&d->dns, d->host, d->port)) != WB_OK)) {
		free(d);
		return rc;
	}
	*out = d;
	return WB_OK;
}

bool
rt_dial_ipc(const rt_dial *d)
{
	return d->ipc;
}

void
rt_dial_close(rt_dial *d)
{
	if (d != NULL) {
		rt_dns_close(d->dns);
		free(d);
	}
}

/* rt_dial_left returns the ms left until deadline_us (0 once it has passed). */
static int
rt_dial_left(uint64_t deadline_us)
{
	uint64_t now = wb_mono_us();

	return now < deadline_us ? (int)((deadline_us - now + 999) / 1000) : 0;
}

/* rt_dial_fd makes a connected socket to addr within the deadline; -1 with errno set. */
static int
rt_dial_fd(const struct sockaddr *addr, socklen_t len, uint64_t deadline_us)
{
	struct pollfd pfd;
	int           fd, err = 0, rv;
	socklen_t     elen = sizeof(err);

	if ((fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0) {
		return -1;
	}
	if (connect(fd, addr, len) != 0) {
		if (errno != EINPROGRESS) {
			goto fail; /* EAGAIN: an ipc listener's backlog is full, nothing in progress */
		}
		pfd = (struct pollfd) { .fd = fd, .events = POLLOUT };
		while ((rv = poll(&pfd, 1, rt_dial_left(deadline_us))) < 0 && errno == EINTR) {
		}
		if (rv == 0) {
			errno = ETIMEDOUT;
			goto fail;
		}
		if (rv < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) != 0) {
			goto fail;
		}
		if (err != 0) {
			errno = err;
			goto fail;
		}
	}
	return fd;
fail:
	err = errno;
	close(fd);
	errno = err;
	return -1;
}

int
rt_dial_connect(rt_dial *d, uint64_t deadline_us)
{
	struct sockaddr_storage addrs[RT_DNS_ADDRS];
	socklen_t               lens[RT_DNS_ADDRS];
	int                     fd = -1, one = 1, n;

	if (d->ipc) {
		return rt_dial_fd((const struct sockaddr *)&d->un, sizeof(d->un), deadline_us);
	}
	if ((n = rt_dns_get(d->dns, addrs, lens, deadline_us)) == 0) {
		return -1;
	}
	for (int i = 0; i < n && fd < 0; i++) {
		fd = rt_dial_fd((const struct sockaddr *)&addrs[i], lens[i], deadline_us);
	}
	if (fd < 0) {
		int err = errno;
		rt_dns_refresh(d->dns);
		errno = err;
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}
