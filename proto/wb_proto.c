/*
 * wb_proto.c - request validation and reply construction, the protocol
 * rules every service applies to a decoded message before dispatch.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "wb_internal.h"

/* The quoted form of a peer's string in an error message: printable
 * ASCII only, at most WB_QUOTE_MAX bytes. */
#define WB_QUOTE_MAX 48

static void
wb_proto_quote(char *dst, size_t dstlen, const char *s, size_t n)
{
	size_t j = 0;

	for (size_t i = 0; i < n && j + 1 < dstlen; i++) {
		if (i == WB_QUOTE_MAX) {
			for (int k = 0; k < 3 && j + 1 < dstlen; k++) {
				dst[j++] = '.';
			}
			break;
		}
		unsigned char c = (unsigned char)s[i];
		dst[j++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	dst[j] = '\0';
}

int
wb_fail(char *err, size_t errlen, int code, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL && errlen != 0) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

int
wb_check_request(const wb_obj *req, wb_op *opp, char *err, size_t errlen)
{
	char        quoted[WB_QUOTE_MAX + 4];
	const char *name;
	size_t      n;
	uint64_t    v;
	wb_mask     required, optional, present = 0;
	wb_op       op;

	if (opp != NULL) {
		*opp = WB_OP_NONE;
	}
	if (req == NULL) {
		return wb_fail(err, errlen, WB_EINVAL, "no request");
	}
	if (!wb_get_str(req, WB_F_OP, &name, &n)) {
		return wb_fail(err, errlen, WB_EBADOP, "request has no 'op' field");
	}
	if ((op = wb_op_lookup(name, n)) == WB_OP_NONE) {
		wb_proto_quote(quoted, sizeof(quoted), name, n);
		return wb_fail(err, errlen, WB_EBADOP, "unknown operation '%s'", quoted);
	}
	if (opp != NULL) {
		*opp = op;
	}
	if (!wb_get_u64(req, WB_F_V, &v)) {
		return wb_fail(
		    err, errlen, WB_EVERSION, "%s: missing protocol version 'v'", wb_op_name(op));
	}
	if (v != WB_PROTO_VERSION) {
		return wb_fail(err, errlen, WB_EVERSION,
		    "%s: protocol version %llu not supported (this side speaks %d)", wb_op_name(op),
		    (unsigned long long)v, WB_PROTO_VERSION);
	}
	for (uint16_t i = 0; i < req->n; i++) {
		present |= wb_mask_bit(req->vals[i].field);
	}
	wb_op_fields(op, &required, &optional);
	if ((required & ~present) != 0) {
		int f = wb_mask_first(required & ~present);
		return wb_fail(err, errlen, WB_EINVAL, "%s: missing field '%s'", wb_op_name(op),
		    wb_field_name((wb_field)f));
	}
	if (wb_get_str(req, WB_F_RID, &name, &n) && !wb_rid_ok(name, n)) {
		return wb_fail(err, errlen, WB_EINVAL,
		    "%s: request id 'rid' must be 1-%d of A-Z a-z 0-9 . _ : -", wb_op_name(op),
		    WB_RID_MAX);
	}
	wb_mask extra = present & ~(required | optional | WB_M(OP) | WB_M(V) | WB_M(RID));
	if (extra != 0) {
		int f = wb_mask_first(extra);
		return wb_fail(err, errlen, WB_EINVAL, "field '%s' is not taken by '%s'",
		    wb_field_name((wb_field)f), wb_op_name(op));
	}
	return WB_OK;
}

int
wb_reply_ok(wb_obj *rep)
{
	return wb_set_bool(rep, WB_F_OK, true);
}

int
wb_page_limit(const wb_obj *req, uint64_t dflt, uint64_t max, uint64_t *out, wb_obj *rep)
{
	uint64_t v = dflt;

	if (wb_get_u64(req, WB_F_LIMIT, &v) && v == 0) {
		wb_reply_error(rep, WB_EINVAL, "limit must be 1 to %llu", (unsigned long long)max);
		return WB_EINVAL;
	}
	*out = v < max ? v : max;
	return WB_OK;
}

int
wb_reply_error(wb_obj *rep, int code, const char *fmt, ...)
{
	char    buf[256];
	char   *msg;
	int     len, rv;
	va_list ap, ap2;

	if (rep == NULL) {
		return WB_EINVAL;
	}
	if (code <= WB_OK || code >= WB_ERR_COUNT) {
		code = WB_EINTERNAL;
	}
	wb_reset(rep);
	if ((rv = wb_set_bool(rep, WB_F_OK, false)) != WB_OK ||
	    (rv = wb_set_static_str(rep, WB_F_ERR, wb_err_name(code), strlen(wb_err_name(code)))) !=
	        WB_OK) {
		return rv;
	}
	if (fmt == NULL) {
		return wb_set_static_str(
		    rep, WB_F_MSG, wb_strerror(code), strlen(wb_strerror(code)));
	}
	va_start(ap, fmt);
	va_copy(ap2, ap);
	len = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (len < 0) {
		va_end(ap2);
		return wb_set_static_str(
		    rep, WB_F_MSG, wb_strerror(code), strlen(wb_strerror(code)));
	}
	if ((size_t)len < sizeof(buf)) {
		va_end(ap2);
		return wb_set_str(rep, WB_F_MSG, buf, (size_t)len);
	}
	if ((msg = wb_arena_alloc(rep->arena, (size_t)len + 1)) == NULL) {
		va_end(ap2);
		return WB_ENOMEM;
	}
	vsnprintf(msg, (size_t)len + 1, fmt, ap2);
	va_end(ap2);
	return wb_set_static_str(rep, WB_F_MSG, msg, (size_t)len);
}

int
wb_reply_code(const wb_obj *rep, const char **msg)
{
	const char *name, *text;
	size_t      n;
	bool        ok;
	int         code;

	if (rep == NULL || !wb_get_bool(rep, WB_F_OK, &ok)) {
		if (msg != NULL) {
			*msg = "reply has no 'ok' field";
		}
		return WB_EBADMSG;
	}
	if (ok) {
		if (msg != NULL) {
			*msg = wb_strerror(WB_OK);
		}
		return WB_OK;
	}
	code = wb_get_str(rep, WB_F_ERR, &name, &n) ? wb_err_from_name(name, n) : WB_EINTERNAL;
	if (code == WB_OK) {
		code = WB_EINTERNAL; /* "ok": false with err "OK" */
	}
	if (msg != NULL) {
		*msg = wb_get_str(rep, WB_F_MSG, &text, NULL) ? text : wb_strerror(code);
	}
	return code;
}
