/*
 * user_keys.c - the Ed25519 keys that sign session tokens, their rotation,
 * and user.session_keys, which hands gateways the public halves only.
 *
 * The current key signs every new token; a key retired by a rotation
 * still verifies the tokens it signed until the last of them has expired
 * (retired + session lifetime), then it is deleted.  A rotation with
 * `revoke` deletes the earlier keys at once, ending every session they
 * signed.  The private keys never leave this service: no operation
 * returns one.  Layout in user_schema.h (meta "sign/<kid>").
 */
#include <stdio.h>
#include <string.h>

#include "rt_log.h"
#include "user_int.h"
#include "user_schema.h"
#include "wb_clock.h"

#define USER_KEY_VALUE (WB_SESSION_SK_LEN + 8) /* sk | retired ms (8 BE) */

/* user_keys_row writes the meta row of kid ("sign/00001") into row; its length. */
static size_t
user_keys_row(char row[16], uint16_t kid)
{
	return (size_t)snprintf(row, 16, "%s%05u", USER_META_SIGN, (unsigned)kid);
}

/* user_keys_until returns the ms until which k verifies tokens (UINT64_MAX for the current key). */
static uint64_t
user_keys_until(const user_svc *u, const user_key *k)
{
	return k->retired_ms == 0 ? UINT64_MAX : k->retired_ms + u->opts.session_ttl_ms;
}

/* user_keys_put adds k's cell to b. */
static int
user_keys_put(user_svc *u, hb_batch *b, const user_key *k)
{
	uint8_t val[USER_KEY_VALUE];
	char    row[16];
	int     rc;

	memcpy(val, k->sk, WB_SESSION_SK_LEN);
	hb_u64_be(val + WB_SESSION_SK_LEN, k->retired_ms);
	rc = hb_batch_put(b, u->t, USER_FAM_META, row, user_keys_row(row, k->kid), NULL, 0,
	    USER_VERSION, val, sizeof(val));
	sodium_memzero(val, sizeof(val));
	return rc;
}

/*
 * user_keys_new makes a fresh current key, its id one above every key of
 * u's: taken before any key is dropped, so an id is never used again (the
 * current key always holds the highest).
 */
static void
user_keys_new(const user_svc *u, user_key *k)
{
	uint16_t kid = 0;

	for (size_t i = 0; i < u->nkeys; i++) {
		kid = u->keys[i].kid > kid ? u->keys[i].kid : kid;
	}
	memset(k, 0, sizeof(*k));
	k->kid = (uint16_t)(kid + 1 != 0 ? kid + 1 : 1);
	wb_session_keypair(k->pk, k->sk);
}

/* user_keys_read reads every stored key into u->keys (at most USER_KEYS_MAX). */
static int
user_keys_read(user_svc *u)
{
	hb_scan_opts o = { 0 };
	hb_scan     *sc = NULL;
	hb_cell      c;
	int          rc;

	o.row_prefix = USER_META_SIGN;
	o.row_prefix_len = strlen(USER_META_SIGN);
	u->nkeys = 0;
	rc = hb_scan_open(&sc, u->t, USER_FAM_META, &o);
	while (rc == WB_OK && (rc = hb_scan_next(sc, &c)) == WB_OK) {
		unsigned kid;
		char     row[16];
		if (c.value_len != USER_KEY_VALUE || c.row_len >= sizeof(row) ||
		    u->nkeys == USER_KEYS_MAX) {
			rc = WB_ECORRUPT;
			break;
		}
		memcpy(row, c.row, c.row_len);
		row[c.row_len] = '\0';
		if (sscanf(row + strlen(USER_META_SIGN), "%5u", &kid) != 1 || kid == 0 ||
		    kid > UINT16_MAX) {
			rc = WB_ECORRUPT;
			break;
		}
		user_key *k = &u->keys[u->nkeys++];
		k->kid = (uint16_t)kid;
		memcpy(k->sk, c.value, WB_SESSION_SK_LEN);
		crypto_sign_ed25519_sk_to_pk(k->pk, k->sk);
		k->retired_ms = hb_be_u64((const uint8_t *)c.value + WB_SESSION_SK_LEN);
	}
	hb_scan_close(sc);
	return rc == WB_EEND ? WB_OK : rc;
}

/*
 * user_keys_commit writes the key set after a change: every key in
 * u->keys, the deletion of each stored key not kept (dropped), and the
 * legacy MAC key's deletion, in one batch.
 */
static int
user_keys_commit(user_svc *u, const user_key *dropped, size_t ndropped)
{
	hb_batch *b;
	char      row[16];
	int       rc = hb_batch_new(&b);

	for (size_t i = 0; rc == WB_OK && i < u->nkeys; i++) {
		rc = user_keys_put(u, b, &u->keys[i]);
	}
	for (size_t i = 0; rc == WB_OK && i < ndropped; i++) {
		rc = hb_batch_delete_row(
		    b, u->t, USER_FAM_META, row, user_keys_row(row, dropped[i].kid));
	}
	if (rc == WB_OK) {
		rc = hb_batch_delete_row(
		    b, u->t, USER_FAM_META, USER_META_MAC_KEY, strlen(USER_META_MAC_KEY));
	}
	if (rc == WB_OK) {
		rc = hb_write(u->t, b);
	}
	hb_batch_free(b);
	return rc;
}

/*
 * user_keys_prune keeps in u->keys the current key and the retired keys
 * still within their overlap (all retired ones go if revoke), and copies
 * the others into dropped (USER_KEYS_MAX entries); their count.
 */
static size_t
user_keys_prune(user_svc *u, uint64_t now_ms, bool revoke, user_key *dropped)
{
	size_t kept = 0, nd = 0;

	for (size_t i = 0; i < u->nkeys; i++) {
		const user_key *k = &u->keys[i];
		if (k->retired_ms == 0 || (!revoke && user_keys_until(u, k) > now_ms)) {
			u->keys[kept++] = *k;
		} else {
			dropped[nd++] = *k;
		}
	}
	u->nkeys = kept;
	return nd;
}

/*
 * user_keys_rotate_locked retires the current key (or, with revoke, every
 * earlier key) and makes a new current one.  Called with keys_lock held
 * for writing.
 */
static int
user_keys_rotate_locked(user_svc *u, uint64_t now_ms, bool revoke)
{
	user_key dropped[USER_KEYS_MAX], fresh, saved[USER_KEYS_MAX];
	size_t   nsaved = u->nkeys, nd;
	int      rc;

	memcpy(saved, u->keys, sizeof(saved));
	user_keys_new(u, &fresh);
	for (size_t i = 0; i < u->nkeys; i++) {
		if (u->keys[i].retired_ms == 0) {
			u->keys[i].retired_ms = now_ms;
		}
	}
	nd = user_keys_prune(u, now_ms, revoke, dropped);
	if (u->nkeys == USER_KEYS_MAX) {
		/* too many rotations within one session lifetime: the oldest goes early */
		dropped[nd++] = u->keys[0];
		memmove(u->keys, u->keys + 1, (u->nkeys - 1) * sizeof(u->keys[0]));
		u->nkeys--;
	}
	u->keys[u->nkeys++] = fresh;
	if ((rc = user_keys_commit(u, dropped, nd)) != WB_OK) {
		memcpy(u->keys, saved, sizeof(saved));
		u->nkeys = nsaved;
	}
	sodium_memzero(dropped, sizeof(dropped));
	sodium_memzero(saved, sizeof(saved));
	sodium_memzero(&fresh, sizeof(fresh));
	return rc;
}

int
user_keys_load(user_svc *u)
{
	user_key dropped[USER_KEYS_MAX];
	size_t   nd, current = 0;
	int      rc;

	if ((rc = user_keys_read(u)) != WB_OK) {
		return rc;
	}
	nd = user_keys_prune(u, wb_now_ms(), false, dropped);
	for (size_t i = 0; i < u->nkeys; i++) {
		current += u->keys[i].retired_ms == 0;
	}
	if (current != 1) {
		/* a fresh store (or the keyed-hash tokens of an earlier release) */
		rc = current == 0 ? user_keys_rotate_locked(u, wb_now_ms(), false) : WB_ECORRUPT;
	} else if (nd > 0) {
		rc = user_keys_commit(u, dropped, nd);
	}
	sodium_memzero(dropped, sizeof(dropped));
	return rc;
}

/* user_keys_current returns the current key (keys_lock held). */
static const user_key *
user_keys_current(const user_svc *u)
{
	for (size_t i = 0; i < u->nkeys; i++) {
		if (u->keys[i].retired_ms == 0) {
			return &u->keys[i];
		}
	}
	return NULL; /* never: user_keys_load and rotations keep one */
}

int
user_keys_sign(user_svc *u, wb_session *s, char *token)
{
	const user_key *k;

	pthread_rwlock_rdlock(&u->keys_lock);
	if ((k = user_keys_current(u)) != NULL) {
		s->kid = k->kid;
		wb_session_sign(token, s, k->sk);
	}
	pthread_rwlock_unlock(&u->keys_lock);
	return k != NULL ? WB_OK : WB_EINTERNAL;
}

int
user_keys_verify(user_svc *u, wb_session *s, const char *tok, size_t len)
{
	uint8_t pk[WB_SESSION_PK_LEN];
	bool    found = false;

	if (wb_session_parse(s, tok, len) != WB_OK) {
		return WB_EAUTH;
	}
	pthread_rwlock_rdlock(&u->keys_lock);
	for (size_t i = 0; i < u->nkeys && !found; i++) {
		if ((found = u->keys[i].kid == s->kid)) {
			memcpy(pk, u->keys[i].pk, sizeof(pk));
		}
	}
	pthread_rwlock_unlock(&u->keys_lock);
	return found ? wb_session_verify(s, tok, len, pk, wb_now_ms()) : WB_EAUTH;
}

uint16_t
user_keys_current_id(user_svc *u)
{
	const user_key *k;
	uint16_t        kid;

	pthread_rwlock_rdlock(&u->keys_lock);
	k = user_keys_current(u);
	kid = k != NULL ? k->kid : 0;
	pthread_rwlock_unlock(&u->keys_lock);
	return kid;
}

void
user_keys_wipe(user_svc *u)
{
	sodium_memzero(u->keys, sizeof(u->keys));
	u->nkeys = 0;
}

/*
 * user_handle_session_keys: user.session_keys {} -> {kid, keys}: the
 * current key's id, and every key that still verifies tokens as {kid,
 * key (the public key, base64url), until (ms; absent for the current)}.
 */
int
user_handle_session_keys(void *arg, const wb_obj *req, wb_obj *rep)
{
	user_svc *u = arg;
	wb_obj   *keys;
	char      b64[sodium_base64_ENCODED_LEN(
	         WB_SESSION_PK_LEN, sodium_base64_VARIANT_URLSAFE_NO_PADDING)];
	int       rc = WB_OK;

	(void)req;
	wb_reply_ok(rep);
	pthread_rwlock_rdlock(&u->keys_lock);
	const user_key *cur = user_keys_current(u);
	if ((keys = wb_add_objs(rep, WB_F_KEYS, u->nkeys)) == NULL ||
	    wb_set_u64(rep, WB_F_KID, cur != NULL ? cur->kid : 0) != WB_OK) {
		rc = WB_ENOMEM;
	}
	for (size_t i = 0; rc == WB_OK && i < u->nkeys; i++) {
		const user_key *k = &u->keys[i];
		sodium_bin2base64(b64, sizeof(b64), k->pk, WB_SESSION_PK_LEN,
		    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
		if ((rc = wb_set_u64(&keys[i], WB_F_KID, k->kid)) == WB_OK &&
		    (rc = wb_set_cstr(&keys[i], WB_F_KEY, b64)) == WB_OK && k->retired_ms != 0) {
			rc = wb_set_u64(&keys[i], WB_F_UNTIL, user_keys_until(u, k));
		}
	}
	pthread_rwlock_unlock(&u->keys_lock);
	return rc != WB_OK ? user_fail(rep, rc, NULL) : WB_OK;
}

/*
 * user_handle_rotate_key: user.rotate_key {revoke?} -> {kid}: a new
 * current key; the earlier one verifies its tokens until they expire, or,
 * with revoke, every earlier key is deleted now and its sessions end.
 */
int
user_handle_rotate_key(void *arg, const wb_obj *req, wb_obj *rep)
{
	user_svc *u = arg;
	bool      revoke = false;
	uint16_t  kid;
	int       rc;

	wb_get_bool(req, WB_F_REVOKE, &revoke);
	pthread_rwlock_wrlock(&u->keys_lock);
	rc = user_keys_rotate_locked(u, wb_now_ms(), revoke);
	kid = user_keys_current(u)->kid;
	pthread_rwlock_unlock(&u->keys_lock);
	if (rc != WB_OK) {
		RT_ERRORF("session key rotation failed: %s %s", wb_strerror(rc), hb_last_error());
		return user_fail(rep, rc, NULL);
	}
	RT_WARNF("session signing key rotated: key %u signs from now on%s", (unsigned)kid,
	    revoke ? "; every earlier key was revoked, ending its sessions" : "");
	wb_reply_ok(rep);
	return wb_set_u64(rep, WB_F_KID, kid);
}
