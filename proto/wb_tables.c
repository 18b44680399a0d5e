/*
 * wb_tables.c - the field and operation tables built from the X-macros in
 * wb_proto.h, and the name lookups the codec runs on every message.
 *
 * Lookups hash the name into a small open-addressed table (built once from
 * the same X-macros, so it cannot drift from them), then confirm with one
 * length check and one memcmp:
 *
 *   "post.publish" --hash--> slot 83 --> { len 12, WB_OP_POST_PUBLISH }
 *                                         memcmp(name, "post.publish")
 */
#include <pthread.h>
#include <string.h>

#include "wb_internal.h"

typedef struct wb_field_row {
	const char *name;
	uint8_t     len;
	uint8_t     type;
} wb_field_row;

typedef struct wb_op_row {
	const char *name;
	uint8_t     len;
	wb_mask     required;
	wb_mask     optional;
} wb_op_row;

static const wb_field_row wb_field_rows[WB_FIELD_COUNT] = {
#define WB_FIELD_ROW(e, name, type) { name, sizeof(name) - 1, WB_T_##type },
	WB_FIELDS(WB_FIELD_ROW)
#undef WB_FIELD_ROW
};

static const wb_op_row wb_op_rows[WB_OP_COUNT] = { { "?", 1, 0, 0 },
#define WB_OP_ROW(e, name, req, opt) { name, sizeof(name) - 1, (req), (opt) },
	WB_OPS(WB_OP_ROW)
#undef WB_OP_ROW
};

_Static_assert(WB_OP_COUNT < 255, "op slots are uint8_t");

/* Hash tables: power-of-two sizes at least 4x the entries, slot 0xff empty. */
#define WB_FIELD_SLOTS 256
#define WB_OP_SLOTS    256
#define WB_SLOT_EMPTY  0xff

static uint8_t        wb_field_slots[WB_FIELD_SLOTS];
static uint8_t        wb_op_slots[WB_OP_SLOTS];
static pthread_once_t wb_tables_once = PTHREAD_ONCE_INIT;

static inline uint32_t
wb_name_hash(const char *s, size_t len)
{
	uint32_t h = (uint32_t)len * 0x9e3779b1u;

	for (size_t i = 0; i < len; i++) {
		h = (h ^ (uint8_t)s[i]) * 0x01000193u;
	}
	return h ^ (h >> 15);
}

static void
wb_tables_build(void)
{
	memset(wb_field_slots, WB_SLOT_EMPTY, sizeof(wb_field_slots));
	memset(wb_op_slots, WB_SLOT_EMPTY, sizeof(wb_op_slots));
	for (int f = 0; f < WB_FIELD_COUNT; f++) {
		uint32_t h = wb_name_hash(wb_field_rows[f].name, wb_field_rows[f].len);
		while (wb_field_slots[h & (WB_FIELD_SLOTS - 1)] != WB_SLOT_EMPTY) {
			h++;
		}
		wb_field_slots[h & (WB_FIELD_SLOTS - 1)] = (uint8_t)f;
	}
	for (int op = 1; op < WB_OP_COUNT; op++) {
		uint32_t h = wb_name_hash(wb_op_rows[op].name, wb_op_rows[op].len);
		while (wb_op_slots[h & (WB_OP_SLOTS - 1)] != WB_SLOT_EMPTY) {
			h++;
		}
		wb_op_slots[h & (WB_OP_SLOTS - 1)] = (uint8_t)op;
	}
}

const char *
wb_field_name(wb_field f)
{
	if ((unsigned)f >= WB_FIELD_COUNT) {
		return "?";
	}
	return wb_field_rows[f].name;
}

size_t
wb_field_name_len(wb_field f)
{
	return (unsigned)f < WB_FIELD_COUNT ? wb_field_rows[f].len : 1;
}

wb_type
wb_field_type(wb_field f)
{
	if ((unsigned)f >= WB_FIELD_COUNT) {
		return WB_T_U64;
	}
	return (wb_type)wb_field_rows[f].type;
}

int
wb_field_lookup(const char *name, size_t len)
{
	uint32_t h;
	uint8_t  f;

	if (name == NULL || len == 0 || len > 32) {
		return -1;
	}
	pthread_once(&wb_tables_once, wb_tables_build);
	for (h = wb_name_hash(name, len);; h++) {
		f = wb_field_slots[h & (WB_FIELD_SLOTS - 1)];
		if (f == WB_SLOT_EMPTY) {
			return -1;
		}
		if (wb_field_rows[f].len == len && memcmp(wb_field_rows[f].name, name, len) == 0) {
			return f;
		}
	}
}

const char *
wb_op_name(wb_op op)
{
	if ((unsigned)op >= WB_OP_COUNT) {
		return "?";
	}
	return wb_op_rows[op].name;
}

wb_op
wb_op_lookup(const char *name, size_t len)
{
	uint32_t h;
	uint8_t  op;

	if (name == NULL || len == 0 || len > 32) {
		return WB_OP_NONE;
	}
	pthread_once(&wb_tables_once, wb_tables_build);
	for (h = wb_name_hash(name, len);; h++) {
		op = wb_op_slots[h & (WB_OP_SLOTS - 1)];
		if (op == WB_SLOT_EMPTY) {
			return WB_OP_NONE;
		}
		if (wb_op_rows[op].len == len && memcmp(wb_op_rows[op].name, name, len) == 0) {
			return (wb_op)op;
		}
	}
}

void
wb_op_fields(wb_op op, wb_mask *required, wb_mask *optional)
{
	if ((unsigned)op >= WB_OP_COUNT) {
		op = WB_OP_NONE;
	}
	if (required != NULL) {
		*required = wb_op_rows[op].required;
	}
	if (optional != NULL) {
		*optional = wb_op_rows[op].optional;
	}
}
