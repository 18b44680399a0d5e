/*
 * rt_sp_test.c - the blocking SP client against nng's own REP servers
 * (warble-ping): the handshake and many calls over tcp and ipc, from many
 * threads at once; a server restarted between calls; deadlines with a
 * stopped server, a closed port and a listener that is not an SP server;
 * servers whose threads look for work before they sleep, or not, and
 * callers that look for their reply first, or not (a bad --yield
 * refused);
 * a reply over the size limit, and one that arrives in pieces; URLs it
 * does not speak; waiting for a server that starts late; a shutdown
 * ending calls in flight.
 */
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rt_sp.h"
#include "rt_wire.h"
#include "wbt.h"

/* sp_ping calls ping through c and returns the result (*rep stays NULL on a transport error). */
static int
sp_ping(rt_sp *c)
{
	wb_obj *req = wb_request(WB_OP_PING), *rep = NULL;
	int     rv = rt_sp_call(c, req, &rep);

	if (rv != WB_OK) {
		cr_assert_null(rep, "a transport error leaves *rep NULL");
	}
	wb_msg_free(rep);
	wb_msg_free(req);
	return rv;
}

/* sp_server_yield starts warble-ping on url with --yield yield (NULL: its default) and waits until it answers. */
static wbt_daemon *
sp_server_yield(const char *url, const char *yield)
{
	const char *args[] = { "--url", url, yield != NULL ? "--yield" : NULL, yield, NULL };
	wbt_daemon *d = wbt_spawn("warble-ping", args, NULL);

	cr_assert_not_null(d);
	cr_assert_eq(wbt_wait_ready(d, url, wbt_ms(15000)), 0);
	return d;
}

/* sp_server starts warble-ping on url as a daemon runs by default and waits until it answers. */
static wbt_daemon *
sp_server(const char *url)
{
	return sp_server_yield(url, NULL);
}

typedef struct sp_worker {
	rt_sp *c;
	int    fails;
} sp_worker;

static void *
sp_worker_main(void *arg)
{
	sp_worker *w = arg;

	for (int i = 0; i < 500; i++) {
		w->fails += sp_ping(w->c) != WB_OK;
	}
	return NULL;
}

/* sp_calls makes 2000 calls from 4 threads through one client of url. */
static void
sp_calls(const char *url)
{
	rt_sp     *c;
	rt_sp_opts o = { .timeout_ms = wbt_ms(5000) };
	sp_worker  w[4];
	pthread_t  th[4];

	cr_assert_eq(rt_sp_open(&c, url, &o), WB_OK);
	cr_assert_eq(sp_ping(c), WB_OK);
	for (int i = 0; i < 4; i++) {
		w[i] = (sp_worker) { c, 0 };
		cr_assert_eq(pthread_create(&th[i], NULL, sp_worker_main, &w[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		cr_expect_eq(w[i].fails, 0, "%s: thread %d: %d calls failed", url, i, w[i].fails);
	}
	rt_sp_close(c);
}

Test(rt_sp, calls_over_tcp_and_ipc, .fini = wbt_cleanup, .timeout = 120)
{
	char tcp[64], ipc[128];

	cr_assert_gt(wbt_tcp_url(tcp, sizeof(tcp)), 0);
	cr_assert_eq(wbt_ipc_url(ipc, sizeof(ipc), "sp"), 0);
	sp_server(tcp);            /* its workers look for requests before they sleep */
	sp_server_yield(ipc, "0"); /* they sleep at once */
	for (int yields = 0; yields <= 10; yields += 10) { /* a caller sleeping at once, or not */
		rt_sp_yields_set(yields);
		sp_calls(tcp);
		sp_calls(ipc);
	}
}

Test(rt_sp, a_bad_yield_is_refused, .fini = wbt_cleanup, .timeout = 60)
{
	char        url[64];
	const char *args[] = { "--url", NULL, "--yield", "2", NULL };
	wbt_daemon *d;

	cr_assert_gt(wbt_tcp_url(url, sizeof(url)), 0);
	args[1] = url;
	d = wbt_spawn("warble-ping", args, NULL);
	cr_assert_not_null(d);
	cr_assert_eq(wbt_wait_exit(d, wbt_ms(10000)), 2, "--yield 2 was not refused");
}

Test(rt_sp, server_restarted_between_calls, .fini = wbt_cleanup, .timeout = 120)
{
	char        url[128];
	rt_sp      *c;
	rt_sp_opts  o = { .timeout_ms = wbt_ms(2000) };
	wbt_daemon *d;

	cr_assert_eq(wbt_ipc_url(url, sizeof(url), "sp"), 0);
	d = sp_server(url);
	cr_assert_eq(rt_sp_open(&c, url, &o), WB_OK);
	cr_assert_eq(sp_ping(c), WB_OK);
	cr_assert_eq(wbt_stop(d, SIGKILL, 10000), 128 + SIGKILL);
	/* gone: unavailable at once, not after the deadline */
	long long t0 = wbt_now_ms();
	cr_assert_eq(sp_ping(c), WB_EUNAVAIL);
	cr_assert_lt(wbt_now_ms() - t0, 1000);
	/* back: the idle connection to the old process is not used again */
	d = sp_server(url);
	cr_assert_eq(sp_ping(c), WB_OK, "the first call after a restart");
	cr_assert_eq(wbt_stop(d, SIGTERM, 10000), 0);
	rt_sp_close(c);
}

Test(rt_sp, deadlines, .fini = wbt_cleanup, .timeout = 120)
{
	char        url[64], closed[64];
	rt_sp      *c;
	rt_sp_opts  o = { .timeout_ms = 300 };
	wbt_daemon *d;
	long long   t0, took;

	/* a stopped server: the call times out within its deadline, whether the caller looks first */
	cr_assert_gt(wbt_tcp_url(url, sizeof(url)), 0);
	d = sp_server(url);
	cr_assert_eq(rt_sp_open(&c, url, &o), WB_OK);
	cr_assert_eq(sp_ping(c), WB_OK);
	cr_assert_eq(wbt_pause(d), 0);
	for (int yields = 10; yields >= 0; yields -= 10) {
		rt_sp_yields_set(yields);
		t0 = wbt_now_ms();
		cr_assert_eq(sp_ping(c), WB_ETIMEDOUT);
		took = wbt_now_ms() - t0;
		cr_assert(took >= 250 && took < 1500,
		    "took %lld ms for a 300 ms deadline (%d yields)", took, yields);
	}
	/* a new connection to a stopped server: the kernel accepts it, the handshake times out */
	t0 = wbt_now_ms();
	cr_assert_eq(sp_ping(c), WB_ETIMEDOUT);
	cr_assert_lt(wbt_now_ms() - t0, 1500);
	cr_assert_eq(wbt_resume(d), 0);
	cr_assert_eq(sp_ping(c), WB_OK, "the stopped server answers again");
	rt_sp_close(c);

	/* a closed port: unavailable at once */
	cr_assert_gt(wbt_tcp_url(closed, sizeof(closed)), 0);
	cr_assert_eq(rt_sp_open(&c, closed, &o), WB_OK);
	t0 = wbt_now_ms();
	cr_assert_eq(sp_ping(c), WB_EUNAVAIL);
	cr_assert_lt(wbt_now_ms() - t0, 1000);
	rt_sp_close(c);
}

/* sp_listen opens a TCP listener on a free loopback port, its URL into url; the descriptor. */
static int
sp_listen(char *url, size_t n)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t          len = sizeof(sa);
	int                fd = socket(AF_INET, SOCK_STREAM, 0);

	cr_assert(
	    fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(fd, 4) == 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	snprintf(url, n, "tcp://127.0.0.1:%d", ntohs(sa.sin_port));
	return fd;
}

/* sp_not_sp accepts one connection on fd and answers with an HTTP status line. */
static void *
sp_not_sp(void *arg)
{
	int  fd = *(int *)arg, c;
	char buf[64];

	if ((c = accept(fd, NULL, NULL)) >= 0) {
		(void)!read(c, buf, sizeof(buf));
		(void)!write(c, "HTTP/1.1 400 Bad Request\r\n\r\n", 28);
		close(c);
	}
	return NULL;
}

Test(rt_sp, refuses_what_is_not_an_sp_rep_server, .fini = wbt_cleanup, .timeout = 60)
{
	char       url[64];
	rt_sp     *c;
	rt_sp_opts o = { .timeout_ms = 2000 };
	pthread_t  th;
	int        fd = sp_listen(url, sizeof(url));

	cr_assert_eq(pthread_create(&th, NULL, sp_not_sp, &fd), 0);
	cr_assert_eq(rt_sp_open(&c, url, &o), WB_OK);
	cr_assert_eq(sp_ping(c), WB_EUNAVAIL);
	pthread_join(th, NULL);
	rt_sp_close(c);
	close(fd);

	cr_assert_eq(rt_sp_open(&c, "inproc://x", &o), WB_EINVAL);
	cr_assert_eq(rt_sp_open(&c, "tcp://no-port", &o), WB_EINVAL);
	cr_assert_eq(rt_sp_open(&c, "ipc://", &o), WB_EINVAL);
}

Test(rt_sp, reply_over_the_size_limit, .fini = wbt_cleanup, .timeout = 60)
{
	char       url[128];
	rt_sp     *c;
	rt_sp_opts o = { .timeout_ms = wbt_ms(5000), .max_msg = 8 };
	wb_obj    *req, *rep = NULL;

	cr_assert_eq(wbt_ipc_url(url, sizeof(url), "sp"), 0);
	sp_server(url);
	cr_assert_eq(rt_sp_open(&c, url, &o), WB_OK);
	req = wb_request(WB_OP_STATS); /* the stats reply is well over 8 bytes */
	cr_assert_eq(rt_sp_call(c, req, &rep), WB_ETOOBIG);
	cr_assert_null(rep);
	wb_msg_free(req);
	rt_sp_close(c);
}

typedef struct sp_blocked {
	rt_sp *c;
	int    rv;
} sp_blocked;

static void *
sp_blocked_main(void *arg)
{
	sp_blocked *b = arg;

	b->rv = sp_ping(b->c);
	return NULL;
}

Test(rt_sp, waits_for_a_server_that_starts_late, .fini = wbt_cleanup, .timeout = 120)
{
	char        url[64];
	rt_sp      *c;
	rt_sp_opts  o = { .timeout_ms = wbt_ms(10000), .wait_for_server = true };
	wbt_daemon *d;
	long long   t0;
	sp_blocked  b = { NULL, -1 };
	pthread_t   th;

	/* nobody listens yet: the call redials until the server is up */
	cr_assert_gt(wbt_tcp_url(url, sizeof(url)), 0);
	cr_assert_eq(rt_sp_open(&c, url, &o), WB_OK);
	b.c = c;
	cr_assert_eq(pthread_create(&th, NULL, sp_blocked_main, &b), 0);
	usleep(200 * 1000);
	d = sp_server(url);
	pthread_join(th, NULL);
	cr_assert_eq(b.rv, WB_OK, "the call made before the server started got its reply");
	/* a server gone for the whole deadline: unavailable once it has passed */
	cr_assert_eq(wbt_stop(d, SIGTERM, wbt_ms(10000)), 0);
	rt_sp_close(c);
	o.timeout_ms = 300;
	cr_assert_eq(rt_sp_open(&c, url, &o), WB_OK);
	t0 = wbt_now_ms();
	cr_assert_eq(sp_ping(c), WB_EUNAVAIL);
	cr_assert_geq(wbt_now_ms() - t0, 250, "it waited for the server");
	rt_sp_close(c);
}

/* sp_shutdown_ends stops d, starts a call through c, shuts c down and checks the call ended at once. */
static void
sp_shutdown_ends(rt_sp *c, wbt_daemon *d)
{
	sp_blocked b = { c, -1 };
	pthread_t  th;
	long long  t0;

	cr_assert_eq(wbt_pause(d), 0);
	cr_assert_eq(pthread_create(&th, NULL, sp_blocked_main, &b), 0);
	usleep(200 * 1000);
	t0 = wbt_now_ms();
	rt_sp_shutdown(c);
	pthread_join(th, NULL);
	cr_assert_eq(b.rv, WB_ECLOSED, "the call blocked on a stopped server ends with ECLOSED");
	cr_assert_lt(wbt_now_ms() - t0, 1000);
	cr_assert_eq(sp_ping(c), WB_ECLOSED, "no call after a shutdown");
	cr_assert_eq(wbt_resume(d), 0);
	rt_sp_close(c);
}

Test(rt_sp, shutdown_ends_calls_in_flight, .fini = wbt_cleanup, .timeout = 120)
{
	char        url[64];
	rt_sp      *c;
	rt_sp_opts  o = { .timeout_ms = 30000 };
	wbt_daemon *d;

	cr_assert_gt(wbt_tcp_url(url, sizeof(url)), 0);
	d = sp_server(url);
	/* on a connection in use for a while */
	cr_assert_eq(rt_sp_open(&c, url, &o), WB_OK);
	cr_assert_eq(sp_ping(c), WB_OK);
	sp_shutdown_ends(c, d);
	/* on a new connection still in its handshake */
	cr_assert_eq(rt_sp_open(&c, url, &o), WB_OK);
	sp_shutdown_ends(c, d);
}

/* sp_dribble is a REP server for one call that sends its reply (a 60000-byte message) in pieces. */
static void *
sp_dribble(void *arg)
{
	static const size_t cuts[] = { 1, 5, 12, 13, 100, 4095, 4200, 30000 };
	int                 fd = *(int *)arg, c;
	uint8_t             in[512], hello[RT_WIRE_HELLO], *out;
	char               *body, *msg = malloc(60001);
	size_t              blen, n = 0, at = 0;
	wb_obj             *rep = wb_msg_new();

	cr_assert(msg != NULL && rep != NULL && (c = accept(fd, NULL, NULL)) >= 0);
	rt_wire_hello(hello, RT_WIRE_REP);
	cr_assert_eq(write(c, hello, sizeof(hello)), (ssize_t)sizeof(hello));
	while (n < RT_WIRE_HELLO + 12) { /* the client's hello, length and request id */
		ssize_t k = read(c, in + n, sizeof(in) - n);
		cr_assert_gt(k, 0);
		n += (size_t)k;
	}
	memset(msg, 'm', 60000);
	msg[60000] = '\0';
	cr_assert_eq(wb_set_cstr(rep, WB_F_MSG, msg), WB_OK);
	cr_assert_eq(wb_set_bool(rep, WB_F_OK, true), WB_OK);
	cr_assert_eq(wb_encode_buf(rep, &body, &blen), WB_OK);
	out = malloc(12 + blen);
	rt_wire_put(out, 4 + blen, 8);
	memcpy(out + 8, in + RT_WIRE_HELLO + 8, 4); /* the request id */
	memcpy(out + 12, body, blen);
	for (size_t i = 0; i <= sizeof(cuts) / sizeof(cuts[0]); i++) {
		size_t to = i < sizeof(cuts) / sizeof(cuts[0]) ? cuts[i] : 12 + blen;
		cr_assert_eq(write(c, out + at, to - at), (ssize_t)(to - at));
		at = to;
		wbt_sleep_ms(2);
	}
	wbt_sleep_ms(200); /* let the client read it all before the close */
	close(c);
	free(out);
	free(body);
	free(msg);
	wb_msg_free(rep);
	return NULL;
}

Test(rt_sp, reply_in_pieces, .fini = wbt_cleanup, .timeout = 60)
{
	char       url[64];
	rt_sp     *c;
	rt_sp_opts o = { .timeout_ms = wbt_ms(5000) };
	pthread_t  th;
	wb_obj    *req = wb_request(WB_OP_PING), *rep = NULL;
	int        fd = sp_listen(url, sizeof(url));

	cr_assert_eq(pthread_create(&th, NULL, sp_dribble, &fd), 0);
	cr_assert_eq(rt_sp_open(&c, url, &o), WB_OK);
	cr_assert_eq(rt_sp_call(c, req, &rep), WB_OK, "a reply cut at every boundary");
	cr_assert_eq(strlen(wb_str(rep, WB_F_MSG, "")), 60000);
	pthread_join(th, NULL);
	wb_msg_free(rep);
	wb_msg_free(req);
	rt_sp_close(c);
	close(fd);
}
