/*
 * rt_client.h - a REQ client for service-to-service calls and the SDK.
 * Thread-safe: each call has a connection of its own (tcp:// or ipc://,
 * through rt_sp), or runs on the caller's thread (a server in this
 * process), so many threads can call through one client at once.  Every call has a deadline; a server
 * that is gone gives WB_EUNAVAIL or WB_ETIMEDOUT, never a hang.  Under
 * load, a client opened with coalesce > 0 sends calls that would
 * otherwise wait behind others as one batch message (rt_client.c).
 */
#ifndef RT_CLIENT_H
#define RT_CLIENT_H

#include "wb_proto.h"

typedef struct rt_client rt_client;
typedef struct rt_tls    rt_tls;

typedef struct rt_client_opts {
	int    timeout_ms; /* whole-call deadline (default 5000) */
	int    retries;    /* resends after a timeout, for idempotent calls (default 0) */
	size_t max_msg;    /* largest reply in bytes (default 16 MiB) */
	/* coalesce: rt_call messages in flight before further calls queue and go
	 * together as one batch (rt_server.h) when one comes back; 0 (the
	 * default): every call goes alone.  A lone call never waits. */
	int     coalesce;
	rt_tls *tls;   /* mutual TLS as this identity to a server in another process (rt_tls.h;
	                * NULL: the process's default, rt_tls_default_set, or none) */
	bool    plain; /* never TLS, whatever the default says (the gateway's public port) */
} rt_client_opts;

/* rt_client_open makes a client of url without waiting for its server (connections are made at the first call). */
int rt_client_open(rt_client **out, const char *url, const rt_client_opts *opts);

/* rt_client_close closes the client; NULL is ignored. */
void rt_client_close(rt_client *c);

/* rt_client_shutdown ends every call in flight on c at once (WB_ECLOSED) and refuses new ones; c stays valid until rt_client_close. */
void rt_client_shutdown(rt_client *c);

/* rt_client_shutdown_all shuts down every client of the process, and any opened later (a stopping daemon's last step before it waits for its own work). */
void rt_client_shutdown_all(void);

/*
 * rt_call sends req and waits for the reply.  Returns WB_OK with *rep a
 * success reply, the server's error code with *rep the error reply (its
 * message via wb_reply_code), or a transport error (WB_EUNAVAIL,
 * WB_ETIMEDOUT, WB_EBADMSG) with *rep NULL.  The caller frees *rep.
 */
int rt_call(rt_client *c, const wb_obj *req, wb_obj **rep);

/*
 * rt_call_batch sends reqs[0..n) (1 <= n <= WB_BATCH_MAX) as one batch
 * message, each served as if it came alone (rt_server.h), within the
 * client's deadline and never coalesced with other calls.  Returns WB_OK
 * with *rep the whole reply (the caller frees it) and *reps its n
 * replies in order (each one's code by wb_reply_code), or the error of
 * the whole as rt_call does.
 */
int rt_call_batch(
    rt_client *c, const wb_obj *const *reqs, size_t n, wb_obj **rep, const wb_obj **reps);

/* A call in flight, started with rt_call_start. */
typedef struct rt_pending rt_pending;

/*
 * rt_call_start sends req and returns at once, so that several calls
 * (to one service or several) wait for their replies together; every
 * started call must be ended with rt_call_finish.  No retries.  A
 * failure to send is kept and reported by rt_call_finish.
 */
int rt_call_start(rt_client *c, const wb_obj *req, rt_pending **out);

/* rt_call_finish waits for p's reply (within the client's deadline) and frees p; results as rt_call. */
int rt_call_finish(rt_pending *p, wb_obj **rep);

#endif
