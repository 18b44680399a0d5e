/*
 * http_test.c - the gateway's HTTP/JSON API against a real cluster
 * (wbt_cluster, HTTP on a free 127.0.0.1 port), through a plain-socket
 * client (ht.h): every endpoint, every error status the API can give
 * today, nng's limits (body, header line, slow body, chunked), HEAD and
 * keep-alive, /healthz, /readyz, the admin ports' /metrics (none on the
 * public port), and the curl examples of
 * docs/http-api.md run for real with curl.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <signal.h>
#include <sys/wait.h>

#include "ht_api.h"

/* ht_raw_str is ht_raw for a C string. */
static int
ht_raw_str(int p, const char *s, ht_res *r, int timeout_ms)
{
	return ht_raw(p, s, strlen(s), r, timeout_ms);
}

/* fail_says checks an error reply's status, name and that its message holds needle. */
static void
fail_says(int want, const char *name, const char *needle, const char *method, const char *path,
    const char *token, const char *body)
{
	json_t     *j = call(want, method, path, token, body);
	const char *msg = json_string_value(json_object_get(j, "message"));

	cr_assert_str_eq(
	    json_string_value(json_object_get(j, "error")), name, "%s %s", method, path);
	cr_assert(msg != NULL && strstr(msg, needle) != NULL, "%s %s: message \"%s\", want \"%s\"",
	    method, path, msg, needle);
	cr_assert_null(strstr(msg, "JSON_"), "%s %s: names a library flag: %s", method, path, msg);
	json_decref(j);
}

Test(http, endpoints, .fini = wbt_cleanup, .timeout = 120)
{
	const char *a, *b;
	char        path[256], id[3][32];
	json_t     *j, *posts;

	start(NULL);
	a = user("alice", 0);
	b = user("bob", 1);

	j = call(200, "GET", "/api/v1/me", a, NULL);
	cr_assert_str_eq(str(j, "name"), "alice");
	cr_assert_eq(json_integer_value(json_object_get(j, "following")), 0);
	json_decref(j);
	j = call(
	    200, "PATCH", "/api/v1/me", a, "{\"display\":\"Alice A.\",\"bio\":\"hi \\u00e9\"}");
	cr_assert_str_eq(str(j, "display"), "Alice A.");
	cr_assert_str_eq(str(j, "bio"), "hi \xc3\xa9");
	json_decref(j);

	j = call(200, "PUT", "/api/v1/me/following/bob", a, NULL);
	json_decref(j);
	j = call(200, "GET", "/api/v1/users/bob", a, NULL);
	cr_assert(json_is_true(json_object_get(j, "followed")));
	cr_assert_eq(json_integer_value(json_object_get(j, "followers")), 1);
	json_decref(j);
	j = call(200, "GET", "/api/v1/users/bob", NULL, NULL); /* anonymous: no "followed" */
	cr_assert_null(json_object_get(j, "followed"));
	json_decref(j);
	j = call(200, "GET", "/api/v1/users/alice/following?limit=10", NULL, NULL);
	cr_assert_str_eq(str(json_array_get(json_object_get(j, "users"), 0), "name"), "bob");
	json_decref(j);
	j = call(200, "GET", "/api/v1/users/bob/fans", NULL, NULL);
	cr_assert_str_eq(str(json_array_get(json_object_get(j, "users"), 0), "name"), "alice");
	json_decref(j);

	for (int i = 0; i < 3; i++) {
		char body[64];
		snprintf(body, sizeof(body), "{\"text\":\"post %d\"}", i);
		j = call(201, "POST", "/api/v1/posts", b, body);
		snprintf(id[i], sizeof(id[i]), "%s", str(j, "id")); /* ids are strings */
		cr_assert_gt(strlen(id[i]), 15);
		json_decref(j);
	}
	/* a user's posts, newest first, paged with before= */
	j = call(200, "GET", "/api/v1/users/bob/posts?limit=2", NULL, NULL);
	posts = json_object_get(j, "posts");
	cr_assert_eq(json_array_size(posts), 2);
	cr_assert_str_eq(str(json_array_get(posts, 0), "id"), id[2]);
	cr_assert_str_eq(str(json_array_get(posts, 0), "author_name"), "bob");
	snprintf(path, sizeof(path), "/api/v1/users/bob/posts?limit=2&before=%s", str(j, "next"));
	json_decref(j);
	j = call(200, "GET", path, NULL, NULL);
	cr_assert_eq(json_array_size(json_object_get(j, "posts")), 1);
	cr_assert_str_eq(str(json_array_get(json_object_get(j, "posts"), 0), "id"), id[0]);
	json_decref(j);
	j = call(200, "GET", "/api/v1/users/bob/posts?since=0&until=1", NULL, NULL);
	cr_assert_eq(json_array_size(json_object_get(j, "posts")), 0);
	json_decref(j);

	/* the home timeline, paged */
	j = home_wait(a, 3);
	cr_assert_str_eq(str(json_array_get(json_object_get(j, "posts"), 0), "text"), "post 2");
	json_decref(j);
	j = call(200, "GET", "/api/v1/home?limit=1", a, NULL);
	snprintf(path, sizeof(path), "/api/v1/home?limit=5&before=%s", str(j, "next"));
	json_decref(j);
	j = call(200, "GET", path, a, NULL);
	cr_assert_eq(json_array_size(json_object_get(j, "posts")), 2);
	json_decref(j);

	/* bob's own posts are in his home */
	j = home_wait(b, 3);
	cr_assert_str_eq(str(json_array_get(json_object_get(j, "posts"), 0), "author_name"), "bob");
	json_decref(j);

	/* one post's own page: anyone's to read, as timelines show it; gone once deleted */
	snprintf(path, sizeof(path), "/api/v1/posts/%s", id[1]);
	j = call(200, "GET", path, NULL, NULL);
	cr_assert_str_eq(str(j, "id"), id[1]);
	cr_assert_str_eq(str(j, "text"), "post 1");
	cr_assert_str_eq(str(j, "author_name"), "bob");
	cr_assert_gt(json_integer_value(json_object_get(j, "time")), 0);
	cr_assert_null(json_object_get(j, "ok"));
	json_decref(j);
	json_decref(call(200, "GET", path, a, NULL)); /* a token is taken, not needed */

	json_decref(call(200, "DELETE", path, b, NULL));
	fail_with(404, "NO_SUCH_POST", "GET", path, NULL, NULL);
	j = call(200, "GET", "/api/v1/users/bob/posts", NULL, NULL);
	cr_assert_eq(json_array_size(json_object_get(j, "posts")), 2);
	json_decref(j);
	json_decref(home_wait(b, 2)); /* and gone from his home */

	json_decref(call(200, "DELETE", "/api/v1/me/following/bob", a, NULL));
	j = home_wait(a, 0);
	json_decref(j);
	j = call(200, "GET", "/api/v1/users/alice", NULL, NULL);
	cr_assert_eq(json_integer_value(json_object_get(j, "following")), 0);
	json_decref(j);

	json_decref(call(200, "DELETE", "/api/v1/sessions", a, NULL));
	fail_with(401, "UNAUTHORIZED", "GET", "/api/v1/me", a, NULL);

	/* the web page */
	{
		ht_res r;
		char   ct[128];
		cr_assert_eq(ht_request(port, "GET", "/", NULL, NULL, &r), 0);
		cr_assert_eq(r.status, 200);
		cr_assert_not_null(strstr(r.body, "<title>Warble</title>"));
		cr_assert_str_eq(
		    ht_header(&r, "Content-Type", ct, sizeof(ct)), "text/html; charset=utf-8");
		ht_res_free(&r);
		cr_assert_eq(ht_request(port, "GET", "/app.js", NULL, NULL, &r), 0);
		cr_assert_eq(r.status, 200);
		ht_res_free(&r);
	}
	cr_assert_eq(wbt_cluster_stop(&cl, 15000), 0);
}

Test(http, errors, .fini = wbt_cleanup, .timeout = 120)
{
	const char *a, *b;
	char        path[128], big[1200], ok[1200];
	json_t     *j;
	ht_res      r;
	char        hv[128];

	start_as(NULL, WBT_FIVE); /* content alone goes, at the end */
	a = user("alice", 0);
	b = user("bob", 1);

	/* 400: malformed JSON, wrong types, unknown or misplaced fields, bad values */
	fail_with(400, "BAD_MESSAGE", "POST", "/api/v1/posts", b, "{\"text\":");
	fail_with(400, "BAD_MESSAGE", "POST", "/api/v1/posts", b, "[1,2]");
	fail_with(400, "BAD_MESSAGE", "POST", "/api/v1/posts", b, "{\"text\":5}");
	fail_with(400, "BAD_MESSAGE", "POST", "/api/v1/users", NULL,
	    "{\"name\":\"x\",\"password\":null}");
	fail_with(
	    400, "INVALID", "POST", "/api/v1/posts", b, "{\"text\":\"a\",\"colour\":\"red\"}");
	fail_with(400, "INVALID", "POST", "/api/v1/posts", b, "{\"text\":\"a\",\"token\":\"t\"}");
	fail_with(400, "BAD_TEXT", "POST", "/api/v1/posts", b, "{}"); /* no text, no image */
	/* only white space: spaces, tabs, newlines, NBSP, ideographic and zero-width spaces */
	fail_with(400, "BAD_TEXT", "POST", "/api/v1/posts", b, "{\"text\":\"   \"}");
	fail_says(400, "BAD_TEXT", "only white space", "POST", "/api/v1/posts", b,
	    "{\"text\":\" \\t\\r\\n\\u00a0\\u3000\\u200b\\ufeff\"}");
	fail_with(400, "BAD_MESSAGE", "DELETE", "/api/v1/posts/abc", b, NULL);
	fail_with(400, "BAD_MESSAGE", "GET", "/api/v1/home?limit=ten", a, NULL);
	fail_with(400, "BAD_MESSAGE", "GET", "/api/v1/home?before=-1", a, NULL);
	fail_with(400, "INVALID", "GET", "/api/v1/home?limit=0", a, NULL);
	/* messages that say what is wrong: the range, the field's path, the rule */
	fail_says(400, "INVALID", "limit must be 1 to 100", "GET", "/api/v1/home?limit=0", a, NULL);
	fail_says(400, "INVALID", "limit must be 1 to 100", "GET",
	    "/api/v1/home?limit=99999999999999999999999", a, NULL);
	fail_says(400, "BAD_MESSAGE", "field \"images[0].media\" must be a string", "POST",
	    "/api/v1/posts", b, "{\"text\":\"x\",\"images\":[{\"media\":123}]}");
	fail_says(400, "BAD_MESSAGE", "strings may not contain NUL (\\u0000)", "POST",
	    "/api/v1/posts", b, "{\"text\":\"a\\u0000b\"}");
	fail_with(400, "INVALID", "GET", "/api/v1/home?colour=red", a, NULL);
	fail_with(400, "INVALID", "GET", "/api/v1/home", a, "{\"limit\":1}");
	fail_with(400, "BAD_USERNAME", "POST", "/api/v1/users", NULL,
	    "{\"name\":\"No Way\",\"password\":\"correct-horse\"}");
	fail_with(400, "BAD_PASSWORD", "POST", "/api/v1/users", NULL,
	    "{\"name\":\"carol\",\"password\":\"short\"}");
	/* the bounds docs/http-api.md gives: 8 to 1,024 bytes */
	char pw[1200];
	snprintf(pw, sizeof(pw), "{\"name\":\"carol\",\"password\":\"%01025d\"}", 7);
	fail_says(400, "BAD_PASSWORD", "8 to 1024 bytes", "POST", "/api/v1/users", NULL, pw);
	snprintf(pw, sizeof(pw), "{\"name\":\"carol\",\"password\":\"%01024d\"}", 7);
	json_decref(call(201, "POST", "/api/v1/users", NULL, pw));
	snprintf(pw, sizeof(pw), "{\"name\":\"dora\",\"password\":\"%08d\"}", 7);
	json_decref(call(201, "POST", "/api/v1/users", NULL, pw));
	fail_with(400, "FOLLOW_SELF", "PUT", "/api/v1/me/following/alice", a, NULL);
	/* 280 code points fit (each 2 bytes here), 281 do not */
	strcpy(ok, "{\"text\":\"");
	for (int i = 0; i < 280; i++) {
		strcat(ok, "\xc3\xa9");
	}
	strcat(ok, "\"}");
	json_decref(call(201, "POST", "/api/v1/posts", b, ok));
	snprintf(big, sizeof(big), "%.*sx\"}", (int)strlen(ok) - 2, ok);
	fail_with(400, "TEXT_TOO_LONG", "POST", "/api/v1/posts", b, big);

	/* 401: no token, a bad one, another scheme, wrong password */
	fail_with(401, "UNAUTHORIZED", "GET", "/api/v1/home", NULL, NULL);
	fail_with(401, "UNAUTHORIZED", "POST", "/api/v1/posts", "not-a-token", "{\"text\":\"x\"}");
	fail_with(401, "BAD_CREDENTIALS", "POST", "/api/v1/sessions", NULL,
	    "{\"name\":\"alice\",\"password\":\"wrong-horse\"}");
	cr_assert_eq(ht_raw_str(port,
	                 "GET /api/v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Basic YTpi\r\n"
	                 "Connection: close\r\n\r\n",
	                 &r, HT_DEADLINE_MS),
	    0);
	cr_assert_eq(r.status, 401);
	cr_assert_not_null(ht_header(&r, "WWW-Authenticate", hv, sizeof(hv)));
	ht_res_free(&r);

	/* 403: not yours */
	j = call(201, "POST", "/api/v1/posts", b, "{\"text\":\"mine\"}");
	snprintf(path, sizeof(path), "/api/v1/posts/%s", str(j, "id"));
	json_decref(j);
	fail_with(403, "FORBIDDEN", "DELETE", path, a, NULL);

	/* 404: unknown path, user, post */
	fail_with(404, "NOT_FOUND", "GET", "/api/v1/nothing", NULL, NULL);
	fail_with(404, "NOT_FOUND", "GET", "/api/v2/home", NULL, NULL);
	fail_with(404, "NOT_FOUND", "GET", "/no-such-file.html", NULL, NULL);
	/* the figures are on the admin port, not the public one */
	fail_with(404, "NOT_FOUND", "GET", "/metrics", NULL, NULL);
	fail_with(404, "NOT_FOUND", "GET", "/metrics/cluster", NULL, NULL);
	fail_with(404, "NO_SUCH_USER", "GET", "/api/v1/users/nobody", NULL, NULL);
	fail_with(404, "NO_SUCH_USER", "PUT", "/api/v1/me/following/nobody", a, NULL);
	fail_with(404, "NO_SUCH_POST", "DELETE", "/api/v1/posts/12345", a, NULL);
	fail_with(404, "NO_SUCH_POST", "GET", "/api/v1/posts/12345", NULL, NULL);
	fail_with(400, "BAD_MESSAGE", "GET", "/api/v1/posts/twelve", NULL, NULL);
	fail_with(400, "INVALID", "GET", "/api/v1/posts/0", NULL, NULL);

	/* 405 with Allow */
	cr_assert_eq(ht_request(port, "POST", "/api/v1/me", a, "{}", &r), 0);
	cr_assert_eq(r.status, 405);
	cr_assert_str_eq(ht_header(&r, "Allow", hv, sizeof(hv)), "GET, HEAD, PATCH, DELETE");
	ht_res_free(&r);
	cr_assert_eq(ht_request(port, "DELETE", "/healthz", NULL, NULL, &r), 0);
	cr_assert_eq(r.status, 405);
	cr_assert_str_eq(ht_header(&r, "Allow", hv, sizeof(hv)), "GET, HEAD");
	ht_res_free(&r);

	/* 409 */
	fail_with(409, "NAME_TAKEN", "POST", "/api/v1/users", NULL,
	    "{\"name\":\"alice\",\"password\":\"correct-horse\"}");

	/* 413: a body over 64 KiB, announced or sent */
	{
		size_t n = 70 * 1024;
		char  *body = malloc(n + 1);
		cr_assert_not_null(body);
		memset(body, 'a', n);
		body[n] = '\0';
		fail_with(413, "TOO_LARGE", "POST", "/api/v1/posts", b, body);
		free(body);
	}
	cr_assert_eq(
	    ht_raw_str(port,
	        "POST /api/v1/posts HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n", &r,
	        HT_DEADLINE_MS),
	    0);
	cr_assert_eq(r.status, 413);
	ht_res_free(&r);

	/* 503: a backend down; /readyz names it */
	j = call(200, "GET", "/readyz", NULL, NULL);
	cr_assert(json_is_true(json_object_get(j, "ready")));
	json_decref(j);
	cr_assert_neq(wbt_stop(cl.content, SIGKILL, 10000), -1);
	fail_with(503, "UNAVAILABLE", "POST", "/api/v1/posts", b, "{\"text\":\"x\"}");
	j = call(503, "GET", "/readyz", NULL, NULL);
	cr_assert(json_is_false(json_object_get(j, "ready")));
	cr_assert_str_eq(
	    json_string_value(json_array_get(json_object_get(j, "failed"), 0)), "content/0");
	cr_assert_eq(json_array_size(json_object_get(j, "failed")), 1);
	json_decref(j);
	j = call(200, "GET", "/healthz", NULL, NULL);
	json_decref(j);
}

Test(http, timeout_504, .fini = wbt_cleanup, .timeout = 120)
{
	const char *env[] = { "WARBLE_GATEWAY_TIMEOUT_MS=1500", NULL };
	const char *b;

	start_as(env, WBT_FIVE); /* content alone is paused */
	b = user("bob", 1);
	cr_assert_eq(wbt_pause(cl.content), 0);
	fail_with(504, "TIMEOUT", "POST", "/api/v1/posts", b, "{\"text\":\"x\"}");
	cr_assert_eq(wbt_resume(cl.content), 0);
	json_decref(call(201, "POST", "/api/v1/posts", b, "{\"text\":\"back\"}"));
	cr_assert_eq(wbt_cluster_stop(&cl, 15000), 0);
}

Test(http, protocol_limits, .fini = wbt_cleanup, .timeout = 120)
{
	ht_res    r;
	char     *req;
	size_t    n = 0;
	int       fd;
	long long t0;

	start(NULL);
	/* HEAD: headers and length, no body */
	cr_assert_eq(
	    ht_raw_str(port, "HEAD /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", &r,
	        HT_DEADLINE_MS),
	    0);
	cr_assert_eq(r.status, 200);
	cr_assert_eq(r.len, 0);
	ht_res_free(&r);

	/* keep-alive: two requests on one connection */
	fd = ht_connect(port);
	cr_assert_geq(fd, 0);
	for (int i = 0; i < 2; i++) {
		const char *q = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
		cr_assert_eq(ht_send(fd, q, strlen(q)), 0);
		cr_assert_eq(ht_read_response(fd, &r, HT_DEADLINE_MS), 0);
		cr_assert_eq(r.status, 200, "request %d on one connection", i);
		ht_res_free(&r);
	}
	close(fd);
	/* an HTTP/1.0 client that asks to keep the connection is told so, and may */
	fd = ht_connect(port);
	cr_assert_geq(fd, 0);
	for (int i = 0; i < 2; i++) {
		const char *q = "GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n";
		char        hv[32];
		cr_assert_eq(ht_send(fd, q, strlen(q)), 0);
		cr_assert_eq(ht_read_response(fd, &r, HT_DEADLINE_MS), 0);
		cr_assert_eq(r.status, 200, "HTTP/1.0 request %d on one connection", i);
		cr_assert_not_null(ht_header(&r, "Connection", hv, sizeof(hv)));
		cr_assert_str_eq(hv, "keep-alive");
		ht_res_free(&r);
	}
	close(fd);

	/* chunked bodies are refused */
	cr_assert_eq(
	    ht_raw_str(port,
	        "POST /api/v1/users HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
	        "2\r\n{}\r\n0\r\n\r\n",
	        &r, HT_DEADLINE_MS),
	    0);
	cr_assert_eq(r.status, 400);
	ht_res_free(&r);

	/* a request head over 8 KiB, in one line or in many short ones: 431 */
	req = malloc(20000);
	cr_assert_not_null(req);
	for (int many = 0; many < 2; many++) {
		n = (size_t)sprintf(req, "GET /healthz HTTP/1.1\r\nHost: x\r\n");
		for (int h = 0; h < (many ? 12 : 1); h++) {
			n += (size_t)sprintf(req + n, "X-Big-%d: ", h);
			memset(req + n, 'a', many ? 800 : 9000);
			n += many ? 800 : 9000;
			n += (size_t)sprintf(req + n, "\r\n");
		}
		n += (size_t)sprintf(req + n, "Connection: close\r\n\r\n");
		cr_assert_eq(ht_raw(port, req, n, &r, HT_DEADLINE_MS), 0);
		cr_assert_eq(r.status, 431, "a %s head of %zu bytes: status %d",
		    many ? "many-line" : "one-line", n, r.status);
		ht_res_free(&r);
	}
	free(req);

	/* odd bytes in header values: tabs and bytes >= 0x80 are allowed, a control byte is a 400 */
	static const struct {
		const char *value;
		int         status;
	} odd[] = {
		{ "caf\xc3\xa9", 200 },   /* User-Agent: cafe with an accent, UTF-8 */
		{ "a\tb", 200 },          /* a tab inside */
		{ "\tleading tab", 200 }, /* leading and trailing white space */
		{ "latin-1 \xe9", 200 },  /* obs-text that is not UTF-8 */
		{ "a\x01b", 400 },        /* a control byte */
		{ "a\x7f", 400 },         /* DEL */
	};
	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		char q[256];
		snprintf(q, sizeof(q),
		    "GET /healthz HTTP/1.1\r\nHost: x\r\nUser-Agent: %s\r\nConnection: "
		    "close\r\n\r\n",
		    odd[i].value);
		cr_assert_eq(ht_raw_str(port, q, &r, HT_DEADLINE_MS), 0);
		cr_assert_eq(r.status, odd[i].status, "header value %zu: status %d, want %d", i,
		    r.status, odd[i].status);
		ht_res_free(&r);
	}

	/* a body that never finishes: the connection is dropped after the body deadline (10 s) */
	t0 = wbt_now_ms();
	cr_assert_eq(
	    ht_raw_str(port,
	        "POST /api/v1/users HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"na", &r,
	        25000),
	    0, "the slow body was never cut off");
	cr_assert_eq(r.status, 0);
	cr_assert_geq(wbt_now_ms() - t0, 8000);
	ht_res_free(&r);

	json_decref(call(200, "GET", "/healthz", NULL, NULL));
	cr_assert_eq(wbt_cluster_stop(&cl, 15000), 0);
}

/* metric_value finds the value of the sample line starting with prefix; -1 if absent. */
static double
metric_value(const char *text, const char *prefix)
{
	for (const char *p = text; p != NULL && *p != '\0';
	     p = strchr(p, '\n'), p = p ? p + 1 : p) {
		if (strncmp(p, prefix, strlen(prefix)) == 0 && p[strlen(prefix)] == ' ') {
			return strtod(p + strlen(prefix) + 1, NULL);
		}
	}
	return -1;
}

/*
 * admin_get GETs path on an admin port and returns the body of a 200
 * (caller frees), checking the content type of /metrics pages.
 */
static char *
admin_get(int admin, const char *path)
{
	ht_res r;
	char   ct[128], *body;

	cr_assert_eq(
	    ht_request(admin, "GET", path, NULL, NULL, &r), 0, "GET %s on port %d", path, admin);
	cr_assert_eq(r.status, 200, "GET %s on port %d: %d %s", path, admin, r.status, r.body);
	if (strncmp(path, "/metrics", 8) == 0) {
		cr_assert_str_eq(ht_header(&r, "Content-Type", ct, sizeof(ct)),
		    "text/plain; version=0.0.4; charset=utf-8");
	}
	body = r.body;
	r.body = NULL;
	ht_res_free(&r);
	return body;
}

/* admin_port finds the admin port of the daemon serving url (its stats' metrics_port). */
static int
admin_port(const char *url)
{
	int p = wbt_metrics_port(url);

	cr_assert_gt(p, 0, "no admin port in the stats of %s", url);
	return p;
}

/* every sample line of a /metrics body is NAME{LABELS} VALUE, labelled service and shard */
static void
samples_well_formed(const char *text)
{
	char *copy = strdup(text), *save = NULL;

	cr_assert_not_null(copy);
	for (char *line = strtok_r(copy, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		char  *sp = strrchr(line, ' ');
		double v;
		char  *end;

		if (line[0] == '#') {
			continue;
		}
		cr_assert_not_null(sp, "bad line: %s", line);
		v = strtod(sp + 1, &end);
		cr_assert(*end == '\0' && v >= 0, "bad value: %s", line);
		cr_assert_not_null(strstr(line, "{service=\""), "no service label: %s", line);
		cr_assert_not_null(strstr(line, "\",shard=\""), "no shard label: %s", line);
	}
	free(copy);
}

Test(http, metrics, .fini = wbt_cleanup, .timeout = 120)
{
	const char *a, *b;
	char       *m;
	int         gw, in;

	start(NULL);
	a = user("alice", 0);
	b = user("bob", 1);
	json_decref(call(200, "PUT", "/api/v1/me/following/bob", a, NULL));
	json_decref(call(201, "POST", "/api/v1/posts", b, "{\"text\":\"counted\"}"));
	json_decref(home_wait(a, 1));
	gw = admin_port(cl.gateway_url);
	in = admin_port(cl.inbox_url);

	/* the gateway's own /metrics: its msgpack API, its HTTP API and its process */
	m = admin_get(gw, "/metrics");
	samples_well_formed(m);
	cr_assert_eq(metric_value(m, "warble_requests_total{service=\"gateway_http\",shard=\"0\","
	                             "op=\"register\"}"),
	    2, "%s", m);
	cr_assert_eq(metric_value(m, "warble_request_errors_total{service=\"gateway_http\","
	                             "shard=\"0\",op=\"register\"}"),
	    0);
	cr_assert_geq(metric_value(m, "warble_http_responses_total{service=\"gateway_http\","
	                              "shard=\"0\",code=\"201\"}"),
	    5);
	cr_assert_gt(
	    metric_value(m, "process_cpu_seconds_total{service=\"gateway\",shard=\"0\"}"), 0);
	cr_assert_gt(
	    metric_value(m, "process_resident_memory_bytes{service=\"gateway\",shard=\"0\"}"), 0);
	cr_assert_null(strstr(m, "warble_up{"), "a process's own /metrics asks no one");
	if (!wbt_cluster_is_one(&cl)) {
		cr_assert_null(strstr(m, "service=\"user\""), "another process's series: %s", m);
	}
	free(m);

	/* each service's own, on its own port: the inbox's gauges */
	for (long long deadline = wbt_now_ms() + 10000;; wbt_sleep_ms(100)) {
		/* the home shows the post once either its fan-out or the follow's
		 * backfill is applied; wait (bounded) for the inbox to apply both */
		m = admin_get(in, "/metrics");
		if (metric_value(m, "warble_inbox_events_behind{service=\"inbox\",shard=\"0\"}") ==
		        0 ||
		    wbt_now_ms() > deadline) {
			break;
		}
		free(m);
	}
	samples_well_formed(m);
	cr_assert_eq(
	    metric_value(m, "warble_inbox_events_behind{service=\"inbox\",shard=\"0\"}"), 0);
	cr_assert_geq(
	    metric_value(m, "warble_inbox_cells_written{service=\"inbox\",shard=\"0\"}"), 1);
	/* durations in base units: the inbox's last_fanout_ms is written in seconds */
	cr_assert_geq(
	    metric_value(m, "warble_inbox_last_fanout_seconds{service=\"inbox\",shard=\"0\"}"), 0);
	cr_assert_gt(
	    metric_value(m, "process_cpu_seconds_total{service=\"inbox\",shard=\"0\"}"), 0);
	free(m);
	m = admin_get(admin_port(cl.user_url), "/metrics");
	cr_assert_eq(
	    metric_value(
	        m, "warble_requests_total{service=\"user\",shard=\"0\",op=\"user.register\"}"),
	    2, "%s", m);
	free(m);

	/* the cluster as the gateway sees it, on its admin port only */
	m = admin_get(gw, "/metrics/cluster");
	samples_well_formed(m);
	cr_assert_eq(metric_value(m, "warble_up{service=\"inbox\",shard=\"0\"}"), 1);
	cr_assert_eq(metric_value(m, "warble_up{service=\"gateway\",shard=\"0\"}"), 1);
	cr_assert_eq(
	    metric_value(
	        m, "warble_requests_total{service=\"gateway_http\",shard=\"0\",op=\"register\"}"),
	    2);
	cr_assert_eq(
	    metric_value(
	        m, "warble_requests_total{service=\"user\",shard=\"0\",op=\"user.register\"}"),
	    2);
	cr_assert_eq(metric_value(m, "warble_request_duration_seconds_bucket{service=\"user\","
	                             "shard=\"0\",op=\"user.register\",le=\"+Inf\"}"),
	    2);
	cr_assert_eq(metric_value(m, "warble_request_duration_seconds_count{service="
	                             "\"content\",shard=\"0\",op=\"post.publish\"}"),
	    1);
	cr_assert_geq(
	    metric_value(m, "warble_inbox_cells_written{service=\"inbox\",shard=\"0\"}"), 1);
	/* every service with a store reports its size on disk */
	for (int i = 0; i < 4; i++) {
		static const char *svc[] = { "user", "relation", "content", "inbox" };
		char               key[128];
		double             free_bytes;
		snprintf(key, sizeof(key), "warble_%s_store_bytes{service=\"%s\",shard=\"0\"}",
		    svc[i], svc[i]);
		cr_assert_geq(metric_value(m, key), 0, "no %s in /metrics/cluster", key);
		/* and the free space and size of the file system it is on */
		snprintf(key, sizeof(key), "warble_%s_disk_free_bytes{service=\"%s\",shard=\"0\"}",
		    svc[i], svc[i]);
		free_bytes = metric_value(m, key);
		cr_assert_gt(free_bytes, 0, "no %s in /metrics/cluster", key);
		snprintf(key, sizeof(key), "warble_%s_disk_size_bytes{service=\"%s\",shard=\"0\"}",
		    svc[i], svc[i]);
		cr_assert_geq(metric_value(m, key), free_bytes, "%s below the free space", key);
		snprintf(key, sizeof(key), "process_cpu_seconds_total{service=\"%s\",shard=\"0\"}",
		    svc[i]);
		cr_assert_gt(metric_value(m, key), 0, "no %s in /metrics/cluster", key);
	}
	cr_assert_geq(metric_value(m, "warble_http_responses_total{service=\"gateway_http\","
	                              "shard=\"0\",code=\"201\"}"),
	    5);
	cr_assert_null(strstr(m, "_ms "), "a metric in milliseconds");
	cr_assert_null(strstr(m, "_us "), "a metric in microseconds");
	cr_assert_null(strstr(m, "metrics_port"), "the port is no series");
	cr_assert_not_null(strstr(m, "# TYPE warble_request_duration_seconds histogram\n"));
	/* buckets are cumulative */
	{
		double prev = 0, v;
		char   key[200];
		for (int i = 0; i < 25; i++) {
			snprintf(key, sizeof(key),
			    "warble_request_duration_seconds_bucket{service=\"user\",shard=\"0\","
			    "op=\"user."
			    "register\",le=\"%.9g\"}",
			    (double)(1u << i) / 1e6);
			v = metric_value(m, key);
			cr_assert_geq(v, prev, "bucket %s went down", key);
			prev = v;
		}
	}
	free(m);

	/* the gateway's readiness on its admin port: every shard answers */
	m = admin_get(gw, "/readyz");
	cr_assert_not_null(strstr(m, "\"ready\":true"), "%s", m);
	free(m);
	m = admin_get(in, "/healthz");
	cr_assert_str_eq(m, "{\"status\":\"ok\"}");
	free(m);
	cr_assert_eq(wbt_cluster_stop(&cl, 15000), 0);
}

/* docs_read finds and reads docs/http-api.md (current folder, else beside the build). */
static char *
docs_read(void)
{
	char  path[1024], exe[900];
	char *buf = wbt_read_file("docs/http-api.md");

	if (buf == NULL) {
		ssize_t k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		cr_assert_gt(k, 0);
		exe[k] = '\0';
		for (int up = 0; up < 3; up++) {
			*strrchr(exe, '/') = '\0'; /* <root>/build/test/http_test -> <root> */
		}
		snprintf(path, sizeof(path), "%s/docs/http-api.md", exe);
		buf = wbt_read_file(path);
	}
	cr_assert_not_null(buf, "docs/http-api.md not found");
	return buf;
}

/*
 * The curl examples of docs/http-api.md, for real: every ```sh block, in
 * order, in one bash script (so variables carry over) with errexit and
 * pipefail, $W the public port and $M the gateway's admin port; a block
 * followed by a block starting "HTTP/1.1 NNN" must answer NNN.
 */
Test(http, docs, .fini = wbt_cleanup, .timeout = 120)
{
	char  script[256], out[256], cmd[700];
	char *md = docs_read(), *line, *save = NULL;
	FILE *s;
	int   lineno = 0, blocks = 0, expects = 0, in = 0, want = 0, rc;

	cr_assert_eq(access("/usr/bin/curl", X_OK), 0, "curl is not installed (make deps)");
	start(NULL);
	cr_assert_eq(wbt_path(script, sizeof(script), "docs.sh"), 0);
	cr_assert_eq(wbt_path(out, sizeof(out), "docs.out"), 0);
	s = fopen(script, "w");
	cr_assert_not_null(s);
	/* $W the public port, $M the gateway's admin port */
	fprintf(s,
	    "set -eE -o pipefail\nW=http://127.0.0.1:%d\nM=http://127.0.0.1:%d\n"
	    "D=$(dirname \"$0\")\nL=0\n"
	    "trap 'echo \"FAILED: the example at docs/http-api.md line $L\"; cat \"$D/ex.out\"' "
	    "ERR\n",
	    port, admin_port(cl.gateway_url));
	/* the line after a ```sh block's end decides whether it expects a status */
	for (line = strtok_r(md, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (!in && strcmp(line, "```sh") == 0) {
			in = 1;
			fprintf(s, "L=%d\n{\n", lineno);
			continue;
		}
		if (in && strcmp(line, "```") == 0) {
			in = 0;
			blocks++;
			fprintf(s, "} >\"$D/ex.out\" 2>&1\ncat \"$D/ex.out\"\n");
			want = -1; /* look at the next lines */
			continue;
		}
		if (in) {
			fprintf(s, "%s\n", line);
			continue;
		}
		if (want == -1 && strcmp(line, "```") == 0) {
			want = -2;
			continue;
		}
		if (want == -2 && strncmp(line, "HTTP/1.1 ", 9) == 0) {
			expects++;
			fprintf(s,
			    "head -n1 \"$D/ex.out\" | grep -q '^HTTP/1.1 %d ' || "
			    "{ echo \"FAILED: the example at line $L did not answer %d\"; exit 1; "
			    "}\n",
			    atoi(line + 9), atoi(line + 9));
		}
		want = 0;
	}
	fclose(s);
	free(md);
	cr_assert_geq(blocks, 15, "only %d sh blocks in docs/http-api.md", blocks);
	cr_assert_geq(expects, 5);
	snprintf(cmd, sizeof(cmd), "timeout 90 bash %s >%s 2>&1", script, out);
	rc = system(cmd);
	if (rc != 0) {
		snprintf(cmd, sizeof(cmd), "tail -n 30 %s >&2", out);
		cr_assert_eq(system(cmd), 0);
	}
	cr_assert_eq(rc, 0, "a curl example of docs/http-api.md failed (output above)");
	cr_assert_eq(wbt_cluster_stop(&cl, 15000), 0);
}

/* log_wait polls d's log until it holds needle (the daemons write each line at once); true if it did within the bound. */
static bool
log_wait(const wbt_daemon *d, const char *needle)
{
	long long end = wbt_now_ms() + wbt_ms(10000);

	for (;;) {
		char *log = wbt_read_file(d->log);
		bool  found = log != NULL && strstr(log, needle) != NULL;

		free(log);
		if (found || wbt_now_ms() > end) {
			return found;
		}
		wbt_sleep_ms(50);
	}
}

/* One request's id: the client's X-Request-Id comes back on the reply and names the request in the gateway's log and its fan-out in the inbox's; a request without one (or with a malformed one) gets a new one. */
Test(http, request_ids, .fini = wbt_cleanup, .timeout = 120)
{
	const char *env[] = { "WARBLE_LOG_LEVEL=debug", NULL };
	const char *body = "{\"text\":\"traced\"}";
	const char *a, *b;
	char        raw[1024];
	ht_res      r;

	start(env);
	a = user("alice", 0);
	b = user("bob", 1);
	json_decref(call(200, "PUT", "/api/v1/me/following/alice", b, NULL));
	snprintf(raw, sizeof(raw),
	    "POST /api/v1/posts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
	    "X-Request-Id: test-rid.42\r\nContent-Length: %zu\r\n\r\n%s",
	    a, strlen(body), body);
	cr_assert_eq(ht_raw_str(port, raw, &r, HT_DEADLINE_MS), 0);
	cr_assert_eq(r.status, 201, "%s", r.body);
	cr_assert(strstr(r.head, "\r\nX-Request-Id: test-rid.42\r\n") != NULL, "%s", r.head);
	ht_res_free(&r);
	json_decref(home_wait(b, 1));
	cr_assert(
	    log_wait(cl.gateway, "svc=gateway rid=test-rid.42 msg=\"POST /api/v1/posts: 201\""),
	    "the gateway's log does not name the request (%s)", cl.gateway->log);
	cr_assert(log_wait(cl.content, "svc=content rid=test-rid.42 msg=\"post.publish: ok\""),
	    "the content service's log does not name the request (%s)", cl.content->log);
	cr_assert(log_wait(cl.inbox, "svc=inbox rid=test-rid.42 msg=\"content/0 event post seq"),
	    "the inbox's log does not name the fan-out (%s)", cl.inbox->log);

	/* no id, or one that is not an id: a new one, every time */
	cr_assert_eq(
	    ht_raw_str(port, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: a/b c\r\n\r\n", &r,
	        HT_DEADLINE_MS),
	    0);
	cr_assert_eq(r.status, 200);
	char *rid = strstr(r.head, "\r\nX-Request-Id: ");
	cr_assert_not_null(rid, "%s", r.head);
	cr_assert(strncmp(rid + 16, "a/b", 3) != 0);
	ht_res_free(&r);
	cr_assert_eq(wbt_cluster_stop(&cl, 15000), 0);
}
