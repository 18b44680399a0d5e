/*
 * http_json.c - wb_obj <-> JSON through jansson, one generic mapping driven by
 * each field's wb_type (see json.h).
 */
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "http_json.h"

bool
http_json_parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n == 0 || n > 20) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned d;

		if (s[i] < '0' || s[i] > '9') {
			return false;
		}
		d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10) {
			return false;
		}
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/* http_json_u64 reads a JSON integer >= 0 (a U64 value). */
static bool
http_json_u64(const json_t *v, uint64_t *out)
{
	json_int_t i;

	if (!json_is_integer(v) || (i = json_integer_value(v)) < 0) {
		return false;
	}
	*out = (uint64_t)i;
	return true;
}

/* http_json_id reads a decimal string (an ID value). */
static bool
http_json_id(const json_t *v, uint64_t *out)
{
	return json_is_string(v) &&
	       http_json_parse_u64(json_string_value(v), json_string_length(v), out);
}

static const char *
http_json_type_desc(wb_type t)
{
	switch (t) {
	case WB_T_U64:
		return "a non-negative integer";
	case WB_T_ID:
		return "a decimal string (ids exceed 2^53)";
	case WB_T_BOOL:
		return "true or false";
	case WB_T_STR:
		return "a string";
	case WB_T_U64S:
		return "an array of non-negative integers";
	case WB_T_IDS:
		return "an array of decimal strings";
	case WB_T_OBJS:
		return "an array of objects";
	}
	return "?";
}

static int http_json_obj_fill(
    wb_obj *dst, const json_t *obj, uint64_t allowed, int depth, char *err, size_t errlen);

/* http_json_field_set converts one JSON value v into field f of dst. */
static int
http_json_field_set(wb_obj *dst, wb_field f, const json_t *v, int depth)
{
	wb_type  t = wb_field_type(f);
	uint64_t u, *arr;
	size_t   n, i;
	wb_obj  *objs;
	int      rc;

	switch (t) {
	case WB_T_U64:
		return http_json_u64(v, &u) ? wb_set_u64(dst, f, u) : WB_EBADMSG;
	case WB_T_ID:
		return http_json_id(v, &u) ? wb_set_u64(dst, f, u) : WB_EBADMSG;
	case WB_T_BOOL:
		return json_is_boolean(v) ? wb_set_bool(dst, f, json_is_true(v)) : WB_EBADMSG;
	case WB_T_STR:
		if (!json_is_string(v)) {
			return WB_EBADMSG;
		}
		return wb_set_str(dst, f, json_string_value(v), json_string_length(v));
	case WB_T_U64S:
	case WB_T_IDS:
		if (!json_is_array(v)) {
			return WB_EBADMSG;
		}
		n = json_array_size(v);
		if ((arr = wb_add_u64s(dst, f, n)) == NULL && n > 0) {
			return WB_ENOMEM;
		}
		for (i = 0; i < n; i++) {
			const json_t *e = json_array_get(v, i);
			if (!(t == WB_T_U64S ? http_json_u64(e, &arr[i])
			                     : http_json_id(e, &arr[i]))) {
				return WB_EBADMSG;
			}
		}
		return WB_OK;
	case WB_T_OBJS:
		if (!json_is_array(v) || depth >= HTTP_JSON_DEPTH) {
			return WB_EBADMSG;
		}
		n = json_array_size(v);
		if ((objs = wb_add_objs(dst, f, n)) == NULL && n > 0) {
			return WB_ENOMEM;
		}
		for (i = 0; i < n; i++) {
			char sub[64];
			rc = http_json_obj_fill(&objs[i], json_array_get(v, i), UINT64_MAX,
			    depth + 1, sub, sizeof(sub));
			if (rc != WB_OK) {
				return rc;
			}
		}
		return WB_OK;
	}
	return WB_EBADMSG;
}

/* http_json_obj_fill sets every member of JSON object obj on dst. */
static int
http_json_obj_fill(
    wb_obj *dst, const json_t *obj, uint64_t allowed, int depth, char *err, size_t errlen)
{
	const char *key;
	json_t     *v;
	int         f, rc;

	if (!json_is_object(obj)) {
		snprintf(err, errlen, "expected a JSON object");
		return WB_EBADMSG;
	}
	json_object_foreach((json_t *)obj, key, v)
	{
		f = wb_field_lookup(key, strlen(key));
		if (f < 0 || f == WB_F_OK || f == WB_F_OP || f == WB_F_V) {
			snprintf(err, errlen, "unknown field \"%.64s\"", key);
			return WB_EINVAL;
		}
		if ((allowed & (UINT64_C(1) << f)) == 0) {
			if (f == WB_F_TOKEN) {
				snprintf(err, errlen,
				    "the session token goes in the "
				    "Authorization header (Bearer), not the body");
			} else {
				snprintf(err, errlen, "field \"%s\" is not accepted here", key);
			}
			return WB_EINVAL;
		}
		if ((rc = http_json_field_set(dst, (wb_field)f, v, depth)) != WB_OK) {
			if (rc == WB_EBADMSG) {
				snprintf(err, errlen, "field \"%s\" must be %s", key,
				    http_json_type_desc(wb_field_type((wb_field)f)));
			} else {
				snprintf(err, errlen, "%s", wb_strerror(rc));
			}
			return rc;
		}
	}
	return WB_OK;
}

int
http_json_to_obj(
    wb_obj *dst, const char *json, size_t len, uint64_t allowed, char *err, size_t errlen)
{
	json_error_t je;
	json_t      *root;
	int          rc;

	root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL) {
		snprintf(err, errlen, "invalid JSON at line %d, column %d: %s", je.line, je.column,
		    je.text);
		return WB_EBADMSG;
	}
	rc = http_json_obj_fill(dst, root, allowed, 0, err, errlen);
	json_decref(root);
	return rc;
}

/* http_json_u64_new makes a JSON integer (a double beyond jansson's int64 range). */
static json_t *
http_json_u64_new(uint64_t v)
{
	return v <= INT64_MAX ? json_integer((json_int_t)v) : json_real((double)v);
}

static json_t *
http_json_id_new(uint64_t v)
{
	char s[24];

	snprintf(s, sizeof(s), "%" PRIu64, v);
	return json_string(s);
}

static json_t *http_json_obj_new(const wb_obj *src, uint64_t skip);

/* http_json_val_new converts one field value to JSON (NULL if out of memory). */
static json_t *
http_json_val_new(const wb_val *v)
{
	wb_type t = wb_field_type((wb_field)v->field);
	json_t *a;

	switch (t) {
	case WB_T_U64:
		return http_json_u64_new(v->u);
	case WB_T_ID:
		return http_json_id_new(v->u);
	case WB_T_BOOL:
		return json_boolean(v->b);
	case WB_T_STR:
		/* Stored strings are checked UTF-8; should one not be, the
		 * reply stays valid JSON. */
		a = json_stringn(v->s.p, v->s.n);
		return a != NULL ? a : json_string("\xEF\xBF\xBD");
	case WB_T_U64S:
	case WB_T_IDS:
	case WB_T_OBJS:
		if ((a = json_array()) == NULL) {
			return NULL;
		}
		for (uint32_t i = 0; i < (t == WB_T_OBJS ? v->o.n : v->a.n); i++) {
			json_t *e = t == WB_T_U64S  ? http_json_u64_new(v->a.v[i])
			            : t == WB_T_IDS ? http_json_id_new(v->a.v[i])
			                            : http_json_obj_new(&v->o.v[i], 0);
			if (e == NULL || json_array_append_new(a, e) != 0) {
				json_decref(a);
				return NULL;
			}
		}
		return a;
	}
	return NULL;
}

static json_t *
http_json_obj_new(const wb_obj *src, uint64_t skip)
{
	json_t *o = json_object();

	for (uint16_t i = 0; o != NULL && i < src->n; i++) {
		const wb_val *v = &src->vals[i];
		json_t       *j;

		if (skip & (UINT64_C(1) << v->field)) {
			continue;
		}
		if ((j = http_json_val_new(v)) == NULL ||
		    json_object_set_new_nocheck(o, wb_field_name((wb_field)v->field), j) != 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

static int
http_json_dump_cb(const char *p, size_t n, void *arg)
{
	return http_buf_add(arg, p, n) == WB_OK ? 0 : -1;
}

/* http_json_dump appends j (consumed) to out. */
static int
http_json_dump(json_t *j, http_buf *out)
{
	int rc;

	if (j == NULL) {
		return WB_ENOMEM;
	}
	rc = json_dump_callback(j, http_json_dump_cb, out, JSON_COMPACT) == 0 ? WB_OK : WB_ENOMEM;
	json_decref(j);
	return rc;
}

int
http_json_from_obj(const wb_obj *src, uint64_t skip, http_buf *out)
{
	return http_json_dump(http_json_obj_new(src, skip), out);
}

int
http_json_error_named(http_buf *out, const char *name, const char *msg)
{
	json_t *o = json_object();
	json_t *m = json_string(msg);

	if (m == NULL) { /* a cut or foreign byte sequence */
		m = json_string("(message not valid UTF-8)");
	}
	if (o == NULL || json_object_set_new(o, "error", json_string(name)) != 0 ||
	    json_object_set_new(o, "message", m) != 0) {
		json_decref(o);
		return WB_ENOMEM;
	}
	return http_json_dump(o, out);
}

int
http_json_set_text(wb_obj *dst, wb_field f, const char *s, size_t n, char *err, size_t errlen)
{
	uint64_t u;

	switch (wb_field_type(f)) {
	case WB_T_U64:
	case WB_T_ID:
		if (!http_json_parse_u64(s, n, &u)) {
			snprintf(err, errlen, "%s must be a decimal number", wb_field_name(f));
			return WB_EBADMSG;
		}
		return wb_set_u64(dst, f, u);
	case WB_T_BOOL:
		if (n == 4 && memcmp(s, "true", 4) == 0) {
			return wb_set_bool(dst, f, true);
		}
		if (n == 5 && memcmp(s, "false", 5) == 0) {
			return wb_set_bool(dst, f, false);
		}
		snprintf(err, errlen, "%s must be true or false", wb_field_name(f));
		return WB_EBADMSG;
	case WB_T_STR:
		return wb_set_str(dst, f, s, n);
	default:
		snprintf(err, errlen, "%s cannot be given as text", wb_field_name(f));
		return WB_EBADMSG;
	}
}
