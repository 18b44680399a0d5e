/*
 * http_reply.c - answering a request: the response with its status,
 * reason and headers, the JSON error body, and the job's return to the
 * freelist.  The lowest layer of the HTTP side: http.c, http_api.c and
 * http_static.c answer through it.
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
	pthread_mutex_lock(&j->h->mu);
	*ss = j->peer;
	pthread_mutex_unlock(&j->h->mu);
}

/* http_finish returns j to the freelist and completes the server's aio with res (NULL: drop the connection). */
void
http_finish(http_job *j, nng_http_res *res)
{
	http_server *h = j->h;
	nng_aio     *aio = j->uaio;

	j->req = NULL;
	j->conn = NULL;
	if (j->out.cap > 256 * 1024) {
		http_buf_free(&j->out); /* keep recycled jobs small */
	}
	pthread_mutex_lock(&h->mu);
	j->uaio = NULL;
	j->done_ms = wb_mono_us() / 1000;
	j->next = h->free;
	h->free = j;
	pthread_mutex_unlock(&h->mu);
	atomic_fetch_sub(&h->inflight, 1);
	if (res != NULL) {
		nng_aio_set_output(aio, 0, res);
		nng_aio_finish(aio, 0);
	} else {
		nng_aio_finish(aio, NNG_ECONNABORTED);
	}
}

/* http_reason names the statuses this API uses (nng 1.5.2 lacks some, e.g. 413). */
static const char *
http_reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 201:
		return "Created";
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 409:
		return "Conflict";
	case 413:
		return "Payload Too Large";
	case 429:
		return "Too Many Requests";
	case 500:
		return "Internal Server Error";
	case 503:
		return "Service Unavailable";
	case 504:
		return "Gateway Timeout";
	default:
		return NULL;
	}
}

void
http_respond(http_job *j, int status, const char *ctype, const void *body, size_t len)
{
	nng_http_res *res;

	gw_metrics_status(j->h->metrics, status);
	if (nng_http_res_alloc(&res) != 0) {
		http_finish(j, NULL);
		return;
	}
	if (nng_http_res_set_status(res, (uint16_t)status) != 0 ||
	    (http_reason(status) != NULL &&
	        nng_http_res_set_reason(res, http_reason(status)) != 0) ||
	    nng_http_res_set_header(res, "Content-Type", ctype) != 0 ||
	    nng_http_res_set_header(res, "Cache-Control", "no-store") != 0 ||
	    (j->allow != NULL && nng_http_res_set_header(res, "Allow", j->allow) != 0) ||
	    (j->www_auth &&
	        nng_http_res_set_header(res, "WWW-Authenticate", "Bearer realm=\"warble\"") != 0) ||
	    (j->close && nng_http_res_set_header(res, "Connection", "close") != 0) ||
	    nng_http_res_copy_data(res, body, len) != 0) {
		nng_http_res_free(res);
		http_finish(j, NULL);
		return;
	}
	http_finish(j, res);
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
