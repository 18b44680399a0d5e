/*
 * rel_bulk.c - rel.follow_many {target, uids}: each of uids follows
 * target, in one atomic batch.  The setup path of the load generator
 * (a celebrity with a million fans), with every invariant of rel.follow:
 *
 *   - every uid and the target must be users (user.get, 1000 at a time);
 *   - idempotent: a uid that already follows target changes nothing, a
 *     uid listed twice counts once;
 *   - counts exact: following += 1 per new edge, followers += new edges,
 *     in the same batch as the edges;
 *   - one "follow" event per new edge in the log, committed in that same
 *     batch (evlog_commit_many), so the inbox backfills each new fan;
 *   - the existence checks and the commit run under the stripe locks of
 *     every pair, taken in ascending order, so a concurrent rel.follow or
 *     rel.unfollow of one of the pairs sees all of it or none of it.
 *
 *   request:  {target, uids: [u1, u2, ...]}   at most REL_BULK_MAX uids
 *   reply:    {count: new edges}
 */
#include <stdlib.h>
#include <string.h>

#include "rel_int.h"
#include "rt_log.h"
#include "rel_schema.h"
#include "wb_services.h"

#define REL_BULK_MAX 10000 /* uids per rel.follow_many */
#define REL_BULK_ASK 1000  /* uids per user.get (USER_GET_MAX) */

/* rel_bulk_cmp orders uids ascending for qsort. */
static int
rel_bulk_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* rel_bulk_users_exist checks that every uid of v[0..n) names a user. */
static int
rel_bulk_users_exist(rel_svc *r, const uint64_t *v, size_t n)
{
	int rc = WB_OK;

	for (size_t off = 0; rc == WB_OK && off < n; off += REL_BULK_ASK) {
		size_t          k = n - off < REL_BULK_ASK ? n - off : REL_BULK_ASK;
		wb_obj         *req = wb_request(WB_OP_USER_GET), *rep = NULL;
		const uint64_t *missing;
		const wb_obj   *users;
		size_t          nmissing = 0, nusers = 0;

		if (req == NULL) {
			return WB_ENOMEM;
		}
		rc = wb_set_u64s(req, WB_F_UIDS, v + off, k);
		if (rc == WB_OK) {
			atomic_fetch_add(&r->user_calls, 1);
			rc = rt_call(r->bulk_users, req, &rep);
			if (rc != WB_OK && rc != WB_ETIMEDOUT) {
				rc = WB_EUNAVAIL;
			}
		}
		if (rc == WB_OK && wb_get_u64s(rep, WB_F_MISSING, &missing, &nmissing) &&
		    nmissing > 0) {
			rc = WB_ENOUSER;
		} else if (rc == WB_OK &&
		           (!wb_get_objs(rep, WB_F_USERS, &users, &nusers) || nusers != k)) {
			rc = WB_EUNAVAIL;
		}
		wb_msg_free(req);
		wb_msg_free(rep);
	}
	return rc;
}

/* rel_bulk_stripe is rel_write.c's stripe of the pair (uid, target), as an index. */
static size_t
rel_bulk_stripe(uint64_t uid, uint64_t target)
{
	uint64_t h = uid * UINT64_C(0x9E3779B97F4A7C15) ^ target;

	h ^= h >> 29;
	h *= UINT64_C(0xBF58476D1CE4E5B9);
	h ^= h >> 32;
	return (size_t)(h % REL_STRIPES);
}

/* rel_bulk_apply adds the new edges of uids[0..n) -> target and their events to b and commits; *count gets the new edges. */
static int
rel_bulk_apply(
    rel_svc *r, hb_batch *b, const uint64_t *uids, size_t n, uint64_t target, uint64_t *count)
{
	wb_obj **evs = calloc(n, sizeof(*evs));
	uint8_t  a[8], t[8], fq[REL_FAN_QUAL];
	size_t   k = 0;
	int      rc = evs == NULL ? WB_ENOMEM : WB_OK;

	*count = 0;
	hb_u64_be(t, target);
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		hb_cell *c;

		hb_u64_be(a, uids[i]);
		rc = hb_get(r->t, REL_FAM_FOLLOW, a, 8, t, 8, &c);
		if (rc == WB_OK) {
			hb_cell_free(c); /* already follows */
			continue;
		}
		if (rc != WB_ENOTFOUND) {
			break;
		}
		rc = hb_batch_put(b, r->t, REL_FAM_FOLLOW, a, 8, t, 8, REL_VERSION, "", 0);
		if (rc == WB_OK) {
			rel_fan_qual(fq, uids[i]);
			rc = hb_batch_put(
			    b, r->t, REL_FAM_FANS, t, 8, fq, sizeof(fq), REL_VERSION, "", 0);
		}
		if (rc == WB_OK) {
			rc = hb_batch_add(b, r->t, REL_FAM_COUNT, a, 8, REL_Q_FOLLOWING,
			    strlen(REL_Q_FOLLOWING), 1);
		}
		if (rc == WB_OK && (evs[k] = wb_msg_new()) == NULL) {
			rc = WB_ENOMEM;
		}
		if (rc == WB_OK &&
		    ((rc = wb_set_cstr(evs[k], WB_F_TYPE, wb_event_name(WB_EV_FOLLOW))) != WB_OK ||
		        (rc = wb_set_u64(evs[k], WB_F_UID, uids[i])) != WB_OK ||
		        (rc = wb_set_u64(evs[k], WB_F_TARGET, target)) != WB_OK)) {
			k++;
			break;
		}
		if (rc == WB_OK) {
			k++;
		}
	}
	if (rc == WB_OK && k > 0) {
		rc = hb_batch_add(b, r->t, REL_FAM_COUNT, t, 8, REL_Q_FOLLOWERS,
		    strlen(REL_Q_FOLLOWERS), (int64_t)k);
	}
	if (rc == WB_OK && k > 0) {
		rc = evlog_commit_many(r->log, b, evs, k, NULL);
	}
	if (rc == WB_OK) {
		*count = k;
	}
	for (size_t i = 0; evs != NULL && i < k; i++) {
		wb_msg_free(evs[i]);
	}
	free(evs);
	hb_batch_clear(b);
	return rc;
}

/* rel_handle_follow_many: rel.follow_many {target, uids} -> {count}; idempotent. */
int
rel_handle_follow_many(void *arg, const wb_obj *req, wb_obj *rep)
{
	rel_svc        *r = arg;
	uint64_t        target = wb_u64(req, WB_F_TARGET, 0), count = 0;
	const uint64_t *in = NULL;
	size_t          n = 0, m = 0;
	uint64_t       *uids;
	bool            locked[REL_STRIPES] = { false };
	hb_batch       *b = NULL;
	int             rc;

	(void)wb_get_u64s(req, WB_F_UIDS, &in, &n);
	if (n > REL_BULK_MAX) {
		wb_reply_error(rep, WB_EINVAL, "at most %d uids per rel.follow_many", REL_BULK_MAX);
		return WB_EINVAL;
	}
	if (n == 0) {
		wb_reply_ok(rep);
		return wb_set_u64(rep, WB_F_COUNT, 0);
	}
	if ((uids = malloc((n + 1) * sizeof(*uids))) == NULL) {
		return rel_fail(rep, WB_ENOMEM, NULL);
	}
	memcpy(uids, in, n * sizeof(*uids));
	qsort(uids, n, sizeof(*uids), rel_bulk_cmp);
	for (size_t i = 0; i < n; i++) { /* dedupe */
		if (m == 0 || uids[i] != uids[m - 1]) {
			uids[m++] = uids[i];
		}
	}
	for (size_t i = 0; i < m; i++) {
		if (uids[i] == target) {
			free(uids);
			return rel_fail(rep, WB_ESELF, NULL);
		}
	}
	uids[m] = target; /* checked with the others */
	if ((rc = rel_bulk_users_exist(r, uids, m + 1)) != WB_OK ||
	    (rc = hb_batch_new(&b)) != WB_OK) {
		free(uids);
		return rel_fail(rep, rc, NULL);
	}
	for (size_t i = 0; i < m; i++) {
		locked[rel_bulk_stripe(uids[i], target)] = true;
	}
	for (size_t i = 0; i < REL_STRIPES; i++) { /* ascending: no deadlock */
		if (locked[i]) {
			pthread_mutex_lock(&r->stripes[i]);
		}
	}
	rc = rel_gone(r, target) ? WB_ENOUSER : WB_OK; /* deleted after the user check */
	for (size_t i = 0; rc == WB_OK && i < m; i++) {
		rc = rel_gone(r, uids[i]) ? WB_ENOUSER : WB_OK;
	}
	if (rc == WB_OK) {
		rc = rel_bulk_apply(r, b, uids, m, target, &count);
	}
	for (size_t i = REL_STRIPES; i-- > 0;) {
		if (locked[i]) {
			pthread_mutex_unlock(&r->stripes[i]);
		}
	}
	hb_batch_free(b);
	free(uids);
	if (rc != WB_OK) {
		if (rc != WB_ENOUSER) {
			RT_ERRORF("follow_many -> %llu failed: %s %s", (unsigned long long)target,
			    wb_strerror(rc), hb_last_error());
		}
		return rel_fail(rep, rc, NULL);
	}
	wb_reply_ok(rep);
	return wb_set_u64(rep, WB_F_COUNT, count);
}
