/*
 * keepalive_test.c - HTTP keep-alive connections driven as busy clients
 * drive them: 16 connections, each sending its next request as soon as
 * the last was answered, a mix of GET /api/v1/home, GET /healthz and
 * POST /api/v1/posts.  Every request must be answered: a connection that
 * closes with a request in it is counted unanswered (the gateway once shut
 * busy connections as idle), and every post the author's timeline holds
 * must have been answered (a post saved but never answered makes a
 * retrying client publish it twice).
 *
 * WARBLE_KEEPALIVE_REQUESTS sets the total (default 100,000 here; make
 * soak runs 500,000).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>

#include "hs.h"

#define KA_CONNS    16
#define KA_DEFAULT  100000
#define KA_PASSWORD "password-0000"

static hs_cluster hc;

typedef struct ka_conn {
	int            id;
	long           requests;
	char           token[128];
	warble_client *c;
	long           answered, unanswered, posts_ok, posts_unanswered, reconnects, bad_status;
} ka_conn;

/* ka_request formats request i of a connection into buf; *is_post tells whether it publishes. */
static int
ka_request(char *buf, size_t n, const ka_conn *k, long i, bool *is_post)
{
	int  port = hc.port[HS_HTTP];
	long kind = i % 10;

	*is_post = kind == 9;
	if (kind < 6) {
		return snprintf(buf, n,
		    "GET /api/v1/home?limit=20 HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
		    "Authorization: Bearer %s\r\n\r\n",
		    port, k->token);
	}
	if (kind < 9) {
		return snprintf(
		    buf, n, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port);
	}
	char body[64];
	int  bl = snprintf(body, sizeof(body), "{\"text\":\"keep-alive %d/%ld\"}", k->id, i);
	return snprintf(buf, n,
	    "POST /api/v1/posts HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n"
	    "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
	    port, k->token, bl, body);
}

static void *
ka_run(void *arg)
{
	ka_conn *k = arg;
	int      fd = -1;

	for (long i = 0; i < k->requests; i++) {
		char   req[1024];
		bool   is_post;
		ht_res r;
		int    n = ka_request(req, sizeof(req), k, i, &is_post);

		if (fd < 0 && (fd = ht_connect(hc.port[HS_HTTP])) < 0) {
			k->unanswered++;
			continue;
		}
		if (ht_send(fd, req, (size_t)n) != 0 ||
		    ht_read_response(fd, &r, HT_DEADLINE_MS) != 0 || r.status == 0) {
			k->unanswered++;
			k->posts_unanswered += is_post;
			close(fd);
			fd = -1;
			k->reconnects++;
			continue;
		}
		k->answered++;
		if (is_post && r.status == 201) {
			k->posts_ok++;
		} else if (r.status != 200 && !(is_post && r.status == 201)) {
			k->bad_status++;
		}
		if (strcasestr(r.head, "\r\nConnection: close") != NULL) {
			close(fd); /* the server may close after saying so: not a lost request */
			fd = -1;
		}
		ht_res_free(&r);
	}
	if (fd >= 0) {
		close(fd);
	}
	return NULL;
}

/* ka_timeline_count counts the posts of name's own timeline. */
static long
ka_timeline_count(warble_client *c, const char *name)
{
	uint64_t before = 0;
	long     n = 0;

	for (int page = 0; page < 100000; page++) {
		warble_posts_t *p = NULL;
		int             rc = warble_timeline(c, name, before, 100, &p);
		if (rc != WARBLE_OK) {
			cr_log_error("timeline of %s: %s", name, warble_errmsg(c));
			return -1;
		}
		n += (long)p->n;
		before = p->next;
		warble_posts_free(p);
		if (before == 0) {
			return n;
		}
	}
	return -1;
}

Test(keepalive, every_request_answered, .timeout = 1800)
{
	const char *env = getenv("WARBLE_KEEPALIVE_REQUESTS");
	long        total = env != NULL ? atol(env) : KA_DEFAULT;
	ka_conn     k[KA_CONNS];
	pthread_t   th[KA_CONNS];
	long        answered = 0, unanswered = 0, posts_ok = 0, posts_lost = 0, bad = 0, rec = 0;

	cr_assert_gt(total, 0, "WARBLE_KEEPALIVE_REQUESTS=%s", env);
	cr_assert_eq(hs_start(&hc, NULL), 0, "cluster did not start");
	for (int i = 0; i < KA_CONNS; i++) {
		char name[32];
		memset(&k[i], 0, sizeof(k[i]));
		k[i].id = i;
		k[i].requests = total / KA_CONNS;
		snprintf(name, sizeof(name), "ka_%02d", i);
		k[i].c = hs_session(&hc, name, KA_PASSWORD);
		cr_assert_not_null(k[i].c);
		snprintf(k[i].token, sizeof(k[i].token), "%s", warble_token(k[i].c));
	}
	long long t0 = wbt_now_ms();
	for (int i = 0; i < KA_CONNS; i++) {
		cr_assert_eq(pthread_create(&th[i], NULL, ka_run, &k[i]), 0);
	}
	for (int i = 0; i < KA_CONNS; i++) {
		pthread_join(th[i], NULL);
		answered += k[i].answered;
		unanswered += k[i].unanswered;
		posts_ok += k[i].posts_ok;
		posts_lost += k[i].posts_unanswered;
		bad += k[i].bad_status;
		rec += k[i].reconnects;
	}
	long long ms = wbt_now_ms() - t0;
	cr_log_info("keep-alive: %ld requests over %d connections in %lld ms (%.0f/s): %ld "
	            "answered, %ld unanswered (%ld of them posts), %ld other than 2xx, %ld "
	            "reconnects",
	    answered + unanswered, KA_CONNS, ms, (answered + unanswered) * 1000.0 / (ms ? ms : 1),
	    answered, unanswered, posts_lost, bad, rec);
	cr_expect_eq(unanswered, 0, "%ld of %ld requests got no reply (%ld posts)", unanswered,
	    answered + unanswered, posts_lost);
	cr_expect_eq(bad, 0, "%ld replies were not 2xx", bad);

	/* every post stored was answered: none saved behind a closed connection */
	for (int i = 0; i < KA_CONNS; i++) {
		char name[32];
		snprintf(name, sizeof(name), "ka_%02d", i);
		long stored = ka_timeline_count(k[i].c, name);
		cr_expect_eq(stored, k[i].posts_ok, "%s: %ld posts stored, %ld answered 201", name,
		    stored, k[i].posts_ok);
		warble_close(k[i].c);
	}
	cr_expect_eq(hs_stop(&hc), 0, "a daemon did not exit cleanly");
}
