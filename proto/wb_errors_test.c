/* wb_errors_test.c - every error code has a name, a message and a status. */
#include <criterion/criterion.h>
#include <string.h>

#include "wb_errors.h"

Test(wb_errors, every_code_has_name_message_status)
{
	for (int code = 0; code < WB_ERR_COUNT; code++) {
		const char *name = wb_err_name(code);
		cr_assert_gt(strlen(name), 0);
		cr_assert_gt(strlen(wb_strerror(code)), 0);
		cr_assert_str_neq(wb_strerror(code), "unknown error");
		int http = wb_err_http(code);
		cr_assert(http >= 200 && http <= 599, "%s: %d", name, http);
		cr_assert_eq(http == 200, code == WB_OK, "%s: only OK maps to 200", name);
		for (const char *p = name; *p; p++) {
			cr_assert(
			    (*p >= 'A' && *p <= 'Z') || *p == '_', "%s: wire names are A-Z_", name);
		}
	}
}

Test(wb_errors, names_round_trip_and_are_unique)
{
	for (int code = 0; code < WB_ERR_COUNT; code++) {
		const char *name = wb_err_name(code);
		cr_assert_eq(wb_err_from_name(name, strlen(name)), code, "%s", name);
		for (int other = code + 1; other < WB_ERR_COUNT; other++) {
			cr_assert_str_neq(name, wb_err_name(other));
		}
	}
}

Test(wb_errors, unknown_codes_and_names)
{
	cr_assert_str_eq(wb_strerror(-1), "unknown error");
	cr_assert_str_eq(wb_strerror(WB_ERR_COUNT), "unknown error");
	cr_assert_str_eq(wb_err_name(WB_ERR_COUNT), "INTERNAL");
	cr_assert_eq(wb_err_http(-5), 500);
	cr_assert_eq(wb_err_from_name("NOPE", 4), WB_EINTERNAL);
	cr_assert_eq(wb_err_from_name("NOT_FOUN", 8), WB_EINTERNAL);
	cr_assert_eq(wb_err_from_name("NOT_FOUND", 9), WB_ENOTFOUND);
	cr_assert_eq(wb_err_from_name("", 0), WB_EINTERNAL);
	cr_assert_eq(wb_err_http(WB_ENOTFOUND), 404);
	cr_assert_eq(wb_err_http(WB_ETOOBIG), 413);
}
