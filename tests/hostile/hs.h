/*
 * hs.h - helpers of the hostile-network and security tests (header-only,
 * like ht.h): a whole cluster on tcp://127.0.0.1 free ports (the ports an
 * attacker on the network would reach), SDK sessions, and raw sockets.
 *
 *   hs_cluster h;
 *   hs_start(&h, NULL);          five daemons, REP + PUB + HTTP on tcp, and
 *                                each daemon's admin port (HS_USER_ADMIN ...)
 *   h.port[HS_USER] ...          every listening port, by name
 *   hs_stop(&h)                  SIGTERM each, each must exit 0
 */
#ifndef HS_H
#define HS_H

#include <signal.h>
#include <sys/resource.h>

#include "../http/ht.h"
#include "warble.h"

enum {
	HS_USER,
	HS_RELATION,
	HS_CONTENT,
	HS_INBOX,
	HS_GATEWAY,
	HS_RELPUB,
	HS_CONTPUB,
	HS_USERPUB,
	HS_HTTP,
	HS_USER_ADMIN, /* the admin ports (/metrics), in the order of the REP ports */
	HS_RELATION_ADMIN,
	HS_CONTENT_ADMIN,
	HS_INBOX_ADMIN,
	HS_GATEWAY_ADMIN,
	HS_NPORTS
};

static const char *const hs_port_names[HS_NPORTS] = {
	"user",
	"relation",
	"content",
	"inbox",
	"gateway",
	"relation-pub",
	"content-pub",
	"user-pub",
	"http",
	"user-admin",
	"relation-admin",
	"content-admin",
	"inbox-admin",
	"gateway-admin",
};

typedef struct hs_cluster {
	wbt_cluster c;
	int         port[HS_NPORTS];
	char        env_buf[24][WBT_URL_MAX + 32];
	const char *env[40];
} hs_cluster;

/* hs_url_of returns the REP URL of a REP port (NULL for the others). */
HT_FN const char *
hs_url_of(hs_cluster *h, int i)
{
	switch (i) {
	case HS_USER:
		return h->c.user_url;
	case HS_RELATION:
		return h->c.relation_url;
	case HS_CONTENT:
		return h->c.content_url;
	case HS_INBOX:
		return h->c.inbox_url;
	case HS_GATEWAY:
		return h->c.gateway_url;
	default:
		return NULL;
	}
}

/* hs_start starts the five daemons on tcp://127.0.0.1 (extra: more "KEY=VALUE", NULL-terminated, may be NULL); 0 or -1. */
HT_FN int
hs_start(hs_cluster *h, const char *const *extra)
{
	memset(h, 0, sizeof(*h));
	char *urls[] = { h->c.user_url, h->c.relation_url, h->c.content_url, h->c.inbox_url,
		h->c.gateway_url, h->c.relation_pub_url, h->c.content_pub_url, h->c.user_pub_url };
	static const char *const names[] = { "warble-user", "warble-relation", "warble-content",
		"warble-inbox", "warble-gateway" };
	wbt_daemon             **slots[] = { &h->c.user, &h->c.relation, &h->c.content, &h->c.inbox,
		            &h->c.gateway };
	int                      k;

	for (int i = 0; i < HS_HTTP; i++) {
		if ((h->port[i] = wbt_tcp_url(urls[i], WBT_URL_MAX)) < 0) {
			return -1;
		}
	}
	if ((h->port[HS_HTTP] = wbt_free_port()) < 0 ||
	    wbt_path(h->c.data, WBT_URL_MAX, "hsdata") != 0) {
		return -1;
	}
	k = wbt_cluster_env(&h->c, h->env_buf, h->env, 12);
	snprintf(h->env_buf[k], sizeof(h->env_buf[k]), "WARBLE_HTTP_URL=http://127.0.0.1:%d",
	    h->port[HS_HTTP]);
	h->env[k] = h->env_buf[k];
	k++;
	static const char *const dflt[] = { "WARBLE_PWHASH_OPS=1", "WARBLE_PWHASH_MEM=8192",
		"WARBLE_LOG_LEVEL=warn", "WARBLE_GATEWAY_TIMEOUT_MS=15000",
		"WARBLE_REGISTER_RATE=0" };
	for (size_t d = 0; d < sizeof(dflt) / sizeof(dflt[0]); d++) {
		bool given = false; /* the first of two equal keys would win: extra overrides */
		for (int i = 0; extra != NULL && extra[i] != NULL; i++) {
			given |= strncmp(extra[i], dflt[d],
			             (size_t)(strchr(dflt[d], '=') - dflt[d] + 1)) == 0;
		}
		if (!given) {
			h->env[k++] = dflt[d];
		}
	}
	for (int i = 0; extra != NULL && extra[i] != NULL && k < 38; i++) {
		h->env[k++] = extra[i];
	}
	h->env[k] = NULL;
	h->c.extra_env = NULL;
	for (int i = 0; i < 5; i++) {
		wbt_daemon *d = wbt_spawn(names[i], NULL, h->env);
		if (d == NULL || wbt_wait_ready(d, urls[i], 20000) != 0) {
			return -1;
		}
		*slots[i] = d;
		if ((h->port[HS_USER_ADMIN + i] = wbt_metrics_port(urls[i])) < 0) {
			fprintf(stderr, "hs: %s has no admin port\n", names[i]);
			return -1;
		}
	}
	for (long long end = wbt_now_ms() + 20000; wbt_now_ms() < end; wbt_sleep_ms(50)) {
		ht_res r;
		if (ht_request(h->port[HS_HTTP], "GET", "/healthz", NULL, NULL, &r) == 0 &&
		    r.status == 200) {
			ht_res_free(&r);
			return 0;
		}
		ht_res_free(&r);
	}
	fprintf(stderr, "hs: no HTTP on port %d\n", h->port[HS_HTTP]);
	return -1;
}

/* hs_stop sends SIGTERM to every daemon (gateway first); 0 if each exited 0 within 15 s. */
HT_FN int
hs_stop(hs_cluster *h)
{
	return wbt_cluster_stop(&h->c, 15000);
}

/* hs_client opens an SDK client on the gateway; NULL on failure. */
HT_FN warble_client *
hs_client(hs_cluster *h)
{
	warble_client *wc = NULL;

	if (warble_open(&wc, h->c.gateway_url, 15000) != 0) {
		return NULL;
	}
	return wc;
}

/* hs_session registers name (password pw) and logs a new client in as it; NULL on failure. */
HT_FN warble_client *
hs_session(hs_cluster *h, const char *name, const char *pw)
{
	warble_client *wc = hs_client(h);
	int            rc;

	if (wc == NULL) {
		return NULL;
	}
	rc = warble_register(wc, name, pw, NULL);
	if ((rc != 0 && rc != WARBLE_EEXIST) || warble_login(wc, name, pw, NULL) != 0) {
		fprintf(stderr, "hs: cannot log in as %s: %s\n", name, warble_errmsg(wc));
		warble_close(wc);
		return NULL;
	}
	return wc;
}

/* hs_nofile sets this process's soft limit of open files (children inherit it); returns the old one. */
HT_FN rlim_t
hs_nofile(rlim_t soft)
{
	struct rlimit rl;
	rlim_t        old;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
		return 0;
	}
	old = rl.rlim_cur;
	rl.rlim_cur = soft > rl.rlim_max ? rl.rlim_max : soft;
	setrlimit(RLIMIT_NOFILE, &rl);
	return old;
}

#endif
