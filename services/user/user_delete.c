/*
 * user_delete.c - deleting an account: user.delete (the owner, with the
 * password), user.delete_name (the operator), the name hold, and
 * user.log, the log of deletions that relation, content and the inbox
 * follow to erase the account's data (docs/architecture.md, "Deleting an
 * account").
 *
 * The account closes in one atomic write, under alloc_mu (so no login,
 * registration or profile write interleaves):
 *
 *   delete info[uid] (name, password hash, created, display, bio, nb)
 *   delete name[name]
 *   put    hold[H(name)] = "", version now, TTL the name hold
 *   put    revoke[n]   = all    {uid, time nb}: every session ends
 *   put    revoke[n+1] = closed {uid, time nb}: gateways forget the name
 *   put    meta "revseq" = n + 1
 *   put    log[seq]    = {type "erase", uid, time}      (evlog_commit)
 *
 * so from then on the name does not log in and is free of the account,
 * user.get and user.lookup know no such user, and every gateway refuses
 * its sessions within WARBLE_SESSION_CHECK_MS (the one that served the
 * deletion before it replies).  H is crypto_generichash keyed with meta
 * "hold_key": the hold keeps no name, only a hash that can test a guess.
 * The rest (sessions here, edges, posts, images, inboxes) is erased in
 * the background from the log event.
 */
#include <stdio.h>
#include <string.h>

#include "rt_log.h"
#include "user_check.h"
#include "user_int.h"
#include "user_schema.h"
#include "wb_clock.h"
#include "wb_services.h"

int
user_hold_load(user_svc *u)
{
	hb_cell *c = NULL;
	int rc = hb_get(u->t, USER_FAM_META, USER_META_HOLD, strlen(USER_META_HOLD), NULL, 0, &c);

	if (rc == WB_OK) {
		rc = c->value_len == sizeof(u->hold_key) ? WB_OK : WB_ECORRUPT;
		if (rc == WB_OK) {
			memcpy(u->hold_key, c->value, sizeof(u->hold_key));
		}
		hb_cell_free(c);
		return rc;
	}
	if (rc != WB_ENOTFOUND) {
		return rc;
	}
	randombytes_buf(u->hold_key, sizeof(u->hold_key));
	return hb_put(u->t, USER_FAM_META, USER_META_HOLD, strlen(USER_META_HOLD), NULL, 0,
	    USER_VERSION, u->hold_key, sizeof(u->hold_key));
}

/* user_delete_batch adds to b what closes uid's account of name (the log event aside). */
static int
user_delete_batch(user_svc *u, hb_batch *b, uint64_t uid, const char *name, uint64_t now)
{
	uint8_t row[8], h[USER_HOLD_KEY];
	int     rc;

	hb_u64_be(row, uid);
	rc = hb_batch_delete_row(b, u->t, USER_FAM_INFO, row, 8);
	if (rc == WB_OK) {
		rc = hb_batch_delete_row(b, u->t, USER_FAM_NAME, name, strlen(name));
	}
	if (rc == WB_OK && u->opts.name_hold_ms > 0) {
		crypto_generichash(h, sizeof(h), (const unsigned char *)name, strlen(name),
		    u->hold_key, sizeof(u->hold_key));
		rc = hb_batch_put(b, u->t, USER_FAM_HOLD, h, sizeof(h), NULL, 0, now, "", 0);
	}
	return rc;
}

/*
 * user_delete_account closes the account uid (under alloc_mu: the caller
 * holds it), named name, in one write with its revocations and its log
 * event.
 */
static int
user_delete_account(user_svc *u, uint64_t uid, const char *name)
{
	hb_batch *b = NULL;
	wb_obj   *ev = wb_msg_new();
	uint64_t  nb = 0, until, seq = 0;
	int       rc = ev == NULL ? WB_ENOMEM : hb_batch_new(&b);

	if (rc == WB_OK) {
		rc = user_session_nb_next(u, uid, &nb);
	}
	until = nb + u->opts.session_ttl_ms;
	if (rc == WB_OK) {
		rc = user_delete_batch(u, b, uid, name, nb);
	}
	if (rc == WB_OK &&
	    ((rc = wb_set_cstr(ev, WB_F_TYPE, wb_event_name(WB_EV_ERASE))) != WB_OK ||
	        (rc = wb_set_u64(ev, WB_F_UID, uid)) != WB_OK ||
	        (wb_rid() != NULL && (rc = wb_set_cstr(ev, WB_F_RID, wb_rid())) != WB_OK))) {
		rc = WB_ENOMEM;
	}
	if (rc == WB_OK) {
		/* rev_mu across the write: revocation records commit in seq order */
		pthread_mutex_lock(&u->rev_mu);
		rc = user_revoke_put(u, b, u->rev_seq + 1, USER_REVOKE_ALL, uid, 0, nb, until);
		if (rc == WB_OK) {
			rc = user_revoke_put(
			    u, b, u->rev_seq + 2, USER_REVOKE_CLOSED, uid, 0, nb, until);
		}
		if (rc == WB_OK && (rc = evlog_commit(u->log, b, ev, &seq)) == WB_OK) {
			u->rev_seq += 2;
		}
		pthread_mutex_unlock(&u->rev_mu);
	}
	hb_batch_free(b);
	wb_msg_free(ev);
	if (rc == WB_OK) {
		RT_INFOF("uid %llu deleted (event %llu): its data is erased in the background",
		    (unsigned long long)uid, (unsigned long long)seq);
		user_erase_kick(u);
	} else {
		RT_ERRORF("deleting uid %llu failed: %s %s", (unsigned long long)uid,
		    wb_strerror(rc), hb_last_error());
	}
	return rc;
}

/* user_delete_named closes uid's account if it is still there under its name (taking alloc_mu). */
static int
user_delete_named(user_svc *u, uint64_t uid, wb_obj *rep)
{
	uint8_t  row[8];
	char     name[USER_NAME_MAX + 1];
	hb_cell *c = NULL;
	uint64_t named = 0;
	int      rc;

	hb_u64_be(row, uid);
	pthread_mutex_lock(&u->alloc_mu);
	rc = hb_get(u->t, USER_FAM_INFO, row, 8, USER_Q_NAME, strlen(USER_Q_NAME), &c);
	if (rc == WB_OK) {
		if (c->value_len == 0 || c->value_len > USER_NAME_MAX) {
			rc = WB_ECORRUPT;
		} else {
			memcpy(name, c->value, c->value_len);
			name[c->value_len] = '\0';
		}
		hb_cell_free(c);
	}
	if (rc == WB_OK && (rc = user_name_uid(u, name, &named)) == WB_OK && named != uid) {
		rc = WB_ECORRUPT; /* the name row names another account */
	}
	if (rc == WB_OK) {
		rc = user_delete_account(u, uid, name);
	}
	pthread_mutex_unlock(&u->alloc_mu);
	if (rc == WB_ENOTFOUND) {
		rc = WB_ENOUSER; /* deleted meanwhile */
	}
	if (rc != WB_OK) {
		return user_fail(rep, rc, NULL);
	}
	wb_reply_ok(rep);
	return wb_set_u64(rep, WB_F_UID, uid);
}

/*
 * user_handle_delete: user.delete {token, password, addr?} -> {uid}.  The
 * password must match, and its checks count against the limiter as a
 * login's do (user_limit.c): a wrong one is BAD_CREDENTIALS, too many
 * RATE_LIMITED with retry_ms.
 */
int
user_handle_delete(void *arg, const wb_obj *req, wb_obj *rep)
{
	user_svc   *u = arg;
	const char *pw = NULL, *addr = wb_str(req, WB_F_ADDR, "");
	size_t      pw_len = 0;
	uint64_t    uid = 0;
	char        who[32];
	int         rc;

	wb_get_str(req, WB_F_PASSWORD, &pw, &pw_len);
	{
		/* the session's uid: user.auth's answer */
		wb_obj *q = wb_msg_new();
		if (q == NULL) {
			return user_fail(rep, WB_ENOMEM, NULL);
		}
		rc = user_handle_auth(u, req, q);
		uid = wb_u64(q, WB_F_UID, 0);
		wb_msg_free(q);
		if (rc != WB_OK) {
			return user_fail(rep, rc, NULL);
		}
	}
	snprintf(who, sizeof(who), "uid %llu", (unsigned long long)uid);
	if (user_limit_check(u, "account deletion", uid, who, addr, rep) != WB_OK) {
		return WB_ERATE;
	}
	rc = pw_len > USER_PASS_MAX ? WB_ELOGIN : user_password_verify(u, uid, pw, pw_len);
	if (rc == WB_OK || rc == WB_ELOGIN) {
		user_limit_done(u, "account deletion", uid, who, addr, rc == WB_OK);
	}
	if (rc != WB_OK) {
		return user_fail(rep, rc, rc == WB_ELOGIN ? "the password is wrong" : NULL);
	}
	return user_delete_named(u, uid, rep);
}

/* user_handle_delete_name: user.delete_name {name} -> {uid}: the operator's, with no password. */
int
user_handle_delete_name(void *arg, const wb_obj *req, wb_obj *rep)
{
	user_svc   *u = arg;
	const char *name = NULL;
	size_t      len = 0;
	char        lname[USER_NAME_MAX + 1];
	uint64_t    uid;
	int         rc;

	wb_get_str(req, WB_F_NAME, &name, &len);
	if (user_name_normalize(lname, name, len) != WB_OK) {
		return user_fail(rep, WB_ENOUSER, NULL);
	}
	if ((rc = user_name_uid(u, lname, &uid)) != WB_OK) {
		return user_fail(rep, rc == WB_ENOTFOUND ? WB_ENOUSER : rc, NULL);
	}
	return user_delete_named(u, uid, rep);
}

/* user_handle_log: user.log {from, limit?} -> {events, last}. */
int
user_handle_log(void *arg, const wb_obj *req, wb_obj *rep)
{
	user_svc *u = arg;
	uint64_t  limit;
	int       rc;

	if ((rc = wb_page_limit(req, EVLOG_READ_MAX, EVLOG_READ_MAX, &limit, rep)) != WB_OK) {
		return rc;
	}
	wb_reply_ok(rep);
	if ((rc = evlog_read(u->log, wb_u64(req, WB_F_FROM, 1), (size_t)limit, rep)) != WB_OK) {
		return user_fail(rep, rc, NULL);
	}
	return WB_OK;
}
