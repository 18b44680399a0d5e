/*
 * rel_users.c - does a uid name a user?  Asked of the user service with
 * user.get and remembered until an account is deleted (rel_erase.c
 * clears the set then, and keeps the account in r->gone for the follows
 * already past this check).  Unknown uids are not cached (they may be
 * registered a moment later).
 */
#include <stdlib.h>
#include <string.h>

#include "rel_int.h"
#include "rt_log.h"
#include "wb_hash.h"

#define REL_KNOWN_MIN (1u << 10)
#define REL_KNOWN_MAX (1u << 22) /* slots: 32 MiB, about 2M users at half load */

static size_t
rel_known_slot(uint64_t uid, size_t cap)
{
	return (size_t)wb_mix64(uid) & (cap - 1);
}

/* rel_known_init sets up an empty set. */
int
rel_known_init(rel_known *k)
{
	if ((k->slots = calloc(REL_KNOWN_MIN, sizeof(uint64_t))) == NULL) {
		return WB_ENOMEM;
	}
	k->cap = REL_KNOWN_MIN;
	k->n = 0;
	pthread_rwlock_init(&k->mu, NULL);
	return WB_OK;
}

void
rel_known_clear(rel_known *k)
{
	pthread_rwlock_wrlock(&k->mu);
	memset(k->slots, 0, k->cap * sizeof(uint64_t));
	k->n = 0;
	pthread_rwlock_unlock(&k->mu);
}

/* rel_known_free frees the set. */
void
rel_known_free(rel_known *k)
{
	pthread_rwlock_destroy(&k->mu);
	free(k->slots);
	k->slots = NULL;
}

static bool
rel_known_has(rel_known *k, uint64_t uid)
{
	bool found = false;

	pthread_rwlock_rdlock(&k->mu);
	for (size_t i = rel_known_slot(uid, k->cap);; i = (i + 1) & (k->cap - 1)) {
		if (k->slots[i] == uid) {
			found = true;
			break;
		}
		if (k->slots[i] == 0) {
			break;
		}
	}
	pthread_rwlock_unlock(&k->mu);
	return found;
}

/* rel_known_put_locked inserts uid into slots (no growth). */
static void
rel_known_put_locked(uint64_t *slots, size_t cap, uint64_t uid, size_t *n)
{
	for (size_t i = rel_known_slot(uid, cap);; i = (i + 1) & (cap - 1)) {
		if (slots[i] == uid) {
			return;
		}
		if (slots[i] == 0) {
			slots[i] = uid;
			(*n)++;
			return;
		}
	}
}

/* rel_known_add remembers uid, growing the table at half load, or
 * starting over once it is as large as allowed. */
static void
rel_known_add(rel_known *k, uint64_t uid)
{
	pthread_rwlock_wrlock(&k->mu);
	if ((k->n + 1) * 2 > k->cap) {
		size_t    cap = k->cap < REL_KNOWN_MAX ? k->cap * 2 : k->cap;
		uint64_t *slots = calloc(cap, sizeof(uint64_t));
		if (slots != NULL) {
			size_t n = 0;
			if (cap > k->cap) {
				for (size_t i = 0; i < k->cap; i++) {
					if (k->slots[i] != 0) {
						rel_known_put_locked(slots, cap, k->slots[i], &n);
					}
				}
			}
			free(k->slots);
			k->slots = slots;
			k->cap = cap;
			k->n = n;
		} else {
			/* out of memory: forget everything, keep the old array */
			memset(k->slots, 0, k->cap * sizeof(uint64_t));
			k->n = 0;
		}
	}
	rel_known_put_locked(k->slots, k->cap, uid, &k->n);
	pthread_rwlock_unlock(&k->mu);
}

/* rel_users_exist checks that every uid names a user. */
int
rel_users_exist(rel_svc *r, const uint64_t *uids, size_t n)
{
	uint64_t        ask[8];
	size_t          nask = 0;
	wb_obj         *req, *rep = NULL;
	const uint64_t *missing;
	size_t          nmissing = 0;
	int             rc;

	if (n > sizeof(ask) / sizeof(ask[0])) {
		return WB_EINVAL; /* callers check a pair at a time */
	}
	for (size_t i = 0; i < n; i++) {
		if (uids[i] == 0) {
			return WB_ENOUSER;
		}
		if (!rel_known_has(&r->known, uids[i])) {
			ask[nask++] = uids[i];
		}
	}
	if (nask == 0) {
		return WB_OK;
	}
	if ((req = wb_request(WB_OP_USER_GET)) == NULL) {
		return WB_ENOMEM;
	}
	rc = wb_set_u64s(req, WB_F_UIDS, ask, nask);
	if (rc == WB_OK) {
		atomic_fetch_add(&r->user_calls, 1);
		rc = rt_call(r->users, req, &rep);
	}
	wb_msg_free(req);
	if (rc != WB_OK) {
		RT_WARNF("user.get failed: %s", wb_strerror(rc));
		wb_msg_free(rep);
		return rc == WB_ETIMEDOUT ? rc : WB_EUNAVAIL;
	}
	const wb_obj *users;
	size_t        nusers = 0;
	if (wb_get_u64s(rep, WB_F_MISSING, &missing, &nmissing) && nmissing > 0) {
		wb_msg_free(rep);
		return WB_ENOUSER;
	}
	if (!wb_get_objs(rep, WB_F_USERS, &users, &nusers) || nusers != nask) {
		wb_msg_free(rep);
		RT_WARNF("user.get answered %zu users for %zu uids", nusers, nask);
		return WB_EUNAVAIL;
	}
	wb_msg_free(rep);
	for (size_t i = 0; i < nask; i++) {
		rel_known_add(&r->known, ask[i]);
	}
	return WB_OK;
}
