/*
 * lg_pg.c - the PostgreSQL peers (see lg_peer.h for the schema): postgres
 * fans out on read, postgres-fanout on write, each in a schema of its own
 * in one server; prepared statements, one connection per client thread.
 */
#include <stdlib.h>
#include <string.h>

#include "lg_peer.h"
#include "wb_id.h"
#include "wb_clock.h"

#ifdef LG_HAVE_PG
#include <libpq-fe.h>
#include <pthread.h>

/* fan-out on read: the newest 20 of each account followed (and the reader's own), then the
 * newest 20 of those, hydrated */
#define LG_PG_HOME                                                                          \
	"SELECT p.id, p.author, u.name, p.text, p.time FROM (SELECT x.id FROM "             \
	"(SELECT followee FROM follows WHERE follower = $1 UNION ALL SELECT $1::bigint) f " \
	"CROSS JOIN LATERAL (SELECT id FROM posts WHERE author = f.followee "               \
	"ORDER BY id DESC LIMIT 20) x ORDER BY x.id DESC LIMIT 20) t "                      \
	"JOIN posts p ON p.id = t.id JOIN users u ON u.uid = p.author ORDER BY p.id DESC"
/* fan-out on write: the reader's timeline rows, hydrated */
#define LG_PG_HOME_FANOUT                                                              \
	"SELECT p.id, p.author, u.name, p.text, p.time FROM (SELECT id FROM timeline " \
	"WHERE reader = $1 ORDER BY id DESC LIMIT 20) t JOIN posts p ON p.id = t.id "  \
	"JOIN users u ON u.uid = p.author ORDER BY p.id DESC"
#define LG_PG_TIMELINE                                                \
	"SELECT p.id, p.author, u.name, p.text, p.time FROM posts p " \
	"JOIN users u ON u.uid = p.author WHERE p.author = $1 ORDER BY p.id DESC LIMIT 20"
#define LG_PG_INSERT "INSERT INTO posts (id, author, text, time) VALUES ($1, $2, $3, $4)"
/*
 * fan-out on write, one statement in one transaction: the post, a
 * timeline row for each follower and the author, and the cap: a reader's
 * rows beyond the newest $5 + 1 go, checked on one push in
 * LG_PG_TRIM_EVERY (a hash of reader and post), so that a timeline holds
 * about LG_PG_TRIM_EVERY more than the cap at most, as an inbox row may
 * for a while; reads show the newest 20 in any case.  Replies the rows
 * written.
 */
#define LG_PG_TRIM_EVERY "64"
#define LG_PG_PUBLISH                                                                        \
	"WITH p AS (INSERT INTO posts (id, author, text, time) VALUES ($1, $2, $3, $4)), "   \
	"r AS (SELECT follower AS reader FROM follows WHERE followee = $2 "                  \
	"UNION ALL SELECT $2::bigint), "                                                     \
	"i AS (INSERT INTO timeline (reader, id) SELECT reader, $1 FROM r), "                \
	"d AS (DELETE FROM timeline t USING (SELECT r.reader, (SELECT x.id FROM timeline x " \
	"WHERE x.reader = r.reader ORDER BY x.id DESC OFFSET $5 LIMIT 1) AS floor FROM r "   \
	"WHERE hashint8(r.reader # $1::bigint) % " LG_PG_TRIM_EVERY " = 0) z "               \
	"WHERE t.reader = z.reader AND t.id <= z.floor) "                                    \
	"SELECT count(*) FROM r"
#define LG_PG_MPUT "INSERT INTO media (owner, data) VALUES ($1, $2) RETURNING id"
#define LG_PG_MGET "SELECT data FROM media WHERE id = $1"

struct lg_pg {
	char           *conninfo;
	bool            fanout; /* fan-out on write, in schema fanout */
	unsigned        cap;    /* timeline rows kept per reader (fanout) */
	PGconn         *c;
	const uint64_t *uids;
	wb_idgen       *ids;
	pthread_mutex_t ids_mu;
};

struct lg_conn {
	lg_pg  *p;
	PGconn *c;
};

/* lg_pg_exec runs sql and checks it succeeded. */
static int
lg_pg_exec(PGconn *c, const char *sql)
{
	PGresult *r = PQexec(c, sql);
	int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;

	if (!ok) {
		fprintf(stderr, "warble-load: postgres: %s: %s", sql, PQerrorMessage(c));
	}
	PQclear(r);
	return ok ? 0 : -1;
}

/* lg_pg_connect opens a connection (to schema fanout if fanout) and prepares the statements. */
static PGconn *
lg_pg_connect(const char *conninfo, bool fanout)
{
	PGconn   *c = PQconnectdb(conninfo);
	PGresult *r;
	const struct {
		const char *name, *sql;
		int         n;
	} st[] = { { "home", fanout ? LG_PG_HOME_FANOUT : LG_PG_HOME, 1 },
		{ "tl", LG_PG_TIMELINE, 1 },
		{ "ins", fanout ? LG_PG_PUBLISH : LG_PG_INSERT, fanout ? 5 : 4 },
		{ "mput", LG_PG_MPUT, 2 }, { "mget", LG_PG_MGET, 1 } };

	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "warble-load: postgres %s: %s", conninfo, PQerrorMessage(c));
		PQfinish(c);
		return NULL;
	}
	if (lg_pg_exec(c, "SET statement_timeout = 30000; SET client_min_messages = warning") !=
	        0 ||
	    (fanout && lg_pg_exec(c, "SET search_path = fanout") != 0)) {
		PQfinish(c);
		return NULL;
	}
	for (size_t i = 0; i < sizeof(st) / sizeof(st[0]); i++) {
		r = PQprepare(c, st[i].name, st[i].sql, st[i].n, NULL);
		if (PQresultStatus(r) != PGRES_COMMAND_OK) {
			/* the tables may not exist yet: prepared again after setup */
		}
		PQclear(r);
	}
	return c;
}

int
lg_pg_open(lg_pg **out, const char *conninfo, bool fanout, unsigned cap)
{
	lg_pg *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (p == NULL || (p->conninfo = strdup(conninfo)) == NULL ||
	    (p->ids = wb_idgen_new()) == NULL || (p->c = lg_pg_connect(conninfo, false)) == NULL) {
		lg_pg_close(p);
		return -1;
	}
	p->fanout = fanout;
	p->cap = cap;
	pthread_mutex_init(&p->ids_mu, NULL);
	if ((fanout ? lg_pg_exec(p->c, "DROP SCHEMA IF EXISTS fanout CASCADE") != 0 ||
	                  lg_pg_exec(p->c, "CREATE SCHEMA fanout") != 0 ||
	                  lg_pg_exec(p->c, "SET search_path = fanout") != 0
	            : lg_pg_exec(p->c, "DROP TABLE IF EXISTS posts, follows, users, media") != 0) ||
	    lg_pg_exec(p->c, "CREATE TABLE users (uid bigint PRIMARY KEY, name text NOT NULL)") !=
	        0 ||
	    lg_pg_exec(p->c,
	        "CREATE TABLE follows (follower bigint NOT NULL, followee bigint NOT NULL)") != 0 ||
	    lg_pg_exec(p->c, "CREATE TABLE posts (id bigint PRIMARY KEY, author bigint NOT NULL, "
	                     "text text NOT NULL, time bigint NOT NULL)") != 0 ||
	    lg_pg_exec(p->c, "CREATE INDEX posts_author_id ON posts (author, id DESC)") != 0 ||
	    (fanout && lg_pg_exec(p->c, "CREATE TABLE timeline (reader bigint NOT NULL, id bigint "
	                                "NOT NULL, PRIMARY KEY (reader, id))") != 0) ||
	    (!fanout &&
	        lg_pg_exec(p->c, "CREATE TABLE media (id bigserial PRIMARY KEY, owner bigint NOT "
	                         "NULL, data bytea NOT NULL)") != 0)) {
		lg_pg_close(p);
		return -1;
	}
	*out = p;
	return 0;
}

void
lg_pg_close(lg_pg *p)
{
	if (p != NULL) {
		PQfinish(p->c);
		wb_idgen_free(p->ids);
		free(p->conninfo);
		free(p);
	}
}

/* lg_pg_copy streams rows (text format) into COPY sql; row(i, buf) writes row i. */
static int
lg_pg_copy_begin(PGconn *c, const char *sql)
{
	PGresult *r = PQexec(c, sql);
	int       ok = PQresultStatus(r) == PGRES_COPY_IN;

	if (!ok) {
		fprintf(stderr, "warble-load: postgres: %s: %s", sql, PQerrorMessage(c));
	}
	PQclear(r);
	return ok ? 0 : -1;
}

/* lg_pg_copy_end finishes a COPY and checks its result. */
static int
lg_pg_copy_end(PGconn *c)
{
	PGresult *r;
	int       ok = PQputCopyEnd(c, NULL) == 1;

	while ((r = PQgetResult(c)) != NULL) {
		if (PQresultStatus(r) != PGRES_COMMAND_OK) {
			ok = 0;
			fprintf(stderr, "warble-load: postgres COPY: %s", PQerrorMessage(c));
		}
		PQclear(r);
	}
	return ok ? 0 : -1;
}

int
lg_pg_copy_users(lg_pg *p, const uint64_t *uids, const char *prefix, uint64_t n)
{
	char line[96];

	if (lg_pg_copy_begin(p->c, "COPY users (uid, name) FROM STDIN") != 0) {
		return -1;
	}
	for (uint64_t i = 0; i < n; i++) {
		int k = snprintf(line, sizeof(line), "%llu\t%s%llu\n", (unsigned long long)uids[i],
		    prefix, (unsigned long long)i);
		if (PQputCopyData(p->c, line, k) != 1) {
			break;
		}
	}
	return lg_pg_copy_end(p->c);
}

int
lg_pg_copy_follows(lg_pg *p, uint64_t target, const uint64_t *fans, size_t n)
{
	char line[64];

	if (lg_pg_copy_begin(p->c, "COPY follows (follower, followee) FROM STDIN") != 0) {
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		int k = snprintf(line, sizeof(line), "%llu\t%llu\n", (unsigned long long)fans[i],
		    (unsigned long long)target);
		if (PQputCopyData(p->c, line, k) != 1) {
			break;
		}
	}
	return lg_pg_copy_end(p->c);
}

int
lg_pg_finish_setup(lg_pg *p)
{
	PGconn *c;

	if (lg_pg_exec(p->c, "ALTER TABLE follows ADD PRIMARY KEY (follower, followee)") != 0 ||
	    lg_pg_exec(p->c, "CREATE INDEX follows_followee ON follows (followee)") != 0 ||
	    lg_pg_exec(p->c, "VACUUM ANALYZE") != 0) {
		return -1;
	}
	/* prepare again now that the tables exist */
	if ((c = lg_pg_connect(p->conninfo, p->fanout)) == NULL) {
		return -1;
	}
	PQfinish(p->c);
	p->c = c;
	return 0;
}

int
lg_pg_analyze(lg_pg *p)
{
	return lg_pg_exec(p->c, "VACUUM ANALYZE");
}

/* lg_pg_insert runs the prepared publish (the insert, or the fan-out on write); *cells gets
 * the timeline rows written. */
static int
lg_pg_insert(
    const lg_pg *p, PGconn *c, uint64_t author, uint64_t id, const char *text, uint64_t *cells)
{
	char        a[24], i[24], t[24], k[24];
	const char *v[5] = { i, a, text, t, k };

	snprintf(a, sizeof(a), "%llu", (unsigned long long)author);
	snprintf(i, sizeof(i), "%llu", (unsigned long long)id);
	snprintf(t, sizeof(t), "%llu", (unsigned long long)wb_now_ms());
	snprintf(k, sizeof(k), "%u", p->cap > 0 ? p->cap - 1 : 0);
	PGresult *r = PQexecPrepared(c, "ins", p->fanout ? 5 : 4, v, NULL, NULL, 0);
	int       ok = PQresultStatus(r) == (p->fanout ? PGRES_TUPLES_OK : PGRES_COMMAND_OK);
	if (!ok) {
		fprintf(stderr, "warble-load: postgres publish: %s", PQerrorMessage(c));
	}
	*cells = ok && p->fanout && PQntuples(r) == 1 ? strtoull(PQgetvalue(r, 0, 0), NULL, 10) : 0;
	PQclear(r);
	return ok ? 0 : -1;
}

int
lg_pg_publish(
    lg_pg *p, uint64_t author, uint64_t id, const char *text, uint64_t *ack_us, uint64_t *cells)
{
	uint64_t t0 = lg_now_us();
	int      rc = lg_pg_insert(p, p->c, author, id, text, cells);

	*ack_us = lg_now_us() - t0;
	return rc;
}

/* lg_pg_query runs a one-parameter prepared read; *n gets the rows, pg (if not NULL) the
 * page, *first (if not NULL) the first row's id. */
static int
lg_pg_query(PGconn *c, const char *stmt, uint64_t uid, lg_page *pg, size_t *n, uint64_t *first)
{
	char        u[24];
	const char *v[1] = { u };

	snprintf(u, sizeof(u), "%llu", (unsigned long long)uid);
	PGresult *r = PQexecPrepared(c, stmt, 1, v, NULL, NULL, 0);
	int       ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQnfields(r) == 5;
	*n = ok ? (size_t)PQntuples(r) : 0;
	if (first != NULL) {
		*first = ok && *n > 0 ? strtoull(PQgetvalue(r, 0, 0), NULL, 10) : 0;
	}
	for (int i = 0; pg != NULL && i < (int)*n; i++) {
		lg_page_put(pg, (size_t)i, strtoull(PQgetvalue(r, i, 0), NULL, 10),
		    strtoull(PQgetvalue(r, i, 1), NULL, 10), PQgetvalue(r, i, 2),
		    (size_t)PQgetlength(r, i, 2), PQgetvalue(r, i, 3),
		    (size_t)PQgetlength(r, i, 3));
	}
	if (!ok) {
		fprintf(stderr, "warble-load: postgres %s: %s", stmt, PQerrorMessage(c));
	}
	PQclear(r);
	return ok ? 0 : -1;
}

uint64_t
lg_pg_newest(lg_pg *p, uint64_t uid)
{
	size_t   n;
	uint64_t id = 0;

	lg_pg_query(p->c, "home", uid, NULL, &n, &id);
	return id;
}

uint64_t
lg_pg_db_bytes(lg_pg *p)
{
	PGresult *r = PQexec(p->c, "SELECT pg_database_size(current_database())");
	uint64_t  v = 0;

	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
		v = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
	}
	PQclear(r);
	return v;
}

int
lg_pg_server_pid(lg_pg *p)
{
	PGresult *r = PQexec(p->c, "SELECT pg_backend_pid()");
	int       backend = 0;

	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
		backend = atoi(PQgetvalue(r, 0, 0));
	}
	PQclear(r);
	return backend > 0 ? lg_parent_pid(backend) : 0;
}

/* ---- mixed workload ---- */

static lg_conn *
lg_pg_conn_open(void *ctx)
{
	lg_conn *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		return NULL;
	}
	c->p = ctx;
	if ((c->c = lg_pg_connect(c->p->conninfo, c->p->fanout)) == NULL) {
		free(c);
		return NULL;
	}
	return c;
}

static void
lg_pg_conn_close(lg_conn *c)
{
	if (c != NULL) {
		PQfinish(c->c);
		free(c);
	}
}

static int
lg_pg_home(lg_conn *c, uint32_t u, lg_page *pg, size_t *n)
{
	return lg_pg_query(c->c, "home", c->p->uids[u], pg, n, NULL);
}

static int
lg_pg_timeline(lg_conn *c, uint32_t u, lg_page *pg, size_t *n)
{
	return lg_pg_query(c->c, "tl", c->p->uids[u], pg, n, NULL);
}

static int
lg_pg_post(lg_conn *c, uint32_t u, const char *text, uint64_t *id)
{
	uint64_t cells;

	pthread_mutex_lock(&c->p->ids_mu);
	*id = wb_id_next(c->p->ids, 9, wb_now_ms());
	pthread_mutex_unlock(&c->p->ids_mu);
	return lg_pg_insert(c->p, c->c, c->p->uids[u], *id, text, &cells);
}

void
lg_pg_backend(lg_pg *p, const uint64_t *uids, lg_backend *b)
{
	memset(b, 0, sizeof(*b));
	p->uids = uids;
	b->name = p->fanout ? "postgres-fanout" : "postgres";
	b->ctx = p;
	b->conn_open = lg_pg_conn_open;
	b->conn_close = lg_pg_conn_close;
	b->home = lg_pg_home;
	b->timeline = lg_pg_timeline;
	b->post = lg_pg_post;
}

/* ---- media: images as bytea (TOAST), sent and read in binary ---- */

static int
lg_pg_media_put(
    lg_conn *c, uint32_t u, const void *p, size_t n, char *ref, size_t *stored, size_t *preview)
{
	char        o[24];
	const char *v[2] = { o, p };
	int         len[2] = { 0, (int)n }, fmt[2] = { 0, 1 };

	snprintf(o, sizeof(o), "%llu", (unsigned long long)c->p->uids[u]);
	PGresult *r = PQexecPrepared(c->c, "mput", 2, v, len, fmt, 0);
	int       ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
	         (size_t)PQgetlength(r, 0, 0) < LG_MEDIA_REF_MAX;
	if (ok) {
		memcpy(ref, PQgetvalue(r, 0, 0), (size_t)PQgetlength(r, 0, 0) + 1);
		*stored = n; /* the bytes as sent, no preview */
		*preview = 0;
	} else {
		fprintf(stderr, "warble-load: postgres media insert: %s", PQerrorMessage(c->c));
	}
	PQclear(r);
	return ok ? 0 : -1;
}

static int
lg_pg_media_get(lg_conn *c, const char *ref, const void *p, size_t n, size_t stored)
{
	const char *v[1] = { ref };
	PGresult   *r = PQexecPrepared(c->c, "mget", 1, v, NULL, NULL, 1); /* binary result */

	int ok = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 &&
	         (size_t)PQgetlength(r, 0, 0) == n && memcmp(PQgetvalue(r, 0, 0), p, n) == 0;
	if (!ok && PQresultStatus(r) != PGRES_TUPLES_OK) {
		fprintf(stderr, "warble-load: postgres media read: %s", PQerrorMessage(c->c));
	}
	PQclear(r);
	(void)stored; /* == n */
	return ok ? 0 : -1;
}

void
lg_pg_media_backend(lg_pg *p, const uint64_t *uids, lg_media_backend *b)
{
	memset(b, 0, sizeof(*b));
	p->uids = uids;
	b->name = "postgres";
	b->ctx = p;
	b->conn_open = lg_pg_conn_open;
	b->conn_close = lg_pg_conn_close;
	b->put = lg_pg_media_put;
	b->get = lg_pg_media_get;
}

uint64_t
lg_pg_media_bytes(lg_pg *p)
{
	PGresult *r = PQexec(p->c, "SELECT pg_total_relation_size('media')");
	uint64_t  v = 0;

	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
		v = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
	}
	PQclear(r);
	return v;
}

#else /* no libpq at build time */

int
lg_pg_open(lg_pg **out, const char *conninfo, bool fanout, unsigned cap)
{
	(void)conninfo, (void)fanout, (void)cap;
	*out = NULL;
	fprintf(stderr, "warble-load: built without libpq (tests/deps.sh bench)\n");
	return -1;
}
void
lg_pg_close(lg_pg *p)
{
	(void)p;
}
int
lg_pg_copy_users(lg_pg *p, const uint64_t *u, const char *x, uint64_t n)
{
	(void)p, (void)u, (void)x, (void)n;
	return -1;
}
int
lg_pg_copy_follows(lg_pg *p, uint64_t t, const uint64_t *f, size_t n)
{
	(void)p, (void)t, (void)f, (void)n;
	return -1;
}
int
lg_pg_finish_setup(lg_pg *p)
{
	(void)p;
	return -1;
}
int
lg_pg_analyze(lg_pg *p)
{
	(void)p;
	return -1;
}
int
lg_pg_publish(lg_pg *p, uint64_t a, uint64_t id, const char *t, uint64_t *x, uint64_t *y)
{
	(void)p, (void)a, (void)id, (void)t, (void)x, (void)y;
	return -1;
}
uint64_t
lg_pg_newest(lg_pg *p, uint64_t uid)
{
	(void)p, (void)uid;
	return 0;
}
uint64_t
lg_pg_db_bytes(lg_pg *p)
{
	(void)p;
	return 0;
}
int
lg_pg_server_pid(lg_pg *p)
{
	(void)p;
	return 0;
}
void
lg_pg_backend(lg_pg *p, const uint64_t *u, lg_backend *b)
{
	(void)p, (void)u;
	memset(b, 0, sizeof(*b));
}
void
lg_pg_media_backend(lg_pg *p, const uint64_t *u, lg_media_backend *b)
{
	(void)p, (void)u;
	memset(b, 0, sizeof(*b));
}
uint64_t
lg_pg_media_bytes(lg_pg *p)
{
	(void)p;
	return 0;
}

#endif
