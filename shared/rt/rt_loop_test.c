/*
 * rt_loop_test.c - the serving core with a line protocol (each line is
 * echoed): requests split across reads and pipelined in one, the idle
 * deadline for a silent and for a dribbling client, a longer wait set by
 * the protocol, a slow request never cut, a final reply that survives
 * the client still sending, a spare thread serving while the only
 * worker waits on a slow call, and workers that look again before they
 * sleep.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rt_loop.h"
#include "wb_errors.h"
#include "wbt.h"

#define IDLE_MS 300

static atomic_bool in_slow;  /* a "slow" line is being served */
static atomic_bool released; /* ... and may end */

/* slow_call stands for a slow call (a password hashed): it steps aside until released, 5 s at most. */
static void
slow_call(void)
{
	rt_loop_slow_begin();
	atomic_store(&in_slow, true);
	for (int i = 0; i < 1000 && !atomic_load(&released); i++) {
		wbt_sleep_ms(5);
	}
	atomic_store(&in_slow, false);
	rt_loop_slow_end();
}

/* echo serves lines: "sleep" takes 2 idle periods, "slow" is a slow call, "wait" asks for 3 for the next line, "bye" is the last. */
static ssize_t
echo(void *arg, void *scratch, rt_loop_conn *c, const uint8_t *in, size_t n, size_t *want)
{
	uintptr_t  *bye = rt_loop_conn_state(c);
	size_t      at = 0;
	const char *nl;

	(void)arg;
	(void)scratch;
	(void)want;
	if (*bye) {
		return (ssize_t)n;
	}
	while ((nl = memchr(in + at, '\n', n - at)) != NULL) {
		const char *line = (const char *)in + at;
		size_t      len = (size_t)(nl - line) + 1;

		if (len == 6 && memcmp(line, "sleep\n", 6) == 0) {
			wbt_sleep_ms(2 * IDLE_MS);
		}
		if (len == 5 && memcmp(line, "slow\n", 5) == 0) {
			slow_call();
		}
		if (!rt_loop_send(c, line, len)) {
			return -1;
		}
		at += len;
		if (len == 5 && memcmp(line, "wait\n", 5) == 0) {
			rt_loop_conn_wait(c, 3 * IDLE_MS);
		}
		if (len == 4 && memcmp(line, "bye\n", 4) == 0) {
			rt_loop_conn_finish(c);
			*bye = 1;
			return (ssize_t)n;
		}
	}
	return (ssize_t)at;
}

static const rt_loop_ops ops = { .serve = echo };
static rt_loop          *loop;
static int               port;

/* open_loop starts the echo loop with workers and spares threads. */
static void
open_loop(int workers, int spares)
{
	char         url[64];
	rt_loop_opts o = {
		.name = "echo", .workers = workers, .spares = spares, .idle_ms = IDLE_MS
	};

	snprintf(url, sizeof(url), "tcp://127.0.0.1:%d", wbt_free_port());
	o.url = url;
	cr_assert_eq(rt_loop_open(&loop, &o, &ops, NULL), WB_OK);
	port = rt_loop_port(loop);
	cr_assert_gt(port, 0);
}

static void
start(void)
{
	open_loop(2, 0);
}

static void
stop(void)
{
	rt_loop_close(loop);
	wbt_cleanup();
}

TestSuite(rt_loop, .init = start, .fini = stop, .timeout = 60);

static int
dial(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int                fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_geq(fd, 0);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

static void
put(int fd, const char *s)
{
	cr_assert_eq(send(fd, s, strlen(s), MSG_NOSIGNAL), (ssize_t)strlen(s));
}

/* get reads until want bytes or the end (within timeout_ms); the bytes read, -1 at a reset. */
static ssize_t
get(int fd, char *buf, size_t want, int timeout_ms)
{
	size_t    n = 0;
	long long end = wbt_now_ms() + timeout_ms;

	while (n < want) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t       k;
		long long     left = end - wbt_now_ms();

		if (left <= 0 || poll(&p, 1, (int)left) != 1) {
			break;
		}
		if ((k = recv(fd, buf + n, want - n, 0)) < 0) {
			return -1;
		}
		if (k == 0) {
			break;
		}
		n += (size_t)k;
	}
	buf[n] = '\0';
	return (ssize_t)n;
}

/* closed_within tells whether the server ends fd within ms (what it sends first is dropped). */
static bool
closed_within(int fd, int ms)
{
	char buf[64];

	return get(fd, buf, sizeof(buf) - 1, ms) < (ssize_t)sizeof(buf) - 1;
}

Test(rt_loop, split_and_pipelined)
{
	char buf[64];
	int  fd = dial();

	put(fd, "he");
	wbt_sleep_ms(50);
	put(fd, "llo\none\ntwo\n");
	cr_assert_eq(get(fd, buf, 14, 5000), 14);
	cr_assert_str_eq(buf, "hello\none\ntwo\n");
	close(fd);
}

Test(rt_loop, idle_deadline)
{
	long long t0 = wbt_now_ms();
	int       silent = dial(), slow = dial();
	char      buf[8];

	/* the slow one sends a byte of its line every 50 ms: the deadline still holds */
	for (int i = 0; i < 2 * IDLE_MS / 50 && send(slow, "x", 1, MSG_NOSIGNAL) == 1; i++) {
		wbt_sleep_ms(50);
	}
	cr_assert(closed_within(silent, 3 * IDLE_MS), "a silent client outlived its deadline");
	cr_assert(closed_within(slow, 3 * IDLE_MS), "a dribbling client outlived its deadline");
	cr_assert_geq(wbt_now_ms() - t0, IDLE_MS - 50);
	close(silent);
	close(slow);

	/* an answered request starts the wait again; the protocol may give more */
	int fd = dial();
	put(fd, "wait\n");
	cr_assert_eq(get(fd, buf, 5, 5000), 5);
	wbt_sleep_ms(2 * IDLE_MS);
	put(fd, "ok\n");
	cr_assert_eq(get(fd, buf, 3, 5000), 3, "the longer wait was not kept");
	close(fd);
}

Test(rt_loop, slow_request_not_cut)
{
	char buf[16];
	int  fd = dial();

	put(fd, "sleep\n");
	cr_assert_eq(get(fd, buf, 6, 5000), 6, "a request in service was cut off");
	close(fd);
}

Test(rt_loop, finish_keeps_the_last_reply)
{
	static char junk[256 * 1024];
	char        buf[16];
	int         fd = dial();

	/* the client goes on sending after the last request: the reply still arrives, then the end */
	memset(junk, 'j', sizeof(junk));
	put(fd, "bye\n");
	for (size_t sent = 0; sent < sizeof(junk);) {
		ssize_t k = send(fd, junk + sent, sizeof(junk) - sent, MSG_NOSIGNAL);
		cr_assert_gt(k, 0);
		sent += (size_t)k;
	}
	cr_assert_eq(get(fd, buf, 4, 5000), 4);
	cr_assert_str_eq(buf, "bye\n");
	cr_assert_eq(get(fd, buf, 1, 5000), 0, "no end after the last reply");
	close(fd);
}

/* await_slow waits (5 s at most) until a slow call is in service; false if none began. */
static bool
await_slow(void)
{
	for (int i = 0; i < 1000 && !atomic_load(&in_slow); i++) {
		wbt_sleep_ms(5);
	}
	return atomic_load(&in_slow);
}

Test(rt_loop, spare_serves_beside_a_slow_call)
{
	char buf[16];

	/* without a spare the one worker's slow call holds up the other client; with one it does not */
	for (int spares = 0; spares <= 1; spares++) {
		rt_loop_close(loop);
		open_loop(1, spares);
		for (int round = 0; round < 2; round++) {
			int a = dial(), b = dial();

			atomic_store(&released, false);
			put(a, "slow\n");
			cr_assert(await_slow(), "the slow call never began");
			put(b, "ping\n");
			if (spares > 0) {
				cr_assert_eq(get(b, buf, 5, 5000), 5,
				    "round %d: no spare served while the worker was in a slow call",
				    round);
			} else {
				cr_assert_eq(get(b, buf, 5, 300), 0,
				    "one worker in a slow call served another request");
			}
			atomic_store(&released, true);
			cr_assert_eq(get(a, buf, 5, 5000), 5);
			if (spares == 0) {
				cr_assert_eq(get(b, buf, 5, 5000), 5);
			}
			put(b, "again\n");
			cr_assert_eq(get(b, buf, 6, 5000), 6);
			close(a);
			close(b);
		}
	}
}

Test(rt_loop, yielding_workers)
{
	char buf[16];
	int  fd[4];

	/* workers looking again before they sleep answer every request and keep the deadline */
	rt_loop_yields_set(3, 2);
	for (int i = 0; i < 4; i++) {
		fd[i] = dial();
	}
	for (int round = 0; round < 200; round++) {
		for (int i = 0; i < 4; i++) {
			put(fd[i], "ping\n");
		}
		for (int i = 0; i < 4; i++) {
			cr_assert_eq(get(fd[i], buf, 5, 5000), 5, "round %d: client %d unanswered",
			    round, i);
		}
	}
	for (int i = 0; i < 4; i++) {
		cr_assert(
		    closed_within(fd[i], 3 * IDLE_MS), "an idle client outlived its deadline");
		close(fd[i]);
	}
	rt_loop_yields_set(0, 1);
}
