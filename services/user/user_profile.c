/*
 * user_profile.c - public user records: batch get, lookup by name, and
 * profile updates.
 */
#include <string.h>

#include "rt_log.h"
#include "user_schema.h"
#include "user_check.h"
#include "user_int.h"

/*
 * user_handle_get: user.get {uids} -> {users, missing}.  Records come in
 * request order; uids with no account are listed in missing.
 */
int
user_handle_get(void *arg, const wb_obj *req, wb_obj *rep)
{
	user_svc       *u = arg;
	const uint64_t *uids;
	size_t          n = 0, found = 0, nmissing = 0;
	uint64_t        missing[USER_GET_MAX];
	wb_obj         *recs = NULL;
	int             rc;

	if (!wb_get_u64s(req, WB_F_UIDS, &uids, &n)) {
		n = 0;
	}
	if (n > USER_GET_MAX) {
		wb_reply_error(
		    rep, WB_EINVAL, "user.get takes at most %d uids, got %zu", USER_GET_MAX, n);
		return WB_EINVAL;
	}
	wb_reply_ok(rep);
	if (n > 0 && (recs = wb_add_objs(rep, WB_F_USERS, n)) == NULL) {
		return user_fail(rep, WB_ENOMEM, NULL);
	}
	for (size_t i = 0; i < n; i++) {
		rc = user_record_load(u, uids[i], &recs[found]);
		if (rc == WB_OK) {
			found++;
		} else if (rc == WB_ENOTFOUND) {
			/* reuse the object for the next record: empty it */
			static const wb_field fields[] = { WB_F_UID, WB_F_NAME, WB_F_DISPLAY,
				WB_F_BIO, WB_F_CREATED };
			for (size_t k = 0; k < sizeof(fields) / sizeof(fields[0]); k++) {
				wb_del(&recs[found], fields[k]);
			}
			missing[nmissing++] = uids[i];
		} else {
			return user_fail(rep, rc, NULL);
		}
	}
	if (n > 0) {
		wb_shrink(rep, WB_F_USERS, found);
	}
	if (nmissing > 0) {
		return wb_set_u64s(rep, WB_F_MISSING, missing, nmissing);
	}
	return WB_OK;
}

/* user_handle_lookup: user.lookup {name} -> {uid, users: [record]}. */
int
user_handle_lookup(void *arg, const wb_obj *req, wb_obj *rep)
{
	user_svc   *u = arg;
	const char *name = NULL;
	size_t      len = 0;
	char        lname[USER_NAME_MAX + 1];
	uint64_t    uid;
	wb_obj     *rec;
	int         rc;

	wb_get_str(req, WB_F_NAME, &name, &len);
	if (user_name_normalize(lname, name, len) != WB_OK) {
		return user_fail(rep, WB_ENOUSER, NULL);
	}
	rc = user_name_uid(u, lname, &uid);
	if (rc == WB_ENOTFOUND) {
		return user_fail(rep, WB_ENOUSER, NULL);
	}
	if (rc != WB_OK) {
		return user_fail(rep, rc, NULL);
	}
	wb_reply_ok(rep);
	if ((rc = wb_set_u64(rep, WB_F_UID, uid)) != WB_OK) {
		return user_fail(rep, rc, NULL);
	}
	if ((rec = wb_add_objs(rep, WB_F_USERS, 1)) == NULL) {
		return user_fail(rep, WB_ENOMEM, NULL);
	}
	rc = user_record_load(u, uid, rec);
	if (rc == WB_ENOTFOUND) {
		rc = WB_ECORRUPT; /* a name row without its account */
	}
	if (rc != WB_OK) {
		return user_fail(rep, rc, NULL);
	}
	return WB_OK;
}

/* user_handle_update: user.update {uid, display?, bio?} -> {}. */
int
user_handle_update(void *arg, const wb_obj *req, wb_obj *rep)
{
	user_svc   *u = arg;
	uint64_t    uid = wb_u64(req, WB_F_UID, 0);
	const char *display = NULL, *bio = NULL, *why = NULL;
	size_t      display_len = 0, bio_len = 0;
	uint8_t     row[8];
	hb_batch   *b;
	int         rc;

	bool has_display = wb_get_str(req, WB_F_DISPLAY, &display, &display_len);
	bool has_bio = wb_get_str(req, WB_F_BIO, &bio, &bio_len);
	if (has_display && user_display_check(display, display_len, &why) != WB_OK) {
		return user_fail(rep, WB_EINVAL, why);
	}
	if (has_bio && user_bio_check(bio, bio_len, &why) != WB_OK) {
		return user_fail(rep, WB_EINVAL, why);
	}
	hb_u64_be(row, uid);
	if ((rc = hb_batch_new(&b)) != WB_OK) {
		return user_fail(rep, rc, NULL);
	}
	/* under alloc_mu, with the account there: its cells outlive no deletion */
	pthread_mutex_lock(&u->alloc_mu);
	rc = user_account_live(u, uid);
	if (rc == WB_OK && has_display) {
		rc = hb_batch_put(b, u->t, USER_FAM_INFO, row, sizeof(row), USER_Q_DISPLAY,
		    strlen(USER_Q_DISPLAY), USER_VERSION, display, display_len);
	}
	if (rc == WB_OK && has_bio) {
		rc = hb_batch_put(b, u->t, USER_FAM_INFO, row, sizeof(row), USER_Q_BIO,
		    strlen(USER_Q_BIO), USER_VERSION, bio, bio_len);
	}
	if (rc == WB_OK && hb_batch_count(b) > 0) {
		rc = hb_write(u->t, b);
	}
	pthread_mutex_unlock(&u->alloc_mu);
	hb_batch_free(b);
	if (rc == WB_ENOUSER) {
		return user_fail(rep, rc, NULL);
	}
	if (rc != WB_OK) {
		RT_ERRORF("update of uid %llu failed: %s %s", (unsigned long long)uid,
		    wb_strerror(rc), hb_last_error());
		return user_fail(rep, rc, NULL);
	}
	return wb_reply_ok(rep);
}
