/*
 * gw_dispatch.c - the table routing each public operation to its
 * handler, and the per-address lockout in front of logins.
 */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "gw_int.h"
#include "rt_log.h"
#include "rt_loop.h"
#include "rt_server.h"
#include "wb_clock.h"

typedef int (*gw_op_fn)(gw *g, const wb_obj *req, wb_obj *rep);

/*
 * A slow operation (a password hashed with argon2id, an image received
 * and checked) lets a spare thread serve in its place while it runs
 * (rt_loop_slow_begin), so that a burst of logins does not hold every
 * worker of the gateway.
 */
static const struct {
	wb_op    op;
	gw_op_fn fn;
	bool     slow;
} gw_routes[] = {
	{ WB_OP_REGISTER, gw_op_register, true },
	{ WB_OP_LOGIN, gw_op_login, true },
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
	{ WB_OP_CHANGE_PASSWORD, gw_op_change_password, true },
	{ WB_OP_UPLOAD, gw_op_upload, true },
	{ WB_OP_MEDIA, gw_op_media },
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

/* gw_client_key writes a key naming client's IP (without the port) into buf (>= 17 bytes); its length, or 0 if unknown. */
static size_t
gw_client_key(const struct sockaddr_storage *client, uint8_t *buf)
{
	if (client == NULL) {
		return 0;
	}
	switch (client->ss_family) {
	case AF_INET:
		buf[0] = 4;
		memcpy(buf + 1, &((const struct sockaddr_in *)client)->sin_addr, 4);
		return 5;
	case AF_INET6:
		buf[0] = 6;
		memcpy(buf + 1, &((const struct sockaddr_in6 *)client)->sin6_addr, 16);
		return 17;
	default:
		return 0;
	}
}

/* gw_login runs a login, refused while client's address is locked after failed logins. */
static int
gw_login(gw *g, const wb_obj *req, wb_obj *rep, const struct sockaddr_storage *client)
{
	uint8_t  key[17];
	size_t   len = gw_client_key(client, key);
	uint64_t retry_ms;
	int      rc;

	if (len > 0 && rt_rate_check(g->logins, key, len, wb_now_ms(), &retry_ms) != WB_OK) {
		wb_reply_error(rep, WB_ERATE,
		    "too many failed logins from this address, retry in %llu s",
		    (unsigned long long)(retry_ms + 999) / 1000);
		return WB_ERATE;
	}
	rc = gw_op_login(g, req, rep);
	if (len > 0 && rc == WB_ELOGIN) {
		rt_rate_fail(g->logins, key, len, wb_now_ms());
	}
	return rc;
}

void
gw_rid_new(gw *g, char buf[WB_RID_MAX + 1])
{
	snprintf(buf, WB_RID_MAX + 1, "%08x-%llx", g->rid_nonce,
	    (unsigned long long)atomic_fetch_add(&g->rid_seq, 1) + 1);
}

/* gw_route runs op's handler, a slow one with a spare thread serving in its place. */
static int
gw_route(gw *g, wb_op op, const wb_obj *req, wb_obj *rep, const struct sockaddr_storage *client)
{
	for (size_t i = 0; i < GW_NROUTES; i++) {
		if (gw_routes[i].op == op) {
			int rc;

			if (gw_routes[i].slow) {
				rt_loop_slow_begin();
			}
			rc = op == WB_OP_LOGIN ? gw_login(g, req, rep, client)
			                       : gw_routes[i].fn(g, req, rep);
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
gw_dispatch(gw *g, wb_op op, const wb_obj *req, wb_obj *rep, const struct sockaddr_storage *client)
{
	char        rid[WB_RID_MAX + 1];
	const char *prev = wb_rid();
	int         rc;

	if (prev == NULL) {
		gw_rid_new(g, rid);
		wb_rid_swap(rid);
	}
	rc = gw_route(g, op, req, rep, client);
	wb_rid_swap(prev);
	return rc;
}

int
gw_handler(void *arg, const wb_obj *req, wb_obj *rep)
{
	struct sockaddr_storage client;
	char                    err[128];
	wb_op                   op;
	int                     rc;

	if ((rc = wb_check_request(req, &op, err, sizeof(err))) != WB_OK) {
		wb_reply_error(rep, rc, "%s", err);
		return rc;
	}
	if (op == WB_OP_LOGIN) {
		rt_server_peer(&client);
	}
	return gw_dispatch(arg, op, req, rep, op == WB_OP_LOGIN ? &client : NULL);
}
