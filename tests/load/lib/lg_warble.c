/*
 * lg_warble.c - Warble under load: the cluster (started here, or a
 * running deployment), bulk setup, gauges over every shard, each server
 * process's CPU, and the SDK backend of the mixed workload.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lg_warble.h"
#include "rt_client.h"
#include "rt_shards.h"
#include "rt_tls.h"
#include "wb_services.h"
#include "warble.h"

#define LG_REG_PAGE    10000 /* accounts per user.register_many */
#define LG_FOLLOW_PAGE 10000 /* fans per rel.follow_many */

struct lg_conn {
	lg_warble     *w;
	warble_client *c;
};

/* lg_warble_http_parse reads "http://host:port" into w's http_host, http_port and http_url;
 * -1 if malformed. */
static int
lg_warble_http_parse(lg_warble *w, const char *url)
{
	const char *h = strncmp(url, "http://", 7) == 0 ? url + 7 : NULL;
	const char *colon = h != NULL ? strrchr(h, ':') : NULL;
	char       *end;
	long        port = colon != NULL ? strtol(colon + 1, &end, 10) : 0;

	if (h == NULL || colon == NULL || colon == h || port <= 0 || port > 65535 ||
	    (*end != '\0' && *end != '/') || (size_t)(colon - h) >= sizeof(w->http_host)) {
		fprintf(stderr, "warble-load: bad HTTP address %s (http://host:port)\n", url);
		return -1;
	}
	snprintf(w->http_host, sizeof(w->http_host), "%.*s", (int)(colon - h), h);
	w->http_port = (int)port;
	snprintf(w->http_url, sizeof(w->http_url), "http://%s:%d", w->http_host, w->http_port);
	return 0;
}

int
lg_warble_start(lg_warble *w, const char *const *extra_env, wbt_shape shape)
{
	rt_client_opts o = { .timeout_ms = 60000 };

	const char *env[16];
	char        http[64];
	int         n = 0;

	/* the gateway's HTTP listener on a free port, not the default 8080
	 * another cluster (or a local Warble) may hold */
	memset(w, 0, sizeof(*w));
	w->http_port = wbt_free_port();
	snprintf(http, sizeof(http), "WARBLE_HTTP_URL=http://127.0.0.1:%d", w->http_port);
	env[n++] = http;
	for (int i = 0; extra_env != NULL && extra_env[i] != NULL && n < 15; i++) {
		env[n++] = extra_env[i];
	}
	env[n] = NULL;
	if (wbt_cluster_start_as(&w->cl, env, shape) != 0 ||
	    lg_warble_http_parse(w, http + strlen("WARBLE_HTTP_URL=")) != 0) {
		return -1;
	}
	snprintf(w->gateway[0], sizeof(w->gateway[0]), "%s", w->cl.gateway_url);
	w->ngateways = 1;
	if (rt_client_open(&w->user, w->cl.user_url, &o) != 0 ||
	    rt_shards_open(&w->rel, NULL, w->cl.relation_url, &o) != 0 ||
	    rt_shards_open(&w->content, NULL, w->cl.content_url, &o) != 0 ||
	    rt_shards_open(&w->inbox, NULL, w->cl.inbox_url, &o) != 0) {
		fprintf(stderr, "warble-load: cannot dial the services\n");
		return -1;
	}
	return 0;
}

/* lg_warble_env reads an endpoint's variable, or its default when unset or empty. */
static const char *
lg_warble_env(wb_endpoint ep)
{
	const char *v = getenv(wb_endpoints[ep].env);

	return v != NULL && v[0] != '\0' ? v : wb_endpoints[ep].url;
}

/* lg_warble_host copies the host of a URL into buf ("tcp://h:p": h; ipc:// and inproc://:
 * empty, this machine). */
static void
lg_warble_host(const char *url, char *buf, size_t n)
{
	const char *h = strstr(url, "://"), *colon;

	buf[0] = '\0';
	if (h == NULL || strncmp(url, "tcp", 3) != 0) {
		return;
	}
	h += 3;
	colon = strrchr(h, ':');
	snprintf(buf, n, "%.*s", (int)(colon != NULL ? colon - h : (long)strlen(h)), h);
}

/* The processes found so far by lg_warble_procs: each one's host and start. */
typedef struct lg_seen {
	char     host[LG_MAX_PROCS][LG_URL_MAX];
	uint64_t start_ms[LG_MAX_PROCS];
} lg_seen;

/* lg_warble_proc_add records the process behind c (at url) under role unless an earlier
 * address reached it; -1 if it does not answer. */
static int
lg_warble_proc_add(lg_warble *w, lg_seen *seen, rt_client *c, const char *url, int role)
{
	uint64_t start = wbt_stat(c, "process_start_ms");
	char     host[LG_URL_MAX];

	if (start == UINT64_MAX) {
		fprintf(
		    stderr, "warble-load: %s does not answer stats with process_start_ms\n", url);
		return -1;
	}
	lg_warble_host(url, host, sizeof(host));
	for (int i = 0; i < w->nprocs; i++) {
		if (seen->start_ms[i] == start && strcmp(seen->host[i], host) == 0) {
			return 0; /* one process serving several services */
		}
	}
	if (w->nprocs == LG_MAX_PROCS) {
		return -1;
	}
	snprintf(seen->host[w->nprocs], LG_URL_MAX, "%s", host);
	seen->start_ms[w->nprocs] = start;
	w->procs[w->nprocs++] = (lg_proc) { c, role };
	return 0;
}

/* lg_warble_procs finds the deployment's processes through every address, in role order. */
static int
lg_warble_procs(lg_warble *w)
{
	lg_seen   *seen = calloc(1, sizeof(*seen));
	rt_shards *sh[3] = { w->rel, w->content, w->inbox };
	int        rc = seen != NULL ? 0 : -1;

	for (unsigned g = 0; rc == 0 && g < w->ngateways; g++) {
		rc = lg_warble_proc_add(w, seen, w->gw[g], w->gateway[g], LG_ROLE_GATEWAY);
	}
	if (rc == 0) {
		rc = lg_warble_proc_add(w, seen, w->user, lg_warble_env(WB_EP_USER), LG_ROLE_USER);
	}
	for (int k = 0; rc == 0 && k < 3; k++) {
		for (unsigned i = 0; rc == 0 && i < rt_shards_count(sh[k]); i++) {
			rc = lg_warble_proc_add(w, seen, rt_shards_at(sh[k], i),
			    rt_shards_url(sh[k], i), LG_ROLE_RELATION + k);
		}
	}
	free(seen);
	return rc;
}

int
lg_warble_attach(lg_warble *w, const char *gateways, const char *http_url)
{
	rt_client_opts o = { .timeout_ms = 60000, .plain = true }; /* the gateways' public ports */
	const char    *p = gateways;

	memset(w, 0, sizeof(*w));
	w->running = true;
	/* with WARBLE_TLS_DIR the set-up calls the internal ports as the admin identity */
	if (rt_tls_from_env(&w->tls, "admin") != WB_OK) {
		fprintf(stderr, "warble-load: no usable admin certificate in WARBLE_TLS_DIR\n");
		return -1;
	}
	rt_tls_default_set(w->tls);
	while (*p != '\0') {
		size_t k = strcspn(p, ",");
		if (k == 0 || k >= LG_URL_MAX || w->ngateways == LG_MAX_GATEWAYS) {
			fprintf(stderr, "warble-load: bad --gateway %s (at most %d addresses)\n",
			    gateways, LG_MAX_GATEWAYS);
			return -1;
		}
		snprintf(w->gateway[w->ngateways], LG_URL_MAX, "%.*s", (int)k, p);
		if (rt_client_open(&w->gw[w->ngateways], w->gateway[w->ngateways], &o) != 0) {
			fprintf(stderr, "warble-load: bad gateway address %s\n",
			    w->gateway[w->ngateways]);
			return -1;
		}
		w->ngateways++;
		p += k + (p[k] == ',');
	}
	if (w->ngateways == 0) {
		fprintf(stderr, "warble-load: --gateway names no address\n");
		return -1;
	}
	if (lg_warble_http_parse(w, http_url != NULL ? http_url : lg_warble_env(WB_EP_HTTP)) != 0) {
		return -1;
	}
	o.plain = false;
	if (rt_client_open(&w->user, lg_warble_env(WB_EP_USER), &o) != 0 ||
	    rt_shards_open(
	        &w->rel, getenv("WARBLE_RELATION_URLS"), lg_warble_env(WB_EP_RELATION), &o) != 0 ||
	    rt_shards_open(&w->content, getenv("WARBLE_CONTENT_URLS"), lg_warble_env(WB_EP_CONTENT),
	        &o) != 0 ||
	    rt_shards_open(
	        &w->inbox, getenv("WARBLE_INBOX_URLS"), lg_warble_env(WB_EP_INBOX), &o) != 0) {
		fprintf(stderr, "warble-load: cannot dial the services (WARBLE_USER_URL, "
		                "WARBLE_RELATION_URLS, ...)\n");
		return -1;
	}
	return lg_warble_procs(w);
}

void
lg_warble_describe(const lg_warble *w, FILE *f)
{
	int n[LG_ROLES] = { 0 };

	for (int i = 0; i < w->nprocs; i++) {
		n[w->procs[i].role]++;
	}
	fprintf(f,
	    "deployment: %u gateway%s, relation %u shard%s, content %u, inbox %u; %d server "
	    "processes (gateway %d, user %d, relation %d, content %d, inbox %d)\n",
	    w->ngateways, w->ngateways == 1 ? "" : "s", rt_shards_count(w->rel),
	    rt_shards_count(w->rel) == 1 ? "" : "s", rt_shards_count(w->content),
	    rt_shards_count(w->inbox), w->nprocs, n[LG_ROLE_GATEWAY], n[LG_ROLE_USER],
	    n[LG_ROLE_RELATION], n[LG_ROLE_CONTENT], n[LG_ROLE_INBOX]);
}

const char *
lg_warble_gateway(lg_warble *w)
{
	unsigned i = __atomic_fetch_add(&w->next_gateway, 1, __ATOMIC_RELAXED);

	return w->gateway[w->ngateways > 1 ? i % w->ngateways : 0];
}

void
lg_warble_stop(lg_warble *w)
{
	rt_client_close(w->user);
	rt_shards_close(w->rel);
	rt_shards_close(w->content);
	rt_shards_close(w->inbox);
	for (unsigned g = 0; g < w->ngateways; g++) {
		rt_client_close(w->gw[g]);
		w->gw[g] = NULL;
	}
	w->user = NULL;
	w->rel = NULL;
	w->content = NULL;
	w->inbox = NULL;
	w->nprocs = 0;
	if (!w->running) {
		wbt_cluster_stop(&w->cl, 30000);
	}
	rt_tls_default_set(NULL);
	rt_tls_close(w->tls);
	w->tls = NULL;
	w->cl.user = w->cl.relation = w->cl.content = w->cl.inbox = w->cl.gateway = NULL;
	free(w->guid);
	free(w->token);
	free(w->puid);
	w->guid = NULL;
	w->token = NULL;
	w->puid = NULL;
}

/* lg_warble_call sends req (freed here) and returns the reply code; *rep kept if rep != NULL. */
static int
lg_warble_call(rt_client *c, wb_obj *req, wb_obj **rep)
{
	wb_obj     *r = NULL;
	const char *msg = NULL;
	int         rc;

	if (req == NULL) {
		return WB_ENOMEM;
	}
	rc = rt_call(c, req, &r);
	if (rc != WB_OK) {
		(void)(r ? wb_reply_code(r, &msg) : 0);
		fprintf(stderr, "warble-load: %s: %s %s\n", wb_op_name(wb_op_of(req)),
		    wb_strerror(rc), msg ? msg : "");
	}
	wb_msg_free(req);
	if (rep != NULL && rc == WB_OK) {
		*rep = r;
	} else {
		wb_msg_free(r);
	}
	return rc;
}

int
lg_warble_register(lg_warble *w, const char *prefix, uint64_t count, uint64_t *uids)
{
	char what[64];

	snprintf(what, sizeof(what), "register %s*", prefix);
	for (uint64_t off = 0; off < count; off += LG_REG_PAGE) {
		uint64_t        k = count - off < LG_REG_PAGE ? count - off : LG_REG_PAGE;
		wb_obj         *req = wb_request(WB_OP_USER_REGISTER_MANY), *rep = NULL;
		const uint64_t *v;
		size_t          nv = 0;

		if (req != NULL) {
			wb_set_cstr(req, WB_F_NAME, prefix);
			wb_set_u64(req, WB_F_FROM, off);
			wb_set_u64(req, WB_F_LIMIT, k);
			wb_set_cstr(req, WB_F_PASSWORD, LG_PASSWORD);
		}
		if (lg_warble_call(w->user, req, &rep) != WB_OK) {
			return -1;
		}
		if (!wb_get_u64s(rep, WB_F_UIDS, &v, &nv) || nv != k) {
			wb_msg_free(rep);
			fprintf(stderr, "warble-load: user.register_many gave %zu uids for %llu\n",
			    nv, (unsigned long long)k);
			return -1;
		}
		memcpy(uids + off, v, k * sizeof(uint64_t));
		wb_msg_free(rep);
		lg_progress(what, off + k, count);
	}
	return 0;
}

/* lg_warble_follow_page makes fans[0..n), all on shard c, follow target in pages. */
static int
lg_warble_follow_page(rt_client *c, uint64_t target, const uint64_t *fans, size_t n)
{
	for (size_t off = 0; off < n; off += LG_FOLLOW_PAGE) {
		size_t  k = n - off < LG_FOLLOW_PAGE ? n - off : LG_FOLLOW_PAGE;
		wb_obj *req = wb_request(WB_OP_REL_FOLLOW_MANY);

		if (req != NULL) {
			wb_set_u64(req, WB_F_TARGET, target);
			wb_set_u64s(req, WB_F_UIDS, fans + off, k);
		}
		if (lg_warble_call(c, req, NULL) != WB_OK) {
			return -1;
		}
	}
	return 0;
}

int
lg_warble_follow_many(lg_warble *w, uint64_t target, const uint64_t *fans, size_t n)
{
	unsigned  ns = rt_shards_count(w->rel);
	uint64_t *part;
	int       rc = 0;

	if (ns == 1) {
		return lg_warble_follow_page(rt_shards_at(w->rel, 0), target, fans, n);
	}
	if ((part = malloc((n > 0 ? n : 1) * sizeof(*part))) == NULL) {
		return -1;
	}
	for (unsigned s = 0; rc == 0 && s < ns; s++) { /* a follow lives on the follower's shard */
		size_t k = 0;
		for (size_t i = 0; i < n; i++) {
			if (wb_uid_shard(fans[i], ns) == s) {
				part[k++] = fans[i];
			}
		}
		rc = k > 0 ? lg_warble_follow_page(rt_shards_at(w->rel, s), target, part, k) : 0;
	}
	free(part);
	return rc;
}

int
lg_warble_login(lg_warble *w, const char *name, char *tok, size_t len)
{
	wb_obj *req = wb_request(WB_OP_USER_LOGIN), *rep = NULL;

	if (req != NULL) {
		wb_set_cstr(req, WB_F_NAME, name);
		wb_set_cstr(req, WB_F_PASSWORD, LG_PASSWORD);
	}
	if (lg_warble_call(w->user, req, &rep) != WB_OK) {
		return -1;
	}
	snprintf(tok, len, "%s", wb_str(rep, WB_F_TOKEN, ""));
	wb_msg_free(rep);
	return 0;
}

int
lg_warble_login_graph(lg_warble *w)
{
	char name[32];

	if ((w->token = calloc(w->n, sizeof(*w->token))) == NULL) {
		return -1;
	}
	for (uint32_t i = 0; i < w->n; i++) {
		snprintf(name, sizeof(name), "gu%u", i);
		if (lg_warble_login(w, name, w->token[i], sizeof(w->token[i])) != 0) {
			return -1;
		}
		lg_progress("log in graph users", i + 1, w->n);
	}
	return 0;
}

int
lg_warble_post_as(lg_warble *w, uint64_t uid, const char *text, uint64_t *id)
{
	wb_obj *req = wb_request(WB_OP_POST_PUBLISH), *rep = NULL;

	if (req != NULL) {
		wb_set_u64(req, WB_F_UID, uid);
		wb_set_cstr(req, WB_F_TEXT, text);
	}
	if (lg_warble_call(rt_shards_for_uid(w->content, uid), req, &rep) != WB_OK) {
		return -1;
	}
	*id = wb_u64(rep, WB_F_ID, 0);
	wb_msg_free(rep);
	return *id != 0 ? 0 : -1;
}

uint64_t
lg_warble_gauge_sum(rt_shards *s, const char *name)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < rt_shards_count(s); i++) {
		uint64_t v = wbt_stat(rt_shards_at(s, i), name);
		if (v == UINT64_MAX) {
			return UINT64_MAX;
		}
		sum += v;
	}
	return sum;
}

/* lg_vis_read adds the posts_visible_within{ms=..} gauges of a stats reply to v (cumulative
 * counts, in the order of their bounds); false if it has none or other bounds than v. */
static bool
lg_vis_read(const wb_obj *rep, lg_vis *v)
{
	static const char pre[] = "posts_visible_within{ms=";
	const wb_obj     *g = NULL;
	size_t            n = 0;
	int               k = 0;
	uint64_t          below = 0;

	(void)wb_get_objs(rep, WB_F_GAUGES, &g, &n);
	for (size_t i = 0; i < n && k < LG_VIS_MAX; i++) {
		const char *name = wb_str(&g[i], WB_F_NAME, "");
		if (strncmp(name, pre, sizeof(pre) - 1) != 0) {
			continue;
		}
		const char *b = name + sizeof(pre) - 1;
		double      le = strncmp(b, "any", 3) == 0 ? INFINITY : strtod(b, NULL);
		uint64_t    cum = wb_u64(&g[i], WB_F_VALUE, 0);
		if (k < v->n && v->le_ms[k] != le) {
			return false;
		}
		v->le_ms[k] = le;
		v->count[k] = (k < v->n ? v->count[k] : 0) + (cum > below ? cum - below : 0);
		below = cum;
		k++;
	}
	v->n = k;
	return k > 0;
}

bool
lg_warble_visible(lg_warble *w, lg_vis *v)
{
	memset(v, 0, sizeof(*v));
	for (unsigned i = 0; i < rt_shards_count(w->inbox); i++) {
		wb_obj *rep = NULL;
		bool    ok = wbt_call_retry(
		                 rt_shards_at(w->inbox, i), wb_request(WB_OP_STATS), &rep) == WB_OK &&
		          lg_vis_read(rep, v);
		wb_msg_free(rep);
		if (!ok) {
			return false;
		}
	}
	return true;
}

uint64_t
lg_warble_content_last(lg_warble *w)
{
	return lg_warble_gauge_sum(w->content, "log_last_seq");
}

/* lg_add_sat adds without passing UINT64_MAX (an unknown figure stays unknown). */
static uint64_t
lg_add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

bool
lg_warble_wait_inbox(lg_warble *w, uint64_t content_last, int timeout_s)
{
	unsigned nr = rt_shards_count(w->rel), ni = rt_shards_count(w->inbox);
	uint64_t rel_last[WB_SHARDS_MAX], want[WB_SHARDS_MAX], want_sum = 0;
	uint64_t dl = lg_now_us() + (uint64_t)timeout_s * 1000000;
	uint64_t start = UINT64_MAX;

	for (unsigned j = 0; j < nr; j++) {
		rel_last[j] = wbt_stat(rt_shards_at(w->rel, j), "log_last_seq");
	}
	if (w->running) { /* every post so far, whoever made it */
		uint64_t c = lg_warble_content_last(w);
		content_last = c != UINT64_MAX && c > content_last ? c : content_last;
	}
	/* inbox shard i consumes the relation shards whose slots overlap its own */
	for (unsigned i = 0; i < ni; i++) {
		unsigned lo, hi;
		wb_shard_slots((wb_shard) { i, ni }, &lo, &hi);
		want[i] = 0;
		for (unsigned j = wb_slot_shard(lo, nr); j <= wb_slot_shard(hi - 1, nr); j++) {
			want[i] = lg_add_sat(want[i], rel_last[j]);
		}
		want_sum = lg_add_sat(want_sum, want[i]);
	}
	while (lg_now_us() < dl) {
		uint64_t ra_sum = 0;
		bool     known = true, all = true;
		for (unsigned i = 0; known && i < ni; i++) {
			uint64_t ra = wbt_stat(rt_shards_at(w->inbox, i), "relation_applied");
			uint64_t ca = wbt_stat(rt_shards_at(w->inbox, i), "content_applied");
			known = ra != UINT64_MAX && ca != UINT64_MAX;
			all = all && known && ra >= want[i] && ca >= content_last;
			ra_sum += known ? ra : 0;
		}
		if (known) {
			if (start == UINT64_MAX) {
				start = ra_sum;
			}
			if (want_sum > start && want_sum != UINT64_MAX) {
				lg_progress("inbox applies follows",
				    (ra_sum < want_sum ? ra_sum : want_sum) - start,
				    want_sum - start);
			}
			if (all) {
				return true;
			}
		}
		lg_sleep_us(20000);
	}
	fprintf(stderr, "warble-load: inbox still behind after %d s\n", timeout_s);
	return false;
}

bool
lg_warble_wait_applied(lg_warble *w, uint64_t target, uint64_t poll_us, int timeout_s,
    uint64_t *done_us, uint64_t *polls)
{
	unsigned ni = rt_shards_count(w->inbox), i = 0;
	uint64_t t0 = lg_now_us(), dl = t0 + (uint64_t)timeout_s * 1000000, now;

	*polls = 0;
	while ((now = lg_now_us()) < dl) {
		uint64_t a = wbt_stat(rt_shards_at(w->inbox, i), "content_applied");
		++*polls;
		if (a == UINT64_MAX || a < target) { /* 2% of the wait so far, at least poll_us */
			lg_sleep_us((now - t0) / 50 > poll_us ? (now - t0) / 50 : poll_us);
		} else if (++i == ni) {
			*done_us = lg_now_us();
			return true;
		}
	}
	return false;
}

uint64_t
lg_warble_role_cpu(void *arg, int role)
{
	lg_warble *w = arg;
	uint64_t   sum = 0;

	for (int i = 0; i < w->nprocs; i++) {
		if (w->procs[i].role == role) {
			uint64_t v = wbt_stat(w->procs[i].c, "process_cpu_us");
			if (v == UINT64_MAX) {
				fprintf(stderr, "warble-load: a server's stats did not answer\n");
				return 0;
			}
			sum += v;
		}
	}
	return sum;
}

uint64_t
lg_warble_role_rss(lg_warble *w, int role)
{
	uint64_t sum = 0;

	for (int i = 0; i < w->nprocs; i++) {
		if (w->procs[i].role == role) {
			uint64_t v = wbt_stat(w->procs[i].c, "process_rss_bytes");
			sum += v != UINT64_MAX ? v : 0;
		}
	}
	return sum;
}

uint64_t
lg_warble_inbox_newest(lg_warble *w, uint64_t uid)
{
	wb_obj       *req = wb_request(WB_OP_INBOX_HOME), *rep = NULL;
	const wb_obj *posts;
	size_t        n = 0;
	uint64_t      id = UINT64_MAX;

	if (req == NULL) {
		return id;
	}
	wb_set_u64(req, WB_F_UID, uid);
	wb_set_u64(req, WB_F_LIMIT, 1);
	if (rt_call(rt_shards_for_uid(w->inbox, uid), req, &rep) == WB_OK) {
		id = wb_get_objs(rep, WB_F_POSTS, &posts, &n) && n > 0
		         ? wb_u64(&posts[0], WB_F_ID, 0)
		         : 0;
	}
	wb_msg_free(req);
	wb_msg_free(rep);
	return id;
}

int
lg_warble_publish(lg_warble *w, const char *name, const char *text, uint64_t *id, uint64_t *ack_us)
{
	warble_client *c;
	int            rc;

	if ((rc = warble_open(&c, lg_warble_gateway(w), 10000)) != WARBLE_OK) {
		return rc;
	}
	if ((rc = warble_login(c, name, LG_PASSWORD, NULL)) == WARBLE_OK) {
		uint64_t t0 = lg_now_us();
		rc = warble_post(c, text, id);
		*ack_us = lg_now_us() - t0;
	}
	if (rc != WARBLE_OK) {
		fprintf(stderr, "warble-load: publish as %s: %s\n", name, warble_errmsg(c));
	}
	warble_close(c);
	return rc;
}

/* ---- the SDK backend ---- */

static lg_conn *
lg_warble_conn_open(void *ctx)
{
	lg_conn *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		return NULL;
	}
	c->w = ctx;
	if (warble_open(&c->c, lg_warble_gateway(c->w), 10000) != WARBLE_OK) {
		free(c);
		return NULL;
	}
	return c;
}

static void
lg_warble_conn_close(lg_conn *c)
{
	if (c != NULL) {
		warble_close(c->c);
		free(c);
	}
}

/* lg_warble_page keeps the posts of p in pg (if not NULL); *n gets their count. */
static void
lg_warble_page(const warble_posts_t *p, lg_page *pg, size_t *n)
{
	*n = p ? p->n : 0;
	for (size_t i = 0; p != NULL && i < p->n; i++) {
		const warble_post_t *x = &p->posts[i];
		lg_page_put(pg, i, x->id, x->author, x->author_name,
		    x->author_name ? strlen(x->author_name) : 0, x->text,
		    x->text ? strlen(x->text) : 0);
	}
}

static int
lg_warble_home(lg_conn *c, uint32_t u, lg_page *pg, size_t *n)
{
	warble_posts_t *p = NULL;
	int             rc;

	warble_set_token(c->c, c->w->token[u]);
	rc = warble_home(c->c, 0, LG_PAGE, &p);
	lg_warble_page(p, pg, n);
	warble_posts_free(p);
	return rc;
}

static int
lg_warble_timeline(lg_conn *c, uint32_t u, lg_page *pg, size_t *n)
{
	warble_posts_t *p = NULL;
	char            name[32];
	int             rc;

	snprintf(name, sizeof(name), "gu%u", u);
	warble_set_token(c->c, NULL);
	rc = warble_timeline(c->c, name, 0, LG_PAGE, &p);
	lg_warble_page(p, pg, n);
	warble_posts_free(p);
	return rc;
}

static int
lg_warble_post(lg_conn *c, uint32_t u, const char *text, uint64_t *id)
{
	warble_set_token(c->c, c->w->token[u]);
	return warble_post(c->c, text, id);
}

void
lg_warble_backend(lg_warble *w, lg_backend *b)
{
	memset(b, 0, sizeof(*b));
	b->name = "warble";
	b->ctx = w;
	b->conn_open = lg_warble_conn_open;
	b->conn_close = lg_warble_conn_close;
	b->home = lg_warble_home;
	b->timeline = lg_warble_timeline;
	b->post = lg_warble_post;
}
