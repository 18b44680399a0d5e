/*
 * gw.c - the gateway's plumbing: downstream clients, the call helper that
 * turns downstream failures into public errors, authentication, name
 * lookup and page limits.  gw_dispatch.c routes the operations.
 */
#include <sodium.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "gw_int.h"
#include "rt_log.h"
#include "rt_rate.h"
#include "rt_server.h"
#include "wb_clock.h"

static const char *gw_svc_names[GW_SVC_COUNT] = {
	"user",
	"relation",
	"content",
	"inbox",
};

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
	randombytes_buf(&g->rid_nonce, sizeof(g->rid_nonce));
	for (int i = 0; i < GW_SVC_COUNT; i++) {
		if (opts->urls[i] == NULL) {
			gw_close(g);
			return WB_EINVAL;
		}
		/* the read path's services batch under load; the user service's
		 * client also carries the revocation feed's long pull */
		co.coalesce = i == GW_CONTENT || i == GW_INBOX ? opts->coalesce : 0;
		if ((rc = rt_client_open(&g->svc[i], opts->urls[i], &co)) != WB_OK) {
			gw_close(g);
			return rc;
		}
	}
	int check = opts->session_check_ms;
	if ((rc = gw_tokens_open(&g->tokens, opts->auth_cache_ms)) != WB_OK ||
	    (rc = gw_sessions_open(
	         &g->sessions, g->svc[GW_USER], check > 0 ? (check + 3) / 4 : 0, check)) != WB_OK ||
	    (rc = gw_names_open(&g->names, 0)) != WB_OK ||
	    (rc = gw_postcache_open(&g->posts, opts->post_cache, opts->post_cache_ms)) != WB_OK ||
	    (rc = rt_rate_open(&g->logins, opts->login_fails ? opts->login_fails : 20,
	         opts->login_window_ms ? opts->login_window_ms : 60000,
	         opts->login_cooldown_ms ? opts->login_cooldown_ms : 60000)) != WB_OK) {
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
	rt_client_shutdown(g->svc[GW_USER]); /* ends the revocation pull in flight */
	gw_sessions_close(g->sessions);
	for (int i = 0; i < GW_SVC_COUNT; i++) {
		rt_client_close(g->svc[i]);
	}
	gw_tokens_close(g->tokens);
	gw_names_close(g->names);
	gw_postcache_close(g->posts);
	rt_rate_close(g->logins);
	free(g);
}

/*
 * gw_call_result turns one downstream call's outcome into the gateway's.
 * The service's own error (NAME_TAKEN, NO_SUCH_POST...) passes through
 * with its message; a transport failure (no connection, dead peer,
 * garbled reply) becomes UNAVAILABLE, a missed deadline TIMEOUT, each
 * naming the service.
 */
static int
gw_call_result(gw_svc svc, int rc, wb_obj *r, wb_obj **out, wb_obj *rep)
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
		wb_reply_error(rep, rc, "%s service %s", gw_svc_names[svc],
		    rc == WB_ETIMEDOUT ? "timed out" : "unavailable");
		return rc;
	}
	msg = NULL;
	wb_reply_code(r, &msg);
	wb_reply_error(rep, rc, "%s", msg != NULL ? msg : wb_strerror(rc));
	wb_msg_free(r);
	return rc;
}

int
gw_call(gw *g, gw_svc svc, wb_obj *req, wb_obj **out, wb_obj *rep)
{
	wb_obj *r = NULL;
	int     rc;

	*out = NULL;
	if (req == NULL) {
		wb_reply_error(rep, WB_ENOMEM, NULL);
		return WB_ENOMEM;
	}
	rc = rt_call(g->svc[svc], req, &r);
	wb_msg_free(req);
	return gw_call_result(svc, rc, r, out, rep);
}

rt_pending *
gw_call_start(gw *g, gw_svc svc, wb_obj *req)
{
	rt_pending *p = NULL;

	if (req != NULL) {
		(void)rt_call_start(g->svc[svc], req, &p); /* a failure is kept in p */
		wb_msg_free(req);
	}
	return p;
}

int
gw_call_finish(gw_svc svc, rt_pending *p, wb_obj **out, wb_obj *rep)
{
	wb_obj *r = NULL;
	int     rc;

	*out = NULL;
	rc = rt_call_finish(p, &r); /* NULL p: WB_ENOMEM */
	return gw_call_result(svc, rc, r, out, rep);
}

int
gw_auth(gw *g, const wb_obj *req, uint64_t *uid, wb_obj *rep)
{
	const char *tok;
	size_t      len;
	wb_obj     *q, *r;
	uint64_t    asked;
	int         rc;

	if (!wb_get_str(req, WB_F_TOKEN, &tok, &len) || len == 0) {
		wb_reply_error(rep, WB_EAUTH, "a session token is required");
		return WB_EAUTH;
	}
	switch (gw_sessions_check(g->sessions, tok, len, uid)) {
	case GW_SESSION_OK:
		return WB_OK;
	case GW_SESSION_BAD:
		wb_reply_error(rep, WB_EAUTH, NULL);
		return WB_EAUTH;
	case GW_SESSION_ASK:
		break;
	}
	if (gw_tokens_get(g->tokens, tok, len, uid)) {
		return WB_OK;
	}
	asked = wb_mono_us() / 1000;
	if ((q = wb_request(WB_OP_USER_AUTH)) != NULL &&
	    wb_set_str(q, WB_F_TOKEN, tok, len) != WB_OK) {
		wb_msg_free(q);
		q = NULL;
	}
	if ((rc = gw_call(g, GW_USER, q, &r, rep)) != WB_OK) {
		return rc;
	}
	if (!wb_get_u64(r, WB_F_UID, uid) || *uid == 0) {
		wb_msg_free(r);
		wb_reply_error(rep, WB_EINTERNAL, "user service gave no uid");
		return WB_EINTERNAL;
	}
	wb_msg_free(r);
	gw_tokens_put(g->tokens, tok, len, *uid, asked);
	return WB_OK;
}

int
gw_caller(gw *g, const wb_obj *req, uint64_t *uid, wb_obj *rep)
{
	return gw_auth(g, req, uid, rep);
}

int
gw_admit(void *arg, const wb_obj *head, bool final, wb_obj *rep)
{
	gw      *g = arg;
	wb_mask  req = 0, opt = 0;
	wb_op    op = wb_op_of(head);
	uint64_t uid;

	if (!wb_has(head, WB_F_OP)) {
		if (!final) {
			return -1;
		}
		wb_reply_error(rep, WB_ETOOBIG, "a large request names its op first");
		return WB_ETOOBIG;
	}
	if (gw_is_public(op)) {
		wb_op_fields(op, &req, &opt);
	}
	if (((req | opt) & WB_M(DATA)) == 0) {
		wb_reply_error(rep, WB_ETOOBIG, "a request this large must be an upload, not %.32s",
		    wb_str(head, WB_F_OP, "?"));
		return WB_ETOOBIG;
	}
	if (!wb_has(head, WB_F_TOKEN)) {
		if (!final) {
			return -1;
		}
		wb_reply_error(rep, WB_EAUTH,
		    "a large %s request carries its token before its data", wb_op_name(op));
		return WB_EAUTH;
	}
	return gw_auth(g, head, &uid, rep);
}

int
gw_auth_optional(gw *g, const wb_obj *req, uint64_t *uid, wb_obj *rep)
{
	int rc;

	*uid = 0;
	if (!wb_has(req, WB_F_TOKEN)) {
		return WB_OK;
	}
	rc = gw_auth(g, req, uid, rep);
	if (rc == WB_EAUTH) {
		/* A stale token on a public read: answer as to anyone. */
		wb_reset(rep);
		*uid = 0;
		return WB_OK;
	}
	return rc;
}

void
gw_auth_forget(gw *g, const char *token, size_t len)
{
	gw_tokens_drop(g->tokens, token, len);
}

void
gw_auth_sync(gw *g)
{
	int rc = gw_sessions_sync(g->sessions);

	if (rc != WB_OK) {
		/* the feed thread retries; until it succeeds, nothing is trusted here
		 * past session-check-ms, so the ended session cannot outlive that */
		RT_WARNF(
		    "session revocations: pull after a session ended failed: %s", wb_strerror(rc));
	}
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
	rc = gw_call(g, GW_USER, q, &r, rep);
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
