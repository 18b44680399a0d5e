/*
 * gw.c - the gateway's plumbing: downstream clients, the call helper that
 * turns downstream failures into public errors, name lookup and page
 * limits.  gw_auth.c knows who calls, gw_dispatch.c routes the operations.
 */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "gw_int.h"
#include "rt_log.h"

/* gw_closed hears of a deleted account from the revocation feed: its name is forgotten. */
static void
gw_closed(void *arg, uint64_t uid)
{
	gw *g = arg;

	gw_names_forget(g->names, uid);
}

int
gw_open(gw **out, const gw_opts *opts)
{
	gw            *g;
	rt_client_opts co = { 0 };
	int            rc;

	*out = NULL;
	if ((g = calloc(1, sizeof(*g))) == NULL) {
		return WB_ENOMEM;
	}
	co.timeout_ms = opts->timeout_ms > 0 ? opts->timeout_ms : 5000;
	co.tls = opts->tls;
	randombytes_buf(&g->rid_nonce, sizeof(g->rid_nonce));
	for (int i = 0; i < WB_SVC_COUNT; i++) {
		if (opts->urls[i] == NULL &&
		    (opts->lists[i] == NULL || opts->lists[i][0] == '\0')) {
			gw_close(g);
			return WB_EINVAL;
		}
		/* the read path's services batch under load; the user service's
		 * client also carries the revocation feed's long pull */
		co.coalesce = i == WB_SVC_CONTENT || i == WB_SVC_INBOX ? opts->coalesce : 0;
		if ((rc = rt_shards_open(&g->svc[i], i == WB_SVC_USER ? NULL : opts->lists[i],
		         opts->urls[i], &co)) != WB_OK) {
			gw_close(g);
			return rc;
		}
	}
	int check = opts->session_check_ms;
	if ((rc = gw_auth_proxies(g, opts->trusted_proxies)) != WB_OK ||
	    (rc = gw_names_open(&g->names, 0)) != WB_OK ||
	    (rc = gw_tokens_open(&g->tokens, gw_shard(g, WB_SVC_USER, 0),
	         check > 0 ? (check + 3) / 4 : 0, check, gw_closed, g)) != WB_OK ||
	    (rc = gw_postcache_open(&g->posts, opts->post_cache, opts->post_cache_ms)) != WB_OK) {
		gw_close(g);
		return rc;
	}
	*out = g;
	return WB_OK;
}

void
gw_close(gw *g)
{
	if (g == NULL) {
		return;
	}
	rt_shards_shutdown(g->svc[WB_SVC_USER]); /* ends the revocation pull in flight */
	gw_tokens_close(g->tokens);
	for (int i = 0; i < WB_SVC_COUNT; i++) {
		rt_shards_close(g->svc[i]);
	}
	gw_names_close(g->names);
	gw_postcache_close(g->posts);
	free(g);
}

/*
 * gw_call_result turns one downstream call's outcome into the gateway's.
 * The service's own error (NAME_TAKEN, NO_SUCH_POST...) passes through
 * with its message (and a RATE_LIMITED's retry_ms); a transport failure (no connection, dead peer,
 * garbled reply) becomes UNAVAILABLE, a missed deadline TIMEOUT, each
 * naming the service.
 */
static int
gw_call_result(wb_service svc, int rc, wb_obj *r, wb_obj **out, wb_obj *rep)
{
	const char *msg;

	if (rc == WB_OK && r != NULL) {
		*out = r;
		return WB_OK;
	}
	if (r == NULL) {
		if (rc != WB_ETIMEDOUT && rc != WB_ENOMEM) {
			rc = WB_EUNAVAIL;
		}
		wb_reply_error(rep, rc, "%s service %s", wb_services[svc].name,
		    rc == WB_ETIMEDOUT ? "timed out" : "unavailable");
		return rc;
	}
	msg = NULL;
	wb_reply_code(r, &msg);
	wb_reply_error(rep, rc, "%s", msg != NULL ? msg : wb_strerror(rc));
	if (wb_has(r, WB_F_RETRY)) {
		wb_set_u64(rep, WB_F_RETRY, wb_u64(r, WB_F_RETRY, 0));
	}
	wb_msg_free(r);
	return rc;
}

rt_client *
gw_shard(gw *g, wb_service svc, uint64_t uid)
{
	return rt_shards_for_uid(g->svc[svc], uid);
}

int
gw_call(wb_service svc, rt_client *c, wb_obj *req, wb_obj **out, wb_obj *rep)
{
	wb_obj *r = NULL;
	int     rc;

	*out = NULL;
	if (req == NULL) {
		wb_reply_error(rep, WB_ENOMEM, NULL);
		return WB_ENOMEM;
	}
	rc = rt_call(c, req, &r);
	wb_msg_free(req);
	return gw_call_result(svc, rc, r, out, rep);
}

rt_pending *
gw_call_start(rt_client *c, wb_obj *req)
{
	rt_pending *p = NULL;

	if (req != NULL) {
		(void)rt_call_start(c, req, &p); /* a failure is kept in p */
		wb_msg_free(req);
	}
	return p;
}

int
gw_call_finish(wb_service svc, rt_pending *p, wb_obj **out, wb_obj *rep)
{
	wb_obj *r = NULL;
	int     rc;

	*out = NULL;
	rc = rt_call_finish(p, &r); /* NULL p: WB_ENOMEM */
	return gw_call_result(svc, rc, r, out, rep);
}

gw_names *
gw_name_cache(gw *g)
{
	return g->names;
}

gw_postcache *
gw_post_cache(gw *g)
{
	return g->posts;
}

int
gw_lookup(gw *g, const char *name, uint64_t *uid, wb_obj *rep)
{
	wb_obj       *q, *r;
	const wb_obj *users = NULL;
	const char   *canon;
	size_t        n = 0, len;
	int           rc;

	if (gw_names_uid(g->names, name, strlen(name), uid)) {
		return WB_OK;
	}
	if ((q = wb_request(WB_OP_USER_LOOKUP)) != NULL &&
	    wb_set_cstr(q, WB_F_NAME, name) != WB_OK) {
		wb_msg_free(q);
		q = NULL;
	}
	rc = gw_call(WB_SVC_USER, gw_shard(g, WB_SVC_USER, 0), q, &r, rep);
	if (rc == WB_ENOTFOUND || rc == WB_ENOUSER) {
		wb_reply_error(rep, WB_ENOUSER, "no such user: %s", name);
		return WB_ENOUSER;
	}
	if (rc != WB_OK) {
		return rc;
	}
	*uid = 0;
	wb_get_objs(r, WB_F_USERS, &users, &n);
	if (!wb_get_u64(r, WB_F_UID, uid) && n > 0) {
		wb_get_u64(&users[0], WB_F_UID, uid);
	}
	if (*uid != 0 && n > 0 && wb_u64(&users[0], WB_F_UID, 0) == *uid &&
	    wb_get_str(&users[0], WB_F_NAME, &canon, &len)) {
		gw_names_put(g->names, *uid, canon, len);
	}
	wb_msg_free(r);
	if (*uid == 0) {
		wb_reply_error(rep, WB_ENOUSER, "no such user: %s", name);
		return WB_ENOUSER;
	}
	return WB_OK;
}

int
gw_limit(const wb_obj *req, uint64_t *limit, wb_obj *rep)
{
	return wb_page_limit(req, GW_PAGE_DEFAULT, GW_PAGE_MAX, limit, rep);
}
