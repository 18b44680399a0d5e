/*
 * rt_loop.h - the serving core of Warble's servers: worker threads on one
 * epoll set holding a listening socket and every connection it accepts.
 *
 * A protocol (the SP request/reply server, the gateway's HTTP server)
 * gives the loop its callbacks; the loop owns sockets, buffers, threads,
 * deadlines and the order of shutdown.  The worker woken for a connection
 * reads what arrived and hands the protocol the bytes not yet consumed;
 * the protocol serves every whole request in them, answering each with
 * rt_loop_send on the same thread:
 *
 *   epoll_wait -> recv -> serve (decode, handle, encode, send) -> re-arm
 *
 * A connection waiting for a request longer than its deadline (idle_ms
 * from when it began waiting, however slowly bytes arrive, or the one the
 * protocol set for the request in progress: rt_loop_conn_wait) is shut
 * down; once connections reach max_conns, idle ones get RT_LOOP_BUSY_MS.
 */
#ifndef RT_LOOP_H
#define RT_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#define RT_LOOP_BUSY_MS 250 /* an idle connection's deadline once over max_conns */

typedef struct rt_tls rt_tls;

typedef struct rt_loop      rt_loop;
typedef struct rt_loop_conn rt_loop_conn;

typedef struct rt_loop_ops {
	/* worker_open makes a worker thread's scratch state (may return NULL). */
	void *(*worker_open)(void *arg);
	/* worker_close frees what worker_open made. */
	void (*worker_close)(void *arg, void *scratch);
	/* accept greets a new connection (may send; with TLS, once the handshake is done); false drops it. */
	bool (*accept)(void *arg, rt_loop_conn *c);
	/*
	 * serve answers the whole requests at the front of in (n bytes, never
	 * 0) and returns the bytes it consumed: fewer when the rest of a
	 * request is still to come, -1 when c must close.  It may set *want to
	 * the size of the request in progress, so the buffer grows to hold it.
	 */
	ssize_t (*serve)(
	    void *arg, void *scratch, rt_loop_conn *c, const uint8_t *in, size_t n, size_t *want);
	/* closed tells the protocol c is gone, with its last state word (may be NULL). */
	void (*closed)(void *arg, uintptr_t state);
} rt_loop_ops;

typedef struct rt_loop_opts {
	const char *name;    /* for logs */
	const char *url;     /* tcp:// or ipc:// (see rt_listen.h) */
	int         workers; /* threads taking requests, each one at a time (default 8) */
	int         spares;  /* parked threads, each standing in for a worker in a slow call */
	int         idle_ms; /* deadline of a connection waiting for a request (0: none) */
	size_t
	    max_conns; /* connections before idle ones get RT_LOOP_BUSY_MS (0: the open-files limit less 128) */
	size_t  max_buf; /* bytes a connection may hold unserved (default 4 MiB + 1 KiB) */
	bool    guard;   /* watch deadlines even with idle_ms 0: those of rt_loop_conn_wait and of
	                   max_conns (with idle_ms set, always) */
	rt_tls *tls;     /* mutual TLS on every connection, peers refused before a byte is served
	                   (NULL: plain) */
} rt_loop_opts;

/* rt_loop_open listens on opts->url and starts the workers. */
int rt_loop_open(rt_loop **out, const rt_loop_opts *opts, const rt_loop_ops *ops, void *arg);

/* rt_loop_port returns the TCP port listened on (-1 for ipc). */
int rt_loop_port(rt_loop *l);

/* rt_loop_close stops accepting, lets requests in flight finish (bounded), closes every connection and frees l; NULL is ignored. */
void rt_loop_close(rt_loop *l);

/*
 * rt_loop_yields_set makes every worker of the process, done with a
 * request and finding none waiting, look again n times, giving up its
 * CPU (sched_yield) between looks, before it sleeps, while fewer than
 * lookers (at least 1) other workers of its loop are looking; the rest
 * sleep at once, as all do with n 0, the default.  The daemons set it
 * (rt_daemon.h, --yield).
 */
void rt_loop_yields_set(int n, int lookers);

/* rt_loop_slow_begin lets a parked spare take the calling worker's place until its slow call is done (no-op off a loop's thread; calls nest: the outermost counts). */
void rt_loop_slow_begin(void);

/* rt_loop_slow_end counts the calling worker as serving again; it parks after its request if enough others serve. */
void rt_loop_slow_end(void);

/* rt_loop_send writes len bytes to c, waiting a bounded time while the peer takes them; false if it cannot. */
bool rt_loop_send(rt_loop_conn *c, const void *buf, size_t len);

/* rt_loop_conn_peer returns the address of c's client (family 0 for ipc). */
const struct sockaddr_storage *rt_loop_conn_peer(const rt_loop_conn *c);

/* rt_loop_conn_peer_id returns the identities c's TLS certificate names (rt_tls.h), or RT_PEER_ALL on a port without TLS. */
unsigned rt_loop_conn_peer_id(const rt_loop_conn *c);

/* rt_loop_conn_ipc tells whether c came through an ipc:// listener. */
bool rt_loop_conn_ipc(const rt_loop_conn *c);

/* rt_loop_conn_state returns the protocol's word of state for c (0 when accepted). */
uintptr_t *rt_loop_conn_state(rt_loop_conn *c);

/* rt_loop_conn_wait gives c ms from now (instead of idle_ms) to send the rest of the request in progress; call from serve. */
void rt_loop_conn_wait(rt_loop_conn *c, int ms);

/*
 * rt_loop_conn_keep keeps c's deadline as it stands though serve consumed bytes (the request in
 * progress goes on); call from serve.
 */
void rt_loop_conn_keep(rt_loop_conn *c);

/*
 * rt_loop_conn_finish ends c's sending side after the replies sent so far
 * and leaves it open for reading until the client closes (or its deadline),
 * so that request bytes left unread do not reset the connection before the
 * client has read the last reply; serve then consumes what arrives unread.
 */
void rt_loop_conn_finish(rt_loop_conn *c);

#endif
