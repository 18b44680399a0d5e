/*
 * rt_server.c - the REP server every Warble daemon runs.
 *
 * It speaks the SP request/reply protocol (rt_wire.h) over tcp:// and
 * ipc:// itself, so any nng REQ socket and rt_sp client can call it, on
 * the serving core of rt_loop.h: the worker woken for a connection does
 * all of a request's work,
 *
 *   recv -> decode, check, handler, encode, stats -> send
 *
 * so a request costs one wake-up and four system calls, and no thread
 * hands anything to another.  Handlers may block: a worker busy in one
 * leaves the other connections to the other workers, so `workers` is the
 * number of requests in service at once (as it was with nng's contexts,
 * whose hand-offs cost the daemons most of their CPU per request: see
 * docs/benchmarks.md).  A connection's requests are served in order; its
 * clients (rt_sp, rt_client) keep one call per connection.
 *
 * ping, stats and batch are built in.  A batch (a client's coalesced
 * calls, rt_client.h) runs its requests one after another on the worker
 * that took it, each exactly as if it had come alone.
 *
 * On a public port (rt_server_limit) a request in progress has a
 * deadline, and one larger than open_max is admitted from its first
 * bytes before the rest is held:
 *
 *   [length][id words][msgpack: op token ... data............]
 *            |<----- open_max ----->|
 *            wb_decode_head -> admit: WB_OK   hold the rest, serve it
 *                                     error   reply now, drop the rest
 *                                     -1      wait (refused at open_max)
 */
#include <stdlib.h>
#include <string.h>

#include "rt_buf.h"
#include "rt_local.h"
#include "rt_log.h"
#include "rt_loop.h"
#include "rt_proc.h"
#include "rt_server.h"
#include "rt_stats.h"
#include "rt_wire.h"
#include "wb_clock.h"
#include "wb_id.h"

#define RT_SERVER_WORKERS     8
#define RT_SERVER_MAX_WORKERS 4096
#define RT_SERVER_MAX_MSG     (4u << 20)
#define RT_SERVER_GAUGES      64
#define RT_SERVER_GAUGE_LISTS 4
#define RT_SERVER_KEEP_BUF    (64u << 10) /* an idle worker keeps a reply buffer this large at most */

/* Bits of a connection's state word (rt_loop_conn_state). */
enum {
	RT_SRV_READY = 1,     /* the handshake is done */
	RT_SRV_TIMED = 2,     /* the deadline of the request in progress runs */
	RT_SRV_ADMITTED = 4,  /* the large request in progress was admitted */
	RT_SRV_SKIP = 8,      /* dropping the rest of a refused request: its bytes from bit 8 up */
	RT_SRV_SKIP_SHIFT = 8 /* (bits below it are flags; before a large request is admitted,
	                         the bits above hold how much of it admit has seen) */
};

/* A worker thread's reply buffer. */
typedef struct rt_work {
	uint8_t *out;
	size_t   len, cap;
} rt_work;

/* The connection whose request this worker thread's handler is running (rt_server_peer). */
static _Thread_local const rt_loop_conn *rt_server_conn;

typedef struct rt_server_route {
	rt_handler_fn fn;
	void         *arg;
	wb_field      owner;   /* 0: any shard serves it */
	unsigned      flags;   /* RT_ROUTE_* */
	unsigned      callers; /* rt_peer bits that may call it over TLS (admin always may) */
} rt_server_route;

typedef struct rt_gauge {
	char       *name;
	rt_gauge_fn fn;
	void       *arg;
} rt_gauge;

struct rt_server {
	char           *name;
	char           *url;
	int             nworkers, nspares;
	size_t          max_msg;
	rt_stats       *stats;
	rt_server_route routes[WB_OP_COUNT];
	wb_shard        shard;
	rt_gauge        gauges[RT_SERVER_GAUGES];
	int             ngauges;
	struct {
		rt_gauge_list_fn fn;
		void            *arg;
	} lists[RT_SERVER_GAUGE_LISTS];
	int              nlists;
	uint64_t         start_us;
	rt_loop         *loop;
	rt_tls          *tls;
	bool             started;
	int              local; /* its rt_local slot (rt_server_opts.local), else 0 */
	rt_server_limits lim;
};

static int   rt_server_call(void *arg, const wb_obj *req, wb_obj **rep);
static wb_op rt_server_run(rt_server *s, const wb_obj *req, wb_obj *rep);

static int
rt_server_ping(void *arg, const wb_obj *req, wb_obj *rep)
{
	(void)arg;
	(void)req;
	(void)rep;
	return WB_OK;
}

int
rt_server_stats(rt_server *s, wb_obj *rep)
{
	wb_obj *g;
	int     rv;

	if ((rv = wb_set_cstr(rep, WB_F_SERVICE, s->name)) != 0 ||
	    (rv = wb_set_u64(rep, WB_F_UPTIME, (wb_mono_us() - s->start_us) / 1000)) != 0 ||
	    (rv = rt_stats_fill(s->stats, rep)) != 0) {
		return rv;
	}
	rt_gauge_val *vals = NULL;
	size_t        nvals = 0;
	if (s->nlists > 0 &&
	    (vals = malloc((size_t)s->nlists * RT_GAUGE_LIST_MAX * sizeof(*vals))) == NULL) {
		return WB_ENOMEM;
	}
	for (int i = 0; i < s->nlists; i++) {
		size_t k = s->lists[i].fn(s->lists[i].arg, vals + nvals, RT_GAUGE_LIST_MAX);
		nvals += k < RT_GAUGE_LIST_MAX ? k : RT_GAUGE_LIST_MAX;
	}
	if (s->ngauges + nvals == 0) {
		free(vals);
		return WB_OK;
	}
	if ((g = wb_add_objs(rep, WB_F_GAUGES, (size_t)s->ngauges + nvals)) == NULL) {
		free(vals);
		return WB_ENOMEM;
	}
	rv = WB_OK;
	for (int i = 0; rv == WB_OK && i < s->ngauges; i++) {
		if ((rv = wb_set_cstr(&g[i], WB_F_NAME, s->gauges[i].name)) == WB_OK) {
			rv = wb_set_u64(&g[i], WB_F_VALUE, s->gauges[i].fn(s->gauges[i].arg));
		}
	}
	for (size_t i = 0; rv == WB_OK && i < nvals; i++) {
		wb_obj *o = &g[(size_t)s->ngauges + i];
		vals[i].name[RT_GAUGE_NAME_MAX - 1] = '\0';
		if ((rv = wb_set_cstr(o, WB_F_NAME, vals[i].name)) == WB_OK) {
			rv = wb_set_u64(o, WB_F_VALUE, vals[i].value);
		}
	}
	free(vals);
	return rv;
}

/* rt_server_op_stats answers the stats op (rt_server_stats). */
static int
rt_server_op_stats(void *arg, const wb_obj *req, wb_obj *rep)
{
	(void)req;
	return rt_server_stats(arg, rep);
}

/*
 * rt_server_batch serves each request of a batch as if it came alone
 * (checks, route, handler, its request id, its stats and log line), each
 * into a reply object of its own (handlers may reset theirs), copied in
 * order into the batch's reps.  An item's failure is that item's reply;
 * only a batch that is empty, too long or nested is refused whole.
 */
static int
rt_server_batch(void *arg, const wb_obj *req, wb_obj *rep)
{
	rt_server    *s = arg;
	const wb_obj *items;
	wb_obj       *reps, *one;
	size_t        n = 0;
	int           rv;

	if (!wb_get_objs(req, WB_F_REQS, &items, &n) || n == 0 || n > WB_BATCH_MAX) {
		wb_reply_error(
		    rep, WB_EINVAL, "a batch holds 1-%d requests, not %zu", WB_BATCH_MAX, n);
		return WB_EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		if (wb_op_of(&items[i]) == WB_OP_BATCH) {
			wb_reply_error(rep, WB_EINVAL, "request %zu of a batch is a batch", i);
			return WB_EINVAL;
		}
	}
	if ((reps = wb_add_objs(rep, WB_F_REPS, n)) == NULL) {
		return WB_ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t    start_us = wb_mono_us();
		wb_op       op = wb_op_of(&items[i]);
		const char *emsg;

		if ((one = wb_msg_new()) == NULL) {
			return WB_ENOMEM;
		}
		op = rt_server_run(s, &items[i], one);
		rv = wb_copy(&reps[i], one);
		rt_stats_record(
		    s->stats, op, wb_mono_us() - start_us, wb_reply_code(one, &emsg) != WB_OK);
		wb_msg_free(one);
		if (rv != WB_OK) {
			return rv;
		}
	}
	return WB_OK;
}

/* rt_server_open creates a server (not yet listening). */
int
rt_server_open(rt_server **out, const rt_server_opts *opts)
{
	rt_server *s;

	if (opts == NULL || opts->url == NULL || opts->workers < 0 ||
	    opts->workers > RT_SERVER_MAX_WORKERS) {
		return WB_EINVAL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		return WB_ENOMEM;
	}
	s->name = strdup(opts->name != NULL ? opts->name : "warble");
	s->url = strdup(opts->url);
	s->nworkers = opts->workers > 0 ? opts->workers : RT_SERVER_WORKERS;
	s->nspares = opts->spares > 0 ? opts->spares : 0;
	s->max_msg = opts->max_msg > 0 ? opts->max_msg : RT_SERVER_MAX_MSG;
	s->stats = rt_stats_new();
	s->start_us = wb_mono_us();
	if (s->name == NULL || s->url == NULL || s->stats == NULL) {
		rt_server_close(s);
		return WB_ENOMEM;
	}
	s->shard = opts->shard;
	s->tls = opts->tls;
	s->routes[WB_OP_PING] = (rt_server_route) { rt_server_ping, s, .callers = RT_PEER_ALL };
	s->routes[WB_OP_STATS] =
	    (rt_server_route) { rt_server_op_stats, s, .callers = RT_PEER_GATEWAY };
	/* each request of a batch is checked as if it came alone */
	s->routes[WB_OP_BATCH] = (rt_server_route) { rt_server_batch, s, .callers = RT_PEER_ALL };
	if (rt_server_gauge(s, "process_cpu_us", rt_proc_cpu_us, NULL) != WB_OK ||
	    rt_server_gauge(s, "process_rss_bytes", rt_proc_rss_bytes, NULL) != WB_OK ||
	    rt_server_gauge(s, "process_start_ms", rt_proc_start_ms, NULL) != WB_OK ||
	    rt_server_gauge(s, "process_open_fds", rt_proc_open_fds, NULL) != WB_OK) {
		rt_server_close(s);
		return WB_ENOMEM;
	}
	if (opts->local && (s->local = rt_local_add(s->url, rt_server_call, s)) == 0) {
		RT_ERRORF("%s: %s is served in this process already", s->name, s->url);
		rt_server_close(s);
		return WB_EINVAL;
	}
	*out = s;
	return WB_OK;
}

/* rt_server_handle routes op to fn; call before rt_server_start. */
int
rt_server_handle(rt_server *s, wb_op op, rt_handler_fn fn, void *arg)
{
	rt_route r = { op, fn, 0, 0, RT_PEER_ALL };

	return rt_server_routes(s, &r, 1, arg);
}

int
rt_server_routes(rt_server *s, const rt_route *routes, size_t n, void *arg)
{
	for (size_t i = 0; i < n; i++) {
		const rt_route *r = &routes[i];
		wb_mask         req = 0, opt = 0;
		if (r->op <= WB_OP_NONE || r->op >= WB_OP_COUNT || r->fn == NULL || s->started) {
			return WB_EINVAL;
		}
		wb_op_fields(r->op, &req, &opt);
		if (r->owner != 0 && ((req | opt) & wb_mask_bit(r->owner)) == 0) {
			return WB_EINVAL; /* the owner must be a field of the op */
		}
		s->routes[r->op] = (rt_server_route) { r->fn, arg, r->owner, r->flags, r->callers };
	}
	return WB_OK;
}

/* rt_server_slot_of reads the slot the owner field's value f of type t names (an id: its group's first slot); false if it names none. */
static bool
rt_server_slot_of(wb_type t, uint64_t v, unsigned *slot)
{
	if (t == WB_T_ID || t == WB_T_IDS) {
		*slot = wb_id_node(v) * WB_GROUP_SLOTS;
	} else {
		*slot = wb_slot(v);
	}
	return true;
}

/*
 * rt_server_misrouted tells whether req, for an op whose owner is field f,
 * names a slot this shard does not own, and then fills rep with
 * WRONG_SHARD naming the shard that owns it.  A request without the
 * field is left to the handler (the op's checks say whether it may).
 */
static bool
rt_server_misrouted(const rt_server *s, wb_field f, const wb_obj *req, wb_obj *rep)
{
	const uint64_t *vs = NULL;
	const char     *str;
	uint64_t        v, author;
	size_t          n = 0, len;
	wb_type         t = wb_field_type(f);
	unsigned        slot;

	if (t == WB_T_U64 || t == WB_T_ID) {
		if (!wb_get_u64(req, f, &v)) {
			return false;
		}
		vs = &v;
		n = 1;
	} else if (t == WB_T_U64S || t == WB_T_IDS) {
		(void)wb_get_u64s(req, f, &vs, &n);
	} else if (t == WB_T_STR && f == WB_F_MEDIA) {
		if (!wb_get_str(req, f, &str, &len) || !wb_media_id_parse(str, len, &author, &v)) {
			return false;
		}
		vs = &author;
		n = 1;
		t = WB_T_U64;
	}
	for (size_t i = 0; i < n; i++) {
		if (rt_server_slot_of(t, vs[i], &slot) && !wb_shard_owns(s->shard, slot)) {
			unsigned owner = wb_slot_shard(slot, s->shard.count);
			wb_reply_error(rep, WB_EWRONGSHARD,
			    "%s %llu is in slot group %u, served by %s shard %u of %u, not %u",
			    wb_field_name(f), (unsigned long long)vs[i], wb_slot_group(slot),
			    s->name, owner, s->shard.count, s->shard.index);
			wb_set_u64(rep, WB_F_SHARD, owner);
			return true;
		}
	}
	return false;
}

/* rt_server_limit sets how requests may arrive (rt_server_limits); call before rt_server_start. */
int
rt_server_limit(rt_server *s, const rt_server_limits *lim)
{
	if (s->started || lim->request_ms < 0 || (lim->open_max > 0 && lim->admit == NULL)) {
		return WB_EINVAL;
	}
	s->lim = *lim;
	return WB_OK;
}

/* rt_server_gauge adds a named figure to the stats reply; call before rt_server_start. */
int
rt_server_gauge(rt_server *s, const char *name, rt_gauge_fn fn, void *arg)
{
	char *n;

	if (name == NULL || fn == NULL || s->started || s->ngauges == RT_SERVER_GAUGES) {
		return WB_EINVAL;
	}
	if ((n = strdup(name)) == NULL) {
		return WB_ENOMEM;
	}
	s->gauges[s->ngauges++] = (rt_gauge) { n, fn, arg };
	return WB_OK;
}

int
rt_server_gauge_list(rt_server *s, rt_gauge_list_fn fn, void *arg)
{
	if (fn == NULL || s->started || s->nlists == RT_SERVER_GAUGE_LISTS) {
		return WB_EINVAL;
	}
	s->lists[s->nlists].fn = fn;
	s->lists[s->nlists++].arg = arg;
	return WB_OK;
}

/*
 * rt_server_run checks req, runs its op's handler and completes rep;
 * returns the op, for stats.  The handler's thread logs as this service,
 * with the request's id (if it has one; an in-process call keeps its
 * caller's otherwise).
 */
static wb_op
rt_server_run(rt_server *s, const wb_obj *req, wb_obj *rep)
{
	char        err[256], rid[WB_RID_MAX + 1];
	wb_op       op = wb_op_of(req);
	const char *prev_rid = wb_rid(), *prev_svc, *r;
	size_t      rn;
	int         rv;

	err[0] = '\0';
	if ((rv = wb_check_request(req, &op, err, sizeof(err))) != 0) {
		wb_reply_error(rep, rv, "%s", err[0] != '\0' ? err : wb_strerror(rv));
		return op;
	}
	if (op <= WB_OP_NONE || op >= WB_OP_COUNT || s->routes[op].fn == NULL) {
		wb_reply_error(
		    rep, WB_EBADOP, "operation %s is not served by %s", wb_op_name(op), s->name);
		return op;
	}
	if (wb_get_str(req, WB_F_RID, &r, &rn)) { /* checked: at most WB_RID_MAX */
		memcpy(rid, r, rn);
		rid[rn] = '\0';
		wb_rid_swap(rid);
	}
	prev_svc = rt_log_swap_service(s->name);
	const rt_server_route *route = &s->routes[op];
	unsigned peer = rt_server_conn != NULL ? rt_loop_conn_peer_id(rt_server_conn) : RT_PEER_ALL;
	if (((route->callers | RT_PEER_ADMIN) & peer) == 0) {
		rv = WB_EPERM;
		wb_reply_error(rep, rv, "%s does not serve %s to %s", s->name, wb_op_name(op),
		    rt_tls_peer_name((rt_peer)(peer & -peer)));
	} else if (s->shard.count > 1 && route->owner != 0 &&
	           rt_server_misrouted(s, route->owner, req, rep)) {
		rv = WB_EWRONGSHARD;
	} else {
		if (route->flags & RT_ROUTE_SLOW) {
			rt_loop_slow_begin();
		}
		rv = route->fn(route->arg, req, rep);
		if (route->flags & RT_ROUTE_SLOW) {
			rt_loop_slow_end();
		}
	}
	if (rv != 0) {
		if (!wb_has(rep, WB_F_ERR)) {
			wb_reply_error(rep, rv, NULL);
		}
		if (rv == WB_EINTERNAL || rv == WB_EIO || rv == WB_ECORRUPT || rv == WB_ENOMEM) {
			RT_WARNF("%s failed: %s: %s", wb_op_name(op), wb_err_name(rv),
			    wb_str(rep, WB_F_MSG, wb_strerror(rv)));
		}
	} else if (!wb_has(rep, WB_F_OK)) {
		if (wb_set_bool(rep, WB_F_OK, true) != 0) {
			wb_reply_error(rep, WB_ENOMEM, NULL);
		}
	}
	RT_DEBUGF("%s: %s", wb_op_name(op), rv == 0 ? "ok" : wb_err_name(rv));
	rt_log_swap_service(prev_svc);
	wb_rid_swap(prev_rid);
	return op;
}

/*
 * rt_server_reply_build runs on a worker: it turns the request bytes into
 * a reply object, never failing for bad input (that becomes an error
 * reply).  Sets *opp to the request's op, for stats.
 */
static wb_obj *
rt_server_reply_build(rt_server *s, const void *buf, size_t len, wb_op *opp)
{
	char      err[256];
	wb_obj   *req = NULL, *rep;
	wb_limits lim = wb_limits_default;
	int       rv;

	err[0] = '\0';
	*opp = WB_OP_NONE;
	if ((rep = wb_msg_new()) == NULL) {
		return NULL;
	}
	lim.max_bytes = s->max_msg;
	if ((rv = wb_decode(&req, buf, len, &lim, err, sizeof(err))) != 0) {
		wb_reply_error(rep, rv, "%s", err[0] != '\0' ? err : wb_strerror(rv));
	} else {
		*opp = rt_server_run(s, req, rep);
	}
	wb_msg_free(req);
	return rep;
}

/* rt_server_call is s's rt_local entry point: req served on the caller's thread, with stats. */
static int
rt_server_call(void *arg, const wb_obj *req, wb_obj **rep)
{
	rt_server  *s = arg;
	uint64_t    start_us = wb_mono_us();
	wb_op       op = wb_op_of(req);
	const char *emsg;
	int         rv = WB_ENOMEM;

	if ((*rep = wb_msg_new()) != NULL) {
		op = rt_server_run(s, req, *rep);
		rv = wb_reply_code(*rep, &emsg);
	}
	rt_stats_record(s->stats, op, wb_mono_us() - start_us, rv != WB_OK);
	return rv;
}

static int
rt_server_out_write(void *arg, const char *buf, size_t len)
{
	rt_work *w = arg;

	if (!rt_buf_grow(&w->out, &w->cap, w->len + len)) {
		return WB_ENOMEM;
	}
	memcpy(w->out + w->len, buf, len);
	w->len += len;
	return 0;
}

/* rt_server_encode packs rep after w's header room; falls back to a short error reply. */
static int
rt_server_encode(rt_work *w, wb_obj *rep, size_t off, wb_op op)
{
	int rv;

	w->len = off;
	rv = rep != NULL ? wb_encode(rep, rt_server_out_write, w) : WB_ENOMEM;
	if (rv != 0) {
		/* Say so if at all possible: an error reply is tiny. */
		RT_ERRORF("%s: cannot encode reply: %s", wb_op_name(op), wb_strerror(rv));
		w->len = off;
		if (rep != NULL && wb_reply_error(rep, WB_EINTERNAL, "cannot encode reply") == 0) {
			rv = wb_encode(rep, rt_server_out_write, w);
		}
	}
	return rv;
}

/*
 * rt_server_hdr returns the length of the request id words at the front of p (n bytes), or 0 if
 * they are not all there or run past RT_WIRE_MAX_HOPS.
 */
static size_t
rt_server_hdr(const uint8_t *p, size_t n)
{
	size_t hdr = 0;

	do {
		if (hdr + 4 > n || hdr == 4 * RT_WIRE_MAX_HOPS) {
			return 0;
		}
		hdr += 4;
	} while ((rt_wire_get(p + hdr - 4, 4) & 0x80000000u) == 0);
	return hdr;
}

/*
 * rt_server_send sends rep as the reply to the request whose id words are p[0..hdr); false if the
 * connection must close.
 */
static bool
rt_server_send(rt_work *w, rt_loop_conn *c, const uint8_t *p, size_t hdr, wb_obj *rep, wb_op op)
{
	size_t lead = rt_loop_conn_ipc(c) ? 9 : 8, off = lead + hdr;
	bool   sent = true;

	if (!rt_buf_grow(&w->out, &w->cap, off + 256)) {
		return false;
	}
	if (rt_server_encode(w, rep, off, op) == 0) {
		/* [01] length | the request's header words | body */
		w->out[0] = 1;
		rt_wire_put(w->out + lead - 8, w->len - lead, 8);
		memcpy(w->out + lead, p, hdr);
		sent = rt_loop_send(c, w->out, w->len);
	} /* else nothing to send: the client times out */
	if (w->cap > RT_SERVER_KEEP_BUF) {
		free(w->out); /* keep idle workers small */
		w->out = NULL;
		w->cap = 0;
	}
	return sent;
}

/*
 * rt_server_request serves one request payload p of c (its header words,
 * then the body) and sends the reply; false if the connection must close.
 * A payload without a request id is dropped, as nng's REP socket does.
 */
static bool
rt_server_request(rt_server *s, rt_work *w, rt_loop_conn *c, const uint8_t *p, size_t n)
{
	uint64_t    start_us = wb_mono_us();
	size_t      hdr = rt_server_hdr(p, n);
	wb_obj     *rep;
	wb_op       op = WB_OP_NONE;
	const char *emsg;
	bool        failed, sent;

	if (hdr == 0) {
		return true;
	}
	rt_server_conn = c;
	rep = rt_server_reply_build(s, p + hdr, n - hdr, &op);
	rt_server_conn = NULL;
	failed = rep == NULL || wb_reply_code(rep, &emsg) != WB_OK;
	/* counted before the reply leaves: a client holding the reply finds it in stats */
	rt_stats_record(s->stats, op, wb_mono_us() - start_us, failed);
	sent = rt_server_send(w, c, p, hdr, rep, op);
	wb_msg_free(rep);
	return sent;
}

/* What rt_server_admit decided about a large request in progress. */
enum { RT_ADMIT_WAIT, RT_ADMIT_TAKE, RT_ADMIT_REFUSED, RT_ADMIT_CLOSE };

/*
 * rt_server_admit looks at the first avail bytes of a request payload p
 * larger than open_max (its id words, then the message) and lets the
 * admit function decide; a refusal is answered here.
 */
static int
rt_server_admit(rt_server *s, rt_work *w, rt_loop_conn *c, const uint8_t *p, size_t avail)
{
	uint64_t start_us = wb_mono_us();
	size_t   hdr = rt_server_hdr(p, avail),
	       seen = avail < s->lim.open_max ? avail : s->lim.open_max;
	bool      final = avail >= s->lim.open_max;
	wb_obj   *head = NULL, *rep;
	wb_limits lim = wb_limits_default;
	char      err[256];
	int       rv;

	if (hdr == 0) {
		/* no request id to answer to: a peer that is not an SP client */
		return avail >= 4 * RT_WIRE_MAX_HOPS ? RT_ADMIT_CLOSE : RT_ADMIT_WAIT;
	}
	if (seen < hdr) {
		seen = hdr; /* an open_max smaller than the id words */
	}
	if ((rep = wb_msg_new()) == NULL) {
		return RT_ADMIT_CLOSE;
	}
	lim.max_bytes = s->max_msg;
	err[0] = '\0';
	rt_server_conn = c;
	if ((rv = wb_decode_head(&head, p + hdr, seen - hdr, &lim, err, sizeof(err))) != WB_OK) {
		wb_reply_error(rep, rv, "%s", err[0] != '\0' ? err : wb_strerror(rv));
	} else if ((rv = s->lim.admit(s->lim.arg, head, final, rep)) < 0 && final) {
		rv = WB_ETOOBIG;
		wb_reply_error(rep, rv,
		    "a request over %zu bytes must say what it is in its first %zu",
		    s->lim.open_max, s->lim.open_max);
	} else if (rv > 0 && !wb_has(rep, WB_F_ERR)) {
		wb_reply_error(rep, rv, NULL);
	}
	rt_server_conn = NULL;
	if (rv == WB_OK || rv < 0) {
		wb_msg_free(head);
		wb_msg_free(rep);
		return rv == WB_OK ? RT_ADMIT_TAKE : RT_ADMIT_WAIT;
	}
	RT_DEBUGF("a request over %zu bytes refused from its head: %s", s->lim.open_max,
	    wb_str(rep, WB_F_MSG, wb_err_name(rv)));
	rt_stats_record(
	    s->stats, head != NULL ? wb_op_of(head) : WB_OP_NONE, wb_mono_us() - start_us, true);
	wb_msg_free(head);
	rv = rt_server_send(w, c, p, hdr, rep, WB_OP_NONE) ? RT_ADMIT_REFUSED : RT_ADMIT_CLOSE;
	wb_msg_free(rep);
	return rv;
}

/* rt_server_skip drops what arrived of a refused request (in[0..n)); returns the bytes dropped. */
static size_t
rt_server_skip(uintptr_t *st, size_t n)
{
	uintptr_t left = *st >> RT_SRV_SKIP_SHIFT;
	size_t    take = n < left ? n : (size_t)left;

	left -= take;
	*st = (*st & (((uintptr_t)1 << RT_SRV_SKIP_SHIFT) - 1)) | (left << RT_SRV_SKIP_SHIFT);
	if (left == 0) {
		*st &= ~(uintptr_t)(RT_SRV_SKIP | RT_SRV_TIMED);
	}
	return take;
}

/*
 * rt_server_frames serves every whole request at the front of in, admitting or refusing a large one
 * in progress; the bytes consumed, or -1 to close.
 */
static ssize_t
rt_server_frames(rt_server *s, rt_work *w, rt_loop_conn *c, uintptr_t *st, const uint8_t *in,
    size_t n, size_t *want)
{
	size_t   lead = rt_loop_conn_ipc(c) ? 9 : 8, at = 0;
	uint64_t mlen;

	if (!(*st & RT_SRV_READY)) {
		if (n < RT_WIRE_HELLO) {
			return 0;
		}
		if (!rt_wire_hello_ok(in, RT_WIRE_REQ)) {
			return -1; /* not an SP REQ client */
		}
		*st = RT_SRV_READY;
		at = RT_WIRE_HELLO;
	}
	for (;;) {
		if (*st & RT_SRV_SKIP) {
			at += rt_server_skip(st, n - at);
			if (*st & RT_SRV_SKIP) {
				break;
			}
		}
		if (n - at < lead) {
			break;
		}
		if (lead == 9 && in[at] != 1) {
			return -1;
		}
		mlen = rt_wire_get(in + at + lead - 8, 8);
		if (mlen > s->max_msg + 4 * RT_WIRE_MAX_HOPS) {
			RT_DEBUGF("request of %llu bytes refused", (unsigned long long)mlen);
			return -1; /* as nng does: the connection goes */
		}
		if (n - at - lead < mlen) {
			if (s->lim.open_max == 0 || mlen <= s->lim.open_max ||
			    (*st & RT_SRV_ADMITTED)) {
				*want = lead + (size_t)mlen; /* room for the whole request */
				break;
			}
			/*
			 * looked at again only once twice as much has come: O(open_max) a request
			 */
			size_t avail = n - at - lead, seen = (size_t)(*st >> RT_SRV_SKIP_SHIFT);
			if (avail < s->lim.open_max && avail < 2 * seen) {
				break;
			}
			*st = (*st & (((uintptr_t)1 << RT_SRV_SKIP_SHIFT) - 1)) |
			      ((uintptr_t)avail << RT_SRV_SKIP_SHIFT);
			switch (rt_server_admit(s, w, c, in + at + lead, avail)) {
			case RT_ADMIT_TAKE:
				*st = (*st & (RT_SRV_READY | RT_SRV_TIMED)) | RT_SRV_ADMITTED;
				*want = lead + (size_t)mlen;
				break;
			case RT_ADMIT_REFUSED:
				*st = (*st & (RT_SRV_READY | RT_SRV_TIMED)) | RT_SRV_SKIP |
				      ((uintptr_t)(lead + mlen) << RT_SRV_SKIP_SHIFT);
				continue; /* drop what has come of it, and the rest as it comes */
			case RT_ADMIT_CLOSE:
				return -1;
			default:
				break; /* too little of it yet to tell */
			}
			break;
		}
		if (!rt_server_request(s, w, c, in + at + lead, (size_t)mlen)) {
			return -1;
		}
		at += lead + (size_t)mlen;
		*st = RT_SRV_READY; /* the next request starts afresh */
	}
	return (ssize_t)at;
}

/*
 * rt_server_serve is the loop's serve callback: the handshake, then every whole request in `in`; a
 * request left part-way runs its deadline.
 */
static ssize_t
rt_server_serve(
    void *arg, void *scratch, rt_loop_conn *c, const uint8_t *in, size_t n, size_t *want)
{
	rt_server *s = arg;
	uintptr_t *st = rt_loop_conn_state(c);
	ssize_t    at = rt_server_frames(s, scratch, c, st, in, n, want);

	if (at < 0 || s->lim.request_ms == 0) {
		return at;
	}
	if ((size_t)at < n || (*st & RT_SRV_SKIP)) {
		/* a request (or the handshake) part-way: it has request_ms from its first byte */
		if (!(*st & RT_SRV_TIMED)) {
			*st |= RT_SRV_TIMED;
			rt_loop_conn_wait(c, s->lim.request_ms);
		} else {
			rt_loop_conn_keep(c);
		}
	}
	return at;
}

/* rt_server_accept greets a new connection with the REP handshake. */
static bool
rt_server_accept(void *arg, rt_loop_conn *c)
{
	uint8_t hello[RT_WIRE_HELLO];

	(void)arg;
	rt_wire_hello(hello, RT_WIRE_REP);
	return rt_loop_send(c, hello, sizeof(hello));
}

static void *
rt_server_work_open(void *arg)
{
	(void)arg;
	return calloc(1, sizeof(rt_work));
}

static void
rt_server_work_close(void *arg, void *scratch)
{
	rt_work *w = scratch;

	(void)arg;
	if (w != NULL) {
		free(w->out);
		free(w);
	}
}

static const rt_loop_ops rt_server_ops = {
	.worker_open = rt_server_work_open,
	.worker_close = rt_server_work_close,
	.accept = rt_server_accept,
	.serve = rt_server_serve,
};

/* rt_server_start listens and begins serving. */
int
rt_server_start(rt_server *s)
{
	rt_loop_opts lo = {
		.name = s->name,
		.url = s->url,
		.workers = s->nworkers,
		.spares = s->nspares,
		.max_buf = s->max_msg + 9 + 4 * RT_WIRE_MAX_HOPS + RT_WIRE_HELLO,
		.guard = s->lim.request_ms > 0,
		.tls = s->tls,
	};
	int rv;

	if (s->started) {
		return WB_EINVAL;
	}
	s->started = true;
	if ((rv = rt_loop_open(&s->loop, &lo, &rt_server_ops, s)) != WB_OK) {
		return rv;
	}
	if (s->local > 0) {
		rt_local_serving(s->local, true);
	}
	RT_INFOF("%s listening on %s%s (%d workers, %d spares)", s->name, s->url,
	    s->tls != NULL ? " with mutual TLS" : "", s->nworkers, s->nspares);
	return WB_OK;
}

/* rt_server_close stops accepting, finishes requests in flight, and frees the server. */
void
rt_server_close(rt_server *s)
{
	if (s == NULL) {
		return;
	}
	if (s->local > 0) {
		rt_local_remove(s->local); /* calls running in-process finish first */
	}
	if (s->loop != NULL) {
		rt_loop_close(s->loop);
		RT_INFOF("%s stopped", s->name);
	}
	for (int i = 0; i < s->ngauges; i++) {
		free(s->gauges[i].name);
	}
	rt_stats_free(s->stats);
	free(s->name);
	free(s->url);
	free(s);
}

void
rt_server_peer(struct sockaddr_storage *ss)
{
	if (rt_server_conn != NULL) {
		*ss = *rt_loop_conn_peer(rt_server_conn);
	} else {
		memset(ss, 0, sizeof(*ss));
	}
}
