/*
 * gw_metrics.c - /readyz and /metrics (see gw_metrics.h).
 *
 * Each scrape asks every target for its stats at once, on the probe
 * pool, then writes one Prometheus family at a time across all targets
 * (the text format wants a family's samples together):
 *
 *   warble_up{service,shard}                  1 if the stats call answered
 *   warble_uptime_seconds{service,shard}
 *   warble_requests_total{service,shard,op}
 *   warble_request_errors_total{service,shard,op}
 *   warble_request_duration_seconds{service,shard,op}   histogram
 *   warble_<service>_<gauge>{shard}           each gauge a service registers
 *                                             (a gauge in ms or us: _seconds)
 *   process_cpu_seconds_total{service,shard}  each process's own figures
 *   process_resident_memory_bytes, process_start_time_seconds,
 *   process_open_fds                          (rt_proc.h), as Prometheus clients name them
 *   warble_http_responses_total{code}         the HTTP API's statuses
 *
 * service is user, relation, content, inbox, gateway (the msgpack API)
 * and gateway_http (the HTTP API, recorded in this process); shard is the
 * shard's index (0 for a service of one).
 */
#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gw_metrics.h"
#include "rt_client.h"
#include "rt_pool.h"
#include "rt_shards.h"
#include "rt_stats.h"

#define GW_METRICS_TARGETS (WB_SVC_COUNT * WB_SHARDS_MAX + 1) /* the shards, then the gateway */
#define GW_METRICS_STATUS  600

/* A process asked for its stats: a shard of a service, or the gateway itself. */
typedef struct gw_metrics_target {
	const char *service;
	unsigned    shard;
	rt_client  *cli;
} gw_metrics_target;

struct gw_metrics {
	gw_metrics_target    t[GW_METRICS_TARGETS];
	int                  n;
	rt_pool             *pool;
	rt_stats            *http;
	atomic_uint_fast64_t status[GW_METRICS_STATUS];
};

/* One round of concurrent calls, waited for by the caller. */
typedef struct gw_metrics_round {
	pthread_mutex_t mu;
	pthread_cond_t  cv;
	int             left;
	gw_metrics     *m;
	wb_op           op;
	wb_obj         *rep[GW_METRICS_TARGETS];
	int             rc[GW_METRICS_TARGETS];
	struct gw_metrics_task {
		struct gw_metrics_round *round;
		int                      i;
	} task[GW_METRICS_TARGETS];
} gw_metrics_round;

int
gw_metrics_open(gw_metrics **out, const gw_metrics_opts *opts)
{
	rt_client_opts co = { 0 };
	gw_metrics    *m;
	int            rc;

	*out = NULL;
	if ((m = calloc(1, sizeof(*m))) == NULL || (m->http = rt_stats_new()) == NULL) {
		free(m);
		return WB_ENOMEM;
	}
	co.timeout_ms = opts->timeout_ms > 0 ? opts->timeout_ms : 1000;
	for (int i = 0; i <= WB_SVC_COUNT; i++) {
		rt_shards  *sh = NULL;
		const char *list = i < WB_SVC_COUNT ? opts->lists[i] : NULL;
		const char *one = i < WB_SVC_COUNT ? opts->urls[i] : opts->gateway_url;
		if (one == NULL && (list == NULL || list[0] == '\0')) {
			continue;
		}
		co.tls = i < WB_SVC_COUNT ? opts->tls : NULL; /* the gateway's own port is plain */
		if ((rc = rt_shards_open(&sh, list, one, &co)) != WB_OK) {
			gw_metrics_close(m);
			return rc;
		}
		for (unsigned s = 0; s < rt_shards_count(sh); s++) {
			gw_metrics_target *t = &m->t[m->n++];
			t->service = i < WB_SVC_COUNT ? wb_services[i].name : "gateway";
			t->shard = s;
			rc = rt_client_open(&t->cli, rt_shards_url(sh, s), &co);
		}
		rt_shards_close(sh);
		if (rc != WB_OK) {
			gw_metrics_close(m);
			return rc;
		}
	}
	if ((rc = rt_pool_open(&m->pool, m->n < 8 ? m->n : 8)) != WB_OK) {
		gw_metrics_close(m);
		return rc;
	}
	*out = m;
	return WB_OK;
}

void
gw_metrics_close(gw_metrics *m)
{
	if (m == NULL) {
		return;
	}
	if (m->pool != NULL) {
		rt_pool_close(m->pool);
	}
	for (int i = 0; i < m->n; i++) {
		rt_client_close(m->t[i].cli);
	}
	rt_stats_free(m->http);
	free(m);
}

void
gw_metrics_record(gw_metrics *m, wb_op op, uint64_t us, bool failed)
{
	rt_stats_record(m->http, op, us, failed);
}

void
gw_metrics_status(gw_metrics *m, int status)
{
	if (status >= 100 && status < GW_METRICS_STATUS) {
		atomic_fetch_add_explicit(&m->status[status], 1, memory_order_relaxed);
	}
}

/* gw_metrics_task_run makes one call of a round (on the probe pool). */
static void
gw_metrics_task_run(void *arg)
{
	struct gw_metrics_task *t = arg;
	gw_metrics_round       *r = t->round;
	wb_obj                 *q = wb_request(r->op);
	wb_obj                 *rep = NULL;
	int                     rc = q == NULL ? WB_ENOMEM : rt_call(r->m->t[t->i].cli, q, &rep);

	wb_msg_free(q);
	pthread_mutex_lock(&r->mu);
	r->rc[t->i] = rc;
	r->rep[t->i] = rep;
	if (--r->left == 0) {
		pthread_cond_signal(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
}

/* gw_metrics_round_run sends op to every target at once and waits for all (each call has its deadline). */
static void
gw_metrics_round_run(gw_metrics *m, gw_metrics_round *r, wb_op op)
{
	memset(r, 0, sizeof(*r));
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	r->m = m;
	r->op = op;
	pthread_mutex_lock(&r->mu);
	for (int i = 0; i < m->n; i++) {
		r->rc[i] = WB_EUNAVAIL;
		r->task[i] = (struct gw_metrics_task) { r, i };
		r->left++;
		if (rt_pool_submit(m->pool, gw_metrics_task_run, &r->task[i]) != WB_OK) {
			r->left--;
			r->rc[i] = WB_ECLOSED;
		}
	}
	while (r->left > 0) {
		pthread_cond_wait(&r->cv, &r->mu);
	}
	pthread_mutex_unlock(&r->mu);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cv);
}

static void
gw_metrics_round_free(gw_metrics *m, gw_metrics_round *r)
{
	for (int i = 0; i < m->n; i++) {
		wb_msg_free(r->rep[i]);
	}
}

int
gw_metrics_ready(gw_metrics *m, http_buf *out)
{
	gw_metrics_round *r = malloc(sizeof(*r));
	int               rc = WB_OK, k = 0;

	if (r == NULL) {
		return WB_ENOMEM;
	}
	gw_metrics_round_run(m, r, WB_OP_PING);
	http_buf_printf(out, "{\"services\":{");
	for (int i = 0; i < m->n; i++) {
		const gw_metrics_target *t = &m->t[i];
		if (strcmp(t->service, "gateway") == 0) {
			continue;
		}
		http_buf_printf(out, "%s\"%s/%u\":\"%s\"", k++ ? "," : "", t->service, t->shard,
		    r->rc[i] == WB_OK ? "ok" : wb_err_name(r->rc[i]));
		if (r->rc[i] != WB_OK) {
			rc = WB_EUNAVAIL;
		}
	}
	http_buf_printf(out, "},\"failed\":[");
	k = 0;
	for (int i = 0; i < m->n; i++) {
		const gw_metrics_target *t = &m->t[i];
		if (r->rc[i] != WB_OK && strcmp(t->service, "gateway") != 0) {
			http_buf_printf(out, "%s\"%s/%u\"", k++ ? "," : "", t->service, t->shard);
		}
	}
	http_buf_printf(out, "],\"ready\":%s}", rc == WB_OK ? "true" : "false");
	gw_metrics_round_free(m, r);
	free(r);
	return rc;
}

/* --- Prometheus text ------------------------------------------------------- */

typedef struct gw_metrics_src {
	const char   *service;
	unsigned      shard;
	const wb_obj *rep; /* a stats reply, or NULL if the target did not answer */
} gw_metrics_src;

static void
gw_metrics_head(http_buf *out, const char *name, const char *type, const char *help)
{
	http_buf_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* gw_metrics_ops writes one per-op family (which: 0 requests, 1 errors, 2 histogram) for every source. */
static void
gw_metrics_ops(http_buf *out, const gw_metrics_src *src, int n, int which)
{
	for (int s = 0; s < n; s++) {
		const wb_obj *st;
		size_t        nst = 0;

		if (src[s].rep == NULL || !wb_get_objs(src[s].rep, WB_F_STATS, &st, &nst)) {
			continue;
		}
		for (size_t i = 0; i < nst; i++) {
			const char     *op = wb_str(&st[i], WB_F_NAME, "?");
			uint64_t        count = wb_u64(&st[i], WB_F_COUNT, 0);
			const uint64_t *h;
			size_t          nh = 0;
			uint64_t        cum = 0;

			if (which == 0) {
				http_buf_printf(out,
				    "warble_requests_total{service=\"%s\",shard=\"%u\",op=\"%s\"} "
				    "%lu\n",
				    src[s].service, src[s].shard, op, (unsigned long)count);
				continue;
			}
			if (which == 1) {
				http_buf_printf(out,
				    "warble_request_errors_total{service=\"%s\",shard=\"%u\",op=\"%"
				    "s\"} "
				    "%lu\n",
				    src[s].service, src[s].shard, op,
				    (unsigned long)wb_u64(&st[i], WB_F_ERRORS, 0));
				continue;
			}
			wb_get_u64s(&st[i], WB_F_HIST, &h, &nh);
			for (size_t b = 0; b + 1 < nh; b++) {
				cum += h[b];
				http_buf_printf(out,
				    "warble_request_duration_seconds_bucket{service=\"%s\",shard="
				    "\"%u\","
				    "op=\"%s\",le=\"%.9g\"} %lu\n",
				    src[s].service, src[s].shard, op,
				    (double)(UINT64_C(1) << b) / 1e6, (unsigned long)cum);
			}
			http_buf_printf(out,
			    "warble_request_duration_seconds_bucket{service=\"%s\",shard=\"%u\","
			    "op=\"%s\",le=\"+Inf\"} %lu\n"
			    "warble_request_duration_seconds_sum{service=\"%s\",shard=\"%u\","
			    "op=\"%s\"} %.6f\n"
			    "warble_request_duration_seconds_count{service=\"%s\",shard=\"%u\","
			    "op=\"%s\"} %lu\n",
			    src[s].service, src[s].shard, op, (unsigned long)count, src[s].service,
			    src[s].shard, op, (double)wb_u64(&st[i], WB_F_SUM_US, 0) / 1e6,
			    src[s].service, src[s].shard, op, (unsigned long)count);
		}
	}
}

/*
 * Prometheus names carry base units: a gauge a service reports in
 * milliseconds or microseconds (its name ends in _ms or _us, as inbox's
 * last_fanout_ms) is exported as _seconds, the value printed exactly.
 */
static const struct {
	const char *suffix;
	unsigned    digits; /* the value is in 10^-digits seconds */
} gw_metrics_units[] = {
	{ "_ms", 3 },
	{ "_us", 6 },
};

/* gw_metrics_gauge_name writes warble_<service>_<raw> (a name in ms or us as _seconds) into name; the digits of its unit. */
static unsigned
gw_metrics_gauge_name(char *name, size_t cap, const char *service, const char *raw)
{
	size_t   k = (size_t)snprintf(name, cap, "warble_%s_", service);
	unsigned digits = 0;

	for (; *raw != '\0' && k + 1 < cap; raw++) {
		name[k++] = isalnum((unsigned char)*raw) ? *raw : '_';
	}
	name[k] = '\0';
	for (size_t u = 0; u < sizeof(gw_metrics_units) / sizeof(gw_metrics_units[0]); u++) {
		size_t ns = strlen(gw_metrics_units[u].suffix);
		if (k > ns && strcmp(name + k - ns, gw_metrics_units[u].suffix) == 0 &&
		    k - ns + sizeof("_seconds") <= cap) {
			strcpy(name + k - ns, "_seconds");
			digits = gw_metrics_units[u].digits;
		}
	}
	return digits;
}

/* gw_metrics_gauge_of finds gauge raw in a stats reply; false if it has none. */
static bool
gw_metrics_gauge_of(const wb_obj *rep, const char *raw, uint64_t *v)
{
	const wb_obj *g;
	size_t        ng = 0;

	if (rep == NULL || !wb_get_objs(rep, WB_F_GAUGES, &g, &ng)) {
		return false;
	}
	for (size_t i = 0; i < ng; i++) {
		if (strcmp(wb_str(&g[i], WB_F_NAME, ""), raw) == 0) {
			*v = wb_u64(&g[i], WB_F_VALUE, 0);
			return true;
		}
	}
	return false;
}

/*
 * gw_metrics_gauges writes each registered gauge as the family
 * warble_<service>_<name>, one sample per shard of the service that
 * reports it ({shard="i"}), the family's head once, at its first shard.
 */
static void
gw_metrics_gauges(http_buf *out, const gw_metrics_src *src, int n)
{
	for (int s = 0; s < n; s++) {
		const wb_obj *g;
		size_t        ng = 0;

		if (src[s].rep == NULL || !wb_get_objs(src[s].rep, WB_F_GAUGES, &g, &ng)) {
			continue;
		}
		for (size_t i = 0; i < ng; i++) {
			const char *raw = wb_str(&g[i], WB_F_NAME, "");
			if (strncmp(raw, "process_", 8) == 0) {
				continue; /* gw_metrics_process: the standard names */
			}
			char     name[96];
			uint64_t v;
			bool     seen = false;
			unsigned digits =
			    gw_metrics_gauge_name(name, sizeof(name), src[s].service, raw);

			for (int e = 0; e < s && !seen;
			     e++) { /* an earlier shard wrote the family */
				seen = strcmp(src[e].service, src[s].service) == 0 &&
				       gw_metrics_gauge_of(src[e].rep, raw, &v);
			}
			if (seen) {
				continue;
			}
			gw_metrics_head(
			    out, name, "gauge", "a figure the service reports in its stats");
			for (int e = s; e < n; e++) {
				unsigned long div = 1;
				if (strcmp(src[e].service, src[s].service) != 0 ||
				    !gw_metrics_gauge_of(src[e].rep, raw, &v)) {
					continue;
				}
				for (unsigned d = 0; d < digits; d++) {
					div *= 10;
				}
				if (digits == 0) {
					http_buf_printf(out, "%s{shard=\"%u\"} %lu\n", name,
					    src[e].shard, (unsigned long)v);
				} else {
					http_buf_printf(out, "%s{shard=\"%u\"} %lu.%0*lu\n", name,
					    src[e].shard, (unsigned long)v / div, (int)digits,
					    (unsigned long)v % div);
				}
			}
		}
	}
}

/*
 * gw_metrics_process writes the figures of each process (rt_proc.h)
 * under the names Prometheus clients use, labelled {service, shard}.
 */
static void
gw_metrics_process(http_buf *out, const gw_metrics_src *src, int n)
{
	static const struct {
		const char *raw, *name, *type, *help;
		unsigned    div; /* the raw figure in 1/div of the unit */
	} f[] = {
		{ "process_cpu_us", "process_cpu_seconds_total", "counter",
		    "user and system CPU time the process used", 1000000 },
		{ "process_rss_bytes", "process_resident_memory_bytes", "gauge",
		    "the process's resident memory", 1 },
		{ "process_start_ms", "process_start_time_seconds", "gauge",
		    "when the process started, Unix seconds", 1000 },
		{ "process_open_fds", "process_open_fds", "gauge", "open file descriptors", 1 },
	};

	for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++) {
		gw_metrics_head(out, f[k].name, f[k].type, f[k].help);
		for (int s = 0; s < n; s++) {
			uint64_t v;
			if (!gw_metrics_gauge_of(src[s].rep, f[k].raw, &v)) {
				continue;
			}
			if (f[k].div == 1) {
				http_buf_printf(out, "%s{service=\"%s\",shard=\"%u\"} %lu\n",
				    f[k].name, src[s].service, src[s].shard, (unsigned long)v);
			} else {
				http_buf_printf(out, "%s{service=\"%s\",shard=\"%u\"} %.6f\n",
				    f[k].name, src[s].service, src[s].shard, (double)v / f[k].div);
			}
		}
	}
}

int
gw_metrics_render(gw_metrics *m, http_buf *out)
{
	gw_metrics_round *r = malloc(sizeof(*r));
	gw_metrics_src   *src = calloc(GW_METRICS_TARGETS + 1, sizeof(*src));
	wb_obj           *local = wb_msg_new();
	int               n = 0;

	if (r == NULL || src == NULL || local == NULL || rt_stats_fill(m->http, local) != WB_OK) {
		free(r);
		free(src);
		wb_msg_free(local);
		return WB_ENOMEM;
	}
	gw_metrics_round_run(m, r, WB_OP_STATS);
	for (int i = 0; i < m->n; i++) {
		src[n++] = (gw_metrics_src) { m->t[i].service, m->t[i].shard,
			r->rc[i] == WB_OK ? r->rep[i] : NULL };
	}
	src[n++] = (gw_metrics_src) { "gateway_http", 0, local };

	gw_metrics_head(out, "warble_up", "gauge", "1 if the service answered its stats request");
	for (int s = 0; s < n; s++) {
		http_buf_printf(out, "warble_up{service=\"%s\",shard=\"%u\"} %d\n", src[s].service,
		    src[s].shard, src[s].rep != NULL);
	}
	gw_metrics_head(out, "warble_uptime_seconds", "gauge", "seconds since the service started");
	for (int s = 0; s < n; s++) {
		if (src[s].rep != NULL && wb_has(src[s].rep, WB_F_UPTIME)) {
			http_buf_printf(out,
			    "warble_uptime_seconds{service=\"%s\",shard=\"%u\"} %.3f\n",
			    src[s].service, src[s].shard,
			    (double)wb_u64(src[s].rep, WB_F_UPTIME, 0) / 1e3);
		}
	}
	gw_metrics_head(out, "warble_requests_total", "counter", "requests handled, by operation");
	gw_metrics_ops(out, src, n, 0);
	gw_metrics_head(out, "warble_request_errors_total", "counter",
	    "requests answered with an error, by operation");
	gw_metrics_ops(out, src, n, 1);
	gw_metrics_head(
	    out, "warble_request_duration_seconds", "histogram", "request latency, by operation");
	gw_metrics_ops(out, src, n, 2);
	gw_metrics_gauges(out, src, n);
	gw_metrics_process(out, src, n);
	gw_metrics_head(out, "warble_http_responses_total", "counter",
	    "HTTP responses of the gateway, by status code");
	for (int c = 100; c < GW_METRICS_STATUS; c++) {
		uint64_t v = atomic_load_explicit(&m->status[c], memory_order_relaxed);
		if (v > 0) {
			http_buf_printf(out, "warble_http_responses_total{code=\"%d\"} %lu\n", c,
			    (unsigned long)v);
		}
	}
	gw_metrics_round_free(m, r);
	free(r);
	free(src);
	wb_msg_free(local);
	return out->p == NULL ? WB_ENOMEM : WB_OK;
}
