/*
 * http_json.c - wb_obj <-> JSON, one generic mapping driven by each
 * field's wb_type (see http_json.h): request bodies are parsed by jansson,
 * replies written straight into the reply buffer: a jansson tree per reply
 * was a third of the gateway's CPU per home read of 20 posts (104.7 ->
 * 70.2 us), a printf per key and number a quarter of the rest (-> 54.0).
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
	case WB_T_BIN:
		return "raw bytes, which JSON cannot carry";
	}
	return "?";
}

static int http_json_obj_fill(wb_obj *dst, const json_t *obj, wb_mask allowed, int depth,
    const char *prefix, char *err, size_t errlen);

/* http_json_bad names what the field at path must be, in err; returns WB_EBADMSG. */
static int
http_json_bad(char *err, size_t errlen, const char *path, const char *what)
{
	snprintf(err, errlen, "field \"%s\" must be %s", path, what);
	return WB_EBADMSG;
}

/*
 * http_json_field_set converts one JSON value v into field f of dst.  A
 * wrong value is named by its path from the body's root, into err:
 * "images[1].media", "ids[3]".
 */
static int
http_json_field_set(
    wb_obj *dst, wb_field f, const json_t *v, int depth, const char *path, char *err, size_t errlen)
{
	wb_type  t = wb_field_type(f);
	uint64_t u, *arr;
	size_t   n, i;
	wb_obj  *objs;
	char     sub[160];
	int      rc;

	switch (t) {
	case WB_T_U64:
		rc = http_json_u64(v, &u) ? wb_set_u64(dst, f, u) : WB_EBADMSG;
		break;
	case WB_T_ID:
		rc = http_json_id(v, &u) ? wb_set_u64(dst, f, u) : WB_EBADMSG;
		break;
	case WB_T_BOOL:
		rc = json_is_boolean(v) ? wb_set_bool(dst, f, json_is_true(v)) : WB_EBADMSG;
		break;
	case WB_T_STR:
		rc = json_is_string(v)
		         ? wb_set_str(dst, f, json_string_value(v), json_string_length(v))
		         : WB_EBADMSG;
		break;
	case WB_T_U64S:
	case WB_T_IDS:
		if (!json_is_array(v)) {
			return http_json_bad(err, errlen, path, http_json_type_desc(t));
		}
		n = json_array_size(v);
		if ((arr = wb_add_u64s(dst, f, n)) == NULL && n > 0) {
			return WB_ENOMEM;
		}
		for (i = 0; i < n; i++) {
			const json_t *e = json_array_get(v, i);
			if (!(t == WB_T_U64S ? http_json_u64(e, &arr[i])
			                     : http_json_id(e, &arr[i]))) {
				snprintf(sub, sizeof(sub), "%.96s[%zu]", path, i);
				return http_json_bad(err, errlen, sub,
				    http_json_type_desc(t == WB_T_U64S ? WB_T_U64 : WB_T_ID));
			}
		}
		return WB_OK;
	case WB_T_OBJS:
		if (!json_is_array(v)) {
			return http_json_bad(err, errlen, path, http_json_type_desc(t));
		}
		if (depth >= HTTP_JSON_DEPTH) {
			snprintf(err, errlen, "field \"%s\" cannot be nested this deep", path);
			return WB_EBADMSG;
		}
		n = json_array_size(v);
		if ((objs = wb_add_objs(dst, f, n)) == NULL && n > 0) {
			return WB_ENOMEM;
		}
		for (i = 0; i < n; i++) {
			snprintf(sub, sizeof(sub), "%.96s[%zu]", path, i);
			if (!json_is_object(json_array_get(v, i))) {
				return http_json_bad(err, errlen, sub, "an object");
			}
			snprintf(sub, sizeof(sub), "%.96s[%zu].", path, i);
			rc = http_json_obj_fill(&objs[i], json_array_get(v, i), ~(wb_mask)0,
			    depth + 1, sub, err, errlen);
			if (rc != WB_OK) {
				return rc;
			}
		}
		return WB_OK;
	default: /* WB_T_BIN */
		rc = WB_EBADMSG;
		break;
	}
	if (rc == WB_EBADMSG) {
		return http_json_bad(err, errlen, path, http_json_type_desc(t));
	}
	if (rc != WB_OK) {
		snprintf(err, errlen, "%s", wb_strerror(rc));
	}
	return rc;
}

/*
 * http_json_obj_fill sets every member of JSON object obj on dst; prefix ("" or "images[0].")
 * leads each field's path in messages.
 */
static int
http_json_obj_fill(wb_obj *dst, const json_t *obj, wb_mask allowed, int depth, const char *prefix,
    char *err, size_t errlen)
{
	const char *key;
	json_t     *v;
	char        path[200];
	int         f;

	if (!json_is_object(obj)) {
		snprintf(err, errlen, "expected a JSON object");
		return WB_EBADMSG;
	}
	json_object_foreach((json_t *)obj, key, v)
	{
		snprintf(path, sizeof(path), "%.120s%.64s", prefix, key);
		f = wb_field_lookup(key, strlen(key));
		if (f < 0 || f == WB_F_OK || f == WB_F_OP || f == WB_F_V) {
			snprintf(err, errlen, "unknown field \"%s\"", path);
			return WB_EINVAL;
		}
		if ((allowed & wb_mask_bit(f)) == 0) {
			if (f == WB_F_TOKEN) {
				snprintf(err, errlen,
				    "the session token goes in the "
				    "Authorization header (Bearer), not the body");
			} else {
				snprintf(err, errlen, "field \"%s\" is not accepted here", path);
			}
			return WB_EINVAL;
		}
		int rc = http_json_field_set(dst, (wb_field)f, v, depth, path, err, errlen);
		if (rc != WB_OK) {
			return rc;
		}
	}
	return WB_OK;
}

int
http_json_to_obj(
    wb_obj *dst, const char *json, size_t len, wb_mask allowed, char *err, size_t errlen)
{
	json_error_t je;
	json_t      *root;
	int          rc;

	root = json_loadb(json, len, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL) {
		/* jansson names its own flag for a NUL: say what the rule is instead */
		snprintf(err, errlen, "invalid JSON at line %d, column %d: %s", je.line, je.column,
		    json_error_code(&je) == json_error_null_character
		        ? "strings may not contain NUL (\\u0000)"
		        : je.text);
		return WB_EBADMSG;
	}
	rc = http_json_obj_fill(dst, root, allowed, 0, "", err, errlen);
	json_decref(root);
	return rc;
}

/* http_json_utf8 tells whether p[0..n) is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF). */
static bool
http_json_utf8(const unsigned char *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned c = p[i], need, cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			need = 1, cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			need = 2, cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			need = 3, cp = c & 0x07;
		} else {
			return false;
		}
		if (n - i <= need) {
			return false;
		}
		for (unsigned k = 1; k <= need; k++) {
			if ((p[i + k] & 0xc0) != 0x80) {
				return false;
			}
			cp = (cp << 6) | (p[i + k] & 0x3f);
		}
		if ((need == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
		    (need == 3 && (cp < 0x10000 || cp > 0x10ffff))) {
			return false;
		}
		i += need + 1;
	}
	return true;
}

/*
 * http_json_str appends p[0..n) as a JSON string.  Stored strings are
 * checked UTF-8; should one not be, the reply stays valid JSON with U+FFFD
 * in its place.  Only '"', '\' and control bytes are escaped: the rest of
 * UTF-8 goes as it is.
 */
static int
http_json_str(http_buf *out, const char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	static const char named[] = "\"\\\n\r\t\b\f", names[] = "\"\\nrtbf";
	size_t            run = 0;

	if (!http_json_utf8((const unsigned char *)p, n)) {
		p = "\xEF\xBF\xBD";
		n = 3;
	}
	if (http_buf_reserve(out, n + 2) != WB_OK) {
		return WB_ENOMEM;
	}
	out->p[out->len++] = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		char          esc[6] = { '\\', 0 };
		const char   *e;
		size_t        k = 2;

		if (c >= 0x20 && c != '"' && c != '\\') {
			continue;
		}
		if ((e = c != 0 ? strchr(named, c) : NULL) != NULL) {
			esc[1] = names[e - named]; /* \" \\ \n \r \t \b \f */
		} else {
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			k = 6;
		}
		if (http_buf_add(out, p + run, i - run) != WB_OK ||
		    http_buf_add(out, esc, k) != WB_OK) {
			return WB_ENOMEM;
		}
		run = i + 1;
	}
	if (http_buf_add(out, p + run, n - run) != WB_OK || http_buf_add(out, "\"", 1) != WB_OK) {
		return WB_ENOMEM;
	}
	return WB_OK;
}

/* http_json_num appends v in decimal, in quotes if quoted (an ID). */
static int
http_json_num(http_buf *out, uint64_t v, bool quoted)
{
	char  d[24];
	char *p = d + sizeof(d);

	if (quoted) {
		*--p = '"';
	}
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v > 0);
	if (quoted) {
		*--p = '"';
	}
	return http_buf_add(out, p, (size_t)(d + sizeof(d) - p));
}

static int http_json_obj(const wb_obj *src, wb_mask skip, http_buf *out);

/* http_json_val appends one field value as JSON. */
static int
http_json_val(const wb_val *v, http_buf *out)
{
	wb_type t = wb_field_type((wb_field)v->field);
	int     rc = WB_OK;

	switch (t) {
	case WB_T_U64:
	case WB_T_ID:
		return http_json_num(out, v->u, t == WB_T_ID);
	case WB_T_BOOL:
		return http_buf_add(out, v->b ? "true" : "false", v->b ? 4 : 5);
	case WB_T_STR:
		return http_json_str(out, v->s.p, v->s.n);
	case WB_T_U64S:
	case WB_T_IDS:
	case WB_T_OBJS:
		rc = http_buf_add(out, "[", 1);
		for (uint32_t i = 0; rc == WB_OK && i < (t == WB_T_OBJS ? v->o.n : v->a.n); i++) {
			if (i > 0) {
				rc = http_buf_add(out, ",", 1);
			}
			if (rc == WB_OK) {
				rc = t == WB_T_OBJS ? http_json_obj(&v->o.v[i], 0, out)
				                    : http_json_num(out, v->a.v[i], t == WB_T_IDS);
			}
		}
		return rc == WB_OK ? http_buf_add(out, "]", 1) : rc;
	case WB_T_BIN:
		break; /* http_json_obj leaves bytes out */
	}
	return WB_EINVAL;
}

/* http_json_obj appends src as a JSON object, in field order, leaving out the fields in skip. */
static int
http_json_obj(const wb_obj *src, wb_mask skip, http_buf *out)
{
	bool first = true;
	int  rc = http_buf_add(out, "{", 1);

	for (uint16_t i = 0; rc == WB_OK && i < src->n; i++) {
		const wb_val *v = &src->vals[i];
		const char   *name = wb_field_name((wb_field)v->field);

		if ((skip & wb_mask_bit(v->field)) ||
		    wb_field_type((wb_field)v->field) == WB_T_BIN) {
			continue;
		}
		if ((first || (rc = http_buf_add(out, ",", 1)) == WB_OK) &&
		    (rc = http_buf_add(out, "\"", 1)) == WB_OK &&
		    (rc = http_buf_add(out, name, strlen(name))) == WB_OK &&
		    (rc = http_buf_add(out, "\":", 2)) == WB_OK) {
			rc = http_json_val(v, out);
		}
		first = false;
	}
	return rc == WB_OK ? http_buf_add(out, "}", 1) : rc;
}

int
http_json_from_obj(const wb_obj *src, wb_mask skip, http_buf *out)
{
	return http_json_obj(src, skip, out);
}

int
http_json_error_named(http_buf *out, const char *name, const char *msg)
{
	int rc;

	if (!http_json_utf8((const unsigned char *)msg, strlen(msg))) {
		msg = "(message not valid UTF-8)"; /* a cut or foreign byte sequence */
	}
	if ((rc = http_buf_add(out, "{\"error\":", 9)) != WB_OK ||
	    (rc = http_json_str(out, name, strlen(name))) != WB_OK ||
	    (rc = http_buf_add(out, ",\"message\":", 11)) != WB_OK ||
	    (rc = http_json_str(out, msg, strlen(msg))) != WB_OK) {
		return rc;
	}
	return http_buf_add(out, "}", 1);
}

int
http_json_set_text(wb_obj *dst, wb_field f, const char *s, size_t n, char *err, size_t errlen)
{
	uint64_t u;

	switch (wb_field_type(f)) {
	case WB_T_U64:
	case WB_T_ID:
		if (!http_json_parse_u64(s, n, &u)) {
			size_t d = 0;
			while (d < n && s[d] >= '0' && s[d] <= '9') {
				d++;
			}
			if (n > 0 && d == n) {
				/* a decimal all right, only too large: say so */
				snprintf(err, errlen, "%s must be at most %" PRIu64,
				    wb_field_name(f), UINT64_MAX);
				return WB_EBADMSG;
			}
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
