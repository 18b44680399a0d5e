/* wbc_cluster.c - a Warble of sharded daemons, or of `warble --shard` processes, on wbc hosts
 * (see wbc_cluster.h). */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wbc_cluster.h"
#include "wbt_tls.h"

#define WBC_ENV_MAX  64
#define WBC_READY_MS 20000
#define WBC_LIST_MAX (WBC_SHARDS_MAX * WBC_URL_MAX)
#define WBC_ONE_PORT 7100 /* warble --shard: the gateway on 7100, the others from the table */

/* A daemon's environment being built: "KEY=VALUE" strings, the later of two for one key wins. */
typedef struct wbc_env {
	char *v[WBC_ENV_MAX + 1];
	int   n;
	bool  full;
} wbc_env;

/* wbc_env_add appends one "KEY=VALUE" made from fmt. */
static void __attribute__((format(printf, 2, 3))) wbc_env_add(wbc_env *e, const char *fmt, ...)
{
	va_list ap;
	char   *s = NULL;
	int     rv;

	va_start(ap, fmt);
	rv = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (rv < 0 || e->n == WBC_ENV_MAX) {
		free(rv < 0 ? NULL : s);
		e->full = true;
		return;
	}
	e->v[e->n++] = s;
	e->v[e->n] = NULL;
}

/* wbc_env_free frees what wbc_env_add made. */
static void
wbc_env_free(wbc_env *e)
{
	for (int i = 0; i < e->n; i++) {
		free(e->v[i]);
	}
	e->n = 0;
}

/* wbc_list joins n URLs with commas into out (WBC_LIST_MAX). */
static void
wbc_list(char *out, const char (*urls)[WBC_URL_MAX], unsigned n)
{
	size_t len = 0;

	out[0] = '\0';
	for (unsigned i = 0; i < n; i++) {
		len +=
		    (size_t)snprintf(out + len, WBC_LIST_MAX - len, "%s%s", i ? "," : "", urls[i]);
	}
}

/* wbc_cluster_lists adds the shards' lists and each service's singular address (its shard 0). */
static void
wbc_cluster_lists(const wbc_cluster *c, wbc_env *e)
{
	char list[WBC_LIST_MAX];

	wbc_env_add(e, "WARBLE_USER_URL=%s", c->user_url);
	wbc_env_add(e, "WARBLE_CONTENT_URL=%s", c->content_url[0]);
	wbc_env_add(e, "WARBLE_RELATION_URL=%s", c->relation_url[0]);
	wbc_env_add(e, "WARBLE_INBOX_URL=%s", c->inbox_url[0]);
	wbc_list(list, c->content_url, c->ncontent);
	wbc_env_add(e, "WARBLE_CONTENT_URLS=%s", list);
	wbc_list(list, c->relation_url, c->nrelation);
	wbc_env_add(e, "WARBLE_RELATION_URLS=%s", list);
	wbc_list(list, c->inbox_url, c->ninbox);
	wbc_env_add(e, "WARBLE_INBOX_URLS=%s", list);
}

/*
 * wbc_cluster_env writes the environment of the daemon on host (shard
 * index of count; count 0: not sharded): the common settings, every
 * address, then the host's own, which come later and win.
 */
static void
wbc_cluster_env(const wbc_cluster *c, wbc_env *e, const wbc_host *host, unsigned index,
    unsigned count, const char *const *extra_env)
{
	char list[WBC_LIST_MAX];

	wbc_env_add(e, "WARBLE_DATA=%s/%s", c->data, wbc_host_name(host));
	wbc_env_add(e, "WARBLE_PWHASH_OPS=1");
	wbc_env_add(e, "WARBLE_PWHASH_MEM=8192");
	wbc_env_add(e, "WARBLE_LOG_LEVEL=warn");
	wbc_env_add(e, "WARBLE_GATEWAY_TIMEOUT_MS=15000"); /* loaded CI machines */
	wbc_env_add(e, "WARBLE_REGISTER_RATE=0");          /* the test registers from one address */
	wbc_env_add(e, "WARBLE_GATEWAY_URL=%s", c->gateway_url[0]);
	wbc_env_add(e, "WARBLE_HTTP_URL=%s", c->http_url[0]);
	wbc_cluster_lists(c, e);
	wbc_env_add(e, "WARBLE_CONTENT_PUB_URL=%s", c->content_pub_url[0]);
	wbc_env_add(e, "WARBLE_RELATION_PUB_URL=%s", c->relation_pub_url[0]);
	wbc_env_add(e, "WARBLE_USER_PUB_URL=%s", c->user_pub_url);
	wbc_list(list, c->content_pub_url, c->ncontent);
	wbc_env_add(e, "WARBLE_CONTENT_PUB_URLS=%s", list);
	wbc_list(list, c->relation_pub_url, c->nrelation);
	wbc_env_add(e, "WARBLE_RELATION_PUB_URLS=%s", list);
	for (unsigned i = 0; i < c->ngateway; i++) {
		if (host == c->gateway[i]) {
			wbc_env_add(e, "WARBLE_GATEWAY_URL=%s", c->gateway_url[i]);
			wbc_env_add(e, "WARBLE_HTTP_URL=%s", c->http_url[i]);
		}
	}
	for (unsigned i = 0; i < c->ncontent; i++) {
		if (host == c->content[i]) {
			wbc_env_add(e, "WARBLE_CONTENT_URL=%s", c->content_url[i]);
			wbc_env_add(e, "WARBLE_CONTENT_PUB_URL=%s", c->content_pub_url[i]);
		}
	}
	for (unsigned i = 0; i < c->nrelation; i++) {
		if (host == c->relation[i]) {
			wbc_env_add(e, "WARBLE_RELATION_URL=%s", c->relation_url[i]);
			wbc_env_add(e, "WARBLE_RELATION_PUB_URL=%s", c->relation_pub_url[i]);
		}
	}
	for (unsigned i = 0; i < c->ninbox; i++) {
		if (host == c->inbox[i]) {
			wbc_env_add(e, "WARBLE_INBOX_URL=%s", c->inbox_url[i]);
		}
	}
	if (count > 0) {
		wbc_env_add(e, "WARBLE_SHARD=%u/%u", index, count);
	}
	if (wbc_url(list, sizeof(list), host, "http", WBC_ADMIN_PORT) == 0) {
		wbc_env_add(
		    e, "WARBLE_METRICS_URL=%s", list); /* its own host: reached by the test */
	}
	if (wbt_tls_env() != NULL) {
		wbc_env_add(e, "%s", wbt_tls_env()); /* WBT_TLS=1: TLS between the hosts */
	}
	for (int i = 0; extra_env != NULL && extra_env[i] != NULL; i++) {
		wbc_env_add(e, "%s", extra_env[i]);
	}
}

/* wbc_cluster_host adds host name<index> (no index if index < 0) and its REP and PUB URLs. */
static int
wbc_cluster_host(wbc_cluster *c, const char *name, int index, wbc_host **h, char *url, char *pub)
{
	char hn[24];

	snprintf(hn, sizeof(hn), index < 0 ? "%s" : "%s%d", name, index);
	if (wbc_host_add(c->net, hn, h) != 0 ||
	    wbc_url(url, WBC_URL_MAX, *h, "tcp", WBC_REP_PORT)) {
		return -1;
	}
	return pub == NULL ? 0 : wbc_url(pub, WBC_URL_MAX, *h, "tcp", WBC_PUB_PORT);
}

/* wbc_cluster_launch starts prog on host as shard index of count (count 0: not sharded). */
static int
wbc_cluster_launch(wbc_cluster *c, wbc_host *host, const char *prog, const char *const *args,
    const char *url, unsigned index, unsigned count, const char *const *extra_env)
{
	wbc_env e = { .n = 0 };
	int     rc;

	wbc_cluster_env(c, &e, host, index, count, extra_env);
	if (e.full) {
		fprintf(stderr, "wbc_cluster: %s's environment is too large\n", prog);
		wbc_env_free(&e);
		return -1;
	}
	rc = wbc_start(host, prog, args, (const char *const *)e.v, url, wbt_ms(WBC_READY_MS));
	wbc_env_free(&e);
	return rc;
}

/* wbc_cluster_port writes scheme://<h's address>:<endpoint's default port> into buf. */
static int
wbc_cluster_port(char *buf, const wbc_host *h, const char *scheme, const char *deflt)
{
	const char *colon = strrchr(deflt, ':');

	return colon == NULL ? -1 : wbc_url(buf, WBC_URL_MAX, h, scheme, atoi(colon + 1));
}

/* wbc_cluster_hosts_one makes the hosts and addresses of .one: warble0..N-1, all services each. */
static int
wbc_cluster_hosts_one(wbc_cluster *c)
{
	int rc = 0;

	for (unsigned i = 0; rc == 0 && i < c->one; i++) {
		wbc_host *h;
		char      hn[24];

		snprintf(hn, sizeof(hn), "warble%u", i);
		if (wbc_host_add(c->net, hn, &h) != 0) {
			return -1;
		}
		c->gateway[i] = c->content[i] = c->relation[i] = c->inbox[i] = h;
		rc |= wbc_url(c->gateway_url[i], WBC_URL_MAX, h, "tcp", WBC_ONE_PORT);
		rc |= wbc_cluster_port(c->http_url[i], h, "http", "http://x:8080");
		rc |= wbc_cluster_port(c->relation_url[i], h, "tcp", "tcp://x:7102");
		rc |= wbc_cluster_port(c->content_url[i], h, "tcp", "tcp://x:7103");
		rc |= wbc_cluster_port(c->inbox_url[i], h, "tcp", "tcp://x:7104");
		rc |= wbc_cluster_port(c->relation_pub_url[i], h, "tcp", "tcp://x:7112");
		rc |= wbc_cluster_port(c->content_pub_url[i], h, "tcp", "tcp://x:7113");
	}
	c->user = c->gateway[0];
	rc |= rc == 0 ? wbc_cluster_port(c->user_pub_url, c->user, "tcp", "tcp://x:7111") : 0;
	return rc == 0 ? wbc_cluster_port(c->user_url, c->user, "tcp", "tcp://x:7101") : -1;
}

/* wbc_cluster_hosts makes every host and address of the daemons' shape. */
static int
wbc_cluster_hosts(wbc_cluster *c)
{
	int rc = 0;

	rc |= wbc_cluster_host(c, "user", -1, &c->user, c->user_url, c->user_pub_url);
	for (unsigned i = 0; i < c->nrelation; i++) {
		rc |= wbc_cluster_host(c, "relation", (int)i, &c->relation[i], c->relation_url[i],
		    c->relation_pub_url[i]);
	}
	for (unsigned i = 0; i < c->ncontent; i++) {
		rc |= wbc_cluster_host(
		    c, "content", (int)i, &c->content[i], c->content_url[i], c->content_pub_url[i]);
	}
	for (unsigned i = 0; i < c->ninbox; i++) {
		rc |= wbc_cluster_host(c, "inbox", (int)i, &c->inbox[i], c->inbox_url[i], NULL);
	}
	for (unsigned i = 0; i < c->ngateway; i++) {
		rc |=
		    wbc_cluster_host(c, "gateway", (int)i, &c->gateway[i], c->gateway_url[i], NULL);
		rc |= rc == 0 ? wbc_url(c->http_url[i], WBC_URL_MAX, c->gateway[i], "http",
		                    WBC_HTTP_PORT)
		              : 0;
	}
	return rc;
}

int
wbc_cluster_start(wbc_cluster *c, wbc_net *n, const wbc_shape *shape, const char *const *extra_env)
{
	memset(c, 0, sizeof(*c));
	c->net = n;
	c->one = shape->one;
	c->ncontent = c->one ? c->one : shape->content > 0 ? shape->content : 1;
	c->nrelation = c->one ? c->one : shape->relation > 0 ? shape->relation : 1;
	c->ninbox = c->one ? c->one : shape->inbox > 0 ? shape->inbox : 1;
	c->ngateway = c->one ? c->one : shape->gateways > 0 ? shape->gateways : 1;
	if (c->ncontent > WBC_SHARDS_MAX || c->nrelation > WBC_SHARDS_MAX ||
	    c->ninbox > WBC_SHARDS_MAX || c->ngateway > WBC_SHARDS_MAX || wbt_dir() == NULL) {
		fprintf(stderr, "wbc_cluster: at most %d shards of a service or gateways\n",
		    WBC_SHARDS_MAX);
		return -1;
	}
	/* every host and address first: each daemon is told all of them */
	if ((c->one ? wbc_cluster_hosts_one(c) : wbc_cluster_hosts(c)) != 0) {
		return -1;
	}
	return wbc_cluster_run(c, wbt_dir(), extra_env);
}

int
wbc_cluster_run(wbc_cluster *c, const char *data, const char *const *extra_env)
{
	int rc = 0;

	if (snprintf(c->data, sizeof(c->data), "%s", data) >= (int)sizeof(c->data)) {
		fprintf(stderr, "wbc_cluster: data folder %s is too long\n", data);
		return -1;
	}
	if (c->one) { /* the user service's process first: the others call it */
		for (unsigned i = 0; rc == 0 && i < c->one; i++) {
			const char *const user[] = { "--user", NULL };
			rc = wbc_cluster_launch(c, c->gateway[i], "warble", i == 0 ? user : NULL,
			    c->gateway_url[i], i, c->one, extra_env);
		}
		return rc;
	}
	/* each daemon after those it calls */
	rc = wbc_cluster_launch(c, c->user, "warble-user", NULL, c->user_url, 0, 0, extra_env);
	for (unsigned i = 0; rc == 0 && i < c->nrelation; i++) {
		rc = wbc_cluster_launch(c, c->relation[i], "warble-relation", NULL,
		    c->relation_url[i], i, c->nrelation, extra_env);
	}
	for (unsigned i = 0; rc == 0 && i < c->ncontent; i++) {
		rc = wbc_cluster_launch(c, c->content[i], "warble-content", NULL, c->content_url[i],
		    i, c->ncontent, extra_env);
	}
	for (unsigned i = 0; rc == 0 && i < c->ninbox; i++) {
		rc = wbc_cluster_launch(
		    c, c->inbox[i], "warble-inbox", NULL, c->inbox_url[i], i, c->ninbox, extra_env);
	}
	for (unsigned i = 0; rc == 0 && i < c->ngateway; i++) {
		rc = wbc_cluster_launch(
		    c, c->gateway[i], "warble-gateway", NULL, c->gateway_url[i], 0, 0, extra_env);
	}
	return rc;
}

/* wbc_cluster_add_host adds h to order[*n] unless it is NULL or there already. */
static void
wbc_cluster_add_host(wbc_host **order, size_t *n, wbc_host *h)
{
	for (size_t i = 0; i < *n; i++) {
		if (order[i] == h) {
			return;
		}
	}
	if (h != NULL) {
		order[(*n)++] = h;
	}
}

int
wbc_cluster_stop(wbc_cluster *c, int timeout_ms)
{
	wbc_host *order[2 + 4 * WBC_SHARDS_MAX];
	size_t    n = 0;
	int       rc = 0;

	for (unsigned i = 0; i < c->ngateway; i++) {
		wbc_cluster_add_host(order, &n, c->gateway[i]);
	}
	for (unsigned i = 0; i < c->ninbox; i++) {
		wbc_cluster_add_host(order, &n, c->inbox[i]);
	}
	for (unsigned i = 0; i < c->ncontent; i++) {
		wbc_cluster_add_host(order, &n, c->content[i]);
	}
	for (unsigned i = 0; i < c->nrelation; i++) {
		wbc_cluster_add_host(order, &n, c->relation[i]);
	}
	wbc_cluster_add_host(order, &n, c->user);
	for (size_t i = 0; i < n; i++) {
		wbt_daemon *d = wbc_daemon(order[i]);

		if (d != NULL && d->pid != 0 && wbt_stop(d, SIGTERM, timeout_ms) != 0) {
			rc = -1;
		}
	}
	return rc;
}

int
wbc_cluster_store(const wbc_cluster *c, const wbc_host *h, const char *svc, char *buf, size_t n)
{
	int rv = snprintf(buf, n, "%s/%s/%s", c->data, wbc_host_name(h), svc);

	return rv < 0 || (size_t)rv >= n ? -1 : 0;
}

int
wbc_cluster_env_urls(const wbc_cluster *c, char **v, int max)
{
	wbc_env e = { .n = 0 };
	int     n;

	wbc_cluster_lists(c, &e);
	n = e.full || e.n > max - 1 ? -1 : e.n;
	for (int i = 0; i < e.n; i++) {
		if (n < 0) {
			free(e.v[i]);
		} else {
			v[i] = e.v[i];
		}
	}
	if (n >= 0) {
		v[n] = NULL;
	}
	return n;
}
