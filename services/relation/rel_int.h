/*
 * rel_int.h - the relation service's state and helpers shared by its
 * files (rel_users.c, rel_write.c, rel_read.c).  Not for other modules.
 */
#ifndef REL_INT_H
#define REL_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "rel.h"
#include "rt_uidset.h"

#define REL_STRIPES 256                     /* edge locks, keyed by (uid, target) */
#define REL_GONE_MS (3600 * UINT64_C(1000)) /* an erased account's edges are refused this long */

/* rel_known: the uids known to exist (users are never deleted), an
 * open-addressing set of nonzero u64; cleared when it reaches its cap. */
typedef struct rel_known {
	pthread_rwlock_t mu;
	uint64_t        *slots;
	size_t           cap; /* power of two */
	size_t           n;
} rel_known;

struct rel_svc {
	hb_table       *t;
	evlog          *log;
	wb_shard        shard;      /* the slots this shard owns */
	rt_client      *users;      /* user.get of a pair: a short deadline */
	rt_client      *bulk_users; /* user.get of 1000 uids (rel.follow_many): a long one */
	rel_known       known;
	pthread_mutex_t stripes[REL_STRIPES];
	atomic_ulong    user_calls; /* user.get calls made (stats gauge) */
	rt_uidset      *gone; /* accounts being erased: no edge of theirs is made (rel_erase.c) */
	atomic_ulong    erased_edges; /* edges removed by erasures (stats gauge) */
};

/* rel_stripe_of returns the index of the stripe lock of the pair (uid, target). */
static inline size_t
rel_stripe_of(uint64_t uid, uint64_t target)
{
	uint64_t h = uid * UINT64_C(0x9E3779B97F4A7C15) ^ target;

	h ^= h >> 29;
	h *= UINT64_C(0xBF58476D1CE4E5B9);
	h ^= h >> 32;
	return (size_t)(h % REL_STRIPES);
}

/* rel_gone tells whether uid's account is being (or was just) erased: its edges are refused. */
bool rel_gone(rel_svc *r, uint64_t uid);

/* rel_fail fills rep with an error (msg NULL: the code's message) and returns code. */
int rel_fail(wb_obj *rep, int code, const char *msg);

/* rel_known_init / rel_known_free set up and free the known-users set. */
int  rel_known_init(rel_known *k);
void rel_known_free(rel_known *k);

/* rel_users_exist checks that every uid names a user (cache, then
 * user.get); WB_ENOUSER if one does not, a transport error if the user
 * service cannot answer. */
int rel_users_exist(rel_svc *r, const uint64_t *uids, size_t n);

/* rel_known_clear forgets every user known to exist (one was deleted). */
void rel_known_clear(rel_known *k);

/* Handlers (rt_handler_fn), by job. */
int rel_handle_follow(void *arg, const wb_obj *req, wb_obj *rep);
int rel_handle_unfollow(void *arg, const wb_obj *req, wb_obj *rep);
int rel_handle_following(void *arg, const wb_obj *req, wb_obj *rep);
int rel_handle_fans(void *arg, const wb_obj *req, wb_obj *rep);
int rel_handle_is_following(void *arg, const wb_obj *req, wb_obj *rep);
int rel_handle_counts(void *arg, const wb_obj *req, wb_obj *rep);
int rel_handle_log(void *arg, const wb_obj *req, wb_obj *rep);
int rel_handle_follow_many(void *arg, const wb_obj *req, wb_obj *rep);
int rel_handle_followed(void *arg, const wb_obj *req, wb_obj *rep);

#endif
