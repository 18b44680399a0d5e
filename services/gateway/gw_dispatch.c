/*
 * gw_dispatch.c - the table routing each public operation to its
 * handler.
 */
#include <stdio.h>
#include <string.h>

#include "gw_int.h"
#include "rt_log.h"
#include "rt_loop.h"
#include "rt_server.h"

typedef int (*gw_op_fn)(gw *g, const wb_obj *req, wb_obj *rep);
typedef int (*gw_op_addr_fn)(gw *g, const wb_obj *req, wb_obj *rep, const char *addr);

/*
 * An operation that checks a password or registers takes the client's
 * address (afn instead of fn): the user service limits both by it.  A
 * slow operation (a password hashed with argon2id, an image received and
 * checked) lets a spare thread serve in its place while it runs
 * (rt_loop_slow_begin), so that a burst of logins does not hold every
 * worker of the gateway.
 */
static const struct {
	wb_op         op;
	gw_op_fn      fn;
	gw_op_addr_fn afn;
	bool          slow;
} gw_routes[] = {
	{ WB_OP_REGISTER, .afn = gw_op_register, .slow = true },
	{ WB_OP_LOGIN, .afn = gw_op_login, .slow = true },
	{ WB_OP_LOGOUT, gw_op_logout },
	{ WB_OP_WHOAMI, gw_op_whoami },
	{ WB_OP_PUBLISH, gw_op_publish },
	{ WB_OP_DELETE, gw_op_delete },
	{ WB_OP_HOME, gw_op_home },
	{ WB_OP_TIMELINE, gw_op_timeline },
	{ WB_OP_FOLLOW, gw_op_follow },
	{ WB_OP_UNFOLLOW, gw_op_unfollow },
	{ WB_OP_FOLLOWING_LIST, gw_op_following },
	{ WB_OP_FANS_LIST, gw_op_fans },
	{ WB_OP_PROFILE, gw_op_profile },
	{ WB_OP_UPDATE_PROFILE, gw_op_update_profile },
	{ WB_OP_LOGOUT_ALL, gw_op_logout_all },
	{ WB_OP_CHANGE_PASSWORD, .afn = gw_op_change_password, .slow = true },
	{ WB_OP_UPLOAD, gw_op_upload, .slow = true },
	{ WB_OP_MEDIA, gw_op_media },
	{ WB_OP_POST, gw_op_post },
	{ WB_OP_BLOCK, gw_op_block },
	{ WB_OP_UNBLOCK, gw_op_unblock },
	{ WB_OP_BLOCKS_LIST, gw_op_blocks },
	{ WB_OP_SUGGESTIONS, gw_op_suggestions },
	{ WB_OP_DELETE_ACCOUNT, .afn = gw_op_delete_account, .slow = true },
};

#define GW_NROUTES (sizeof(gw_routes) / sizeof(gw_routes[0]))

int
gw_is_public(wb_op op)
{
	for (size_t i = 0; i < GW_NROUTES; i++) {
		if (gw_routes[i].op == op) {
			return 1;
		}
	}
	return 0;
}

void
gw_rid_new(gw *g, char buf[WB_RID_MAX + 1])
{
	snprintf(buf, WB_RID_MAX + 1, "%08x-%llx", g->rid_nonce,
	    (unsigned long long)atomic_fetch_add(&g->rid_seq, 1) + 1);
}

/* gw_route runs op's handler, a slow one with a spare thread serving in its place. */
static int
gw_route(gw *g, wb_op op, const wb_obj *req, wb_obj *rep, const gw_from *from)
{
	for (size_t i = 0; i < GW_NROUTES; i++) {
		if (gw_routes[i].op == op) {
			char addr[GW_ADDR_MAX];
			int  rc;

			if (gw_routes[i].slow) {
				rt_loop_slow_begin();
			}
			if (gw_routes[i].afn != NULL) {
				gw_auth_addr(g, from, addr);
				rc = gw_routes[i].afn(g, req, rep, addr);
			} else {
				rc = gw_routes[i].fn(g, req, rep);
			}
			if (gw_routes[i].slow) {
				rt_loop_slow_end();
			}
			return rc;
		}
	}
	wb_reply_error(rep, WB_EBADOP, "unknown operation");
	return WB_EBADOP;
}

/* gw_dispatch runs op under the thread's request id (a new one if it has none), every downstream call carrying it. */
int
gw_dispatch(gw *g, wb_op op, const wb_obj *req, wb_obj *rep, const gw_from *from)
{
	char        rid[WB_RID_MAX + 1];
	const char *prev = wb_rid();
	int         rc;

	if (prev == NULL) {
		gw_rid_new(g, rid);
		wb_rid_swap(rid);
	}
	rc = gw_route(g, op, req, rep, from);
	wb_rid_swap(prev);
	return rc;
}

int
gw_handler(void *arg, const wb_obj *req, wb_obj *rep)
{
	struct sockaddr_storage peer;
	gw_from                 from = { &peer, NULL };
	char                    err[128];
	wb_op                   op;
	int                     rc;

	if ((rc = wb_check_request(req, &op, err, sizeof(err))) != WB_OK) {
		wb_reply_error(rep, rc, "%s", err);
		return rc;
	}
	rt_server_peer(&peer);
	return gw_dispatch(arg, op, req, rep, &from);
}
