/*
 * wb_sample.h - sample messages for tests, fuzz seeds and benchmarks:
 * a plausible value for any field, and a valid request for any operation.
 * Header-only (static functions), so it is not part of libwbproto.
 */
#ifndef WB_SAMPLE_H
#define WB_SAMPLE_H

#include <stdio.h>
#include <string.h>

#include "wb_proto.h"

/* wb_sample_fill sets field f of o to a sample value; variant varies it. */
static inline int
wb_sample_fill(wb_obj *o, wb_field f, unsigned variant)
{
	char      text[96];
	uint64_t *v;
	wb_obj   *objs;
	unsigned  n = 3 + variant % 5;
	int       rv;

	switch (wb_field_type(f)) {
	case WB_T_U64:
		/* spread over every msgpack integer width */
		return wb_set_u64(o, f, (UINT64_C(1) << ((f * 7 + variant) % 64)) + variant);
	case WB_T_ID:
		return wb_set_u64(o, f, (UINT64_C(153000000000) + variant) << 22 | variant);
	case WB_T_BOOL:
		return wb_set_bool(o, f, (f + variant) % 2 == 0);
	case WB_T_STR:
		snprintf(text, sizeof(text), "%s sample %u: caf\xc3\xa9 \xe2\x9c\x93",
		    wb_field_name(f), variant);
		return wb_set_cstr(o, f, text);
	case WB_T_BIN:
		snprintf(text, sizeof(text), "%s bytes %u", wb_field_name(f), variant);
		text[0] = '\0'; /* bytes, not text: a NUL is fine */
		return wb_set_bin(o, f, text, strlen(text + 1) + 1);
	case WB_T_U64S:
	case WB_T_IDS:
		if ((v = wb_add_u64s(o, f, n)) == NULL) {
			return WB_ENOMEM;
		}
		for (unsigned i = 0; i < n; i++) {
			v[i] = wb_field_type(f) == WB_T_IDS ? (UINT64_C(153000000000) + i) << 22
			                                    : (UINT64_C(1) << (i * 9 % 64)) + i;
		}
		return WB_OK;
	case WB_T_OBJS:
		if ((objs = wb_add_objs(o, f, 2)) == NULL) {
			return WB_ENOMEM;
		}
		for (unsigned i = 0; i < 2; i++) {
			static const wb_field nested[] = { WB_F_ID, WB_F_UID, WB_F_NAME, WB_F_TEXT,
				WB_F_TIME, WB_F_HIST, WB_F_FOLLOWED };
			for (size_t k = 0; k < sizeof(nested) / sizeof(nested[0]); k++) {
				if ((rv = wb_sample_fill(&objs[i], nested[k], variant + i)) !=
				    WB_OK) {
					return rv;
				}
			}
		}
		return WB_OK;
	}
	return WB_EINVAL;
}

/* wb_sample_request builds a valid request for op with its required fields (and its optional ones too if all). */
static inline wb_obj *
wb_sample_request(wb_op op, bool all)
{
	wb_mask req, opt, mask;
	wb_obj *m = wb_request(op);

	if (m == NULL) {
		return NULL;
	}
	wb_op_fields(op, &req, &opt);
	mask = req | (all ? opt : 0);
	for (int f = 0; f < WB_FIELD_COUNT; f++) {
		if ((mask & wb_mask_bit(f)) &&
		    wb_sample_fill(m, (wb_field)f, (unsigned)op) != WB_OK) {
			wb_msg_free(m);
			return NULL;
		}
	}
	return m;
}

#endif
