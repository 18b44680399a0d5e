/*
 * http_json_test.c - the generic wb_obj <-> JSON mapping: every type both
 * ways, ids as strings beyond 2^53, type errors named, unknown and
 * disallowed fields refused, hostile input (deep nesting, NUL, bad
 * UTF-8, huge numbers) answered with errors, never crashes.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "http_json.h"

static wb_obj *
decode(const char *json, wb_mask allowed, int want, char *err, size_t n)
{
	wb_obj *o = wb_msg_new();

	cr_assert_not_null(o);
	int rc = http_json_to_obj(o, json, strlen(json), allowed, err, n);
	cr_assert_eq(rc, want, "%s: rc %d (%s), want %d", json, rc, err, want);
	return o;
}

Test(json, every_type_round_trips)
{
	const char     *in = "{\"uid\":7,\"id\":\"18446744073709551615\",\"followed\":true,"
	                     "\"name\":\"al\\u00e9\",\"uids\":[1,2,3],\"ids\":[\"9007199254740993\"],"
	                     "\"posts\":[{\"id\":\"5\",\"text\":\"hi\"}]}";
	char            err[128];
	http_buf        out = { 0 };
	wb_obj         *o = decode(in, WB_MASK_ALL, WB_OK, err, sizeof(err)), *back;
	const uint64_t *v;
	size_t          n;

	cr_assert_eq(wb_u64(o, WB_F_UID, 0), 7);
	cr_assert_eq(wb_u64(o, WB_F_ID, 0), UINT64_MAX);
	cr_assert_str_eq(wb_str(o, WB_F_NAME, ""), "al\xc3\xa9");
	cr_assert(wb_get_u64s(o, WB_F_IDS, &v, &n) && n == 1 && v[0] == 9007199254740993ull);
	cr_assert_eq(http_json_from_obj(o, 0, &out), WB_OK);
	cr_assert_not_null(strstr(out.p, "\"id\":\"18446744073709551615\""), "%s", out.p);
	cr_assert_not_null(strstr(out.p, "\"ids\":[\"9007199254740993\"]"), "%s", out.p);
	cr_assert_not_null(strstr(out.p, "\"uids\":[1,2,3]"), "%s", out.p);
	back = decode(out.p, WB_MASK_ALL, WB_OK, err, sizeof(err));
	cr_assert(wb_equal(o, back), "round trip differs: %s", out.p);
	http_buf_clear(&out);
	cr_assert_eq(http_json_from_obj(o, WB_M(UID) | WB_M(POSTS), &out), WB_OK);
	cr_assert_null(strstr(out.p, "\"uid\""));
	cr_assert_null(strstr(out.p, "\"posts\""));
	http_buf_free(&out);
	wb_msg_free(o);
	wb_msg_free(back);
}

Test(json, wrong_types_are_named)
{
	static const struct {
		const char *json, *needle;
	} cases[] = {
		{ "{\"id\":5}", "\"id\" must be a decimal string" },
		{ "{\"id\":\"5x\"}", "\"id\" must be a decimal string" },
		{ "{\"id\":\"18446744073709551616\"}", "\"id\"" },
		{ "{\"uid\":-1}", "\"uid\" must be a non-negative integer" },
		{ "{\"uid\":1.5}", "\"uid\"" },
		{ "{\"uid\":\"1\"}", "\"uid\"" },
		{ "{\"name\":5}", "\"name\" must be a string" },
		{ "{\"followed\":1}", "\"followed\" must be true or false" },
		{ "{\"uids\":[1,\"2\"]}", "\"uids[1]\" must be a non-negative integer" },
		{ "{\"ids\":[1]}", "\"ids[0]\" must be a decimal string" },
		{ "{\"posts\":7}", "\"posts\" must be an array of objects" },
		{ "{\"posts\":[1]}", "\"posts[0]\" must be an object" },
		{ "{\"posts\":[{\"posts\":[{\"posts\":[{\"posts\":[{\"posts\":[]}]}]}]}]}",
		    "\"posts[0].posts\" cannot be nested this deep" },
		/* a wrong field inside a record is named by its path, not as its array */
		{ "{\"images\":[{\"media\":123}]}", "field \"images[0].media\" must be a string" },
		{ "{\"images\":[{\"media\":\"1-2\"},{\"media\":\"1-3\",\"alt\":[]}]}",
		    "field \"images[1].alt\" must be a string" },
		{ "{\"posts\":[{\"ids\":[\"1\",2]}]}",
		    "field \"posts[0].ids[1]\" must be a decimal" },
		{ "[]", "expected a JSON object" },
		/* a NUL: the rule, not the JSON library's flag */
		{ "{\"name\":\"a\\u0000b\"}", "strings may not contain NUL (\\u0000)" },
		{ "{\"name\":\"\xff\"}", "invalid JSON" },
		{ "{\"a\":1", "invalid JSON" },
		{ "{\"name\":\"x\",\"name\":\"y\"}", "invalid JSON" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char    err[160] = "";
		wb_obj *o = wb_msg_new();
		int     rc = http_json_to_obj(
		        o, cases[i].json, strlen(cases[i].json), WB_MASK_ALL, err, sizeof(err));
		cr_expect_eq(rc, WB_EBADMSG, "%s: rc %d", cases[i].json, rc);
		cr_expect_not_null(
		    strstr(err, cases[i].needle), "%s: message \"%s\"", cases[i].json, err);
		cr_expect_null(
		    strstr(err, "JSON_"), "%s: names a library flag: %s", cases[i].json, err);
		wb_msg_free(o);
	}
	/* an unknown field inside a record too */
	char    err[160] = "";
	wb_obj *o = wb_msg_new();
	cr_assert_eq(
	    http_json_to_obj(o, "{\"images\":[{\"colour\":1}]}", 25, WB_MASK_ALL, err, sizeof(err)),
	    WB_EINVAL);
	cr_assert_str_eq(err, "unknown field \"images[0].colour\"");
	wb_msg_free(o);
}

Test(json, fields_outside_the_mask_are_refused)
{
	char    err[160];
	wb_obj *o;

	o = decode("{\"text\":\"a\",\"colour\":1}", WB_M(TEXT), WB_EINVAL, err, sizeof(err));
	cr_assert_not_null(strstr(err, "unknown field \"colour\""), "%s", err);
	wb_msg_free(o);
	o = decode("{\"text\":\"a\",\"uid\":1}", WB_M(TEXT), WB_EINVAL, err, sizeof(err));
	cr_assert_not_null(strstr(err, "not accepted"), "%s", err);
	wb_msg_free(o);
	o = decode("{\"token\":\"t\"}", WB_M(TEXT), WB_EINVAL, err, sizeof(err));
	cr_assert_not_null(strstr(err, "Authorization"), "%s", err);
	wb_msg_free(o);
	o = decode("{\"op\":\"register\"}", WB_MASK_ALL, WB_EINVAL, err, sizeof(err));
	wb_msg_free(o);
}

Test(json, text_forms_and_errors)
{
	char     err[128];
	wb_obj  *o = wb_msg_new();
	uint64_t u;

	cr_assert_eq(
	    http_json_set_text(o, WB_F_BEFORE, "912316145371971584", 18, err, sizeof(err)), WB_OK);
	cr_assert_eq(wb_u64(o, WB_F_BEFORE, 0), 912316145371971584ull);
	cr_assert_eq(http_json_set_text(o, WB_F_LIMIT, "", 0, err, sizeof(err)), WB_EBADMSG);
	cr_assert_eq(http_json_set_text(o, WB_F_LIMIT, "+1", 2, err, sizeof(err)), WB_EBADMSG);
	cr_assert_str_eq(err, "limit must be a decimal number");
	/* a decimal, only beyond 64 bits: the range is named, not the type */
	cr_assert_eq(
	    http_json_set_text(o, WB_F_LIMIT, "18446744073709551616", 20, err, sizeof(err)),
	    WB_EBADMSG);
	cr_assert_str_eq(err, "limit must be at most 18446744073709551615");
	cr_assert_eq(http_json_set_text(o, WB_F_FOLLOWED, "true", 4, err, sizeof(err)), WB_OK);
	cr_assert_eq(http_json_set_text(o, WB_F_FOLLOWED, "yes", 3, err, sizeof(err)), WB_EBADMSG);
	cr_assert_eq(http_json_set_text(o, WB_F_UIDS, "1", 1, err, sizeof(err)), WB_EBADMSG);
	cr_assert(http_json_parse_u64("18446744073709551615", 20, &u) && u == UINT64_MAX);
	cr_assert(!http_json_parse_u64("18446744073709551616", 20, &u));
	cr_assert(!http_json_parse_u64("123456789012345678901", 21, &u));
	wb_msg_free(o);
}

Test(json, error_bodies)
{
	http_buf out = { 0 };

	cr_assert_eq(
	    http_json_error_named(&out, wb_err_name(WB_ENOUSER), "no such user: \"x\"\n"), WB_OK);
	cr_assert_str_eq(
	    out.p, "{\"error\":\"NO_SUCH_USER\",\"message\":\"no such user: \\\"x\\\"\\n\"}");
	http_buf_clear(&out);
	cr_assert_eq(http_json_error_named(&out, "METHOD_NOT_ALLOWED", "bad \xff"), WB_OK);
	cr_assert_not_null(strstr(out.p, "not valid UTF-8"), "%s", out.p);
	http_buf_free(&out);
}

Test(json, strings_are_escaped_and_kept_valid)
{
	static const struct {
		const char *in, *json;
	} cases[] = {
		{ "say \"hi\"\\", "\"say \\\"hi\\\"\\\\\"" },
		{ "a\nb\tc\r\b\f", "\"a\\nb\\tc\\r\\b\\f\"" }, { "\x01\x1f", "\"\\u0001\\u001f\"" },
		{ "caf\xc3\xa9 / \xf0\x9f\x90\xa6",
		    "\"caf\xc3\xa9 / \xf0\x9f\x90\xa6\"" }, /* as is */
		{ "cut \xc3", "\"\xef\xbf\xbd\"" },         /* not UTF-8: U+FFFD */
		{ "\xed\xa0\x80", "\"\xef\xbf\xbd\"" },     /* a surrogate */
		{ "\xc0\xaf", "\"\xef\xbf\xbd\"" },         /* overlong */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		wb_obj  *o = wb_msg_new();
		http_buf out = { 0 };
		char     want[128];

		cr_assert_eq(wb_set_cstr(o, WB_F_TEXT, cases[i].in), WB_OK);
		cr_assert_eq(http_json_from_obj(o, 0, &out), WB_OK);
		snprintf(want, sizeof(want), "{\"text\":%s}", cases[i].json);
		cr_assert_str_eq(out.p, want, "case %zu", i);
		http_buf_free(&out);
		wb_msg_free(o);
	}
}
