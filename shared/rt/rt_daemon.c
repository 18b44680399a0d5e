/*
 * rt_daemon.c - the lifecycle every Warble daemon shares (see
 * rt_daemon.h): options, logging, signals, the data folder and store,
 * the server, the service's own steps, the wait, and the ordered stop.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <nng/nng.h>

#include "rt_client.h"
#include "rt_daemon.h"
#include "rt_log.h"
#include "wb_errors.h"

#define RT_DAEMON_MAX_WORKERS 256
#define RT_DAEMON_MAX_OPTS    48
#define RT_DAEMON_RUN         (-1) /* rt_daemon_config: go on */

/* The values of the common options. */
typedef struct rt_common {
	const char *url, *data, *level, *workers, *sync;
	uint64_t    nworkers;
	bool        fsync;
	char        dir[4096];      /* DATA/<name> */
	char        data_help[128]; /* --data's help names the store's folder */
} rt_common;

/* rt_daemon_opts writes s's options and the common rows into opts; false if they do not fit. */
static bool
rt_daemon_opts(const rt_service *s, rt_common *c, rt_opt *opts, size_t max)
{
	size_t       n = 0;
	const rt_opt common[] = {
		{ "data", "WARBLE_DATA", "./var", c->data_help, &c->data },
		{ "log-level", "WARBLE_LOG_LEVEL", "info", "debug|info|warn|error", &c->level },
		{ "workers", "WARBLE_WORKERS", s->workers != NULL ? s->workers : "8",
		    s->workers_help != NULL ? s->workers_help : "worker threads", &c->workers },
		{ "sync", "WARBLE_SYNC", "0", "1 = fsync the WAL on every write", &c->sync },
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
		bool store_row = i == 0 || i == 3; /* data and sync belong to a store */
		if (store_row && s->nfams == 0) {
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

/* rt_daemon_config parses the options and checks the common ones; RT_DAEMON_RUN to go on. */
static int
rt_daemon_config(const rt_service *s, rt_common *c, int argc, char **argv)
{
	rt_opt   opts[RT_DAEMON_MAX_OPTS];
	char     prog[64];
	uint64_t max = s->max_workers > 0 ? s->max_workers : RT_DAEMON_MAX_WORKERS;
	uint64_t fsync = 0;
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
	if (rt_config_u64("workers", c->workers, 1, max, &c->nworkers) != 0 ||
	    (c->sync != NULL && rt_config_u64("sync", c->sync, 0, 1, &fsync) != 0) ||
	    (s->config != NULL && s->config() != 0)) {
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
	if ((rc = hb_open(t, c->dir, fams, s->nfams, &topts)) != WB_OK) {
		RT_ERRORF("cannot open store %s: %s %s", c->dir, wb_strerror(rc), hb_last_error());
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
 * rt_daemon_signals blocks SIGTERM and SIGINT in this thread and every
 * thread started after it (nng's, RocksDB's), so that only sigwait in
 * rt_daemon_main takes them, and ignores SIGPIPE (a peer gone mid-write).
 */
static void
rt_daemon_signals(sigset_t *stop)
{
	struct sigaction sa;

	sigemptyset(stop);
	sigaddset(stop, SIGTERM);
	sigaddset(stop, SIGINT);
	pthread_sigmask(SIG_BLOCK, stop, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

/* rt_daemon_serve opens the service and its server, waits for a stop signal, and closes both. */
static int
rt_daemon_serve(const rt_service *s, rt_common *c, hb_table *t, const sigset_t *stop)
{
	rt_server_opts so = { .name = s->name, .url = c->url, .workers = (int)c->nworkers };
	rt_env   env = { .name = s->name, .url = c->url, .store = t, .nworkers = (int)c->nworkers };
	rt_timer tm = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false };
	rt_server *srv = NULL;
	void      *svc = NULL;
	pthread_t  timer;
	bool       timing;
	int        rc, sig;

	env.dir = t != NULL ? c->dir : NULL;
	if ((rc = rt_server_open(&srv, &so)) == WB_OK &&
	    (t == NULL || (rc = rt_admin_open(&env.admin, srv, s->name, t)) == WB_OK)) {
		env.srv = srv;
		rc = s->open != NULL ? s->open(&env, &svc) : WB_OK;
	}
	if (rc == WB_OK && t != NULL) {
		rc = rt_server_gauge(srv, "store_bytes", hb_disk_bytes, t);
	}
	if (rc == WB_OK && (rc = rt_server_start(srv)) == WB_OK && s->start != NULL) {
		rc = s->start(svc);
	}
	if (rc != WB_OK) {
		RT_ERRORF("cannot start on %s: %s", c->url, wb_strerror(rc));
		rt_client_shutdown_all();
	} else {
		RT_INFOF("serving on %s%s%s", c->url, t != NULL ? ", data in " : "",
		    t != NULL ? c->dir : "");
		sigwait(stop, &sig);
		RT_INFOF("shutting down (%s)", sig == SIGINT ? "SIGINT" : "SIGTERM");
	}
	timing = rc == WB_OK && pthread_create(&timer, NULL, rt_daemon_timer_main, &tm) == 0;
	if (rc == WB_OK && !timing) {
		rt_client_shutdown_all(); /* no timer: end them now rather than wait */
	}
	rt_server_close(srv);
	if (svc != NULL && s->close != NULL) {
		s->close(svc);
	}
	rt_admin_close(env.admin);
	if (timing) {
		pthread_mutex_lock(&tm.mu);
		tm.done = true;
		pthread_cond_signal(&tm.cv);
		pthread_mutex_unlock(&tm.mu);
		pthread_join(timer, NULL);
	}
	return rc;
}

int
rt_daemon_main(const rt_service *s, int argc, char **argv)
{
	rt_common c = { 0 };
	hb_table *t = NULL;
	sigset_t  stop;
	int       rc;

	if ((rc = rt_daemon_config(s, &c, argc, argv)) != RT_DAEMON_RUN) {
		return rc;
	}
	rt_log_init(s->name, (rt_level)rt_log_level_parse(c.level));
	rt_daemon_signals(&stop);
	if (s->nfams == 0 || (rc = rt_daemon_store(s, &c, &t)) == WB_OK) {
		rc = rt_daemon_serve(s, &c, t, &stop);
	}
	hb_close(t);
	nng_fini(); /* after every socket is closed, else ASan's leak check sees nng's late frees */
	return rc == WB_OK ? 0 : 1;
}
