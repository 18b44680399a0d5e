/*
 * rt_daemon.c - the common start and stop steps of a Warble daemon (see
 * rt_daemon.h).  The service keeps its own options, store schema, open
 * and close order in its main.c.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <time.h>
#include <string.h>
#include <sys/stat.h>

#include "rt_client.h"
#include "rt_daemon.h"
#include "rt_log.h"
#include "rt_server.h"
#include "wb_errors.h"

#define RT_DAEMON_MAX_WORKERS 256

/* rt_daemon_init parses opts, checks the common options, starts logging and signals. */
int
rt_daemon_init(rt_daemon *d, rt_opt *opts, const char *summary, int argc, char **argv)
{
	char     prog[64];
	uint64_t max = d->max_workers > 0 ? d->max_workers : RT_DAEMON_MAX_WORKERS;
	uint64_t fsync;
	int      lvl = RT_INFO, rc;

	snprintf(prog, sizeof(prog), "warble-%s", d->name);
	if ((rc = rt_config_parse(opts, prog, summary, argc, argv)) != 0) {
		return rc == RT_CONFIG_HELP ? 0 : 2;
	}
	if (d->level != NULL && (lvl = rt_log_level_parse(d->level)) < 0) {
		fprintf(stderr, "%s: bad log level %s\n", prog, d->level);
		return 2;
	}
	if (d->workers != NULL && rt_config_u64("workers", d->workers, 1, max, &d->nworkers) != 0) {
		return 2;
	}
	if (d->sync != NULL) {
		if (rt_config_u64("sync", d->sync, 0, 1, &fsync) != 0) {
			return 2;
		}
		d->fsync = fsync != 0;
	}
	rt_log_init(d->name, (rt_level)lvl);
	rt_signal_init();
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

/* rt_daemon_data_dir creates DATA/<name> and its parents into d->dir. */
int
rt_daemon_data_dir(rt_daemon *d)
{
	int n = snprintf(d->dir, sizeof(d->dir), "%s/%s", d->data != NULL ? d->data : ".", d->name);

	if (n < 0 || (size_t)n >= sizeof(d->dir)) {
		RT_ERRORF("data folder name too long: %s/%s", d->data, d->name);
		return WB_EIO;
	}
	if (rt_daemon_mkdirs(d->dir) != 0) {
		RT_ERRORF("cannot create data folder %s: %s", d->dir, strerror(errno));
		return WB_EIO;
	}
	return WB_OK;
}

/*
 * The stop timer: a stopping daemon lets the requests in flight finish
 * for RT_DAEMON_GRACE_MS (a saved post is answered), then ends every
 * downstream call still waiting (a service that is gone would otherwise
 * hold it to its deadline, 5 s), so the daemon exits within a second
 * whatever else is already stopped.
 */
static pthread_mutex_t rt_daemon_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t  rt_daemon_cv = PTHREAD_COND_INITIALIZER;
static bool            rt_daemon_done;
static pthread_t       rt_daemon_timer;
static bool            rt_daemon_timing;

static void *
rt_daemon_timer_main(void *arg)
{
	struct timespec ts;
	bool            fire;

	(void)arg;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += RT_DAEMON_GRACE_MS * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&rt_daemon_mu);
	while (!rt_daemon_done &&
	       pthread_cond_timedwait(&rt_daemon_cv, &rt_daemon_mu, &ts) != ETIMEDOUT) {
	}
	fire = !rt_daemon_done;
	pthread_mutex_unlock(&rt_daemon_mu);
	if (fire) {
		RT_INFOF(
		    "ending the downstream calls still waiting after %d ms", RT_DAEMON_GRACE_MS);
		rt_client_shutdown_all();
	}
	return NULL;
}

/* rt_daemon_wait blocks until SIGTERM or SIGINT, then logs that the daemon is shutting down and starts the stop timer. */
void
rt_daemon_wait(void)
{
	rt_wait_for_signal();
	RT_INFOF("shutting down");
	rt_daemon_timing = pthread_create(&rt_daemon_timer, NULL, rt_daemon_timer_main, NULL) == 0;
	if (!rt_daemon_timing) {
		rt_client_shutdown_all(); /* no timer: end them now rather than wait */
	}
}

/* rt_daemon_exit stops the stop timer, releases nng (rt_fini) and returns status; call it last. */
int
rt_daemon_exit(int status)
{
	if (rt_daemon_timing) {
		pthread_mutex_lock(&rt_daemon_mu);
		rt_daemon_done = true;
		pthread_cond_signal(&rt_daemon_cv);
		pthread_mutex_unlock(&rt_daemon_mu);
		pthread_join(rt_daemon_timer, NULL);
		rt_daemon_timing = false;
	}
	rt_fini();
	return status;
}
