/*
 * rt_daemon.c - the lifecycle every Warble daemon shares (see
 * rt_daemon.h): options, logging, signals, the data folder and store,
 * the server, the service's own steps, the wait, and the ordered stop.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <nng/nng.h>

#include "rt_client.h"
#include "rt_daemon.h"
#include "rt_log.h"
#include "rt_loop.h"
#include "rt_sp.h"
#include "rt_tls.h"
#include "wb_errors.h"

#define RT_DAEMON_MAX_WORKERS 256
#define RT_DAEMON_MAX_OPTS    48
#define RT_DAEMON_RUN         (-1) /* rt_daemon_config: go on */
#define RT_DAEMON_PER_CPU     3    /* --workers auto: threads a CPU */
#define RT_DAEMON_LOOP_YIELDS 3    /* --yield 1: looks of a worker for its next request */
#define RT_DAEMON_CALL_YIELDS 10   /* ... and of a caller for its reply (rt_sp.h) */

/* The values of the common options. */
typedef struct rt_common {
	const char *url, *data, *level, *workers, *sync, *yield, *shard_s, *tls_dir, *metrics;
	uint64_t    nworkers;
	bool        fsync;
	wb_shard    shard;          /* --shard (0 of 1 unless the service is sharded) */
	bool        upgrade;        /* the store recorded no layout yet: rt_env.upgrade */
	bool        all;            /* in one process with the other services */
	char        dir[4096];      /* DATA/<name> */
	char        data_help[128]; /* --data's help names the store's folder */
} rt_common;

/* rt_daemon_opts writes s's options and the common rows into opts; false if they do not fit. */
static bool
rt_daemon_opts(const rt_service *s, rt_common *c, rt_opt *opts, size_t max)
{
	size_t      n = 0;
	const char *workers = c->all && s->workers_all != NULL ? s->workers_all : s->workers;
	const char *metrics = c->all ? RT_DAEMON_METRICS_URL : s->metrics_url;
	enum { DATA, LEVEL, WORKERS, SYNC, YIELD, SHARD, TLS, METRICS };
	const rt_opt common[] = {
		{ "data", "WARBLE_DATA", "./var", c->data_help, &c->data },
		{ "log-level", "WARBLE_LOG_LEVEL", "info", "debug|info|warn|error", &c->level },
		{ "workers", "WARBLE_WORKERS", workers != NULL ? workers : "8",
		    s->workers_help != NULL ? s->workers_help : "worker threads", &c->workers },
		{ "sync", "WARBLE_SYNC", "0", "1 = fsync the WAL on every write", &c->sync },
		{ "yield", "WARBLE_YIELD", "1",
		    "1 = a thread out of work gives up its CPU a few times, looking for more, "
		    "before it sleeps: fewer sleeps and wake-ups under load "
		    "(docs/operations.md); 0 = it sleeps at once",
		    &c->yield },
		{ "shard", "WARBLE_SHARD", "0/1",
		    "this process's shard, i/N: it owns slot groups [i*64/N, (i+1)*64/N) "
		    "(docs/architecture.md)",
		    &c->shard_s },
		{ "tls-dir", "WARBLE_TLS_DIR", "",
		    "folder of ca.pem and each service's NAME.pem and NAME.key: mutual TLS 1.3 on "
		    "every internal port, each operation open only to the services that call it "
		    "(docs/operations.md; empty: none)",
		    &c->tls_dir },
		{ "metrics-url", "WARBLE_METRICS_URL", metrics,
		    "admin HTTP port: /metrics (Prometheus), /healthz, /readyz; port 0: any free "
		    "port (logged, and the metrics_port gauge of stats); keep it off public "
		    "networks",
		    &c->metrics },
	};

	opts[n] = s->listen;
	opts[n++].value = &c->url;
	for (const rt_opt *o = s->opts; o != NULL && !rt_opt_end(o); o++) {
		if (n + 1 >= max) {
			return false;
		}
		opts[n++] = *o;
	}
	for (size_t i = 0; i < sizeof(common) / sizeof(common[0]); i++) {
		bool store_row = i == DATA || i == SYNC; /* they belong to a store */
		if ((store_row && s->nfams == 0) || (i == SHARD && !s->sharded) ||
		    (i == METRICS && metrics == NULL)) {
			continue;
		}
		if (n + 1 >= max) {
			return false;
		}
		opts[n++] = common[i];
	}
	opts[n] = (rt_opt) { NULL };
	return true;
}

#define RT_DAEMON_CGROUP "/sys/fs/cgroup"

/* rt_daemon_quota returns the CPUs (rounded up) that the cgroup v2 CPU quota (cpu.max) of this process's cgroup and of its ancestors allows; 0: no quota. */
static uint64_t
rt_daemon_quota(void)
{
	char               line[4096], dir[4200] = RT_DAEMON_CGROUP, file[4300];
	unsigned long long quota, period;
	uint64_t           cpus = 0;
	size_t             root = strlen(RT_DAEMON_CGROUP);
	FILE              *f;

	if ((f = fopen("/proc/self/cgroup", "r")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL) {
			if (strncmp(line, "0::/", 4) == 0) { /* the unified hierarchy's line */
				line[strcspn(line, "\n")] = '\0';
				snprintf(dir, sizeof(dir), "%s%s", RT_DAEMON_CGROUP, line + 3);
				break;
			}
		}
		fclose(f);
	}
	for (;;) {
		char *slash;

		snprintf(file, sizeof(file), "%s/cpu.max", dir);
		if ((f = fopen(file, "r")) != NULL) {
			/* "max 100000" (no quota) does not scan */
			if (fscanf(f, "%llu %llu", &quota, &period) == 2 && period > 0) {
				uint64_t n = (quota + period - 1) / period;
				cpus = cpus == 0 || n < cpus ? n : cpus;
			}
			fclose(f);
		}
		if (strlen(dir) <= root || (slash = strrchr(dir, '/')) == NULL) {
			return cpus;
		}
		*slash = '\0'; /* the parent: an ancestor's quota binds too */
	}
}

/* rt_daemon_cpus counts the CPUs this process may run on, and no more than its cgroups' CPU quota. */
static uint64_t
rt_daemon_cpus(void)
{
	cpu_set_t set;
	uint64_t  n = 1, quota = rt_daemon_quota();

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) {
		n = (uint64_t)CPU_COUNT(&set);
	}
	return quota > 0 && quota < n ? quota : n;
}

/* rt_daemon_workers reads --workers: a number, or auto for RT_DAEMON_PER_CPU a CPU (rt_daemon_cpus); nonzero if bad. */
static int
rt_daemon_workers(const char *v, uint64_t max, uint64_t *out)
{
	if (strcmp(v, "auto") != 0) {
		return rt_config_u64("workers", v, 1, max, out);
	}
	*out = RT_DAEMON_PER_CPU * rt_daemon_cpus();
	*out = *out < max ? *out : max;
	return 0;
}

/* rt_daemon_config parses the options and checks the common ones; RT_DAEMON_RUN to go on. */
static int
rt_daemon_config(const rt_service *s, rt_common *c, int argc, char **argv)
{
	rt_opt   opts[RT_DAEMON_MAX_OPTS];
	char     prog[64];
	uint64_t max = s->max_workers > 0 ? s->max_workers : RT_DAEMON_MAX_WORKERS;
	uint64_t fsync = 0, yield = 0;
	int      rc;

	snprintf(prog, sizeof(prog), "warble-%s", s->name);
	snprintf(c->data_help, sizeof(c->data_help), "data folder (the store is DATA/%s)", s->name);
	if (!rt_daemon_opts(s, c, opts, RT_DAEMON_MAX_OPTS)) {
		fprintf(stderr, "%s: too many options\n", prog);
		return 2;
	}
	if ((rc = rt_config_parse(opts, prog, s->summary, argc, argv)) != 0) {
		return rc == RT_CONFIG_HELP ? 0 : 2;
	}
	if (rt_log_level_parse(c->level) < 0) {
		fprintf(stderr, "%s: bad log level %s\n", prog, c->level);
		return 2;
	}
	if (rt_daemon_workers(c->workers, max, &c->nworkers) != 0 ||
	    (c->sync != NULL && rt_config_u64("sync", c->sync, 0, 1, &fsync) != 0) ||
	    rt_config_u64("yield", c->yield, 0, 1, &yield) != 0) {
		return 2;
	}
	rt_loop_yields_set(yield != 0 ? RT_DAEMON_LOOP_YIELDS : 0, (int)rt_daemon_cpus());
	rt_sp_yields_set(yield != 0 ? RT_DAEMON_CALL_YIELDS : 0);
	c->shard = (wb_shard) { 0, 1 };
	if (c->shard_s != NULL && !wb_shard_parse(c->shard_s, &c->shard)) {
		fprintf(stderr, "%s: bad --shard '%s': i/N with 0 <= i < N <= %d\n", prog,
		    c->shard_s, WB_SHARDS_MAX);
		return 2;
	}
	if (c->metrics != NULL &&
	    (strncmp(c->metrics, "http://", 7) != 0 || c->metrics[7] == '\0')) {
		fprintf(stderr, "%s: bad --metrics-url '%s': http://host:port (port 0: any)\n",
		    prog, c->metrics);
		return 2;
	}
	if (s->config != NULL && s->config() != 0) {
		return 2;
	}
	c->fsync = fsync != 0;
	return RT_DAEMON_RUN;
}

/* rt_daemon_mkdirs creates path and its parents (mkdir -p). */
static int
rt_daemon_mkdirs(char *path)
{
	for (char *p = path + 1; *p != '\0'; p++) {
		if (*p == '/') {
			*p = '\0';
			if (mkdir(path, 0755) != 0 && errno != EEXIST) {
				*p = '/';
				return -1;
			}
			*p = '/';
		}
	}
	return mkdir(path, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

#define RT_DAEMON_LAYOUT "warble.layout" /* the store's attribute: "<service> <i>/<N>" */

/* rt_daemon_layout_write records c's layout in t. */
static int
rt_daemon_layout_write(const rt_service *s, const rt_common *c, hb_table *t)
{
	char want[96];
	int  n = snprintf(want, sizeof(want), "%s %u/%u", s->name, c->shard.index, c->shard.count);

	return hb_attr_set(t, RT_DAEMON_LAYOUT, want, (size_t)n);
}

/*
 * rt_daemon_layout checks that store t was made as this process's service
 * and shard, and records the layout in a fresh one.  A store with data and
 * no record was made by a release before shards: it is shard 0 of 1, and
 * its service's open is told to bring it up to date (c->upgrade) before
 * the layout is recorded.
 */
static int
rt_daemon_layout(const rt_service *s, rt_common *c, hb_table *t, bool fresh)
{
	char   have[96], want[96];
	size_t len;
	int    rc = hb_attr_get(t, RT_DAEMON_LAYOUT, have, sizeof(have), &len);

	snprintf(want, sizeof(want), "%s %u/%u", s->name, c->shard.index, c->shard.count);
	if (rc == WB_OK) {
		if (strcmp(have, want) == 0) {
			return WB_OK;
		}
		RT_ERRORF(
		    "store %s was made as %s, and this process is %s (--shard, WARBLE_SHARD): "
		    "a store keeps its service and shard (resharding moves slot ranges "
		    "between stores, docs/operations.md)",
		    c->dir, have, want);
		return WB_EINVAL;
	}
	if (rc != WB_ENOTFOUND) {
		RT_ERRORF("cannot read the layout of store %s: %s", c->dir, hb_last_error());
		return rc;
	}
	if (fresh) {
		return rt_daemon_layout_write(s, c, t);
	}
	if (c->shard.index != 0 || c->shard.count != 1) {
		RT_ERRORF("store %s was made by a release before shards, so it is %s 0/1, and this "
		          "process is %s",
		    c->dir, s->name, want);
		return WB_EINVAL;
	}
	c->upgrade = true;
	return WB_OK;
}

/* rt_daemon_store creates DATA/<name> and opens the store there. */
static int
rt_daemon_store(const rt_service *s, rt_common *c, hb_table **t)
{
	hb_family_opts *fams;
	hb_table_opts   topts = { .sync = c->fsync };
	int             n = snprintf(c->dir, sizeof(c->dir), "%s/%s", c->data, s->name);
	int             rc;

	if (n < 0 || (size_t)n >= sizeof(c->dir)) {
		RT_ERRORF("data folder name too long: %s/%s", c->data, s->name);
		return WB_EIO;
	}
	if (rt_daemon_mkdirs(c->dir) != 0) {
		RT_ERRORF("cannot create data folder %s: %s", c->dir, strerror(errno));
		return WB_EIO;
	}
	if ((fams = calloc(s->nfams, sizeof(*fams))) == NULL) {
		return WB_ENOMEM;
	}
	s->families(fams);
	char current[4200];
	snprintf(current, sizeof(current), "%s/CURRENT", c->dir);
	bool fresh = access(current, F_OK) != 0;
	if ((rc = hb_open(t, c->dir, fams, s->nfams, &topts)) != WB_OK) {
		RT_ERRORF("cannot open store %s: %s %s", c->dir, wb_strerror(rc), hb_last_error());
	} else if ((rc = rt_daemon_layout(s, c, *t, fresh)) != WB_OK) {
		hb_close(*t);
		*t = NULL;
	}
	free(fams);
	return rc;
}

/*
 * The stop timer: a stopping daemon lets the requests in flight finish
 * for RT_DAEMON_GRACE_MS (a saved post is answered), then ends every
 * downstream call still waiting (a service that is gone would otherwise
 * hold it to its deadline, 5 s), so the daemon exits within a second
 * whatever else is already stopped.
 */
typedef struct rt_timer {
	pthread_mutex_t mu;
	pthread_cond_t  cv;
	bool            done;
} rt_timer;

static void *
rt_daemon_timer_main(void *arg)
{
	rt_timer       *tm = arg;
	struct timespec ts;
	bool            fire;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += RT_DAEMON_GRACE_MS * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&tm->mu);
	while (!tm->done && pthread_cond_timedwait(&tm->cv, &tm->mu, &ts) != ETIMEDOUT) {
	}
	fire = !tm->done;
	pthread_mutex_unlock(&tm->mu);
	if (fire) {
		RT_INFOF(
		    "ending the downstream calls still waiting after %d ms", RT_DAEMON_GRACE_MS);
		rt_client_shutdown_all();
	}
	return NULL;
}

/*
 * rt_daemon_signals blocks SIGTERM, SIGINT and SIGHUP in this thread and
 * every thread started after it (nng's, RocksDB's), so that only sigwait
 * in rt_daemon_main takes them, and ignores SIGPIPE (a peer gone
 * mid-write).
 */
static void
rt_daemon_signals(sigset_t *stop)
{
	struct sigaction sa;

	sigemptyset(stop);
	sigaddset(stop, SIGTERM);
	sigaddset(stop, SIGINT);
	sigaddset(stop, SIGHUP);
	pthread_sigmask(SIG_BLOCK, stop, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

/* rt_daemon_disk_free is a gauge: the bytes still free, for an unprivileged writer, on the file system of the store's folder. */
static uint64_t
rt_daemon_disk_free(void *dir)
{
	struct statvfs sv;

	return statvfs(dir, &sv) == 0 ? (uint64_t)sv.f_bavail * sv.f_frsize : 0;
}

/* rt_daemon_disk_size is a gauge: the size of the file system of the store's folder (0 if unknown). */
static uint64_t
rt_daemon_disk_size(void *dir)
{
	struct statvfs sv;

	return statvfs(dir, &sv) == 0 ? (uint64_t)sv.f_blocks * sv.f_frsize : 0;
}

/* rt_daemon_gauges adds the store's figures to srv's stats: its size and its disk's. */
static int
rt_daemon_gauges(rt_server *srv, hb_table *t, char *dir)
{
	int rc = rt_server_gauge(srv, "store_bytes", hb_disk_bytes, t);

	if (rc == WB_OK) {
		rc = rt_server_gauge(srv, "disk_free_bytes", rt_daemon_disk_free, dir);
	}
	return rc == WB_OK ? rt_server_gauge(srv, "disk_size_bytes", rt_daemon_disk_size, dir) : rc;
}

/* One service of the process: its descriptor, its options and what was opened for it. */
typedef struct rt_unit {
	const rt_service *s;
	rt_common         c;
	hb_table         *t;
	rt_tls           *tls; /* its identity, with --tls-dir */
	rt_server        *srv;
	rt_admin         *admin;
	void             *svc;
} rt_unit;

/* rt_daemon_stats is a /metrics source: what the stats op of a server answers. */
static int
rt_daemon_stats(void *srv, wb_obj *rep)
{
	return rt_server_stats(srv, rep);
}

/*
 * rt_daemon_metrics_port is a gauge: the admin port's TCP port, for whoever
 * has to find it.  It reads a copy taken before the servers start, never
 * the admin loop, which closes while their last requests may still run.
 */
static uint64_t
rt_daemon_metrics_port(void *port)
{
	return *(const int *)port > 0 ? (uint64_t) * (const int *)port : 0;
}

/*
 * rt_daemon_admin opens the process's admin port on the first unit's
 * --metrics-url, if it has one.
 */
static int
rt_daemon_admin(rt_unit *u, rt_metrics **m)
{
	const char *url = u[0].c.metrics;
	int         rc;

	*m = NULL;
	if (url == NULL) {
		return WB_OK;
	}
	if ((rc = rt_metrics_open(m, url)) != WB_OK) {
		RT_ERRORF("cannot serve the admin port on %s (--metrics-url, WARBLE_METRICS_URL: "
		          "http://host:port): %s",
		    url, wb_strerror(rc));
		return rc;
	}
	RT_INFOF(
	    "admin HTTP on %s (port %d): /metrics, /healthz, /readyz", url, rt_metrics_port(*m));
	return WB_OK;
}

/*
 * rt_daemon_up opens each unit in order (store, server, service, then the
 * server listens), so a service opened later finds the ones before it
 * serving, and then starts each service.
 */
static int
rt_daemon_up(rt_unit *u, size_t n, bool local, rt_metrics *m, int *admin_port)
{
	size_t i;
	int    rc = WB_OK;

	for (i = 0; i < n && rc == WB_OK; i++) {
		int            workers = (int)u[i].c.nworkers, spares = u[i].s->spares * workers;
		rt_server_opts so = { .name = u[i].s->name,
			.url = u[i].c.url,
			.workers = workers,
			.spares = spares,
			.local = local,
			.shard = u[i].c.shard };
		rt_env         env = { .name = u[i].s->name,
			        .url = u[i].c.url,
			        .nworkers = workers,
			        .nspares = spares,
			        .shard = u[i].c.shard,
			        .metrics = m };

		if (u[i].s->nfams > 0 &&
		    (rc = rt_daemon_store(u[i].s, &u[i].c, &u[i].t)) != WB_OK) {
			break;
		}
		if (u[i].c.tls_dir != NULL && u[i].c.tls_dir[0] != '\0' &&
		    (rc = rt_tls_open(&u[i].tls, u[i].c.tls_dir, u[i].s->name)) != WB_OK) {
			break;
		}
		so.tls = u[i].s->public ? NULL : u[i].tls; /* a public port's TLS ends at a proxy */
		env.tls = u[i].tls;
		env.store = u[i].t;
		env.dir = u[i].t != NULL ? u[i].c.dir : NULL;
		env.upgrade = u[i].c.upgrade;
		if ((rc = rt_server_open(&u[i].srv, &so)) == WB_OK && m != NULL) {
			rc = rt_server_gauge(
			    u[i].srv, "metrics_port", rt_daemon_metrics_port, admin_port);
		}
		if (rc == WB_OK && (u[i].t == NULL || (rc = rt_admin_open(&u[i].admin, u[i].srv,
		                                           u[i].s->name, u[i].t)) == WB_OK)) {
			env.srv = u[i].srv;
			env.admin = u[i].admin;
			rc = u[i].s->open != NULL ? u[i].s->open(&env, &u[i].svc) : WB_OK;
		}
		if (rc == WB_OK && u[i].s->routes != NULL) {
			void *arg =
			    u[i].s->route_arg != NULL ? u[i].s->route_arg(u[i].svc) : u[i].svc;
			size_t nr = 0;
			while (u[i].s->routes[nr].op != WB_OP_NONE) {
				nr++;
			}
			rc = rt_server_routes(u[i].srv, u[i].s->routes, nr, arg);
		}
		if (rc == WB_OK && u[i].c.upgrade) {
			/* brought up to date by its open: recorded as shard 0 of 1 */
			rc = rt_daemon_layout_write(u[i].s, &u[i].c, u[i].t);
			u[i].c.upgrade = false;
		}
		if (rc == WB_OK && u[i].t != NULL) {
			rc = rt_daemon_gauges(u[i].srv, u[i].t, u[i].c.dir);
		}
		/* its figures on /metrics once every gauge is in: a scrape may come at once */
		if (rc == WB_OK && m != NULL &&
		    (rc = rt_metrics_source(m, u[i].s->name, u[i].c.shard.index, rt_daemon_stats,
		         u[i].srv)) != WB_OK) {
			RT_ERRORF("%s: cannot add its figures to /metrics", u[i].s->name);
		}
		if (rc == WB_OK) {
			rc = rt_server_start(u[i].srv);
		}
		if (rc != WB_OK) {
			RT_ERRORF(
			    "%s cannot start on %s: %s", u[i].s->name, u[i].c.url, wb_strerror(rc));
		}
	}
	for (i = 0; i < n && rc == WB_OK; i++) {
		if (u[i].s->start != NULL && (rc = u[i].s->start(u[i].svc)) != WB_OK) {
			RT_ERRORF("%s cannot start: %s", u[i].s->name, wb_strerror(rc));
		}
	}
	for (i = 0; i < n && rc == WB_OK; i++) {
		RT_INFOF("%s serving on %s%s%s", u[i].s->name, u[i].c.url,
		    u[i].t != NULL ? ", data in " : "", u[i].t != NULL ? u[i].c.dir : "");
	}
	return rc;
}

/* rt_daemon_down closes every unit, the last opened first, so no service outlives one it calls. */
static void
rt_daemon_down(rt_unit *u, size_t n)
{
	for (size_t i = n; i-- > 0;) {
		rt_server_close(u[i].srv); /* requests in flight are answered */
		if (u[i].svc != NULL && u[i].s->close != NULL) {
			u[i].s->close(u[i].svc);
		}
		rt_admin_close(u[i].admin);
		hb_close(u[i].t);
		rt_tls_close(u[i].tls);
	}
}

/* rt_daemon_serve brings the units up, waits for a stop signal, and takes them down. */
static int
rt_daemon_serve(rt_unit *u, size_t n, bool local, const sigset_t *stop)
{
	rt_timer    tm = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false };
	rt_metrics *m = NULL;
	pthread_t   timer;
	bool        timing;
	int         rc, sig, admin_port = 0; /* outlives every server: its gauge reads it */

	if ((rc = rt_daemon_admin(u, &m)) == WB_OK && m != NULL) {
		admin_port = rt_metrics_port(m);
	}
	if (rc != WB_OK || (rc = rt_daemon_up(u, n, local, m, &admin_port)) != WB_OK) {
		rt_client_shutdown_all();
	} else {
		if (m != NULL) {
			rt_metrics_ready(m, true);
		}
		while (sigwait(stop, &sig) == 0 && sig == SIGHUP) {
			RT_INFOF("SIGHUP: reading the TLS certificates again");
			rt_tls_reload_all();
		}
		RT_INFOF("shutting down (%s)", sig == SIGINT ? "SIGINT" : "SIGTERM");
	}
	timing = rc == WB_OK && pthread_create(&timer, NULL, rt_daemon_timer_main, &tm) == 0;
	if (rc == WB_OK && !timing) {
		rt_client_shutdown_all(); /* no timer: end them now rather than wait */
	}
	rt_metrics_close(m); /* first: its sources are the servers */
	rt_daemon_down(u, n);
	if (timing) {
		pthread_mutex_lock(&tm.mu);
		tm.done = true;
		pthread_cond_signal(&tm.cv);
		pthread_mutex_unlock(&tm.mu);
		pthread_join(timer, NULL);
	}
	return rc;
}

/* rt_daemon_run sets up logging and signals, then serves the units until a stop signal. */
static int
rt_daemon_run(const char *name, rt_unit *u, size_t n, bool local)
{
	sigset_t stop;
	int      rc;

	rt_log_init(name, (rt_level)rt_log_level_parse(u[0].c.level));
	rt_daemon_signals(&stop);
	rc = rt_daemon_serve(u, n, local, &stop);
	nng_fini(); /* after every socket is closed, else ASan's leak check sees nng's late frees */
	return rc == WB_OK ? 0 : 1;
}

int
rt_daemon_main(const rt_service *s, int argc, char **argv)
{
	rt_unit u = { .s = s };
	int     rc;

	if ((rc = rt_daemon_config(s, &u.c, argc, argv)) != RT_DAEMON_RUN) {
		return rc;
	}
	return rt_daemon_run(s->name, &u, 1, false);
}

/* rt_daemon_merge adds the rows of opts that all does not have yet (by flag or endpoint). */
static size_t
rt_daemon_merge(rt_opt *all, size_t n, size_t max, const rt_opt *opts)
{
	for (const rt_opt *o = opts; !rt_opt_end(o); o++) {
		size_t i;

		for (i = 0; i < n; i++) {
			if (o->ep != 0 ? all[i].ep == o->ep
			               : all[i].ep == 0 && strcmp(all[i].flag, o->flag) == 0) {
				break;
			}
		}
		if (i == n && n + 1 < max) {
			all[n] = *o;
			all[n++].value = NULL;
		}
	}
	all[n] = (rt_opt) { NULL };
	return n;
}

int
rt_daemon_main_all(const rt_service *const *s, size_t n, const char *prog, const char *summary,
    int argc, char **argv)
{
	rt_opt   all[RT_DAEMON_MAX_OPTS * 2];
	rt_unit *u;
	size_t   nall = 0;
	char    *arg0 = (char *)prog;
	int      rc = RT_DAEMON_RUN;

	/* Every service's options, once: a flag given sets its variable for all of them. */
	for (size_t i = 0; i < n; i++) {
		rt_opt    opts[RT_DAEMON_MAX_OPTS];
		rt_common c = { .all = true };

		if (!rt_daemon_opts(s[i], &c, opts, RT_DAEMON_MAX_OPTS)) {
			fprintf(stderr, "%s: too many options\n", prog);
			return 2;
		}
		nall = rt_daemon_merge(all, nall, sizeof(all) / sizeof(all[0]), opts);
	}
	for (size_t i = 0; i < nall; i++) {
		if (all[i].ep == 0 && strcmp(all[i].flag, "data") == 0) {
			all[i].help = "data folder (each service's store is DATA/<service>)";
		}
	}
	if ((rc = rt_config_export(all, prog, summary, argc, argv)) != 0) {
		return rc == RT_CONFIG_HELP ? 0 : 2;
	}
	if ((u = calloc(n, sizeof(*u))) == NULL) {
		return 1;
	}
	rc = RT_DAEMON_RUN;
	for (size_t i = 0; i < n && rc == RT_DAEMON_RUN; i++) {
		u[i].s = s[i];
		u[i].c.all = true;
		rc = rt_daemon_config(s[i], &u[i].c, 1, &arg0);
	}
	if (rc == RT_DAEMON_RUN) {
		rc = rt_daemon_run(prog, u, n, true);
	}
	free(u);
	return rc;
}
