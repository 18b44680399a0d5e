/*
 * main.c - warble-content: posts, user timelines and the post event log.
 */
#include <stdio.h>

#include "content.h"
#include "rt_config.h"
#include "rt_daemon.h"
#include "rt_log.h"
#include "rt_pubsub.h"
#include "rt_server.h"
#include "content_schema.h"
#include "wb_id.h"

int
main(int argc, char **argv)
{
	static rt_daemon   d = { .name = "content" };
	static const char *url, *pub_url, *node;
	rt_opt             opts[] = {
		            { "content-url", "WARBLE_CONTENT_URL", "tcp://127.0.0.1:7103", "listen URL", &url },
		            { "content-pub-url", "WARBLE_CONTENT_PUB_URL", "tcp://127.0.0.1:7113",
		                "events PUB URL", &pub_url },
		            { "data", "WARBLE_DATA", "./var", "data folder (the store is DATA/content)",
		                &d.data },
		            { "node", "WARBLE_NODE", "0",
		                "post id node number, 0..63 (unique per content process)", &node },
		            { "log-level", "WARBLE_LOG_LEVEL", "info", "debug|info|warn|error", &d.level },
		            { "workers", "WARBLE_WORKERS", "8", "worker threads", &d.workers },
		            { "sync", "WARBLE_SYNC", "0", "1 = fsync the WAL on every write", &d.sync },
		            { NULL },
	};
	uint64_t       nodeno;
	int            rc;
	hb_family_opts fams[CONTENT_FAM_COUNT];
	hb_table      *t = NULL;
	rt_pub        *pub = NULL;
	evlog         *log = NULL;
	content       *svc = NULL;
	rt_server     *srv = NULL;

	rc = rt_daemon_init(&d, opts, "the Warble content service", argc, argv);
	if (rc != RT_DAEMON_RUN)
		return rc;
	if (rt_config_u64("node", node, 0, WB_ID_NODE_MAX, &nodeno) != 0)
		return 2;
	if (rt_daemon_data_dir(&d) != WB_OK)
		return rt_daemon_exit(1);
	content_schema_families(fams);
	hb_table_opts topts = { .sync = d.fsync };
	if ((rc = hb_open(&t, d.dir, fams, CONTENT_FAM_COUNT, &topts)) != WB_OK) {
		RT_ERRORF("cannot open store %s: %s %s", d.dir, wb_strerror(rc), hb_last_error());
		return rt_daemon_exit(1);
	}
	rt_server_opts sopts = { .name = "content", .url = url, .workers = (int)d.nworkers };
	if ((rc = rt_pub_open(&pub, pub_url)) != WB_OK ||
	    (rc = evlog_open(&log, t, CONTENT_FAM_LOG, "content", pub)) != WB_OK ||
	    (rc = content_open(&svc, t, log, (unsigned)nodeno)) != WB_OK ||
	    (rc = rt_server_open(&srv, &sopts)) != WB_OK ||
	    (rc = content_register(svc, srv)) != WB_OK ||
	    (rc = rt_server_gauge(srv, "store_bytes", hb_disk_bytes, t)) != WB_OK ||
	    (rc = rt_server_start(srv)) != WB_OK) {
		RT_ERRORF("cannot start on %s (events on %s): %s", url, pub_url, wb_strerror(rc));
		rt_server_close(srv);
		content_close(svc);
		evlog_close(log);
		rt_pub_close(pub);
		hb_close(t);
		return rt_daemon_exit(1);
	}
	RT_INFOF("listening on %s, events on %s, data in %s, last seq %llu", url, pub_url, d.dir,
	    (unsigned long long)evlog_last(log));
	rt_daemon_wait();
	rt_server_close(srv);
	content_close(svc);
	evlog_close(log);
	rt_pub_close(pub);
	hb_close(t);
	return rt_daemon_exit(0);
}
