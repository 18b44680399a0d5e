/*
 * user_daemon.c - warble-user's options: session lifetime, the argon2id
 * cost, and the per-username login lockout.
 */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "rt_log.h"
#include "user.h"
#include "user_schema.h"

static const char   *user_ttl, *user_ops, *user_mem, *user_fails, *user_window, *user_cool;
static user_svc_opts user_o;

static rt_opt user_daemon_opts[] = {
	{ "session-ttl", "WARBLE_SESSION_TTL", "604800", "session lifetime, seconds", &user_ttl },
	{ "pwhash-ops", "WARBLE_PWHASH_OPS", "interactive",
	    "argon2id passes (a number, or interactive)", &user_ops },
	{ "pwhash-mem", "WARBLE_PWHASH_MEM", "interactive",
	    "argon2id memory, bytes (a number, or interactive)", &user_mem },
	{ "login-fails", "WARBLE_LOGIN_FAILS", "5", "failed logins of one username that lock it",
	    &user_fails },
	{ "login-window", "WARBLE_LOGIN_WINDOW", "60", "... counted within this many seconds",
	    &user_window },
	{ "login-cooldown", "WARBLE_LOGIN_COOLDOWN", "60",
	    "seconds a locked username answers RATE_LIMITED", &user_cool },
	{ NULL },
};

/* user_limit parses a pwhash limit: "interactive" or a number within libsodium's bounds. */
static int
user_limit(
    const char *name, const char *s, uint64_t dflt, uint64_t min, uint64_t max, uint64_t *out)
{
	if (strcmp(s, "interactive") == 0) {
		*out = dflt;
		return 0;
	}
	return rt_config_u64(name, s, min, max, out);
}

static int
user_daemon_config(void)
{
	uint64_t ttl_s, ops, mem, fails, window_s, cool_s;

	if (rt_config_u64("session-ttl", user_ttl, 1, UINT64_MAX / 1000, &ttl_s) != 0 ||
	    user_limit("pwhash-ops", user_ops, crypto_pwhash_OPSLIMIT_INTERACTIVE,
	        crypto_pwhash_OPSLIMIT_MIN, crypto_pwhash_OPSLIMIT_MAX, &ops) != 0 ||
	    user_limit("pwhash-mem", user_mem, crypto_pwhash_MEMLIMIT_INTERACTIVE,
	        crypto_pwhash_MEMLIMIT_MIN, SIZE_MAX / 2, &mem) != 0 ||
	    rt_config_u64("login-fails", user_fails, 1, 1000000, &fails) != 0 ||
	    rt_config_u64("login-window", user_window, 1, 86400, &window_s) != 0 ||
	    rt_config_u64("login-cooldown", user_cool, 1, 86400, &cool_s) != 0) {
		return 2;
	}
	user_o = (user_svc_opts) { .pwhash_ops = ops,
		.pwhash_mem = (size_t)mem,
		.login_fails = (unsigned)fails,
		.login_window_ms = window_s * 1000,
		.login_cooldown_ms = cool_s * 1000,
		.session_ttl_ms = ttl_s * 1000 };
	return 0;
}

static void
user_daemon_families(hb_family_opts *fams)
{
	user_schema(fams, user_o.session_ttl_ms);
}

static int
user_daemon_open(const rt_env *env, void **out)
{
	user_svc *svc = NULL;
	int       rc;

	if ((rc = user_svc_open(&svc, env->store, &user_o)) != WB_OK ||
	    (rc = user_svc_route(svc, env->srv)) != WB_OK) {
		user_svc_close(svc);
		return rc;
	}
	*out = svc;
	return WB_OK;
}

static void
user_daemon_close(void *svc)
{
	user_svc_close(svc);
}

const rt_service user_service = {
	.name = "user",
	.summary = "the Warble user service",
	.listen = RT_OPT_URL(WB_EP_USER, "listen URL", NULL),
	.opts = user_daemon_opts,
	.workers_help = "worker threads (password hashing runs there)",
	.config = user_daemon_config,
	.nfams = USER_FAM_COUNT,
	.families = user_daemon_families,
	.open = user_daemon_open,
	.close = user_daemon_close,
};
