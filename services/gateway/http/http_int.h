/*
 * http_int.h - internals shared by the HTTP files: the server, the
 * request's job (its head is rt_http.h's), static files.
 */
#ifndef HTTP_INT_H
#define HTTP_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "http.h"
#include "http_buf.h"
#include "rt_http.h"
#include "rt_loop.h"

#define HTTP_FILES_MAX 32        /* files of the web page */
#define HTTP_FILE_MAX  (1 << 20) /* largest one */
#define HTTP_PATH_MAX  512       /* decoded path segment bytes */

/* Bits of a connection's state word (rt_loop_conn_state). */
enum {
	HTTP_ST_BODY = 1,     /* the body deadline of the request in progress is set */
	HTTP_ST_CONTINUE = 2, /* 100 Continue was sent for it */
	HTTP_ST_DRAIN = 4,    /* answered for the last time: drop what arrives */
	HTTP_ST_UPLOAD = 8,   /* the request in progress holds an upload slot (its row above) */
	HTTP_ST_ROW_SHIFT = 8 /* the slot's row in http_uploads, from this bit up */
};

typedef struct http_uploads http_uploads; /* http_upload.c's upload slots */

typedef struct http_file {
	char        path[80]; /* "/app.js" */
	const char *ctype;
	char       *data;
	size_t      len;
} http_file;

/* One worker's request: the head, the body (in the connection's buffer), the reply. */
typedef struct http_job {
	http_server  *h;
	rt_loop_conn *conn;
	rt_http_head  head;
	char          headbuf[RT_HTTP_HEAD_MAX + 1];
	const char   *body;
	size_t        body_len;
	uint64_t      start_us;
	wb_obj       *q, *rep;           /* request and reply, reset per request */
	char        rid[WB_RID_MAX + 1]; /* the request's id (the client's X-Request-Id, or new) */
	http_buf    out;                 /* response body */
	http_buf    resp;                /* the whole response */
	const char *allow;               /* Allow header of a 405, or NULL */
	char        headers[640]; /* header lines replacing Cache-Control: no-store ("": none) */
	bool        www_auth;     /* add WWW-Authenticate (401) */
	bool        close;        /* close the connection after answering */
	bool        broken;       /* the reply could not be sent */
} http_job;

struct http_server {
	gw           *g;
	gw_metrics   *metrics;
	http_opts     opts;
	http_uploads *uploads; /* upload bodies being received or served, by user */
	char         *url;     /* tcp://host:port */
	rt_loop      *loop;
	http_file     files[HTTP_FILES_MAX];
	int           nfiles;
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

/* http_is_upload tells whether method and uri (path and query) name the image upload route, whose body may exceed the usual limit. */
bool http_is_upload(const char *method, const char *uri);

/* http_media answers GET and HEAD /media/{media} (and its /preview) from the media reply in j->rep:
 * the bytes, with their caching and range headers. */
void http_media(http_job *j);

/* http_token sets the Bearer token on j->q if op takes one; false after answering 401. */
bool http_token(http_job *j, wb_op op);

/* http_uploads_open makes max upload slots, at most per_user of them held by one user. */
int http_uploads_open(http_uploads **out, int max, int per_user);

/* http_uploads_close frees u; NULL is ignored. */
void http_uploads_close(http_uploads *u);

/*
 * http_upload_begin checks the token of the upload whose head j holds and takes a slot for its user
 * into *st; false after answering 401, 429 or 503 (the connection then ends).
 */
bool http_upload_begin(http_job *j, uintptr_t *st);

/* http_upload_give gives back the slot a connection's state word holds, if any. */
void http_upload_give(http_uploads *u, uintptr_t state);

/* http_serve handles one request whose head and body have arrived (on a worker). */
void http_serve(http_job *j);

/* http_respond sends status with a body and the job's headers (no body to a HEAD). */
void http_respond(http_job *j, int status, const char *ctype, const void *body, size_t len);

/* http_fail sends a JSON error {"error": name, "message": ...} with status. */
void http_fail(http_job *j, int status, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* http_client copies the job's client address into ss (family 0 if unknown). */
void http_client(http_job *j, struct sockaddr_storage *ss);

/* http_static_load reads the regular files of dir into memory; WB_OK also when dir is absent (logged). */
int http_static_load(http_server *h, const char *dir);

/* http_static_find returns the file for path ("/" is "/index.html"), or NULL. */
const http_file *http_static_find(http_server *h, const char *path);

/* http_static_free frees the loaded files. */
void http_static_free(http_server *h);

#endif
