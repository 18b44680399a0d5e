/*
 * rel.c - the relation service's state, its route table and its gauges.
 */
#include <stdlib.h>

#include "rel_int.h"

/* rel_svc_open creates the service. */
int
rel_svc_open(
    rel_svc **out, hb_table *t, evlog *log, wb_shard shard, rt_client *users, rt_client *bulk_users)
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
	r->t = t;
	r->log = log;
	r->shard = shard;
	r->users = users;
	r->bulk_users = bulk_users;
	for (int i = 0; i < REL_STRIPES; i++) {
		pthread_mutex_init(&r->stripes[i], NULL);
	}
	atomic_init(&r->user_calls, 0);
	*out = r;
	return WB_OK;
}

static uint64_t
rel_gauge_user_calls(void *arg)
{
	rel_svc *r = arg;

	return atomic_load(&r->user_calls);
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
	{ WB_OP_NONE },
};

/* rel_svc_gauges adds the service's figures to a server's stats. */
int
rel_svc_gauges(rel_svc *r, rt_server *s)
{
	return rt_server_gauge(s, "user_calls", rel_gauge_user_calls, r);
}

/* rel_svc_close frees the service; NULL is ignored. */
void
rel_svc_close(rel_svc *r)
{
	if (r == NULL) {
		return;
	}
	for (int i = 0; i < REL_STRIPES; i++) {
		pthread_mutex_destroy(&r->stripes[i]);
	}
	rel_known_free(&r->known);
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
