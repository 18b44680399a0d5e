/*
 * rt_metrics.h - a process's admin HTTP port, and the Prometheus text of
 * its figures.
 *
 * Every daemon serves, on its own WARBLE_METRICS_URL (rt_daemon.h), plain
 * HTTP/1.1 GET and HEAD, keep-alive, no request body:
 *
 *   /metrics   Prometheus text format 0.0.4: the stats of each source
 *              (what the stats op answers, rt_server_stats), labelled
 *              {service, shard}, then the families the process adds
 *   /healthz   200 {"status":"ok"} while the process runs
 *   /readyz    200 once the process serves and its check (if any) passes,
 *              else 503; the body is the check's JSON report
 *   a page     another path a service adds (the gateway's /metrics/cluster)
 *
 * Any other path is 404, another method 405, a malformed request 400
 * (JSON errors, as the public API's).  The port is for Prometheus and
 * probes inside the deployment's network, never for the public: it tells
 * user counts, store sizes and request rates, so its default is on
 * loopback (docs/operations.md, "Security").
 *
 * The text of stats replies (rt_metrics_write):
 *
 *   warble_up{service,shard}                     1 if the source answered
 *                                                (RT_METRICS_UP only)
 *   warble_uptime_seconds{service,shard}
 *   warble_requests_total{service,shard,op}
 *   warble_request_errors_total{service,shard,op}
 *   warble_request_duration_seconds{service,shard,op}    histogram
 *   warble_<service>_<gauge>{service,shard}      each gauge a service
 *                                                registers (one in ms or
 *                                                us: _seconds)
 *   warble_<service>_<base>{service,shard,key}   each listed gauge named
 *                                                "base{key=value}"
 *                                                (rt_server_gauge_list)
 *   process_cpu_seconds_total{service,shard}     the process's figures
 *   process_resident_memory_bytes, process_start_time_seconds,
 *   process_open_fds                             (rt_proc.h), named as
 *                                                Prometheus clients name them
 *
 * Latency histograms come as log2 buckets of microseconds (rt_stats.h)
 * and are written as cumulative `le` buckets in seconds: bucket i's upper
 * bound is 2^i us, the last bucket is +Inf.  A family is written only
 * with samples, its samples together (as the format wants).
 */
#ifndef RT_METRICS_H
#define RT_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "wb_proto.h"

typedef struct rt_metrics rt_metrics;

/* One stats reply (as the stats op answers) and whose it is. */
typedef struct rt_metrics_src {
	const char   *service; /* "inbox" */
	unsigned      shard;   /* its index (0 for a service of one) */
	const wb_obj *rep;     /* NULL: it did not answer */
} rt_metrics_src;

/* rt_metrics_write's flags. */
enum {
	RT_METRICS_UP = 1, /* write warble_up: whether each source answered */
};

/* A source of stats: fills rep as the stats op does; returns a wb_err. */
typedef int (*rt_metrics_stats_fn)(void *arg, wb_obj *rep);

/* A writer of text (families, a page, a readiness report) to out; returns a wb_err. */
typedef int (*rt_metrics_text_fn)(void *arg, FILE *out);

/* rt_metrics_open serves the admin port on url (http://host:port; port 0: any free port). */
int rt_metrics_open(rt_metrics **out, const char *url);

/* rt_metrics_port returns the TCP port m listens on. */
int rt_metrics_port(const rt_metrics *m);

/* rt_metrics_source adds the stats fn gives to /metrics, labelled {service, shard}. */
int rt_metrics_source(
    rt_metrics *m, const char *service, unsigned shard, rt_metrics_stats_fn fn, void *arg);

/* rt_metrics_extra adds the families fn writes (names of its own) to the end of /metrics. */
int rt_metrics_extra(rt_metrics *m, rt_metrics_text_fn fn, void *arg);

/* rt_metrics_page serves the Prometheus text fn writes on path (GET; 503 if fn fails). */
int rt_metrics_page(rt_metrics *m, const char *path, rt_metrics_text_fn fn, void *arg);

/*
 * rt_metrics_check makes /readyz ask fn, which writes a JSON report and
 * returns WB_OK if ready (one check).
 */
int rt_metrics_check(rt_metrics *m, rt_metrics_text_fn fn, void *arg);

/* rt_metrics_ready says whether the process serves (until then /readyz is 503 "starting"). */
void rt_metrics_ready(rt_metrics *m, bool ready);

/* rt_metrics_close stops serving and frees m (after requests in flight); NULL is ignored. */
void rt_metrics_close(rt_metrics *m);

/*
 * rt_metrics_write writes the families of n stats replies to out (flags:
 * RT_METRICS_UP); a wb_err.
 */
int rt_metrics_write(FILE *out, const rt_metrics_src *src, size_t n, unsigned flags);

#endif
