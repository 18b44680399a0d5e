/*
 * main.c - warble-relation: follows, fans, counts and the follow event log.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "rel_svc.h"
#include "rt_config.h"
#include "rt_log.h"
#include "rt_pubsub.h"
#include "rt_server.h"
#include "schema.h"

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

int
main(int argc, char **argv)
{
	static const char *url, *pub_url, *user_url, *data, *level, *workers, *sync;
	rt_opt opts[] = {
		{ "relation-url", "WARBLE_RELATION_URL", "tcp://127.0.0.1:7102", "listen URL", &url },
		{ "relation-pub-url", "WARBLE_RELATION_PUB_URL", "tcp://127.0.0.1:7112", "event PUB URL", &pub_url },
		{ "user-url", "WARBLE_USER_URL", "tcp://127.0.0.1:7101", "user service URL", &user_url },
		{ "data", "WARBLE_DATA", "./var", "data folder (the store is DATA/relation)", &data },
		{ "log-level", "WARBLE_LOG_LEVEL", "info", "debug|info|warn|error", &level },
		{ "workers", "WARBLE_WORKERS", "8", "worker threads", &workers },
		{ "sync", "WARBLE_SYNC", "0", "1 = fsync the WAL on every write", &sync },
		{ NULL },
	};
	uint64_t       nworkers, fsync;
	int            lvl, rc;
	char           path[4096];
	hb_family_opts fams[REL_FAM_NFAMS];
	hb_table      *t     = NULL;
	rt_pub        *pub   = NULL;
	evlog         *log   = NULL;
	rt_client     *users = NULL;
	rel_svc       *svc   = NULL;
	rt_server     *srv   = NULL;

	rc = rt_config_parse(opts, "warble-relation", "the Warble relation service", argc, argv);
	if (rc != 0) {
		return rc == RT_CONFIG_HELP ? 0 : 2;
	}
	if ((lvl = rt_log_level_parse(level)) < 0) {
		fprintf(stderr, "warble-relation: bad log level %s\n", level);
		return 2;
	}
	rt_log_init("relation", (rt_level) lvl);
	if (rt_config_u64("workers", workers, 1, 256, &nworkers) != 0 ||
	    rt_config_u64("sync", sync, 0, 1, &fsync) != 0) {
		return 2;
	}
	rt_signal_init();

	if (snprintf(path, sizeof(path), "%s/relation", data) >= (int) sizeof(path) ||
	    main_mkdirs(path) != 0) {
		RT_ERRORF("cannot create data folder %s: %s", path, strerror(errno));
		return 1;
	}
	rel_schema(fams);
	hb_table_opts topts = { .sync = fsync != 0 };
	if ((rc = hb_open(&t, path, fams, REL_FAM_NFAMS, &topts)) != WB_OK) {
		RT_ERRORF("cannot open store %s: %s %s", path, wb_strerror(rc), hb_last_error());
		return 1;
	}
	rt_server_opts sopts = { .name = "relation", .url = url, .workers = (int) nworkers };
	/* user.get is idempotent: one resend rides out a user service restart,
	 * and the whole check stays well inside a caller's 5 s deadline */
	rt_client_opts uopts = { .timeout_ms = 1500, .retries = 1 };
	if ((rc = rt_pub_open(&pub, pub_url)) != WB_OK ||
	    (rc = evlog_open(&log, t, REL_FAM_LOG, "relation", pub)) != WB_OK ||
	    (rc = rt_client_open(&users, user_url, &uopts)) != WB_OK ||
	    (rc = rel_svc_open(&svc, t, log, users)) != WB_OK ||
	    (rc = rt_server_open(&srv, &sopts)) != WB_OK ||
	    (rc = rel_svc_route(svc, srv)) != WB_OK ||
	    (rc = rt_server_start(srv)) != WB_OK) {
		RT_ERRORF("cannot start on %s (events on %s): %s", url, pub_url, wb_strerror(rc));
	} else {
		RT_INFOF("events on %s, data in %s", pub_url, path);
		rt_wait_for_signal();
		RT_INFOF("shutting down");
	}
	rt_server_close(srv);
	rel_svc_close(svc);
	rt_client_close(users);
	evlog_close(log);
	rt_pub_close(pub);
	hb_close(t);
	return rc == WB_OK ? 0 : 1;
}
