/*
 * ht_api.h - the JSON side of the HTTP tests: one cluster per test binary
 * (cl, port), a call that checks the status and parses the reply, error
 * checks, users and a home timeline that waits for fan-out.  Header-only,
 * for tests/http's test files.
 */
#ifndef HT_API_H
#define HT_API_H

#include <criterion/criterion.h>
#include <jansson.h>

#include "ht.h"

static wbt_cluster cl;
static int         port;

/* call sends a request, checks the status, and returns the parsed JSON body (caller decrefs). */
HT_FN json_t *
call(int want, const char *method, const char *path, const char *token, const char *body)
{
	ht_res       r;
	json_error_t je;
	json_t      *j;

	cr_assert_eq(
	    ht_request(port, method, path, token, body, &r), 0, "%s %s: no response", method, path);
	cr_assert_eq(r.status, want, "%s %s: status %d, want %d: %s", method, path, r.status, want,
	    r.body ? r.body : "");
	j = json_loadb(r.body, r.len, 0, &je);
	cr_assert_not_null(j, "%s %s: body is not JSON: %s", method, path, r.body);
	ht_res_free(&r);
	return j;
}

/* fail_with checks an error reply: status and error name. */
HT_FN void
fail_with(int want, const char *name, const char *method, const char *path, const char *token,
    const char *body)
{
	json_t *j = call(want, method, path, token, body);

	cr_assert_str_eq(json_string_value(json_object_get(j, "error")), name,
	    "%s %s: error %s, want %s", method, path,
	    json_string_value(json_object_get(j, "error")), name);
	cr_assert(json_is_string(json_object_get(j, "message")));
	json_decref(j);
}

/* start_as starts the test's cluster in shape (WBT_FIVE where a test stops one daemon). */
HT_FN void
start_as(const char *const *env, wbt_shape shape)
{
	port = ht_cluster_start_as(&cl, env, shape);
	cr_assert_gt(port, 0, "cluster did not start");
}

HT_FN void
start(const char *const *env)
{
	start_as(env, WBT_ANY);
}

HT_FN const char *
str(json_t *j, const char *k)
{
	const char *s = json_string_value(json_object_get(j, k));

	cr_assert_not_null(s, "no string \"%s\" in the reply", k);
	return s;
}

/* user registers name and logs in; returns its token (static buffer per slot). */
HT_FN const char *
user(const char *name, int slot)
{
	static char tokens[4][160];
	char        body[160];
	json_t     *j;

	snprintf(body, sizeof(body), "{\"name\":\"%s\",\"password\":\"correct-horse\"}", name);
	j = call(201, "POST", "/api/v1/users", NULL, body);
	cr_assert_str_eq(str(j, "name"), name);
	cr_assert(json_integer_value(json_object_get(j, "uid")) > 0);
	json_decref(j);
	j = call(201, "POST", "/api/v1/sessions", NULL, body);
	snprintf(tokens[slot], sizeof(tokens[slot]), "%s", str(j, "token"));
	json_decref(j);
	return tokens[slot];
}

/* home_count polls alice's home until it holds n posts (fan-out is asynchronous). */
HT_FN json_t *
home_wait(const char *tok, size_t n)
{
	long long end = wbt_now_ms() + 20000;

	for (;;) {
		json_t *j = call(200, "GET", "/api/v1/home?limit=50", tok, NULL);
		if (json_array_size(json_object_get(j, "posts")) == n) {
			return j;
		}
		json_decref(j);
		cr_assert_lt(wbt_now_ms(), end, "home never held %zu posts", n);
		wbt_sleep_ms(50);
	}
}

#endif
