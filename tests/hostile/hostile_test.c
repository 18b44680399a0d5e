/*
 * hostile_test.c - a real cluster on tcp://127.0.0.1 under hostile
 * network traffic, on every port an attacker could reach: the five REP
 * services, the two PUB ports, the gateway's HTTP and each daemon's admin
 * port.
 *
 *   probes     bare connect/close (FIN and RST), half-open connections
 *              held open (nothing sent, half an SP header, a whole SP
 *              header of another protocol), random bytes, a frame header
 *              claiming 2^60 bytes: every service then answers ping
 *              promptly, the SDK works end to end (publish -> PUB -> inbox
 *              -> home), and every daemon exits 0 on SIGTERM.
 *   slowloris  the gateway limited to 1024 open files, 1500 HTTP clients
 *              sending their headers a byte at a time: normal requests
 *              are answered all along, and the slow ones are cut off.
 */
#include <criterion/criterion.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>

#include "hs.h"
#include "wb_proto.h"
#include "wbt_png.h"
#include "wbt_sp.h"

#define HS_PROBES    200 /* bare connect/close per port */
#define HS_HALF_OPEN 40  /* held connections per port and kind */
#define HS_PROMPT_MS 3000

static hs_cluster hc;

/* hs_connect_port opens a TCP connection (or -1), as ht_connect. */
static int
hs_connect_port(int port)
{
	return ht_connect(port);
}

/* hs_rst closes fd with a TCP reset instead of a FIN. */
static void
hs_rst(int fd)
{
	struct linger l = { 1, 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(fd);
}

/*
 * hs_check_all pings every REP service and GETs /healthz of HTTP and of
 * every admin port, each within HS_PROMPT_MS.
 */
static void
hs_check_all(const char *when)
{
	for (int i = HS_USER; i <= HS_GATEWAY; i++) {
		long long t0 = wbt_now_ms();
		int       rc = wbt_ping(hs_url_of(&hc, i), HS_PROMPT_MS);

		cr_assert_eq(rc, 0, "%s: %s does not answer ping (%s)", when, hs_port_names[i],
		    wb_err_name(rc));
		cr_assert_lt(wbt_now_ms() - t0, HS_PROMPT_MS, "%s: %s answered late", when,
		    hs_port_names[i]);
	}
	for (int i = HS_HTTP; i < HS_NPORTS; i++) {
		ht_res    r;
		long long t0 = wbt_now_ms();
		cr_assert_eq(ht_request(hc.port[i], "GET", "/healthz", NULL, NULL, &r), 0,
		    "%s: no HTTP answer on %s", when, hs_port_names[i]);
		cr_assert_eq(
		    r.status, 200, "%s: /healthz on %s gave %d", when, hs_port_names[i], r.status);
		cr_assert_lt(wbt_now_ms() - t0, HS_PROMPT_MS, "%s: /healthz on %s answered late",
		    when, hs_port_names[i]);
		ht_res_free(&r);
	}
}

/* hs_flow publishes as a and waits until b (a follower) sees it at home: every service and both PUB paths work. */
static void
hs_flow(warble_client *a, warble_client *b, const char *text)
{
	uint64_t        id;
	warble_posts_t *p = NULL;
	bool            seen = false;

	cr_assert_eq(warble_post(a, text, &id), 0, "publish: %s", warble_errmsg(a));
	for (long long end = wbt_now_ms() + 20000; !seen && wbt_now_ms() < end; wbt_sleep_ms(50)) {
		cr_assert_eq(warble_home(b, 0, 10, &p), 0, "home: %s", warble_errmsg(b));
		for (size_t i = 0; i < p->n; i++) {
			seen |= p->posts[i].id == id;
		}
		warble_posts_free(p);
	}
	cr_assert(seen, "post %s never reached the follower's home", text);
}

/* hs_fill writes n pseudo-random bytes (xorshift from *seed) into buf. */
static void
hs_fill(uint8_t *buf, size_t n, uint64_t *seed)
{
	for (size_t i = 0; i < n; i++) {
		*seed ^= *seed << 13;
		*seed ^= *seed >> 7;
		*seed ^= *seed << 17;
		buf[i] = (uint8_t)*seed;
	}
}

/* hs_send_nb sends what the socket takes now, never blocking (the peer may not read). */
static void
hs_send_nb(int fd, const void *buf, size_t n)
{
	(void)send(fd, buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
}

Test(hostile, probes_half_open_random_bytes, .fini = wbt_cleanup, .timeout = 240)
{
	static int     held[HS_NPORTS][4 * HS_HALF_OPEN];
	static uint8_t junk[8192];
	uint64_t       seed = 0x9e3779b97f4a7c15ull;
	int            nheld[HS_NPORTS] = { 0 };
	warble_client *a, *b;
	char           text[64];

	cr_assert_eq(hs_start(&hc, NULL), 0, "cluster did not start");
	cr_assert_not_null(a = hs_session(&hc, "hs_alice", "password-a"));
	cr_assert_not_null(b = hs_session(&hc, "hs_bob", "password-b"));
	cr_assert_eq(warble_follow(b, "hs_alice"), 0, "follow: %s", warble_errmsg(b));
	hs_flow(a, b, "before");

	for (int i = 0; i < HS_NPORTS; i++) {
		int port = hc.port[i];

		/* bare connect/close probes, half with a reset */
		for (int k = 0; k < HS_PROBES; k++) {
			int fd = hs_connect_port(port);
			cr_assert_geq(fd, 0, "%s: connect %d failed", hs_port_names[i], k);
			if (k % 2) {
				hs_rst(fd);
			} else {
				close(fd);
			}
		}
		/* half-open: nothing sent; half an SP header; an SP header of PAIR (not REQ/SUB) */
		for (int k = 0; k < 3 * HS_HALF_OPEN; k++) {
			static const uint8_t sp_half[] = { 0x00, 'S', 'P', 0x00 };
			static const uint8_t sp_pair[] = { 0x00, 'S', 'P', 0x00, 0x00, 0x10, 0x00,
				0x00 };
			int                  fd = hs_connect_port(port);

			cr_assert_geq(fd, 0);
			if (k % 3 == 1) {
				hs_send_nb(fd, sp_half, sizeof(sp_half));
			} else if (k % 3 == 2) {
				hs_send_nb(fd, sp_pair, sizeof(sp_pair));
			}
			held[i][nheld[i]++] = fd;
		}
		/* random bytes: some closed at once, some held */
		for (int k = 0; k < HS_HALF_OPEN; k++) {
			int    fd = hs_connect_port(port);
			size_t n = 1 + (size_t)(seed % sizeof(junk));

			cr_assert_geq(fd, 0);
			hs_fill(junk, n, &seed);
			if (k % 4 == 0) {
				junk[0] = 0; /* looks like an SP header start */
				junk[1] = 'S';
				junk[2] = 'P';
			}
			hs_send_nb(fd, junk, n);
			if (k % 2) {
				close(fd);
			} else {
				held[i][nheld[i]++] = fd;
			}
		}
		/* a REQ peer's header, then a frame claiming 2^60 bytes (REP ports only) */
		if (i <= HS_GATEWAY) {
			static const uint8_t req[] = { 0x00, 'S', 'P', 0x00, 0x00, 0x30, 0x00, 0x00,
				0x10, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3 };
			int                  fd = hs_connect_port(port);
			cr_assert_geq(fd, 0);
			hs_send_nb(fd, req, sizeof(req));
			held[i][nheld[i]++] = fd;
		}
	}
	/* everything answers while the junk connections are still open */
	hs_check_all("with half-open connections held");
	snprintf(text, sizeof(text), "during");
	hs_flow(a, b, text);

	for (int i = 0; i < HS_NPORTS; i++) {
		for (int k = 0; k < nheld[i]; k++) {
			if (k % 2) {
				hs_rst(held[i][k]);
			} else {
				close(held[i][k]);
			}
		}
	}
	/* and after they went away, and after a second round of probes */
	hs_check_all("after the held connections closed");
	for (int i = 0; i < HS_NPORTS; i++) {
		for (int k = 0; k < HS_PROBES / 4; k++) {
			int fd = hs_connect_port(hc.port[i]);
			cr_assert_geq(fd, 0);
			hs_rst(fd);
		}
	}
	hs_check_all("after a second round of probes");
	hs_flow(a, b, "after");
	warble_close(a);
	warble_close(b);
	cr_assert_eq(hs_stop(&hc), 0, "a daemon did not exit cleanly on SIGTERM");
}

/* The slow clients: each sends one byte of its request head per round. */
#define HS_SLOW_CONNS  1500
#define HS_SLOW_NOFILE 1024

typedef struct hs_slow {
	int        port;
	int        fds[HS_SLOW_CONNS];
	int        n;
	atomic_int stop;
	atomic_int open;   /* slow connections still open (seen by the last round) */
	atomic_int opened; /* connections made in all */
} hs_slow;

static void *
hs_slow_run(void *arg)
{
	static const char head[] = "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "
	                           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	                           "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	hs_slow          *s = arg;
	size_t            pos[HS_SLOW_CONNS];

	/* open them all (some may be refused or reset once the gateway is full) */
	for (int k = 0; k < HS_SLOW_CONNS && !atomic_load(&s->stop); k++) {
		int fd = ht_connect(s->port);

		s->fds[k] = fd;
		pos[k] = 0;
		if (fd >= 0) {
			atomic_fetch_add(&s->opened, 1);
		}
	}
	s->n = HS_SLOW_CONNS;
	while (!atomic_load(&s->stop)) {
		int open = 0;

		for (int k = 0; k < s->n; k++) {
			char    c;
			ssize_t n;

			if (s->fds[k] < 0) {
				continue;
			}
			/* the gateway answered (an error), closed or reset us: gone */
			n = recv(s->fds[k], &c, 1, MSG_DONTWAIT);
			if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
				close(s->fds[k]);
				s->fds[k] = -1;
				continue;
			}
			c = head[pos[k] % (sizeof(head) - 1)];
			if (send(s->fds[k], &c, 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 &&
			    errno != EAGAIN) {
				close(s->fds[k]);
				s->fds[k] = -1;
				continue;
			}
			pos[k]++;
			open++;
		}
		atomic_store(&s->open, open);
		wbt_sleep_ms(200);
	}
	for (int k = 0; k < s->n; k++) {
		if (s->fds[k] >= 0) {
			close(s->fds[k]);
		}
	}
	return NULL;
}

/* hs_healthz asks GET /healthz on a fresh connection, all within timeout_ms (connect included); the status or -1. */
static int
hs_healthz(int port, int timeout_ms)
{
	static const char  q[] = "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	long long          end = wbt_now_ms() + timeout_ms;
	struct pollfd      p;
	ht_res             r;
	int                fd, st = -1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0) {
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	p.fd = fd;
	p.events = POLLOUT;
	if (poll(&p, 1, timeout_ms) == 1 &&
	    send(fd, q, sizeof(q) - 1, MSG_NOSIGNAL) == (ssize_t)sizeof(q) - 1 &&
	    ht_read_response(
	        fd, &r, (int)(end - wbt_now_ms()) > 0 ? (int)(end - wbt_now_ms()) : 1) == 0) {
		st = r.status;
		ht_res_free(&r);
	}
	close(fd);
	return st;
}

Test(hostile, slowloris, .fini = wbt_cleanup, .timeout = 240)
{
	static hs_slow s;
	const char    *env[] = { "WARBLE_HTTP_HEADER_TIMEOUT_MS=5000", NULL };
	struct rlimit  rl = { HS_SLOW_NOFILE, HS_SLOW_NOFILE };
	pthread_t      th;
	int            answered = 0, worst = 0, rounds = 0, retried = 0;

	hs_nofile(RLIM_INFINITY); /* this process: room for every slow client */
	cr_assert_eq(hs_start(&hc, env), 0, "cluster did not start");
	/* the gateway: a small open-files limit, as on many hosts */
	cr_assert_eq(prlimit(hc.c.gateway->pid, RLIMIT_NOFILE, &rl, NULL), 0);

	s.port = hc.port[HS_HTTP];
	atomic_store(&s.open, -1); /* until the slow clients are all connected */
	cr_assert_eq(pthread_create(&th, NULL, hs_slow_run, &s), 0);
	/* 20 s of attack: a normal request every 250 ms must be answered */
	for (long long end = wbt_now_ms() + 20000; wbt_now_ms() < end; wbt_sleep_ms(250)) {
		long long t0 = wbt_now_ms();

		int st;

		rounds++;
		/* Under the cap a connection whose head the gateway has not parsed within
		 * 250 ms may be dropped unanswered; a client retries an idempotent GET once,
		 * as browsers do. */
		if ((st = hs_healthz(hc.port[HS_HTTP], 10000)) != 200 && wbt_now_ms() - t0 < 5000) {
			retried++;
			st = hs_healthz(hc.port[HS_HTTP], 5000);
		}
		if (st == 200) {
			answered++;
			if (wbt_now_ms() - t0 > worst) {
				worst = (int)(wbt_now_ms() - t0);
			}
		}
	}
	int still_open = atomic_load(&s.open);
	atomic_store(&s.stop, 1);
	pthread_join(th, NULL);
	fprintf(stderr,
	    "slowloris: %d slow connections made, %d still open after 20 s; "
	    "%d/%d normal requests answered (%d retried once), slowest %d ms\n",
	    atomic_load(&s.opened), still_open, answered, rounds, retried, worst);
	cr_assert_geq(
	    still_open, 0, "the slow clients could not all connect within 20 s (a stuck gateway)");
	cr_assert_eq(answered, rounds, "normal requests went unanswered during the attack");
	cr_assert_leq(
	    retried, rounds / 10, "%d of %d normal requests needed a retry", retried, rounds);
	cr_assert_lt(worst, 2 * HS_PROMPT_MS, "a normal request took %d ms", worst);
	cr_assert_lt(still_open, HS_SLOW_CONNS / 10,
	    "%d slow clients still connected after 20 s: no header deadline", still_open);
	hs_check_all("after the slow clients");
	cr_assert_eq(hs_stop(&hc), 0, "a daemon did not exit cleanly on SIGTERM");
}

/* The upload-slot attack: anonymous clients start image uploads and trickle their bodies. */
#define HS_UP_ANON  12      /* more than WARBLE_HTTP_UPLOADS (8) */
#define HS_UP_CLAIM 1048576 /* the Content-Length each claims */

typedef struct hs_trickle {
	int        port;
	int        fds[HS_UP_ANON];
	long long  since[HS_UP_ANON]; /* when each connected */
	atomic_int stop;
	atomic_int connects; /* connections made in all */
	atomic_int refused;  /* of them answered (401) or closed by the gateway */
} hs_trickle;

/* hs_upload_head writes the head of an image upload claiming len bytes (token may be NULL). */
static int
hs_upload_head(char *buf, size_t n, const char *token, size_t len)
{
	return snprintf(buf, n,
	    "POST /api/v1/media HTTP/1.1\r\nHost: x\r\n%s%s%sContent-Type: image/png\r\n"
	    "Content-Length: %zu\r\n\r\n",
	    token != NULL ? "Authorization: Bearer " : "", token != NULL ? token : "",
	    token != NULL ? "\r\n" : "", len);
}

/*
 * hs_trickle_open starts an upload of HS_UP_CLAIM bytes with token (NULL: none) and sends its first
 * body byte; the fd or -1.
 */
static int
hs_trickle_open(int port, const char *token)
{
	char head[512];
	int  fd = ht_connect(port), n = hs_upload_head(head, sizeof(head), token, HS_UP_CLAIM);

	if (fd >= 0 && ht_send(fd, head, (size_t)n) == 0 && ht_send(fd, "\x89", 1) == 0) {
		return fd;
	}
	if (fd >= 0) {
		close(fd);
	}
	return -1;
}

/*
 * hs_trickle_run is the attacker: one body byte a second on each connection, and a new connection 1
 * s after the gateway ends one.
 */
static void *
hs_trickle_run(void *arg)
{
	hs_trickle *t = arg;

	for (int k = 0; k < HS_UP_ANON; k++) {
		t->fds[k] = -1;
	}
	while (!atomic_load(&t->stop)) {
		long long now = wbt_now_ms();

		for (int k = 0; k < HS_UP_ANON; k++) {
			char    c;
			ssize_t n;

			if (t->fds[k] < 0) {
				if (now - t->since[k] >= 1000) {
					t->fds[k] = hs_trickle_open(t->port, NULL);
					t->since[k] = now;
					atomic_fetch_add(&t->connects, 1);
				}
				continue;
			}
			n = recv(t->fds[k], &c, 1, MSG_DONTWAIT);
			if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
				atomic_fetch_add(&t->refused, 1); /* answered, closed or reset */
				close(t->fds[k]);
				t->fds[k] = -1;
				continue;
			}
			if ((now - t->since[k]) % 1000 < 200) {
				hs_send_nb(t->fds[k], "\0", 1);
			}
		}
		wbt_sleep_ms(200);
	}
	for (int k = 0; k < HS_UP_ANON; k++) {
		if (t->fds[k] >= 0) {
			close(t->fds[k]);
		}
	}
	return NULL;
}

/* hs_png reads tests/data/media/photo.png into *len bytes (malloc'd). */
static char *
hs_png(size_t *len)
{
	char  root[1024], path[1200];
	char *p;
	FILE *fp;
	long  n;

	cr_assert_eq(ht_root(root, sizeof(root), "tests/data/media/photo.png"), 0);
	snprintf(path, sizeof(path), "%s/tests/data/media/photo.png", root);
	cr_assert_not_null(fp = fopen(path, "rb"), "%s", path);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	cr_assert_gt(n, 0);
	cr_assert_not_null(p = malloc((size_t)n));
	cr_assert_eq(fread(p, 1, (size_t)n, fp), (size_t)n);
	fclose(fp);
	*len = (size_t)n;
	return p;
}

/* hs_upload uploads png as token on a new connection; the status (the body in r). */
static int
hs_upload(const char *token, const char *png, size_t len, ht_res *r)
{
	char  head[512];
	int   n = hs_upload_head(head, sizeof(head), token, len);
	char *all = malloc((size_t)n + len);

	cr_assert_not_null(all);
	memcpy(all, head, (size_t)n);
	memcpy(all + n, png, len);
	cr_assert_eq(ht_raw(hc.port[HS_HTTP], all, (size_t)n + len, r, HT_DEADLINE_MS), 0);
	free(all);
	return r->status;
}

/*
 * hs_refused reads the answer to a trickling upload on fd within 10 s: its status, checked to end
 * the connection.
 */
static int
hs_refused(int fd, const char *err)
{
	ht_res r;
	char   v[64];
	int    st;

	cr_assert_eq(ht_read_response(fd, &r, wbt_ms(10000)), 0, "no answer to an upload's head");
	st = r.status;
	cr_assert_not_null(strstr(r.body, err), "%d %s", r.status, r.body);
	cr_assert_not_null(ht_header(&r, "Connection", v, sizeof(v)), "%s", r.head);
	cr_assert_str_eq(v, "close");
	ht_res_free(&r);
	return st;
}

/*
 * Anyone could hold every upload slot: 12 anonymous clients each started
 * POST /api/v1/media claiming 1 MiB and sent a byte a second, and every
 * real upload got 503 for as long as they kept it up.  Now a slot is
 * taken only once the head's token holds (401 at once otherwise, the
 * connection ended), and one user holds at most 2: a logged-in user
 * trickling 3 uploads has the third refused (429).  A real upload
 * succeeds all along, and a slot comes back when its connection goes.
 */
Test(hostile, upload_slots_need_a_token, .fini = wbt_cleanup, .timeout = 180)
{
	static hs_trickle t;
	warble_client    *alice, *mallory;
	char              tok_a[128], tok_m[128];
	size_t            plen;
	char             *png = hs_png(&plen);
	pthread_t         th;
	ht_res            r;
	int               fd, held[3], refused = -1;

	cr_assert_eq(hs_start(&hc, NULL), 0, "cluster did not start");
	cr_assert_not_null(alice = hs_session(&hc, "hs_up_alice", "password-a"));
	cr_assert_not_null(mallory = hs_session(&hc, "hs_up_mallory", "password-m"));
	snprintf(tok_a, sizeof(tok_a), "%s", warble_token(alice));
	snprintf(tok_m, sizeof(tok_m), "%s", warble_token(mallory));

	/* an anonymous upload and one with a made-up token: 401 from the head, closed */
	cr_assert_geq(fd = hs_trickle_open(hc.port[HS_HTTP], NULL), 0);
	cr_assert_eq(hs_refused(fd, "UNAUTHORIZED"), 401);
	close(fd);
	cr_assert_geq(fd = hs_trickle_open(hc.port[HS_HTTP], "not-a-token"), 0);
	cr_assert_eq(hs_refused(fd, "UNAUTHORIZED"), 401);
	close(fd);

	/* the attack, kept up in the background */
	t.port = hc.port[HS_HTTP];
	cr_assert_eq(pthread_create(&th, NULL, hs_trickle_run, &t), 0);
	for (long long end = wbt_now_ms() + wbt_ms(5000);
	     atomic_load(&t.connects) < 2 * HS_UP_ANON && wbt_now_ms() < end; wbt_sleep_ms(50)) {
	} /* each connected, was answered, and connected again */

	/* a logged-in user trickling 3 uploads: two are held, one is refused */
	for (int k = 0; k < 3; k++) {
		cr_assert_geq(held[k] = hs_trickle_open(hc.port[HS_HTTP], tok_m), 0);
	}
	for (long long end = wbt_now_ms() + wbt_ms(10000); refused < 0 && wbt_now_ms() < end;) {
		struct pollfd pf[3];
		for (int k = 0; k < 3; k++) {
			pf[k] = (struct pollfd) { .fd = held[k], .events = POLLIN };
		}
		if (poll(pf, 3, 100) > 0) {
			for (int k = 0; k < 3 && refused < 0; k++) {
				if (pf[k].revents != 0) {
					refused = k;
				}
			}
		}
	}
	cr_assert_geq(refused, 0, "a user's third trickling upload was not refused");
	cr_assert_eq(hs_refused(held[refused], "RATE_LIMITED"), 429);
	close(held[refused]);
	held[refused] = -1;

	/* her two are held (within their 10 s body deadline): a whole upload of hers is
	 * refused too */
	cr_assert_eq(hs_upload(tok_m, png, plen, &r), 429, "%d %s", r.status, r.body);
	ht_res_free(&r);
	for (int k = 0; k < 3; k++) {
		struct pollfd pf = { .fd = held[k], .events = POLLIN };
		cr_assert(held[k] < 0 || poll(&pf, 1, 0) == 0, "a held upload was answered");
	}

	/* a real upload, while all of it goes on */
	cr_assert_eq(
	    hs_upload(tok_a, png, plen, &r), 201, "upload under attack: %d %s", r.status, r.body);
	ht_res_free(&r);
	cr_assert_eq(hs_upload(tok_a, png, plen, &r), 201, "%d %s", r.status, r.body);
	ht_res_free(&r);

	/* one of hers goes mid-body: its slot comes back */
	for (int k = 0; k < 3; k++) {
		if (held[k] >= 0) {
			close(held[k]);
			held[k] = -1;
			break;
		}
	}
	for (long long end = wbt_now_ms() + wbt_ms(10000);; wbt_sleep_ms(50)) {
		int st = hs_upload(tok_m, png, plen, &r);
		ht_res_free(&r);
		if (st == 201) {
			break;
		}
		cr_assert_eq(st, 429, "upload after a slot was given back: %d", st);
		cr_assert_lt(wbt_now_ms(), end, "the slot of a closed connection never came back");
	}
	atomic_store(&t.stop, 1);
	pthread_join(th, NULL);
	fprintf(stderr, "upload slots: %d anonymous uploads started, %d refused\n",
	    atomic_load(&t.connects), atomic_load(&t.refused));
	cr_assert_geq(
	    atomic_load(&t.refused), HS_UP_ANON, "the anonymous uploads were not refused");
	for (int k = 0; k < 3; k++) {
		if (held[k] >= 0) {
			close(held[k]);
		}
	}
	free(png);
	warble_close(alice);
	warble_close(mallory);
	cr_assert_eq(hs_stop(&hc), 0, "a daemon did not exit cleanly on SIGTERM");
}

/* ---- the msgpack port: a request's deadline, large requests before auth ---- */

/* hs_sp_open connects to the gateway's msgpack port and does the REQ handshake; the fd. */
static int
hs_sp_open(void)
{
	int fd = ht_connect(hc.port[HS_GATEWAY]);

	cr_assert_geq(fd, 0);
	cr_assert_eq(wbt_sp_hello(fd), 0);
	return fd;
}

/* hs_sp_frame encodes req as an SP frame with request id 1 (wbt_sp.h; malloc'd, *n bytes). */
static uint8_t *
hs_sp_frame(const wb_obj *req, size_t *n)
{
	uint8_t *f = wbt_sp_frame(req, 1, n);

	cr_assert_not_null(f);
	return f;
}

/* hs_sp_reply reads one reply within ms: its error name ("" for success), or NULL if none came. */
static const char *
hs_sp_reply(int fd, int ms, char *buf, size_t cap)
{
	wb_obj *rep = NULL;
	char    err[128];
	int     rc = wbt_sp_reply(fd, ms, NULL, &rep, err, sizeof(err));

	if (rc == WB_ETIMEDOUT) {
		return NULL;
	}
	cr_assert_eq(rc, WB_OK, "a bad reply: %s", err);
	snprintf(buf, cap, "%s", wb_str(rep, WB_F_ERR, ""));
	wb_msg_free(rep);
	return buf;
}

/*
 * hs_sp_big makes an upload of 1 MiB of data (op first; the token, if any, before the data) or,
 * publish set, a publish of a 1 MiB text.
 */
static uint8_t *
hs_sp_big(const char *token, bool publish, size_t *n)
{
	static char data[1 << 20];
	wb_obj     *req = wb_request(publish ? WB_OP_PUBLISH : WB_OP_UPLOAD);
	uint8_t    *f;

	memset(data, 'a', sizeof(data));
	if (token != NULL) {
		cr_assert_eq(wb_set_cstr(req, WB_F_TOKEN, token), WB_OK);
	}
	if (publish) {
		cr_assert_eq(wb_set_str(req, WB_F_TEXT, data, sizeof(data)), WB_OK);
	} else {
		cr_assert_eq(wb_set_bin(req, WB_F_DATA, data, sizeof(data)), WB_OK);
	}
	f = hs_sp_frame(req, n);
	wb_msg_free(req);
	return f;
}

/*
 * The SDK's port buffered up to 4 MiB a connection for as long as a
 * client cared to take to send it, before reading the token inside.  Now
 * a request must arrive whole within WARBLE_GATEWAY_REQUEST_TIMEOUT_MS of
 * its first byte, and one over WARBLE_GATEWAY_PREAUTH_MAX (64 KiB) is
 * read on only for an upload whose token, sent before the image, holds:
 * otherwise it is answered from its first bytes.  The SDK's uploads (the
 * token first) work, and idle connections are kept.
 */
Test(hostile, msgpack_port_bounds, .fini = wbt_cleanup, .timeout = 180)
{
	const char    *env[] = { "WARBLE_GATEWAY_REQUEST_TIMEOUT_MS=2000", NULL };
	warble_client *a;
	char           tok[128], err[64];
	uint8_t       *f;
	size_t         n;
	int            fd, idle, slow;
	long long      t0;

	cr_assert_eq(hs_start(&hc, env), 0, "cluster did not start");
	cr_assert_not_null(a = hs_session(&hc, "hs_sp_alice", "password-a"));
	snprintf(tok, sizeof(tok), "%s", warble_token(a));
	idle = hs_sp_open();

	/* a large request without a token, with a made-up one, or not an upload:
	 * answered from its first bytes (64 KiB at most), never held whole */
	static const struct {
		const char *token;
		bool        publish;
		size_t      first;
		const char *want;
	} early[] = {
		{ NULL, false, 70 * 1024, "UNAUTHORIZED" },
		{ "not-a-session-token", false, 4096, "UNAUTHORIZED" },
		{ NULL, true, 4096, "TOO_LARGE" },
	};
	for (size_t i = 0; i < sizeof(early) / sizeof(early[0]); i++) {
		fd = hs_sp_open();
		f = hs_sp_big(early[i].token, early[i].publish, &n);
		cr_assert_eq(ht_send(fd, (const char *)f, early[i].first), 0);
		cr_assert_not_null(hs_sp_reply(fd, wbt_ms(5000), err, sizeof(err)),
		    "case %zu: a large request was not answered from its first %zu bytes", i,
		    early[i].first);
		cr_assert_str_eq(err, early[i].want, "case %zu", i);
		/* the rest is read and dropped; the connection serves on */
		cr_assert_eq(ht_send(fd, (const char *)f + early[i].first, n - early[i].first), 0);
		wb_obj  *ping = wb_request(WB_OP_PING);
		uint8_t *pf = hs_sp_frame(ping, &n);
		cr_assert_eq(ht_send(fd, (const char *)pf, n), 0);
		cr_assert_not_null(hs_sp_reply(fd, wbt_ms(5000), err, sizeof(err)), "case %zu", i);
		cr_assert_str_eq(err, "", "case %zu: ping after a refused request: %s", i, err);
		wb_msg_free(ping);
		free(pf);
		free(f);
		close(fd);
	}

	/* an admitted upload trickled, and a small request trickled: cut off */
	wb_obj  *sq = wb_request(WB_OP_PING);
	size_t   sn;
	uint8_t *sf = hs_sp_frame(sq, &sn);
	f = hs_sp_big(tok, false, &n);
	fd = hs_sp_open();
	slow = hs_sp_open();
	cr_assert_eq(ht_send(fd, (const char *)f, 4096), 0);
	t0 = wbt_now_ms();
	bool cut = false;
	for (size_t k = 0; !cut && wbt_now_ms() - t0 < wbt_ms(20000); k++) {
		hs_send_nb(fd, f + 4096 + k, 1);
		if (k + 1 < sn) { /* one byte a round: it would be whole after sn rounds */
			hs_send_nb(slow, sf + k, 1);
		}
		cut = wbt_sp_closed(fd, 200);
	}
	fprintf(
	    stderr, "msgpack port: a trickled upload cut off after %lld ms\n", wbt_now_ms() - t0);
	cr_assert(cut, "a trickled upload was never cut off");
	cr_assert(wbt_sp_closed(slow, wbt_ms(5000)), "a trickled small request was never cut off");
	close(fd);
	close(slow);
	wb_msg_free(sq);
	free(sf);
	free(f);

	/* the SDK's upload over 64 KiB, on a fresh connection as on the logged-in one */
	size_t          plen;
	unsigned char  *png = wbt_png(400, 300, 3, &plen);
	warble_media_t *m = NULL;
	warble_client  *fresh;
	cr_assert_gt(plen, 64 * 1024);
	cr_assert_eq(warble_upload(a, png, plen, &m), WARBLE_OK, "%s", warble_errmsg(a));
	cr_assert(m->width == 400 && m->height == 300 && m->size > 0, "the image, decoded");
	warble_media_free(m);
	cr_assert_not_null(fresh = hs_client(&hc));
	cr_assert_eq(warble_set_token(fresh, tok), WARBLE_OK);
	cr_assert_eq(warble_upload(fresh, png, plen, &m), WARBLE_OK, "%s", warble_errmsg(fresh));
	warble_media_free(m);
	warble_close(fresh);
	free(png);

	/* the idle connection, idle far longer than the deadline, is served */
	wb_obj  *ping = wb_request(WB_OP_PING);
	uint8_t *pf = hs_sp_frame(ping, &n);
	cr_assert_eq(ht_send(idle, (const char *)pf, n), 0);
	cr_assert_not_null(hs_sp_reply(idle, wbt_ms(5000), err, sizeof(err)), "idle connection");
	cr_assert_str_eq(err, "");
	wb_msg_free(ping);
	free(pf);
	close(idle);
	warble_close(a);
	cr_assert_eq(hs_stop(&hc), 0, "a daemon did not exit cleanly on SIGTERM");
}
