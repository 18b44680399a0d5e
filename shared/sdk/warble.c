/*
 * warble.c - the libwarble client: one rt_client to the gateway, the
 * session token, the last error message, and the call helper every
 * operation goes through.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "warble_int.h"

/* warble_errbuf is the per-thread copy warble_errmsg hands out. */
static __thread char warble_errbuf[WARBLE_MSG_MAX];

int
warble_open(warble_client **out, const char *gateway_url, int timeout_ms)
{
	warble_client *c;
	rt_sp_opts     so = { .timeout_ms = timeout_ms > 0 ? timeout_ms : 5000 };
	int            rc;

	if (out == NULL) {
		return WARBLE_EINVAL;
	}
	*out = NULL;
	if (gateway_url == NULL || gateway_url[0] == '\0') {
		return WARBLE_EINVAL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		return WARBLE_ENOMEM;
	}
	if ((rc = rt_sp_open(&c->sp, gateway_url, &so)) != WB_OK) {
		free(c);
		return rc; /* WARBLE_EINVAL: not a tcp:// or ipc:// address */
	}
	pthread_mutex_init(&c->mtx, NULL);
	*out = c;
	return WARBLE_OK;
}

void
warble_close(warble_client *c)
{
	if (c == NULL) {
		return;
	}
	rt_sp_close(c->sp);
	pthread_mutex_destroy(&c->mtx);
	free(c->token);
	free(c);
}

const char *
warble_strerror(int code)
{
	return wb_strerror(code);
}

const char *
warble_errname(int code)
{
	return wb_err_name(code);
}

const char *
warble_errmsg(warble_client *c)
{
	if (c == NULL) {
		return "";
	}
	pthread_mutex_lock(&c->mtx);
	memcpy(warble_errbuf, c->msg, sizeof(warble_errbuf));
	pthread_mutex_unlock(&c->mtx);
	return warble_errbuf;
}

int
warble_fail(warble_client *c, int code, const char *msg)
{
	pthread_mutex_lock(&c->mtx);
	snprintf(c->msg, sizeof(c->msg), "%s", msg != NULL ? msg : wb_strerror(code));
	c->retry_ms = 0;
	pthread_mutex_unlock(&c->mtx);
	return code;
}

uint64_t
warble_retry_ms(warble_client *c)
{
	uint64_t ms;

	if (c == NULL) {
		return 0;
	}
	pthread_mutex_lock(&c->mtx);
	ms = c->retry_ms;
	pthread_mutex_unlock(&c->mtx);
	return ms;
}

int
warble_set_token(warble_client *c, const char *token)
{
	char *t = NULL;

	if (c == NULL) {
		return WARBLE_EINVAL;
	}
	if (token != NULL && (t = strdup(token)) == NULL) {
		return WARBLE_ENOMEM;
	}
	pthread_mutex_lock(&c->mtx);
	free(c->token);
	c->token = t;
	pthread_mutex_unlock(&c->mtx);
	return WARBLE_OK;
}

const char *
warble_token(warble_client *c)
{
	const char *t;

	if (c == NULL) {
		return NULL;
	}
	pthread_mutex_lock(&c->mtx);
	t = c->token;
	pthread_mutex_unlock(&c->mtx);
	return t;
}

/* warble_call_token copies the client's token into req; false if there is none. */
static bool
warble_call_token(warble_client *c, wb_obj *req, int *rc)
{
	bool have;

	*rc = WB_OK;
	pthread_mutex_lock(&c->mtx);
	have = c->token != NULL && c->token[0] != '\0';
	if (have) {
		*rc = wb_set_cstr(req, WB_F_TOKEN, c->token);
	}
	pthread_mutex_unlock(&c->mtx);
	return have;
}

int
warble_call(warble_client *c, wb_obj *req, warble_auth auth, wb_obj **rep)
{
	wb_obj     *r = NULL;
	const char *msg;
	int         rc;

	*rep = NULL;
	if (req == NULL) {
		return warble_fail(c, WARBLE_ENOMEM, NULL);
	}
	if (auth != WARBLE_AUTH_NONE && !warble_call_token(c, req, &rc) &&
	    auth == WARBLE_AUTH_REQUIRED) {
		wb_msg_free(req);
		return warble_fail(c, WARBLE_EAUTH, "not logged in");
	}
	if (auth != WARBLE_AUTH_NONE && rc != WB_OK) {
		wb_msg_free(req);
		return warble_fail(c, rc, NULL);
	}
	rc = rt_sp_call(c->sp, req, &r);
	wb_msg_free(req);
	if (rc == WB_OK && r != NULL) {
		*rep = r;
		return WARBLE_OK;
	}
	if (r == NULL) {
		return warble_fail(c, rc,
		    rc == WB_ETIMEDOUT  ? "gateway timed out"
		    : rc == WB_EUNAVAIL ? "gateway unavailable"
		                        : NULL);
	}
	msg = NULL;
	wb_reply_code(r, &msg);
	warble_fail(c, rc, msg);
	pthread_mutex_lock(&c->mtx);
	c->retry_ms = wb_u64(r, WB_F_RETRY, 0);
	pthread_mutex_unlock(&c->mtx);
	wb_msg_free(r);
	return rc;
}
