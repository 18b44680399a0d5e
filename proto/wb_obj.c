/*
 * wb_obj.c - message objects and their arena.
 *
 * A root object lives inside its arena, with the first chunk inline, so a
 * small message costs one malloc:
 *
 *   wb_arena (one malloc)                        extra chunks (malloc'd)
 *   +-----+-----+------+------------+--------+    +------+---------------+
 *   | cur | end | list | root wb_obj| first  |--> | next | 8K, 16K ... |
 *   +-----+-----+------+------------+ chunk  |    +------+---------------+
 *                                   +--------+
 *
 * Allocation bumps cur; when a chunk is full a new one twice the size is
 * chained in (up to WB_CHUNK_MAX); a request bigger than a quarter of
 * that gets a chunk of its own.  Nothing is freed before the root:
 * replacing a value leaves the old bytes in place.  wb_reset frees the
 * extra chunks and keeps the inline one.
 */
#include <stdlib.h>
#include <string.h>

#include "wb_internal.h"

#define WB_ARENA_FIRST 1536         /* bytes of the inline first chunk */
#define WB_CHUNK_MIN   (8 * 1024)   /* first extra chunk */
#define WB_CHUNK_MAX   (256 * 1024) /* chunks stop doubling here */
#define WB_ALIGN       8

typedef struct wb_chunk {
	struct wb_chunk *next;
	size_t           size;
	uint64_t         data[]; /* 8-byte aligned */
} wb_chunk;

struct wb_arena {
	char     *cur, *end; /* free bytes of the current chunk */
	wb_chunk *chunks;    /* extra chunks, newest first */
	size_t    next_size; /* size of the next regular chunk */
	wb_obj    root;
	uint64_t  first[WB_ARENA_FIRST / 8];
};

static void *
wb_arena_alloc_slow(wb_arena *a, size_t n)
{
	wb_chunk *c;
	size_t    size = a->next_size;

	if (n > WB_CHUNK_MAX / 4 || n > size) {
		size = n; /* a chunk of its own; the current one stays in use */
	}
	if (size > SIZE_MAX - sizeof(wb_chunk) || (c = malloc(sizeof(wb_chunk) + size)) == NULL) {
		return NULL;
	}
	c->size = size;
	c->next = a->chunks;
	a->chunks = c;
	if (size == a->next_size) {
		a->cur = (char *)c->data + n;
		a->end = (char *)c->data + size;
		if (a->next_size < WB_CHUNK_MAX) {
			a->next_size *= 2;
		}
	}
	return c->data;
}

void *
wb_arena_alloc(wb_arena *a, size_t n)
{
	char *p = a->cur;

	if (n > SIZE_MAX - WB_ALIGN) {
		return NULL;
	}
	n = (n + (WB_ALIGN - 1)) & ~(size_t)(WB_ALIGN - 1);
	if (n > (size_t)(a->end - p)) {
		return wb_arena_alloc_slow(a, n);
	}
	a->cur = p + n;
	return p;
}

wb_obj *
wb_msg_new(void)
{
	wb_arena *a = malloc(sizeof(*a));

	if (a == NULL) {
		return NULL;
	}
	a->chunks = NULL;
	a->cur = (char *)a->first;
	a->end = (char *)a->first + sizeof(a->first);
	a->next_size = WB_CHUNK_MIN;
	a->root = (wb_obj) { .arena = a };
	return &a->root;
}

static void
wb_arena_free_chunks(wb_arena *a)
{
	wb_chunk *c, *next;

	for (c = a->chunks; c != NULL; c = next) {
		next = c->next;
		free(c);
	}
	a->chunks = NULL;
}

void
wb_msg_free(wb_obj *m)
{
	if (m == NULL) {
		return;
	}
	wb_arena_free_chunks(m->arena);
	free(m->arena);
}

void
wb_reset(wb_obj *m)
{
	wb_arena *a = m->arena;

	wb_arena_free_chunks(a);
	a->cur = (char *)a->first;
	a->end = (char *)a->first + sizeof(a->first);
	a->next_size = WB_CHUNK_MIN;
	a->root = (wb_obj) { .arena = a };
}

/* The calling thread's request id (wb_rid_swap). */
static _Thread_local const char *wb_rid_now;

wb_obj *
wb_request(wb_op op)
{
	wb_obj *m;

	if (op <= WB_OP_NONE || op >= WB_OP_COUNT || (m = wb_msg_new()) == NULL) {
		return NULL;
	}
	if (wb_set_static_str(m, WB_F_OP, wb_op_name(op), strlen(wb_op_name(op))) != WB_OK ||
	    wb_set_u64(m, WB_F_V, WB_PROTO_VERSION) != WB_OK ||
	    (wb_rid() != NULL && wb_set_cstr(m, WB_F_RID, wb_rid_now) != WB_OK)) {
		wb_msg_free(m);
		return NULL;
	}
	return m;
}

const char *
wb_rid(void)
{
	return wb_rid_now != NULL && wb_rid_now[0] != '\0' ? wb_rid_now : NULL;
}

const char *
wb_rid_swap(const char *rid)
{
	const char *prev = wb_rid_now;

	wb_rid_now = rid;
	return prev;
}

bool
wb_rid_ok(const char *s, size_t n)
{
	if (s == NULL || n == 0 || n > WB_RID_MAX) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		        c == '.' || c == '_' || c == ':' || c == '-')) {
			return false;
		}
	}
	return true;
}

static inline wb_val *
wb_obj_find(const wb_obj *o, wb_field f)
{
	for (uint16_t i = 0; i < o->n; i++) {
		if (o->vals[i].field == f) {
			return &o->vals[i];
		}
	}
	return NULL;
}

wb_val *
wb_obj_slot(wb_obj *o, wb_field f)
{
	wb_val *v = wb_obj_find(o, f);

	if (v != NULL) {
		return v;
	}
	if (o->n == o->cap) {
		uint16_t cap = o->cap != 0 ? o->cap * 2 : 4;
		wb_val  *vals = wb_arena_alloc(o->arena, cap * sizeof(wb_val));
		if (vals == NULL) {
			return NULL;
		}
		if (o->n != 0) {
			memcpy(vals, o->vals, o->n * sizeof(wb_val));
		}
		o->vals = vals;
		o->cap = cap;
	}
	v = &o->vals[o->n++];
	v->field = (uint16_t)f;
	return v;
}

/* wb_obj_typed tells whether f is a field of type t (or of t2). */
static inline bool
wb_obj_typed(wb_field f, wb_type t, wb_type t2)
{
	return (unsigned)f < WB_FIELD_COUNT && (wb_field_type(f) == t || wb_field_type(f) == t2);
}

int
wb_set_u64(wb_obj *o, wb_field f, uint64_t v)
{
	wb_val *s;

	if (o == NULL || !wb_obj_typed(f, WB_T_U64, WB_T_ID)) {
		return WB_EINVAL;
	}
	if ((s = wb_obj_slot(o, f)) == NULL) {
		return WB_ENOMEM;
	}
	s->u = v;
	return WB_OK;
}

int
wb_set_bool(wb_obj *o, wb_field f, bool v)
{
	wb_val *s;

	if (o == NULL || !wb_obj_typed(f, WB_T_BOOL, WB_T_BOOL)) {
		return WB_EINVAL;
	}
	if ((s = wb_obj_slot(o, f)) == NULL) {
		return WB_ENOMEM;
	}
	s->b = v;
	return WB_OK;
}

/* wb_set_span points field f of type t (STR or BIN) at n bytes without copying them. */
static int
wb_set_span(wb_obj *o, wb_field f, wb_type t, const void *p, size_t n)
{
	wb_val *s;

	if (o == NULL || !wb_obj_typed(f, t, t) || (p == NULL && n != 0)) {
		return WB_EINVAL;
	}
	if (n >= UINT32_MAX) {
		return WB_ETOOBIG;
	}
	if ((s = wb_obj_slot(o, f)) == NULL) {
		return WB_ENOMEM;
	}
	s->s.p = p != NULL ? p : "";
	s->s.n = (uint32_t)n;
	return WB_OK;
}

int
wb_set_static_str(wb_obj *o, wb_field f, const char *str, size_t n)
{
	return str == NULL ? WB_EINVAL : wb_set_span(o, f, WB_T_STR, str, n);
}

/* wb_set_bytes copies n bytes and a NUL into o's arena as field f of type t (STR or BIN). */
static int
wb_set_bytes(wb_obj *o, wb_field f, wb_type t, const void *p, size_t n)
{
	char *copy;

	if (o == NULL || !wb_obj_typed(f, t, t) || (p == NULL && n != 0)) {
		return WB_EINVAL;
	}
	if (n >= UINT32_MAX) {
		return WB_ETOOBIG;
	}
	if ((copy = wb_arena_alloc(o->arena, n + 1)) == NULL) {
		return WB_ENOMEM;
	}
	if (n != 0) {
		memcpy(copy, p, n);
	}
	copy[n] = '\0';
	return wb_set_span(o, f, t, copy, n);
}

int
wb_set_str(wb_obj *o, wb_field f, const char *str, size_t n)
{
	return wb_set_bytes(o, f, WB_T_STR, str, n);
}

int
wb_set_bin(wb_obj *o, wb_field f, const void *p, size_t n)
{
	return wb_set_bytes(o, f, WB_T_BIN, p, n);
}

int
wb_set_bin_ref(wb_obj *o, wb_field f, const void *p, size_t n)
{
	return wb_set_span(o, f, WB_T_BIN, p, n);
}

int
wb_set_cstr(wb_obj *o, wb_field f, const char *s)
{
	if (s == NULL) {
		return WB_EINVAL;
	}
	return wb_set_str(o, f, s, strlen(s));
}

uint64_t *
wb_add_u64s(wb_obj *o, wb_field f, size_t n)
{
	uint64_t *v;
	wb_val   *s;

	if (o == NULL || !wb_obj_typed(f, WB_T_U64S, WB_T_IDS) || n > UINT32_MAX ||
	    n > SIZE_MAX / sizeof(uint64_t)) {
		return NULL;
	}
	if ((v = wb_arena_alloc(o->arena, n * sizeof(uint64_t))) == NULL ||
	    (s = wb_obj_slot(o, f)) == NULL) {
		return NULL;
	}
	s->a.v = v;
	s->a.n = (uint32_t)n;
	return v;
}

int
wb_set_u64s(wb_obj *o, wb_field f, const uint64_t *v, size_t n)
{
	uint64_t *dst;

	if (o == NULL || !wb_obj_typed(f, WB_T_U64S, WB_T_IDS) || (v == NULL && n != 0)) {
		return WB_EINVAL;
	}
	if (n > UINT32_MAX) {
		return WB_ETOOBIG;
	}
	if ((dst = wb_add_u64s(o, f, n)) == NULL) {
		return WB_ENOMEM;
	}
	if (n != 0) {
		memcpy(dst, v, n * sizeof(uint64_t));
	}
	return WB_OK;
}

wb_obj *
wb_add_objs(wb_obj *o, wb_field f, size_t n)
{
	wb_obj *objs;
	wb_val *s;

	if (o == NULL || !wb_obj_typed(f, WB_T_OBJS, WB_T_OBJS) || n > UINT32_MAX ||
	    n > SIZE_MAX / sizeof(wb_obj)) {
		return NULL;
	}
	if ((objs = wb_arena_alloc(o->arena, n * sizeof(wb_obj))) == NULL ||
	    (s = wb_obj_slot(o, f)) == NULL) {
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		objs[i] = (wb_obj) { .arena = o->arena };
	}
	s->o.v = objs;
	s->o.n = (uint32_t)n;
	return objs;
}

void
wb_shrink(wb_obj *o, wb_field f, size_t n)
{
	wb_val *s = wb_obj_find(o, f);

	if (s == NULL) {
		return;
	}
	switch (wb_field_type(f)) {
	case WB_T_U64S:
	case WB_T_IDS:
		if (n < s->a.n) {
			s->a.n = (uint32_t)n;
		}
		break;
	case WB_T_OBJS:
		if (n < s->o.n) {
			s->o.n = (uint32_t)n;
		}
		break;
	default:
		break;
	}
}

void
wb_del(wb_obj *o, wb_field f)
{
	wb_val *s = wb_obj_find(o, f);

	if (s != NULL) {
		size_t i = (size_t)(s - o->vals);
		memmove(s, s + 1, (o->n - i - 1) * sizeof(wb_val));
		o->n--;
	}
}

bool
wb_has(const wb_obj *o, wb_field f)
{
	return o != NULL && wb_obj_find(o, f) != NULL;
}

bool
wb_get_u64(const wb_obj *o, wb_field f, uint64_t *out)
{
	const wb_val *s;

	if (o == NULL || !wb_obj_typed(f, WB_T_U64, WB_T_ID) || (s = wb_obj_find(o, f)) == NULL) {
		return false;
	}
	if (out != NULL) {
		*out = s->u;
	}
	return true;
}

uint64_t
wb_u64(const wb_obj *o, wb_field f, uint64_t dflt)
{
	uint64_t v;
	return wb_get_u64(o, f, &v) ? v : dflt;
}

bool
wb_get_bool(const wb_obj *o, wb_field f, bool *out)
{
	const wb_val *s;

	if (o == NULL || !wb_obj_typed(f, WB_T_BOOL, WB_T_BOOL) ||
	    (s = wb_obj_find(o, f)) == NULL) {
		return false;
	}
	if (out != NULL) {
		*out = s->b;
	}
	return true;
}

bool
wb_get_str(const wb_obj *o, wb_field f, const char **str, size_t *n)
{
	const wb_val *s;

	if (o == NULL || !wb_obj_typed(f, WB_T_STR, WB_T_STR) || (s = wb_obj_find(o, f)) == NULL) {
		return false;
	}
	if (str != NULL) {
		*str = s->s.p;
	}
	if (n != NULL) {
		*n = s->s.n;
	}
	return true;
}

bool
wb_get_bin(const wb_obj *o, wb_field f, const void **p, size_t *n)
{
	const wb_val *s;

	if (o == NULL || !wb_obj_typed(f, WB_T_BIN, WB_T_BIN) || (s = wb_obj_find(o, f)) == NULL) {
		return false;
	}
	*p = s->s.p;
	*n = s->s.n;
	return true;
}

const char *
wb_str(const wb_obj *o, wb_field f, const char *dflt)
{
	const char *s;
	return wb_get_str(o, f, &s, NULL) ? s : dflt;
}

bool
wb_get_u64s(const wb_obj *o, wb_field f, const uint64_t **v, size_t *n)
{
	const wb_val *s;

	if (o == NULL || !wb_obj_typed(f, WB_T_U64S, WB_T_IDS) || (s = wb_obj_find(o, f)) == NULL) {
		return false;
	}
	if (v != NULL) {
		*v = s->a.v;
	}
	if (n != NULL) {
		*n = s->a.n;
	}
	return true;
}

bool
wb_get_objs(const wb_obj *o, wb_field f, const wb_obj **v, size_t *n)
{
	const wb_val *s;

	if (o == NULL || !wb_obj_typed(f, WB_T_OBJS, WB_T_OBJS) ||
	    (s = wb_obj_find(o, f)) == NULL) {
		return false;
	}
	if (v != NULL) {
		*v = s->o.v;
	}
	if (n != NULL) {
		*n = s->o.n;
	}
	return true;
}

int
wb_copy(wb_obj *dst, const wb_obj *src)
{
	int rv = WB_OK;

	if (dst == NULL || src == NULL) {
		return WB_EINVAL;
	}
	for (uint16_t i = 0; i < src->n && rv == WB_OK; i++) {
		const wb_val *v = &src->vals[i];
		wb_field      f = (wb_field)v->field;
		wb_obj       *objs;

		switch (wb_field_type(f)) {
		case WB_T_U64:
		case WB_T_ID:
			rv = wb_set_u64(dst, f, v->u);
			break;
		case WB_T_BOOL:
			rv = wb_set_bool(dst, f, v->b);
			break;
		case WB_T_STR:
		case WB_T_BIN:
			rv = wb_set_bytes(dst, f, wb_field_type(f), v->s.p, v->s.n);
			break;
		case WB_T_U64S:
		case WB_T_IDS:
			rv = wb_set_u64s(dst, f, v->a.v, v->a.n);
			break;
		case WB_T_OBJS:
			if ((objs = wb_add_objs(dst, f, v->o.n)) == NULL) {
				return WB_ENOMEM;
			}
			for (uint32_t k = 0; k < v->o.n && rv == WB_OK; k++) {
				rv = wb_copy(&objs[k], &v->o.v[k]);
			}
			break;
		}
	}
	return rv;
}

static bool
wb_val_equal(wb_field f, const wb_val *a, const wb_val *b)
{
	switch (wb_field_type(f)) {
	case WB_T_U64:
	case WB_T_ID:
		return a->u == b->u;
	case WB_T_BOOL:
		return a->b == b->b;
	case WB_T_STR:
	case WB_T_BIN:
		return a->s.n == b->s.n && memcmp(a->s.p, b->s.p, a->s.n) == 0;
	case WB_T_U64S:
	case WB_T_IDS:
		return a->a.n == b->a.n &&
		       (a->a.n == 0 || memcmp(a->a.v, b->a.v, a->a.n * sizeof(uint64_t)) == 0);
	case WB_T_OBJS:
		if (a->o.n != b->o.n) {
			return false;
		}
		for (uint32_t i = 0; i < a->o.n; i++) {
			if (!wb_equal(&a->o.v[i], &b->o.v[i])) {
				return false;
			}
		}
		return true;
	}
	return false;
}

bool
wb_equal(const wb_obj *a, const wb_obj *b)
{
	if (a->n != b->n) {
		return false;
	}
	for (uint16_t i = 0; i < a->n; i++) {
		const wb_val *vb = wb_obj_find(b, a->vals[i].field);
		if (vb == NULL || !wb_val_equal(a->vals[i].field, &a->vals[i], vb)) {
			return false;
		}
	}
	return true;
}

wb_op
wb_op_of(const wb_obj *req)
{
	const char *s;
	size_t      n;

	if (!wb_get_str(req, WB_F_OP, &s, &n)) {
		return WB_OP_NONE;
	}
	return wb_op_lookup(s, n);
}
