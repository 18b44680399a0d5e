/*
 * http_int.h - internals shared by the HTTP files: the server, the
 * request job, static files.
 */
#ifndef HTTP_INT_H
#define HTTP_INT_H

#include <nng/nng.h>
#include <nng/supplemental/http/http.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "http.h"
#include "http_buf.h"
#include "rt_pool.h"

#define HTTP_FILES_MAX 32        /* files of the web page */
#define HTTP_FILE_MAX  (1 << 20) /* largest one */
#define HTTP_PATH_MAX  512       /* decoded path segment bytes */

typedef struct http_file {
	char        path[80]; /* "/app.js" */
	const char *ctype;
	char       *data;
	size_t      len;
} http_file;

typedef struct http_job http_job;

struct http_job {
	http_job               *next; /* freelist */
	http_job               *all;  /* every job, for close */
	http_server            *h;
	nng_aio                *uaio; /* the server's handler aio: finish it to answer */
	nng_http_req           *req;
	nng_http_conn          *conn;
	nng_aio                *rxaio; /* reads the body */
	char                   *body;
	size_t                  body_len, body_cap;
	uint64_t                start_us;
	wb_obj                 *q, *rep;  /* request and reply, reset per request */
	http_buf                out;      /* response body */
	const char             *allow;    /* Allow header of a 405, or NULL */
	bool                    www_auth; /* add WWW-Authenticate (401) */
	bool                    close;    /* close the connection after answering */
	struct sockaddr_storage peer;     /* the client (under mu; kept after the job ends) */
	uint64_t                done_ms;  /* when its last request ended (under mu) */
};

struct http_server {
	gw               *g;
	gw_metrics       *metrics;
	http_opts         opts;
	nng_url          *url;
	nng_http_server  *srv;
	nng_http_handler *hd;
	rt_pool          *pool;
	pthread_mutex_t   mu; /* freelist, jobs, closing */
	http_job         *free, *jobs;
	bool              closing, started;
	atomic_int        inflight;
	http_file         files[HTTP_FILES_MAX];
	int               nfiles;
	pthread_t         guard; /* http_guard.c */
	pthread_mutex_t   guard_mu;
	pthread_cond_t    guard_cv;
	bool              guard_stop, guarded;
	int               port; /* the TCP port listened on (after http_start), for the guard */
};

typedef struct http_route http_route; /* http_api.c's routing table */

/* The outcome of http_parse. */
typedef struct http_parsed {
	const http_route *route;     /* the route matched (status 0) */
	int               status;    /* 0, or the HTTP status of the error */
	const char       *error;     /* its error name */
	char              msg[256];  /* its message */
	char              allow[96]; /* a 405's allowed methods */
} http_parsed;

/*
 * http_parse routes a request line (method and URI with its query) and,
 * for an API route, fills q with op, v, the path's {name}/{id} and the
 * query's fields.  Pure: no I/O, no state (fuzzed by http_parse_fuzz.c).
 * Returns 0, or an HTTP status with the error in out.
 */
int http_parse(const char *method, const char *uri, wb_obj *q, http_parsed *out);

/* http_serve handles one request with its body read (on a worker). */
void http_serve(http_job *j);

/* http_finish returns j to the freelist and completes the server's aio with res (NULL: drop the connection). */
void http_finish(http_job *j, nng_http_res *res);

/* http_respond sends status with a body (copied) and finishes the job. */
void http_respond(http_job *j, int status, const char *ctype, const void *body, size_t len);

/* http_fail sends a JSON error {"error": name, "message": ...} with status and finishes the job. */
void http_fail(http_job *j, int status, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* http_client copies the job's client address into ss (family 0 if unknown). */
void http_client(http_job *j, struct sockaddr_storage *ss);

/* http_guard_start raises the open-files limit and starts the connection guard (header deadline, cap). */
int http_guard_start(http_server *h);

/* http_guard_stop stops the guard; safe if it never started. */
void http_guard_stop(http_server *h);

/* http_guard_idle tells whether a connection last active at active_ms is idle past deadline_ms at now_ms; a request that finished after now_ms was read never makes it idle. */
bool http_guard_idle(uint64_t now_ms, uint64_t active_ms, uint64_t deadline_ms);

/* http_static_load reads the regular files of dir into memory; WB_OK also when dir is absent (logged). */
int http_static_load(http_server *h, const char *dir);

/* http_static_find returns the file for path ("/" is "/index.html"), or NULL. */
const http_file *http_static_find(http_server *h, const char *path);

/* http_static_free frees the loaded files. */
void http_static_free(http_server *h);

#endif
