/*
 * rt_server.h - a REP server on tcp:// or ipc:// (the SP wire format nng
 * speaks): worker threads, each taking a request, decoding it, running the
 * op's handler and sending the reply.
 *
 * ping, stats and batch are built in; stats reports per-op counts, errors
 * and latency histograms, the process's own figures (rt_proc.h), plus
 * any gauges the service registers; batch
 * serves each of up to WB_BATCH_MAX requests (reqs) as if it came alone
 * and replies with their replies in order (reps), each item counted in
 * stats under its own op and the whole under "batch".
 */
#ifndef RT_SERVER_H
#define RT_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "rt_tls.h"
#include "wb_proto.h"
#include "wb_slot.h"

typedef struct rt_server rt_server;

/* A handler runs on a worker thread, may block, fills rep and returns a
 * wb_err.  A nonzero return with rep left empty becomes an error reply
 * with the code's message; handlers call wb_reply_error for a better one. */
typedef int (*rt_handler_fn)(void *arg, const wb_obj *req, wb_obj *rep);

/* Route flags. */
enum {
	RT_ROUTE_SLOW = 1, /* a long wait (a password hash): a spare thread serves meanwhile */
};

/*
 * One row of a service's route table: the op, its handler, the field that
 * names whose data the request touches (owner; 0 for an op any shard
 * serves), and flags.  On a sharded server every request of an op with
 * an owner is checked before its handler runs: a uid field (U64 or U64S:
 * every uid) by its slot, a post id field (ID or IDS) by the slot group
 * its node bits name, a media id by its author; a request for a slot the
 * shard does not own is answered WRONG_SHARD, with the owning shard's
 * index in `shard`, and never reaches the handler.
 *
 * On a port with TLS (rt_server_opts.tls) a request is served only if
 * its connection's certificate names one of the callers (rt_tls.h), or
 * the admin identity, which may call every op; any other is answered
 * FORBIDDEN.  Calls in process and on ports without TLS are not checked.
 */
typedef struct rt_route {
	wb_op         op;
	rt_handler_fn fn;
	wb_field      owner;
	unsigned      flags;
	unsigned      callers; /* rt_peer bits of the TLS identities that may call it */
} rt_route;

/* A gauge reads one named figure for stats. */
typedef uint64_t (*rt_gauge_fn)(void *arg);

#define RT_GAUGE_NAME_MAX 96  /* a listed gauge's name, NUL included */
#define RT_GAUGE_LIST_MAX 256 /* figures one gauge list gives at most */

/* One figure of a gauge list. */
typedef struct rt_gauge_val {
	char     name[RT_GAUGE_NAME_MAX];
	uint64_t value;
} rt_gauge_val;

/*
 * A gauge list gives figures known only when stats is asked (one per
 * consumer of a log, say): it writes up to cap of them into out and
 * returns how many.  A name may carry one label, "base{key=value}": the
 * metrics text (rt_metrics.h) writes it as the family base with that
 * label beside service and shard.
 */
typedef size_t (*rt_gauge_list_fn)(void *arg, rt_gauge_val *out, size_t cap);

typedef struct rt_server_opts {
	const char *name;    /* service name, for logs and stats */
	const char *url;     /* listen URL */
	int         workers; /* worker threads, each serving one request at a time (default 8) */
	int         spares; /* threads standing in for workers in slow calls (rt_loop_slow_begin) */
	size_t      max_msg; /* largest request in bytes (default 4 MiB) */
	bool     local; /* also served in-process to this process's clients of url (rt_local.h) */
	wb_shard shard; /* the slots it owns (count 0 or 1: all; no request is checked) */
	rt_tls  *tls; /* mutual TLS on every connection, each op open to its callers (NULL: none) */
} rt_server_opts;

/*
 * An admit function looks at the fields wholly within the first bytes of
 * a large request (head: wb_decode_head) and returns WB_OK to read the
 * rest, an error code (its reply written into rep) to refuse it, or -1 to
 * look again once more has arrived; final says nothing more will come
 * before the request is refused.
 */
typedef int (*rt_admit_fn)(void *arg, const wb_obj *head, bool final, wb_obj *rep);

/*
 * How requests may arrive on a port open to anyone (the gateway's): a
 * request's bytes must all arrive within request_ms of its first, and one
 * larger than open_max is read on only once admit takes it from its first
 * open_max bytes.  A refused request is answered at once; the rest of it
 * is read and dropped, and the connection serves on.
 */
typedef struct rt_server_limits {
	int         request_ms; /* deadline of a request from its first byte (0: none) */
	size_t      open_max;   /* larger requests need admit (0: none do) */
	rt_admit_fn admit;      /* required with open_max */
	void       *arg;
} rt_server_limits;

/* rt_server_open creates a server (not yet listening). */
int rt_server_open(rt_server **out, const rt_server_opts *opts);

/* rt_server_handle routes op to fn, with no owner and no flags, open to every caller; call before rt_server_start. */
int rt_server_handle(rt_server *s, wb_op op, rt_handler_fn fn, void *arg);

/* rt_server_routes routes each of the n rows, with arg for every handler; call before rt_server_start. */
int rt_server_routes(rt_server *s, const rt_route *routes, size_t n, void *arg);

/* rt_server_limit sets how requests may arrive (rt_server_limits); call before rt_server_start. */
int rt_server_limit(rt_server *s, const rt_server_limits *lim);

/* rt_server_gauge adds a named figure to the stats reply; call before rt_server_start. */
int rt_server_gauge(rt_server *s, const char *name, rt_gauge_fn fn, void *arg);

/* rt_server_gauge_list adds a list of figures to the stats reply, after the gauges; call before rt_server_start. */
int rt_server_gauge_list(rt_server *s, rt_gauge_list_fn fn, void *arg);

/* rt_server_stats fills rep with what the stats op answers: uptime, per-op stats and gauges. */
int rt_server_stats(rt_server *s, wb_obj *rep);

/* rt_server_start listens and begins serving. */
int rt_server_start(rt_server *s);

/* rt_server_close stops accepting, finishes requests in flight, and frees the server. */
void rt_server_close(rt_server *s);

/* rt_server_peer gives the address of the client whose request the calling handler runs (family 0 for ipc, or outside a handler). */
void rt_server_peer(struct sockaddr_storage *ss);

#endif
