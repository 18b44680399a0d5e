/*
 * main.c - warble-inbox: home timelines, filled by fan-out on write.
 */
#include <stdio.h>

#include "inbox.h"
#include "rt_config.h"
#include "rt_daemon.h"
#include "rt_log.h"
#include "rt_server.h"
#include "inbox_schema.h"

int
main(int argc, char **argv)
{
	static rt_daemon   d = { .name = "inbox" };
	static const char *url, *content_url, *relation_url, *content_pub, *relation_pub;
	static const char *max, *ttl, *backfill, *poll, *page;
	rt_opt             opts[] = {
		            { "inbox-url", "WARBLE_INBOX_URL", "tcp://127.0.0.1:7104", "listen URL", &url },
		            { "content-url", "WARBLE_CONTENT_URL", "tcp://127.0.0.1:7103", "content service",
		                &content_url },
		            { "relation-url", "WARBLE_RELATION_URL", "tcp://127.0.0.1:7102", "relation service",
		                &relation_url },
		            { "content-pub-url", "WARBLE_CONTENT_PUB_URL", "tcp://127.0.0.1:7113",
		                "content events", &content_pub },
		            { "relation-pub-url", "WARBLE_RELATION_PUB_URL", "tcp://127.0.0.1:7112",
		                "relation events", &relation_pub },
		            { "data", "WARBLE_DATA", "./var", "data folder (the store is DATA/inbox)",
		                &d.data },
		            { "log-level", "WARBLE_LOG_LEVEL", "info", "debug|info|warn|error", &d.level },
		            { "workers", "WARBLE_WORKERS", "4", "worker threads (inbox.home)", &d.workers },
		            { "sync", "WARBLE_SYNC", "0", "1 = fsync the WAL on every write", &d.sync },
		            { "inbox-max", "WARBLE_INBOX_MAX", "800", "posts kept per inbox", &max },
		            { "inbox-ttl", "WARBLE_INBOX_TTL", "2592000", "seconds a post stays in inboxes",
		                &ttl },
		            { "backfill", "WARBLE_BACKFILL", "50", "posts copied into an inbox on follow",
		                &backfill },
		            { "inbox-poll-ms", "WARBLE_INBOX_POLL_MS", "500",
		                "pull a quiet source's log this often, ms", &poll },
		            { "inbox-fanout-page", "WARBLE_INBOX_FANOUT_PAGE", "10000",
		                "fans per rel.fans page and write batch (1..10000)", &page },
		            { NULL },
	};
	uint64_t       nmax, ttl_s, nback, poll_ms, npage;
	int            rc;
	hb_family_opts fams[INBOX_FAM_COUNT];
	hb_table      *t = NULL;
	inbox         *svc = NULL;
	rt_server     *srv = NULL;

	rc = rt_daemon_init(&d, opts, "the Warble inbox service", argc, argv);
	if (rc != RT_DAEMON_RUN)
		return rc;
	if (rt_config_u64("inbox-max", max, 1, 1000000, &nmax) != 0 ||
	    rt_config_u64("inbox-ttl", ttl, 1, UINT64_MAX / 1000, &ttl_s) != 0 ||
	    rt_config_u64("backfill", backfill, 0, 100000, &nback) != 0 ||
	    rt_config_u64("inbox-poll-ms", poll, 1, 3600000, &poll_ms) != 0 ||
	    rt_config_u64("inbox-fanout-page", page, 1, 10000, &npage) != 0)
		return 2;
	if (rt_daemon_data_dir(&d) != WB_OK)
		return rt_daemon_exit(1);
	inbox_schema_families(fams, (uint32_t)nmax, ttl_s * 1000);
	hb_table_opts topts = { .sync = d.fsync };
	if ((rc = hb_open(&t, d.dir, fams, INBOX_FAM_COUNT, &topts)) != WB_OK) {
		RT_ERRORF("cannot open store %s: %s %s", d.dir, wb_strerror(rc), hb_last_error());
		return rt_daemon_exit(1);
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
	rt_server_opts sopts = { .name = "inbox", .url = url, .workers = (int)d.nworkers };
	if ((rc = inbox_open(&svc, t, &iopts)) != WB_OK ||
	    (rc = rt_server_open(&srv, &sopts)) != WB_OK ||
	    (rc = inbox_register(svc, srv)) != WB_OK ||
	    (rc = rt_server_gauge(srv, "store_bytes", hb_disk_bytes, t)) != WB_OK ||
	    (rc = rt_server_start(srv)) != WB_OK || (rc = inbox_start(svc)) != WB_OK) {
		RT_ERRORF("cannot start on %s: %s", url, wb_strerror(rc));
		rt_server_close(srv);
		inbox_close(svc);
		hb_close(t);
		return rt_daemon_exit(1);
	}
	RT_INFOF("listening on %s, data in %s", url, d.dir);
	rt_daemon_wait();
	rt_server_close(srv);
	inbox_stop(svc);
	inbox_close(svc);
	hb_close(t);
	return rt_daemon_exit(0);
}
