/*
 * lg_redis.c - the Redis peers, redis and redis-plain (see lg_peer.h for
 * the key layout), each in a database of its own on one server.
 *
 * Every command runs through one blocking hiredis context per thread with
 * a 30 s timeout; batches are pipelined (append all, then read all).
 */
#include <stdlib.h>
#include <string.h>

#include "lg_peer.h"
#include "wb_id.h"
#include "wb_clock.h"

#ifdef LG_HAVE_REDIS
#include <hiredis/hiredis.h>
#include <pthread.h>

#include "lg_redis_fn.h"

#define LG_REDIS_PAGE 10000 /* fans per SSCAN page and pipeline (plain) */

struct lg_redis {
	char            host[64];
	int             port, db;
	unsigned        cap;
	bool            fn; /* reads and publishes through the function library */
	redisContext   *c;
	const uint64_t *uids;
	wb_idgen       *ids;
	pthread_mutex_t ids_mu;
};

struct lg_conn {
	lg_redis     *r;
	redisContext *c;
};

/* lg_redis_connect opens a context with timeouts on database db. */
static redisContext *
lg_redis_connect(const char *host, int port, int db)
{
	struct timeval tv = { 30, 0 };
	redisContext  *c = redisConnectWithTimeout(host, port, tv);
	redisReply    *rep;

	if (c == NULL || c->err) {
		fprintf(stderr, "warble-load: redis %s:%d: %s\n", host, port,
		    c ? c->errstr : "out of memory");
		redisFree(c);
		return NULL;
	}
	redisSetTimeout(c, tv);
	rep = redisCommand(c, "SELECT %d", db);
	if (rep == NULL || rep->type == REDIS_REPLY_ERROR) {
		fprintf(
		    stderr, "warble-load: redis SELECT %d: %s\n", db, rep ? rep->str : c->errstr);
		freeReplyObject(rep);
		redisFree(c);
		return NULL;
	}
	freeReplyObject(rep);
	return c;
}

/* lg_redis_drain reads n pipelined replies; -1 on a transport or command error. */
static int
lg_redis_drain(redisContext *c, size_t n)
{
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		redisReply *rep = NULL;
		if (redisGetReply(c, (void **)&rep) != REDIS_OK) {
			fprintf(stderr, "warble-load: redis: %s\n", c->errstr);
			return -1;
		}
		if (rep->type == REDIS_REPLY_ERROR) {
			fprintf(stderr, "warble-load: redis: %s\n", rep->str);
			rc = -1;
		}
		freeReplyObject(rep);
	}
	return rc;
}

int
lg_redis_open(lg_redis **out, const char *host, int port, int db, bool fn, unsigned cap)
{
	lg_redis   *r = calloc(1, sizeof(*r));
	redisReply *rep;

	*out = NULL;
	if (r == NULL) {
		return -1;
	}
	snprintf(r->host, sizeof(r->host), "%s", host);
	r->port = port;
	r->db = db;
	r->fn = fn;
	r->cap = cap;
	if ((r->c = lg_redis_connect(host, port, db)) == NULL ||
	    (r->ids = wb_idgen_new()) == NULL) {
		lg_redis_close(r);
		return -1;
	}
	pthread_mutex_init(&r->ids_mu, NULL);
	rep = redisCommand(r->c, "FLUSHDB");
	freeReplyObject(rep);
	if (fn) {
		rep = redisCommand(r->c, "FUNCTION LOAD REPLACE %s", lg_redis_fn_source());
		if (rep == NULL || rep->type == REDIS_REPLY_ERROR) {
			fprintf(stderr, "warble-load: redis FUNCTION LOAD: %s\n",
			    rep ? rep->str : r->c->errstr);
			freeReplyObject(rep);
			lg_redis_close(r);
			return -1;
		}
		freeReplyObject(rep);
	}
	*out = r;
	return 0;
}

void
lg_redis_close(lg_redis *r)
{
	if (r != NULL) {
		redisFree(r->c);
		wb_idgen_free(r->ids);
		free(r);
	}
}

int
lg_redis_add_users(lg_redis *r, const uint64_t *uids, const char *prefix, uint64_t n)
{
	size_t cmds = 0;

	for (uint64_t i = 0; i < n; i++) {
		redisAppendCommand(r->c, "HSET user:%llu name %s%llu", (unsigned long long)uids[i],
		    prefix, (unsigned long long)i);
		if (++cmds == 1000 || i + 1 == n) {
			if (lg_redis_drain(r->c, cmds) != 0) {
				return -1;
			}
			cmds = 0;
		}
	}
	return 0;
}

int
lg_redis_add_fans(lg_redis *r, uint64_t target, const uint64_t *fans, size_t n)
{
	char        key[40];
	const char *argv[1002];
	size_t      argl[1002];
	char(*num)[24] = malloc(1000 * sizeof(*num));
	size_t cmds = 0;
	int    rc;

	if (num == NULL) {
		return -1;
	}
	snprintf(key, sizeof(key), "fans:%llu", (unsigned long long)target);
	for (size_t off = 0; off < n; off += 1000) {
		size_t k = n - off < 1000 ? n - off : 1000;
		argv[0] = "SADD";
		argl[0] = 4;
		argv[1] = key;
		argl[1] = strlen(key);
		for (size_t i = 0; i < k; i++) {
			argl[i + 2] = (size_t)snprintf(
			    num[i], sizeof(num[i]), "%llu", (unsigned long long)fans[off + i]);
			argv[i + 2] = num[i];
		}
		redisAppendCommandArgv(r->c, (int)k + 2, argv, argl); /* copies */
		cmds++;
		if (cmds == 64) {
			if (lg_redis_drain(r->c, cmds) != 0) {
				free(num);
				return -1;
			}
			cmds = 0;
		}
	}
	rc = lg_redis_drain(r->c, cmds);
	free(num);
	return rc;
}

/* ---- plain: commands from the client ---- */

/* lg_redis_store writes the post hash, the author's own timeline and the author's home. */
static int
lg_redis_store(
    redisContext *c, uint64_t author, uint64_t id, const char *text, const char *name, unsigned cap)
{
	redisAppendCommand(c, "HSET post:%llu author %llu name %s text %s time %llu",
	    (unsigned long long)id, (unsigned long long)author, name, text,
	    (unsigned long long)wb_now_ms());
	redisAppendCommand(c, "ZADD utl:%llu %llu %llu", (unsigned long long)author,
	    (unsigned long long)id, (unsigned long long)id);
	redisAppendCommand(c, "ZADD tl:%llu %llu %llu", (unsigned long long)author,
	    (unsigned long long)id, (unsigned long long)id);
	redisAppendCommand(
	    c, "ZREMRANGEBYRANK tl:%llu 0 %lld", (unsigned long long)author, -(long long)cap - 1);
	return lg_redis_drain(c, 4);
}

/* lg_redis_fanout pushes id into every fan's timeline; *cells gets the count. */
static int
lg_redis_fanout(redisContext *c, uint64_t author, uint64_t id, unsigned cap, uint64_t *cells)
{
	char      cursor[32] = "0";
	int       rounds = 0;
	long long trim = -(long long)cap - 1;

	*cells = 0;
	do {
		redisReply *rep = redisCommand(c, "SSCAN fans:%llu %s COUNT %d",
		    (unsigned long long)author, cursor, LG_REDIS_PAGE);
		if (rep == NULL || rep->type != REDIS_REPLY_ARRAY || rep->elements != 2) {
			freeReplyObject(rep);
			return -1;
		}
		snprintf(cursor, sizeof(cursor), "%s", rep->element[0]->str);
		redisReply *m = rep->element[1];
		for (size_t i = 0; i < m->elements; i++) {
			redisAppendCommand(c, "ZADD tl:%s %llu %llu", m->element[i]->str,
			    (unsigned long long)id, (unsigned long long)id);
			redisAppendCommand(
			    c, "ZREMRANGEBYRANK tl:%s 0 %lld", m->element[i]->str, trim);
		}
		size_t k = m->elements;
		freeReplyObject(rep);
		if (lg_redis_drain(c, 2 * k) != 0) {
			return -1;
		}
		*cells += k;
	} while (strcmp(cursor, "0") != 0 && ++rounds < 10000000);
	return 0;
}

/* ---- fn: the function library (lg_redis_fn.c) ---- */

/* lg_redis_fn_step reads a {cursor, fans} reply into cursor and *cells; -1 if it is not one. */
static int
lg_redis_fn_step(redisContext *c, redisReply *rep, char *cursor, size_t len, uint64_t *cells)
{
	int ok = rep != NULL && rep->type == REDIS_REPLY_ARRAY && rep->elements == 2 &&
	         rep->element[0]->type == REDIS_REPLY_STRING &&
	         rep->element[1]->type == REDIS_REPLY_INTEGER;

	if (ok) {
		snprintf(cursor, len, "%s", rep->element[0]->str);
		*cells += (uint64_t)rep->element[1]->integer;
	} else {
		fprintf(stderr, "warble-load: redis FCALL: %s\n",
		    rep == NULL                      ? c->errstr
		    : rep->type == REDIS_REPLY_ERROR ? rep->str
		                                     : "unexpected reply");
	}
	freeReplyObject(rep);
	return ok ? 0 : -1;
}

/* lg_redis_fn_publish stores and fans out a post in one call per page of fans; *ack_us the
 * first. */
static int
lg_redis_fn_publish(redisContext *c, uint64_t author, uint64_t id, const char *text,
    const char *name, unsigned cap, uint64_t *ack_us, uint64_t *cells)
{
	unsigned long long a = author, i = id;
	char               cursor[32];
	uint64_t           t0 = lg_now_us();
	int                rounds = 0;

	*cells = 0;
	redisReply *rep = redisCommand(c,
	    "FCALL publish 4 post:%llu utl:%llu tl:%llu fans:%llu %llu %llu %s %s %llu %u", i, a, a,
	    a, i, a, name, text, (unsigned long long)wb_now_ms(), cap);
	if (lg_redis_fn_step(c, rep, cursor, sizeof(cursor), cells) != 0) {
		return -1;
	}
	if (ack_us != NULL) {
		*ack_us = lg_now_us() - t0;
	}
	while (strcmp(cursor, "0") != 0 && ++rounds < 10000000) {
		rep = redisCommand(c, "FCALL fanout 1 fans:%llu %s %llu %u", a, cursor, i, cap);
		if (lg_redis_fn_step(c, rep, cursor, sizeof(cursor), cells) != 0) {
			return -1;
		}
	}
	return 0;
}

int
lg_redis_publish(lg_redis *r, uint64_t author, const char *name, uint64_t id, const char *text,
    uint64_t *ack_us, uint64_t *fanout_us, uint64_t *cells)
{
	uint64_t t0 = lg_now_us();
	int      rc;

	if (r->fn) {
		rc = lg_redis_fn_publish(r->c, author, id, text, name, r->cap, ack_us, cells);
		*fanout_us = lg_now_us() - t0 - *ack_us;
		return rc;
	}
	if (lg_redis_store(r->c, author, id, text, name, r->cap) != 0) {
		return -1;
	}
	uint64_t t1 = lg_now_us();
	rc = lg_redis_fanout(r->c, author, id, r->cap, cells);
	*ack_us = t1 - t0;
	*fanout_us = lg_now_us() - t1;
	return rc;
}

uint64_t
lg_redis_newest(lg_redis *r, uint64_t uid)
{
	redisReply *rep = redisCommand(r->c, "ZREVRANGE tl:%llu 0 0", (unsigned long long)uid);
	uint64_t    id = 0;

	if (rep != NULL && rep->type == REDIS_REPLY_ARRAY && rep->elements == 1) {
		id = strtoull(rep->element[0]->str, NULL, 10);
	}
	freeReplyObject(rep);
	return id;
}

uint64_t
lg_redis_used_memory(lg_redis *r)
{
	redisReply *rep = redisCommand(r->c, "INFO memory");
	uint64_t    v = 0;

	if (rep != NULL && rep->type == REDIS_REPLY_STRING) {
		const char *p = strstr(rep->str, "used_memory:");
		if (p != NULL) {
			v = strtoull(p + 12, NULL, 10);
		}
	}
	freeReplyObject(rep);
	return v;
}

int
lg_redis_server_pid(lg_redis *r)
{
	redisReply *rep = redisCommand(r->c, "INFO server");
	int         pid = 0;

	if (rep != NULL && rep->type == REDIS_REPLY_STRING) {
		const char *p = strstr(rep->str, "process_id:");
		if (p != NULL) {
			pid = atoi(p + 11);
		}
	}
	freeReplyObject(rep);
	return pid;
}

/* ---- mixed workload ---- */

static lg_conn *
lg_redis_conn_open(void *ctx)
{
	lg_conn *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		return NULL;
	}
	c->r = ctx;
	if ((c->c = lg_redis_connect(c->r->host, c->r->port, c->r->db)) == NULL) {
		free(c);
		return NULL;
	}
	return c;
}

static void
lg_redis_conn_close(lg_conn *c)
{
	if (c != NULL) {
		redisFree(c->c);
		free(c);
	}
}

/* lg_redis_is_str says whether a reply is a string (a field that was there). */
static bool
lg_redis_is_str(const redisReply *r)
{
	return r->type == REDIS_REPLY_STRING;
}

/* lg_redis_put keeps post i (id, then author, name, text, time in f) in pg. */
static void
lg_redis_put(lg_page *pg, size_t i, const redisReply *id, redisReply *const *f)
{
	lg_page_put(pg, i, strtoull(id->str, NULL, 10), strtoull(f[0]->str, NULL, 10), f[1]->str,
	    f[1]->len, f[2]->str, f[2]->len);
}

/* lg_redis_read_plain reads the newest 20 ids of key and their posts (pipelined HMGETs). */
static int
lg_redis_read_plain(redisContext *c, const char *kind, uint64_t uid, lg_page *pg, size_t *n)
{
	redisReply *ids =
	    redisCommand(c, "ZREVRANGE %s:%llu 0 %d", kind, (unsigned long long)uid, LG_PAGE - 1);
	int rc = 0;

	*n = 0;
	if (ids == NULL || ids->type != REDIS_REPLY_ARRAY) {
		freeReplyObject(ids);
		return -1;
	}
	for (size_t i = 0; i < ids->elements; i++) {
		redisAppendCommand(c, "HMGET post:%s author name text time", ids->element[i]->str);
	}
	for (size_t i = 0; i < ids->elements; i++) {
		redisReply *p = NULL;
		if (redisGetReply(c, (void **)&p) != REDIS_OK) {
			freeReplyObject(ids);
			return -1;
		}
		if (p->type == REDIS_REPLY_ARRAY && p->elements == 4 &&
		    lg_redis_is_str(p->element[0]) && lg_redis_is_str(p->element[1]) &&
		    lg_redis_is_str(p->element[2])) {
			lg_redis_put(pg, *n, ids->element[i], p->element);
			(*n)++;
		} else {
			rc = -1; /* a post the timeline names is not there */
		}
		freeReplyObject(p);
	}
	freeReplyObject(ids);
	return rc;
}

/* lg_redis_read_fn reads the newest 20 posts of key with one FCALL_RO page. */
static int
lg_redis_read_fn(redisContext *c, const char *kind, uint64_t uid, lg_page *pg, size_t *n)
{
	redisReply *rep =
	    redisCommand(c, "FCALL_RO page 1 %s:%llu %d", kind, (unsigned long long)uid, LG_PAGE);
	int rc = rep != NULL && rep->type == REDIS_REPLY_ARRAY && rep->elements % 5 == 0 &&
	                 rep->elements <= 5 * LG_PAGE
	             ? 0
	             : -1;

	*n = 0;
	for (size_t i = 0; rc == 0 && i < rep->elements; i += 5) {
		redisReply **f = rep->element + i;
		if (!lg_redis_is_str(f[0]) || !lg_redis_is_str(f[1]) || !lg_redis_is_str(f[2]) ||
		    !lg_redis_is_str(f[3])) {
			rc = -1; /* a post the timeline names is not there */
			break;
		}
		lg_redis_put(pg, *n, f[0], f + 1);
		(*n)++;
	}
	if (rc != 0) {
		fprintf(stderr, "warble-load: redis FCALL_RO page: %s\n",
		    rep == NULL                      ? c->errstr
		    : rep->type == REDIS_REPLY_ERROR ? rep->str
		                                     : "unexpected reply");
	}
	freeReplyObject(rep);
	return rc;
}

static int
lg_redis_home(lg_conn *c, uint32_t u, lg_page *pg, size_t *n)
{
	return (c->r->fn ? lg_redis_read_fn : lg_redis_read_plain)(
	    c->c, "tl", c->r->uids[u], pg, n);
}

static int
lg_redis_timeline(lg_conn *c, uint32_t u, lg_page *pg, size_t *n)
{
	return (c->r->fn ? lg_redis_read_fn : lg_redis_read_plain)(
	    c->c, "utl", c->r->uids[u], pg, n);
}

static int
lg_redis_post(lg_conn *c, uint32_t u, const char *text, uint64_t *id)
{
	char     name[32];
	uint64_t cells;

	pthread_mutex_lock(&c->r->ids_mu);
	*id = wb_id_next(c->r->ids, 7, wb_now_ms());
	pthread_mutex_unlock(&c->r->ids_mu);
	snprintf(name, sizeof(name), "gu%u", u);
	if (c->r->fn) {
		return lg_redis_fn_publish(
		    c->c, c->r->uids[u], *id, text, name, c->r->cap, NULL, &cells);
	}
	if (lg_redis_store(c->c, c->r->uids[u], *id, text, name, c->r->cap) != 0) {
		return -1;
	}
	return lg_redis_fanout(c->c, c->r->uids[u], *id, c->r->cap, &cells);
}

void
lg_redis_backend(lg_redis *r, const uint64_t *uids, lg_backend *b)
{
	memset(b, 0, sizeof(*b));
	r->uids = uids;
	b->name = r->fn ? "redis" : "redis-plain";
	b->ctx = r;
	b->conn_open = lg_redis_conn_open;
	b->conn_close = lg_redis_conn_close;
	b->home = lg_redis_home;
	b->timeline = lg_redis_timeline;
	b->post = lg_redis_post;
}

#else /* no hiredis at build time */

int
lg_redis_open(lg_redis **out, const char *host, int port, int db, bool fn, unsigned cap)
{
	(void)host, (void)port, (void)db, (void)fn, (void)cap;
	*out = NULL;
	fprintf(stderr, "warble-load: built without hiredis (tests/deps.sh bench)\n");
	return -1;
}
void
lg_redis_close(lg_redis *r)
{
	(void)r;
}
int
lg_redis_server_pid(lg_redis *r)
{
	(void)r;
	return 0;
}
int
lg_redis_add_users(lg_redis *r, const uint64_t *uids, const char *prefix, uint64_t n)
{
	(void)r, (void)uids, (void)prefix, (void)n;
	return -1;
}
int
lg_redis_add_fans(lg_redis *r, uint64_t t, const uint64_t *f, size_t n)
{
	(void)r, (void)t, (void)f, (void)n;
	return -1;
}
int
lg_redis_publish(lg_redis *r, uint64_t a, const char *name, uint64_t id, const char *t, uint64_t *x,
    uint64_t *y, uint64_t *z)
{
	(void)r, (void)a, (void)name, (void)id, (void)t, (void)x, (void)y, (void)z;
	return -1;
}
uint64_t
lg_redis_newest(lg_redis *r, uint64_t uid)
{
	(void)r, (void)uid;
	return 0;
}
uint64_t
lg_redis_used_memory(lg_redis *r)
{
	(void)r;
	return 0;
}
void
lg_redis_backend(lg_redis *r, const uint64_t *u, lg_backend *b)
{
	(void)r, (void)u;
	memset(b, 0, sizeof(*b));
}

#endif
