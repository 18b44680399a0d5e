/*
 * rt_daemon.h - the lifecycle every Warble daemon shares, in one call.
 *
 * A service describes itself in an rt_service: its name, its own options,
 * its store's families, and how to open and close it.  rt_daemon_main
 * owns the rest, in this order:
 *
 *   1. options: the service's table plus the common rows (data folder,
 *      log level, workers, WAL sync, --yield), flags over WARBLE_* variables,
 *      --help and --print-defaults; then the service's config check;
 *   2. logging as the service's name, SIGTERM/SIGINT/SIGPIPE handling,
 *      the admin HTTP port (--metrics-url, WARBLE_METRICS_URL: /metrics,
 *      /healthz, /readyz, rt_metrics.h), which is ready once step 4 is done;
 *   3. DATA/<name> and the store with the service's families, checked
 *      against the layout it was made with (its service and shard: a
 *      table attribute, hb_attr_get), which a store refuses to change;
 *   4. the REP server on its listen endpoint, admin.backup for the store
 *      (rt_admin.h), the service's open, its route table (each request
 *      of a sharded service checked against the shard's slots, rt_route),
 *      the store_bytes and disk_{free,size}_bytes gauges and the
 *      metrics_port gauge (the admin port, found by tests through stats),
 *      the server's stats on /metrics as {service, shard}, listen, the
 *      service's start;
 *   5. wait for SIGTERM or SIGINT; RT_DAEMON_GRACE_MS later every
 *      downstream call still waiting ends (rt_client_shutdown_all);
 *   6. close the admin port, the server (requests in flight are
 *      answered), the service, the store, and nng last (so ASan runs exit
 *      0).
 *
 *   int main(int argc, char **argv)
 *   {
 *       static const rt_service svc = {
 *           .name = "relation", .summary = "the Warble relation service",
 *           .listen = RT_OPT_URL(WB_EP_RELATION, "listen URL", NULL), .opts = rel_daemon_opts, .nfams = REL_FAM_NFAMS,
 *           .families = rel_daemon_families, .open = rel_daemon_open,
 *           .close = rel_daemon_close,
 *       };
 *       return rt_daemon_main(&svc, argc, argv);
 *   }
 */
#ifndef RT_DAEMON_H
#define RT_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hb.h"
#include "rt_admin.h"
#include "rt_config.h"
#include "rt_metrics.h"
#include "rt_server.h"
#include "rt_tls.h"
#include "wb_slot.h"

#define RT_DAEMON_METRICS_URL \
	"http://127.0.0.1:9100" /* the one-process warble's admin port (the gateway's default) */

#define RT_DAEMON_GRACE_MS \
	500 /* after SIGTERM, requests in flight get this long before downstream calls end */

/* What rt_daemon_main hands the service's open. */
typedef struct rt_env {
	const char *name;     /* the service's name */
	const char *url;      /* the address it serves */
	const char *dir;      /* DATA/<name>; NULL for a service without a store */
	hb_table   *store;    /* the open store; NULL without one */
	rt_server  *srv;      /* open, not yet listening: register the handlers here */
	int         nworkers; /* --workers */
	int         nspares;  /* the server's spare threads (spares per worker x nworkers) */
	rt_admin   *admin;    /* admin.backup of the store (NULL without one): rt_admin_logs */
	rt_metrics *metrics;  /* the process's admin HTTP port, serving (NULL: none): a service
	                       * adds its own sources, families, pages or readiness check */
	wb_shard    shard;    /* the slots it owns (--shard; 0 of 1 for a service not sharded) */
	rt_tls     *tls;      /* its TLS identity for the calls it makes and the events it sends
	                       * or reads (--tls-dir; NULL: plain) */
	bool        upgrade;  /* the store was made by a release that recorded no layout: the
	                       * service's open rewrites what changed since (once: the layout is
	                       * recorded after open succeeds) */
} rt_env;

typedef struct rt_service {
	const char *name;         /* log prefix, DATA/<name>, warble-<name> */
	const char *summary;      /* --help's first line */
	const char *metrics_url;  /* default of --metrics-url (NULL: no admin port) */
	rt_opt      listen;       /* the option of the address it serves (value unused) */
	rt_opt     *opts;         /* the service's own options ({ NULL }-terminated) */
	const char *workers;      /* default of --workers ("8" if NULL; "auto": 3 a CPU) */
	const char *workers_all;  /* ... in one process with the other services (NULL: workers) */
	const char *workers_help; /* its help ("worker threads" if NULL) */
	uint64_t    max_workers;  /* upper bound of --workers (256 if 0) */
	int         spares;       /* spare threads per worker, for slow calls (0: none) */
	size_t      nfams;        /* families of the store; 0: no data folder, no store */
	int (*config)(void);      /* checks option values (NULL: none); nonzero exits 2 */
	void (*families)(hb_family_opts *fams);     /* fills nfams families (after config) */
	int (*open)(const rt_env *env, void **svc); /* builds the service (NULL: none) */
	const rt_route *routes; /* its operations (rt_server.h), ended by a row of op WB_OP_NONE;
	                         * routed once open succeeds (NULL: none) */
	void *(*route_arg)(void *svc); /* the handlers' argument, from open's svc (NULL: svc) */
	bool sharded; /* takes --shard i/N (WARBLE_SHARD): owns a slot range of its kind */
	bool public;  /* its port faces clients: no TLS there, whatever --tls-dir says (its own
	               * calls to other services still use it) */
	int (*start)(void *svc);  /* once the server listens (NULL: nothing to do) */
	void (*close)(void *svc); /* after the server has closed, if open gave a service */
} rt_service;

/* rt_daemon_main runs the daemon described by s and returns main's exit status. */
int rt_daemon_main(const rt_service *s, int argc, char **argv);

/*
 * rt_daemon_main_all runs the n services of s in one process, as prog:
 * their options merged into one table (a flag sets its variable, which
 * every service reading it then sees), their stores opened and their
 * servers listening as rt_daemon_main's would, opened and started in the
 * order of s and stopped in the reverse one.  Their servers are local
 * (rt_local.h), so a service's calls to another one in s run on the
 * calling thread.  One admin port serves them all (default
 * RT_DAEMON_METRICS_URL), each service's series labelled with its name.
 * Returns main's exit status.
 */
int rt_daemon_main_all(const rt_service *const *s, size_t n, const char *prog, const char *summary,
    int argc, char **argv);

#endif
