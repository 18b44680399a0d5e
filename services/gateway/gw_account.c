/*
 * gw_account.c - accounts and sessions: register, login, logout, log out
 * everywhere, password change, whoami, update_profile, delete_account.
 * Passwords and tokens pass through to the user service and are never
 * logged; so does the client's address where the user service limits by
 * it.
 */
#include "gw_int.h"

/* gw_account_name_pass builds a user-service request carrying req's name and password, and addr. */
static wb_obj *
gw_account_name_pass(wb_op op, const wb_obj *req, const char *addr)
{
	const char *name, *pass;
	size_t      nn, pn;
	wb_obj     *q;

	if (!wb_get_str(req, WB_F_NAME, &name, &nn) ||
	    !wb_get_str(req, WB_F_PASSWORD, &pass, &pn)) {
		return NULL;
	}
	if ((q = wb_request(op)) == NULL) {
		return NULL;
	}
	if (wb_set_str(q, WB_F_NAME, name, nn) != WB_OK ||
	    wb_set_str(q, WB_F_PASSWORD, pass, pn) != WB_OK ||
	    (addr[0] != '\0' && wb_set_cstr(q, WB_F_ADDR, addr) != WB_OK)) {
		wb_msg_free(q);
		return NULL;
	}
	return q;
}

static int
gw_account_need(const wb_obj *req, wb_field a, wb_field b, wb_obj *rep)
{
	if (!wb_has(req, a) || !wb_has(req, b)) {
		wb_reply_error(
		    rep, WB_EINVAL, "%s and %s are required", wb_field_name(a), wb_field_name(b));
		return WB_EINVAL;
	}
	return WB_OK;
}

int
gw_op_register(gw *g, const wb_obj *req, wb_obj *rep, const char *addr)
{
	wb_obj  *r;
	uint64_t uid = 0;
	int      rc;

	if ((rc = gw_account_need(req, WB_F_NAME, WB_F_PASSWORD, rep)) != WB_OK) {
		return rc;
	}
	rc = gw_call(
	    WB_SVC_USER, gw_user(g), gw_account_name_pass(WB_OP_USER_REGISTER, req, addr), &r, rep);
	if (rc != WB_OK) {
		return rc;
	}
	wb_get_u64(r, WB_F_UID, &uid);
	wb_msg_free(r);
	if ((rc = wb_reply_ok(rep)) != WB_OK || (rc = wb_set_u64(rep, WB_F_UID, uid)) != WB_OK ||
	    (rc = wb_set_cstr(rep, WB_F_NAME, wb_str(req, WB_F_NAME, ""))) != WB_OK) {
		wb_reply_error(rep, rc, NULL);
	}
	return rc;
}

int
gw_op_login(gw *g, const wb_obj *req, wb_obj *rep, const char *addr)
{
	wb_obj     *r;
	const char *tok;
	size_t      len;
	uint64_t    uid = 0;
	int         rc;

	if ((rc = gw_account_need(req, WB_F_NAME, WB_F_PASSWORD, rep)) != WB_OK) {
		return rc;
	}
	rc = gw_call(
	    WB_SVC_USER, gw_user(g), gw_account_name_pass(WB_OP_USER_LOGIN, req, addr), &r, rep);
	if (rc != WB_OK) {
		return rc;
	}
	if (!wb_get_str(r, WB_F_TOKEN, &tok, &len) || len == 0) {
		wb_msg_free(r);
		wb_reply_error(rep, WB_EINTERNAL, "user service gave no token");
		return WB_EINTERNAL;
	}
	wb_get_u64(r, WB_F_UID, &uid);
	if ((rc = wb_reply_ok(rep)) != WB_OK ||
	    (rc = wb_set_str(rep, WB_F_TOKEN, tok, len)) != WB_OK ||
	    (rc = wb_set_u64(rep, WB_F_UID, uid)) != WB_OK ||
	    (rc = wb_set_cstr(rep, WB_F_NAME, wb_str(req, WB_F_NAME, ""))) != WB_OK) {
		wb_reply_error(rep, rc, NULL);
	}
	wb_msg_free(r);
	return rc;
}

/* gw_account_copy copies string field f of req into q (WB_EINVAL if absent). */
static int
gw_account_copy(wb_obj *q, const wb_obj *req, wb_field f)
{
	const char *v;
	size_t      n;

	return wb_get_str(req, f, &v, &n) ? wb_set_str(q, f, v, n) : WB_EINVAL;
}

/*
 * gw_account_end forwards req's token as user operation op (a password
 * change also its passwords and addr, a deletion its password and addr),
 * then pulls the revocation feed so the session ends at this gateway
 * before the reply (a deleted account's name is forgotten too); *out gets
 * the user service's reply.
 */
static int
gw_account_end(gw *g, wb_op op, const wb_obj *req, wb_obj *rep, const char *addr, wb_obj **out)
{
	const char *tok;
	size_t      len;
	wb_obj     *q;
	int         rc;

	*out = NULL;
	if (!wb_get_str(req, WB_F_TOKEN, &tok, &len) || len == 0) {
		wb_reply_error(rep, WB_EAUTH, "a session token is required");
		return WB_EAUTH;
	}
	q = wb_request(op);
	if (q != NULL &&
	    (wb_set_str(q, WB_F_TOKEN, tok, len) != WB_OK ||
	        ((op == WB_OP_USER_PASSWORD || op == WB_OP_USER_DELETE) &&
	            (gw_account_copy(q, req, WB_F_PASSWORD) != WB_OK ||
	                (addr[0] != '\0' && wb_set_cstr(q, WB_F_ADDR, addr) != WB_OK))) ||
	        (op == WB_OP_USER_PASSWORD &&
	            gw_account_copy(q, req, WB_F_NEW_PASSWORD) != WB_OK))) {
		wb_msg_free(q);
		q = NULL;
	}
	if ((rc = gw_call(WB_SVC_USER, gw_user(g), q, out, rep)) != WB_OK) {
		return rc;
	}
	gw_auth_sync(g);
	return WB_OK;
}

/* gw_account_end_reply ends a session with user operation op and replies {}. */
static int
gw_account_end_reply(gw *g, wb_op op, const wb_obj *req, wb_obj *rep)
{
	wb_obj *r;
	int     rc = gw_account_end(g, op, req, rep, "", &r);

	wb_msg_free(r);
	return rc == WB_OK ? wb_reply_ok(rep) : rc;
}

int
gw_op_logout(gw *g, const wb_obj *req, wb_obj *rep)
{
	return gw_account_end_reply(g, WB_OP_USER_LOGOUT, req, rep);
}

int
gw_op_logout_all(gw *g, const wb_obj *req, wb_obj *rep)
{
	return gw_account_end_reply(g, WB_OP_USER_LOGOUT_ALL, req, rep);
}

int
gw_op_change_password(gw *g, const wb_obj *req, wb_obj *rep, const char *addr)
{
	wb_obj     *r;
	const char *tok;
	size_t      len;
	int         rc;

	if ((rc = gw_account_need(req, WB_F_PASSWORD, WB_F_NEW_PASSWORD, rep)) != WB_OK ||
	    (rc = gw_account_end(g, WB_OP_USER_PASSWORD, req, rep, addr, &r)) != WB_OK) {
		return rc;
	}
	if (!wb_get_str(r, WB_F_TOKEN, &tok, &len)) {
		wb_msg_free(r);
		wb_reply_error(rep, WB_EINTERNAL, "user service gave no token");
		return WB_EINTERNAL;
	}
	if ((rc = wb_reply_ok(rep)) != WB_OK ||
	    (rc = wb_set_u64(rep, WB_F_UID, wb_u64(r, WB_F_UID, 0))) != WB_OK ||
	    (rc = wb_set_str(rep, WB_F_TOKEN, tok, len)) != WB_OK) {
		wb_reply_error(rep, rc, NULL);
	}
	wb_msg_free(r);
	return rc;
}

int
gw_op_whoami(gw *g, const wb_obj *req, wb_obj *rep)
{
	uint64_t uid;
	int      rc;

	if ((rc = gw_auth(g, req, &uid, rep)) != WB_OK) {
		return rc;
	}
	return gw_profile_fill(g, uid, 0, rep);
}

int
gw_op_update_profile(gw *g, const wb_obj *req, wb_obj *rep)
{
	const char *s;
	size_t      n;
	uint64_t    uid;
	wb_obj     *q, *r;
	int         rc;

	if ((rc = gw_auth(g, req, &uid, rep)) != WB_OK) {
		return rc;
	}
	if ((q = wb_request(WB_OP_USER_UPDATE)) == NULL) {
		wb_reply_error(rep, WB_ENOMEM, NULL);
		return WB_ENOMEM;
	}
	rc = wb_set_u64(q, WB_F_UID, uid);
	if (rc == WB_OK && wb_get_str(req, WB_F_DISPLAY, &s, &n)) {
		rc = wb_set_str(q, WB_F_DISPLAY, s, n);
	}
	if (rc == WB_OK && wb_get_str(req, WB_F_BIO, &s, &n)) {
		rc = wb_set_str(q, WB_F_BIO, s, n);
	}
	if (rc != WB_OK) {
		wb_msg_free(q);
		wb_reply_error(rep, rc, NULL);
		return rc;
	}
	if ((rc = gw_call(WB_SVC_USER, gw_user(g), q, &r, rep)) != WB_OK) {
		return rc;
	}
	wb_msg_free(r);
	return gw_profile_fill(g, uid, 0, rep);
}

/*
 * gw_op_delete_account: delete_account {token, password} -> {}.  The
 * user service checks the password (limited as a login is), closes the
 * account and logs its deletion; here the feed is pulled before the
 * reply, so the account's sessions and name are gone from this gateway
 * at once (from the others within WARBLE_SESSION_CHECK_MS).
 */
int
gw_op_delete_account(gw *g, const wb_obj *req, wb_obj *rep, const char *addr)
{
	wb_obj *r;
	int     rc;

	if (!wb_has(req, WB_F_PASSWORD)) {
		wb_reply_error(rep, WB_EINVAL, "the password is required");
		return WB_EINVAL;
	}
	if ((rc = gw_account_end(g, WB_OP_USER_DELETE, req, rep, addr, &r)) != WB_OK) {
		return rc;
	}
	wb_msg_free(r);
	return wb_reply_ok(rep);
}
