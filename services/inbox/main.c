/*
 * main.c - warble-inbox: home timelines, filled by fan-out on write.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "inbox.h"
#include "rt_config.h"
#include "rt_log.h"
#include "rt_server.h"
#include "schema.h"

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
	static const char *url, *content_url, *relation_url, *content_pub, *relation_pub;
	static const char *data, *level, *workers, *sync, *max, *ttl, *backfill, *poll, *page;
	rt_opt opts[] = {
		{ "inbox-url", "WARBLE_INBOX_URL", "tcp://127.0.0.1:7104", "listen URL", &url },
		{ "content-url", "WARBLE_CONTENT_URL", "tcp://127.0.0.1:7103", "content service", &content_url },
		{ "relation-url", "WARBLE_RELATION_URL", "tcp://127.0.0.1:7102", "relation service", &relation_url },
		{ "content-pub-url", "WARBLE_CONTENT_PUB_URL", "tcp://127.0.0.1:7113", "content events", &content_pub },
		{ "relation-pub-url", "WARBLE_RELATION_PUB_URL", "tcp://127.0.0.1:7112", "relation events", &relation_pub },
		{ "data", "WARBLE_DATA", "./var", "data folder (the store is DATA/inbox)", &data },
		{ "log-level", "WARBLE_LOG_LEVEL", "info", "debug|info|warn|error", &level },
		{ "workers", "WARBLE_WORKERS", "4", "worker threads (inbox.home)", &workers },
		{ "sync", "WARBLE_SYNC", "0", "1 = fsync the WAL on every write", &sync },
		{ "inbox-max", "WARBLE_INBOX_MAX", "800", "posts kept per inbox", &max },
		{ "inbox-ttl", "WARBLE_INBOX_TTL", "2592000", "seconds a post stays in inboxes", &ttl },
		{ "backfill", "WARBLE_BACKFILL", "50", "posts copied into an inbox on follow", &backfill },
		{ "inbox-poll-ms", "WARBLE_INBOX_POLL_MS", "500", "pull a quiet source's log this often, ms", &poll },
		{ "inbox-fanout-page", "WARBLE_INBOX_FANOUT_PAGE", "10000", "fans per rel.fans page and write batch (1..10000)", &page },
		{ NULL },
	};
	uint64_t       nworkers, fsync, nmax, ttl_s, nback, poll_ms, npage;
	int            lvl, rc;
	char           path[4096];
	hb_family_opts fams[INBOX_FAM_COUNT];
	hb_table      *t = NULL;
	inbox         *svc = NULL;
	rt_server     *srv = NULL;

	rc = rt_config_parse(opts, "warble-inbox", "the Warble inbox service", argc, argv);
	if (rc != 0)
		return rc == RT_CONFIG_HELP ? 0 : 2;
	if ((lvl = rt_log_level_parse(level)) < 0) {
		fprintf(stderr, "warble-inbox: bad log level %s\n", level);
		return 2;
	}
	rt_log_init("inbox", (rt_level)lvl);
	if (rt_config_u64("workers", workers, 1, 256, &nworkers) != 0 ||
	    rt_config_u64("sync", sync, 0, 1, &fsync) != 0 ||
	    rt_config_u64("inbox-max", max, 1, 1000000, &nmax) != 0 ||
	    rt_config_u64("inbox-ttl", ttl, 1, UINT64_MAX / 1000, &ttl_s) != 0 ||
	    rt_config_u64("backfill", backfill, 0, 100000, &nback) != 0 ||
	    rt_config_u64("inbox-poll-ms", poll, 1, 3600000, &poll_ms) != 0 ||
	    rt_config_u64("inbox-fanout-page", page, 1, 10000, &npage) != 0)
		return 2;
	rt_signal_init();

	if (snprintf(path, sizeof(path), "%s/inbox", data) >= (int)sizeof(path) ||
	    main_mkdirs(path) != 0) {
		RT_ERRORF("cannot create data folder %s: %s", path, strerror(errno));
		return 1;
	}
	inbox_schema_families(fams, (uint32_t)nmax, ttl_s * 1000);
	hb_table_opts topts = { .sync = fsync != 0 };
	if ((rc = hb_open(&t, path, fams, INBOX_FAM_COUNT, &topts)) != WB_OK) {
		RT_ERRORF("cannot open store %s: %s %s", path, wb_strerror(rc),
		    hb_last_error());
		return 1;
	}
	inbox_opts iopts = {
		.content_url = content_url,
		.relation_url = relation_url,
		.content_pub_url = content_pub,
		.relation_pub_url = relation_pub,
		.backfill = (uint32_t)nback,
		.poll_ms = (uint32_t)poll_ms,
		.fans_page = (uint32_t)npage,
	};
	rt_server_opts sopts = { .name = "inbox", .url = url, .workers = (int)nworkers };
	if ((rc = inbox_open(&svc, t, &iopts)) != WB_OK ||
	    (rc = rt_server_open(&srv, &sopts)) != WB_OK ||
	    (rc = inbox_register(svc, srv)) != WB_OK ||
	    (rc = rt_server_start(srv)) != WB_OK ||
	    (rc = inbox_start(svc)) != WB_OK) {
		RT_ERRORF("cannot start on %s: %s", url, wb_strerror(rc));
		rt_server_close(srv);
		inbox_close(svc);
		hb_close(t);
		return 1;
	}
	RT_INFOF("listening on %s, data in %s", url, path);
	rt_wait_for_signal();
	RT_INFOF("shutting down");
	rt_server_close(srv);
	inbox_stop(svc);
	inbox_close(svc);
	hb_close(t);
	return 0;
}
