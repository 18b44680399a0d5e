/*
 * rt_daemon.h - the steps every Warble daemon's main() shares: the common
 * options (data folder, log level, workers, WAL sync), logging and signal
 * set-up, the service's data folder DATA/<service>, waiting for SIGTERM,
 * and the exit that releases nng last (so ASan runs exit 0).
 *
 * Each main.c keeps its whole rt_opt table written out, the common rows
 * pointing into the rt_daemon (tests/deploy reads the tables to check the
 * launcher and docker-compose against them); a daemon leaves out the rows
 * it does not take (the gateway has no data folder), and rt_daemon_init
 * skips their checks.
 *
 *   static rt_daemon d = { .name = "content" };
 *   rt_opt opts[] = {
 *       { "content-url", "WARBLE_CONTENT_URL", "tcp://127.0.0.1:7103", "listen URL", &url },
 *       { "data", "WARBLE_DATA", "./var", "data folder (the store is DATA/content)", &d.data },
 *       { "log-level", "WARBLE_LOG_LEVEL", "info", "debug|info|warn|error", &d.level },
 *       { "workers", "WARBLE_WORKERS", "8", "worker threads", &d.workers },
 *       { "sync", "WARBLE_SYNC", "0", "1 = fsync the WAL on every write", &d.sync },
 *       { NULL },
 *   };
 *   if ((st = rt_daemon_init(&d, opts, "the Warble content service", argc, argv)) != RT_DAEMON_RUN)
 *       return st;
 *   ... service options, rt_daemon_data_dir(&d), open the store and the server ...
 *   rt_daemon_wait();
 *   ... close in reverse order ...
 *   return rt_daemon_exit(0);
 */
#ifndef RT_DAEMON_H
#define RT_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include "rt_config.h"

#define RT_DAEMON_RUN (-1) /* rt_daemon_init: go on */
#define RT_DAEMON_GRACE_MS \
	500 /* after SIGTERM, requests in flight get this long before downstream calls end */

typedef struct rt_daemon {
	const char *name;        /* service name: log prefix, data subfolder, warble-<name> */
	uint64_t    max_workers; /* upper bound of --workers (default 256) */
	const char *data;        /* option values, filled by rt_daemon_init */
	const char *level;
	const char *workers;
	const char *sync;
	uint64_t    nworkers;  /* --workers, parsed */
	bool        fsync;     /* --sync=1 */
	char        dir[4096]; /* DATA/<name>, set by rt_daemon_data_dir */
} rt_daemon;

/*
 * rt_daemon_init parses opts (flags over WARBLE_* variables), checks the
 * common options, starts logging as d->name and installs the signal
 * handlers.  Returns RT_DAEMON_RUN to go on, or the status main should
 * exit with: 0 after --help, 2 for a bad option.
 */
int rt_daemon_init(rt_daemon *d, rt_opt *opts, const char *summary, int argc, char **argv);

/* rt_daemon_data_dir creates DATA/<name> and its parents into d->dir; logs and returns WB_EIO on failure. */
int rt_daemon_data_dir(rt_daemon *d);

/* rt_daemon_wait blocks until SIGTERM or SIGINT, logs that the daemon is shutting down, and
 * starts the stop timer: RT_DAEMON_GRACE_MS later every downstream call still waiting ends
 * (rt_client_shutdown_all), so closing what waits on them never takes longer. */
void rt_daemon_wait(void);

/* rt_daemon_exit stops the stop timer, releases nng (rt_fini) and returns status; call it last, after every close. */
int rt_daemon_exit(int status);

#endif
