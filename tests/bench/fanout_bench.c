/*
 * fanout_bench.c - how fast warble-inbox writes a post into N inboxes.
 *
 * Runs the real warble-inbox against stand-ins for relation (rel.fans
 * serves fans 1..N in pages, in slot order as relation keeps them) and
 * content (post.log serves POSTS post events by author N+1), waits until every event is applied and prints
 * each post's fan-out time (min and median; fan-out on write for any
 * number of fans: --fanout-limit 0), cells/s, the CPU seconds
 * the inbox and the stand-ins spent, the inbox's peak RSS, and then,
 * with the inbox stopped, the tl family's bytes on disk per entry after
 * a full compaction.
 *
 *   build/bench/fanout_bench [fans (default 1000000)] [posts (default 3)]
 *
 * FANOUT_BENCH_CALLGRIND=FILE runs the inbox under valgrind's callgrind
 * (instruction counts, for a machine too noisy for wall time);
 * FANOUT_BENCH_INBOX=PATH runs another warble-inbox binary (A/B runs);
 * FANOUT_BENCH_NO_DISK=1 skips the compaction at the end.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rt_client.h"
#include "rt_log.h"
#include "rt_server.h"
#include "wb_id.h"
#include "wb_slot.h"

/* The bench links no service library: the inbox's own family settings
 * are compiled in, so the offline compaction below cannot drift. */
#include "inbox_schema.c"
#include "wb_clock.h"

static uint64_t  nfans = 1000000, nposts = 3, author, first_id;
static uint64_t *fans_by_slot; /* 1..nfans as relation pages them: by slot, then uid */

/* bench_slot_cmp orders uids as relation's fans qualifier does: slot, then uid. */
static int
bench_slot_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	unsigned sx = wb_slot(x), sy = wb_slot(y);

	if (sx != sy) {
		return sx < sy ? -1 : 1;
	}
	return x < y ? -1 : x > y;
}

static int
bench_fans(void *arg, const wb_obj *req, wb_obj *rep)
{
	(void)arg;
	uint64_t after = wb_u64(req, WB_F_AFTER, 0);
	uint64_t limit = wb_u64(req, WB_F_LIMIT, 100);
	if (limit > 10000) {
		limit = 10000;
	}
	uint64_t n = after >= nfans ? 0 : nfans - after;
	if (n > limit) {
		n = limit;
	}
	uint64_t *v = wb_add_u64s(rep, WB_F_UIDS, n);
	if (n && v == NULL) {
		return WB_ENOMEM;
	}
	if (n > 0) {
		memcpy(v, fans_by_slot + after, n * sizeof(*v));
	}
	if (after + n < nfans) {
		return wb_set_u64(rep, WB_F_NEXT, after + n);
	}
	return WB_OK;
}

static int
bench_log(void *arg, const wb_obj *req, wb_obj *rep)
{
	bool     posts = arg != NULL;
	uint64_t last = posts ? nposts : 0, from = wb_u64(req, WB_F_FROM, 1);
	if (from == 0) {
		from = 1;
	}
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

static int
bench_timeline(void *arg, const wb_obj *req, wb_obj *rep)
{
	(void)arg;
	(void)req;
	(void)wb_add_objs(rep, WB_F_POSTS, 0);
	return WB_OK;
}

/* bench_gauges reads the named gauges in one stats call (UINT64_MAX if absent or unreachable). */
static void
bench_gauges(rt_client *c, const char *const *names, uint64_t *v, size_t n)
{
	wb_obj       *req = wb_request(WB_OP_STATS), *rep = NULL;
	const wb_obj *g = NULL;
	size_t        ng = 0;
	for (size_t k = 0; k < n; k++) {
		v[k] = UINT64_MAX;
	}
	if (rt_call(c, req, &rep) == WB_OK) {
		(void)wb_get_objs(rep, WB_F_GAUGES, &g, &ng);
		for (size_t i = 0; i < ng; i++) {
			for (size_t k = 0; k < n; k++) {
				if (strcmp(wb_str(&g[i], WB_F_NAME, ""), names[k]) == 0) {
					v[k] = wb_u64(&g[i], WB_F_VALUE, 0);
				}
			}
		}
	}
	wb_msg_free(req);
	wb_msg_free(rep);
}

static uint64_t
bench_gauge(rt_client *c, const char *name)
{
	uint64_t v;
	bench_gauges(c, &name, &v, 1);
	return v;
}

static double
bench_now(void)
{
	return (double)wb_mono_us() / 1e6;
}

static long
bench_rss_kb(pid_t pid, const char *key)
{
	char path[64], line[256];
	long kb = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, strlen(key)) == 0) {
			kb = strtol(line + strlen(key), NULL, 10);
		}
	}
	fclose(f);
	return kb;
}

/* bench_cpu_s returns a process's user + system CPU seconds so far (-1 if unknown). */
static double
bench_cpu_s(pid_t pid)
{
	char               path[64], buf[1024];
	unsigned long long ut = 0, st = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (f == NULL) {
		return -1;
	}
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')'); /* fields after the command name */
	if (p == NULL ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) {
		return -1;
	}
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* bench_self_cpu_s returns this process's CPU seconds (the stand-ins). */
static double
bench_self_cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int
bench_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* bench_disk compacts the stopped inbox store at path and prints its bytes per tl entry. */
static int
bench_disk(const char *path)
{
	hb_family_opts fams[INBOX_FAM_COUNT];
	hb_table_opts  topts = { 0 };
	hb_table      *t = NULL;
	hb_scan       *sc = NULL;
	hb_cell        cell;
	uint64_t       cells = 0, sst = 0;
	inbox_schema_families(fams, 800, 2592000000ull);
	int rc = hb_open(&t, path, fams, INBOX_FAM_COUNT, &topts);
	if (rc == WB_OK) {
		rc = hb_compact(t, INBOX_FAM_TL);
	}
	if (rc == WB_OK) {
		rc = hb_scan_open(&sc, t, INBOX_FAM_TL, NULL);
	}
	while (rc == WB_OK && (rc = hb_scan_next(sc, &cell)) == WB_OK) {
		cells++;
	}
	hb_scan_close(sc);
	if (rc == WB_EEND) {
		rc = hb_family_stats(t, INBOX_FAM_TL, &sst, NULL);
	}
	hb_close(t);
	if (rc != WB_OK) {
		fprintf(stderr, "fanout_bench: compaction of %s: %s %s\n", path, wb_strerror(rc),
		    hb_last_error());
		return 1;
	}
	printf(
	    "fanout_bench: after compaction: %llu entries in %llu B of tl tables = %.2f B/entry\n",
	    (unsigned long long)cells, (unsigned long long)sst,
	    cells ? (double)sst / (double)cells : 0.0);
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc > 1) {
		nfans = strtoull(argv[1], NULL, 10);
	}
	if (argc > 2) {
		nposts = strtoull(argv[2], NULL, 10);
	}
	author = nfans + 1;
	if ((fans_by_slot = malloc(nfans * sizeof(*fans_by_slot))) == NULL) {
		return 1;
	}
	for (uint64_t i = 0; i < nfans; i++) {
		fans_by_slot[i] = i + 1;
	}
	qsort(fans_by_slot, nfans, sizeof(*fans_by_slot), bench_slot_cmp);
	first_id = wb_id_min(wb_now_ms());
	rt_log_init("fanout_bench", RT_WARN);

	char dir[] = "/tmp/wbb.XXXXXX", rel[128], con[128], inb[128], nopub[128], bin[4096];
	if (mkdtemp(dir) == NULL) {
		return 1;
	}
	snprintf(rel, sizeof(rel), "ipc://%s/rel.ipc", dir);
	snprintf(con, sizeof(con), "ipc://%s/content.ipc", dir);
	snprintf(inb, sizeof(inb), "ipc://%s/inbox.ipc", dir);
	snprintf(nopub, sizeof(nopub), "ipc://%s/nopub.ipc", dir);
	snprintf(bin, sizeof(bin), "%s", argv[0]);
	char *slash = strrchr(bin, '/');
	snprintf(slash ? slash + 1 : bin, sizeof(bin) - (size_t)(slash ? slash + 1 - bin : 0),
	    "../bin/warble-inbox");
	if (getenv("FANOUT_BENCH_INBOX") != NULL) { /* another build of the inbox, for A/B runs */
		snprintf(bin, sizeof(bin), "%s", getenv("FANOUT_BENCH_INBOX"));
	}

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
	double      t0 = bench_now();
	pid_t       pid = fork();
	const char *cg = getenv("FANOUT_BENCH_CALLGRIND"); /* instruction counts, not time */
	if (pid == 0) {
		char out[4200];
		snprintf(out, sizeof(out), "--callgrind-out-file=%s", cg ? cg : "");
		if (cg != NULL) {
			execl("/usr/bin/valgrind", "valgrind", "--tool=callgrind", out, bin,
			    "--inbox-url", inb, "--content-url", con, "--relation-url", rel,
			    "--content-pub-url", nopub, "--relation-pub-url", nopub, "--data", dir,
			    "--log-level", "warn", "--fanout-limit", "0", (char *)NULL);
		} else {
			execl(bin, "warble-inbox", "--inbox-url", inb, "--content-url", con,
			    "--relation-url", rel, "--content-pub-url", nopub, "--relation-pub-url",
			    nopub, "--data", dir, "--log-level", "warn", "--fanout-limit", "0",
			    (char *)NULL);
		}
		perror(bin);
		_exit(127);
	}
	rt_client     *c = NULL;
	rt_client_opts o = { .timeout_ms = 2000 };
	rt_client_open(&c, inb, &o);
	static const char *const names[] = { "content_applied", "last_fanout_ms" };
	uint64_t                 g[2], seen = 0;
	uint64_t                *ms = calloc(nposts ? nposts : 1, sizeof(*ms));
	double                   cpu0 = bench_self_cpu_s();
	int                      rc = 0;
	if (ms == NULL) {
		return 1;
	}
	for (;;) {
		bench_gauges(c, names, g, 2);
		if (g[0] != UINT64_MAX && g[0] > seen) {
			/* polled every 2 ms: a post that took longer is never skipped
			 * (under callgrind, every 200 ms: only instructions count) */
			for (uint64_t k = seen; k < g[0] && k < nposts; k++) {
				ms[k] = g[1];
			}
			seen = g[0];
		}
		if (seen >= nposts) {
			break;
		}
		if (waitpid(pid, NULL, WNOHANG) == pid) {
			fprintf(stderr, "fanout_bench: warble-inbox exited\n");
			return 1;
		}
		if (bench_now() - t0 > 600) {
			fprintf(stderr, "fanout_bench: timed out at %llu applied\n",
			    (unsigned long long)seen);
			rc = 1;
			break;
		}
		usleep(cg ? 200000 : 2000);
	}
	double   t1 = bench_now();
	uint64_t cells = bench_gauge(c, "cells_written");
	long     hwm = bench_rss_kb(pid, "VmHWM:");
	double   icpu = bench_cpu_s(pid), scpu = bench_self_cpu_s() - cpu0;
	uint64_t n = seen < nposts ? seen : nposts;
	qsort(ms, n, sizeof(*ms), bench_cmp_u64);
	uint64_t lo = n ? ms[0] : 0, med = n ? ms[n / 2] : 0;
	printf("fanout_bench: %llu fans x %llu posts = %llu cells in %.3f s (incl. start): "
	       "%.0f cells/s\n",
	    (unsigned long long)nfans, (unsigned long long)nposts, (unsigned long long)cells,
	    t1 - t0, (double)cells / (t1 - t0));
	printf("fanout_bench: one post's fan-out: min %llu ms (%.0f cells/s), median %llu ms "
	       "(%.0f cells/s)\n",
	    (unsigned long long)lo, lo ? (double)nfans * 1000.0 / (double)lo : 0.0,
	    (unsigned long long)med, med ? (double)nfans * 1000.0 / (double)med : 0.0);
	printf("fanout_bench: CPU: inbox %.2f s (%.2f us/cell, start included), stand-ins %.2f s; "
	       "inbox peak RSS %ld MiB\n",
	    icpu, cells ? icpu * 1e6 / (double)cells : 0.0, scpu, hwm / 1024);
	free(ms);
	rt_client_close(c);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
	rt_server_close(rs);
	rt_server_close(cs);
	char store[256];
	snprintf(store, sizeof(store), "%s/inbox", dir);
	if (rc == 0 && getenv("FANOUT_BENCH_NO_DISK") == NULL) {
		rc = bench_disk(store);
	}
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0) {
		rc = 1;
	}
	return rc;
}
