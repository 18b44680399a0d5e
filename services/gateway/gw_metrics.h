/*
 * gw_metrics.h - the gateway's operations endpoints: /readyz (does every
 * shard of the four services answer?) and /metrics (Prometheus text: the
 * HTTP API's own per-operation stats plus every shard's `stats` reply).
 *
 *   /metrics ─┬─ HTTP API stats (recorded here, lock-free)
 *             └─ stats op ─> user, each shard of relation, content and
 *                inbox, gateway (msgpack), each sample labelled
 *                {service, shard}
 *                (asked concurrently on a small probe pool, 1 s deadline each)
 *
 * Latency histograms come as log2 buckets of microseconds (rt_stats.h) and
 * are exported as cumulative `le` buckets in seconds: bucket i's upper
 * bound is 2^i us, the last bucket is +Inf.
 */
#ifndef GW_METRICS_H
#define GW_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "gw.h"
#include "http_buf.h"

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

/* gw_metrics_ready pings every shard of the four services; WB_OK if all answered, else WB_EUNAVAIL; a JSON report goes into out. */
int gw_metrics_ready(gw_metrics *m, http_buf *out);

/* gw_metrics_render appends the Prometheus text exposition to out. */
int gw_metrics_render(gw_metrics *m, http_buf *out);

#endif
