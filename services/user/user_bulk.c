/*
 * user_bulk.c - user.register_many {name, from, limit, password}: the
 * load generator's setup path, registering the accounts name<from> ..
 * name<from + limit - 1> (at most USER_BULK_MAX) in one batch.
 *
 * Each account gets exactly what user.register writes (name claim, info
 * cells, uid counter) after the same checks (name syntax, name not
 * taken, password length), all under alloc_mu.  The one difference, and
 * the reason this op exists: the password is hashed once (argon2id,
 * with the service's cost and a fresh salt) and that hash is stored for
 * every account of the call, so a million load-test accounts cost one
 * hash per 10,000 instead of one each.  Every account logs in with the
 * given password.  Internal only (the gateway does not route it): the
 * service's URL must stay reachable only from the cluster.
 *
 *   reply: {uids: [uid of name<from>, ...]}; any name taken or invalid
 *   fails the whole call and writes nothing.
 */
#include <stdio.h>
#include <string.h>

#include "rt_log.h"
#include "user_schema.h"
#include "user_check.h"
#include "user_int.h"
#include "wb_clock.h"

#define USER_BULK_MAX 10000 /* accounts per user.register_many */

/* user_bulk_name writes name<num> normalized into out (USER_NAME_MAX + 1). */
static int
user_bulk_name(char *out, const char *prefix, uint64_t num)
{
	char raw[64];
	int  n = snprintf(raw, sizeof(raw), "%s%llu", prefix, (unsigned long long)num);

	if (n < 0 || (size_t)n >= sizeof(raw)) {
		return WB_EBADNAME;
	}
	return user_name_normalize(out, raw, (size_t)n);
}

/* user_bulk_write claims the names and writes the accounts under alloc_mu; uids[i] gets each uid. */
static int
user_bulk_write(
    user_svc *u, const char *prefix, uint64_t from, size_t n, const char *hash, uint64_t *uids)
{
	hb_batch *b;
	uint8_t   created[8];
	char      lname[USER_NAME_MAX + 1];
	uint64_t  uid;
	int       rc;

	if ((rc = hb_batch_new(&b)) != WB_OK) {
		return rc;
	}
	hb_u64_be(created, wb_now_ms());
	pthread_mutex_lock(&u->alloc_mu);
	uid = u->last_uid;
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		if ((rc = user_bulk_name(lname, prefix, from + i)) != WB_OK) {
			break;
		}
		if ((rc = user_name_free(u, lname)) != WB_OK) {
			break;
		}
		uid++;
		rc = user_account_put(u, b, uid, lname, hash, created);
		uids[i] = uid;
	}
	if (rc == WB_OK) {
		rc = user_account_commit(u, b, uid);
	}
	pthread_mutex_unlock(&u->alloc_mu);
	hb_batch_free(b);
	return rc;
}

/* user_handle_register_many: user.register_many {name, from, limit, password} -> {uids}. */
int
user_handle_register_many(void *arg, const wb_obj *req, wb_obj *rep)
{
	user_svc   *u = arg;
	const char *prefix = NULL, *pw = NULL;
	size_t      prefix_len = 0, pw_len = 0;
	uint64_t    from = wb_u64(req, WB_F_FROM, 0), n = wb_u64(req, WB_F_LIMIT, 0);
	char        lname[USER_NAME_MAX + 1];
	char        hash[crypto_pwhash_STRBYTES];
	uint64_t   *uids;
	int         rc;

	wb_get_str(req, WB_F_NAME, &prefix, &prefix_len);
	wb_get_str(req, WB_F_PASSWORD, &pw, &pw_len);
	if (n == 0 || n > USER_BULK_MAX) {
		wb_reply_error(rep, WB_EINVAL, "limit must be 1 to %d accounts", USER_BULK_MAX);
		return WB_EINVAL;
	}
	if (prefix_len > USER_NAME_MAX || memchr(prefix, '\0', prefix_len) != NULL ||
	    user_bulk_name(lname, prefix, from) != WB_OK ||
	    user_bulk_name(lname, prefix, from + n - 1) != WB_OK) {
		return user_fail(rep, WB_EBADNAME, NULL);
	}
	if (user_password_check(pw_len) != WB_OK) {
		return user_fail(rep, WB_EBADPASS, "password must be 8 to 1024 bytes long");
	}
	if (crypto_pwhash_str(hash, pw, pw_len, u->opts.pwhash_ops, u->opts.pwhash_mem) != 0) {
		return user_fail(rep, WB_ENOMEM, "password hashing ran out of memory");
	}
	wb_reply_ok(rep);
	if ((uids = wb_add_u64s(rep, WB_F_UIDS, n)) == NULL) {
		sodium_memzero(hash, sizeof(hash));
		return user_fail(rep, WB_ENOMEM, NULL);
	}
	rc = user_bulk_write(u, prefix, from, n, hash, uids);
	sodium_memzero(hash, sizeof(hash));
	if (rc != WB_OK) {
		if (rc != WB_EEXIST && rc != WB_EBADNAME) {
			RT_ERRORF("register_many %s%llu.. failed: %s %s", prefix,
			    (unsigned long long)from, wb_strerror(rc), hb_last_error());
		}
		return user_fail(rep, rc, NULL);
	}
	RT_INFOF("registered %llu accounts %s%llu.. (uids %llu..)", (unsigned long long)n, prefix,
	    (unsigned long long)from, (unsigned long long)uids[0]);
	return WB_OK;
}
