/*
 * rt_metrics_test.c - the admin port and its text: stats replies written
 * as Prometheus families (labels, cumulative buckets, units, escaping,
 * no empty family), and the HTTP side over a real socket: /metrics,
 * /healthz, /readyz before and after ready and with a check, a page,
 * 404, 405, HEAD, keep-alive and pipelining, and what it refuses (a
 * malformed head, a body, a head over 8 KiB, another HTTP version).
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rt_metrics.h"
#include "rt_stats.h"
#include "wb_errors.h"
#include "wbt.h"

/* text_of writes n sources with flags and returns the text (caller frees). */
static char *
text_of(const rt_metrics_src *src, size_t n, unsigned flags)
{
	char  *buf = NULL;
	size_t len = 0;
	FILE  *f = open_memstream(&buf, &len);

	cr_assert_not_null(f);
	cr_assert_eq(rt_metrics_write(f, src, n, flags), WB_OK);
	cr_assert_eq(fclose(f), 0);
	return buf;
}

/* add_gauge appends gauges (name, value pairs) to a stats reply. */
static void
add_gauges(wb_obj *rep, const char *const *names, const uint64_t *values, size_t n)
{
	wb_obj *g = wb_add_objs(rep, WB_F_GAUGES, n);

	cr_assert_not_null(g);
	for (size_t i = 0; i < n; i++) {
		cr_assert_eq(wb_set_cstr(&g[i], WB_F_NAME, names[i]), WB_OK);
		cr_assert_eq(wb_set_u64(&g[i], WB_F_VALUE, values[i]), WB_OK);
	}
}

/* a stats reply: uptime, ops recorded, gauges */
static wb_obj *
reply(uint64_t uptime_ms, const char *const *gnames, const uint64_t *gvals, size_t ng)
{
	wb_obj   *rep = wb_msg_new();
	rt_stats *st = rt_stats_new();

	cr_assert(rep != NULL && st != NULL);
	rt_stats_record(st, WB_OP_PING, 3, false);    /* bucket le 4 us */
	rt_stats_record(st, WB_OP_PING, 1000, false); /* le 1024 us */
	rt_stats_record(st, WB_OP_STATS, 10, true);
	cr_assert_eq(wb_set_u64(rep, WB_F_UPTIME, uptime_ms), WB_OK);
	cr_assert_eq(rt_stats_fill(st, rep), WB_OK);
	if (ng > 0) {
		add_gauges(rep, gnames, gvals, ng);
	}
	rt_stats_free(st);
	return rep;
}

Test(metrics_text, families_and_labels)
{
	static const char *const g[] = { "events_behind", "last_fanout_ms", "process_cpu_us",
		"process_start_ms", "metrics_port" };
	static const uint64_t    v0[] = { 7, 1234, 2500000, 1700000000123, 9104 };
	static const uint64_t    v1[] = { 0, 5, 10, 1700000000456, 9104 };
	wb_obj                  *a = reply(1500, g, v0, 5), *b = reply(2, g, v1, 5);
	rt_metrics_src src[] = { { "inbox", 0, a }, { "inbox", 2, b }, { "user", 0, NULL } };
	char          *t = text_of(src, 3, RT_METRICS_UP);

	/* every series labelled service and shard */
	cr_assert_not_null(strstr(t, "\nwarble_up{service=\"inbox\",shard=\"2\"} 1\n"), "%s", t);
	cr_assert_not_null(strstr(t, "\nwarble_up{service=\"user\",shard=\"0\"} 0\n"), "%s", t);
	cr_assert_not_null(
	    strstr(t, "\nwarble_uptime_seconds{service=\"inbox\",shard=\"0\"} 1.500\n"));
	cr_assert_not_null(
	    strstr(t, "\nwarble_requests_total{service=\"inbox\",shard=\"2\",op=\"ping\"} 2\n"),
	    "%s", t);
	cr_assert_not_null(strstr(
	    t, "\nwarble_request_errors_total{service=\"inbox\",shard=\"0\",op=\"stats\"} 1\n"));
	/* cumulative buckets in seconds, +Inf the count, the sum in seconds */
	cr_assert_not_null(strstr(t, "\nwarble_request_duration_seconds_bucket{service=\"inbox\","
	                             "shard=\"0\",op=\"ping\",le=\"4e-06\"} 1\n"),
	    "%s", t);
	cr_assert_not_null(strstr(t, "\nwarble_request_duration_seconds_bucket{service=\"inbox\","
	                             "shard=\"0\",op=\"ping\",le=\"0.001024\"} 2\n"));
	cr_assert_not_null(strstr(t, "\nwarble_request_duration_seconds_bucket{service=\"inbox\","
	                             "shard=\"0\",op=\"ping\",le=\"+Inf\"} 2\n"));
	cr_assert_not_null(strstr(t, "\nwarble_request_duration_seconds_sum{service=\"inbox\","
	                             "shard=\"0\",op=\"ping\"} 0.001003\n"));
	/* a gauge per service, both shards under one head; ms as seconds, exactly */
	cr_assert_not_null(
	    strstr(t, "# TYPE warble_inbox_events_behind gauge\n"
	              "warble_inbox_events_behind{service=\"inbox\",shard=\"0\"} 7\n"
	              "warble_inbox_events_behind{service=\"inbox\",shard=\"2\"} 0\n"),
	    "%s", t);
	cr_assert_not_null(
	    strstr(t, "\nwarble_inbox_last_fanout_seconds{service=\"inbox\",shard=\"0\"} 1.234\n"));
	cr_assert_not_null(
	    strstr(t, "\nwarble_inbox_last_fanout_seconds{service=\"inbox\",shard=\"2\"} 0.005\n"));
	/* the process's figures under their standard names, not as gauges; no metrics_port */
	cr_assert_not_null(
	    strstr(t, "\nprocess_cpu_seconds_total{service=\"inbox\",shard=\"0\"} 2.500000\n"));
	cr_assert_not_null(strstr(
	    t, "\nprocess_start_time_seconds{service=\"inbox\",shard=\"2\"} 1700000000.456\n"));
	cr_assert_null(strstr(t, "warble_inbox_process_"));
	cr_assert_null(strstr(t, "metrics_port"));
	/* every family once; without RT_METRICS_UP no warble_up */
	cr_assert_null(
	    strstr(strstr(t, "# TYPE warble_requests_total") + 1, "# TYPE warble_requests_total"));
	free(t);
	t = text_of(src, 2, 0);
	cr_assert_null(strstr(t, "warble_up{"));
	free(t);
	wb_msg_free(a);
	wb_msg_free(b);
}

Test(metrics_text, labelled_gauges)
{
	/* a log's figure per consumer, on two shards; one shard with none, a malformed label */
	static const char *const g0[] = { "log_first_seq", "log_consumer_applied{consumer=inbox/0}",
		"log_consumer_age_ms{consumer=inbox/0}", "log_consumer_applied{consumer=inbox/1}",
		"log_consumer_age_ms{consumer=inbox/1}", "odd{=x}" };
	static const uint64_t    v0[] = { 5, 40, 1500, 38, 2, 1 };
	static const char *const g1[] = { "log_first_seq", "log_consumer_applied{consumer=in\"x}" };
	static const uint64_t    v1[] = { 9, 70 };
	wb_obj        *a = reply(1, g0, v0, 6), *b = reply(1, g1, v1, 2), *c = reply(1, g0, v0, 1);
	rt_metrics_src src[] = { { "content", 0, a }, { "content", 1, b }, { "content", 2, c } };
	char          *t = text_of(src, 3, 0);

	/* one family, every consumer of every shard under it, the label beside the others */
	cr_assert_not_null(
	    strstr(t, "# TYPE warble_content_log_consumer_applied gauge\n"
	              "warble_content_log_consumer_applied{service=\"content\",shard=\"0\","
	              "consumer=\"inbox/0\"} 40\n"
	              "warble_content_log_consumer_applied{service=\"content\",shard=\"0\","
	              "consumer=\"inbox/1\"} 38\n"
	              "warble_content_log_consumer_applied{service=\"content\",shard=\"1\","
	              "consumer=\"in\\\"x\"} 70\n"),
	    "%s", t);
	cr_assert_not_null(strstr(t, "warble_content_log_consumer_age_seconds{service=\"content\","
	                             "shard=\"0\",consumer=\"inbox/1\"} 0.002\n"),
	    "%s", t);
	cr_assert_not_null(strstr(t, "\nwarble_content_log_first_seq{service=\"content\","
	                             "shard=\"2\"} 5\n"));
	cr_assert_not_null(
	    strstr(t, "\nwarble_content_odd__x_{service=\"content\",shard=\"0\"} 1\n"),
	    "a malformed label stays in the name: %s", t);
	cr_assert_null(strstr(strstr(t, "# TYPE warble_content_log_consumer_applied") + 1,
	                   "# TYPE warble_content_log_consumer_applied"),
	    "the family once");
	free(t);
	wb_msg_free(a);
	wb_msg_free(b);
	wb_msg_free(c);
}

Test(metrics_text, no_empty_family_and_escaped_labels)
{
	wb_obj        *rep = wb_msg_new();
	wb_obj        *st;
	rt_metrics_src src = { "gate\"way", 1, rep };
	char          *t;

	/* nothing: no family at all */
	t = text_of(NULL, 0, 0);
	cr_assert_str_eq(t, "");
	free(t);
	/* an op name from a peer with a quote, a backslash and a newline */
	st = wb_add_objs(rep, WB_F_STATS, 1);
	cr_assert_not_null(st);
	cr_assert_eq(wb_set_cstr(st, WB_F_NAME, "a\"b\\c\nd"), WB_OK);
	cr_assert_eq(wb_set_u64(st, WB_F_COUNT, 3), WB_OK);
	t = text_of(&src, 1, 0);
	cr_assert_not_null(strstr(t, "warble_requests_total{service=\"gate\\\"way\",shard=\"1\","
	                             "op=\"a\\\"b\\\\c\\nd\"} 3\n"),
	    "%s", t);
	cr_assert_null(strstr(t, "warble_uptime_seconds"), "%s", t);
	free(t);
	wb_msg_free(rep);
}

/* --- the HTTP side ---------------------------------------------------------- */

static int source_calls;

static int
source_fill(void *arg, wb_obj *rep)
{
	static const char *const g[] = { "users", "process_cpu_us" };
	static const uint64_t    v[] = { 42, 1000 };

	(void)arg;
	source_calls++;
	add_gauges(rep, g, v, 2);
	return WB_OK;
}

static int
source_fail(void *arg, wb_obj *rep)
{
	(void)arg;
	(void)rep;
	return WB_EUNAVAIL;
}

static int
extra_text(void *arg, FILE *out)
{
	fprintf(out, "# TYPE warble_extra_total counter\nwarble_extra_total %d\n", *(int *)arg);
	return WB_OK;
}

static int
check_json(void *arg, FILE *out)
{
	bool ok = *(bool *)arg;

	fprintf(out, "{\"ready\":%s}", ok ? "true" : "false");
	return ok ? WB_OK : WB_EUNAVAIL;
}

/* connect_to opens a TCP connection to 127.0.0.1:port. */
static int
connect_to(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int                fd = socket(AF_INET, SOCK_STREAM, 0);

	cr_assert_geq(fd, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/*
 * read_all reads from fd until want bytes have come (0: until EOF), within
 * 5 s; returns them (caller frees).
 */
static char *
read_all(int fd, size_t want)
{
	size_t    cap = 1 << 16, len = 0;
	char     *buf = malloc(cap);
	long long end = wbt_now_ms() + 5000;

	cr_assert_not_null(buf);
	while (want == 0 || len < want) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t       n;

		cr_assert_gt(poll(&p, 1, (int)(end - wbt_now_ms())), 0, "no answer within 5 s");
		if ((n = recv(fd, buf + len, cap - len - 1, 0)) <= 0) {
			break;
		}
		len += (size_t)n;
		cr_assert_lt(len, cap - 1);
	}
	buf[len] = '\0';
	return buf;
}

/* exchange sends raw bytes on a new connection and returns everything until the server closes. */
static char *
exchange(int port, const char *raw)
{
	int   fd = connect_to(port);
	char *r;

	cr_assert_eq(send(fd, raw, strlen(raw), MSG_NOSIGNAL), (ssize_t)strlen(raw));
	r = read_all(fd, 0);
	close(fd);
	return r;
}

/* get sends GET path (Connection: close) and returns the response. */
static char *
get(int port, const char *path)
{
	char req[512];

	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", path);
	return exchange(port, req);
}

/* status_of returns the status code of a response. */
static int
status_of(const char *r)
{
	int code = 0;

	cr_assert_eq(sscanf(r, "HTTP/1.1 %d ", &code), 1, "not a response: %s", r);
	return code;
}

static rt_metrics *m;
static int         port;
static int         extra_value = 5;
static bool        check_ok;

static void
admin_open(void)
{
	cr_assert_eq(rt_metrics_open(&m, "http://127.0.0.1:0"), WB_OK);
	port = rt_metrics_port(m);
	cr_assert_gt(port, 0);
}

static void
admin_close(void)
{
	rt_metrics_close(m);
	m = NULL;
}

Test(metrics_http, bad_urls)
{
	rt_metrics *x = NULL;

	cr_assert_eq(rt_metrics_open(&x, "tcp://127.0.0.1:0"), WB_EINVAL);
	cr_assert_eq(rt_metrics_open(&x, "http://"), WB_EINVAL);
	cr_assert_eq(rt_metrics_open(&x, "http://127.0.0.1:0/metrics"), WB_EINVAL);
	cr_assert_null(x);
	rt_metrics_close(NULL);
}

Test(metrics_http, pages, .init = admin_open, .fini = admin_close)
{
	char *r;

	/* /healthz at once; /readyz not before the process serves */
	r = get(port, "/healthz");
	cr_assert_eq(status_of(r), 200);
	cr_assert_not_null(strstr(r, "\r\n\r\n{\"status\":\"ok\"}"));
	free(r);
	r = get(port, "/readyz");
	cr_assert_eq(status_of(r), 503, "%s", r);
	cr_assert_not_null(strstr(r, "\"starting\""));
	free(r);
	rt_metrics_ready(m, true);
	r = get(port, "/readyz");
	cr_assert_eq(status_of(r), 200, "%s", r);
	free(r);

	/* /metrics: each source labelled, a failing one left out, the extra families last */
	cr_assert_eq(rt_metrics_source(m, "user", 0, source_fill, NULL), WB_OK);
	cr_assert_eq(rt_metrics_source(m, "relation", 3, source_fail, NULL), WB_OK);
	cr_assert_eq(rt_metrics_extra(m, extra_text, &extra_value), WB_OK);
	r = get(port, "/metrics");
	cr_assert_eq(status_of(r), 200, "%s", r);
	cr_assert_not_null(
	    strstr(r, "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
	cr_assert_not_null(
	    strstr(r, "\nwarble_user_users{service=\"user\",shard=\"0\"} 42\n"), "%s", r);
	cr_assert_not_null(
	    strstr(r, "\nprocess_cpu_seconds_total{service=\"user\",shard=\"0\"} 0.001000\n"));
	cr_assert_null(strstr(r, "relation"), "%s", r);
	cr_assert_not_null(strstr(r, "\nwarble_extra_total 5\n"));
	cr_assert_gt(strstr(r, "warble_extra_total") - strstr(r, "process_cpu_seconds_total"), 0);
	free(r);

	/* a page, and the check behind /readyz */
	cr_assert_eq(rt_metrics_page(m, "/metrics/more", extra_text, &extra_value), WB_OK);
	cr_assert_eq(rt_metrics_page(m, "/metrics", extra_text, NULL), WB_EINVAL);
	cr_assert_eq(rt_metrics_page(m, "relative", extra_text, NULL), WB_EINVAL);
	r = get(port, "/metrics/more?x=1");
	cr_assert_eq(status_of(r), 200, "%s", r);
	cr_assert_not_null(strstr(r, "\r\n\r\n# TYPE warble_extra_total counter\n"));
	free(r);
	cr_assert_eq(rt_metrics_check(m, check_json, &check_ok), WB_OK);
	cr_assert_eq(rt_metrics_check(m, check_json, &check_ok), WB_EINVAL, "one check only");
	r = get(port, "/readyz");
	cr_assert_eq(status_of(r), 503, "%s", r);
	cr_assert_not_null(strstr(r, "\r\n\r\n{\"ready\":false}"));
	free(r);
	check_ok = true;
	r = get(port, "/readyz");
	cr_assert_eq(status_of(r), 200, "%s", r);
	free(r);

	/* anything else: JSON 404, 405 with Allow, HEAD without a body */
	r = get(port, "/api/v1/home");
	cr_assert_eq(status_of(r), 404, "%s", r);
	cr_assert_not_null(strstr(r, "{\"error\":\"NOT_FOUND\""));
	free(r);
	r = exchange(port, "DELETE /metrics HTTP/1.1\r\nConnection: close\r\n\r\n");
	cr_assert_eq(status_of(r), 405, "%s", r);
	cr_assert_not_null(strstr(r, "\r\nAllow: GET, HEAD\r\n"));
	free(r);
	r = exchange(port, "HEAD /healthz HTTP/1.1\r\nConnection: close\r\n\r\n");
	cr_assert_eq(status_of(r), 200, "%s", r);
	cr_assert_not_null(strstr(r, "\r\nContent-Length: 15\r\n"));
	cr_assert_str_eq(strstr(r, "\r\n\r\n"), "\r\n\r\n", "a body to HEAD: %s", r);
	free(r);
}

Test(metrics_http, keep_alive_and_pipelining, .init = admin_open, .fini = admin_close)
{
	int   fd = connect_to(port), calls;
	char *r;

	cr_assert_eq(rt_metrics_source(m, "user", 0, source_fill, NULL), WB_OK);
	calls = source_calls;
	/* two requests in one write, then a third on the same connection */
	const char *two = "GET /healthz HTTP/1.1\r\n\r\nGET /healthz HTTP/1.1\r\n\r\n";
	cr_assert_eq(send(fd, two, strlen(two), MSG_NOSIGNAL), (ssize_t)strlen(two));
	r = read_all(fd, 2 * (strlen("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	                             "Content-Length: 15\r\nCache-Control: no-store\r\n\r\n") +
	                         15));
	cr_assert_not_null(
	    strstr(strstr(r, "{\"status\":\"ok\"}") + 1, "{\"status\":\"ok\"}"), "%s", r);
	free(r);
	const char *third = "GET /metrics HTTP/1.1\r\nConnection: close\r\n\r\n";
	cr_assert_eq(send(fd, third, strlen(third), MSG_NOSIGNAL), (ssize_t)strlen(third));
	r = read_all(fd, 0);
	cr_assert_eq(status_of(r), 200, "%s", r);
	cr_assert_not_null(strstr(r, "\r\nConnection: close\r\n"));
	cr_assert_eq(source_calls, calls + 1);
	free(r);
	close(fd);
	/* HTTP/1.0 ends after the reply unless asked */
	r = exchange(port, "GET /healthz HTTP/1.0\r\n\r\n");
	cr_assert_eq(status_of(r), 200, "%s", r);
	free(r);
}

Test(metrics_http, refuses_bad_requests, .init = admin_open, .fini = admin_close)
{
	static const struct {
		const char *raw;
		int         status;
	} bad[] = {
		{ "GET /metrics\r\n\r\n", 400 },
		{ "GET metrics HTTP/1.1\r\n\r\n", 400 },
		{ "G(T /metrics HTTP/1.1\r\n\r\n", 400 },
		{ "GET  /metrics HTTP/1.1\r\n\r\n", 400 },
		{ "GET /metrics HTTP/2.0\r\n\r\n", 505 },
		{ "GET /metrics HTTP/1.2\r\n\r\n", 505 },
		{ "GET * HTTP/1.1\r\n\r\n", 400 },
		{ "GET /metrics FTP/1.1\r\n\r\n", 400 },
		{ "GET /met\x01rics HTTP/1.1\r\n\r\n", 400 },
		{ "GET /metrics HTTP/1.1\r\nHost x\r\n\r\n", 400 },
		{ "GET /metrics HTTP/1.1\r\n: x\r\n\r\n", 400 },
		{ "GET /metrics HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400 },
		{ "GET /metrics HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd", 400 },
		{ "GET /metrics HTTP/1.1\r\nContent-Length: x\r\n\r\n", 400 },
		{ "GET /metrics HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n", 400 },
		{ "GET /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400 },
	};
	char *r, *big;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = exchange(port, bad[i].raw);
		cr_assert_eq(status_of(r), bad[i].status, "request %zu: %s", i, r);
		cr_assert_not_null(strstr(r, "\r\nConnection: close\r\n"), "request %zu", i);
		cr_assert_not_null(strstr(r, "{\"error\":\""), "request %zu", i);
		free(r);
	}
	/* Content-Length: 0 is no body */
	r = exchange(
	    port, "GET /healthz HTTP/1.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
	cr_assert_eq(status_of(r), 200, "%s", r);
	free(r);
	/* a head over 8 KiB */
	big = malloc(10000);
	cr_assert_not_null(big);
	memset(big, 'a', 9999);
	memcpy(big, "GET /", 5);
	big[9999] = '\0';
	r = exchange(port, big);
	cr_assert_eq(status_of(r), 431, "%s", r);
	free(r);
	free(big);
	/* and the port still serves */
	r = get(port, "/healthz");
	cr_assert_eq(status_of(r), 200);
	free(r);
}
