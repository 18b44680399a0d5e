/*
 * http_json.h - the one mapping between wb_obj messages and JSON, driven by
 * the field table of wb_proto.h, so no operation needs its own encoder:
 *
 *   wb type   JSON                      example
 *   U64       non-negative integer      "uid": 7
 *   ID        decimal string            "id": "51234567890123456"
 *   BOOL      true / false              "followed": true
 *   STR       string (UTF-8)            "name": "alice"
 *   U64S      array of integers         "uids": [7, 9]
 *   IDS       array of decimal strings  "ids": ["512...", "511..."]
 *   OBJS      array of objects          "posts": [{"id": "512...", ...}]
 *
 * Ids are strings because post ids exceed 2^53, the largest integer a
 * JavaScript number holds exactly.  The same field names are used on
 * the wire and in JSON.
 */
#ifndef HTTP_JSON_H
#define HTTP_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "http_buf.h"
#include "wb_proto.h"

/* Levels of nested records (OBJS) accepted: one, as the msgpack codec,
 * whose depth limit of 4 containers is root map, records array, record
 * map, and an array field inside a record.  No request body needs more. */
#define HTTP_JSON_DEPTH 1

/* http_json_to_obj parses a JSON object and sets its fields on dst, accepting only fields in allowed (a WB_M mask); WB_EBADMSG or WB_EINVAL with a message in err. */
int http_json_to_obj(
    wb_obj *dst, const char *json, size_t len, wb_mask allowed, char *err, size_t errlen);

/* http_json_from_obj appends src as a JSON object to out, leaving out the fields in skip (a WB_M mask). */
int http_json_from_obj(const wb_obj *src, wb_mask skip, http_buf *out);

/* http_json_error_named appends the error body {"error": name, "message": msg} to out: name is
 * a wb_err_name or an HTTP-only one such as METHOD_NOT_ALLOWED; msg must be UTF-8. */
int http_json_error_named(http_buf *out, const char *name, const char *msg);

/*
 * http_json_set_text sets field f of dst from its text form (a path segment or query value:
 * decimal for U64/ID, true/false for BOOL); WB_EBADMSG with a message in err (for a decimal
 * beyond 64 bits, its bound).
 */
int http_json_set_text(wb_obj *dst, wb_field f, const char *s, size_t n, char *err, size_t errlen);

/* http_json_parse_u64 parses a plain decimal u64 ("0".."18446744073709551615", no sign or spaces); false if it is not one. */
bool http_json_parse_u64(const char *s, size_t n, uint64_t *out);

#endif
