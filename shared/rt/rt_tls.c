/*
 * rt_tls.c - mutual TLS 1.3 with OpenSSL 3 (rt_tls.h).
 *
 * An identity holds one SSL_CTX for both ends: TLS 1.3 only, a peer
 * certificate required and checked against the CA, no session tickets
 * (connections are pooled and long-lived, and an idle pooled connection
 * must not hold unread bytes: rt_sp peeks at it before reuse).  A reload
 * builds a whole new SSL_CTX and swaps it in under the identity's lock;
 * an SSL made earlier holds a reference to its own.
 *
 * Each identity has a watcher thread that stats its three files every
 * RT_TLS_CHECK_MS and reloads when one changed (inode, size or time: a
 * Kubernetes Secret is swapped by renaming a folder of symlinks).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "rt_log.h"
#include "rt_tls.h"
#include "wb_clock.h"
#include "wb_errors.h"

#define RT_TLS_PATH        4096
#define RT_TLS_LOG_PER_SEC 10 /* refusals logged a second, at most */
#define RT_TLS_SUFFIX      ".warble"

static const char *const rt_tls_names[] = { "user", "relation", "content", "inbox", "gateway",
	"admin" };

#define RT_TLS_NNAMES (sizeof(rt_tls_names) / sizeof(rt_tls_names[0]))

/* What a file was when it was read, to see that it changed. */
typedef struct rt_tls_stamp {
	dev_t           dev;
	ino_t           ino;
	off_t           size;
	struct timespec mtime;
} rt_tls_stamp;

enum { RT_TLS_CA, RT_TLS_CERT, RT_TLS_KEY, RT_TLS_NFILES };

struct rt_tls {
	char            name[32];
	char            path[RT_TLS_NFILES][RT_TLS_PATH];
	rt_tls_stamp    stamp[RT_TLS_NFILES];
	pthread_mutex_t reload_mu; /* one reload at a time: the watcher's or a SIGHUP's */
	pthread_mutex_t mu;        /* ctx, stop */
	SSL_CTX        *ctx;
	pthread_t       watcher;
	pthread_cond_t  stop_cv;
	bool            stop;
	rt_tls         *next; /* every open identity (rt_tls_reload_all) */
};

struct rt_tls_conn {
	SSL     *ssl;
	short    wants;
	unsigned peer;
	char     error[160];
};

static pthread_mutex_t rt_tls_all_mu = PTHREAD_MUTEX_INITIALIZER;
static rt_tls         *rt_tls_all;
static rt_tls *_Atomic rt_tls_dflt;

void
rt_tls_default_set(rt_tls *t)
{
	atomic_store(&rt_tls_dflt, t);
}

rt_tls *
rt_tls_default(void)
{
	return atomic_load(&rt_tls_dflt);
}

const char *
rt_tls_peer_name(rt_peer p)
{
	for (size_t i = 0; i < RT_TLS_NNAMES; i++) {
		if ((unsigned)p == 1u << i) {
			return rt_tls_names[i];
		}
	}
	return "?";
}

/* rt_tls_ssl_error returns OpenSSL's reason for the last failure on this thread (and clears it). */
static const char *
rt_tls_ssl_error(char *buf, size_t n)
{
	unsigned long e = ERR_get_error();

	if (e == 0) {
		snprintf(buf, n, "%s", errno != 0 ? strerror(errno) : "the connection ended");
	} else {
		ERR_error_string_n(e, buf, n);
	}
	ERR_clear_error();
	return buf;
}

/* rt_tls_stamp_of stats path into *st; false if it cannot. */
static bool
rt_tls_stamp_of(const char *path, rt_tls_stamp *st)
{
	struct stat sb;

	if (stat(path, &sb) != 0) {
		return false;
	}
	*st = (rt_tls_stamp) { sb.st_dev, sb.st_ino, sb.st_size, sb.st_mtim };
	return true;
}

static bool
rt_tls_stamp_eq(const rt_tls_stamp *a, const rt_tls_stamp *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* rt_tls_names_of returns the identities cert's SAN DNS names name. */
static unsigned
rt_tls_names_of(X509 *cert)
{
	GENERAL_NAMES *sans = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
	unsigned       ids = 0;

	for (int i = 0; sans != NULL && i < sk_GENERAL_NAME_num(sans); i++) {
		const GENERAL_NAME *g = sk_GENERAL_NAME_value(sans, i);
		const char         *dns;
		int                 len;

		if (g->type != GEN_DNS) {
			continue;
		}
		dns = (const char *)ASN1_STRING_get0_data(g->d.dNSName);
		len = ASN1_STRING_length(g->d.dNSName);
		for (size_t k = 0; k < RT_TLS_NNAMES; k++) {
			size_t nl = strlen(rt_tls_names[k]), sl = strlen(RT_TLS_SUFFIX);
			if ((size_t)len == nl + sl && memcmp(dns, rt_tls_names[k], nl) == 0 &&
			    memcmp(dns + nl, RT_TLS_SUFFIX, sl) == 0) {
				ids |= 1u << k;
			}
		}
	}
	GENERAL_NAMES_free(sans);
	return ids;
}

/* rt_tls_ctx_new builds an SSL_CTX from t's files; NULL (logged) if they do not make one. */
static SSL_CTX *
rt_tls_ctx_new(const rt_tls *t)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_method());
	char     why[256];
	X509    *own;

	if (ctx == NULL) {
		RT_ERRORF("tls %s: %s", t->name, rt_tls_ssl_error(why, sizeof(why)));
		return NULL;
	}
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) != 1 ||
	    SSL_CTX_load_verify_locations(ctx, t->path[RT_TLS_CA], NULL) != 1 ||
	    SSL_CTX_use_certificate_chain_file(ctx, t->path[RT_TLS_CERT]) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, t->path[RT_TLS_KEY], SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(ctx) != 1) {
		RT_ERRORF("tls %s: cannot use %s, %s and %s: %s", t->name, t->path[RT_TLS_CA],
		    t->path[RT_TLS_CERT], t->path[RT_TLS_KEY], rt_tls_ssl_error(why, sizeof(why)));
		SSL_CTX_free(ctx);
		return NULL;
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	SSL_CTX_set_num_tickets(ctx, 0);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF | SSL_OP_NO_TICKET);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	/* a record's header and body in one read(2), not two: what is read past
	 * the record waits in the SSL (rt_tls_conn_pending counts it) */
	SSL_CTX_set_read_ahead(ctx, 1);
	if ((own = SSL_CTX_get0_certificate(ctx)) != NULL) {
		unsigned ids = rt_tls_names_of(own);
		int      days = 0, secs = 0;

		if (ids == 0) {
			RT_WARNF("tls %s: %s names no Warble identity (SAN DNS NAME" RT_TLS_SUFFIX
			         "): its peers will refuse it",
			    t->name, t->path[RT_TLS_CERT]);
		}
		if (ASN1_TIME_diff(&days, &secs, NULL, X509_get0_notAfter(own)) == 1 &&
		    (days < 0 || secs < 0)) {
			RT_WARNF("tls %s: %s has expired", t->name, t->path[RT_TLS_CERT]);
		} else if (days < 14) {
			RT_WARNF(
			    "tls %s: %s expires in %d days", t->name, t->path[RT_TLS_CERT], days);
		}
	}
	return ctx;
}

int
rt_tls_reload(rt_tls *t)
{
	rt_tls_stamp st[RT_TLS_NFILES];
	bool         same = true;
	SSL_CTX     *ctx, *old;
	int          rc = WB_OK;

	pthread_mutex_lock(&t->reload_mu);
	for (int i = 0; i < RT_TLS_NFILES && rc == WB_OK; i++) {
		if (!rt_tls_stamp_of(t->path[i], &st[i])) {
			RT_WARNF("tls %s: cannot read %s: %s (keeping the certificates in use)",
			    t->name, t->path[i], strerror(errno));
			rc = WB_EIO;
		}
		same = same && rc == WB_OK && rt_tls_stamp_eq(&st[i], &t->stamp[i]);
	}
	if (rc != WB_OK || same) {
		pthread_mutex_unlock(&t->reload_mu);
		return rc;
	}
	memcpy(t->stamp, st, sizeof(st)); /* a bad set is not tried again until it changes */
	if ((ctx = rt_tls_ctx_new(t)) == NULL) {
		pthread_mutex_unlock(&t->reload_mu);
		return WB_EINVAL;
	}
	pthread_mutex_lock(&t->mu);
	old = t->ctx;
	t->ctx = ctx;
	pthread_mutex_unlock(&t->mu);
	pthread_mutex_unlock(&t->reload_mu);
	SSL_CTX_free(old); /* connections made from it hold their own reference */
	if (old != NULL) {
		RT_INFOF("tls %s: certificates read again from %s", t->name, t->path[RT_TLS_CERT]);
	}
	return WB_OK;
}

void
rt_tls_reload_all(void)
{
	pthread_mutex_lock(&rt_tls_all_mu);
	for (rt_tls *t = rt_tls_all; t != NULL; t = t->next) {
		(void)rt_tls_reload(t);
	}
	pthread_mutex_unlock(&rt_tls_all_mu);
}

/* rt_tls_watch is an identity's watcher thread. */
static void *
rt_tls_watch(void *arg)
{
	rt_tls *t = arg;

	pthread_mutex_lock(&t->mu);
	while (!t->stop) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += RT_TLS_CHECK_MS / 1000;
		ts.tv_nsec += (long)(RT_TLS_CHECK_MS % 1000) * 1000000L;
		ts.tv_sec += ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&t->stop_cv, &t->mu, &ts);
		if (!t->stop) {
			pthread_mutex_unlock(&t->mu);
			(void)rt_tls_reload(t);
			pthread_mutex_lock(&t->mu);
		}
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

int
rt_tls_open(rt_tls **out, const char *dir, const char *name)
{
	static const char *const files[RT_TLS_NFILES] = { "ca", NULL, NULL };
	rt_tls                  *t;

	*out = NULL;
	if (dir == NULL || name == NULL || strlen(name) >= sizeof(t->name)) {
		return WB_EINVAL;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		return WB_ENOMEM;
	}
	snprintf(t->name, sizeof(t->name), "%s", name);
	for (int i = 0; i < RT_TLS_NFILES; i++) {
		const char *ext = i == RT_TLS_KEY ? "key" : "pem";
		if ((size_t)snprintf(t->path[i], sizeof(t->path[i]), "%s/%s.%s", dir,
		        files[i] != NULL ? files[i] : name, ext) >= sizeof(t->path[i])) {
			free(t);
			return WB_EINVAL;
		}
	}
	pthread_mutex_init(&t->reload_mu, NULL);
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->stop_cv, NULL);
	int rc = rt_tls_reload(t) != WB_OK || t->ctx == NULL ? WB_EINVAL : WB_OK;
	if (rc != WB_OK) {
		RT_ERRORF(
		    "tls %s: no usable certificates in %s (WARBLE_TLS_DIR): ca.pem, %s.pem and "
		    "%s.key",
		    name, dir, name, name);
	} else if (pthread_create(&t->watcher, NULL, rt_tls_watch, t) != 0) {
		rc = WB_ENOMEM;
	}
	if (rc != WB_OK) {
		SSL_CTX_free(t->ctx);
		pthread_cond_destroy(&t->stop_cv);
		pthread_mutex_destroy(&t->mu);
		pthread_mutex_destroy(&t->reload_mu);
		free(t);
		return rc;
	}
	pthread_mutex_lock(&rt_tls_all_mu);
	t->next = rt_tls_all;
	rt_tls_all = t;
	pthread_mutex_unlock(&rt_tls_all_mu);
	RT_INFOF("tls %s: mutual TLS 1.3 with %s", name, t->path[RT_TLS_CERT]);
	*out = t;
	return WB_OK;
}

int
rt_tls_from_env(rt_tls **out, const char *name)
{
	const char *dir = getenv("WARBLE_TLS_DIR");

	*out = NULL;
	return dir == NULL || dir[0] == '\0' ? WB_OK : rt_tls_open(out, dir, name);
}

void
rt_tls_close(rt_tls *t)
{
	if (t == NULL) {
		return;
	}
	pthread_mutex_lock(&rt_tls_all_mu);
	for (rt_tls **p = &rt_tls_all; *p != NULL; p = &(*p)->next) {
		if (*p == t) {
			*p = t->next;
			break;
		}
	}
	pthread_mutex_unlock(&rt_tls_all_mu);
	pthread_mutex_lock(&t->mu);
	t->stop = true;
	pthread_cond_signal(&t->stop_cv);
	pthread_mutex_unlock(&t->mu);
	pthread_join(t->watcher, NULL);
	SSL_CTX_free(t->ctx);
	pthread_cond_destroy(&t->stop_cv);
	pthread_mutex_destroy(&t->mu);
	pthread_mutex_destroy(&t->reload_mu);
	free(t);
}

int
rt_tls_conn_new(rt_tls_conn **out, rt_tls *t, int fd, bool server)
{
	rt_tls_conn *c;

	*out = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		return WB_ENOMEM;
	}
	pthread_mutex_lock(&t->mu);
	c->ssl = SSL_new(t->ctx); /* takes its own reference to the SSL_CTX */
	pthread_mutex_unlock(&t->mu);
	if (c->ssl == NULL || SSL_set_fd(c->ssl, fd) != 1) {
		ERR_clear_error();
		rt_tls_conn_free(c);
		return WB_ENOMEM;
	}
	if (server) {
		SSL_set_accept_state(c->ssl);
	} else {
		SSL_set_connect_state(c->ssl);
	}
	*out = c;
	return WB_OK;
}

/* rt_tls_conn_fail turns SSL_get_error's answer to a failed call into errno and a result (-1, or 0 at the peer's end). */
static int
rt_tls_conn_fail(rt_tls_conn *c, int rv)
{
	int e = errno;

	switch (SSL_get_error(c->ssl, rv)) {
	case SSL_ERROR_WANT_READ:
		c->wants = POLLIN;
		errno = EAGAIN;
		return -1;
	case SSL_ERROR_WANT_WRITE:
		c->wants = POLLOUT;
		errno = EAGAIN;
		return -1;
	case SSL_ERROR_ZERO_RETURN:
		return 0;
	case SSL_ERROR_SYSCALL:
		ERR_clear_error();
		if (e == 0) {
			return 0; /* the socket ended without a close_notify */
		}
		errno = e;
		return -1;
	default:
		ERR_clear_error();
		errno = EPROTO;
		return -1;
	}
}

int
rt_tls_conn_handshake(rt_tls_conn *c)
{
	int  rv;
	long vr;

	ERR_clear_error();
	errno = 0;
	if ((rv = SSL_do_handshake(c->ssl)) == 1) {
		X509 *cert = SSL_get0_peer_certificate(c->ssl);
		c->peer = cert != NULL ? rt_tls_names_of(cert) : 0;
		if (c->peer == 0) {
			snprintf(c->error, sizeof(c->error),
			    "its certificate names no Warble identity (SAN DNS NAME" RT_TLS_SUFFIX
			    ")");
			return WB_EPERM;
		}
		return WB_OK;
	}
	int err = SSL_get_error(c->ssl, rv);
	if (err == SSL_ERROR_WANT_READ || err == SSL_ERROR_WANT_WRITE) {
		c->wants = err == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
		errno = EAGAIN;
		return -1;
	}
	if ((vr = SSL_get_verify_result(c->ssl)) != X509_V_OK) {
		snprintf(c->error, sizeof(c->error), "%s", X509_verify_cert_error_string(vr));
		ERR_clear_error();
	} else {
		char why[160];
		snprintf(c->error, sizeof(c->error), "%s", rt_tls_ssl_error(why, sizeof(why)));
	}
	return WB_EAUTH;
}

ssize_t
rt_tls_conn_read(rt_tls_conn *c, void *buf, size_t n)
{
	int rv;

	ERR_clear_error();
	errno = 0;
	if ((rv = SSL_read(c->ssl, buf, n > INT_MAX ? INT_MAX : (int)n)) > 0) {
		return rv;
	}
	return rt_tls_conn_fail(c, rv);
}

ssize_t
rt_tls_conn_write(rt_tls_conn *c, const void *buf, size_t n)
{
	int rv;

	ERR_clear_error();
	errno = 0;
	if ((rv = SSL_write(c->ssl, buf, n > INT_MAX ? INT_MAX : (int)n)) > 0) {
		return rv;
	}
	rv = rt_tls_conn_fail(c, rv);
	if (rv == 0) {
		errno = EPIPE;
		return -1;
	}
	return rv;
}

size_t
rt_tls_conn_pending(const rt_tls_conn *c)
{
	int n = SSL_pending(c->ssl);

	/* with read-ahead, bytes of a record not yet decrypted count too */
	return n > 0 ? (size_t)n : SSL_has_pending(c->ssl) ? 1 : 0;
}

short
rt_tls_conn_wants(const rt_tls_conn *c)
{
	return c->wants != 0 ? c->wants : POLLIN;
}

unsigned
rt_tls_conn_peer(const rt_tls_conn *c)
{
	return c->peer;
}

const char *
rt_tls_conn_error(const rt_tls_conn *c)
{
	return c->error[0] != '\0' ? c->error : "the handshake failed";
}

void
rt_tls_conn_close(rt_tls_conn *c)
{
	if (c != NULL && SSL_is_init_finished(c->ssl)) {
		ERR_clear_error();
		(void)SSL_shutdown(c->ssl); /* sends close_notify; does not wait for the peer's */
		ERR_clear_error();
	}
}

void
rt_tls_conn_free(rt_tls_conn *c)
{
	if (c == NULL) {
		return;
	}
	SSL_free(c->ssl);
	free(c);
}

int
rt_tls_connect(rt_tls_conn **out, rt_tls *t, int fd, int timeout_ms)
{
	uint64_t     end = wb_mono_us() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 1) * 1000;
	rt_tls_conn *c;
	int          rv;

	*out = NULL;
	if ((rv = rt_tls_conn_new(&c, t, fd, false)) != WB_OK) {
		return rv;
	}
	while ((rv = rt_tls_conn_handshake(c)) < 0) {
		struct pollfd pfd = { .fd = fd, .events = rt_tls_conn_wants(c) };
		uint64_t      now = wb_mono_us();
		int           n;

		if (errno != EAGAIN || now >= end) {
			rv = WB_ETIMEDOUT;
			break;
		}
		if ((n = poll(&pfd, 1, (int)((end - now) / 1000) + 1)) < 0 && errno != EINTR) {
			rv = WB_EUNAVAIL;
			break;
		}
	}
	if (rv != WB_OK) {
		RT_DEBUGF("tls %s: handshake with a server failed: %s", t->name,
		    rv == WB_ETIMEDOUT ? "timed out" : rt_tls_conn_error(c));
		rt_tls_conn_free(c);
		return rv == WB_ETIMEDOUT ? rv : WB_EUNAVAIL;
	}
	*out = c;
	return WB_OK;
}

void
rt_tls_refused(const char *who, const struct sockaddr_storage *addr, const char *why)
{
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	static uint64_t        second, logged, quiet;
	char                   host[INET6_ADDRSTRLEN + 8] = "an ipc peer";
	uint64_t               now = wb_mono_us() / 1000000, hid = 0;
	int                    port = 0;

	if (addr != NULL && addr->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)addr;
		inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
		port = ntohs(a->sin_port);
	} else if (addr != NULL && addr->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)addr;
		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		port = ntohs(a->sin6_port);
	}
	pthread_mutex_lock(&mu);
	if (now != second) {
		hid = quiet;
		second = now;
		logged = quiet = 0;
	}
	bool log = logged < RT_TLS_LOG_PER_SEC;
	logged += log;
	quiet += !log;
	pthread_mutex_unlock(&mu);
	if (hid > 0) {
		RT_WARNF("%s: %llu more TLS peers refused in the last second", who,
		    (unsigned long long)hid);
	}
	if (log && port > 0) {
		RT_WARNF("%s: refused TLS peer %s port %d: %s", who, host, port, why);
	} else if (log) {
		RT_WARNF("%s: refused TLS peer %s: %s", who, host, why);
	}
}

static int
rt_tls_layer_open(void *arg, int fd, int ms, void **conn)
{
	return rt_tls_connect((rt_tls_conn **)conn, arg, fd, ms);
}

static ssize_t
rt_tls_layer_read(void *conn, void *buf, size_t n)
{
	return rt_tls_conn_read(conn, buf, n);
}

static ssize_t
rt_tls_layer_write(void *conn, const void *buf, size_t n)
{
	return rt_tls_conn_write(conn, buf, n);
}

static void
rt_tls_layer_close(void *conn)
{
	rt_tls_conn_free(conn);
}

void
rt_tls_sp_layer(rt_tls *t, rt_sp_layer *l)
{
	*l = (rt_sp_layer) { rt_tls_layer_open, rt_tls_layer_read, rt_tls_layer_write,
		rt_tls_layer_close, t };
}
