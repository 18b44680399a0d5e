/*
 * lg_pg.c - the PostgreSQL peer (see lg_peer.h for the schema): fan-out
 * on read, prepared statements, one connection per client thread.
 */
#include <stdlib.h>
#include <string.h>

#include "lg_peer.h"
#include "wb_id.h"
#include "wb_clock.h"

#ifdef LG_HAVE_PG
#include <libpq-fe.h>
#include <pthread.h>

#define LG_PG_HOME                                                                \
	"SELECT p.id, p.author, u.name, p.text, p.time FROM follows f "           \
	"JOIN posts p ON p.author = f.followee JOIN users u ON u.uid = p.author " \
	"WHERE f.follower = $1 ORDER BY p.id DESC LIMIT 20"
#define LG_PG_TIMELINE                                                \
	"SELECT p.id, p.author, u.name, p.text, p.time FROM posts p " \
	"JOIN users u ON u.uid = p.author WHERE p.author = $1 ORDER BY p.id DESC LIMIT 20"
#define LG_PG_INSERT "INSERT INTO posts (id, author, text, time) VALUES ($1, $2, $3, $4)"
#define LG_PG_MPUT   "INSERT INTO media (owner, data) VALUES ($1, $2) RETURNING id"
#define LG_PG_MGET   "SELECT data FROM media WHERE id = $1"

struct lg_pg {
	char           *conninfo;
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

/* lg_pg_connect opens a connection and prepares the statements. */
static PGconn *
lg_pg_connect(const char *conninfo)
{
	PGconn   *c = PQconnectdb(conninfo);
	PGresult *r;
	const struct {
		const char *name, *sql;
		int         n;
	} st[] = { { "home", LG_PG_HOME, 1 }, { "tl", LG_PG_TIMELINE, 1 },
		{ "ins", LG_PG_INSERT, 4 }, { "mput", LG_PG_MPUT, 2 }, { "mget", LG_PG_MGET, 1 } };

	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "warble-load: postgres %s: %s", conninfo, PQerrorMessage(c));
		PQfinish(c);
		return NULL;
	}
	if (lg_pg_exec(c, "SET statement_timeout = 30000; SET client_min_messages = warning") !=
	    0) {
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
lg_pg_open(lg_pg **out, const char *conninfo)
{
	lg_pg *p = calloc(1, sizeof(*p));

	*out = NULL;
	if (p == NULL || (p->conninfo = strdup(conninfo)) == NULL ||
	    (p->ids = wb_idgen_new()) == NULL || (p->c = lg_pg_connect(conninfo)) == NULL) {
		lg_pg_close(p);
		return -1;
	}
	pthread_mutex_init(&p->ids_mu, NULL);
	if (lg_pg_exec(p->c, "DROP TABLE IF EXISTS posts, follows, users, media") != 0 ||
	    lg_pg_exec(p->c, "CREATE TABLE users (uid bigint PRIMARY KEY, name text NOT NULL)") !=
	        0 ||
	    lg_pg_exec(p->c,
	        "CREATE TABLE follows (follower bigint NOT NULL, followee bigint NOT NULL)") != 0 ||
	    lg_pg_exec(p->c, "CREATE TABLE posts (id bigint PRIMARY KEY, author bigint NOT NULL, "
	                     "text text NOT NULL, time bigint NOT NULL)") != 0 ||
	    lg_pg_exec(p->c, "CREATE INDEX posts_author_id ON posts (author, id DESC)") != 0 ||
	    lg_pg_exec(p->c, "CREATE TABLE media (id bigserial PRIMARY KEY, owner bigint NOT NULL, "
	                     "data bytea NOT NULL)") != 0) {
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
	if ((c = lg_pg_connect(p->conninfo)) == NULL) {
		return -1;
	}
	PQfinish(p->c);
	p->c = c;
	return 0;
}

int
lg_pg_analyze(lg_pg *p)
{
	return lg_pg_exec(p->c, "ANALYZE");
}

/* lg_pg_insert runs the prepared insert. */
static int
lg_pg_insert(PGconn *c, uint64_t author, uint64_t id, const char *text)
{
	char        a[24], i[24], t[24];
	const char *v[4] = { i, a, text, t };

	snprintf(a, sizeof(a), "%llu", (unsigned long long)author);
	snprintf(i, sizeof(i), "%llu", (unsigned long long)id);
	snprintf(t, sizeof(t), "%llu", (unsigned long long)wb_now_ms());
	PGresult *r = PQexecPrepared(c, "ins", 4, v, NULL, NULL, 0);
	int       ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	if (!ok) {
		fprintf(stderr, "warble-load: postgres insert: %s", PQerrorMessage(c));
	}
	PQclear(r);
	return ok ? 0 : -1;
}

int
lg_pg_publish(lg_pg *p, uint64_t author, uint64_t id, const char *text, uint64_t *ack_us)
{
	uint64_t t0 = lg_now_us();
	int      rc = lg_pg_insert(p->c, author, id, text);

	*ack_us = lg_now_us() - t0;
	return rc;
}

/* lg_pg_query runs a one-parameter prepared read; *n gets the rows, *first the first row's id. */
static int
lg_pg_query(PGconn *c, const char *stmt, uint64_t uid, size_t *n, uint64_t *first)
{
	char        u[24];
	const char *v[1] = { u };

	snprintf(u, sizeof(u), "%llu", (unsigned long long)uid);
	PGresult *r = PQexecPrepared(c, stmt, 1, v, NULL, NULL, 0);
	int       ok = PQresultStatus(r) == PGRES_TUPLES_OK;
	*n = ok ? (size_t)PQntuples(r) : 0;
	if (first != NULL) {
		*first = ok && *n > 0 ? strtoull(PQgetvalue(r, 0, 0), NULL, 10) : 0;
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

	lg_pg_query(p->c, "home", uid, &n, &id);
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
	if ((c->c = lg_pg_connect(c->p->conninfo)) == NULL) {
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
lg_pg_home(lg_conn *c, uint32_t u, size_t *n)
{
	return lg_pg_query(c->c, "home", c->p->uids[u], n, NULL);
}

static int
lg_pg_timeline(lg_conn *c, uint32_t u, size_t *n)
{
	return lg_pg_query(c->c, "tl", c->p->uids[u], n, NULL);
}

static int
lg_pg_post(lg_conn *c, uint32_t u, const char *text, uint64_t *id)
{
	pthread_mutex_lock(&c->p->ids_mu);
	*id = wb_id_next(c->p->ids, 9, wb_now_ms());
	pthread_mutex_unlock(&c->p->ids_mu);
	return lg_pg_insert(c->c, c->p->uids[u], *id, text);
}

void
lg_pg_backend(lg_pg *p, const uint64_t *uids, lg_backend *b)
{
	memset(b, 0, sizeof(*b));
	p->uids = uids;
	b->name = "postgres";
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
lg_pg_open(lg_pg **out, const char *conninfo)
{
	(void)conninfo;
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
lg_pg_publish(lg_pg *p, uint64_t a, uint64_t id, const char *t, uint64_t *x)
{
	(void)p, (void)a, (void)id, (void)t, (void)x;
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
