/*
 * gw.h - the gateway: Warble's public API on top of the four services.
 *
 *            SDK / warblectl (msgpack REQ)      HTTP/JSON (later)
 *                        \                        /
 *                     gw_dispatch(op, req, rep, from)
 *                        /      |         |       \
 *                    user   relation   content   inbox     (rt_shards each: the
 *                                                             shard that owns the slot)
 *
 * Every public operation is a function taking a decoded request and
 * filling a reply object, independent of the transport, so the msgpack
 * server and an HTTP layer share the same logic.  Handlers run on worker
 * threads and block on downstream calls; a gw is safe to use from many
 * threads at once.
 */
#ifndef GW_H
#define GW_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rt_client.h"
#include "rt_daemon.h"
#include "wb_proto.h"
#include "wb_services.h"

#define GW_PAGE_DEFAULT 20  /* page size when the request gives none */
#define GW_PAGE_MAX     100 /* largest public page */

typedef struct gw gw;

typedef struct gw_opts {
	const char *urls[WB_SVC_COUNT]; /* each service's address (one shard) */
	const char
	    *lists[WB_SVC_COUNT]; /* ... or its shards' addresses, in order (NULL or "": urls) */
	int  timeout_ms;          /* per downstream call (default 5000) */
	int session_check_ms; /* check signed tokens here, trusting the revocation feed this long (0: off) */
	const char *trusted_proxies; /* addresses and CIDR ranges whose X-Forwarded-For is believed,
	                                comma-separated (NULL or "": none) */
	size_t      post_cache;      /* post records cached for hydration (0: none) */
	uint64_t    post_cache_ms;   /* how long one is trusted (0: none cached) */
	int coalesce; /* calls in flight to the content and inbox services before further ones go
	                 together as one batch message (0: each alone; rt_client_opts.coalesce) */
	rt_tls *tls;  /* the gateway's TLS identity for its calls (NULL: plain) */
} gw_opts;

/* Where a request came from: the connection's peer (NULL if unknown), and the X-Forwarded-For
 * header of an HTTP request (NULL if none or not HTTP). */
typedef struct gw_from {
	const struct sockaddr_storage *peer;
	const char                    *forwarded_for;
} gw_from;

/* gw_open dials the four services (in the background) and starts checking tokens; WB_EINVAL if trusted_proxies does not parse. */
int gw_open(gw **out, const gw_opts *opts);

/* gw_close closes the downstream clients and frees g; NULL is ignored. */
void gw_close(gw *g);

/* gw_service describes warble-gateway to rt_daemon_main (gw_daemon.c). */
extern const rt_service gw_service;

/* gw_rid_new writes a new request id, unique across restarts and gateways in all likelihood, into buf. */
void gw_rid_new(gw *g, char buf[WB_RID_MAX + 1]);

/* gw_dispatch runs public operation op on req from from (read by the operations that check
 * passwords; NULL if unknown), filling rep (a success or an error reply); returns its wb_err. */
int gw_dispatch(gw *g, wb_op op, const wb_obj *req, wb_obj *rep, const gw_from *from);

/* gw_handler is gw_dispatch in rt_server's handler shape (arg is the gw); op comes from req. */
int gw_handler(void *arg, const wb_obj *req, wb_obj *rep);

/*
 * gw_caller resolves req's token to the caller's uid as every operation does, for a transport that
 * must know the caller before the rest of the request arrives (an upload's body); errors go into
 * rep.
 */
int gw_caller(gw *g, const wb_obj *req, uint64_t *uid, wb_obj *rep);

/*
 * gw_admit is the msgpack port's rt_admit_fn (arg is the gw): a request over the port's limit
 * before authentication must show, in its first bytes, an operation that carries bytes (an upload)
 * and a token that holds.
 */
int gw_admit(void *arg, const wb_obj *head, bool final, wb_obj *rep);

/* gw_is_public tells whether op is one of the gateway's public operations. */
int gw_is_public(wb_op op);

#endif
