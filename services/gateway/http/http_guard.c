/*
 * http_guard.c - a header deadline and a connection cap for nng's HTTP
 * server, which has neither (nng 1.5.2 reads request heads with no
 * deadline and accepts until the process runs out of files, so slow
 * clients sending a byte now and then could hold every descriptor).
 *
 * nng does not show the server's connections before a request head is
 * complete, so the guard finds them itself: a thread looks over the
 * process's descriptors every HTTP_GUARD_TICK_MS and tracks each TCP
 * connection to the HTTP port:
 *
 *   fd ──> { peer address, first seen, last active }
 *
 * A connection is active while one of its requests is in flight (a job
 * with its peer address, http.c) and when one just ended.  One idle for
 * header_timeout_ms (no complete request head since it opened or since
 * its last response: a slow head, or an idle keep-alive) is shut down;
 * shutdown(2), not close(2), so nng still owns and closes the descriptor.
 * When connections pass the cap (max_conns, or the open-files limit less
 * a reserve), idle ones are shut down after HTTP_GUARD_BUSY_MS instead, and
 * the guard looks every HTTP_GUARD_FAST_MS: a client that sends a whole
 * request head at once is not slowed, one that dribbles it is dropped.
 * At start the soft open-files limit is raised to the hard one.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include "http_int.h"
#include "rt_log.h"
#include "wb_clock.h"

#define HTTP_GUARD_TICK_MS 250
#define HTTP_GUARD_FAST_MS 50    /* tick once over the cap */
#define HTTP_GUARD_BUSY_MS 250   /* idle deadline once over the cap */
#define HTTP_GUARD_RESERVE 128   /* descriptors kept for everything else */
#define HTTP_GUARD_FDS     65536 /* descriptors tracked */

typedef struct http_guard_conn {
	struct sockaddr_storage peer;
	uint64_t                first_ms, active_ms;
	bool                    used;
} http_guard_conn;

static bool
http_guard_same(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family) {
		return false;
	}
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
		return x->sin6_port == y->sin6_port &&
		       memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) == 0;
	}
	return false;
}

/* http_guard_port tells the local port of a TCP socket fd that is not listening (-1 otherwise). */
static int
http_guard_port(int fd, struct sockaddr_storage *peer)
{
	struct sockaddr_storage me;
	socklen_t               n = sizeof(me);
	int                     acc = 0;
	socklen_t               an = sizeof(acc);

	if (getsockname(fd, (struct sockaddr *)&me, &n) != 0 ||
	    (me.ss_family != AF_INET && me.ss_family != AF_INET6) ||
	    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &acc, &an) != 0 || acc) {
		return -1;
	}
	n = sizeof(*peer);
	if (getpeername(fd, (struct sockaddr *)peer, &n) != 0) {
		return -1;
	}
	return me.ss_family == AF_INET ? ntohs(((struct sockaddr_in *)&me)->sin_port)
	                               : ntohs(((struct sockaddr_in6 *)&me)->sin6_port);
}

/* http_guard_active tells whether peer has a request in flight or finished one since since_ms (the jobs, under mu). */
static bool
http_guard_active(http_server *h, const struct sockaddr_storage *peer, uint64_t *last)
{
	bool busy = false;

	pthread_mutex_lock(&h->mu);
	for (http_job *j = h->jobs; j != NULL; j = j->all) {
		if (!http_guard_same(&j->peer, peer)) {
			continue;
		}
		busy |= j->uaio != NULL;
		if (j->done_ms > *last) {
			*last = j->done_ms;
		}
	}
	pthread_mutex_unlock(&h->mu);
	return busy;
}

bool
http_guard_idle(uint64_t now_ms, uint64_t active_ms, uint64_t deadline_ms)
{
	return active_ms <= now_ms && now_ms - active_ms >= deadline_ms;
}

/* http_guard_scan looks at every descriptor once; returns the HTTP connections seen. */
static int
http_guard_scan(http_server *h, DIR *d, http_guard_conn *t, uint64_t deadline_ms)
{
	struct dirent *e;
	uint64_t       now = wb_mono_us() / 1000;
	int            seen = 0, port = h->port;

	rewinddir(d); /* kept open: when every descriptor is taken, opendir would fail */
	while ((e = readdir(d)) != NULL) {
		struct sockaddr_storage peer;
		int                     fd = atoi(e->d_name);
		http_guard_conn        *c;
		uint64_t                last;
		int                     pending = 0;

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd < 0 || fd >= HTTP_GUARD_FDS ||
		    fd == dirfd(d) || http_guard_port(fd, &peer) != port) {
			continue;
		}
		seen++;
		c = &t[fd];
		if (!c->used || !http_guard_same(&c->peer, &peer)) {
			c->used = true;
			c->peer = peer;
			c->first_ms = c->active_ms = now; /* a new connection on this fd */
		}
		last = c->active_ms;
		if (http_guard_active(h, &peer, &last)) {
			c->active_ms = now;
			continue;
		}
		c->active_ms = last;
		if (ioctl(fd, FIONREAD, &pending) == 0 && pending > 0) {
			continue; /* bytes nng has not read yet: the server is behind, not the client */
		}
		/* a request may have finished after now was read: then it is not idle */
		if (http_guard_idle(now, c->active_ms, deadline_ms)) {
			RT_DEBUGF("http: closing a connection idle for %llu ms (no request head)",
			    (unsigned long long)wb_elapsed(now, c->active_ms));
			shutdown(fd, SHUT_RDWR); /* nng sees the end and closes it */
			c->used = false;
		}
	}
	return seen;
}

static void *
http_guard_run(void *arg)
{
	http_server     *h = arg;
	http_guard_conn *t = calloc(HTTP_GUARD_FDS, sizeof(*t));
	DIR             *d = opendir("/proc/self/fd");
	int              seen = 0;

	if (t == NULL || d == NULL) {
		RT_ERRORF(
		    "http: no connection guard (%s)", t == NULL ? "no memory" : "no /proc/self/fd");
		free(t);
		if (d != NULL) {
			closedir(d);
		}
		return NULL;
	}
	pthread_mutex_lock(&h->guard_mu);
	while (!h->guard_stop) {
		struct rlimit   rl;
		struct timespec ts;
		size_t          cap = h->opts.max_conns;
		uint64_t        deadline;
		long            tick;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > HTTP_GUARD_RESERVE * 2 &&
		    (cap == 0 || cap > rl.rlim_cur - HTTP_GUARD_RESERVE)) {
			cap = rl.rlim_cur - HTTP_GUARD_RESERVE;
		}
		deadline =
		    (size_t)seen >= cap ? HTTP_GUARD_BUSY_MS : (uint64_t)h->opts.header_timeout_ms;
		tick = (size_t)seen >= cap ? HTTP_GUARD_FAST_MS : HTTP_GUARD_TICK_MS;
		pthread_mutex_unlock(&h->guard_mu);
		seen = http_guard_scan(h, d, t, deadline);
		pthread_mutex_lock(&h->guard_mu);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += tick * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		if (!h->guard_stop) {
			pthread_cond_timedwait(&h->guard_cv, &h->guard_mu, &ts);
		}
	}
	pthread_mutex_unlock(&h->guard_mu);
	closedir(d);
	free(t);
	return NULL;
}

int
http_guard_start(http_server *h)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rlim_t want = rl.rlim_max > HTTP_GUARD_FDS ? HTTP_GUARD_FDS : rl.rlim_max;
		if (want > rl.rlim_cur) {
			rl.rlim_cur = want;
			if (setrlimit(RLIMIT_NOFILE, &rl) != 0) {
				RT_WARNF("http: cannot raise the open-files limit to %llu",
				    (unsigned long long)want);
			}
		}
	}
	pthread_mutex_init(&h->guard_mu, NULL);
	pthread_cond_init(&h->guard_cv, NULL);
	h->guard_stop = false;
	if (pthread_create(&h->guard, NULL, http_guard_run, h) != 0) {
		pthread_cond_destroy(&h->guard_cv);
		pthread_mutex_destroy(&h->guard_mu);
		return WB_ENOMEM;
	}
	h->guarded = true;
	return WB_OK;
}

void
http_guard_stop(http_server *h)
{
	if (!h->guarded) {
		return;
	}
	pthread_mutex_lock(&h->guard_mu);
	h->guard_stop = true;
	pthread_cond_signal(&h->guard_cv);
	pthread_mutex_unlock(&h->guard_mu);
	pthread_join(h->guard, NULL);
	pthread_cond_destroy(&h->guard_cv);
	pthread_mutex_destroy(&h->guard_mu);
	h->guarded = false;
}
