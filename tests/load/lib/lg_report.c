/*
 * lg_report.c - warble-load's report: report.json's pieces, the summary
 * lines, the .dat files and the gnuplot script (lg_report.h).
 */
#include <stdlib.h>
#include <string.h>

#include "lg_report.h"

static int
lg_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double
lg_median(const double *v, int n)
{
	double c[8];

	if (n == 0) {
		return 0;
	}
	memcpy(c, v, (size_t)n * sizeof(double));
	qsort(c, (size_t)n, sizeof(double), lg_cmp_double);
	return n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
}

json_t *
lg_sweep_json(const lg_sweep_point *pt, int n, const char *const *names)
{
	json_t *a = json_array();
	char    key[64];

	for (int k = 0; k < n; k++) {
		json_t *o = json_pack("{s:I}", "follows", (json_int_t)pt[k].follows);
		for (int i = 0; i < LG_MAX_SYSTEMS; i++) {
			if (names[i] == NULL) {
				continue;
			}
			snprintf(key, sizeof(key), "%s_p50_ms", names[i]);
			json_object_set_new(o, key, json_real(pt[k].p50_ms[i]));
			snprintf(key, sizeof(key), "%s_p99_ms", names[i]);
			json_object_set_new(o, key, json_real(pt[k].p99_ms[i]));
			snprintf(key, sizeof(key), "%s_per_s", names[i]);
			json_object_set_new(o, key, json_real(pt[k].per_s[i]));
		}
		json_array_append_new(a, o);
	}
	return a;
}

json_t *
lg_hist_json(const lg_hist *h, double secs)
{
	return json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f}", "count", (json_int_t)h->n, "p50_ms",
	    lg_hist_q(h, 0.50) / 1e3, "p99_ms", lg_hist_q(h, 0.99) / 1e3, "p999_ms",
	    lg_hist_q(h, 0.999) / 1e3, "max_ms", h->max_us / 1e3, "mean_ms",
	    h->n ? (double)h->sum_us / h->n / 1e3 : 0.0, "per_s", secs > 0 ? h->n / secs : 0.0);
}

uint64_t
lg_servers_cpu(const lg_servers *s, int i)
{
	return s->cpu_us != NULL ? s->cpu_us(s->cpu_ctx, i) : lg_cpu_us(s->pid[i], s->reaped);
}

void
lg_vis_add(lg_vis *a, const lg_vis *b, int sign)
{
	if (a->n == 0) {
		memcpy(a->le_ms, b->le_ms, sizeof(a->le_ms));
		memset(a->count, 0, sizeof(a->count));
		a->n = b->n;
	}
	for (int i = 0; i < a->n && i < b->n; i++) {
		a->count[i] = sign > 0
		                  ? a->count[i] + b->count[i]
		                  : (a->count[i] > b->count[i] ? a->count[i] - b->count[i] : 0);
	}
}

double
lg_vis_q(const lg_vis *v, double q)
{
	uint64_t all = 0, seen = 0;

	for (int i = 0; i < v->n; i++) {
		all += v->count[i];
	}
	for (int i = 0; i < v->n && all > 0; i++) {
		seen += v->count[i];
		if ((double)seen >= q * (double)all) {
			return v->le_ms[i];
		}
	}
	return 0;
}

/* lg_vis_posts counts the posts of v. */
static uint64_t
lg_vis_posts(const lg_vis *v)
{
	uint64_t n = 0;

	for (int i = 0; i < v->n; i++) {
		n += v->count[i];
	}
	return n;
}

void
lg_mix_add(lg_mix *sum, const lg_mix *m)
{
	lg_vis_add(&sum->visible, &m->visible, 1);
	lg_hist_merge(&sum->home, &m->home);
	lg_hist_merge(&sum->tl, &m->tl);
	lg_hist_merge(&sum->post, &m->post);
	sum->ops += m->ops;
	sum->errors += m->errors;
	sum->empty_home += m->empty_home;
	sum->secs += m->secs;
	sum->req_secs += m->req_secs;
	sum->settle_secs += m->settle_secs;
	sum->srv = m->srv;
	for (int i = 0; i < m->srv.n; i++) {
		sum->srv_cpu_us[i] += m->srv_cpu_us[i];
	}
	sum->client_cpu_us += m->client_cpu_us;
	if (m->settle_max_ms > sum->settle_max_ms) {
		sum->settle_max_ms = m->settle_max_ms;
	}
}

double
lg_mix_cpu_per_op(const lg_mix *m, int i)
{
	uint64_t us = 0;

	if (i == -2) {
		us = m->client_cpu_us;
	}
	for (int k = 0; k < m->srv.n; k++) {
		us += i == -1 || i == k ? m->srv_cpu_us[k] : 0;
	}
	return m->ops ? (double)us / (double)m->ops : 0.0;
}

json_t *
lg_mix_json(const lg_mix *m)
{
	json_t *cpu = json_object();

	for (int i = 0; i < m->srv.n; i++) {
		json_object_set_new(cpu, m->srv.name[i], json_real(lg_mix_cpu_per_op(m, i)));
	}
	json_object_set_new(cpu, "total", json_real(lg_mix_cpu_per_op(m, -1)));
	json_object_set_new(cpu, "client", json_real(lg_mix_cpu_per_op(m, -2)));
	json_t *o = json_pack("{s:o, s:o, s:o, s:I, s:I, s:I, s:f, s:f, s:o, s:f}", "home",
	    lg_hist_json(&m->home, m->secs), "user_timeline", lg_hist_json(&m->tl, m->secs), "post",
	    lg_hist_json(&m->post, m->secs), "ops", (json_int_t)m->ops, "errors",
	    (json_int_t)m->errors, "empty_home", (json_int_t)m->empty_home, "seconds", m->secs,
	    "ops_per_s", m->secs > 0 ? m->ops / m->secs : 0.0, "cpu_us_per_op", cpu,
	    "settle_max_ms", m->settle_max_ms);
	json_object_set_new(o, "request_seconds", json_real(m->req_secs));
	json_object_set_new(o, "settle_seconds", json_real(m->settle_secs));
	json_object_set_new(
	    o, "ops_per_request_second", json_real(m->req_secs > 0 ? m->ops / m->req_secs : 0.0));
	if (m->visible.n > 0) {
		json_object_set_new(o, "post_visible",
		    json_pack("{s:I, s:f, s:f, s:f}", "posts",
		        (json_int_t)lg_vis_posts(&m->visible), "p50_ms_at_most",
		        lg_vis_q(&m->visible, 0.5), "p99_ms_at_most", lg_vis_q(&m->visible, 0.99),
		        "max_ms_at_most", lg_vis_q(&m->visible, 1.0)));
	}
	return o;
}

void
lg_mix_print(const char *name, const lg_mix *m)
{
	printf("mix %-15s %7.0f req/s (%llu ops, %llu errors, %llu empty homes) | home p50 %.2f "
	       "p99 %.2f p99.9 %.2f ms, %.0f/s | user timeline p99 %.2f ms | post p50 %.2f p99 "
	       "%.2f ms\n",
	    name, m->ops / m->secs, (unsigned long long)m->ops, (unsigned long long)m->errors,
	    (unsigned long long)m->empty_home, lg_hist_q(&m->home, 0.5) / 1e3,
	    lg_hist_q(&m->home, 0.99) / 1e3, lg_hist_q(&m->home, 0.999) / 1e3, m->home.n / m->secs,
	    lg_hist_q(&m->tl, 0.99) / 1e3, lg_hist_q(&m->post, 0.5) / 1e3,
	    lg_hist_q(&m->post, 0.99) / 1e3);
	if (m->srv.n > 0) {
		printf("    cpu per request: server %.1f us (", lg_mix_cpu_per_op(m, -1));
		for (int i = 0; i < m->srv.n; i++) {
			printf("%s%s %.1f", i ? ", " : "", m->srv.name[i], lg_mix_cpu_per_op(m, i));
		}
		printf("), client %.1f us\n", lg_mix_cpu_per_op(m, -2));
	}
	if (m->srv.settle != NULL) {
		printf(
		    "    fan-out done %.0f ms after a round's last request (the longest wait; "
		    "%.2f s in all): req/s counted to it, %.0f over the requests' %.2f s alone\n",
		    m->settle_max_ms, m->settle_secs, m->req_secs > 0 ? m->ops / m->req_secs : 0.0,
		    m->req_secs);
	}
	if (m->visible.n > 0) {
		printf(
		    "    post visible in every inbox, from its commit: p50 <= %.0f ms, p99 <= %.0f "
		    "ms, max <= %.0f ms (%llu posts; the post's p99 above is the publish's own "
		    "wait)\n",
		    lg_vis_q(&m->visible, 0.5), lg_vis_q(&m->visible, 0.99),
		    lg_vis_q(&m->visible, 1.0), (unsigned long long)lg_vis_posts(&m->visible));
	}
	fflush(stdout);
}

void
lg_write_dat(const char *out, const char *name, const lg_hist *h)
{
	char  path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", out, name);
	if ((f = fopen(path, "w")) != NULL) {
		lg_hist_dump(h, f);
		fclose(f);
	}
}

/* lg_plot_title is how a plot names system i (Warble first, then the peers). */
static const char *
lg_plot_title(const char *const *names, int i)
{
	static const struct {
		const char *name, *title;
	} t[] = { { "warble", "Warble" }, { "redis", "Redis (functions)" },
		{ "redis-plain", "Redis (plain commands)" },
		{ "postgres", "PostgreSQL fan-out on read" },
		{ "postgres-fanout", "PostgreSQL fan-out on write" } };

	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		if (strcmp(names[i], t[k].name) == 0) {
			return t[k].title;
		}
	}
	return names[i];
}

void
lg_write_plots(const char *out, const lg_fan *fr, int nfan, const lg_sweep_point *sw, int nsweep,
    const char *const *names, const bool *fans_out)
{
	char  path[4096], cmd[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/fanout.dat", out);
	if ((f = fopen(path, "w")) != NULL) {
		fprintf(f, "# followers warble_s");
		for (int i = 0; i < LG_MAX_PEERS; i++) {
			fprintf(f, " %s_s", names[1 + i] ? names[1 + i] : "none");
		}
		fprintf(f, "\n");
		for (int c = 0; c < nfan; c++) {
			fprintf(f, "%llu %.4f", (unsigned long long)fr[c].f,
			    lg_median(fr[c].w_s, fr[c].reps));
			for (int i = 0; i < LG_MAX_PEERS; i++) {
				fprintf(f, " %.4f", lg_median(fr[c].peer[i].s, fr[c].reps));
			}
			fprintf(f, "\n");
		}
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/home_by_follows.dat", out);
	if (nsweep > 0 && (f = fopen(path, "w")) != NULL) {
		fprintf(f, "# follows, then p50 and p99 (ms) of:");
		for (int i = 0; i < LG_MAX_SYSTEMS; i++) {
			fprintf(f, " %s", names[i] ? names[i] : "none");
		}
		fprintf(f, "\n");
		for (int k = 0; k < nsweep; k++) {
			fprintf(f, "%llu", (unsigned long long)sw[k].follows);
			for (int i = 0; i < LG_MAX_SYSTEMS; i++) {
				fprintf(f, " %.3f %.3f", sw[k].p50_ms[i], sw[k].p99_ms[i]);
			}
			fprintf(f, "\n");
		}
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/plot.gp", out);
	if ((f = fopen(path, "w")) == NULL) {
		return;
	}
	fprintf(f,
	    "set terminal png size 1000,600\n"
	    "set output 'latency.png'\n"
	    "set title 'Home timeline latency (mixed workload 60/30/10)'\n"
	    "set logscale x\nset logscale y\nset grid\n"
	    "set xlabel 'percentile'\nset ylabel 'ms'\n"
	    "set xtics ('50' 2, '90' 10, '99' 100, '99.9' 1000, '99.99' 10000, '99.999' 100000)\n"
	    "plot ");
	for (int i = 0; i < LG_MAX_SYSTEMS; i++) {
		if (names[i] != NULL) {
			fprintf(f,
			    "'home_%s.dat' using (1/(1-$1/100)):2 with lines lw 2 title '%s', ",
			    names[i], lg_plot_title(names, i));
		}
	}
	fprintf(f, "'visible_warble.dat' using (1/(1-$1/100)):2 with lines lw 2 title 'Warble "
	           "publish-to-visible'\n");
	fprintf(f, "set output 'fanout.png'\n"
	           "set title 'One post to F followers: time until in every timeline'\n"
	           "set xlabel 'followers'\nset ylabel 'seconds'\nset xtics auto\n"
	           "plot 'fanout.dat' using 1:2 with linespoints lw 2 title 'Warble'");
	for (int i = 0; i < LG_MAX_PEERS; i++) {
		if (names[1 + i] != NULL && fans_out[i]) {
			fprintf(f, ", '' using 1:%d with linespoints lw 2 title '%s'", 3 + i,
			    lg_plot_title(names, 1 + i));
		}
	}
	fprintf(f, "\n");
	if (nsweep > 0) {
		fprintf(f, "set output 'home_by_follows.png'\n"
		           "set title 'Home timeline read by one reader following F accounts'\n"
		           "set logscale x\nset logscale y\nset xlabel 'accounts followed'\n"
		           "set ylabel 'ms'\nplot ");
		for (int i = 0, first = 1; i < LG_MAX_SYSTEMS; i++) {
			if (names[i] != NULL) {
				fprintf(f,
				    "%s'home_by_follows.dat' using 1:%d with linespoints lw 2 "
				    "title "
				    "'%s p50', '' using 1:%d with linespoints lw 2 title '%s p99'",
				    first ? "" : ", ", 2 + 2 * i, lg_plot_title(names, i),
				    3 + 2 * i, lg_plot_title(names, i));
				first = 0;
			}
		}
		fprintf(f, "\n");
	}
	fclose(f);
	snprintf(
	    cmd, sizeof(cmd), "cd '%s' && command -v gnuplot >/dev/null && gnuplot plot.gp", out);
	if (system(cmd) != 0) {
		fprintf(
		    stderr, "warble-load: no plots (gnuplot missing or failed); data in %s\n", out);
	}
}

/* lg_http_run_json is one run of home_http, or NULL if it did not run. */
static json_t *
lg_http_run_json(const lg_http_cmp *hc, int k)
{
	if (hc->per_s[k] <= 0) {
		return NULL;
	}
	return json_pack("{s:f, s:f, s:f, s:{s:f, s:f, s:f}}", "per_s", hc->per_s[k], "p50_ms",
	    hc->p50_ms[k], "p99_ms", hc->p99_ms[k], "cpu_us_per_op", "gateway", hc->gw_cpu_us[k],
	    "total", hc->srv_cpu_us[k], "client", hc->client_cpu_us[k]);
}

json_t *
lg_http_json(const lg_http_cmp *hc, int conns)
{
	double sdk = hc->per_s[0];

	return json_pack("{s:i, s:o*, s:o*, s:o*, s:f, s:f}", "connections", conns, "msgpack",
	    lg_http_run_json(hc, 0), "http", lg_http_run_json(hc, 1), "wrk",
	    lg_http_run_json(hc, 2), "http_over_msgpack", sdk > 0 ? hc->per_s[1] / sdk : 0.0,
	    "wrk_over_msgpack", sdk > 0 ? hc->per_s[2] / sdk : 0.0);
}
