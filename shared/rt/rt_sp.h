/*
 * rt_sp.h - a REQ client that speaks the SP request/reply protocol itself
 * (the wire format nng implements for tcp:// and ipc://) with plain
 * blocking system calls on the calling thread.
 *
 * A synchronous call through libnng hands the request to nng's threads
 * and waits to be woken with the reply: several wake-ups and context
 * switches per call, most of a client's CPU.  Here a call is one write,
 * a poll and one read on a connection taken from a small pool, so the
 * caller pays for the system calls and nothing else.  rt_server is the other
 * end.  The SDK calls the gateway through it, and rt_client makes every
 * call to a tcp:// or ipc:// service through it; other transports stay
 * on libnng.
 *
 * Thread-safe: concurrent calls use separate connections.  Every call has
 * a deadline; a connection that fails or times out is closed, never
 * reused, and a request is never sent twice.
 */
#ifndef RT_SP_H
#define RT_SP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "wb_proto.h"

typedef struct rt_sp rt_sp;

/*
 * A layer over each connection's socket (TLS: rt_tls_sp_layer), called
 * instead of send(2) and recv(2), so that the SDK, which has no use for
 * it, links without it.
 */
typedef struct rt_sp_layer {
	/* open wraps the connected socket fd (non-blocking) within ms: WB_OK with *conn, or an error. */
	int (*open)(void *arg, int fd, int ms, void **conn);
	/* read and write are recv(2) and send(2) over conn. */
	ssize_t (*read)(void *conn, void *buf, size_t n);
	ssize_t (*write)(void *conn, const void *buf, size_t n);
	/* close frees conn (not its socket). */
	void (*close)(void *conn);
	void *arg;
} rt_sp_layer;

typedef struct rt_sp_opts {
	int    timeout_ms; /* whole-call deadline (default 5000) */
	size_t max_msg;    /* largest reply in bytes (default 16 MiB) */
	/* wait_for_server redials a refused connection until the deadline
	 * (as nng's dialer does) instead of failing at once */
	bool               wait_for_server;
	const rt_sp_layer *layer; /* over every connection (kept by the caller; NULL: none) */
} rt_sp_opts;

/* rt_sp_supports tells whether url is one rt_sp speaks (tcp:// or ipc://). */
bool rt_sp_supports(const char *url);

/* rt_sp_open prepares a client of url (no connection yet: the first call makes one). */
int rt_sp_open(rt_sp **out, const char *url, const rt_sp_opts *opts);

/* rt_sp_close closes the client and its idle connections; NULL is ignored. */
void rt_sp_close(rt_sp *c);

/* rt_sp_call sends req and waits for the reply; results as rt_call (rt_client.h). */
int rt_sp_call(rt_sp *c, const wb_obj *req, wb_obj **rep);

/* rt_sp_call_within is rt_sp_call with a deadline of ms for this call. */
int rt_sp_call_within(rt_sp *c, const wb_obj *req, int ms, wb_obj **rep);

/* A call in flight, started with rt_sp_start. */
typedef struct rt_sp_pending rt_sp_pending;

/* rt_sp_start sends req on a connection of its own and returns; end every started call with rt_sp_finish. */
int rt_sp_start(rt_sp *c, const wb_obj *req, rt_sp_pending **out);

/* rt_sp_finish waits for p's reply (within the client's deadline from the start) and frees p; results as rt_sp_call. */
int rt_sp_finish(rt_sp_pending *p, wb_obj **rep);

/*
 * rt_sp_yields_set makes every caller of the process, its request sent,
 * look for the reply n times, giving up its CPU (sched_yield) between
 * looks, before it sleeps (0, the default: it sleeps at once).  Under
 * load the reply often comes while others run, and the caller is spared
 * a sleep and a wake-up; the daemons set it (rt_daemon.h, --yield).
 */
void rt_sp_yields_set(int n);

/* rt_sp_shutdown ends every call in flight on c at once (WB_ECLOSED) and refuses new ones; c stays valid until rt_sp_close. */
void rt_sp_shutdown(rt_sp *c);

#endif
