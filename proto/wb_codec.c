/*
 * wb_codec.c - msgpack encoding and decoding of wb_obj messages.
 *
 * Encoding walks the object with a msgpack_packer.  Decoding runs in
 * three steps, and only the first one looks at untrusted lengths:
 *
 *   bytes --(1) pre-walk--> bounded --(2) msgpack_unpack--> msgpack_object
 *         --(3) convert--> wb_obj (fields, types, duplicates checked)
 *
 * (1) steps over every msgpack format without allocating.  It checks each
 * declared str/bin/ext/array/map length against the bytes that are
 * actually left (an element takes at least one byte, a map entry two) and
 * against the limits, bounds the nesting depth and the total number of
 * values, and rejects trailing bytes.  msgpack-c has no limits of its own:
 * an array32 header claiming 16M elements makes it reserve ~400 MB up front,
 * so (2) must never see input that (1) has not accepted.
 */
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "wb_internal.h"

const wb_limits wb_limits_default = {
	.max_bytes = 4 * 1024 * 1024,
	.max_str = 64 * 1024,
	.max_bin = 4 * 1024 * 1024,
	.max_array = 100000,
	.max_fields = 128,
	.max_depth = 6,
};

/* Deepest nesting accepted whatever the limits say (msgpack-c's own
 * parser stack holds 32 levels). */
#define WB_DEPTH_CAP 16

/* ---- encoding ---------------------------------------------------------- */

static inline size_t
wb_codec_uint_size(uint64_t v)
{
	return v < 128 ? 1 : v < 256 ? 2 : v < 65536 ? 3 : v <= UINT32_MAX ? 5 : 9;
}

static inline size_t
wb_codec_str_size(size_t n)
{
	return n + (n < 32 ? 1 : n < 256 ? 2 : n < 65536 ? 3 : 5);
}

static inline size_t
wb_codec_bin_size(size_t n)
{
	return n + (n < 256 ? 2 : n < 65536 ? 3 : 5);
}

static inline size_t
wb_codec_hdr_size(size_t n)
{
	return n < 16 ? 1 : n < 65536 ? 3 : 5;
}

/* wb_codec_obj_size returns the exact encoded size of o. */
static size_t
wb_codec_obj_size(const wb_obj *o)
{
	size_t size = wb_codec_hdr_size(o->n);

	for (uint16_t i = 0; i < o->n; i++) {
		const wb_val *v = &o->vals[i];
		size += wb_codec_str_size(wb_field_name_len(v->field));
		switch (wb_field_type(v->field)) {
		case WB_T_U64:
		case WB_T_ID:
			size += wb_codec_uint_size(v->u);
			break;
		case WB_T_BOOL:
			size += 1;
			break;
		case WB_T_STR:
			size += wb_codec_str_size(v->s.n);
			break;
		case WB_T_BIN:
			size += wb_codec_bin_size(v->s.n);
			break;
		case WB_T_U64S:
		case WB_T_IDS:
			size += wb_codec_hdr_size(v->a.n);
			for (uint32_t j = 0; j < v->a.n; j++) {
				size += wb_codec_uint_size(v->a.v[j]);
			}
			break;
		case WB_T_OBJS:
			size += wb_codec_hdr_size(v->o.n);
			for (uint32_t j = 0; j < v->o.n; j++) {
				size += wb_codec_obj_size(&v->o.v[j]);
			}
			break;
		}
	}
	return size;
}

static int
wb_codec_pack_obj(msgpack_packer *pk, const wb_obj *o)
{
	int rv = msgpack_pack_map(pk, o->n);

	for (uint16_t i = 0; i < o->n && rv == 0; i++) {
		const wb_val *v = &o->vals[i];
		rv = msgpack_pack_str_with_body(
		    pk, wb_field_name(v->field), wb_field_name_len(v->field));
		if (rv != 0) {
			break;
		}
		switch (wb_field_type(v->field)) {
		case WB_T_U64:
		case WB_T_ID:
			rv = msgpack_pack_uint64(pk, v->u);
			break;
		case WB_T_BOOL:
			rv = v->b ? msgpack_pack_true(pk) : msgpack_pack_false(pk);
			break;
		case WB_T_STR:
			rv = msgpack_pack_str_with_body(pk, v->s.p, v->s.n);
			break;
		case WB_T_BIN:
			rv = msgpack_pack_bin_with_body(pk, v->s.p, v->s.n);
			break;
		case WB_T_U64S:
		case WB_T_IDS:
			rv = msgpack_pack_array(pk, v->a.n);
			for (uint32_t j = 0; j < v->a.n && rv == 0; j++) {
				rv = msgpack_pack_uint64(pk, v->a.v[j]);
			}
			break;
		case WB_T_OBJS:
			rv = msgpack_pack_array(pk, v->o.n);
			for (uint32_t j = 0; j < v->o.n && rv == 0; j++) {
				rv = wb_codec_pack_obj(pk, &v->o.v[j]);
			}
			break;
		}
	}
	return rv;
}

int
wb_encode(const wb_obj *m, wb_write_fn fn, void *arg)
{
	msgpack_packer pk;
	int            rv;

	if (m == NULL || fn == NULL) {
		return WB_EINVAL;
	}
	msgpack_packer_init(&pk, arg, fn);
	if ((rv = wb_codec_pack_obj(&pk, m)) == 0) {
		return WB_OK;
	}
	return rv > 0 && rv < WB_ERR_COUNT ? rv : WB_EINTERNAL;
}

/* A buffer sized exactly by wb_codec_obj_size. */
typedef struct wb_codec_buf {
	char  *p;
	size_t len, cap;
} wb_codec_buf;

static int
wb_codec_buf_write(void *arg, const char *b, size_t n)
{
	wb_codec_buf *buf = arg;

	char *d = buf->p + buf->len;

	if (n > buf->cap - buf->len) {
		return WB_EINTERNAL; /* the size walk disagrees with the packer */
	}
	/* The packer writes one header or scalar at a time: 1, 2, 3, 5 or 9
	 * bytes.  Fixed-size copies compile to plain moves; a libc call per
	 * integer would dominate the encoding of a long id list. */
	switch (n) {
	case 1:
		d[0] = b[0];
		break;
	case 2:
		memcpy(d, b, 2);
		break;
	case 3:
		memcpy(d, b, 3);
		break;
	case 5:
		memcpy(d, b, 5);
		break;
	case 9:
		memcpy(d, b, 9);
		break;
	default:
		memcpy(d, b, n);
		break;
	}
	buf->len += n;
	return 0;
}

int
wb_encode_buf(const wb_obj *m, char **out, size_t *outlen)
{
	wb_codec_buf buf = { 0 };
	int          rv;

	if (m == NULL || out == NULL || outlen == NULL) {
		return WB_EINVAL;
	}
	*out = NULL;
	*outlen = 0;
	buf.cap = wb_codec_obj_size(m);
	if ((buf.p = malloc(buf.cap)) == NULL) {
		return WB_ENOMEM;
	}
	if ((rv = wb_encode(m, wb_codec_buf_write, &buf)) != WB_OK || buf.len != buf.cap) {
		free(buf.p);
		return rv != WB_OK ? rv : WB_EINTERNAL;
	}
	*out = buf.p;
	*outlen = buf.len;
	return WB_OK;
}

/* ---- decoding step 1: the bounded pre-walk ----------------------------- */

typedef struct wb_scan {
	const uint8_t   *p, *end;
	const wb_limits *lim;
	int              max_depth;
	size_t           budget; /* values still allowed */
	bool             cut;    /* a value ran past the end of the bytes */
	char            *err;
	size_t           errlen;
} wb_scan;

static inline uint32_t
wb_scan_be(const uint8_t *p, int n)
{
	uint32_t v = 0;
	for (int i = 0; i < n; i++) {
		v = (v << 8) | p[i];
	}
	return v;
}

static int
wb_scan_truncated(wb_scan *s)
{
	s->cut = true;
	return wb_fail(s->err, s->errlen, WB_EBADMSG, "truncated message");
}

/* What bounds a payload wb_scan_skip steps over. */
enum { WB_SCAN_FIXED, WB_SCAN_STR, WB_SCAN_BIN };

/* wb_scan_skip steps over a header of hdr bytes and a payload of n bytes (a string's or bin's bounded by the limits). */
static inline int
wb_scan_skip(wb_scan *s, size_t hdr, size_t n, int kind)
{
	size_t left = (size_t)(s->end - s->p);

	if (hdr > left || n > left - hdr) {
		return wb_scan_truncated(s);
	}
	if (kind == WB_SCAN_STR && n > s->lim->max_str) {
		return wb_fail(s->err, s->errlen, WB_ETOOBIG,
		    "string of %zu bytes exceeds the limit of %zu", n, s->lim->max_str);
	}
	if (kind == WB_SCAN_BIN && n > s->lim->max_bin) {
		return wb_fail(s->err, s->errlen, WB_ETOOBIG,
		    "bin of %zu bytes exceeds the limit of %zu", n, s->lim->max_bin);
	}
	s->p += hdr + n;
	return WB_OK;
}

static int wb_scan_value(wb_scan *s, int depth);

/* wb_scan_container checks and walks an array (per = 1) or map (per = 2)
 * of n entries whose header is hdr bytes long. */
static int
wb_scan_container(wb_scan *s, size_t hdr, size_t n, int per, int depth)
{
	size_t left = (size_t)(s->end - s->p);
	int    rv;

	if (hdr > left || n > (left - hdr) / (size_t)per) {
		return wb_scan_truncated(s);
	}
	if (depth > s->max_depth) {
		return wb_fail(s->err, s->errlen, WB_EBADMSG,
		    "message nested deeper than %d levels", s->max_depth);
	}
	if (per == 2 && n > s->lim->max_fields) {
		return wb_fail(s->err, s->errlen, WB_ETOOBIG,
		    "map of %zu fields exceeds the limit of %zu", n, s->lim->max_fields);
	}
	if (per == 1 && n > s->lim->max_array) {
		return wb_fail(s->err, s->errlen, WB_ETOOBIG,
		    "array of %zu elements exceeds the limit of %zu", n, s->lim->max_array);
	}
	if (n * (size_t)per > s->budget) {
		return wb_fail(s->err, s->errlen, WB_ETOOBIG, "too many values in message");
	}
	s->p += hdr;
	n *= (size_t)per;
	for (size_t i = 0; i < n; i++) {
		/* fast path for the common elements of id lists: unsigned ints */
		uint8_t b = s->p < s->end ? *s->p : 0xc1;
		if (b <= 0x7f && s->budget != 0) {
			s->p++;
			s->budget--;
			continue;
		}
		if (b >= 0xcc && b <= 0xcf && s->budget != 0) {
			size_t sz = (size_t)1 + ((size_t)1 << (b - 0xcc)); /* 2, 3, 5, 9 */
			if (sz <= (size_t)(s->end - s->p)) {
				s->p += sz;
				s->budget--;
				continue;
			}
		}
		if ((rv = wb_scan_value(s, depth + 1)) != WB_OK) {
			return rv;
		}
	}
	return WB_OK;
}

static int
wb_scan_value(wb_scan *s, int depth)
{
	const uint8_t *p = s->p;
	size_t         left = (size_t)(s->end - p);
	uint8_t        b;

	if (left == 0) {
		return wb_scan_truncated(s);
	}
	if (s->budget == 0) {
		return wb_fail(s->err, s->errlen, WB_ETOOBIG, "too many values in message");
	}
	s->budget--;
	b = p[0];
	if (b <= 0x7f || b >= 0xe0) { /* positive / negative fixint */
		s->p++;
		return WB_OK;
	}
	if (b <= 0x8f) { /* fixmap */
		return wb_scan_container(s, 1, b & 0x0f, 2, depth);
	}
	if (b <= 0x9f) { /* fixarray */
		return wb_scan_container(s, 1, b & 0x0f, 1, depth);
	}
	if (b <= 0xbf) { /* fixstr */
		return wb_scan_skip(s, 1, b & 0x1f, WB_SCAN_STR);
	}
	switch (b) {
	case 0xc0: /* nil */
	case 0xc2: /* false */
	case 0xc3: /* true */
		s->p++;
		return WB_OK;
	case 0xc4: /* bin 8 */
	case 0xd9: /* str 8 */
		return left < 2 ? wb_scan_truncated(s)
		                : wb_scan_skip(s, 2, p[1], b == 0xc4 ? WB_SCAN_BIN : WB_SCAN_STR);
	case 0xc5: /* bin 16 */
	case 0xda: /* str 16 */
		return left < 3 ? wb_scan_truncated(s)
		                : wb_scan_skip(s, 3, wb_scan_be(p + 1, 2),
		                      b == 0xc5 ? WB_SCAN_BIN : WB_SCAN_STR);
	case 0xc6: /* bin 32 */
	case 0xdb: /* str 32 */
		return left < 5 ? wb_scan_truncated(s)
		                : wb_scan_skip(s, 5, wb_scan_be(p + 1, 4),
		                      b == 0xc6 ? WB_SCAN_BIN : WB_SCAN_STR);
	case 0xc7: /* ext 8: len, type, data */
		return left < 2 ? wb_scan_truncated(s) : wb_scan_skip(s, 3, p[1], WB_SCAN_STR);
	case 0xc8: /* ext 16 */
		return left < 3 ? wb_scan_truncated(s)
		                : wb_scan_skip(s, 4, wb_scan_be(p + 1, 2), WB_SCAN_STR);
	case 0xc9: /* ext 32 */
		return left < 5 ? wb_scan_truncated(s)
		                : wb_scan_skip(s, 6, wb_scan_be(p + 1, 4), WB_SCAN_STR);
	case 0xca: /* float 32 */
		return wb_scan_skip(s, 1, 4, WB_SCAN_FIXED);
	case 0xcb: /* float 64 */
		return wb_scan_skip(s, 1, 8, WB_SCAN_FIXED);
	case 0xcc: /* uint 8 */
	case 0xd0: /* int 8 */
		return wb_scan_skip(s, 1, 1, WB_SCAN_FIXED);
	case 0xcd: /* uint 16 */
	case 0xd1: /* int 16 */
		return wb_scan_skip(s, 1, 2, WB_SCAN_FIXED);
	case 0xce: /* uint 32 */
	case 0xd2: /* int 32 */
		return wb_scan_skip(s, 1, 4, WB_SCAN_FIXED);
	case 0xcf: /* uint 64 */
	case 0xd3: /* int 64 */
		return wb_scan_skip(s, 1, 8, WB_SCAN_FIXED);
	case 0xd4: /* fixext 1: type, data */
		return wb_scan_skip(s, 2, 1, WB_SCAN_FIXED);
	case 0xd5: /* fixext 2 */
		return wb_scan_skip(s, 2, 2, WB_SCAN_FIXED);
	case 0xd6: /* fixext 4 */
		return wb_scan_skip(s, 2, 4, WB_SCAN_FIXED);
	case 0xd7: /* fixext 8 */
		return wb_scan_skip(s, 2, 8, WB_SCAN_FIXED);
	case 0xd8: /* fixext 16 */
		return wb_scan_skip(s, 2, 16, WB_SCAN_FIXED);
	case 0xdc: /* array 16 */
		return left < 3 ? wb_scan_truncated(s)
		                : wb_scan_container(s, 3, wb_scan_be(p + 1, 2), 1, depth);
	case 0xdd: /* array 32 */
		return left < 5 ? wb_scan_truncated(s)
		                : wb_scan_container(s, 5, wb_scan_be(p + 1, 4), 1, depth);
	case 0xde: /* map 16 */
		return left < 3 ? wb_scan_truncated(s)
		                : wb_scan_container(s, 3, wb_scan_be(p + 1, 2), 2, depth);
	case 0xdf: /* map 32 */
		return left < 5 ? wb_scan_truncated(s)
		                : wb_scan_container(s, 5, wb_scan_be(p + 1, 4), 2, depth);
	default: /* 0xc1 is never used */
		return wb_fail(s->err, s->errlen, WB_EBADMSG, "invalid msgpack byte 0x%02x", b);
	}
}

/* ---- decoding step 3: msgpack_object -> wb_obj ------------------------- */

typedef struct wb_conv {
	wb_arena *arena;
	char     *err;
	size_t    errlen;
} wb_conv;

static int
wb_conv_type_error(wb_conv *c, wb_field f)
{
	static const char *const what[] = {
		[WB_T_U64] = "an unsigned integer",
		[WB_T_ID] = "an unsigned integer (post id)",
		[WB_T_BOOL] = "a boolean",
		[WB_T_STR] = "a string",
		[WB_T_U64S] = "an array of unsigned integers",
		[WB_T_IDS] = "an array of unsigned integers (post ids)",
		[WB_T_OBJS] = "an array of maps",
		[WB_T_BIN] = "bytes (msgpack bin)",
	};
	return wb_fail(c->err, c->errlen, WB_EBADMSG, "field '%s' must be %s", wb_field_name(f),
	    what[wb_field_type(f)]);
}

/* wb_conv_span copies n bytes at p into c's arena, NUL-terminated, as v's string or bytes. */
static int
wb_conv_span(wb_conv *c, wb_val *v, const char *p, size_t n)
{
	char *d;

	if ((d = wb_arena_alloc(c->arena, n + 1)) == NULL) {
		return wb_fail(c->err, c->errlen, WB_ENOMEM, "out of memory");
	}
	if (n != 0) {
		memcpy(d, p, n);
	}
	d[n] = '\0';
	v->s.p = d;
	v->s.n = n;
	return WB_OK;
}

static int wb_conv_map(wb_conv *c, wb_obj *o, const msgpack_object_map *m);

static int
wb_conv_value(wb_conv *c, wb_field f, wb_val *v, const msgpack_object *mo)
{
	switch (wb_field_type(f)) {
	case WB_T_U64:
	case WB_T_ID:
		if (mo->type != MSGPACK_OBJECT_POSITIVE_INTEGER) {
			return wb_conv_type_error(c, f);
		}
		v->u = mo->via.u64;
		return WB_OK;
	case WB_T_BOOL:
		if (mo->type != MSGPACK_OBJECT_BOOLEAN) {
			return wb_conv_type_error(c, f);
		}
		v->b = mo->via.boolean;
		return WB_OK;
	case WB_T_STR:
		if (mo->type != MSGPACK_OBJECT_STR) {
			return wb_conv_type_error(c, f);
		}
		if (mo->via.str.size != 0 && memchr(mo->via.str.ptr, 0, mo->via.str.size) != NULL) {
			return wb_fail(c->err, c->errlen, WB_EBADMSG,
			    "field '%s' contains a NUL byte", wb_field_name(f));
		}
		return wb_conv_span(c, v, mo->via.str.ptr, mo->via.str.size);
	case WB_T_BIN:
		if (mo->type != MSGPACK_OBJECT_BIN) {
			return wb_conv_type_error(c, f);
		}
		return wb_conv_span(c, v, mo->via.bin.ptr, mo->via.bin.size);
	case WB_T_U64S:
	case WB_T_IDS: {
		const msgpack_object_array *a = &mo->via.array;
		uint64_t                   *u;
		if (mo->type != MSGPACK_OBJECT_ARRAY) {
			return wb_conv_type_error(c, f);
		}
		if ((u = wb_arena_alloc(c->arena, (size_t)a->size * sizeof(uint64_t))) == NULL) {
			return wb_fail(c->err, c->errlen, WB_ENOMEM, "out of memory");
		}
		for (uint32_t i = 0; i < a->size; i++) {
			if (a->ptr[i].type != MSGPACK_OBJECT_POSITIVE_INTEGER) {
				return wb_conv_type_error(c, f);
			}
			u[i] = a->ptr[i].via.u64;
		}
		v->a.v = u;
		v->a.n = a->size;
		return WB_OK;
	}
	case WB_T_OBJS: {
		const msgpack_object_array *a = &mo->via.array;
		wb_obj                     *objs;
		int                         rv;
		if (mo->type != MSGPACK_OBJECT_ARRAY) {
			return wb_conv_type_error(c, f);
		}
		if ((objs = wb_arena_alloc(c->arena, (size_t)a->size * sizeof(wb_obj))) == NULL) {
			return wb_fail(c->err, c->errlen, WB_ENOMEM, "out of memory");
		}
		for (uint32_t i = 0; i < a->size; i++) {
			if (a->ptr[i].type != MSGPACK_OBJECT_MAP) {
				return wb_conv_type_error(c, f);
			}
			objs[i] = (wb_obj) { .arena = c->arena };
			if ((rv = wb_conv_map(c, &objs[i], &a->ptr[i].via.map)) != WB_OK) {
				return rv;
			}
		}
		v->o.v = objs;
		v->o.n = a->size;
		return WB_OK;
	}
	}
	return wb_conv_type_error(c, f);
}

static int
wb_conv_map(wb_conv *c, wb_obj *o, const msgpack_object_map *m)
{
	wb_mask  seen = 0;
	uint32_t cap = m->size < WB_FIELD_COUNT ? m->size : WB_FIELD_COUNT;
	int      rv, f;

	if (cap != 0 && (o->vals = wb_arena_alloc(c->arena, cap * sizeof(wb_val))) == NULL) {
		return wb_fail(c->err, c->errlen, WB_ENOMEM, "out of memory");
	}
	o->cap = (uint16_t)cap;
	for (uint32_t i = 0; i < m->size; i++) {
		const msgpack_object_kv *kv = &m->ptr[i];
		if (kv->key.type != MSGPACK_OBJECT_STR) {
			return wb_fail(c->err, c->errlen, WB_EBADMSG, "map keys must be strings");
		}
		f = wb_field_lookup(kv->key.via.str.ptr, kv->key.via.str.size);
		if (f < 0) {
			char   q[52];
			size_t j, n = kv->key.via.str.size < 48 ? kv->key.via.str.size : 48;
			for (j = 0; j < n; j++) {
				unsigned char ch = (unsigned char)kv->key.via.str.ptr[j];
				q[j] = (ch >= 0x20 && ch < 0x7f) ? (char)ch : '?';
			}
			q[j] = '\0';
			return wb_fail(c->err, c->errlen, WB_EBADMSG, "unknown field '%s%s'", q,
			    kv->key.via.str.size > 48 ? "..." : "");
		}
		if (seen & wb_mask_bit(f)) {
			return wb_fail(c->err, c->errlen, WB_EBADMSG, "duplicate field '%s'",
			    wb_field_name((wb_field)f));
		}
		seen |= wb_mask_bit(f);
		wb_val *v = &o->vals[o->n++]; /* o->n < cap: fields are distinct and known */
		v->field = (uint16_t)f;
		if ((rv = wb_conv_value(c, (wb_field)f, v, &kv->val)) != WB_OK) {
			return rv;
		}
	}
	return WB_OK;
}

/* ---- decoding ---------------------------------------------------------- */

int
wb_decode(wb_obj **out, const void *buf, size_t len, const wb_limits *lim, char *err, size_t errlen)
{
	msgpack_zone   zone;
	msgpack_object mo;
	wb_scan        s;
	wb_conv        c;
	wb_obj        *m;
	size_t         off = 0;
	int            rv;

	if (out == NULL) {
		return WB_EINVAL;
	}
	*out = NULL;
	if (lim == NULL) {
		lim = &wb_limits_default;
	}
	if (buf == NULL || len == 0) {
		return wb_fail(err, errlen, WB_EBADMSG, "empty message");
	}
	if (len > lim->max_bytes) {
		return wb_fail(err, errlen, WB_ETOOBIG,
		    "message of %zu bytes exceeds the limit of %zu", len, lim->max_bytes);
	}

	/* (1) the pre-walk: nothing is allocated before it accepts the bytes. */
	size_t budget0 =
	    lim->max_array < SIZE_MAX / 4 - 1024 ? 4 * lim->max_array + 1024 : SIZE_MAX;
	s = (wb_scan) {
		.p = buf,
		.end = (const uint8_t *)buf + len,
		.lim = lim,
		.max_depth = lim->max_depth < WB_DEPTH_CAP ? lim->max_depth : WB_DEPTH_CAP,
		.budget = budget0,
		.err = err,
		.errlen = errlen,
	};
	if ((rv = wb_scan_value(&s, 1)) != WB_OK) {
		return rv;
	}
	if (s.p != s.end) {
		return wb_fail(err, errlen, WB_EBADMSG, "%zu trailing bytes after the message",
		    (size_t)(s.end - s.p));
	}
	if (*(const uint8_t *)buf < 0x80 || *(const uint8_t *)buf > 0x8f) {
		if (*(const uint8_t *)buf != 0xde && *(const uint8_t *)buf != 0xdf) {
			return wb_fail(err, errlen, WB_EBADMSG, "message must be a map");
		}
	}

	/* (2) msgpack-c parses what the pre-walk bounded. */
	/* The pre-walk counted the values: msgpack-c needs one msgpack_object
	 * each (a map entry is two), so one zone chunk of that size suffices. */
	size_t values = budget0 - s.budget;
	if (!msgpack_zone_init(&zone, values * sizeof(msgpack_object) + 256)) {
		return wb_fail(err, errlen, WB_ENOMEM, "out of memory");
	}
	switch (msgpack_unpack(buf, len, &off, &zone, &mo)) {
	case MSGPACK_UNPACK_SUCCESS:
		break;
	case MSGPACK_UNPACK_NOMEM_ERROR:
		msgpack_zone_destroy(&zone);
		return wb_fail(err, errlen, WB_ENOMEM, "out of memory");
	default: /* the pre-walk accepted what msgpack-c rejects */
		msgpack_zone_destroy(&zone);
		return wb_fail(err, errlen, WB_EBADMSG, "malformed msgpack");
	}

	/* (3) fields, types and duplicates, into the message's arena. */
	if (mo.type != MSGPACK_OBJECT_MAP || (m = wb_msg_new()) == NULL) {
		msgpack_zone_destroy(&zone);
		return mo.type != MSGPACK_OBJECT_MAP
		           ? wb_fail(err, errlen, WB_EBADMSG, "message must be a map")
		           : wb_fail(err, errlen, WB_ENOMEM, "out of memory");
	}
	c = (wb_conv) { .arena = m->arena, .err = err, .errlen = errlen };
	rv = wb_conv_map(&c, m, &mo.via.map);
	msgpack_zone_destroy(&zone);
	if (rv != WB_OK) {
		wb_msg_free(m);
		return rv;
	}
	*out = m;
	return WB_OK;
}

/*
 * wb_decode_head: the first len bytes of a message whose rest has not
 * arrived.  The pre-walk steps over the top-level entries until one runs
 * past the end; the whole ones are copied behind a map header counting
 * them and decoded as a message of their own:
 *
 *   [map of N] k1 v1 k2 v2 k3 v3...   (cut in v3)
 *   -> [map of 2] k1 v1 k2 v2 -> wb_decode
 */
int
wb_decode_head(
    wb_obj **out, const void *buf, size_t len, const wb_limits *lim, char *err, size_t errlen)
{
	const uint8_t *p = buf;
	size_t         hdr, n = 0, k = 0;
	uint8_t       *tmp;
	wb_scan        s;
	int            rv;

	if (out == NULL || (buf == NULL && len > 0)) {
		return WB_EINVAL;
	}
	*out = NULL;
	if (lim == NULL) {
		lim = &wb_limits_default;
	}
	if (len > 0 && p[0] >= 0x80 && p[0] <= 0x8f) {
		hdr = 1, n = p[0] & 0x0f;
	} else if (len > 0 && (p[0] == 0xde || p[0] == 0xdf)) {
		hdr = p[0] == 0xde ? 3 : 5;
		n = len >= hdr ? wb_scan_be(p + 1, (int)hdr - 1) : 0;
	} else if (len > 0) {
		return wb_fail(err, errlen, WB_EBADMSG, "message must be a map");
	}
	if (len == 0 || len < hdr) {
		hdr = len; /* not even the map's header: no field yet */
	}
	if (n > lim->max_fields) {
		return wb_fail(err, errlen, WB_ETOOBIG,
		    "map of %zu fields exceeds the limit of %zu", n, lim->max_fields);
	}
	s = (wb_scan) {
		.p = p + hdr,
		.end = p + len,
		.lim = lim,
		.max_depth = lim->max_depth < WB_DEPTH_CAP ? lim->max_depth : WB_DEPTH_CAP,
		.budget =
		    lim->max_array < SIZE_MAX / 4 - 1024 ? 4 * lim->max_array + 1024 : SIZE_MAX,
		.err = err,
		.errlen = errlen,
	};
	const uint8_t *whole = s.p;
	for (; k < n; k++) {
		if ((rv = wb_scan_value(&s, 2)) != WB_OK || (rv = wb_scan_value(&s, 2)) != WB_OK) {
			if (!s.cut) {
				return rv;
			}
			break; /* entry k is still on its way */
		}
		whole = s.p;
	}
	size_t body = (size_t)(whole - (p + hdr));
	if ((tmp = malloc(body + 3)) == NULL) {
		return wb_fail(err, errlen, WB_ENOMEM, "out of memory");
	}
	/* k <= max_fields entries: a fixmap or a map 16 header */
	size_t th = k < 16 ? 1 : 3;
	if (k < 16) {
		tmp[0] = (uint8_t)(0x80 | k);
	} else {
		tmp[0] = 0xde;
		tmp[1] = (uint8_t)(k >> 8);
		tmp[2] = (uint8_t)k;
	}
	if (body > 0) {
		memcpy(tmp + th, p + hdr, body);
	}
	rv = wb_decode(out, tmp, th + body, lim, err, errlen);
	free(tmp);
	return rv;
}
