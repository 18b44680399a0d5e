/*
 * wb_errors.h - the one list of Warble error codes.
 *
 * Every library, service, the SDK and the HTTP mapping use these codes.
 * The list macro yields the enum (WB_OK, WB_EINVAL, ...), the wire names
 * carried in error replies ("INVALID"), the human messages and the HTTP
 * status each code maps to.  Codes are small positive ints; 0 is success.
 * Foreign errors (nng, RocksDB, msgpack, errno) convert to these at the
 * boundary where they occur.
 */
#ifndef WB_ERRORS_H
#define WB_ERRORS_H

/*   enum          wire name          message                                   http */
/* clang-format off */
#define WB_ERRORS(X)                                                                   \
	X(OK,         "OK",              "success",                                 200) \
	X(EINVAL,     "INVALID",         "invalid argument",                        400) \
	X(EBADMSG,    "BAD_MESSAGE",     "malformed message",                       400) \
	X(ETOOBIG,    "TOO_LARGE",       "message or field too large",              413) \
	X(EVERSION,   "BAD_VERSION",     "unsupported protocol version",            400) \
	X(EBADOP,     "UNKNOWN_OP",      "unknown operation",                       400) \
	X(EBADNAME,   "BAD_USERNAME",    "username must be 3-32 of [a-z0-9_]",      400) \
	X(EBADPASS,   "BAD_PASSWORD",    "password must be at least 8 bytes",       400) \
	X(EBADTEXT,   "BAD_TEXT",        "post text must be valid UTF-8",           400) \
	X(ETOOLONG,   "TEXT_TOO_LONG",   "post text longer than 280 characters",    400) \
	X(ESELF,      "FOLLOW_SELF",     "cannot follow yourself",                  400) \
	X(ENOTFOUND,  "NOT_FOUND",       "not found",                               404) \
	X(ENOUSER,    "NO_SUCH_USER",    "no such user",                            404) \
	X(ENOPOST,    "NO_SUCH_POST",    "no such post",                            404) \
	X(EEXIST,     "NAME_TAKEN",      "username already taken",                  409) \
	X(EAUTH,      "UNAUTHORIZED",    "missing, invalid or expired token",       401) \
	X(ELOGIN,     "BAD_CREDENTIALS", "wrong username or password",              401) \
	X(EPERM,      "FORBIDDEN",       "not allowed",                             403) \
	X(ERATE,      "RATE_LIMITED",    "too many attempts, try again later",      429) \
	X(EUNAVAIL,   "UNAVAILABLE",     "backend unavailable",                     503) \
	X(ETIMEDOUT,  "TIMEOUT",         "backend timed out",                       504) \
	X(ECLOSED,    "CLOSED",          "shutting down",                           503) \
	X(ENOMEM,     "NO_MEMORY",       "out of memory",                           503) \
	X(EIO,        "STORE_ERROR",     "storage error",                           500) \
	X(ECORRUPT,   "CORRUPT",         "corrupt stored data",                     500) \
	X(EEND,       "END",             "no more data",                            404) \
	X(EINTERNAL,  "INTERNAL",        "internal error",                          500) \
	X(EMEDIATYPE, "BAD_MEDIA",       "not one whole PNG, JPEG, GIF or WebP image", 415) \
	X(ENOMEDIA,   "NO_SUCH_MEDIA",   "no such media",                           404) \
	X(EWRONGSHARD, "WRONG_SHARD",    "the request belongs to another shard",    421) \
	X(EBLOCKED,   "BLOCKED",         "a block stands between these users",      403)
/* clang-format on */

typedef enum wb_err {
#define WB_ERR_ENUM(e, name, msg, http) WB_##e,
	WB_ERRORS(WB_ERR_ENUM)
#undef WB_ERR_ENUM
	    WB_ERR_COUNT
} wb_err;

/* wb_strerror returns the human message for code, or "unknown error". */
const char *wb_strerror(int code);

/* wb_err_name returns the wire name for code ("NOT_FOUND"), or "INTERNAL". */
const char *wb_err_name(int code);

/* wb_err_from_name maps a wire name back to its code; unknown names give WB_EINTERNAL. */
int wb_err_from_name(const char *name, size_t len);

/* wb_err_http returns the HTTP status a code maps to (500 for unknown codes). */
int wb_err_http(int code);

#endif
