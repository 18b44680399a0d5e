/* wb_errors.c - names, messages and HTTP statuses of the error list. */
#include <string.h>

#include "wb_errors.h"

static const struct {
	const char *name;
	const char *msg;
	int         http;
} wb_err_table[] = {
#define WB_ERR_ROW(e, name, msg, http) { name, msg, http },
	WB_ERRORS(WB_ERR_ROW)
#undef WB_ERR_ROW
};

const char *
wb_strerror(int code)
{
	if (code < 0 || code >= WB_ERR_COUNT) {
		return "unknown error";
	}
	return wb_err_table[code].msg;
}

const char *
wb_err_name(int code)
{
	if (code < 0 || code >= WB_ERR_COUNT) {
		return "INTERNAL";
	}
	return wb_err_table[code].name;
}

int
wb_err_from_name(const char *name, size_t len)
{
	for (int i = 0; i < WB_ERR_COUNT; i++) {
		if (strlen(wb_err_table[i].name) == len &&
		    memcmp(wb_err_table[i].name, name, len) == 0) {
			return i;
		}
	}
	return WB_EINTERNAL;
}

int
wb_err_http(int code)
{
	if (code < 0 || code >= WB_ERR_COUNT) {
		return 500;
	}
	return wb_err_table[code].http;
}
