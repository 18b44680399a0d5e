/*
 * user_session.c - sessions: signed tokens, user.auth, logout, log out
 * everywhere, password change, and the revocation feed gateways pull.
 *
 * A session is live while its row exists (hash of the token -> uid, TTL =
 * session lifetime) and it began no earlier than the user's "nb" cell.
 * Every way a session ends before its expiry also appends a record to
 * the revoke family, numbered by seq, so that a gateway that checks
 * signed tokens itself (with the public keys of user.session_keys,
 * user_keys.c) learns of it by pulling user.revocations.  A deleted
 * account ends every session with it (user_delete.c): its records say
 * so ("all", then "closed"), and a session of an account that is gone is
 * no session.  Layouts in user_schema.h, tokens in wb_session.h.
 */
#include <stdio.h>
#include <string.h>

#include "rt_log.h"
#include "user_check.h"
#include "user_int.h"
#include "user_schema.h"
#include "wb_clock.h"

#define USER_REVOCATIONS_MAX 1000 /* most records one user.revocations returns */

/* user_meta_get reads a meta row of exactly len bytes into out (WB_ENOTFOUND if absent). */
static int
user_meta_get(user_svc *u, const char *row, void *out, size_t len)
{
	hb_cell *c;
	int      rc = hb_get(u->t, USER_FAM_META, row, strlen(row), NULL, 0, &c);

	if (rc != WB_OK) {
		return rc;
	}
	rc = c->value_len == len ? WB_OK : WB_ECORRUPT;
	if (rc == WB_OK) {
		memcpy(out, c->value, len);
	}
	hb_cell_free(c);
	return rc;
}

int
user_session_load(user_svc *u)
{
	uint8_t seq[8];
	int     rc = user_meta_get(u, USER_META_REV, seq, sizeof(seq));

	u->rev_seq = rc == WB_OK ? hb_be_u64(seq) : 0;
	return rc == WB_ENOTFOUND ? WB_OK : rc;
}

/* user_session_nb reads the ms before which every session of uid is void (0 if none). */
static int
user_session_nb(user_svc *u, uint64_t uid, uint64_t *nb)
{
	uint8_t  row[8];
	hb_cell *c;
	int      rc;

	hb_u64_be(row, uid);
	rc = hb_get(u->t, USER_FAM_INFO, row, 8, USER_Q_NB, strlen(USER_Q_NB), &c);
	*nb = 0;
	if (rc == WB_ENOTFOUND) {
		return WB_OK;
	}
	if (rc != WB_OK) {
		return rc;
	}
	if (c->value_len == 8) {
		*nb = hb_be_u64(c->value);
	}
	hb_cell_free(c);
	return WB_OK;
}

/*
 * user_session_nb_next gives the moment that voids every session of uid
 * begun so far: after now, and after the last such moment too, since a
 * login in that moment's millisecond began at it (user_session_new).
 */
int
user_session_nb_next(user_svc *u, uint64_t uid, uint64_t *nb)
{
	uint64_t now = wb_now_ms(), last;
	int      rc = user_session_nb(u, uid, &last);

	*nb = (now > last ? now : last) + 1;
	return rc;
}

int
user_session_new(user_svc *u, uint64_t uid, uint64_t now_ms, char *token)
{
	wb_session s;
	uint8_t    key[USER_TOKEN_HASH], val[8];
	uint64_t   nb;
	int        rc;

	/* A login in the same millisecond as a "log out everywhere" must not
	 * begin before the moment that voided the earlier sessions. */
	if ((rc = user_session_nb(u, uid, &nb)) != WB_OK) {
		return rc;
	}
	if (now_ms < nb) {
		now_ms = nb;
	}
	s = (wb_session) { 0, uid, wb_session_sid(now_ms), now_ms + u->opts.session_ttl_ms };
	if ((rc = user_keys_sign(u, &s, token)) != WB_OK ||
	    (rc = user_token_hash(key, token, WB_SESSION_TOKEN_LEN)) != WB_OK) {
		return WB_EINTERNAL;
	}
	hb_u64_be(val, uid);
	/* version = login time: the family's TTL counts from it */
	rc = hb_put(u->t, USER_FAM_SESSION, key, sizeof(key), NULL, 0, now_ms, val, sizeof(val));
	sodium_memzero(key, sizeof(key));
	return rc;
}

/* A session found by its token. */
typedef struct user_session {
	uint8_t  key[USER_TOKEN_HASH]; /* its row */
	uint64_t uid;
	uint64_t sid;
	uint64_t began_ms;   /* when it began */
	uint64_t expires_ms; /* when it ends */
} user_session;

/*
 * user_session_find finds the live session of req's token (WB_EAUTH if
 * forged, unknown, expired, revoked or signed by a key no longer in use):
 * its signature, then its session row, keyed by the token's hash.
 */
static int
user_session_find(user_svc *u, const wb_obj *req, user_session *s)
{
	const char *token = NULL;
	size_t      len = 0;
	uint64_t    nb;
	wb_session  ws;
	hb_cell    *c;
	int         rc;

	memset(s, 0, sizeof(*s));
	wb_get_str(req, WB_F_TOKEN, &token, &len);
	if (user_keys_verify(u, &ws, token, len) != WB_OK ||
	    user_token_hash(s->key, token, len) != WB_OK) {
		return WB_EAUTH;
	}
	rc = hb_get(u->t, USER_FAM_SESSION, s->key, USER_TOKEN_HASH, NULL, 0, &c);
	if (rc == WB_ENOTFOUND) {
		return WB_EAUTH;
	}
	if (rc != WB_OK) {
		return rc;
	}
	if (c->value_len != 8 || hb_be_u64(c->value) != ws.uid) {
		hb_cell_free(c);
		return WB_ECORRUPT;
	}
	hb_cell_free(c);
	s->uid = ws.uid;
	s->sid = ws.sid;
	s->began_ms = wb_session_began(ws.sid);
	s->expires_ms = ws.expires_ms;
	if ((rc = user_session_nb(u, s->uid, &nb)) != WB_OK) {
		return rc;
	}
	if (s->began_ms < nb) {
		return WB_EAUTH;
	}
	/* a deleted account's sessions end with it, before their rows are swept */
	rc = user_account_live(u, s->uid);
	return rc == WB_ENOUSER ? WB_EAUTH : rc;
}

int
user_revoke_put(user_svc *u, hb_batch *b, uint64_t seq, int kind, uint64_t uid, uint64_t sid,
    uint64_t time_ms, uint64_t until_ms)
{
	uint8_t row[8], val[USER_REVOKE_LEN], last[8];
	int     rc;

	val[0] = (uint8_t)kind;
	hb_u64_be(val + 1, uid);
	hb_u64_be(val + 9, sid);
	hb_u64_be(val + 17, time_ms);
	hb_u64_be(val + 25, until_ms);
	hb_u64_be(row, seq);
	hb_u64_be(last, seq);
	rc = hb_batch_put(b, u->t, USER_FAM_REVOKE, row, 8, NULL, 0, wb_now_ms(), val, sizeof(val));
	if (rc == WB_OK) {
		rc = hb_batch_put(b, u->t, USER_FAM_META, USER_META_REV, strlen(USER_META_REV),
		    NULL, 0, USER_VERSION, last, sizeof(last));
	}
	return rc;
}

/*
 * user_session_end writes b after adding to it the revocation record
 * (kind, uid, sid, time, until) under the next seq.  rev_mu is held
 * across the write so records commit in seq order: a gateway that has
 * read seq n never misses a record below n.
 */
static int
user_session_end(user_svc *u, hb_batch *b, int kind, uint64_t uid, uint64_t sid, uint64_t time_ms,
    uint64_t until_ms)
{
	int rc;

	pthread_mutex_lock(&u->rev_mu);
	rc = user_revoke_put(u, b, u->rev_seq + 1, kind, uid, sid, time_ms, until_ms);
	if (rc == WB_OK && (rc = hb_write(u->t, b)) == WB_OK) {
		u->rev_seq++;
	}
	pthread_mutex_unlock(&u->rev_mu);
	return rc;
}

/*
 * user_session_end_all voids every session of uid begun before nb (and
 * the calling session's row), adding b's other cells to the same write.
 */
static int
user_session_end_all(user_svc *u, hb_batch *b, const user_session *s, uint64_t nb)
{
	uint8_t row[8], val[8];
	int     rc;

	hb_u64_be(row, s->uid);
	hb_u64_be(val, nb);
	rc = hb_batch_put(
	    b, u->t, USER_FAM_INFO, row, 8, USER_Q_NB, strlen(USER_Q_NB), USER_VERSION, val, 8);
	if (rc == WB_OK) {
		rc = hb_batch_delete_row(b, u->t, USER_FAM_SESSION, s->key, sizeof(s->key));
	}
	if (rc == WB_OK) {
		rc = user_session_end(
		    u, b, USER_REVOKE_ALL, s->uid, 0, nb, nb + u->opts.session_ttl_ms);
	}
	return rc;
}

/*
 * user_session_logout ends the session of req's token, or with all every
 * session of its user, and replies {}.
 */
static int
user_session_logout(user_svc *u, const wb_obj *req, wb_obj *rep, bool all)
{
	user_session s;
	hb_batch    *b;
	int          rc;

	if ((rc = user_session_find(u, req, &s)) != WB_OK || (rc = hb_batch_new(&b)) != WB_OK) {
		return user_fail(rep, rc, NULL);
	}
	if (all) {
		/* every session begun up to now ends; one begun later is a new login.
		 * Under alloc_mu, with the account there: its nb cell outlives no deletion */
		uint64_t nb;
		pthread_mutex_lock(&u->alloc_mu);
		if ((rc = user_account_live(u, s.uid)) == WB_ENOUSER) {
			rc = WB_EAUTH;
		}
		if (rc == WB_OK && (rc = user_session_nb_next(u, s.uid, &nb)) == WB_OK) {
			rc = user_session_end_all(u, b, &s, nb);
		}
		pthread_mutex_unlock(&u->alloc_mu);
	} else if ((rc = hb_batch_delete_row(b, u->t, USER_FAM_SESSION, s.key, sizeof(s.key))) ==
	           WB_OK) {
		rc = user_session_end(
		    u, b, USER_REVOKE_SESSION, s.uid, s.sid, wb_now_ms(), s.expires_ms);
	}
	hb_batch_free(b);
	if (rc != WB_OK) {
		return user_fail(rep, rc, NULL);
	}
	if (all) {
		RT_INFOF("uid %llu logged out everywhere", (unsigned long long)s.uid);
	}
	return wb_reply_ok(rep);
}

/* user_handle_logout: user.logout {token} -> {}; the session is deleted. */
int
user_handle_logout(void *arg, const wb_obj *req, wb_obj *rep)
{
	return user_session_logout(arg, req, rep, false);
}

/* user_handle_logout_all: user.logout_all {token} -> {}; every session of the user ends. */
int
user_handle_logout_all(void *arg, const wb_obj *req, wb_obj *rep)
{
	return user_session_logout(arg, req, rep, true);
}

/*
 * user_handle_password: user.password {token, password, new_password,
 * addr?} -> {uid, token}.  The old password must match, and its checks
 * count against the same limiter as logins (user_limit.c); every session
 * of the user ends, and a new one begins for the caller, in one atomic
 * write.
 */
int
user_handle_password(void *arg, const wb_obj *req, wb_obj *rep)
{
	user_svc    *u = arg;
	user_session s;
	const char  *pw = NULL, *npw = NULL, *addr = wb_str(req, WB_F_ADDR, "");
	size_t       pw_len = 0, npw_len = 0;
	char         who[32];
	char         hash[crypto_pwhash_STRBYTES], token[WB_SESSION_TOKEN_LEN + 1];
	uint8_t      row[8], key[USER_TOKEN_HASH], val[8];
	uint64_t     nb;
	hb_batch    *b = NULL;
	int          rc;

	wb_get_str(req, WB_F_PASSWORD, &pw, &pw_len);
	wb_get_str(req, WB_F_NEW_PASSWORD, &npw, &npw_len);
	if ((rc = user_session_find(u, req, &s)) != WB_OK) {
		return user_fail(rep, rc, NULL);
	}
	if ((rc = user_password_check(npw_len)) != WB_OK) {
		return user_fail(rep, rc, NULL);
	}
	snprintf(who, sizeof(who), "uid %llu", (unsigned long long)s.uid);
	if (user_limit_check(u, "password change", s.uid, who, addr, rep) != WB_OK) {
		return WB_ERATE;
	}
	rc = pw_len > USER_PASS_MAX ? WB_ELOGIN : user_password_verify(u, s.uid, pw, pw_len);
	if (rc == WB_OK || rc == WB_ELOGIN) {
		user_limit_done(u, "password change", s.uid, who, addr, rc == WB_OK);
	}
	if (rc != WB_OK) {
		return user_fail(rep, rc, rc == WB_ELOGIN ? "the current password is wrong" : NULL);
	}
	if (crypto_pwhash_str(hash, npw, npw_len, u->opts.pwhash_ops, u->opts.pwhash_mem) != 0) {
		return user_fail(rep, WB_ENOMEM, NULL);
	}
	/* sessions begun up to now end; the caller's new one begins at nb.  Under
	 * alloc_mu, with the account there: its cells outlive no deletion */
	pthread_mutex_lock(&u->alloc_mu);
	if ((rc = user_account_live(u, s.uid)) != WB_OK ||
	    (rc = user_session_nb_next(u, s.uid, &nb)) != WB_OK) {
		pthread_mutex_unlock(&u->alloc_mu);
		sodium_memzero(hash, sizeof(hash));
		return user_fail(rep, rc == WB_ENOUSER ? WB_EAUTH : rc, NULL);
	}
	wb_session ns = { 0, s.uid, wb_session_sid(nb), nb + u->opts.session_ttl_ms };
	hb_u64_be(row, s.uid);
	hb_u64_be(val, s.uid);
	rc = user_keys_sign(u, &ns, token);
	if (rc == WB_OK) {
		rc = user_token_hash(key, token, WB_SESSION_TOKEN_LEN);
	}
	if (rc == WB_OK) {
		rc = hb_batch_new(&b);
	}
	if (rc == WB_OK) {
		rc = hb_batch_put(b, u->t, USER_FAM_INFO, row, 8, USER_Q_PW, strlen(USER_Q_PW),
		    USER_VERSION, hash, strlen(hash));
	}
	if (rc == WB_OK) {
		rc = hb_batch_put(
		    b, u->t, USER_FAM_SESSION, key, sizeof(key), NULL, 0, nb, val, sizeof(val));
	}
	if (rc == WB_OK) {
		rc = user_session_end_all(u, b, &s, nb);
	}
	pthread_mutex_unlock(&u->alloc_mu);
	hb_batch_free(b);
	sodium_memzero(hash, sizeof(hash));
	sodium_memzero(key, sizeof(key));
	if (rc == WB_OK) {
		RT_INFOF(
		    "uid %llu changed password; other sessions ended", (unsigned long long)s.uid);
		wb_reply_ok(rep);
		rc = wb_set_u64(rep, WB_F_UID, s.uid);
		if (rc == WB_OK) {
			rc = wb_set_str(rep, WB_F_TOKEN, token, WB_SESSION_TOKEN_LEN);
		}
	} else {
		user_fail(rep, rc, NULL);
	}
	sodium_memzero(token, sizeof(token));
	return rc;
}

/* user_handle_auth: user.auth {token} -> {uid}. */
int
user_handle_auth(void *arg, const wb_obj *req, wb_obj *rep)
{
	user_svc    *u = arg;
	user_session s;
	int          rc;

	if ((rc = user_session_find(u, req, &s)) != WB_OK) {
		return user_fail(rep, rc, NULL);
	}
	wb_reply_ok(rep);
	return wb_set_u64(rep, WB_F_UID, s.uid);
}

/*
 * user_handle_revocations: user.revocations {from, limit?} -> {events,
 * last}: the records with seq >= from, oldest first (each {seq, type
 * "session", "all" or "closed", uid, id = sid, time, until}), and the
 * last seq.
 * Records older than the session lifetime are gone: what they revoked
 * has expired anyway.  kid names the current signing key, so that a
 * gateway learns of a rotation (user.session_keys) with its next pull.
 */
int
user_handle_revocations(void *arg, const wb_obj *req, wb_obj *rep)
{
	user_svc    *u = arg;
	uint64_t     from = wb_u64(req, WB_F_FROM, 1), limit, last;
	uint8_t      start[8];
	hb_scan_opts o = { 0 };
	hb_scan     *sc = NULL;
	hb_cell      c;
	wb_obj      *ev;
	size_t       n = 0;
	int          rc;

	if ((rc = wb_page_limit(req, USER_REVOCATIONS_MAX, USER_REVOCATIONS_MAX, &limit, rep)) !=
	    WB_OK) {
		return rc;
	}
	pthread_mutex_lock(&u->rev_mu);
	last = u->rev_seq;
	pthread_mutex_unlock(&u->rev_mu);
	wb_reply_ok(rep);
	if ((rc = wb_set_u64(rep, WB_F_LAST, last)) != WB_OK ||
	    (rc = wb_set_u64(rep, WB_F_KID, user_keys_current_id(u))) != WB_OK) {
		return rc;
	}
	if ((ev = wb_add_objs(rep, WB_F_EVENTS, limit)) == NULL) {
		return WB_ENOMEM;
	}
	hb_u64_be(start, from);
	o.start_row = start;
	o.start_row_len = 8;
	o.limit = limit;
	rc = hb_scan_open(&sc, u->t, USER_FAM_REVOKE, &o);
	while (rc == WB_OK && n < limit && (rc = hb_scan_next(sc, &c)) == WB_OK) {
		const uint8_t *v = c.value;
		uint64_t       seq = hb_be_u64(c.row);
		if (c.row_len != 8 || c.value_len != USER_REVOKE_LEN || seq > last) {
			continue; /* a record being committed now is reported next time */
		}
		wb_obj *e = &ev[n++];
		if ((rc = wb_set_u64(e, WB_F_SEQ, seq)) != WB_OK ||
		    (rc = wb_set_cstr(e, WB_F_TYPE,
		         v[0] == USER_REVOKE_ALL      ? "all"
		         : v[0] == USER_REVOKE_CLOSED ? "closed"
		                                      : "session")) != WB_OK ||
		    (rc = wb_set_u64(e, WB_F_UID, hb_be_u64(v + 1))) != WB_OK ||
		    (rc = wb_set_u64(e, WB_F_ID, hb_be_u64(v + 9))) != WB_OK ||
		    (rc = wb_set_u64(e, WB_F_TIME, hb_be_u64(v + 17))) != WB_OK) {
			break;
		}
		rc = wb_set_u64(e, WB_F_UNTIL, hb_be_u64(v + 25));
	}
	hb_scan_close(sc);
	if (rc == WB_EEND) {
		rc = WB_OK;
	}
	wb_shrink(rep, WB_F_EVENTS, n);
	return rc;
}
