/*
 * rt_metrics_text.c - Prometheus text format 0.0.4 from stats replies
 * (rt_metrics_write, see rt_metrics.h).
 *
 * The format wants a family's samples together, so each family is
 * written across every source in turn; its HELP and TYPE lines go before
 * its first sample, and a family without samples is left out.  Label
 * values that come from a reply (op names, services) are escaped.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "rt_metrics.h"
#include "wb_errors.h"

/* A family being written: its head goes out before its first sample. */
typedef struct rt_fam {
	FILE       *out;
	const char *name, *type, *help;
	bool        started;
} rt_fam;

/* rt_fam_sample starts a sample line of f (its head first, once): the name with suffix, and "{". */
static void
rt_fam_sample(rt_fam *f, const char *suffix)
{
	if (!f->started) {
		fprintf(f->out, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name, f->type);
		f->started = true;
	}
	fprintf(f->out, "%s%s{", f->name, suffix);
}

/* rt_metrics_label writes name="value" with value escaped as the format wants (\\, \", \n). */
static void
rt_metrics_label(FILE *out, const char *name, const char *value)
{
	fprintf(out, "%s=\"", name);
	for (const char *p = value; *p != '\0'; p++) {
		if (*p == '\\' || *p == '"') {
			fputc('\\', out);
			fputc(*p, out);
		} else if (*p == '\n') {
			fputs("\\n", out);
		} else {
			fputc(*p, out);
		}
	}
	fputc('"', out);
}

/* rt_metrics_labels writes service="..",shard=".." of a source. */
static void
rt_metrics_labels(FILE *out, const rt_metrics_src *s)
{
	rt_metrics_label(out, "service", s->service);
	fprintf(out, ",shard=\"%u\"", s->shard);
}

/* rt_metrics_fixed writes v / 10^digits exactly (digits 0..9) and the line's end. */
static void
rt_metrics_fixed(FILE *out, uint64_t v, unsigned digits)
{
	uint64_t div = 1;

	for (unsigned d = 0; d < digits; d++) {
		div *= 10;
	}
	if (digits == 0) {
		fprintf(out, " %" PRIu64 "\n", v);
	} else {
		fprintf(out, " %" PRIu64 ".%0*" PRIu64 "\n", v / div, (int)digits, v % div);
	}
}

/*
 * rt_metrics_ops writes one per-op family (which: 0 requests, 1 errors, 2
 * histogram) for every source.
 */
static void
rt_metrics_ops(rt_fam *f, const rt_metrics_src *src, size_t n, int which)
{
	for (size_t s = 0; s < n; s++) {
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

			if (which < 2) {
				rt_fam_sample(f, "");
				rt_metrics_labels(f->out, &src[s]);
				fputc(',', f->out);
				rt_metrics_label(f->out, "op", op);
				fprintf(f->out, "} %" PRIu64 "\n",
				    which == 0 ? count : wb_u64(&st[i], WB_F_ERRORS, 0));
				continue;
			}
			wb_get_u64s(&st[i], WB_F_HIST, &h, &nh);
			for (size_t b = 0; b < nh; b++) {
				cum += h[b];
				rt_fam_sample(f, "_bucket");
				rt_metrics_labels(f->out, &src[s]);
				fputc(',', f->out);
				rt_metrics_label(f->out, "op", op);
				if (b + 1 < nh) {
					fprintf(f->out, ",le=\"%.9g\"} %" PRIu64 "\n",
					    (double)(UINT64_C(1) << b) / 1e6, cum);
				} else {
					fprintf(f->out, ",le=\"+Inf\"} %" PRIu64 "\n", count);
				}
			}
			if (nh == 0) {
				rt_fam_sample(f, "_bucket");
				rt_metrics_labels(f->out, &src[s]);
				fputc(',', f->out);
				rt_metrics_label(f->out, "op", op);
				fprintf(f->out, ",le=\"+Inf\"} %" PRIu64 "\n", count);
			}
			rt_fam_sample(f, "_sum");
			rt_metrics_labels(f->out, &src[s]);
			fputc(',', f->out);
			rt_metrics_label(f->out, "op", op);
			fputc('}', f->out);
			rt_metrics_fixed(f->out, wb_u64(&st[i], WB_F_SUM_US, 0), 6);
			rt_fam_sample(f, "_count");
			rt_metrics_labels(f->out, &src[s]);
			fputc(',', f->out);
			rt_metrics_label(f->out, "op", op);
			fprintf(f->out, "} %" PRIu64 "\n", count);
		}
	}
}

/*
 * Prometheus names carry base units: a gauge a service reports in
 * milliseconds or microseconds (its name ends in _ms or _us, as inbox's
 * last_fanout_ms) is written as _seconds, the value printed exactly.
 */
static const struct {
	const char *suffix;
	unsigned    digits; /* the value is in 10^-digits seconds */
} rt_metrics_units[] = {
	{ "_ms", 3 },
	{ "_us", 6 },
};

/*
 * Gauges every server reports that are no series of their own: the
 * process's figures (rt_metrics_process writes them under their standard
 * names) and the admin port itself (metrics_port, for finding it).
 */
static bool
rt_metrics_skipped(const char *raw)
{
	return strncmp(raw, "process_", 8) == 0 || strcmp(raw, "metrics_port") == 0;
}

/*
 * rt_metrics_gauge_name writes warble_<service>_<raw> (a name in ms or us
 * as _seconds) into name; the digits of its unit.
 */
static unsigned
rt_metrics_gauge_name(char *name, size_t cap, const char *service, const char *raw)
{
	size_t   k = 0;
	unsigned digits = 0;
	char     full[160];

	snprintf(full, sizeof(full), "warble_%s_%s", service, raw);
	for (const char *p = full; *p != '\0' && k + 1 < cap; p++) {
		name[k++] = isalnum((unsigned char)*p) ? *p : '_';
	}
	name[k] = '\0';
	for (size_t u = 0; u < sizeof(rt_metrics_units) / sizeof(rt_metrics_units[0]); u++) {
		size_t ns = strlen(rt_metrics_units[u].suffix);
		if (k > ns && strcmp(name + k - ns, rt_metrics_units[u].suffix) == 0 &&
		    k - ns + sizeof("_seconds") <= cap) {
			strcpy(name + k - ns, "_seconds");
			digits = rt_metrics_units[u].digits;
		}
	}
	return digits;
}

/* rt_metrics_gauge_of finds gauge raw in a stats reply; false if it has none. */
static bool
rt_metrics_gauge_of(const wb_obj *rep, const char *raw, uint64_t *v)
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

/* A gauge's name cut into its family and its label: "base{key=value}" or "base". */
typedef struct rt_gname {
	char base[128], key[64], value[128];
} rt_gname;

/* rt_metrics_gname cuts raw into g (no label if raw has none, or a malformed one). */
static void
rt_metrics_gname(rt_gname *g, const char *raw)
{
	const char *open = strchr(raw, '{'), *eq = open != NULL ? strchr(open, '=') : NULL;
	size_t      n = strlen(raw);

	g->key[0] = g->value[0] = '\0';
	if (open == NULL || eq == NULL || raw[n - 1] != '}' || eq == open + 1 ||
	    (size_t)(open - raw) >= sizeof(g->base) || (size_t)(eq - open - 1) >= sizeof(g->key) ||
	    (size_t)(raw + n - 1 - eq - 1) >= sizeof(g->value)) {
		snprintf(g->base, sizeof(g->base), "%s", raw);
		return;
	}
	snprintf(g->base, sizeof(g->base), "%.*s", (int)(open - raw), raw);
	snprintf(g->key, sizeof(g->key), "%.*s", (int)(eq - open - 1), open + 1);
	snprintf(g->value, sizeof(g->value), "%.*s", (int)(raw + n - 1 - eq - 1), eq + 1);
	for (char *p = g->key; *p != '\0'; p++) {
		*p = isalnum((unsigned char)*p) ? *p : '_';
	}
}

/* rt_metrics_has_base tells whether one of the first upto gauges of rep belongs to family base. */
static bool
rt_metrics_has_base(const wb_obj *rep, const char *base, size_t upto)
{
	const wb_obj *g;
	size_t        ng = 0;
	rt_gname      gn;

	if (rep == NULL || !wb_get_objs(rep, WB_F_GAUGES, &g, &ng)) {
		return false;
	}
	for (size_t i = 0; i < ng && i < upto; i++) {
		rt_metrics_gname(&gn, wb_str(&g[i], WB_F_NAME, ""));
		if (strcmp(gn.base, base) == 0) {
			return true;
		}
	}
	return false;
}

/*
 * rt_metrics_gauges writes each registered gauge as the family
 * warble_<service>_<name>, one sample per source of that service that
 * reports it, the whole family at the first source that has it.  A
 * listed gauge "base{key=value}" is a sample of the family of base with
 * the label key="value" (one per consumer of a log, say).
 */
static void
rt_metrics_gauges(FILE *out, const rt_metrics_src *src, size_t n)
{
	for (size_t s = 0; s < n; s++) {
		const wb_obj *g;
		size_t        ng = 0;

		if (src[s].rep == NULL || !wb_get_objs(src[s].rep, WB_F_GAUGES, &g, &ng)) {
			continue;
		}
		for (size_t i = 0; i < ng; i++) {
			rt_gname gn;
			char     name[160];
			bool     seen = false;
			unsigned digits;

			rt_metrics_gname(&gn, wb_str(&g[i], WB_F_NAME, ""));
			if (gn.base[0] == '\0' || rt_metrics_skipped(gn.base)) {
				continue;
			}
			/* an earlier source of the service, or an earlier gauge here, wrote it */
			seen = rt_metrics_has_base(src[s].rep, gn.base, i);
			for (size_t e = 0; e < s && !seen; e++) {
				seen = strcmp(src[e].service, src[s].service) == 0 &&
				       rt_metrics_has_base(src[e].rep, gn.base, SIZE_MAX);
			}
			if (seen) {
				continue;
			}
			digits = rt_metrics_gauge_name(name, sizeof(name), src[s].service, gn.base);
			rt_fam f = { out, name, "gauge",
				"a figure the service reports in its stats" };
			for (size_t e = s; e < n; e++) {
				const wb_obj *eg;
				size_t        neg = 0;

				if (strcmp(src[e].service, src[s].service) != 0 ||
				    src[e].rep == NULL ||
				    !wb_get_objs(src[e].rep, WB_F_GAUGES, &eg, &neg)) {
					continue;
				}
				for (size_t k = 0; k < neg; k++) {
					rt_gname en;
					rt_metrics_gname(&en, wb_str(&eg[k], WB_F_NAME, ""));
					if (strcmp(en.base, gn.base) != 0) {
						continue;
					}
					rt_fam_sample(&f, "");
					rt_metrics_labels(out, &src[e]);
					if (en.key[0] != '\0') {
						fputc(',', out);
						rt_metrics_label(out, en.key, en.value);
					}
					fputc('}', out);
					rt_metrics_fixed(
					    out, wb_u64(&eg[k], WB_F_VALUE, 0), digits);
				}
			}
		}
	}
}

/*
 * rt_metrics_process writes the figures of each process (rt_proc.h) under
 * the names Prometheus clients use.
 */
static void
rt_metrics_process(FILE *out, const rt_metrics_src *src, size_t n)
{
	static const struct {
		const char *raw, *name, *type, *help;
		unsigned    digits; /* the raw figure is in 10^-digits of the unit */
	} p[] = {
		{ "process_cpu_us", "process_cpu_seconds_total", "counter",
		    "user and system CPU time the process used", 6 },
		{ "process_rss_bytes", "process_resident_memory_bytes", "gauge",
		    "the process's resident memory", 0 },
		{ "process_start_ms", "process_start_time_seconds", "gauge",
		    "when the process started, Unix seconds", 3 },
		{ "process_open_fds", "process_open_fds", "gauge", "open file descriptors", 0 },
	};

	for (size_t k = 0; k < sizeof(p) / sizeof(p[0]); k++) {
		rt_fam f = { out, p[k].name, p[k].type, p[k].help };
		for (size_t s = 0; s < n; s++) {
			uint64_t v;
			if (!rt_metrics_gauge_of(src[s].rep, p[k].raw, &v)) {
				continue;
			}
			rt_fam_sample(&f, "");
			rt_metrics_labels(out, &src[s]);
			fputc('}', out);
			rt_metrics_fixed(out, v, p[k].digits);
		}
	}
}

int
rt_metrics_write(FILE *out, const rt_metrics_src *src, size_t n, unsigned flags)
{
	rt_fam up = { out, "warble_up", "gauge", "1 if the service answered its stats request" };
	rt_fam uptime = { out, "warble_uptime_seconds", "gauge",
		"seconds since the service started" };
	rt_fam req = { out, "warble_requests_total", "counter", "requests handled, by operation" };
	rt_fam err = { out, "warble_request_errors_total", "counter",
		"requests answered with an error, by operation" };
	rt_fam dur = { out, "warble_request_duration_seconds", "histogram",
		"request latency, by operation" };

	for (size_t s = 0; s < n && (flags & RT_METRICS_UP); s++) {
		rt_fam_sample(&up, "");
		rt_metrics_labels(out, &src[s]);
		fprintf(out, "} %d\n", src[s].rep != NULL);
	}
	for (size_t s = 0; s < n; s++) {
		if (src[s].rep != NULL && wb_has(src[s].rep, WB_F_UPTIME)) {
			rt_fam_sample(&uptime, "");
			rt_metrics_labels(out, &src[s]);
			fputc('}', out);
			rt_metrics_fixed(out, wb_u64(src[s].rep, WB_F_UPTIME, 0), 3);
		}
	}
	rt_metrics_ops(&req, src, n, 0);
	rt_metrics_ops(&err, src, n, 1);
	rt_metrics_ops(&dur, src, n, 2);
	rt_metrics_gauges(out, src, n);
	rt_metrics_process(out, src, n);
	return ferror(out) ? WB_ENOMEM : WB_OK;
}
