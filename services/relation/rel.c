/*
 * rel.c - the relation service's state, its route table and its gauges.
 */
#include <stdlib.h>

#include "rel_int.h"

/* rel_svc_open creates the service. */
int
rel_svc_open(rel_svc **out, hb_table *t, evlog *log, wb_shard shard, rt_client *users,
    rt_client *bulk_users, rt_shards *peers)
{
	rel_svc *r;
	int      rc;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		return WB_ENOMEM;
	}
	if ((rc = rel_known_init(&r->known)) != WB_OK) {
		free(r);
		return rc;
	}
	/* a request in flight lasts seconds; after a restart the user check knows */
	if ((rc = rt_uidset_open(&r->gone, REL_GONE_MS)) != WB_OK) {
		rel_known_free(&r->known);
		free(r);
		return rc;
	}
	r->t = t;
	r->log = log;
	r->shard = shard;
	r->users = users;
	r->bulk_users = bulk_users;
	r->peers = peers;
	for (int i = 0; i < REL_STRIPES; i++) {
		pthread_mutex_init(&r->stripes[i], NULL);
	}
	atomic_init(&r->user_calls, 0);
	pthread_mutex_init(&r->outbox.mu, NULL);
	pthread_cond_init(&r->outbox.cv, NULL);
	atomic_init(&r->outbox.pending, 0);
	atomic_init(&r->outbox.pushed, 0);
	rel_popular_init(&r->popular);
	atomic_init(&r->erased_edges, 0);
	*out = r;
	return WB_OK;
}

static uint64_t
rel_gauge_user_calls(void *arg)
{
	rel_svc *r = arg;

	return atomic_load(&r->user_calls);
}

static uint64_t
rel_gauge_blocks_pending(void *arg)
{
	rel_svc *r = arg;

	return atomic_load(&r->outbox.pending);
}

static uint64_t
rel_gauge_blocks_pushed(void *arg)
{
	rel_svc *r = arg;

	return atomic_load(&r->outbox.pushed);
}

static uint64_t
rel_gauge_erased_edges(void *arg)
{
	rel_svc *r = arg;

	return atomic_load(&r->erased_edges);
}

/*
 * rel_routes: the service's operations.  Everything about a follower
 * lives on the follower's shard, so the ops about one follower's edges go
 * to that shard (owner uid); fans, counts and the log are answered by any
 * shard with what it holds (the caller asks every shard it needs).
 */
const rt_route rel_routes[] = {
	{ WB_OP_REL_FOLLOW, rel_handle_follow, WB_F_UID, 0, RT_PEER_GATEWAY },
	{ WB_OP_REL_UNFOLLOW, rel_handle_unfollow, WB_F_UID, 0, RT_PEER_GATEWAY },
	{ WB_OP_REL_FOLLOWING, rel_handle_following, WB_F_UID, 0, RT_PEER_GATEWAY },
	{ WB_OP_REL_FANS, rel_handle_fans, 0, 0, RT_PEER_GATEWAY | RT_PEER_INBOX },
	{ WB_OP_REL_IS_FOLLOWING, rel_handle_is_following, WB_F_UID, 0, RT_PEER_GATEWAY },
	{ WB_OP_REL_COUNTS, rel_handle_counts, 0, 0, RT_PEER_GATEWAY | RT_PEER_INBOX },
	{ WB_OP_REL_LOG, rel_handle_log, 0, 0, RT_PEER_INBOX },
	{ WB_OP_REL_FOLLOW_MANY, rel_handle_follow_many, WB_F_UIDS, 0, 0 },
	{ WB_OP_REL_FOLLOWED, rel_handle_followed, 0, 0, RT_PEER_INBOX },
	{ WB_OP_REL_BLOCK, rel_handle_block, WB_F_UID, 0, RT_PEER_GATEWAY },
	{ WB_OP_REL_UNBLOCK, rel_handle_unblock, WB_F_UID, 0, RT_PEER_GATEWAY },
	{ WB_OP_REL_BLOCKS, rel_handle_blocks, WB_F_UID, 0, RT_PEER_GATEWAY },
	/* the blocked user's side of a block, sent by the blocker's shard */
	{ WB_OP_REL_BLOCK_PEER, rel_handle_block_peer, WB_F_UID, 0, RT_PEER_RELATION },
	{ WB_OP_REL_FOLLOWING_MANY, rel_handle_following_many, WB_F_UIDS, 0, RT_PEER_GATEWAY },
	{ WB_OP_REL_UNRELATED, rel_handle_unrelated, WB_F_UID, 0, RT_PEER_GATEWAY },
	{ WB_OP_REL_POPULAR, rel_handle_popular, 0, 0, RT_PEER_GATEWAY },
	{ WB_OP_NONE },
};

/* rel_svc_gauges adds the service's figures to a server's stats. */
int
rel_svc_gauges(rel_svc *r, rt_server *s)
{
	int rc = rt_server_gauge(s, "user_calls", rel_gauge_user_calls, r);

	if (rc == WB_OK) {
		rc = rt_server_gauge(s, "blocks_pending", rel_gauge_blocks_pending, r);
	}
	if (rc == WB_OK) {
		rc = rt_server_gauge(s, "blocks_pushed", rel_gauge_blocks_pushed, r);
	}
	return rc == WB_OK ? rt_server_gauge(s, "erased_edges", rel_gauge_erased_edges, r) : rc;
}

/* rel_svc_start starts the outbox thread, once the server listens. */
int
rel_svc_start(rel_svc *r)
{
	return rel_outbox_start(r);
}

/* rel_svc_close frees the service; NULL is ignored. */
void
rel_svc_close(rel_svc *r)
{
	if (r == NULL) {
		return;
	}
	rel_outbox_stop(r);
	pthread_cond_destroy(&r->outbox.cv);
	pthread_mutex_destroy(&r->outbox.mu);
	rel_popular_free(&r->popular);
	for (int i = 0; i < REL_STRIPES; i++) {
		pthread_mutex_destroy(&r->stripes[i]);
	}
	rel_known_free(&r->known);
	rt_uidset_close(r->gone);
	free(r);
}

/* rel_fail fills rep with an error and returns code. */
int
rel_fail(wb_obj *rep, int code, const char *msg)
{
	if (msg != NULL) {
		wb_reply_error(rep, code, "%s", msg);
	} else {
		wb_reply_error(rep, code, NULL);
	}
	return code;
}
