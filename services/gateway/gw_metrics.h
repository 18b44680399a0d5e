/*
 * gw_metrics.h - the gateway's figures and probes: the HTTP API's own
 * per-operation stats and response codes, /readyz (does every shard of
 * the four services answer?) and the cluster view, on the gateway's
 * admin port (rt_metrics.h):
 *
 *   /metrics          this process: the msgpack API's stats (service
 *                     gateway, rt_daemon), the HTTP API's (gateway_http,
 *                     recorded here, lock-free) and its responses by code
 *   /metrics/cluster  the whole cluster from here: the stats op asked of
 *                     user, each shard of relation, content and inbox,
 *                     and the gateway (msgpack), each sample labelled
 *                     {service, shard}, with warble_up for each (asked
 *                     concurrently on a small probe pool, 1 s deadline
 *                     each): for one machine, where one scrape is enough
 *   /readyz           every shard answers a ping (also on the public port)
 */
#ifndef GW_METRICS_H
#define GW_METRICS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gw.h"
#include "rt_metrics.h"

typedef struct gw_metrics gw_metrics;

typedef struct gw_metrics_opts {
	const char *urls[WB_SVC_COUNT];  /* the four services (one shard each) */
	const char *lists[WB_SVC_COUNT]; /* ... or their shards' addresses (NULL or "": urls) */
	const char *gateway_url;         /* the gateway's own msgpack API, or NULL */
	int         timeout_ms;          /* deadline of each probe (default 1000) */
	rt_tls     *tls;                 /* the gateway's TLS identity for the services' ports */
} gw_metrics_opts;

/* gw_metrics_open dials the probe clients (in the background). */
int gw_metrics_open(gw_metrics **out, const gw_metrics_opts *opts);

/* gw_metrics_close closes the probe clients and frees m; NULL is ignored. */
void gw_metrics_close(gw_metrics *m);

/* gw_metrics_record counts one HTTP API request of op that took us microseconds. */
void gw_metrics_record(gw_metrics *m, wb_op op, uint64_t us, bool failed);

/* gw_metrics_status counts one HTTP response with status code. */
void gw_metrics_status(gw_metrics *m, int status);

/*
 * gw_metrics_ready pings every shard of the four services; WB_OK if all
 * answered, else WB_EUNAVAIL; a JSON report goes to out.
 */
int gw_metrics_ready(gw_metrics *m, FILE *out);

/*
 * gw_metrics_cluster writes the Prometheus text of every shard's stats, as
 * the gateway sees them, to out.
 */
int gw_metrics_cluster(gw_metrics *m, FILE *out);

/*
 * gw_metrics_serve adds the HTTP API's figures to /metrics of admin,
 * /metrics/cluster and the readiness check.
 */
int gw_metrics_serve(gw_metrics *m, rt_metrics *admin);

#endif
