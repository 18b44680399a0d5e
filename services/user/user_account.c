/*
 * user_account.c - registration, password login and sessions.
 *
 * Passwords are hashed with argon2id (crypto_pwhash_str) on the server's
 * worker threads, outside any lock.  Neither passwords, nor tokens, nor
 * their hashes are ever logged.
 */
#include <string.h>

#include "rt_log.h"
#include "user_schema.h"
#include "user_check.h"
#include "user_int.h"
#include "wb_clock.h"

/* user_account_put adds one account's info cells and name claim to b (not the uid counter). */
int
user_account_put(user_svc *u, hb_batch *b, uint64_t uid, const char *name, const char *hash,
    const uint8_t created[8])
{
	uint8_t row[8], uidv[8];
	size_t  name_len = strlen(name);
	int     rc = WB_OK;
	const struct {
		const char *q;
		const void *v;
		size_t      n;
	} cells[] = {
		{ USER_Q_NAME, name, name_len },
		{ USER_Q_PW, hash, strlen(hash) },
		{ USER_Q_CREATED, created, 8 },
	};

	hb_u64_be(row, uid);
	hb_u64_be(uidv, uid);
	for (size_t i = 0; rc == WB_OK && i < sizeof(cells) / sizeof(cells[0]); i++) {
		rc = hb_batch_put(b, u->t, USER_FAM_INFO, row, sizeof(row), cells[i].q,
		    strlen(cells[i].q), USER_VERSION, cells[i].v, cells[i].n);
	}
	if (rc == WB_OK) {
		rc = hb_batch_put(
		    b, u->t, USER_FAM_NAME, name, name_len, NULL, 0, USER_VERSION, uidv, 8);
	}
	return rc;
}

/* user_account_commit adds the uid counter to b and writes b; last_uid follows. */
int
user_account_commit(user_svc *u, hb_batch *b, uint64_t uid)
{
	uint8_t uidv[8];
	int     rc;

	hb_u64_be(uidv, uid);
	rc = hb_batch_put(b, u->t, USER_FAM_META, USER_META_UID, strlen(USER_META_UID), NULL, 0,
	    USER_VERSION, uidv, 8);
	if (rc == WB_OK && (rc = hb_write(u->t, b)) == WB_OK) {
		u->last_uid = uid;
	}
	return rc;
}

/*
 * user_account_create writes a new account in one batch: the name claim,
 * the info cells and the uid counter.  The name is checked again and the
 * uid assigned under alloc_mu, so two registrations of one name (or two
 * at once of any names) can never collide.
 */
static int
user_account_create(user_svc *u, const char *name, const char *hash, uint64_t *uid_out)
{
	hb_batch *b;
	uint8_t   created[8];
	uint64_t  uid;
	int       rc;

	if ((rc = hb_batch_new(&b)) != WB_OK) {
		return rc;
	}
	hb_u64_be(created, wb_now_ms());
	pthread_mutex_lock(&u->alloc_mu);
	if ((rc = user_name_free(u, name)) == WB_OK) {
		uid = u->last_uid + 1;
		rc = user_account_put(u, b, uid, name, hash, created);
		if (rc == WB_OK && (rc = user_account_commit(u, b, uid)) == WB_OK) {
			*uid_out = uid;
		}
	}
	pthread_mutex_unlock(&u->alloc_mu);
	hb_batch_free(b);
	return rc;
}

/* user_handle_register: user.register {name, password, addr?} -> {uid}; addr's registrations are limited. */
int
user_handle_register(void *arg, const wb_obj *req, wb_obj *rep)
{
	user_svc   *u = arg;
	const char *name = NULL, *pw = NULL;
	size_t      name_len = 0, pw_len = 0;
	char        lname[USER_NAME_MAX + 1];
	char        hash[crypto_pwhash_STRBYTES];
	uint64_t    uid;
	int         rc;

	wb_get_str(req, WB_F_NAME, &name, &name_len);
	wb_get_str(req, WB_F_PASSWORD, &pw, &pw_len);
	if (user_name_normalize(lname, name, name_len) != WB_OK) {
		return user_fail(rep, WB_EBADNAME, NULL);
	}
	if (user_password_check(pw_len) != WB_OK) {
		return user_fail(rep, WB_EBADPASS, "password must be 8 to 1024 bytes long");
	}
	/* Cheap early answer for a taken (or held) name; checked again under the lock. */
	if ((rc = user_name_free(u, lname)) != WB_OK) {
		return user_fail(rep, rc, NULL);
	}
	if (user_limit_register(u, wb_str(req, WB_F_ADDR, ""), rep) != WB_OK) {
		return WB_ERATE;
	}
	if (crypto_pwhash_str(hash, pw, pw_len, u->opts.pwhash_ops, u->opts.pwhash_mem) != 0) {
		return user_fail(rep, WB_ENOMEM, "password hashing ran out of memory");
	}
	rc = user_account_create(u, lname, hash, &uid);
	sodium_memzero(hash, sizeof(hash));
	if (rc != WB_OK) {
		if (rc != WB_EEXIST) {
			RT_ERRORF(
			    "register %s failed: %s %s", lname, wb_strerror(rc), hb_last_error());
		}
		return user_fail(rep, rc, NULL);
	}
	RT_INFOF("registered %s as uid %llu", lname, (unsigned long long)uid);
	wb_reply_ok(rep);
	return wb_set_u64(rep, WB_F_UID, uid);
}

/*
 * user_handle_login: user.login {name, password, addr?} -> {uid, token}.
 * An unknown name costs the same work and gets the same answer as a wrong
 * password, and counts against the limiter alike (no enumeration).
 */
int
user_handle_login(void *arg, const wb_obj *req, wb_obj *rep)
{
	user_svc   *u = arg;
	const char *name = NULL, *pw = NULL, *addr = wb_str(req, WB_F_ADDR, "");
	size_t      name_len = 0, pw_len = 0;
	char        lname[USER_NAME_MAX + 1];
	char        token[WB_SESSION_TOKEN_LEN + 1];
	uint64_t    uid = 0;
	bool        named;
	int         rc;

	wb_get_str(req, WB_F_NAME, &name, &name_len);
	wb_get_str(req, WB_F_PASSWORD, &pw, &pw_len);
	named = user_name_normalize(lname, name, name_len) == WB_OK;
	rc = named ? user_name_uid(u, lname, &uid) : WB_EBADNAME;
	if (rc != WB_OK && rc != WB_ENOTFOUND && rc != WB_EBADNAME) {
		return user_fail(rep, rc, NULL);
	}
	if (named && user_limit_check(u, "login", uid, lname, addr, rep) != WB_OK) {
		return WB_ERATE;
	}
	if (rc == WB_OK && pw_len <= USER_PASS_MAX) {
		rc = user_password_verify(u, uid, pw, pw_len);
	} else {
		/* same work and the same answer as a wrong password (a password
		 * too long for any account is wrong for every name at once) */
		if (pw_len <= USER_PASS_MAX &&
		    crypto_pwhash_str_verify(u->dummy_hash, pw, pw_len) == 0) {
			RT_DEBUGF("a login matched the decoy hash");
		}
		rc = WB_ELOGIN;
	}
	if (named && (rc == WB_OK || rc == WB_ELOGIN)) {
		user_limit_done(u, "login", uid, lname, addr, rc == WB_OK);
	}
	if (rc == WB_OK) {
		/* under alloc_mu, the name still the account's: a session begun as the
		 * account is deleted would outlive it */
		uint64_t now_uid = 0;
		pthread_mutex_lock(&u->alloc_mu);
		if ((rc = user_name_uid(u, lname, &now_uid)) == WB_OK && now_uid != uid) {
			rc = WB_ENOTFOUND;
		}
		if (rc == WB_OK) {
			rc = user_session_new(u, uid, wb_now_ms(), token);
		}
		pthread_mutex_unlock(&u->alloc_mu);
		if (rc == WB_ENOTFOUND) {
			rc = WB_ELOGIN; /* deleted meanwhile: as if it never was */
		}
	}
	if (rc != WB_OK) {
		if (rc != WB_ELOGIN) {
			RT_ERRORF("login of uid %llu failed: %s %s", (unsigned long long)uid,
			    wb_strerror(rc), hb_last_error());
		}
		return user_fail(rep, rc, NULL);
	}
	wb_reply_ok(rep);
	rc = wb_set_u64(rep, WB_F_UID, uid);
	if (rc == WB_OK) {
		rc = wb_set_str(rep, WB_F_TOKEN, token, WB_SESSION_TOKEN_LEN);
	}
	sodium_memzero(token, sizeof(token));
	return rc;
}
