/*
 * erase_http_test.c - DELETE /api/v1/me over HTTP: the password is
 * required, a wrong one is 401 BAD_CREDENTIALS and keeps the session,
 * repeated ones are 429 with Retry-After, the right one answers 200 and
 * the account is closed at once (its token 401, its profile and posts
 * 404 NO_SUCH_USER, its posts gone from a fan's home, its name held:
 * 409), and the web page carries the delete button.
 */
#include "ht_api.h"

Test(http_erase, delete_me, .fini = wbt_cleanup, .timeout = 120)
{
	const char *env[] = { "WARBLE_LOGIN_FAILS=2", NULL };
	ht_res      r;
	json_t     *j;

	start(env);
	const char *vic = user("vic", 0);
	const char *fan = user("vicfan", 1);
	json_decref(call(200, "PUT", "/api/v1/me/following/vic", fan, NULL));
	json_decref(call(201, "POST", "/api/v1/posts", vic, "{\"text\":\"soon gone\"}"));
	json_decref(home_wait(fan, 1));

	fail_with(401, "UNAUTHORIZED", "DELETE", "/api/v1/me", NULL, "{\"password\":\"x\"}");
	fail_with(400, "INVALID", "DELETE", "/api/v1/me", vic, NULL);
	fail_with(
	    400, "INVALID", "DELETE", "/api/v1/me", vic, "{\"password\":\"x\",\"name\":\"vic\"}");
	/* wrong: 401, the session kept; the 4th try waits (2 free, the 3rd sets a wait) */
	for (int i = 0; i < 3; i++) {
		fail_with(401, "BAD_CREDENTIALS", "DELETE", "/api/v1/me", vic,
		    "{\"password\":\"wrong-horse\"}");
	}
	json_decref(call(200, "GET", "/api/v1/me", vic, NULL));
	cr_assert_eq(
	    ht_request(port, "DELETE", "/api/v1/me", vic, "{\"password\":\"wrong-horse\"}", &r), 0);
	cr_assert_eq(r.status, 429, "status %d: %s", r.status, r.body);
	char        rabuf[32];
	const char *ra = ht_header(&r, "Retry-After", rabuf, sizeof(rabuf));
	cr_assert_not_null(ra, "no Retry-After");
	cr_assert(atoi(ra) >= 1, "Retry-After: %s", ra);
	int wait_s = atoi(ra);
	ht_res_free(&r);
	wbt_sleep_ms(wait_s * 1000 + 100);

	j = call(200, "DELETE", "/api/v1/me", vic, "{\"password\":\"correct-horse\"}");
	cr_assert_eq(json_object_size(j), 0, "the reply is {}");
	json_decref(j);
	fail_with(401, "UNAUTHORIZED", "GET", "/api/v1/me", vic, NULL);
	fail_with(404, "NO_SUCH_USER", "GET", "/api/v1/users/vic", NULL, NULL);
	fail_with(404, "NO_SUCH_USER", "GET", "/api/v1/users/vic/posts", NULL, NULL);
	fail_with(401, "BAD_CREDENTIALS", "POST", "/api/v1/sessions", NULL,
	    "{\"name\":\"vic\",\"password\":\"correct-horse\"}");
	fail_with(409, "NAME_TAKEN", "POST", "/api/v1/users", NULL,
	    "{\"name\":\"vic\",\"password\":\"correct-horse\"}");
	j = call(200, "GET", "/api/v1/home", fan, NULL);
	cr_assert_eq(json_array_size(json_object_get(j, "posts")), 0, "the fan still sees it");
	json_decref(j);

	/* the page offers it on one's own profile, behind a password and a confirm */
	cr_assert_eq(ht_request(port, "GET", "/", NULL, NULL, &r), 0);
	cr_assert(strstr(r.body, "id=\"delete-account\"") && strstr(r.body, "id=\"delete-pass\""));
	ht_res_free(&r);
	cr_assert_eq(ht_request(port, "GET", "/app.js", NULL, NULL, &r), 0);
	cr_assert(
	    strstr(r.body, "api('DELETE', '/me', { password })") && strstr(r.body, "confirm("));
	ht_res_free(&r);
	cr_assert_eq(wbt_cluster_stop(&cl, 15000), 0);
}
