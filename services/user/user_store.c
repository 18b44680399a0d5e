/*
 * user_store.c - the reads every handler shares: error replies, a name's
 * uid, a user's record and password check.  The bottom of the service:
 * it calls nothing of the handler files.
 */
#include <sodium.h>
#include <string.h>

#include "user_int.h"
#include "user_schema.h"

/* user_fail fills rep with an error and returns code. */
int
user_fail(wb_obj *rep, int code, const char *msg)
{
	if (msg != NULL) {
		wb_reply_error(rep, code, "%s", msg);
	} else {
		wb_reply_error(rep, code, NULL);
	}
	return code;
}

/* user_name_free tells whether a lowercased name may be registered: no account has it, and none
 * deleted within the name hold had it. */
int
user_name_free(user_svc *u, const char *name)
{
	uint8_t  h[USER_HOLD_KEY];
	uint64_t uid;
	hb_cell *c;
	int      rc = user_name_uid(u, name, &uid);

	if (rc != WB_ENOTFOUND) {
		return rc == WB_OK ? WB_EEXIST : rc;
	}
	crypto_generichash(h, sizeof(h), (const unsigned char *)name, strlen(name), u->hold_key,
	    sizeof(u->hold_key));
	rc = hb_get(u->t, USER_FAM_HOLD, h, sizeof(h), NULL, 0, &c);
	if (rc == WB_OK) {
		hb_cell_free(c);
		return WB_EEXIST;
	}
	return rc == WB_ENOTFOUND ? WB_OK : rc;
}

/* user_account_live tells whether uid's account exists: its name cell. */
int
user_account_live(user_svc *u, uint64_t uid)
{
	uint8_t  row[8];
	hb_cell *c;
	int      rc;

	hb_u64_be(row, uid);
	rc = hb_get(u->t, USER_FAM_INFO, row, 8, USER_Q_NAME, strlen(USER_Q_NAME), &c);
	if (rc == WB_OK) {
		hb_cell_free(c);
	}
	return rc == WB_ENOTFOUND ? WB_ENOUSER : rc;
}

/* user_name_uid looks up a lowercased username's uid. */
int
user_name_uid(user_svc *u, const char *name, uint64_t *uid)
{
	hb_cell *c;
	int      rc;

	rc = hb_get(u->t, USER_FAM_NAME, name, strlen(name), NULL, 0, &c);
	if (rc != WB_OK) {
		return rc;
	}
	if (c->value_len != 8) {
		hb_cell_free(c);
		return WB_ECORRUPT;
	}
	*uid = hb_be_u64(c->value);
	hb_cell_free(c);
	return WB_OK;
}

static bool
user_qual_is(const hb_cell *c, const char *q)
{
	size_t n = strlen(q);

	return c->qual_len == n && memcmp(c->qual, q, n) == 0;
}

/*
 * user_record_load reads every info cell of one user (a scan of its row)
 * into rec: uid, name, display, bio, created.  The password hash is
 * skipped.  Display and bio are "" until set.
 */
int
user_record_load(user_svc *u, uint64_t uid, wb_obj *rec)
{
	uint8_t      row[8];
	hb_scan_opts so = { 0 };
	hb_scan     *s;
	hb_cell      c;
	bool         named = false;
	int          rc;

	hb_u64_be(row, uid);
	so.row_prefix = row;
	so.row_prefix_len = sizeof(row);
	if ((rc = hb_scan_open(&s, u->t, USER_FAM_INFO, &so)) != WB_OK) {
		return rc;
	}
	rc = wb_set_u64(rec, WB_F_UID, uid);
	if (rc == WB_OK) {
		rc = wb_set_cstr(rec, WB_F_DISPLAY, "");
	}
	if (rc == WB_OK) {
		rc = wb_set_cstr(rec, WB_F_BIO, "");
	}
	while (rc == WB_OK && (rc = hb_scan_next(s, &c)) == WB_OK) {
		if (user_qual_is(&c, USER_Q_NAME)) {
			rc = wb_set_str(rec, WB_F_NAME, c.value, c.value_len);
			named = true;
		} else if (user_qual_is(&c, USER_Q_DISPLAY)) {
			rc = wb_set_str(rec, WB_F_DISPLAY, c.value, c.value_len);
		} else if (user_qual_is(&c, USER_Q_BIO)) {
			rc = wb_set_str(rec, WB_F_BIO, c.value, c.value_len);
		} else if (user_qual_is(&c, USER_Q_CREATED) && c.value_len == 8) {
			rc = wb_set_u64(rec, WB_F_CREATED, hb_be_u64(c.value));
		}
	}
	hb_scan_close(s);
	if (rc != WB_EEND) {
		return rc;
	}
	return named ? WB_OK : WB_ENOTFOUND;
}

/* user_password_verify checks pw against a user's stored hash (WB_ELOGIN if wrong). */
int
user_password_verify(user_svc *u, uint64_t uid, const char *pw, size_t pw_len)
{
	uint8_t  row[8];
	char     hash[crypto_pwhash_STRBYTES];
	hb_cell *c;
	int      rc;

	hb_u64_be(row, uid);
	rc = hb_get(u->t, USER_FAM_INFO, row, 8, USER_Q_PW, strlen(USER_Q_PW), &c);
	if (rc == WB_ENOTFOUND) {
		return WB_ECORRUPT; /* a name row without its account */
	}
	if (rc != WB_OK) {
		return rc;
	}
	if (c->value_len == 0 || c->value_len >= sizeof(hash)) {
		hb_cell_free(c);
		return WB_ECORRUPT;
	}
	memcpy(hash, c->value, c->value_len);
	hash[c->value_len] = '\0';
	hb_cell_free(c);
	rc = crypto_pwhash_str_verify(hash, pw, pw_len) == 0 ? WB_OK : WB_ELOGIN;
	sodium_memzero(hash, sizeof(hash));
	return rc;
}
