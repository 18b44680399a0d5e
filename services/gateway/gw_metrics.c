/*
 * gw_metrics.c - the HTTP API's figures, /readyz and /metrics/cluster
 * (see gw_metrics.h); the text itself is rt_metrics_write's.
 *
 * Each cluster scrape or readiness check asks every target at once, on
 * the probe pool, and waits for all (each call has its deadline).  The
 * HTTP API's figures are written as
 *
 *   warble_requests_total{service="gateway_http",shard="0",op} ...  (its stats)
 *   warble_http_responses_total{service="gateway_http",shard="0",code}
 *
 * where op is the public operation (register, home, ...).
 */
#include <inttypes.h>
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
gw_metrics_ready(gw_metrics *m, FILE *out)
{
	gw_metrics_round *r = malloc(sizeof(*r));
	int               rc = WB_OK, k = 0;

	if (r == NULL) {
		return WB_ENOMEM;
	}
	gw_metrics_round_run(m, r, WB_OP_PING);
	fputs("{\"services\":{", out);
	for (int i = 0; i < m->n; i++) {
		const gw_metrics_target *t = &m->t[i];
		if (strcmp(t->service, "gateway") == 0) {
			continue;
		}
		fprintf(out, "%s\"%s/%u\":\"%s\"", k++ ? "," : "", t->service, t->shard,
		    r->rc[i] == WB_OK ? "ok" : wb_err_name(r->rc[i]));
		if (r->rc[i] != WB_OK) {
			rc = WB_EUNAVAIL;
		}
	}
	fputs("},\"failed\":[", out);
	k = 0;
	for (int i = 0; i < m->n; i++) {
		const gw_metrics_target *t = &m->t[i];
		if (r->rc[i] != WB_OK && strcmp(t->service, "gateway") != 0) {
			fprintf(out, "%s\"%s/%u\"", k++ ? "," : "", t->service, t->shard);
		}
	}
	fprintf(out, "],\"ready\":%s}", rc == WB_OK ? "true" : "false");
	gw_metrics_round_free(m, r);
	free(r);
	return rc;
}

/* --- Prometheus text ------------------------------------------------------- */

/* gw_metrics_responses writes warble_http_responses_total, the HTTP API's responses by code. */
static int
gw_metrics_responses(gw_metrics *m, FILE *out)
{
	bool head = false;

	for (int c = 100; c < GW_METRICS_STATUS; c++) {
		uint64_t v = atomic_load_explicit(&m->status[c], memory_order_relaxed);
		if (v == 0) {
			continue;
		}
		if (!head) {
			fputs(
			    "# HELP warble_http_responses_total HTTP responses of the gateway, by "
			    "status code\n# TYPE warble_http_responses_total counter\n",
			    out);
			head = true;
		}
		fprintf(out,
		    "warble_http_responses_total{service=\"gateway_http\",shard=\"0\",code=\"%d\"} "
		    "%" PRIu64 "\n",
		    c, v);
	}
	return ferror(out) ? WB_ENOMEM : WB_OK;
}

int
gw_metrics_cluster(gw_metrics *m, FILE *out)
{
	gw_metrics_round *r = malloc(sizeof(*r));
	rt_metrics_src   *src = calloc(GW_METRICS_TARGETS + 1, sizeof(*src));
	wb_obj           *local = wb_msg_new();
	size_t            n = 0;
	int               rc;

	if (r == NULL || src == NULL || local == NULL || rt_stats_fill(m->http, local) != WB_OK) {
		free(r);
		free(src);
		wb_msg_free(local);
		return WB_ENOMEM;
	}
	gw_metrics_round_run(m, r, WB_OP_STATS);
	for (int i = 0; i < m->n; i++) {
		src[n++] = (rt_metrics_src) { m->t[i].service, m->t[i].shard,
			r->rc[i] == WB_OK ? r->rep[i] : NULL };
	}
	src[n++] = (rt_metrics_src) { "gateway_http", 0, local };
	if ((rc = rt_metrics_write(out, src, n, RT_METRICS_UP)) == WB_OK) {
		rc = gw_metrics_responses(m, out);
	}
	gw_metrics_round_free(m, r);
	free(r);
	free(src);
	wb_msg_free(local);
	return rc;
}

/* --- the admin port ------------------------------------------------------------ */

/* gw_metrics_http_stats is a /metrics source: the HTTP API's per-op stats. */
static int
gw_metrics_http_stats(void *arg, wb_obj *rep)
{
	gw_metrics *m = arg;

	return rt_stats_fill(m->http, rep);
}

static int
gw_metrics_http_text(void *arg, FILE *out)
{
	return gw_metrics_responses(arg, out);
}

static int
gw_metrics_cluster_text(void *arg, FILE *out)
{
	return gw_metrics_cluster(arg, out);
}

static int
gw_metrics_ready_text(void *arg, FILE *out)
{
	return gw_metrics_ready(arg, out);
}

int
gw_metrics_serve(gw_metrics *m, rt_metrics *admin)
{
	int rc;

	if ((rc = rt_metrics_source(admin, "gateway_http", 0, gw_metrics_http_stats, m)) != WB_OK ||
	    (rc = rt_metrics_extra(admin, gw_metrics_http_text, m)) != WB_OK ||
	    (rc = rt_metrics_page(admin, "/metrics/cluster", gw_metrics_cluster_text, m)) !=
	        WB_OK) {
		return rc;
	}
	return rt_metrics_check(admin, gw_metrics_ready_text, m);
}
