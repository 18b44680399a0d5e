/*
 * user_limit.c - one limiter for every password check (login, password
 * change) and for registrations, kept here so that any number of
 * gateways give an attacker one budget, not one each.
 *
 * A failed check counts against three keys at once:
 *
 *   account + address   free: login-fails (5)         the owner's own typos,
 *                                                      or one attacker on one account
 *   address             free: login-addr-fails (50)   one attacker trying many accounts
 *   account             free: login-account-fails (200)  many addresses on one account
 *
 * An address is the client's IPv4 address, or its IPv6 /64 (one host
 * holds a whole /64), as the gateway passes it (`addr`).  Past its free
 * failures (within a day) every further failure of a key makes it wait
 * before its next check: 1 s, then twice as long each time, up to
 * login-wait-max (15 min).  A check that must wait is answered
 * RATE_LIMITED at once with the time left (retry_ms; the gateway's 429
 * and Retry-After), never by a sleeping worker, and logged with the
 * address.  The account's own ceiling is not applied to an address that
 * logged in to it within 30 days: someone else's guesses, from however
 * many addresses, cannot lock the owner out of their usual place.  A
 * success clears the account + address key only.
 *
 * Registrations count per address: register-rate (20) an hour, then
 * RATE_LIMITED until the hour is over.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "rt_log.h"
#include "user_check.h"
#include "user_int.h"
#include "wb_clock.h"

#define USER_LIMIT_WINDOW_MS   (24 * 3600 * UINT64_C(1000))      /* failures are counted a day */
#define USER_LIMIT_WAIT_MS     1000                              /* the first wait */
#define USER_LIMIT_REMEMBER_MS (30 * 24 * 3600 * UINT64_C(1000)) /* a login marks its address */
#define USER_LIMIT_HOUR_MS     (3600 * UINT64_C(1000))
#define USER_LIMIT_ACCT        (1 + USER_NAME_MAX) /* 'u' + uid (8 BE), or 'n' + name */
#define USER_LIMIT_ADDR        (1 + 16)            /* 4 + IPv4, or 6 + an IPv6 /64 (8 bytes) */

/* A password check's keys. */
typedef struct user_limit_keys {
	uint8_t acct[USER_LIMIT_ACCT];
	uint8_t addr[USER_LIMIT_ADDR]; /* addr_len 0: not known */
	uint8_t pair[USER_LIMIT_ACCT + USER_LIMIT_ADDR];
	size_t  acct_len, addr_len, pair_len;
} user_limit_keys;

int
user_limit_open(user_svc *u)
{
	const user_svc_opts *o = &u->opts;
	rt_rate_opts         pair = { o->login_fails, USER_LIMIT_WINDOW_MS, USER_LIMIT_WAIT_MS,
		        o->login_wait_max_ms, USER_LIMIT_REMEMBER_MS, 1u << 16 };
	rt_rate_opts         addr = { o->login_addr_fails, USER_LIMIT_WINDOW_MS, USER_LIMIT_WAIT_MS,
		        o->login_wait_max_ms, 0, 1u << 14 };
	rt_rate_opts acct = { o->login_account_fails, USER_LIMIT_WINDOW_MS, USER_LIMIT_WAIT_MS,
		o->login_wait_max_ms, 0, 1u << 14 };
	rt_rate_opts reg = { o->register_per_hour, USER_LIMIT_HOUR_MS, USER_LIMIT_HOUR_MS,
		USER_LIMIT_HOUR_MS, 0, 1u << 14 };
	int          rc;

	if ((rc = rt_rate_open(&u->limit_pair, &pair)) != WB_OK ||
	    (rc = rt_rate_open(&u->limit_addr, &addr)) != WB_OK ||
	    (rc = rt_rate_open(&u->limit_acct, &acct)) != WB_OK ||
	    (rc = rt_rate_open(&u->limit_reg, &reg)) != WB_OK) {
		return rc;
	}
	return WB_OK;
}

void
user_limit_close(user_svc *u)
{
	rt_rate_close(u->limit_pair);
	rt_rate_close(u->limit_addr);
	rt_rate_close(u->limit_acct);
	rt_rate_close(u->limit_reg);
}

/* user_limit_addr reads an address ("203.0.113.7", "2001:db8::1") into key; its length, 0 if none. */
static size_t
user_limit_addr(const char *addr, uint8_t key[USER_LIMIT_ADDR])
{
	struct in6_addr a6;
	struct in_addr  a4;

	if (addr == NULL || addr[0] == '\0') {
		return 0;
	}
	if (inet_pton(AF_INET, addr, &a4) == 1) {
		key[0] = 4;
		memcpy(key + 1, &a4, 4);
		return 5;
	}
	if (inet_pton(AF_INET6, addr, &a6) != 1) {
		return 0;
	}
	if (IN6_IS_ADDR_V4MAPPED(&a6)) {
		key[0] = 4;
		memcpy(key + 1, a6.s6_addr + 12, 4);
		return 5;
	}
	key[0] = 6;
	memcpy(key + 1, a6.s6_addr, 8); /* the /64 */
	return 9;
}

/* user_limit_keys_make fills k for account uid (or, for an unknown one, name) and addr. */
static void
user_limit_keys_make(user_limit_keys *k, uint64_t uid, const char *name, const char *addr)
{
	if (uid != 0) {
		k->acct[0] = 'u';
		hb_u64_be(k->acct + 1, uid);
		k->acct_len = 9;
	} else {
		size_t n = strnlen(name, USER_NAME_MAX);
		k->acct[0] = 'n';
		memcpy(k->acct + 1, name, n);
		k->acct_len = 1 + n;
	}
	k->addr_len = user_limit_addr(addr, k->addr);
	memcpy(k->pair, k->acct, k->acct_len);
	memcpy(k->pair + k->acct_len, k->addr, k->addr_len);
	k->pair_len = k->acct_len + k->addr_len;
}

/* user_limit_refuse answers RATE_LIMITED for retry_ms and logs the refusal. */
static int
user_limit_refuse(wb_obj *rep, const char *what, const char *who, const char *addr, const char *why,
    uint64_t retry_ms)
{
	unsigned long long s = (unsigned long long)(retry_ms + 999) / 1000;

	RT_WARNF("%s of %s from %s refused: too many failed password checks %s; retry in %llu s",
	    what, who, addr != NULL && addr[0] != '\0' ? addr : "an unknown address", why, s);
	wb_reply_error(
	    rep, WB_ERATE, "too many failed password checks %s: retry in %llu s", why, s);
	wb_set_u64(rep, WB_F_RETRY, retry_ms);
	return WB_ERATE;
}

int
user_limit_check(
    user_svc *u, const char *what, uint64_t uid, const char *name, const char *addr, wb_obj *rep)
{
	user_limit_keys k;
	uint64_t        now = wb_now_ms(), retry;

	user_limit_keys_make(&k, uid, name, addr);
	if (rt_rate_check(u->limit_pair, k.pair, k.pair_len, now, &retry) != WB_OK) {
		return user_limit_refuse(rep, what, name, addr, "from this address", retry);
	}
	if (k.addr_len > 0 &&
	    rt_rate_check(u->limit_addr, k.addr, k.addr_len, now, &retry) != WB_OK) {
		return user_limit_refuse(rep, what, name, addr, "from this address", retry);
	}
	if (!rt_rate_known(u->limit_pair, k.pair, k.pair_len, now) &&
	    rt_rate_check(u->limit_acct, k.acct, k.acct_len, now, &retry) != WB_OK) {
		return user_limit_refuse(rep, what, name, addr, "for this account", retry);
	}
	return WB_OK;
}

void
user_limit_done(
    user_svc *u, const char *what, uint64_t uid, const char *name, const char *addr, bool ok)
{
	user_limit_keys k;
	uint64_t        now = wb_now_ms();

	user_limit_keys_make(&k, uid, name, addr);
	if (ok) {
		rt_rate_success(u->limit_pair, k.pair, k.pair_len, now);
		return;
	}
	RT_INFOF("%s of %s from %s: wrong password", what, name,
	    addr != NULL && addr[0] != '\0' ? addr : "an unknown address");
	rt_rate_fail(u->limit_pair, k.pair, k.pair_len, now);
	if (k.addr_len > 0) {
		rt_rate_fail(u->limit_addr, k.addr, k.addr_len, now);
	}
	rt_rate_fail(u->limit_acct, k.acct, k.acct_len, now);
}

int
user_limit_register(user_svc *u, const char *addr, wb_obj *rep)
{
	uint8_t  key[USER_LIMIT_ADDR];
	size_t   n = user_limit_addr(addr, key);
	uint64_t now = wb_now_ms(), retry;

	if (n == 0) {
		return WB_OK; /* an internal caller, or a gateway that could not tell */
	}
	if (rt_rate_check(u->limit_reg, key, n, now, &retry) != WB_OK ||
	    (retry = rt_rate_fail(u->limit_reg, key, n, now)) > 0) {
		unsigned long long s = (unsigned long long)(retry + 999) / 1000;
		RT_WARNF("registration from %s refused: over %u an hour; retry in %llu s", addr,
		    u->opts.register_per_hour, s);
		wb_reply_error(
		    rep, WB_ERATE, "too many registrations from this address: retry in %llu s", s);
		wb_set_u64(rep, WB_F_RETRY, retry);
		return WB_ERATE;
	}
	return WB_OK;
}
