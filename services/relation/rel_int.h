/*
 * rel_int.h - the relation service's state and helpers shared by its
 * files (rel_users.c, rel_write.c, rel_read.c, rel_block.c, rel_outbox.c,
 * rel_suggest.c, rel_popular.c).  Not for other modules.
 */
#ifndef REL_INT_H
#define REL_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "rel.h"
#include "rt_shards.h"
#include "rt_uidset.h"

#define REL_STRIPES      256                     /* edge locks, keyed by (uid, target) */
#define REL_POPULAR_KEEP 100                     /* users kept in a shard's most-followed list */
#define REL_GONE_MS      (3600 * UINT64_C(1000)) /* an erased account's edges are refused this long */

/* rel_known: the uids known to exist (users are never deleted), an
 * open-addressing set of nonzero u64; cleared when it reaches its cap. */
typedef struct rel_known {
	pthread_rwlock_t mu;
	uint64_t        *slots;
	size_t           cap; /* power of two */
	size_t           n;
} rel_known;

/* rel_outbox: the thread that tells other shards of this shard's blocks (rel_outbox.c). */
typedef struct rel_outbox {
	pthread_mutex_t mu;
	pthread_cond_t  cv;
	pthread_t       thread;
	bool            running, stop, wake; /* under mu */
	atomic_ulong    pending; /* bpend cells the last pass could not push (stats gauge) */
	atomic_ulong    pushed;  /* rel.block_peer calls answered (stats gauge) */
} rel_outbox;

/* rel_popular: the users with the most fans on this shard (rel_popular.c). */
typedef struct rel_popular {
	pthread_mutex_t mu;
	bool            seeded; /* the count family was read once */
	size_t          n;
	uint64_t        uid[REL_POPULAR_KEEP], fans[REL_POPULAR_KEEP]; /* fans: this shard's part */
} rel_popular;

struct rel_svc {
	hb_table       *t;
	evlog          *log;
	wb_shard        shard;      /* the slots this shard owns */
	rt_client      *users;      /* user.get of a pair: a short deadline */
	rt_client      *bulk_users; /* user.get of 1000 uids (rel.follow_many): a long one */
	rt_shards      *peers;      /* every relation shard (rel.block_peer); NULL with one */
	rel_known       known;
	pthread_mutex_t stripes[REL_STRIPES];
	atomic_ulong    user_calls; /* user.get calls made (stats gauge) */
	rel_outbox      outbox;
	rel_popular     popular;
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

/* rel_stripe returns the lock of the (uid, target) pair: a's edge to b, and b's block cells
 * about a, are changed under it (rel_write.c). */
pthread_mutex_t *rel_stripe(rel_svc *r, uint64_t uid, uint64_t target);

/* rel_lock2 takes two stripes (the same one once), in address order; rel_unlock2 frees them. */
void rel_lock2(pthread_mutex_t *a, pthread_mutex_t *b);
void rel_unlock2(pthread_mutex_t *a, pthread_mutex_t *b);

/* rel_edge_drop adds to b the cells that end uid's follow of target, if uid follows
 * target (stripe held), and makes *ev its unfollow event (NULL: no edge). */
int rel_edge_drop(rel_svc *r, hb_batch *b, uint64_t uid, uint64_t target, wb_obj **ev);

/* rel_commit writes b with its n events (none: b alone) and clears b. */
int rel_commit(rel_svc *r, hb_batch *b, wb_obj *const *evs, size_t n);

/* rel_block_get reads uid's block cell of (way, other): *on, its *gen; *found false if none. */
int rel_block_get(
    rel_svc *r, uint64_t uid, unsigned way, uint64_t other, bool *on, uint64_t *gen, bool *found);

/* rel_block_put adds uid's block cell of (way, other) to b. */
int rel_block_put(
    rel_svc *r, hb_batch *b, uint64_t uid, unsigned way, uint64_t other, bool on, uint64_t gen);

/* rel_block_between tells whether uid blocks other (*blocking) and other blocks uid
 * (*blocked_by), from uid's row (on uid's shard). */
int rel_block_between(rel_svc *r, uint64_t uid, uint64_t other, bool *blocking, bool *blocked_by);

/* rel_outbox_start starts the thread that sends pending blocks to other shards;
 * rel_outbox_stop ends it. */
int  rel_outbox_start(rel_svc *r);
void rel_outbox_stop(rel_svc *r);

/* rel_outbox_push tells blocked's shard of blocker's current block of blocked and, once it
 * has taken it, drops the pending cell; WB_OK or why not (the thread retries). */
int rel_outbox_push(rel_svc *r, uint64_t blocker, uint64_t blocked);

/* rel_outbox_wake asks the outbox thread for a pass now. */
void rel_outbox_wake(rel_svc *r);

/* rel_popular_init / rel_popular_free set up and free the most-followed list. */
void rel_popular_init(rel_popular *p);
void rel_popular_free(rel_popular *p);

/* rel_popular_note brings uid's place in the most-followed list up to date (after a commit). */
void rel_popular_note(rel_svc *r, uint64_t uid);
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
int rel_handle_block(void *arg, const wb_obj *req, wb_obj *rep);
int rel_handle_unblock(void *arg, const wb_obj *req, wb_obj *rep);
int rel_handle_blocks(void *arg, const wb_obj *req, wb_obj *rep);
int rel_handle_block_peer(void *arg, const wb_obj *req, wb_obj *rep);
int rel_handle_following_many(void *arg, const wb_obj *req, wb_obj *rep);
int rel_handle_unrelated(void *arg, const wb_obj *req, wb_obj *rep);
int rel_handle_popular(void *arg, const wb_obj *req, wb_obj *rep);

#endif
