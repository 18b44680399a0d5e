/*
 * monitoring_test.c - deploy/prometheus/ and deploy/grafana/ against real
 * clusters and a real Prometheus (Debian's prometheus package: promtool and
 * the server, installed by tests/deps.sh).  Every Warble process serves
 * its figures on an admin port of its own (WARBLE_METRICS_URL), found here
 * through its stats (wbt_metrics_port).
 *
 *   monitoring::promtool_rules     promtool checks the alert rules, runs
 *                                  their unit tests and checks both scrape
 *                                  configs, which name every daemon's
 *                                  default admin port; the dashboard is
 *                                  valid JSON whose every panel queries
 *                                  Prometheus
 *   monitoring::promtool_metrics   promtool check metrics passes on the
 *                                  /metrics of every process of a cluster
 *                                  of five daemons and of one warble
 *                                  process, and on the gateway's
 *                                  /metrics/cluster, after traffic; each
 *                                  has process_cpu_seconds_total for its
 *                                  {service, shard}
 *   monitoring::names_exist        every metric an alert rule or a panel
 *                                  names is in a live /metrics
 *   monitoring::prometheus_scrapes the server, with prometheus-local.yml
 *                                  pointed at a cluster of five daemons
 *                                  and a job for a warble process, scrapes
 *                                  every process and finds
 *                                  process_cpu_seconds_total for each
 *                                  {service, shard} of both; its HTTP API
 *                                  evaluates every rule without error and
 *                                  every panel's query, and
 *                                  WarbleServiceDown and WarbleGatewayDown
 *                                  go off when content and the gateway stop
 *
 * Without promtool or prometheus the tests fail (they do not skip), so CI
 * cannot pass without running them.  Every wait has a deadline, every
 * command a timeout; Prometheus listens on a free 127.0.0.1 port with its
 * storage in the test's temp dir, and the harness kills it at the end.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "../http/ht.h"

#define MT_RULES     "deploy/prometheus/warble-alerts.yml"
#define MT_RULES_T   "deploy/prometheus/warble-alerts.test.yml"
#define MT_LOCAL     "deploy/prometheus/prometheus-local.yml"
#define MT_COMPOSE   "deploy/prometheus/prometheus-compose.yml"
#define MT_DASHBOARD "deploy/grafana/warble.json"
#define MT_PROM      "/usr/bin/prometheus"
#define MT_PROMTOOL  "/usr/bin/promtool"
#define MT_MAX_EXPRS 128
#define MT_MAX_NAMES 512

static char mt_root[1024];

/* mt_init finds the repository and the Prometheus programs; fails the test without them. */
static void
mt_init(void)
{
	cr_assert_eq(ht_root(mt_root, sizeof(mt_root), MT_RULES), 0, "cannot find %s", MT_RULES);
	cr_assert_eq(access(MT_PROMTOOL, X_OK), 0,
	    MT_PROMTOOL " is missing: run tests/deps.sh (package prometheus)");
	cr_assert_eq(access(MT_PROM, X_OK), 0,
	    MT_PROM " is missing: run tests/deps.sh (package prometheus)");
}

/* mt_read reads a file (path relative to the repository unless absolute) into a NUL-terminated buffer. */
static char *
mt_read(const char *rel)
{
	char  path[1400];
	char *buf;

	if (rel[0] == '/') {
		snprintf(path, sizeof(path), "%s", rel);
	} else {
		snprintf(path, sizeof(path), "%s/%s", mt_root, rel);
	}
	buf = wbt_read_file(path);
	cr_assert_not_null(buf, "cannot read %s", path);
	return buf;
}

/* mt_write writes text to a file of the test's temp dir and its path into path. */
static void
mt_write(char *path, size_t n, const char *name, const char *text)
{
	FILE *f;

	cr_assert_eq(wbt_path(path, n, name), 0);
	f = fopen(path, "w");
	cr_assert_not_null(f, "cannot write %s", path);
	cr_assert_eq(fputs(text, f) >= 0, true);
	cr_assert_eq(fclose(f), 0);
}

/*
 * mt_sh runs a shell command in the repository under a 120 s timeout, its
 * output into the temp dir; returns its exit status, *out (if not NULL)
 * the output, which is also printed to stderr when the status is not 0.
 */
static int
mt_sh(const char *cmd, char **out)
{
	static int n;
	char       log[256], name[32], line[4096];
	int        st;

	snprintf(name, sizeof(name), "sh.%d.log", n++);
	cr_assert_eq(wbt_path(log, sizeof(log), name), 0);
	snprintf(
	    line, sizeof(line), "cd '%s' && timeout -k 5 120 %s >'%s' 2>&1", mt_root, cmd, log);
	st = system(line);
	st = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	if (st != 0) {
		fprintf(stderr, "$ %s\n", cmd);
		snprintf(line, sizeof(line), "sed 's/^/    /' '%s' >&2", log);
		if (system(line) != 0) {
			fprintf(stderr, "cannot show %s\n", log);
		}
	}
	if (out != NULL) {
		*out = mt_read(log);
	}
	return st;
}

/* --- the queries the rules and the dashboard run -------------------------- */

typedef struct mt_exprs {
	char *e[MT_MAX_EXPRS];
	char  from[MT_MAX_EXPRS][64]; /* "rule WarbleServiceDown", "panel Inbox lag" */
	int   n;
} mt_exprs;

static void
mt_exprs_add(mt_exprs *x, const char *kind, const char *what, char *expr)
{
	cr_assert_lt(x->n, MT_MAX_EXPRS);
	snprintf(x->from[x->n], sizeof(x->from[0]), "%s %s", kind, what);
	x->e[x->n++] = expr;
}

static void
mt_exprs_free(mt_exprs *x)
{
	for (int i = 0; i < x->n; i++) {
		free(x->e[i]);
	}
	x->n = 0;
}

/*
 * mt_rule_exprs collects every `expr:` of the rules file: a one-line value,
 * or a block (`>-`, `|`) of the lines indented deeper than the key, joined
 * by spaces.  Each comes with the name of its alert (the `- alert:` above).
 */
static void
mt_rule_exprs(mt_exprs *x)
{
	char *text = mt_read(MT_RULES), *save = NULL, alert[64] = "?";
	char *lines[2048];
	int   nl = 0;

	for (char *l = strtok_r(text, "\n", &save); l != NULL && nl < 2048;
	     l = strtok_r(NULL, "\n", &save)) {
		lines[nl++] = l;
	}
	for (int i = 0; i < nl; i++) {
		char  *l = lines[i], *key;
		size_t ind = strspn(l, " ");

		if ((key = strstr(l, "- alert:")) != NULL && (size_t)(key - l) == ind) {
			snprintf(alert, sizeof(alert), "%s", key + 8 + strspn(key + 8, " "));
			continue;
		}
		if (strncmp(l + ind, "expr:", 5) != 0) {
			continue;
		}
		char *v = l + ind + 5;
		v += strspn(v, " ");
		if (*v != '>' && *v != '|') {
			mt_exprs_add(x, "rule", alert, strdup(v));
			continue;
		}
		size_t cap = 1, len = 0;
		char  *e = calloc(1, 1);
		for (; i + 1 < nl && (strspn(lines[i + 1], " ") > ind || lines[i + 1][0] == '\0');
		     i++) {
			const char *p = lines[i + 1] + strspn(lines[i + 1], " ");
			cap += strlen(p) + 1;
			e = realloc(e, cap);
			cr_assert_not_null(e);
			len += (size_t)sprintf(e + len, "%s%s", len ? " " : "", p);
		}
		mt_exprs_add(x, "rule", alert, e);
	}
	free(text);
}

/* mt_panel_exprs collects the query of every target of every panel (rows' own panels too). */
static void
mt_panel_exprs(mt_exprs *x, json_t *panels)
{
	size_t  i;
	json_t *p;

	json_array_foreach(panels, i, p)
	{
		const char *title = json_string_value(json_object_get(p, "title"));
		json_t     *targets = json_object_get(p, "targets"), *t, *sub;
		size_t      k;

		if ((sub = json_object_get(p, "panels")) != NULL) {
			mt_panel_exprs(x, sub);
		}
		json_array_foreach(targets, k, t)
		{
			const char *e = json_string_value(json_object_get(t, "expr"));
			cr_assert_not_null(e, "panel %s: a target without expr", title);
			mt_exprs_add(x, "panel", title != NULL ? title : "?", strdup(e));
		}
	}
}

/* mt_dashboard loads the dashboard (failing the test if it is not valid JSON). */
static json_t *
mt_dashboard(void)
{
	char         path[1400];
	json_error_t err;
	json_t      *d;

	snprintf(path, sizeof(path), "%s/%s", mt_root, MT_DASHBOARD);
	d = json_load_file(path, 0, &err);
	cr_assert_not_null(d, "%s:%d: %s", MT_DASHBOARD, err.line, err.text);
	return d;
}

/* mt_all_exprs collects the rules' and the dashboard's queries. */
static void
mt_all_exprs(mt_exprs *x)
{
	json_t *d = mt_dashboard();

	mt_rule_exprs(x);
	mt_panel_exprs(x, json_object_get(d, "panels"));
	json_decref(d);
}

/*
 * mt_metric_names calls fn for every metric name in a PromQL expression:
 * an identifier starting with warble_ or process_ (or the scrape's own
 * `up`), outside quotes, not followed by `(` (a function).
 */
static int
mt_metric_names(const char *e, void (*fn)(const char *name, void *arg), void *arg)
{
	int n = 0;

	for (const char *p = e; *p != '\0';) {
		if (*p == '"') {
			for (p++; *p != '\0' && *p != '"'; p++) {
				p += *p == '\\' && p[1] != '\0';
			}
			p += *p == '"';
			continue;
		}
		if (!isalpha((unsigned char)*p) && *p != '_') {
			p++;
			continue;
		}
		const char *s = p;
		char        name[128];
		while (isalnum((unsigned char)*p) || *p == '_' || *p == ':') {
			p++;
		}
		const char *after = p + strspn(p, " ");
		snprintf(name, sizeof(name), "%.*s", (int)(p - s), s);
		if (*after == '(') {
			continue;
		}
		if (strncmp(name, "warble_", 7) == 0 || strncmp(name, "process_", 8) == 0 ||
		    strcmp(name, "up") == 0) {
			fn(name, arg);
			n++;
		}
	}
	return n;
}

/* --- a live cluster ------------------------------------------------------- */

/* mt_call sends one HTTP request and returns its JSON reply, asserting the status. */
static json_t *
mt_call(
    int port, int want, const char *method, const char *path, const char *token, const char *body)
{
	ht_res       r;
	json_error_t err;
	json_t      *j;

	cr_assert_eq(ht_request(port, method, path, token, body, &r), 0, "%s %s", method, path);
	cr_assert_eq(r.status, want, "%s %s: %d %s", method, path, r.status, r.body);
	j = json_loads(r.body, 0, &err);
	cr_assert_not_null(j, "%s %s: not JSON: %s", method, path, r.body);
	ht_res_free(&r);
	return j;
}

/* mt_login registers name and returns a session token (the caller frees it). */
static char *
mt_login(int port, const char *name)
{
	char    body[160];
	json_t *j;
	char   *tok;

	snprintf(body, sizeof(body), "{\"name\":\"%s\",\"password\":\"correct-horse\"}", name);
	json_decref(mt_call(port, 201, "POST", "/api/v1/users", NULL, body));
	j = mt_call(port, 201, "POST", "/api/v1/sessions", NULL, body);
	tok = strdup(json_string_value(json_object_get(j, "token")));
	json_decref(j);
	cr_assert_not_null(tok);
	return tok;
}

/* The five services, in the order of a cluster's slots and of the admin ports' defaults. */
static const char *const mt_services[5] = { "user", "relation", "content", "inbox", "gateway" };

/* mt_url returns the address a cluster serves service i on. */
static const char *
mt_url(const wbt_cluster *cl, int i)
{
	const char *const urls[5] = { cl->user_url, cl->relation_url, cl->content_url,
		cl->inbox_url, cl->gateway_url };

	return urls[i];
}

/* mt_admin finds the admin port (its stats' metrics_port) of each service of cl into ports. */
static void
mt_admin(const wbt_cluster *cl, int ports[5])
{
	for (int i = 0; i < 5; i++) {
		ports[i] = wbt_metrics_port(mt_url(cl, i));
		cr_assert_gt(ports[i], 0, "%s: no metrics_port in its stats", mt_services[i]);
	}
}

/*
 * mt_default_port returns the port of warble-<service>'s default
 * WARBLE_METRICS_URL (its --print-defaults).
 */
static int
mt_default_port(const char *service)
{
	char bin[512], cmd[700], *out, *at;
	int  port = -1;
	char prog[64];

	snprintf(prog, sizeof(prog), "warble-%s", service);
	cr_assert_eq(wbt_bin_path(bin, sizeof(bin), prog), 0, "no %s built", prog);
	snprintf(cmd, sizeof(cmd), "'%s' --print-defaults", bin);
	cr_assert_eq(mt_sh(cmd, &out), 0);
	at = strstr(out, "\nWARBLE_METRICS_URL=http://127.0.0.1:");
	cr_assert_not_null(at, "%s --print-defaults: no WARBLE_METRICS_URL on loopback", prog);
	port = atoi(at + strlen("\nWARBLE_METRICS_URL=http://127.0.0.1:"));
	free(out);
	cr_assert_gt(port, 0);
	return port;
}

/*
 * mt_traffic starts a cluster of the given shape whose gateway serves HTTP
 * on a free port and gives every family samples: two users (named after
 * prefix), a follow, a post fanned out (the inbox's figures move), home
 * reads and an error (404).  Returns the HTTP port.
 */
static int
mt_traffic(wbt_cluster *cl, wbt_shape shape, const char *prefix)
{
	int     port = ht_cluster_start_as(cl, NULL, shape);
	char   *a, *b, na[32], nb[32], path[64];
	ht_res  r;
	json_t *home;

	cr_assert_gt(port, 0, "the cluster did not start");
	snprintf(na, sizeof(na), "%salice", prefix);
	snprintf(nb, sizeof(nb), "%sbob", prefix);
	a = mt_login(port, na);
	b = mt_login(port, nb);
	snprintf(path, sizeof(path), "/api/v1/me/following/%s", nb);
	json_decref(mt_call(port, 200, "PUT", path, a, NULL));
	json_decref(mt_call(port, 201, "POST", "/api/v1/posts", b, "{\"text\":\"watched\"}"));
	for (long long end = wbt_now_ms() + wbt_ms(20000);; wbt_sleep_ms(50)) {
		home = mt_call(port, 200, "GET", "/api/v1/home", a, NULL);
		size_t n = json_array_size(json_object_get(home, "posts"));
		json_decref(home);
		if (n == 1) {
			break;
		}
		cr_assert_lt(wbt_now_ms(), end, "the post never reached %s's home", na);
	}
	cr_assert_eq(ht_request(port, "GET", "/api/v1/users/nobody", NULL, NULL, &r), 0);
	cr_assert_eq(r.status, 404);
	ht_res_free(&r);
	free(a);
	free(b);
	return port;
}

/* mt_metrics returns the body of GET path on an admin port (the caller frees it). */
static char *
mt_metrics(int port, const char *path)
{
	ht_res r;
	char  *body;

	cr_assert_eq(ht_request(port, "GET", path, NULL, NULL, &r), 0);
	cr_assert_eq(r.status, 200, "%s on port %d: %d", path, port, r.status);
	body = r.body;
	r.body = NULL;
	ht_res_free(&r);
	return body;
}

/*
 * mt_promtool writes a /metrics body to a file named name and has promtool
 * check it: nothing to say.
 */
static void
mt_promtool(const char *name, const char *text)
{
	char path[256], cmd[400], *out;

	mt_write(path, sizeof(path), name, text);
	snprintf(cmd, sizeof(cmd), MT_PROMTOOL " check metrics <'%s'", path);
	cr_assert_eq(mt_sh(cmd, &out), 0, "promtool check metrics failed on %s (above)", name);
	cr_assert_str_eq(out, "", "promtool check metrics on %s: %s", name, out);
	free(out);
}

/* mt_has_cpu asserts that text has process_cpu_seconds_total for {service, shard 0}. */
static void
mt_has_cpu(const char *text, const char *service, const char *from)
{
	char want[128];

	snprintf(want, sizeof(want), "\nprocess_cpu_seconds_total{service=\"%s\",shard=\"0\"} ",
	    service);
	cr_assert_not_null(strstr(text, want), "%s: no%s", from, want);
}

/* --- promtool -------------------------------------------------------------- */

Test(monitoring, promtool_rules, .fini = wbt_cleanup, .timeout = 300)
{
	mt_exprs x = { 0 };
	json_t  *d;
	char    *out, *local, *compose;
	int      panels = 0;

	mt_init();
	cr_assert_eq(mt_sh(MT_PROMTOOL " check rules " MT_RULES, &out), 0);
	cr_assert_not_null(strstr(out, "SUCCESS"), "%s", out);
	free(out);
	/* each alert goes off on made-up series and stays quiet on others */
	cr_assert_eq(mt_sh(MT_PROMTOOL " test rules " MT_RULES_T, &out), 0);
	cr_assert_not_null(strstr(out, "SUCCESS"), "%s", out);
	free(out);
	cr_assert_eq(mt_sh(MT_PROMTOOL " check config " MT_LOCAL, NULL), 0);
	cr_assert_eq(mt_sh(MT_PROMTOOL " check config " MT_COMPOSE, NULL), 0);

	/* both scrape every daemon's admin port, as the daemons default it, labelled */
	local = mt_read(MT_LOCAL);
	compose = mt_read(MT_COMPOSE);
	for (int i = 0; i < 5; i++) {
		char want[256], label[96];
		int  port = mt_default_port(mt_services[i]);

		snprintf(
		    label, sizeof(label), "labels: { service: %s, shard: \"0\" }", mt_services[i]);
		snprintf(
		    want, sizeof(want), "- targets: [\"127.0.0.1:%d\"]\n        %s", port, label);
		cr_assert_not_null(strstr(local, want), "%s does not scrape %s", MT_LOCAL, want);
		snprintf(want, sizeof(want), "- targets: [\"%s:%d\"]\n        %s", mt_services[i],
		    port, label);
		cr_assert_not_null(
		    strstr(compose, want), "%s does not scrape %s", MT_COMPOSE, want);
	}
	cr_assert_not_null(strstr(local, "honor_labels: true"));
	cr_assert_not_null(strstr(compose, "honor_labels: true"));
	free(local);
	free(compose);

	/* the dashboard: Prometheus queries only, through its data source variable */
	d = mt_dashboard();
	cr_assert_str_eq(json_string_value(json_object_get(d, "uid")), "warble");
	mt_panel_exprs(&x, json_object_get(d, "panels"));
	cr_assert_geq(x.n, 20, "the dashboard has only %d queries", x.n);
	{
		size_t  i;
		json_t *p;
		json_array_foreach(json_object_get(d, "panels"), i, p)
		{
			const char *type = json_string_value(json_object_get(p, "type"));
			const char *title = json_string_value(json_object_get(p, "title"));
			json_t     *ds = json_object_get(p, "datasource");
			if (type != NULL && strcmp(type, "row") == 0) {
				continue;
			}
			panels++;
			cr_assert_not_null(title, "a panel without a title");
			cr_assert_str_eq(json_string_value(json_object_get(ds, "type")),
			    "prometheus", "panel %s", title);
			cr_assert_str_eq(json_string_value(json_object_get(ds, "uid")),
			    "${datasource}", "panel %s", title);
			cr_assert_gt(json_array_size(json_object_get(p, "targets")), 0,
			    "panel %s queries nothing", title);
		}
	}
	cr_assert_geq(panels, 10);
	mt_exprs_free(&x);
	json_decref(d);
}

Test(monitoring, promtool_metrics, .fini = wbt_cleanup, .timeout = 300)
{
	wbt_cluster five, one;
	int         ports[5], one_ports[5];
	char       *m, name[64];

	mt_init();
	mt_traffic(&five, WBT_FIVE, "");
	mt_traffic(&one, WBT_ONE, "one");
	mt_admin(&five, ports);
	mt_admin(&one, one_ports);

	/* five daemons: each its own figures, its process's among them */
	for (int i = 0; i < 5; i++) {
		for (int k = 0; k < i; k++) {
			cr_assert_neq(ports[k], ports[i], "%s and %s share an admin port",
			    mt_services[k], mt_services[i]);
		}
		m = mt_metrics(ports[i], "/metrics");
		mt_has_cpu(m, mt_services[i], mt_services[i]);
		snprintf(name, sizeof(name), "metrics-%s.txt", mt_services[i]);
		mt_promtool(name, m);
		free(m);
	}
	m = mt_metrics(ports[4], "/metrics");
	cr_assert_not_null(strstr(m, "\nwarble_http_responses_total{service=\"gateway_http\","
	                             "shard=\"0\",code=\"404\"}"));
	cr_assert_null(strstr(m, "service=\"inbox\""), "the gateway writes the inbox's figures");
	free(m);
	m = mt_metrics(ports[3], "/metrics");
	cr_assert_not_null(
	    strstr(m, "\nwarble_inbox_last_fanout_seconds{service=\"inbox\",shard=\"0\"} "));
	free(m);
	/* the gateway's view of the whole cluster */
	m = mt_metrics(ports[4], "/metrics/cluster");
	cr_assert_not_null(
	    strstr(m, "\nwarble_request_duration_seconds_bucket{service=\"content\""));
	cr_assert_not_null(strstr(m, "\nwarble_up{service=\"content\",shard=\"0\"} 1\n"));
	for (int i = 0; i < 5; i++) {
		mt_has_cpu(m, mt_services[i], "/metrics/cluster");
	}
	mt_promtool("metrics-cluster.txt", m);
	free(m);

	/* one warble process: one port, every service's series on it */
	for (int i = 1; i < 5; i++) {
		cr_assert_eq(one_ports[i], one_ports[0], "warble: two admin ports");
	}
	m = mt_metrics(one_ports[0], "/metrics");
	for (int i = 0; i < 5; i++) {
		mt_has_cpu(m, mt_services[i], "warble");
	}
	cr_assert_not_null(strstr(m, "\nwarble_requests_total{service=\"gateway_http\",shard=\"0\","
	                             "op=\"register\"} 2\n"),
	    "%s", m);
	mt_promtool("metrics-warble.txt", m);
	free(m);
	cr_assert_eq(wbt_cluster_stop(&one, wbt_ms(15000)), 0);
	cr_assert_eq(wbt_cluster_stop(&five, wbt_ms(15000)), 0);
}

/* --- every name a rule or a panel uses exists ------------------------------- */

typedef struct mt_names {
	char *name[MT_MAX_NAMES];
	int   n;
} mt_names;

static void
mt_names_add(mt_names *s, const char *name, size_t len)
{
	for (int i = 0; i < s->n; i++) {
		if (strlen(s->name[i]) == len && strncmp(s->name[i], name, len) == 0) {
			return;
		}
	}
	cr_assert_lt(s->n, MT_MAX_NAMES);
	s->name[s->n++] = strndup(name, len);
}

static bool
mt_names_has(const mt_names *s, const char *name)
{
	for (int i = 0; i < s->n; i++) {
		if (strcmp(s->name[i], name) == 0) {
			return true;
		}
	}
	return false;
}

/* mt_names_of collects every family (# TYPE) and sample name of a /metrics body. */
static void
mt_names_of(mt_names *s, const char *text)
{
	for (const char *l = text; l != NULL && *l != '\0';
	     l = strchr(l, '\n'), l = l ? l + 1 : l) {
		if (strncmp(l, "# TYPE ", 7) == 0) {
			const char *name = l + 7;
			mt_names_add(s, name, strcspn(name, " \n"));
		} else if (*l != '#' && *l != '\n') {
			mt_names_add(s, l, strcspn(l, "{ \n"));
		}
	}
}

typedef struct mt_check {
	const mt_names *live;
	const char     *from;
	int             missing;
} mt_check;

static void
mt_check_name(const char *name, void *arg)
{
	mt_check *c = arg;

	if (strcmp(name, "up") != 0 && !mt_names_has(c->live, name)) {
		fprintf(stderr, "monitoring: %s names %s, which /metrics does not have\n", c->from,
		    name);
		c->missing++;
	}
}

Test(monitoring, names_exist, .fini = wbt_cleanup, .timeout = 300)
{
	wbt_cluster cl;
	mt_names    live = { 0 };
	mt_exprs    x = { 0 };
	mt_check    c = { &live, NULL, 0 };
	int         ports[5], named = 0, rules = 0;

	mt_init();
	mt_traffic(&cl, WBT_FIVE, "");
	mt_admin(&cl, ports);
	/* what Prometheus scrapes: every process's own /metrics */
	for (int i = 0; i < 5; i++) {
		char *m = mt_metrics(ports[i], "/metrics");
		mt_names_of(&live, m);
		free(m);
	}
	cr_assert(mt_names_has(&live, "process_cpu_seconds_total"));
	cr_assert(mt_names_has(&live, "warble_inbox_events_behind"));
	mt_all_exprs(&x);
	for (int i = 0; i < x.n; i++) {
		int k;
		c.from = x.from[i];
		k = mt_metric_names(x.e[i], mt_check_name, &c);
		cr_assert_gt(k, 0, "%s names no metric: %s", x.from[i], x.e[i]);
		named += k;
		rules += strncmp(x.from[i], "rule ", 5) == 0;
	}
	cr_assert_eq(c.missing, 0, "%d metric names are not in /metrics (above)", c.missing);
	cr_assert_geq(rules, 10, "found only %d rules in %s", rules, MT_RULES);
	cr_assert_geq(named, 40);
	mt_exprs_free(&x);
	for (int i = 0; i < live.n; i++) {
		free(live.name[i]);
	}
	cr_assert_eq(wbt_cluster_stop(&cl, wbt_ms(15000)), 0);
}

/* --- a real Prometheus -------------------------------------------------------- */

/* mt_replace replaces the one occurrence of from in *text by to (failing if it is not exactly once). */
static void
mt_replace(char **text, const char *from, const char *to)
{
	char  *at = strstr(*text, from), *out;
	size_t n;

	cr_assert_not_null(at, "no '%s' in %s", from, MT_LOCAL);
	cr_assert_null(strstr(at + 1, from), "'%s' twice in %s", from, MT_LOCAL);
	n = strlen(*text) - strlen(from) + strlen(to) + 1;
	out = malloc(n);
	cr_assert_not_null(out);
	snprintf(out, n, "%.*s%s%s", (int)(at - *text), *text, to, at + strlen(from));
	free(*text);
	*text = out;
}

/*
 * mt_get sends GET path to Prometheus (HTTP/1.0: a body to EOF, never
 * chunked); the body of a 200 (or of any reply if any), else NULL.
 */
static char *
mt_get(int port, const char *path, bool any)
{
	char   req[4096];
	ht_res r;
	char  *body = NULL;
	int    n =
	    snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: 127.0.0.1:%d\r\n\r\n", path, port);

	cr_assert(n > 0 && (size_t)n < sizeof(req));
	if (ht_raw(port, req, (size_t)n, &r, 10000) == 0 &&
	    (r.status == 200 || (any && r.status > 0))) {
		body = r.body;
		r.body = NULL;
	}
	ht_res_free(&r);
	return body;
}

/* mt_query runs an instant query and returns its JSON reply, or NULL if Prometheus did not answer. */
static json_t *
mt_query(int port, const char *expr)
{
	char    path[3072];
	size_t  k = (size_t)snprintf(path, sizeof(path), "/api/v1/query?query=");
	char   *body;
	json_t *j;

	for (const unsigned char *p = (const unsigned char *)expr; *p != '\0'; p++) {
		cr_assert_lt(k + 4, sizeof(path));
		if (isalnum(*p) || strchr("-_.~", *p) != NULL) {
			path[k++] = (char)*p;
		} else {
			k += (size_t)snprintf(path + k, 4, "%%%02X", *p);
		}
	}
	path[k] = '\0';
	if ((body = mt_get(port, path, true)) == NULL) {
		return NULL;
	}
	j = json_loads(body, 0, NULL);
	free(body);
	return j;
}

/* mt_query_value returns the value of the first series an instant query returns, or -1. */
static double
mt_query_value(int port, const char *expr)
{
	json_t *j = mt_query(port, expr), *v;
	double  d = -1;

	v = json_array_get(json_object_get(json_object_get(j, "data"), "result"), 0);
	v = json_array_get(json_object_get(v, "value"), 1);
	if (json_is_string(v)) {
		d = strtod(json_string_value(v), NULL);
	}
	json_decref(j);
	return d;
}

/* mt_alert_state returns the state ("pending", "firing") of alert name with label service=svc (NULL: any), or NULL. */
static char *
mt_alert_state(int port, const char *name, const char *svc)
{
	char   *body = mt_get(port, "/api/v1/alerts", false), *state = NULL;
	json_t *j = body != NULL ? json_loads(body, 0, NULL) : NULL, *a;
	size_t  i;

	json_array_foreach(json_object_get(json_object_get(j, "data"), "alerts"), i, a)
	{
		json_t     *labels = json_object_get(a, "labels");
		const char *n = json_string_value(json_object_get(labels, "alertname"));
		const char *s = json_string_value(json_object_get(labels, "service"));
		if (n != NULL && strcmp(n, name) == 0 && (svc == NULL || (s && !strcmp(s, svc)))) {
			state = strdup(json_string_value(json_object_get(a, "state")));
			break;
		}
	}
	json_decref(j);
	free(body);
	return state;
}

/* mt_rules_ok tells whether every rule loaded from the file has been evaluated without error; *n counts them. */
static bool
mt_rules_ok(int port, int *n, char *why, size_t wn)
{
	char   *body = mt_get(port, "/api/v1/rules", false);
	json_t *j = body != NULL ? json_loads(body, 0, NULL) : NULL, *g, *r;
	size_t  i, k;
	bool    ok = j != NULL;

	*n = 0;
	snprintf(why, wn, "%s", ok ? "no rules" : "no answer from /api/v1/rules");
	json_array_foreach(json_object_get(json_object_get(j, "data"), "groups"), i, g)
	{
		json_array_foreach(json_object_get(g, "rules"), k, r)
		{
			const char *name = json_string_value(json_object_get(r, "name"));
			const char *health = json_string_value(json_object_get(r, "health"));
			const char *last = json_string_value(json_object_get(r, "lastEvaluation"));
			const char *err = json_string_value(json_object_get(r, "lastError"));
			(*n)++;
			if (health == NULL || strcmp(health, "ok") != 0 || last == NULL ||
			    strncmp(last, "0001-", 5) == 0) {
				snprintf(why, wn, "rule %s: health %s, last evaluated %s%s%s",
				    name ? name : "?", health ? health : "?", last ? last : "never",
				    err && *err ? ": " : "", err && *err ? err : "");
				ok = false;
			}
		}
	}
	json_decref(j);
	free(body);
	return ok && *n > 0;
}

/*
 * mt_series_of tells whether an instant query returns a series with label
 * service=svc (and shard 0).
 */
static bool
mt_series_of(int port, const char *expr, const char *svc)
{
	json_t *j = mt_query(port, expr), *r;
	size_t  i;
	bool    found = false;

	json_array_foreach(json_object_get(json_object_get(j, "data"), "result"), i, r)
	{
		json_t     *labels = json_object_get(r, "metric");
		const char *s = json_string_value(json_object_get(labels, "service"));
		const char *sh = json_string_value(json_object_get(labels, "shard"));
		found |= s != NULL && sh != NULL && strcmp(s, svc) == 0 && strcmp(sh, "0") == 0;
	}
	json_decref(j);
	return found;
}

Test(monitoring, prometheus_scrapes, .fini = wbt_cleanup, .timeout = 600)
{
	wbt_cluster cl, one;
	wbt_daemon *prom;
	mt_exprs    x = { 0 };
	char        cfg[256], rules[256], data[256], listen[64], target[64], from[64], every[48];
	char flag_cfg[300], flag_data[300], why[512], job[400], expr[160], *conf, *state = NULL;
	int  ports[5], one_ports[5], pport, nrules = 0, sec = wbt_ms(2000) / 1000;
	long long end;

	mt_init();
	mt_traffic(&cl, WBT_FIVE, "");
	mt_traffic(&one, WBT_ONE, "one");
	mt_admin(&cl, ports);
	mt_admin(&one, one_ports);

	/* prometheus-local.yml itself, each target pointed at this cluster's
	 * daemon, scraping and evaluating every `sec` seconds, beside a copy of
	 * the rules; and a job for the warble process, as the file says for
	 * `make run-one` */
	conf = mt_read(MT_LOCAL);
	for (int i = 0; i < 5; i++) {
		snprintf(from, sizeof(from), "\"127.0.0.1:%d\"", mt_default_port(mt_services[i]));
		snprintf(target, sizeof(target), "\"127.0.0.1:%d\"", ports[i]);
		mt_replace(&conf, from, target);
	}
	snprintf(every, sizeof(every), "scrape_interval: %ds", sec);
	mt_replace(&conf, "scrape_interval: 15s", every);
	snprintf(every, sizeof(every), "evaluation_interval: %ds", sec);
	mt_replace(&conf, "evaluation_interval: 15s", every);
	snprintf(every, sizeof(every), "scrape_timeout: %ds", sec);
	mt_replace(&conf, "scrape_timeout: 10s", every);
	snprintf(job, sizeof(job),
	    "  - job_name: warble-one\n    honor_labels: true\n    scrape_timeout: %ds\n"
	    "    static_configs:\n      - targets: [\"127.0.0.1:%d\"]\n",
	    sec, one_ports[0]);
	conf = realloc(conf, strlen(conf) + strlen(job) + 1);
	cr_assert_not_null(conf);
	strcat(conf, job);
	mt_write(cfg, sizeof(cfg), "prometheus.yml", conf);
	free(conf);
	conf = mt_read(MT_RULES);
	mt_write(rules, sizeof(rules), "warble-alerts.yml", conf);
	free(conf);
	cr_assert_eq(wbt_path(data, sizeof(data), "prometheus-data"), 0);

	pport = wbt_free_port();
	cr_assert_gt(pport, 0);
	snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%d", pport);
	snprintf(flag_cfg, sizeof(flag_cfg), "--config.file=%s", cfg);
	snprintf(flag_data, sizeof(flag_data), "--storage.tsdb.path=%s", data);
	const char *args[] = { flag_cfg, flag_data, listen, NULL };
	prom = wbt_spawn(MT_PROM, args, NULL);
	cr_assert_not_null(prom, "cannot start " MT_PROM);

	/* ready, then every process scraped: process_cpu_seconds_total for each
	 * {service, shard} of the five daemons and of the warble process */
	for (end = wbt_now_ms() + wbt_ms(60000);; wbt_sleep_ms(200)) {
		char *ready = mt_get(pport, "/-/ready", false);
		bool  up = ready != NULL;
		free(ready);
		if (up) {
			break;
		}
		if (!wbt_alive(prom) || wbt_now_ms() > end) {
			wbt_log_tail(prom, 30);
			cr_assert_fail("Prometheus did not get ready on port %d", pport);
		}
	}
	for (int k = 0; k < 2; k++) {
		const char *jobname = k == 0 ? "warble" : "warble-one";
		for (int i = 0; i < 5; i++) {
			snprintf(
			    expr, sizeof(expr), "process_cpu_seconds_total{job=\"%s\"}", jobname);
			for (end = wbt_now_ms() + wbt_ms(60000);
			     !mt_series_of(pport, expr, mt_services[i]); wbt_sleep_ms(250)) {
				if (wbt_now_ms() > end) {
					wbt_log_tail(prom, 30);
					cr_assert_fail(
					    "Prometheus has no process_cpu_seconds_total"
					    "{job=\"%s\",service=\"%s\",shard=\"0\"} after 60 s",
					    jobname, mt_services[i]);
				}
			}
		}
	}
	/* each target up, under the service and shard it is */
	cr_assert_eq(mt_query_value(pport, "count(up{job=\"warble\"} == 1)"), 5);
	for (int i = 0; i < 5; i++) {
		cr_assert(mt_series_of(pport, "up{job=\"warble\"} == 1", mt_services[i]), "%s",
		    mt_services[i]);
	}
	for (end = wbt_now_ms() + wbt_ms(30000);
	     mt_query_value(pport, "warble_inbox_cells_written{job=\"warble\",service=\"inbox\","
	                           "shard=\"0\"}") < 1;
	     wbt_sleep_ms(250)) {
		cr_assert_lt(wbt_now_ms(), end, "no warble_inbox_cells_written in Prometheus");
	}
	cr_assert_geq(mt_query_value(pport, "warble_http_responses_total{job=\"warble\","
	                                    "service=\"gateway_http\",shard=\"0\",code=\"201\"}"),
	    5);

	/* every rule of the file loaded and evaluated without error */
	for (end = wbt_now_ms() + wbt_ms(60000); !mt_rules_ok(pport, &nrules, why, sizeof(why));
	     wbt_sleep_ms(250)) {
		cr_assert_lt(wbt_now_ms(), end, "%s", why);
	}
	cr_assert_geq(nrules, 10);

	/* every panel's query runs (Grafana's $__rate_interval as 1m) */
	mt_all_exprs(&x);
	for (int i = 0; i < x.n; i++) {
		char   *e = x.e[i], *at;
		json_t *j;
		while ((at = strstr(e, "$__rate_interval")) != NULL) {
			memcpy(at, "1m", 2);
			memmove(at + 2, at + 16, strlen(at + 16) + 1);
		}
		j = mt_query(pport, e);
		cr_assert_not_null(j, "%s: no answer to %s", x.from[i], e);
		cr_assert_str_eq(json_string_value(json_object_get(j, "status")), "success",
		    "%s: %s: %s", x.from[i], e, json_string_value(json_object_get(j, "error")));
		json_decref(j);
	}
	mt_exprs_free(&x);

	/* content stops: its target goes down and WarbleServiceDown goes off for
	 * it (pending: it fires after its `for`) */
	cr_assert_eq(wbt_stop(cl.content, SIGTERM, wbt_ms(15000)), 0);
	cl.content = NULL;
	for (end = wbt_now_ms() + wbt_ms(60000);
	     (state = mt_alert_state(pport, "WarbleServiceDown", "content")) == NULL;
	     wbt_sleep_ms(250)) {
		cr_assert_lt(
		    wbt_now_ms(), end, "WarbleServiceDown{service=\"content\"} never went off");
	}
	cr_assert(strcmp(state, "pending") == 0 || strcmp(state, "firing") == 0, "%s", state);
	free(state);
	cr_assert_null(mt_alert_state(pport, "WarbleServiceDown", "inbox"), "the inbox runs");

	/* the gateway stops: the scrape fails and WarbleGatewayDown goes off */
	cr_assert_eq(wbt_stop(cl.gateway, SIGTERM, wbt_ms(15000)), 0);
	cl.gateway = NULL;
	for (end = wbt_now_ms() + wbt_ms(60000);
	     (state = mt_alert_state(pport, "WarbleGatewayDown", "gateway")) == NULL;
	     wbt_sleep_ms(250)) {
		cr_assert_lt(wbt_now_ms(), end, "WarbleGatewayDown never went off");
	}
	free(state);

	cr_assert_eq(wbt_stop(prom, SIGTERM, wbt_ms(30000)), 0);
	cr_assert_eq(wbt_cluster_stop(&one, wbt_ms(15000)), 0);
	cr_assert_eq(wbt_cluster_stop(&cl, wbt_ms(15000)), 0);
}
