/*
 * http_reply.c - answering a request: the response with its status,
 * reason and headers, and the JSON error body.  The lowest layer of the
 * HTTP side: http.c and http_api.c answer through it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_int.h"
#include "http_json.h"
#include "rt_log.h"
#include "wb_clock.h"

void
http_client(http_job *j, struct sockaddr_storage *ss)
{
	*ss = *rt_loop_conn_peer(j->conn);
}

void
http_respond(http_job *j, int status, const char *ctype, const void *body, size_t len)
{
	http_buf *r = &j->resp;
	bool      head = j->head.method != NULL && strcmp(j->head.method, "HEAD") == 0;

	gw_metrics_status(j->h->metrics, status);
	RT_DEBUGF("%s %s: %d", j->head.method != NULL ? j->head.method : "-",
	    j->head.target != NULL ? j->head.target : "-", status);
	http_buf_clear(r);
	if (http_buf_printf(r, "HTTP/1.1 %d %s\r\n", status, rt_http_reason(status)) != WB_OK ||
	    (status != 304 && http_buf_printf(r, "Content-Type: %s\r\nContent-Length: %zu\r\n",
	                          ctype, len) != WB_OK) ||
	    http_buf_printf(r, "%s%s%s%s%s%s%s%s%s\r\n",
	        j->headers[0] != '\0' ? j->headers : "Cache-Control: no-store\r\n",
	        j->rid[0] != '\0' ? "X-Request-Id: " : "", j->rid, j->rid[0] != '\0' ? "\r\n" : "",
	        j->allow != NULL ? "Allow: " : "", j->allow != NULL ? j->allow : "",
	        j->allow != NULL ? "\r\n" : "",
	        j->www_auth ? "WWW-Authenticate: Bearer realm=\"warble\"\r\n" : "",
	        j->close             ? "Connection: close\r\n"
	        : j->head.minor == 0 ? "Connection: keep-alive\r\n" /* a 1.0 client asked for it */
	                             : "") != WB_OK ||
	    (!head && status != 304 && http_buf_add(r, body, len) != WB_OK)) {
		j->broken = true; /* out of memory: the connection goes */
		return;
	}
	j->broken = !rt_loop_send(j->conn, r->p, r->len);
	if (r->cap > 256 * 1024) {
		http_buf_free(r); /* keep idle workers small */
	}
	if (j->out.cap > 256 * 1024) {
		http_buf_free(&j->out);
	}
}

void
http_fail(http_job *j, int status, const char *name, const char *fmt, ...)
{
	char    msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	http_buf_clear(&j->out);
	http_json_error_named(&j->out, name, msg);
	http_respond(j, status, "application/json", j->out.p != NULL ? j->out.p : "", j->out.len);
}
