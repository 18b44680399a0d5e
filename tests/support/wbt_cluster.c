/* wbt_cluster.c - the five Warble daemons for a test (see wbt_cluster.h). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wbt_cluster.h"
#include "wbt_tls.h"

#define WBT_CLUSTER_READY_MS 20000
#define WBT_CLUSTER_ENV_MAX  48

/* wbt_cluster_urls names every endpoint after a prefix unique in this process. */
static int
wbt_cluster_urls(wbt_cluster *c)
{
	static int n;
	char       p[32], name[64];
	int        rc = 0;

	snprintf(p, sizeof(p), "c%d", n++);
#define WBT_URL(field, what)                           \
	snprintf(name, sizeof(name), "%s%s", p, what); \
	rc |= wbt_ipc_url(c->field, sizeof(c->field), name)
	WBT_URL(user_url, "u");
	WBT_URL(relation_url, "r");
	WBT_URL(content_url, "c");
	WBT_URL(inbox_url, "i");
	WBT_URL(gateway_url, "g");
	WBT_URL(relation_pub_url, "rp");
	WBT_URL(content_pub_url, "cp");
	WBT_URL(user_pub_url, "up");
#undef WBT_URL
	snprintf(name, sizeof(name), "%sdata", p);
	rc |= wbt_path(c->data, sizeof(c->data), name);
	return rc == 0 ? 0 : -1;
}

int
wbt_cluster_env(const wbt_cluster *c, char bufs[][WBT_URL_MAX + 32], const char **env, int n)
{
	const struct {
		const char *key, *val;
	} vars[] = {
		{ "WARBLE_USER_URL", c->user_url },
		{ "WARBLE_RELATION_URL", c->relation_url },
		{ "WARBLE_CONTENT_URL", c->content_url },
		{ "WARBLE_INBOX_URL", c->inbox_url },
		{ "WARBLE_GATEWAY_URL", c->gateway_url },
		{ "WARBLE_RELATION_PUB_URL", c->relation_pub_url },
		{ "WARBLE_CONTENT_PUB_URL", c->content_pub_url },
		{ "WARBLE_USER_PUB_URL", c->user_pub_url },
		{ "WARBLE_DATA", c->data },
	};
	int k = 0;

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]) && k + 1 < n; i++) {
		snprintf(bufs[k], WBT_URL_MAX + 32, "%s=%s", vars[i].key, vars[i].val);
		env[k] = bufs[k];
		k++;
	}
	env[k] = NULL;
	return k;
}

/* wbt_cluster_one spawns one daemon and waits until url answers. */
static wbt_daemon *
wbt_cluster_one(const char *name, const char *url, const char *const *env)
{
	wbt_daemon *d = wbt_spawn(name, NULL, env);

	if (d == NULL) {
		return NULL;
	}
	if (wbt_wait_ready(d, url, wbt_ms(WBT_CLUSTER_READY_MS)) != 0) {
		fprintf(stderr, "wbt_cluster: %s did not answer on %s\n", name, url);
		return NULL;
	}
	return d;
}

/* wbt_cluster_env_all writes every daemon's environment: the URLs, the test defaults, then c->extra_env. */
static void
wbt_cluster_env_all(const wbt_cluster *c, char bufs[][WBT_URL_MAX + 32], const char **env)
{
	const char *const *extra_env = c->extra_env;
	int                k = wbt_cluster_env(c, bufs, env, 16);

	/* the test defaults; extra_env, after them, overrides any (wbt_spawn: the last wins) */
	env[k++] = "WARBLE_PWHASH_OPS=1";
	env[k++] = "WARBLE_PWHASH_MEM=8192";
	env[k++] = "WARBLE_LOG_LEVEL=warn";
	env[k++] =
	    "WARBLE_HTTP_URL=http://127.0.0.1:0";     /* any free port: clusters run side by side */
	env[k++] = "WARBLE_GATEWAY_TIMEOUT_MS=15000"; /* loaded CI machines */
	env[k++] = "WARBLE_REGISTER_RATE=0";          /* every test registers from 127.0.0.1 */
	if (wbt_tls_env() != NULL) {
		env[k++] = wbt_tls_env(); /* WBT_TLS=1: the suite with TLS on every internal port */
	}
	for (int i = 0; extra_env != NULL && extra_env[i] != NULL && k + 1 < WBT_CLUSTER_ENV_MAX;
	     i++) {
		env[k++] = extra_env[i];
	}
	env[k] = NULL;
}

/* wbt_cluster_slot returns the i-th of c's five slots (in the order they start), with its URL and program. */
static wbt_daemon **
wbt_cluster_slot(wbt_cluster *c, int i, const char **url, const char **name)
{
	struct {
		wbt_daemon **slot;
		const char  *url, *name;
	} s[] = {
		{ &c->user, c->user_url, "warble-user" },
		{ &c->relation, c->relation_url, "warble-relation" },
		{ &c->content, c->content_url, "warble-content" },
		{ &c->inbox, c->inbox_url, "warble-inbox" },
		{ &c->gateway, c->gateway_url, "warble-gateway" },
	};

	*url = s[i].url;
	*name = s[i].name;
	return s[i].slot;
}

/* wbt_cluster_up starts the daemons in the given shape (the warble process: every slot) and waits for each service. */
static int
wbt_cluster_up(wbt_cluster *c, bool one)
{
	char        bufs[16][WBT_URL_MAX + 32];
	const char *env[WBT_CLUSTER_ENV_MAX];
	const char *url, *name;
	wbt_daemon *d = NULL;

	wbt_cluster_env_all(c, bufs, env);
	if (one && (d = wbt_spawn("warble", NULL, env)) == NULL) {
		return -1;
	}
	for (int i = 0; i < 5; i++) {
		wbt_daemon **slot = wbt_cluster_slot(c, i, &url, &name);

		if (one && wbt_wait_ready(d, url, wbt_ms(WBT_CLUSTER_READY_MS)) != 0) {
			fprintf(stderr, "wbt_cluster: warble did not answer on %s\n", url);
			return -1;
		}
		if ((*slot = one ? d : wbt_cluster_one(name, url, env)) == NULL) {
			return -1;
		}
	}
	return 0;
}

bool
wbt_cluster_is_one(const wbt_cluster *c)
{
	return c->gateway != NULL && c->gateway == c->user;
}

int
wbt_cluster_start_as(wbt_cluster *c, const char *const *extra_env, wbt_shape shape)
{
	const char *mode = getenv("WARBLE_TEST_MODE");

	memset(c, 0, sizeof(*c));
	if (wbt_cluster_urls(c) != 0) {
		fprintf(stderr, "wbt_cluster: temp dir path too long for ipc:// URLs\n");
		return -1;
	}
	c->extra_env = extra_env;
	for (int i = 0; extra_env != NULL && extra_env[i] != NULL; i++) {
		if (strncmp(extra_env[i], "WARBLE_DATA=", 12) == 0) { /* a restored data folder */
			snprintf(c->data, sizeof(c->data), "%s", extra_env[i] + 12);
		}
	}
	if (shape == WBT_ANY) {
		shape = mode != NULL && strcmp(mode, "one") == 0 ? WBT_ONE : WBT_FIVE;
	}
	return wbt_cluster_up(c, shape == WBT_ONE);
}

int
wbt_cluster_start(wbt_cluster *c, const char *const *extra_env)
{
	return wbt_cluster_start_as(c, extra_env, WBT_ANY);
}

int
wbt_cluster_restart(wbt_cluster *c, wbt_daemon **slot, int sig)
{
	char        bufs[16][WBT_URL_MAX + 32];
	const char *env[WBT_CLUSTER_ENV_MAX];
	const char *url = NULL, *name;
	wbt_daemon *d = *slot;
	bool        one = wbt_cluster_is_one(c);
	char        prog[sizeof(d->name)];

	for (int i = 0; i < 5; i++) {
		if (wbt_cluster_slot(c, i, &url, &name) == slot) {
			break;
		}
		url = NULL;
	}
	if (url == NULL || d == NULL) {
		fprintf(stderr, "wbt_cluster: restart of a daemon that is not the cluster's\n");
		return -1;
	}
	snprintf(prog, sizeof(prog), "%s", d->name);
	d->stopping = true;
	if (sig != 0 && d->pid != 0) {
		kill(d->pid, sig);
	}
	if (wbt_wait_exit(d, 10000) < 0) {
		fprintf(stderr, "wbt_cluster: %s (pid %d) did not exit after signal %d\n", prog,
		    (int)d->pid, sig);
		return -1;
	}
	if (one) {
		return wbt_cluster_up(c, true);
	}
	wbt_cluster_env_all(c, bufs, env);
	if ((*slot = wbt_cluster_one(prog, url, env)) == NULL) {
		return -1;
	}
	return 0;
}

int
wbt_cluster_stop(wbt_cluster *c, int timeout_ms)
{
	wbt_daemon *order[] = { c->gateway, c->inbox, c->content, c->relation, c->user };
	int         rc = 0;

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		if (i > 0 && order[i] == order[0]) {
			break; /* one warble process: stopped already */
		}
		if (order[i] != NULL && wbt_stop(order[i], SIGTERM, timeout_ms) != 0) {
			rc = -1;
		}
	}
	return rc;
}
