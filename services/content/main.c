/*
 * main.c - warble-content: posts, user timelines and the post event log.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "content.h"
#include "rt_config.h"
#include "rt_log.h"
#include "rt_pubsub.h"
#include "rt_server.h"
#include "schema.h"
#include "wb_id.h"

/* main_mkdirs creates path and its parents (mkdir -p). */
static int main_mkdirs(const char *path)
{
	char buf[4096];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -1;
	for (char *p = buf + 1; *p != '\0'; p++) {
		if (*p == '/') {
			*p = '\0';
			if (mkdir(buf, 0755) != 0 && errno != EEXIST)
				return -1;
			*p = '/';
		}
	}
	return mkdir(buf, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

int main(int argc, char **argv)
{
	static const char *url, *pub_url, *data, *level, *workers, *sync, *node;
	rt_opt opts[] = {
		{ "content-url", "WARBLE_CONTENT_URL", "tcp://127.0.0.1:7103", "listen URL", &url },
		{ "content-pub-url", "WARBLE_CONTENT_PUB_URL", "tcp://127.0.0.1:7113", "events PUB URL", &pub_url },
		{ "data", "WARBLE_DATA", "./var", "data folder (the store is DATA/content)", &data },
		{ "node", "WARBLE_NODE", "0", "post id node number, 0..63 (unique per content process)", &node },
		{ "log-level", "WARBLE_LOG_LEVEL", "info", "debug|info|warn|error", &level },
		{ "workers", "WARBLE_WORKERS", "8", "worker threads", &workers },
		{ "sync", "WARBLE_SYNC", "0", "1 = fsync the WAL on every write", &sync },
		{ NULL },
	};
	uint64_t       nworkers, fsync, nodeno;
	int            lvl, rc;
	char           path[4096];
	hb_family_opts fams[CONTENT_FAM_COUNT];
	hb_table      *t = NULL;
	rt_pub        *pub = NULL;
	evlog         *log = NULL;
	content       *svc = NULL;
	rt_server     *srv = NULL;

	rc = rt_config_parse(opts, "warble-content", "the Warble content service", argc, argv);
	if (rc != 0)
		return rc == RT_CONFIG_HELP ? 0 : 2;
	if ((lvl = rt_log_level_parse(level)) < 0) {
		fprintf(stderr, "warble-content: bad log level %s\n", level);
		return 2;
	}
	rt_log_init("content", (rt_level)lvl);
	if (rt_config_u64("workers", workers, 1, 256, &nworkers) != 0 ||
	    rt_config_u64("sync", sync, 0, 1, &fsync) != 0 ||
	    rt_config_u64("node", node, 0, WB_ID_NODE_MAX, &nodeno) != 0)
		return 2;
	rt_signal_init();

	if (snprintf(path, sizeof(path), "%s/content", data) >= (int)sizeof(path) ||
	    main_mkdirs(path) != 0) {
		RT_ERRORF("cannot create data folder %s: %s", path, strerror(errno));
		return 1;
	}
	content_schema_families(fams);
	hb_table_opts topts = { .sync = fsync != 0 };
	if ((rc = hb_open(&t, path, fams, CONTENT_FAM_COUNT, &topts)) != WB_OK) {
		RT_ERRORF("cannot open store %s: %s %s", path, wb_strerror(rc),
		    hb_last_error());
		return 1;
	}
	rt_server_opts sopts = { .name = "content", .url = url, .workers = (int)nworkers };
	if ((rc = rt_pub_open(&pub, pub_url)) != WB_OK ||
	    (rc = evlog_open(&log, t, CONTENT_FAM_LOG, "content", pub)) != WB_OK ||
	    (rc = content_open(&svc, t, log, (unsigned)nodeno)) != WB_OK ||
	    (rc = rt_server_open(&srv, &sopts)) != WB_OK ||
	    (rc = content_register(svc, srv)) != WB_OK ||
	    (rc = rt_server_start(srv)) != WB_OK) {
		RT_ERRORF("cannot start on %s (events on %s): %s", url, pub_url,
		    wb_strerror(rc));
		rt_server_close(srv);
		content_close(svc);
		evlog_close(log);
		rt_pub_close(pub);
		hb_close(t);
		return 1;
	}
	RT_INFOF("listening on %s, events on %s, data in %s, last seq %llu", url,
	    pub_url, path, (unsigned long long)evlog_last(log));
	rt_wait_for_signal();
	RT_INFOF("shutting down");
	rt_server_close(srv);
	content_close(svc);
	evlog_close(log);
	rt_pub_close(pub);
	hb_close(t);
	return 0;
}
