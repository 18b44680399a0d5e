/*
 * wb_internal.h - helpers shared by the files of proto/ (not installed,
 * not for other modules): field name lengths, arena allocation and
 * direct value slots for the decoder.
 */
#ifndef WB_INTERNAL_H
#define WB_INTERNAL_H

#include "wb_proto.h"

/* wb_field_name_len returns the length of a field's wire name. */
size_t wb_field_name_len(wb_field f);

/* wb_arena_alloc returns n bytes (8-byte aligned) from the arena of o, NULL if out of memory. */
void *wb_arena_alloc(wb_arena *a, size_t n);

/* wb_obj_slot returns the value slot of f in o, appending an empty one if absent (NULL if out of memory). */
wb_val *wb_obj_slot(wb_obj *o, wb_field f);

/* wb_fail formats a message into err (when err and errlen are given) and
 * returns code: how decoding and request checks report a failure. */
int wb_fail(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* wb_set_static_str sets a STR field to a string that outlives the message (no copy). */
int wb_set_static_str(wb_obj *o, wb_field f, const char *s, size_t n);

#endif
