/*
 * rt_tls.h - mutual TLS 1.3 on the internal ports, with OpenSSL.
 *
 * One rt_tls is one identity: the CA every peer must chain to and this
 * process's certificate and key, read from a folder (WARBLE_TLS_DIR):
 *
 *   DIR/ca.pem                 the CA
 *   DIR/NAME.pem, DIR/NAME.key  this identity's certificate and key
 *
 * It serves both ends: a server asks every client for a certificate of
 * the CA and learns who it is (rt_tls_conn_peer: the identities its
 * certificate names, as SAN DNS "NAME.warble"), a client presents its own
 * and checks the server's.  Certificates are read again when their files
 * change (checked every RT_TLS_CHECK_MS, since a Kubernetes Secret
 * rotation sends no signal) or on rt_tls_reload_all (SIGHUP); new
 * connections take the new ones, open ones keep theirs.
 *
 * A connection (rt_tls_conn) wraps a socket, blocking or not: reads and
 * writes return as recv(2) and send(2) do, with errno EAGAIN when the
 * socket is not ready and rt_tls_conn_wants telling for which direction.
 * One thread at a time uses a connection.
 */
#ifndef RT_TLS_H
#define RT_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "rt_sp.h"

#define RT_TLS_CHECK_MS 1000 /* how often the files are looked at for a change */

/* The identities a certificate may name, as SAN DNS "<name>.warble". */
typedef enum rt_peer {
	RT_PEER_USER = 1 << 0,
	RT_PEER_RELATION = 1 << 1,
	RT_PEER_CONTENT = 1 << 2,
	RT_PEER_INBOX = 1 << 3,
	RT_PEER_GATEWAY = 1 << 4,
	RT_PEER_ADMIN = 1 << 5, /* warblectl admin, warble-probe, warble-load's set-up */
} rt_peer;

#define RT_PEER_ALL 0x3fu /* every identity; also what a peer on a port without TLS counts as */

typedef struct rt_tls      rt_tls;
typedef struct rt_tls_conn rt_tls_conn;

/* rt_tls_open reads dir/ca.pem, dir/name.pem and dir/name.key into an identity; WB_EINVAL (logged) if they do not make one. */
int rt_tls_open(rt_tls **out, const char *dir, const char *name);

/* rt_tls_from_env opens identity name from WARBLE_TLS_DIR; *out NULL (and WB_OK) when it is unset or empty. */
int rt_tls_from_env(rt_tls **out, const char *name);

/* rt_tls_close frees t (connections made from it keep what they need); NULL is ignored. */
void rt_tls_close(rt_tls *t);

/* rt_tls_reload reads t's files again if they changed; WB_OK, or an error (logged) with the old ones kept. */
int rt_tls_reload(rt_tls *t);

/* rt_tls_reload_all reloads every open identity (the daemons call it on SIGHUP). */
void rt_tls_reload_all(void);

/*
 * rt_tls_default_set makes t the identity of this process's clients and
 * subscribers opened without one (a tool's: warblectl, warble-probe and
 * the tests present the admin identity); NULL: none.  Daemons never set
 * it: each of their services passes its own.
 */
void rt_tls_default_set(rt_tls *t);

/* rt_tls_default returns the identity rt_tls_default_set gave (NULL if none). */
rt_tls *rt_tls_default(void);

/* rt_tls_peer_name returns the name of one identity bit ("inbox"), or "?". */
const char *rt_tls_peer_name(rt_peer p);

/* rt_tls_conn_new wraps the connected socket fd as its server end (server) or client end. */
int rt_tls_conn_new(rt_tls_conn **out, rt_tls *t, int fd, bool server);

/*
 * rt_tls_conn_handshake takes the handshake as far as the socket allows:
 * WB_OK once done (the peer's certificate checked), -1 with errno EAGAIN
 * while it waits on the socket (rt_tls_conn_wants), or an error code with
 * the reason in rt_tls_conn_error.
 */
int rt_tls_conn_handshake(rt_tls_conn *c);

/* rt_tls_conn_read reads up to n bytes as recv(2) does (0 at the peer's end; -1 with errno, EAGAIN included). */
ssize_t rt_tls_conn_read(rt_tls_conn *c, void *buf, size_t n);

/* rt_tls_conn_write writes up to n bytes as send(2) does (-1 with errno, EAGAIN included). */
ssize_t rt_tls_conn_write(rt_tls_conn *c, const void *buf, size_t n);

/* rt_tls_conn_pending returns (at least) the bytes already read from the socket and not yet handed over: nonzero means read again, the socket will not show them. */
size_t rt_tls_conn_pending(const rt_tls_conn *c);

/* rt_tls_conn_wants returns the poll(2) event the last EAGAIN waits for (POLLIN or POLLOUT). */
short rt_tls_conn_wants(const rt_tls_conn *c);

/* rt_tls_conn_peer returns the identities the peer's certificate names (rt_peer bits; 0 before the handshake). */
unsigned rt_tls_conn_peer(const rt_tls_conn *c);

/* rt_tls_conn_error returns why the handshake failed ("certificate has expired"). */
const char *rt_tls_conn_error(const rt_tls_conn *c);

/* rt_tls_conn_close tells the peer the connection ends (best effort, never waits). */
void rt_tls_conn_close(rt_tls_conn *c);

/* rt_tls_conn_free frees c (not its socket); NULL is ignored. */
void rt_tls_conn_free(rt_tls_conn *c);

/* rt_tls_refused logs that a peer at addr (NULL: an ipc peer) was refused, why, at most a few lines a second. */
void rt_tls_refused(const char *who, const struct sockaddr_storage *addr, const char *why);

/* rt_tls_connect does a client handshake on blocking or non-blocking fd within timeout_ms; WB_OK or an error (logged at debug). */
int rt_tls_connect(rt_tls_conn **out, rt_tls *t, int fd, int timeout_ms);

/* rt_tls_sp_layer fills *l so that an rt_sp client's connections speak TLS as t. */
void rt_tls_sp_layer(rt_tls *t, rt_sp_layer *l);

#endif
