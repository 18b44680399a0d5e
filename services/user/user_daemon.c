/*
 * user_daemon.c - warble-user's options: session lifetime, the argon2id
 * cost, the limits on password checks and registrations, and the name
 * hold; and what it opens around the service: its log of deletions and
 * that log's publisher.
 */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "rt_log.h"
#include "rt_pubsub.h"
#include "user.h"
#include "user_schema.h"

static const char *user_ttl, *user_ops, *user_mem, *user_fails, *user_addr_fails, *user_acct_fails,
    *user_wait_max, *user_reg, *user_hold, *user_pub_url;
static user_svc_opts user_o;

static rt_opt user_daemon_opts[] = {
	RT_OPT_URL(WB_EP_USER_PUB, "event PUB URL (deletions)", &user_pub_url),
	{ "session-ttl", "WARBLE_SESSION_TTL", "604800", "session lifetime, seconds", &user_ttl },
	{ "pwhash-ops", "WARBLE_PWHASH_OPS", "interactive",
	    "argon2id passes (a number, or interactive)", &user_ops },
	{ "pwhash-mem", "WARBLE_PWHASH_MEM", "interactive",
	    "argon2id memory, bytes (a number, or interactive)", &user_mem },
	{ "login-fails", "WARBLE_LOGIN_FAILS", "5",
	    "failed password checks (logins, password changes) of one account from one address "
	    "in a day before each further one waits (0: no limit)",
	    &user_fails },
	{ "login-addr-fails", "WARBLE_LOGIN_ADDR_FAILS", "50",
	    "... from one address over every account (0: no limit)", &user_addr_fails },
	{ "login-account-fails", "WARBLE_LOGIN_ACCOUNT_FAILS", "200",
	    "... of one account over every address but those it logged in from (0: no limit)",
	    &user_acct_fails },
	{ "login-wait-max", "WARBLE_LOGIN_WAIT_MAX", "900",
	    "the longest wait, seconds (the first is 1 s, each next one twice as long)",
	    &user_wait_max },
	{ "register-rate", "WARBLE_REGISTER_RATE", "20",
	    "registrations from one address an hour (0: no limit)", &user_reg },
	{ "name-hold", "WARBLE_NAME_HOLD", "2592000",
	    "seconds a deleted account's name stays taken (0: free at once)", &user_hold },
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
	uint64_t ttl_s, ops, mem, fails, addr_fails, acct_fails, wait_max_s, reg, hold_s;

	if (rt_config_u64("session-ttl", user_ttl, 1, UINT64_MAX / 1000, &ttl_s) != 0 ||
	    user_limit("pwhash-ops", user_ops, crypto_pwhash_OPSLIMIT_INTERACTIVE,
	        crypto_pwhash_OPSLIMIT_MIN, crypto_pwhash_OPSLIMIT_MAX, &ops) != 0 ||
	    user_limit("pwhash-mem", user_mem, crypto_pwhash_MEMLIMIT_INTERACTIVE,
	        crypto_pwhash_MEMLIMIT_MIN, SIZE_MAX / 2, &mem) != 0 ||
	    rt_config_u64("login-fails", user_fails, 0, 1000000, &fails) != 0 ||
	    rt_config_u64("login-addr-fails", user_addr_fails, 0, 1000000, &addr_fails) != 0 ||
	    rt_config_u64("login-account-fails", user_acct_fails, 0, 1000000, &acct_fails) != 0 ||
	    rt_config_u64("login-wait-max", user_wait_max, 1, 86400, &wait_max_s) != 0 ||
	    rt_config_u64("register-rate", user_reg, 0, 1000000, &reg) != 0 ||
	    rt_config_u64("name-hold", user_hold, 0, UINT64_MAX / 1000, &hold_s) != 0) {
		return 2;
	}
	user_o = (user_svc_opts) { .pwhash_ops = ops,
		.pwhash_mem = (size_t)mem,
		.login_fails = (unsigned)fails,
		.login_addr_fails = (unsigned)addr_fails,
		.login_account_fails = (unsigned)acct_fails,
		.login_wait_max_ms = wait_max_s * 1000,
		.register_per_hour = (unsigned)reg,
		.session_ttl_ms = ttl_s * 1000,
		.name_hold_ms = hold_s * 1000 };
	return 0;
}

static void
user_daemon_families(hb_family_opts *fams)
{
	user_schema(fams, user_o.session_ttl_ms, user_o.name_hold_ms);
}

/* Everything warble-user opens, closed in reverse. */
typedef struct user_daemon {
	rt_pub   *pub;
	evlog    *log;
	user_svc *svc;
} user_daemon;

static void
user_daemon_close(void *arg)
{
	user_daemon *d = arg;

	if (d == NULL) {
		return;
	}
	user_svc_close(d->svc);
	evlog_close(d->log);
	rt_pub_close(d->pub);
	free(d);
}

static int
user_daemon_open(const rt_env *env, void **out)
{
	user_daemon *d = calloc(1, sizeof(*d));
	int          rc;

	if (d == NULL) {
		return WB_ENOMEM;
	}
	/* the deletions: only the services that erase an account's data may follow them */
	if ((rc = rt_pub_open(&d->pub, user_pub_url, env->tls,
	         RT_PEER_RELATION | RT_PEER_CONTENT | RT_PEER_INBOX)) != WB_OK ||
	    (rc = evlog_open(&d->log, env->store, USER_FAM_LOG, "user", d->pub)) != WB_OK ||
	    (rc = user_svc_open(&d->svc, env->store, d->log, &user_o)) != WB_OK ||
	    (rc = user_svc_gauges(d->svc, env->srv)) != WB_OK) {
		RT_ERRORF("cannot open (events on %s): %s", user_pub_url, wb_strerror(rc));
		user_daemon_close(d);
		return rc;
	}
	rt_admin_logs(env->admin, evlog_backup_logs, d->log, false);
	*out = d;
	return WB_OK;
}

/* user_daemon_svc gives the handlers' argument: the service inside d. */
static void *
user_daemon_svc(void *arg)
{
	user_daemon *d = arg;

	return d->svc;
}

/* user_daemon_start begins what runs once the server listens. */
static int
user_daemon_start(void *arg)
{
	user_daemon *d = arg;

	return user_svc_start(d->svc);
}

const rt_service user_service = {
	.name = "user",
	.summary = "the Warble user service",
	.metrics_url = "http://127.0.0.1:9101",
	.listen = RT_OPT_URL(WB_EP_USER, "listen URL", NULL),
	.opts = user_daemon_opts,
	.workers_help = "worker threads (password hashing runs there)",
	.config = user_daemon_config,
	.nfams = USER_FAM_COUNT,
	.families = user_daemon_families,
	.open = user_daemon_open,
	.routes = user_routes,
	.route_arg = user_daemon_svc,
	.start = user_daemon_start,
	.close = user_daemon_close,
};
