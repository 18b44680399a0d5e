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
lg_sweep_json(const lg_sweep_point *pt, int n)
{
	json_t *a = json_array();

	for (int k = 0; k < n; k++) {
		json_array_append_new(
		    a, json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "follows",
		           (json_int_t)pt[k].follows, "warble_p50_ms", pt[k].p50_ms[0],
		           "warble_p99_ms", pt[k].p99_ms[0], "warble_per_s", pt[k].per_s[0],
		           "redis_p50_ms", pt[k].p50_ms[1], "redis_p99_ms", pt[k].p99_ms[1],
		           "redis_per_s", pt[k].per_s[1], "postgres_p50_ms", pt[k].p50_ms[2],
		           "postgres_p99_ms", pt[k].p99_ms[2], "postgres_per_s", pt[k].per_s[2]));
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
lg_mix_add(lg_mix *sum, const lg_mix *m)
{
	lg_hist_merge(&sum->home, &m->home);
	lg_hist_merge(&sum->tl, &m->tl);
	lg_hist_merge(&sum->post, &m->post);
	sum->ops += m->ops;
	sum->errors += m->errors;
	sum->empty_home += m->empty_home;
	sum->secs += m->secs;
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
	return json_pack("{s:o, s:o, s:o, s:I, s:I, s:I, s:f, s:f, s:o, s:f}", "home",
	    lg_hist_json(&m->home, m->secs), "user_timeline", lg_hist_json(&m->tl, m->secs), "post",
	    lg_hist_json(&m->post, m->secs), "ops", (json_int_t)m->ops, "errors",
	    (json_int_t)m->errors, "empty_home", (json_int_t)m->empty_home, "seconds", m->secs,
	    "ops_per_s", m->secs > 0 ? m->ops / m->secs : 0.0, "cpu_us_per_op", cpu,
	    "settle_max_ms", m->settle_max_ms);
}

void
lg_mix_print(const char *name, const lg_mix *m)
{
	printf("mix %-8s %7.0f req/s (%llu ops, %llu errors, %llu empty homes) | home p50 %.2f p99 "
	       "%.2f "
	       "p99.9 %.2f ms, %.0f/s | user timeline p99 %.2f ms | post p50 %.2f p99 %.2f ms\n",
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
		printf("    fan-out done %.0f ms after the run's last request (the longest wait)\n",
		    m->settle_max_ms);
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

void
lg_write_plots(const char *out, const lg_fan *fr, int nfan, const lg_sweep_point *sw, int nsweep,
    bool redis, bool pg)
{
	char  path[4096], cmd[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/fanout.dat", out);
	if ((f = fopen(path, "w")) != NULL) {
		fprintf(f, "# followers warble_s redis_s\n");
		for (int c = 0; c < nfan; c++) {
			lg_fan x = fr[c];
			fprintf(f, "%llu %.4f %.4f\n", (unsigned long long)x.f,
			    lg_median(x.w_s, x.reps), redis ? lg_median(x.r_s, x.reps) : 0.0);
		}
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/home_by_follows.dat", out);
	if (nsweep > 0 && (f = fopen(path, "w")) != NULL) {
		fprintf(f, "# follows warble_p50 warble_p99 redis_p50 redis_p99 postgres_p50 "
		           "postgres_p99 (ms)\n");
		for (int k = 0; k < nsweep; k++) {
			fprintf(f, "%llu %.3f %.3f %.3f %.3f %.3f %.3f\n",
			    (unsigned long long)sw[k].follows, sw[k].p50_ms[0], sw[k].p99_ms[0],
			    sw[k].p50_ms[1], sw[k].p99_ms[1], sw[k].p50_ms[2], sw[k].p99_ms[2]);
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
	    "plot 'home_warble.dat' using (1/(1-$1/100)):2 with lines lw 2 title 'Warble'");
	if (redis) {
		fprintf(f, ", 'home_redis.dat' using (1/(1-$1/100)):2 with lines lw 2 title 'Redis "
		           "fan-out on write'");
	}
	if (pg) {
		fprintf(f, ", 'home_postgres.dat' using (1/(1-$1/100)):2 with lines lw 2 title "
		           "'PostgreSQL fan-out on read'");
	}
	fprintf(f, ", 'visible_warble.dat' using (1/(1-$1/100)):2 with lines lw 2 title 'Warble "
	           "publish-to-visible'\n");
	fprintf(f,
	    "set output 'fanout.png'\n"
	    "set title 'One post to F followers: time until in every timeline'\n"
	    "set xlabel 'followers'\nset ylabel 'seconds'\nset xtics auto\n"
	    "plot 'fanout.dat' using 1:2 with linespoints lw 2 title 'Warble'%s\n",
	    redis ? ", 'fanout.dat' using 1:3 with linespoints lw 2 title 'Redis'" : "");
	if (nsweep > 0) {
		fprintf(f,
		    "set output 'home_by_follows.png'\n"
		    "set title 'Home timeline read by one reader following F accounts'\n"
		    "set logscale x\nset logscale y\nset xlabel 'accounts followed'\n"
		    "set ylabel 'ms'\n"
		    "plot 'home_by_follows.dat' using 1:2 with linespoints lw 2 title 'Warble "
		    "p50', "
		    "'' using 1:3 with linespoints lw 2 title 'Warble p99'%s%s\n",
		    redis ? ", '' using 1:4 with linespoints lw 2 title 'Redis p50', '' using 1:5 "
		            "with "
		            "linespoints lw 2 title 'Redis p99'"
		          : "",
		    pg ? ", '' using 1:6 with linespoints lw 2 title 'PostgreSQL p50', '' using "
		         "1:7 "
		         "with linespoints lw 2 title 'PostgreSQL p99'"
		       : "");
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
