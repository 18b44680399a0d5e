/*
 * main.c - warble-user: accounts, logins and sessions.
 */
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "rt_config.h"
#include "rt_log.h"
#include "rt_server.h"
#include "schema.h"
#include "user_svc.h"

/* main_mkdirs creates path and its parents (mkdir -p). */
static int
main_mkdirs(const char *path)
{
	char buf[4096];

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int) sizeof(buf)) {
		return -1;
	}
	for (char *p = buf + 1; *p != '\0'; p++) {
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
				return -1;
			}
			*p = '/';
		}
	}
	return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* main_limit parses a pwhash limit: "interactive" or a number within libsodium's bounds. */
static int
main_limit(const char *name, const char *s, uint64_t dflt, uint64_t min,
    uint64_t max, uint64_t *out)
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
	static const char *url, *data, *level, *workers, *sync, *ttl, *ops, *mem,
	    *lfails, *lwindow, *lcool;
	rt_opt opts[] = {
		{ "user-url", "WARBLE_USER_URL", "tcp://127.0.0.1:7101", "listen URL", &url },
		{ "data", "WARBLE_DATA", "./var", "data folder (the store is DATA/user)", &data },
		{ "log-level", "WARBLE_LOG_LEVEL", "info", "debug|info|warn|error", &level },
		{ "workers", "WARBLE_WORKERS", "8", "worker threads (password hashing runs there)", &workers },
		{ "sync", "WARBLE_SYNC", "0", "1 = fsync the WAL on every write", &sync },
		{ "session-ttl", "WARBLE_SESSION_TTL", "604800", "session lifetime, seconds", &ttl },
		{ "pwhash-ops", "WARBLE_PWHASH_OPS", "interactive", "argon2id passes (a number, or interactive)", &ops },
		{ "pwhash-mem", "WARBLE_PWHASH_MEM", "interactive", "argon2id memory, bytes (a number, or interactive)", &mem },
		{ "login-fails", "WARBLE_LOGIN_FAILS", "5", "failed logins of one username that lock it", &lfails },
		{ "login-window", "WARBLE_LOGIN_WINDOW", "60", "... counted within this many seconds", &lwindow },
		{ "login-cooldown", "WARBLE_LOGIN_COOLDOWN", "60", "seconds a locked username answers RATE_LIMITED", &lcool },
		{ NULL },
	};
	uint64_t      nworkers, fsync, ttl_s, pw_ops, pw_mem, nfails, window_s, cool_s;
	int           lvl, rc;
	char          path[4096];
	hb_family_opts fams[USER_FAM_COUNT];
	hb_table     *t   = NULL;
	user_svc     *svc = NULL;
	rt_server    *srv = NULL;

	rc = rt_config_parse(opts, "warble-user", "the Warble user service", argc, argv);
	if (rc != 0) {
		return rc == RT_CONFIG_HELP ? 0 : 2;
	}
	if ((lvl = rt_log_level_parse(level)) < 0) {
		fprintf(stderr, "warble-user: bad log level %s\n", level);
		return 2;
	}
	rt_log_init("user", (rt_level) lvl);
	if (rt_config_u64("workers", workers, 1, 256, &nworkers) != 0 ||
	    rt_config_u64("sync", sync, 0, 1, &fsync) != 0 ||
	    rt_config_u64("session-ttl", ttl, 1, UINT64_MAX / 1000, &ttl_s) != 0 ||
	    main_limit("pwhash-ops", ops, crypto_pwhash_OPSLIMIT_INTERACTIVE,
	        crypto_pwhash_OPSLIMIT_MIN, crypto_pwhash_OPSLIMIT_MAX, &pw_ops) != 0 ||
	    main_limit("pwhash-mem", mem, crypto_pwhash_MEMLIMIT_INTERACTIVE,
	        crypto_pwhash_MEMLIMIT_MIN, SIZE_MAX / 2, &pw_mem) != 0 ||
	    rt_config_u64("login-fails", lfails, 1, 1000000, &nfails) != 0 ||
	    rt_config_u64("login-window", lwindow, 1, 86400, &window_s) != 0 ||
	    rt_config_u64("login-cooldown", lcool, 1, 86400, &cool_s) != 0) {
		return 2;
	}
	rt_signal_init();

	if (snprintf(path, sizeof(path), "%s/user", data) >= (int) sizeof(path) ||
	    main_mkdirs(path) != 0) {
		RT_ERRORF("cannot create data folder %s: %s", path, strerror(errno));
		return 1;
	}
	user_schema(fams, ttl_s * 1000);
	hb_table_opts topts = { .sync = fsync != 0 };
	if ((rc = hb_open(&t, path, fams, USER_FAM_COUNT, &topts)) != WB_OK) {
		RT_ERRORF("cannot open store %s: %s %s", path, wb_strerror(rc), hb_last_error());
		return 1;
	}
	user_svc_opts uopts = { .pwhash_ops = pw_ops, .pwhash_mem = (size_t) pw_mem,
		.login_fails = (unsigned) nfails, .login_window_ms = window_s * 1000,
		.login_cooldown_ms = cool_s * 1000 };
	rt_server_opts sopts = { .name = "user", .url = url, .workers = (int) nworkers };
	if ((rc = user_svc_open(&svc, t, &uopts)) != WB_OK ||
	    (rc = rt_server_open(&srv, &sopts)) != WB_OK ||
	    (rc = user_svc_route(svc, srv)) != WB_OK ||
	    (rc = rt_server_start(srv)) != WB_OK) {
		RT_ERRORF("cannot start on %s: %s", url, wb_strerror(rc));
		rt_server_close(srv);
		user_svc_close(svc);
		hb_close(t);
		return 1;
	}
	RT_INFOF("data in %s", path);
	rt_wait_for_signal();
	RT_INFOF("shutting down");
	rt_server_close(srv);
	user_svc_close(svc);
	hb_close(t);
	return 0;
}
