/*
 * main.c - warble-user: accounts, logins and sessions.
 */
#include <sodium.h>
#include <stdio.h>
#include <string.h>

#include "rt_config.h"
#include "rt_daemon.h"
#include "rt_log.h"
#include "rt_server.h"
#include "user_schema.h"
#include "user.h"

/* main_limit parses a pwhash limit: "interactive" or a number within libsodium's bounds. */
static int
main_limit(
    const char *name, const char *s, uint64_t dflt, uint64_t min, uint64_t max, uint64_t *out)
{
	if (strcmp(s, "interactive") == 0) {
		*out = dflt;
		return 0;
	}
	return rt_config_u64(name, s, min, max, out);
}

int
main(int argc, char **argv)
{
	static rt_daemon   d = { .name = "user" };
	static const char *url, *ttl, *ops, *mem, *lfails, *lwindow, *lcool;
	rt_opt             opts[] = {
		            { "user-url", "WARBLE_USER_URL", "tcp://127.0.0.1:7101", "listen URL", &url },
		            { "data", "WARBLE_DATA", "./var", "data folder (the store is DATA/user)", &d.data },
		            { "log-level", "WARBLE_LOG_LEVEL", "info", "debug|info|warn|error", &d.level },
		            { "workers", "WARBLE_WORKERS", "8", "worker threads (password hashing runs there)",
		                &d.workers },
		            { "sync", "WARBLE_SYNC", "0", "1 = fsync the WAL on every write", &d.sync },
		            { "session-ttl", "WARBLE_SESSION_TTL", "604800", "session lifetime, seconds",
		                &ttl },
		            { "pwhash-ops", "WARBLE_PWHASH_OPS", "interactive",
		                "argon2id passes (a number, or interactive)", &ops },
		            { "pwhash-mem", "WARBLE_PWHASH_MEM", "interactive",
		                "argon2id memory, bytes (a number, or interactive)", &mem },
		            { "login-fails", "WARBLE_LOGIN_FAILS", "5",
		                "failed logins of one username that lock it", &lfails },
		            { "login-window", "WARBLE_LOGIN_WINDOW", "60",
		                "... counted within this many seconds", &lwindow },
		            { "login-cooldown", "WARBLE_LOGIN_COOLDOWN", "60",
		                "seconds a locked username answers RATE_LIMITED", &lcool },
		            { NULL },
	};
	uint64_t       ttl_s, pw_ops, pw_mem, nfails, window_s, cool_s;
	int            rc;
	hb_family_opts fams[USER_FAM_COUNT];
	hb_table      *t = NULL;
	user_svc      *svc = NULL;
	rt_server     *srv = NULL;

	rc = rt_daemon_init(&d, opts, "the Warble user service", argc, argv);
	if (rc != RT_DAEMON_RUN) {
		return rc;
	}
	if (rt_config_u64("session-ttl", ttl, 1, UINT64_MAX / 1000, &ttl_s) != 0 ||
	    main_limit("pwhash-ops", ops, crypto_pwhash_OPSLIMIT_INTERACTIVE,
	        crypto_pwhash_OPSLIMIT_MIN, crypto_pwhash_OPSLIMIT_MAX, &pw_ops) != 0 ||
	    main_limit("pwhash-mem", mem, crypto_pwhash_MEMLIMIT_INTERACTIVE,
	        crypto_pwhash_MEMLIMIT_MIN, SIZE_MAX / 2, &pw_mem) != 0 ||
	    rt_config_u64("login-fails", lfails, 1, 1000000, &nfails) != 0 ||
	    rt_config_u64("login-window", lwindow, 1, 86400, &window_s) != 0 ||
	    rt_config_u64("login-cooldown", lcool, 1, 86400, &cool_s) != 0) {
		return 2;
	}
	if (rt_daemon_data_dir(&d) != WB_OK) {
		return rt_daemon_exit(1);
	}
	user_schema(fams, ttl_s * 1000);
	hb_table_opts topts = { .sync = d.fsync };
	if ((rc = hb_open(&t, d.dir, fams, USER_FAM_COUNT, &topts)) != WB_OK) {
		RT_ERRORF("cannot open store %s: %s %s", d.dir, wb_strerror(rc), hb_last_error());
		return rt_daemon_exit(1);
	}
	user_svc_opts  uopts = { .pwhash_ops = pw_ops,
		 .pwhash_mem = (size_t)pw_mem,
		 .login_fails = (unsigned)nfails,
		 .login_window_ms = window_s * 1000,
		 .login_cooldown_ms = cool_s * 1000,
		 .session_ttl_ms = ttl_s * 1000 };
	rt_server_opts sopts = { .name = "user", .url = url, .workers = (int)d.nworkers };
	if ((rc = user_svc_open(&svc, t, &uopts)) != WB_OK ||
	    (rc = rt_server_open(&srv, &sopts)) != WB_OK ||
	    (rc = user_svc_route(svc, srv)) != WB_OK ||
	    (rc = rt_server_gauge(srv, "store_bytes", hb_disk_bytes, t)) != WB_OK ||
	    (rc = rt_server_start(srv)) != WB_OK) {
		RT_ERRORF("cannot start on %s: %s", url, wb_strerror(rc));
		rt_server_close(srv);
		user_svc_close(svc);
		hb_close(t);
		return rt_daemon_exit(1);
	}
	RT_INFOF("data in %s", d.dir);
	rt_daemon_wait();
	rt_server_close(srv);
	user_svc_close(svc);
	hb_close(t);
	return rt_daemon_exit(0);
}
