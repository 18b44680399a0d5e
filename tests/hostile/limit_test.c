/*
 * limit_test.c - the limits on password checks and registrations, as an
 * attacker meets them.  A real cluster whose gateway trusts 127.0.0.1 as
 * a reverse proxy, so each request can come "from" the address its
 * X-Forwarded-For names:
 *
 *   waits      failures of one account from one address wait 1 s, 2 s,
 *              ... (429 with Retry-After at once, never a slow answer),
 *              while the owner from another address logs in
 *   password   a wrong current password in a password change counts
 *              against the same budget as a login
 *   address    one address guessing many accounts waits for all of them
 *   account    many addresses guessing one account make new addresses
 *              wait, never the address the owner logged in from
 *   transports the msgpack port and HTTP, and two gateways, share one
 *              budget (it lives in the user service)
 *   proxies    an X-Forwarded-For from an untrusted peer is ignored
 *   register   registrations per address an hour
 *   logs       every refusal is logged with the address
 */
#include <criterion/criterion.h>
#include <jansson.h>

#include "hs.h"

static hs_cluster hc;

/* The limits of this suite: small, so the waits come quickly. */
#define LT_ENV                                                                                   \
	"WARBLE_TRUSTED_PROXIES=127.0.0.1", "WARBLE_LOGIN_FAILS=3", "WARBLE_LOGIN_ADDR_FAILS=6", \
	    "WARBLE_LOGIN_ACCOUNT_FAILS=8", "WARBLE_LOGIN_WAIT_MAX=2"

/* An answer: status, error name, and Retry-After (-1 if absent). */
typedef struct lt_res {
	int  status;
	char err[64];
	int  retry_after;
	char token[160];
} lt_res;

/* lt_http sends method path with body as a client at addr (NULL: no X-Forwarded-For) holding token. */
static lt_res
lt_http(const char *method, const char *path, const char *addr, const char *token, const char *body)
{
	char         req[2048], hv[32];
	ht_res       r;
	lt_res       out = { .retry_after = -1 };
	json_error_t je;
	json_t      *j;
	int          n;

	n = snprintf(req, sizeof(req),
	    "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n%s%s%s%s%s%s"
	    "Content-Type: application/json\r\nContent-Length: %zu\r\n\r\n%s",
	    method, path, addr != NULL ? "X-Forwarded-For: " : "", addr != NULL ? addr : "",
	    addr != NULL ? "\r\n" : "", token != NULL ? "Authorization: Bearer " : "",
	    token != NULL ? token : "", token != NULL ? "\r\n" : "", strlen(body), body);
	cr_assert(n > 0 && (size_t)n < sizeof(req));
	cr_assert_eq(ht_raw(hc.port[HS_HTTP], req, (size_t)n, &r, 15000), 0, "no response");
	out.status = r.status;
	if (ht_header(&r, "Retry-After", hv, sizeof(hv)) != NULL) {
		out.retry_after = atoi(hv);
	}
	if ((j = json_loadb(r.body, r.len, 0, &je)) != NULL) {
		const char *e = json_string_value(json_object_get(j, "error"));
		const char *t = json_string_value(json_object_get(j, "token"));
		snprintf(out.err, sizeof(out.err), "%s", e != NULL ? e : "");
		snprintf(out.token, sizeof(out.token), "%s", t != NULL ? t : "");
		json_decref(j);
	}
	ht_res_free(&r);
	return out;
}

/* lt_login logs name in with password as a client at addr. */
static lt_res
lt_login(const char *addr, const char *name, const char *password)
{
	char body[200];

	snprintf(body, sizeof(body), "{\"name\":\"%s\",\"password\":\"%s\"}", name, password);
	return lt_http("POST", "/api/v1/sessions", addr, NULL, body);
}

/* lt_refused checks that r is a 429 asking to wait between 1 and max_s seconds. */
static void
lt_refused(lt_res r, int max_s, const char *what)
{
	cr_assert_eq(r.status, 429, "%s: status %d (%s)", what, r.status, r.err);
	cr_assert_str_eq(r.err, "RATE_LIMITED");
	cr_assert(r.retry_after >= 1 && r.retry_after <= max_s, "%s: Retry-After %d, want 1-%d",
	    what, r.retry_after, max_s);
}

/* lt_grep tells whether file holds needle. */
static bool
lt_grep(const char *file, const char *needle)
{
	FILE *f = fopen(file, "r");
	char  line[1024];
	bool  found = false;

	cr_assert_not_null(f, "cannot read %s", file);
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		found = strstr(line, needle) != NULL;
	}
	fclose(f);
	return found;
}

Test(limit, waits_grow_per_account_and_address, .fini = wbt_cleanup, .timeout = 120)
{
	const char *env[] = { LT_ENV, "WARBLE_LOG_LEVEL=info", NULL };
	const char *a = "203.0.113.1";
	long long   t0;
	lt_res      r;

	cr_assert_eq(hs_start(&hc, env), 0, "cluster did not start");
	cr_assert_not_null(hs_session(&hc, "lt_dave", "dave-password"));
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(
		    lt_login(a, "lt_dave", "wrong-password").status, 401, "free failure %d", i);
	}
	cr_assert_eq(lt_login(a, "lt_dave", "wrong-password").status, 401, "the 4th is checked");
	t0 = wbt_now_ms();
	lt_refused(
	    lt_login(a, "lt_dave", "dave-password"), 1, "the right password during the wait");
	lt_refused(lt_login(a, "LT_DAVE", "dave-password"), 1, "the wait follows the normal name");
	cr_assert_lt(wbt_now_ms() - t0, 1000, "a refusal is answered at once, not slowed");
	/* the owner, from their own address, is not shut out */
	r = lt_login("198.51.100.20", "lt_dave", "dave-password");
	cr_assert_eq(r.status, 201, "the owner elsewhere: %d %s", r.status, r.err);
	/* after the wait, the next failure waits twice as long */
	wbt_sleep_ms(1100);
	cr_assert_eq(lt_login(a, "lt_dave", "wrong-password").status, 401);
	lt_refused(lt_login(a, "lt_dave", "dave-password"), 2, "the second wait");
	cr_assert_eq(lt_login(a, "lt_dave", "dave-password").retry_after, 2);
	/* unknown names are limited alike (no enumeration) */
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(lt_login("203.0.113.5", "lt_nobody", "wrong-password").status, 401);
	}
	lt_refused(lt_login("203.0.113.5", "lt_nobody", "wrong-password"), 1, "an unknown name");
	/* a success ends the waits of its account and address */
	wbt_sleep_ms(2100);
	cr_assert_eq(lt_login(a, "lt_dave", "dave-password").status, 201);
	cr_assert_eq(lt_login(a, "lt_dave", "wrong-password").status, 401);
	cr_assert_eq(lt_login(a, "lt_dave", "dave-password").status, 201, "counting starts over");
	cr_assert_eq(hs_stop(&hc), 0);
	cr_assert(lt_grep(hc.c.user->log, "login of lt_dave from 203.0.113.1 refused"),
	    "a refusal is logged with the address");
	cr_assert(lt_grep(hc.c.user->log, "login of lt_dave from 203.0.113.1: wrong password"),
	    "a failure is logged with the address");
}

Test(limit, password_change_shares_the_budget, .fini = wbt_cleanup, .timeout = 120)
{
	const char *env[] = { LT_ENV, NULL };
	const char *a = "203.0.113.2";
	lt_res      r;
	char        token[160];

	cr_assert_eq(hs_start(&hc, env), 0, "cluster did not start");
	cr_assert_not_null(hs_session(&hc, "lt_erin", "erin-password"));
	r = lt_login(a, "lt_erin", "erin-password");
	cr_assert_eq(r.status, 201);
	snprintf(token, sizeof(token), "%s", r.token);
	/* a stolen token guessing the password through the password change */
	for (int i = 0; i < 4; i++) {
		r = lt_http("PUT", "/api/v1/me/password", a, token,
		    "{\"password\":\"guess-number-x\",\"new_password\":\"attacker-owns-it\"}");
		cr_assert_eq(r.status, 401, "guess %d: %d %s", i, r.status, r.err);
	}
	r = lt_http("PUT", "/api/v1/me/password", a, token,
	    "{\"password\":\"erin-password\",\"new_password\":\"attacker-owns-it\"}");
	lt_refused(r, 1, "the right password after four wrong ones");
	/* the same budget as logins from there */
	lt_refused(lt_login(a, "lt_erin", "erin-password"), 1, "a login from the same address");
	wbt_sleep_ms(1100);
	r = lt_http("PUT", "/api/v1/me/password", a, token,
	    "{\"password\":\"erin-password\",\"new_password\":\"erin-password-2\"}");
	cr_assert_eq(r.status, 200, "%d %s", r.status, r.err);
	cr_assert_eq(hs_stop(&hc), 0);
	cr_assert(lt_grep(hc.c.user->log, "password change of uid "));
	cr_assert(lt_grep(hc.c.user->log, "from 203.0.113.2 refused"));
}

Test(limit, one_address_many_accounts, .fini = wbt_cleanup, .timeout = 120)
{
	const char *env[] = { LT_ENV, NULL };
	char        name[32];

	cr_assert_eq(hs_start(&hc, env), 0, "cluster did not start");
	cr_assert_not_null(hs_session(&hc, "lt_fred", "fred-password"));
	/* one failure on each of 7 names: the address's 7th failure sets a wait */
	for (int i = 0; i < 7; i++) {
		snprintf(name, sizeof(name), "lt_ghost%d", i);
		cr_assert_eq(lt_login("203.0.113.3", name, "wrong-password").status, 401);
	}
	lt_refused(lt_login("203.0.113.3", "lt_fred", "fred-password"), 1, "another account");
	/* an IPv6 client is one /64 */
	for (int i = 0; i < 7; i++) {
		char addr[64];
		snprintf(name, sizeof(name), "lt_spook%d", i);
		snprintf(addr, sizeof(addr), "2001:db8:1:2::%x", i + 1);
		cr_assert_eq(lt_login(addr, name, "wrong-password").status, 401);
	}
	lt_refused(lt_login("2001:db8:1:2:ffff::9", "lt_fred", "fred-password"), 1, "the same /64");
	cr_assert_eq(lt_login("2001:db8:1:3::1", "lt_fred", "fred-password").status, 201,
	    "the next /64 is another address");
	cr_assert_eq(hs_stop(&hc), 0);
}

Test(limit, many_addresses_one_account, .fini = wbt_cleanup, .timeout = 120)
{
	const char *env[] = { LT_ENV, NULL };
	char        addr[32];

	cr_assert_eq(hs_start(&hc, env), 0, "cluster did not start");
	cr_assert_not_null(hs_session(&hc, "lt_gina", "gina-password"));
	cr_assert_eq(
	    lt_login("192.0.2.50", "lt_gina", "gina-password").status, 201, "her usual place");
	/* 9 addresses, one guess each: under every per-address limit, over the account's 8 */
	for (int i = 0; i < 9; i++) {
		snprintf(addr, sizeof(addr), "192.0.2.%d", 100 + i);
		cr_assert_eq(lt_login(addr, "lt_gina", "wrong-password").status, 401);
	}
	lt_refused(lt_login("192.0.2.99", "lt_gina", "gina-password"), 1, "a new address");
	cr_assert_eq(lt_login("192.0.2.50", "lt_gina", "gina-password").status, 201,
	    "the owner's address is not shut out by the others' guesses");
	cr_assert_eq(hs_stop(&hc), 0);
}

Test(limit, one_budget_over_ports_and_gateways, .fini = wbt_cleanup, .timeout = 120)
{
	const char    *env[] = { LT_ENV, NULL };
	warble_client *wc, *wc2;
	char           url[WBT_URL_MAX], env_url[WBT_URL_MAX + 32];
	const char    *genv[12];
	wbt_daemon    *gw2;
	int            k = 0;

	cr_assert_eq(hs_start(&hc, env), 0, "cluster did not start");
	cr_assert_not_null(wc = hs_session(&hc, "lt_hank", "hank-password"));
	/* a second gateway in front of the same services */
	cr_assert_gt(wbt_tcp_url(url, sizeof(url)), 0);
	snprintf(env_url, sizeof(env_url), "WARBLE_GATEWAY_URL=%s", url);
	for (int i = 0; hc.env[i] != NULL && k < 4; i++) {
		if (strncmp(hc.env[i], "WARBLE_", 7) == 0 && strstr(hc.env[i], "_URL=") != NULL &&
		    strncmp(hc.env[i], "WARBLE_GATEWAY_URL=", 19) != 0 &&
		    strncmp(hc.env[i], "WARBLE_HTTP_URL=", 16) != 0 &&
		    strstr(hc.env[i], "_PUB_URL=") == NULL) {
			genv[k++] = hc.env[i];
		}
	}
	genv[k++] = env_url;
	genv[k++] = "WARBLE_HTTP_URL=http://127.0.0.1:0";
	genv[k] = NULL;
	cr_assert_not_null(gw2 = wbt_spawn("warble-gateway", NULL, genv));
	cr_assert_eq(wbt_wait_ready(gw2, url, wbt_ms(10000)), 0);
	cr_assert_eq(warble_open(&wc2, url, 15000), 0);
	/* msgpack, first gateway, twice; msgpack, second gateway, twice: 4 failures from 127.0.0.1 */
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(warble_login(wc, "lt_hank", "wrong-password", NULL), WARBLE_ELOGIN);
		cr_assert_eq(warble_login(wc2, "lt_hank", "wrong-password", NULL), WARBLE_ELOGIN);
	}
	cr_assert_eq(warble_login(wc2, "lt_hank", "hank-password", NULL), WARBLE_ERATE,
	    "the second gateway: %s", warble_errmsg(wc2));
	cr_assert(warble_retry_ms(wc2) > 0 && warble_retry_ms(wc2) <= 1000, "retry_ms %llu",
	    (unsigned long long)warble_retry_ms(wc2));
	cr_assert_eq(warble_login(wc, "lt_hank", "hank-password", NULL), WARBLE_ERATE);
	/* and HTTP from 127.0.0.1 itself (a trusted proxy without a header is the client) */
	lt_refused(lt_login(NULL, "lt_hank", "hank-password"), 1, "HTTP from the same address");
	warble_close(wc);
	warble_close(wc2);
	cr_assert_eq(wbt_stop(gw2, SIGTERM, wbt_ms(10000)), 0);
	cr_assert_eq(hs_stop(&hc), 0);
}

Test(limit, forwarded_for_needs_a_trusted_peer, .fini = wbt_cleanup, .timeout = 120)
{
	const char *env[] = { "WARBLE_LOGIN_FAILS=3", "WARBLE_LOGIN_WAIT_MAX=2", NULL };
	char        addr[32];

	cr_assert_eq(hs_start(&hc, env), 0, "cluster did not start");
	cr_assert_not_null(hs_session(&hc, "lt_ivy", "ivy-password"));
	/* no trusted proxy: each request's own X-Forwarded-For changes nothing */
	for (int i = 0; i < 4; i++) {
		snprintf(addr, sizeof(addr), "203.0.113.%d", 50 + i);
		cr_assert_eq(lt_login(addr, "lt_ivy", "wrong-password").status, 401);
	}
	lt_refused(lt_login("203.0.113.60", "lt_ivy", "ivy-password"), 1, "a spoofed address");
	cr_assert_eq(hs_stop(&hc), 0);
	cr_assert(lt_grep(hc.c.user->log, "from 127.0.0.1 refused"), "the peer is the client");
}

Test(limit, registrations_per_address, .fini = wbt_cleanup, .timeout = 120)
{
	const char *env[] = { "WARBLE_TRUSTED_PROXIES=127.0.0.1", "WARBLE_REGISTER_RATE=3", NULL };
	char        body[128];
	lt_res      r;

	cr_assert_eq(hs_start(&hc, env), 0, "cluster did not start");
	for (int i = 0; i < 3; i++) {
		snprintf(
		    body, sizeof(body), "{\"name\":\"lt_new%d\",\"password\":\"a-password\"}", i);
		r = lt_http("POST", "/api/v1/users", "203.0.113.9", NULL, body);
		cr_assert_eq(r.status, 201, "registration %d: %d %s", i, r.status, r.err);
	}
	r = lt_http("POST", "/api/v1/users", "203.0.113.9", NULL,
	    "{\"name\":\"lt_new3\",\"password\":\"a-password\"}");
	cr_assert_eq(r.status, 429, "%d %s", r.status, r.err);
	cr_assert(r.retry_after > 3000 && r.retry_after <= 3600, "Retry-After %d", r.retry_after);
	r = lt_http("POST", "/api/v1/users", "203.0.113.10", NULL,
	    "{\"name\":\"lt_new3\",\"password\":\"a-password\"}");
	cr_assert_eq(r.status, 201, "another address: %d %s", r.status, r.err);
	cr_assert_eq(hs_stop(&hc), 0);
	cr_assert(lt_grep(hc.c.user->log, "registration from 203.0.113.9 refused"));
}
