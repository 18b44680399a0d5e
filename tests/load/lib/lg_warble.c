/*
 * lg_warble.c - Warble under load: the cluster, bulk setup, gauges and
 * the SDK backend of the mixed workload.
 */
#include <stdlib.h>
#include <string.h>

#include "lg_warble.h"
#include "rt_client.h"
#include "warble.h"

#define LG_REG_PAGE    10000 /* accounts per user.register_many */
#define LG_FOLLOW_PAGE 10000 /* fans per rel.follow_many */

struct lg_conn {
	lg_warble     *w;
	warble_client *c;
};

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
	if (wbt_cluster_start_as(&w->cl, env, shape) != 0) {
		return -1;
	}
	if (rt_client_open(&w->user, w->cl.user_url, &o) != 0 ||
	    rt_client_open(&w->rel, w->cl.relation_url, &o) != 0 ||
	    rt_client_open(&w->content, w->cl.content_url, &o) != 0 ||
	    rt_client_open(&w->inbox, w->cl.inbox_url, &o) != 0) {
		fprintf(stderr, "warble-load: cannot dial the services\n");
		return -1;
	}
	return 0;
}

void
lg_warble_stop(lg_warble *w)
{
	rt_client_close(w->user);
	rt_client_close(w->rel);
	rt_client_close(w->content);
	rt_client_close(w->inbox);
	w->user = NULL;
	w->rel = NULL;
	w->content = NULL;
	w->inbox = NULL;
	wbt_cluster_stop(&w->cl, 30000);
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

int
lg_warble_follow_many(lg_warble *w, uint64_t target, const uint64_t *fans, size_t n)
{
	for (size_t off = 0; off < n; off += LG_FOLLOW_PAGE) {
		size_t  k = n - off < LG_FOLLOW_PAGE ? n - off : LG_FOLLOW_PAGE;
		wb_obj *req = wb_request(WB_OP_REL_FOLLOW_MANY);

		if (req != NULL) {
			wb_set_u64(req, WB_F_TARGET, target);
			wb_set_u64s(req, WB_F_UIDS, fans + off, k);
		}
		if (lg_warble_call(w->rel, req, NULL) != WB_OK) {
			return -1;
		}
	}
	return 0;
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
	if (lg_warble_call(w->content, req, &rep) != WB_OK) {
		return -1;
	}
	*id = wb_u64(rep, WB_F_ID, 0);
	wb_msg_free(rep);
	return *id != 0 ? 0 : -1;
}

uint64_t
lg_warble_gauge(rt_client *c, const char *name)
{
	wb_obj  *rep = NULL;
	uint64_t v =
	    wbt_call(c, wb_request(WB_OP_STATS), &rep) == WB_OK ? wbt_gauge(rep, name) : UINT64_MAX;

	wb_msg_free(rep);
	return v;
}

bool
lg_warble_wait_inbox(lg_warble *w, uint64_t content_last, int timeout_s)
{
	uint64_t rel_last = lg_warble_gauge(w->rel, "log_last_seq");
	uint64_t dl = lg_now_us() + (uint64_t)timeout_s * 1000000;
	uint64_t start = UINT64_MAX;

	while (lg_now_us() < dl) {
		uint64_t ra = lg_warble_gauge(w->inbox, "relation_applied");
		uint64_t ca = lg_warble_gauge(w->inbox, "content_applied");
		if (ra != UINT64_MAX && ca != UINT64_MAX) {
			if (start == UINT64_MAX) {
				start = ra;
			}
			if (rel_last > start) {
				lg_progress("inbox applies follows", ra - start, rel_last - start);
			}
			if (ra >= rel_last && ca >= content_last) {
				return true;
			}
		}
		lg_sleep_us(20000);
	}
	fprintf(stderr, "warble-load: inbox still behind after %d s\n", timeout_s);
	return false;
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
	if (rt_call(w->inbox, req, &rep) == WB_OK) {
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

	if ((rc = warble_open(&c, w->cl.gateway_url, 10000)) != WARBLE_OK) {
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
	if (warble_open(&c->c, c->w->cl.gateway_url, 10000) != WARBLE_OK) {
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

static int
lg_warble_home(lg_conn *c, uint32_t u, size_t *n)
{
	warble_posts_t *p = NULL;
	int             rc;

	warble_set_token(c->c, c->w->token[u]);
	rc = warble_home(c->c, 0, 20, &p);
	*n = p ? p->n : 0;
	warble_posts_free(p);
	return rc;
}

static int
lg_warble_timeline(lg_conn *c, uint32_t u, size_t *n)
{
	warble_posts_t *p = NULL;
	char            name[32];
	int             rc;

	snprintf(name, sizeof(name), "gu%u", u);
	warble_set_token(c->c, NULL);
	rc = warble_timeline(c->c, name, 0, 20, &p);
	*n = p ? p->n : 0;
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
