/*
 * main.c - warble-relation: follows, fans, counts and the follow event log.
 */
#include <stdio.h>

#include "rel.h"
#include "rt_config.h"
#include "rt_daemon.h"
#include "rt_log.h"
#include "rt_pubsub.h"
#include "rt_server.h"
#include "rel_schema.h"

int
main(int argc, char **argv)
{
	static rt_daemon   d = { .name = "relation" };
	static const char *url, *pub_url, *user_url;
	rt_opt             opts[] = {
		            { "relation-url", "WARBLE_RELATION_URL", "tcp://127.0.0.1:7102", "listen URL",
		                &url },
		            { "relation-pub-url", "WARBLE_RELATION_PUB_URL", "tcp://127.0.0.1:7112",
		                "event PUB URL", &pub_url },
		            { "user-url", "WARBLE_USER_URL", "tcp://127.0.0.1:7101", "user service URL",
		                &user_url },
		            { "data", "WARBLE_DATA", "./var", "data folder (the store is DATA/relation)",
		                &d.data },
		            { "log-level", "WARBLE_LOG_LEVEL", "info", "debug|info|warn|error", &d.level },
		            { "workers", "WARBLE_WORKERS", "8", "worker threads", &d.workers },
		            { "sync", "WARBLE_SYNC", "0", "1 = fsync the WAL on every write", &d.sync },
		            { NULL },
	};
	int            rc;
	hb_family_opts fams[REL_FAM_NFAMS];
	hb_table      *t = NULL;
	rt_pub        *pub = NULL;
	evlog         *log = NULL;
	rt_client     *users = NULL;
	rel_svc       *svc = NULL;
	rt_server     *srv = NULL;

	rc = rt_daemon_init(&d, opts, "the Warble relation service", argc, argv);
	if (rc != RT_DAEMON_RUN) {
		return rc;
	}
	if (rt_daemon_data_dir(&d) != WB_OK) {
		return rt_daemon_exit(1);
	}
	rel_schema(fams);
	hb_table_opts topts = { .sync = d.fsync };
	if ((rc = hb_open(&t, d.dir, fams, REL_FAM_NFAMS, &topts)) != WB_OK) {
		RT_ERRORF("cannot open store %s: %s %s", d.dir, wb_strerror(rc), hb_last_error());
		return rt_daemon_exit(1);
	}
	rt_server_opts sopts = { .name = "relation", .url = url, .workers = (int)d.nworkers };
	/* user.get is idempotent: one resend rides out a user service restart,
	 * and the whole check stays well inside a caller's 5 s deadline */
	rt_client_opts uopts = { .timeout_ms = 1500, .retries = 1 };
	if ((rc = rt_pub_open(&pub, pub_url)) != WB_OK ||
	    (rc = evlog_open(&log, t, REL_FAM_LOG, "relation", pub)) != WB_OK ||
	    (rc = rt_client_open(&users, user_url, &uopts)) != WB_OK ||
	    (rc = rel_svc_open(&svc, t, log, users)) != WB_OK ||
	    (rc = rt_server_open(&srv, &sopts)) != WB_OK ||
	    (rc = rel_svc_route(svc, srv)) != WB_OK ||
	    (rc = rt_server_gauge(srv, "store_bytes", hb_disk_bytes, t)) != WB_OK ||
	    (rc = rt_server_start(srv)) != WB_OK) {
		RT_ERRORF("cannot start on %s (events on %s): %s", url, pub_url, wb_strerror(rc));
	} else {
		RT_INFOF("events on %s, data in %s", pub_url, d.dir);
		rt_daemon_wait();
	}
	rt_server_close(srv);
	rel_svc_close(svc);
	rt_client_close(users);
	evlog_close(log);
	rt_pub_close(pub);
	hb_close(t);
	return rt_daemon_exit(rc == WB_OK ? 0 : 1);
}
