/*
 * fanout_bench.c - how fast warble-inbox writes a post into N inboxes.
 *
 * Runs the real warble-inbox against stand-ins for relation (rel.fans
 * serves fans 1..N in pages) and content (post.log serves POSTS post
 * events by author N+1), waits until every event is applied and prints
 * the fan-out time, cells/s and the inbox's peak RSS.
 *
 *   build/bench/fanout_bench [fans (default 1000000)] [posts (default 3)]
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rt_client.h"
#include "rt_log.h"
#include "rt_server.h"
#include "wb_id.h"

static uint64_t nfans = 1000000, nposts = 3, author, first_id;

static int bench_fans(void *arg, const wb_obj *req, wb_obj *rep)
{
	(void)arg;
	uint64_t after = wb_u64(req, WB_F_AFTER, 0);
	uint64_t limit = wb_u64(req, WB_F_LIMIT, 100);
	if (limit > 10000)
		limit = 10000;
	uint64_t n = after >= nfans ? 0 : nfans - after;
	if (n > limit)
		n = limit;
	uint64_t *v = wb_add_u64s(rep, WB_F_UIDS, n);
	if (n && v == NULL)
		return WB_ENOMEM;
	for (uint64_t i = 0; i < n; i++)
		v[i] = after + 1 + i;
	if (after + n < nfans)
		return wb_set_u64(rep, WB_F_NEXT, after + n);
	return WB_OK;
}

static int bench_log(void *arg, const wb_obj *req, wb_obj *rep)
{
	bool     posts = arg != NULL;
	uint64_t last = posts ? nposts : 0, from = wb_u64(req, WB_F_FROM, 1);
	if (from == 0)
		from = 1;
	uint64_t n = from > last ? 0 : last - from + 1;
	wb_obj  *ev = n ? wb_add_objs(rep, WB_F_EVENTS, n) : NULL;
	for (uint64_t i = 0; i < n; i++) {
		wb_set_u64(&ev[i], WB_F_SEQ, from + i);
		wb_set_cstr(&ev[i], WB_F_TYPE, "post");
		wb_set_u64(&ev[i], WB_F_UID, author);
		wb_set_u64(&ev[i], WB_F_ID, first_id + from + i);
	}
	return wb_set_u64(rep, WB_F_LAST, last);
}

static int bench_timeline(void *arg, const wb_obj *req, wb_obj *rep)
{
	(void)arg;
	(void)req;
	(void)wb_add_objs(rep, WB_F_POSTS, 0);
	return WB_OK;
}

static uint64_t bench_gauge(rt_client *c, const char *name)
{
	wb_obj       *req = wb_request(WB_OP_STATS), *rep = NULL;
	const wb_obj *g = NULL;
	size_t        n = 0;
	uint64_t      v = UINT64_MAX;
	if (rt_call(c, req, &rep) == WB_OK) {
		(void)wb_get_objs(rep, WB_F_GAUGES, &g, &n);
		for (size_t i = 0; i < n; i++)
			if (strcmp(wb_str(&g[i], WB_F_NAME, ""), name) == 0)
				v = wb_u64(&g[i], WB_F_VALUE, 0);
	}
	wb_msg_free(req);
	wb_msg_free(rep);
	return v;
}

static double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long bench_rss_kb(pid_t pid, const char *key)
{
	char  path[64], line[256];
	long  kb = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, strlen(key)) == 0)
			kb = strtol(line + strlen(key), NULL, 10);
	fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		nfans = strtoull(argv[1], NULL, 10);
	if (argc > 2)
		nposts = strtoull(argv[2], NULL, 10);
	author = nfans + 1;
	first_id = wb_id_min(wb_now_ms());
	rt_log_init("fanout_bench", RT_WARN);

	char dir[] = "/tmp/wbb.XXXXXX", rel[128], con[128], inb[128], nopub[128], bin[4096];
	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(rel, sizeof(rel), "ipc://%s/rel.ipc", dir);
	snprintf(con, sizeof(con), "ipc://%s/content.ipc", dir);
	snprintf(inb, sizeof(inb), "ipc://%s/inbox.ipc", dir);
	snprintf(nopub, sizeof(nopub), "ipc://%s/nopub.ipc", dir);
	snprintf(bin, sizeof(bin), "%s", argv[0]);
	char *slash = strrchr(bin, '/');
	snprintf(slash ? slash + 1 : bin, sizeof(bin) - (size_t)(slash ? slash + 1 - bin : 0),
	    "../bin/warble-inbox");

	rt_server     *rs = NULL, *cs = NULL;
	rt_server_opts ro = { .name = "relation", .url = rel, .workers = 2 };
	rt_server_opts co = { .name = "content", .url = con, .workers = 1 };
	if (rt_server_open(&rs, &ro) || rt_server_handle(rs, WB_OP_REL_FANS, bench_fans, NULL) ||
	    rt_server_handle(rs, WB_OP_REL_LOG, bench_log, NULL) || rt_server_start(rs) ||
	    rt_server_open(&cs, &co) ||
	    rt_server_handle(cs, WB_OP_POST_LOG, bench_log, (void *)1) ||
	    rt_server_handle(cs, WB_OP_POST_TIMELINE, bench_timeline, NULL) ||
	    rt_server_start(cs)) {
		fprintf(stderr, "fanout_bench: cannot start the stand-ins\n");
		return 1;
	}
	double t0 = bench_now();
	pid_t  pid = fork();
	if (pid == 0) {
		execl(bin, "warble-inbox", "--inbox-url", inb, "--content-url", con,
		    "--relation-url", rel, "--content-pub-url", nopub, "--relation-pub-url",
		    nopub, "--data", dir, "--log-level", "warn", (char *)NULL);
		perror(bin);
		_exit(127);
	}
	rt_client     *c = NULL;
	rt_client_opts o = { .timeout_ms = 2000 };
	rt_client_open(&c, inb, &o);
	uint64_t applied = 0;
	int      rc = 0;
	while ((applied = bench_gauge(c, "content_applied")) == UINT64_MAX || applied < nposts) {
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			fprintf(stderr, "fanout_bench: warble-inbox exited\n");
			return 1;
		}
		if (bench_now() - t0 > 600) {
			fprintf(stderr, "fanout_bench: timed out at %llu applied\n",
			    (unsigned long long)applied);
			rc = 1;
			break;
		}
		usleep(2000);
	}
	double   t1 = bench_now();
	uint64_t cells = bench_gauge(c, "cells_written");
	uint64_t last_ms = bench_gauge(c, "last_fanout_ms");
	long     hwm = bench_rss_kb(pid, "VmHWM:");
	printf("fanout_bench: %llu fans x %llu posts = %llu cells in %.3f s (incl. start): "
	       "%.0f cells/s; last post's fan-out %llu ms (%.0f cells/s); inbox peak RSS %ld MiB\n",
	    (unsigned long long)nfans, (unsigned long long)nposts, (unsigned long long)cells,
	    t1 - t0, (double)cells / (t1 - t0), (unsigned long long)last_ms,
	    last_ms ? (double)nfans * 1000.0 / (double)last_ms : 0.0, hwm / 1024);
	rt_client_close(c);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	rt_server_close(rs);
	rt_server_close(cs);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		rc = 1;
	return rc;
}
