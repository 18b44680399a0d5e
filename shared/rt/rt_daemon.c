/*
 * rt_daemon.c - the common start and stop steps of a Warble daemon (see
 * rt_daemon.h).  The service keeps its own options, store schema, open
 * and close order in its main.c.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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

/* rt_daemon_wait blocks until SIGTERM or SIGINT, then logs that the daemon is shutting down. */
void
rt_daemon_wait(void)
{
	rt_wait_for_signal();
	RT_INFOF("shutting down");
}

/* rt_daemon_exit releases nng (rt_fini) and returns status; call it last. */
int
rt_daemon_exit(int status)
{
	rt_fini();
	return status;
}
