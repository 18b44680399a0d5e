/*
 * wb_proto.h - the Warble wire protocol: every field, every operation, and
 * the message object the codec reads and writes.  This file is the one
 * source of truth used by the services, the SDK and the HTTP mapping.
 *
 * A message is a msgpack map from field names to values:
 *
 *   request  {"op": "post.publish", "v": 1, "uid": 7, "text": "hi"}
 *   reply    {"ok": true, "id": 51234...}
 *   error    {"ok": false, "err": "TEXT_TOO_LONG", "msg": "post text ..."}
 *
 * Field values have one type each, fixed below; nested records (posts,
 * users, events, stats) are arrays of maps built from the same fields.
 */
#ifndef WB_PROTO_H
#define WB_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wb_errors.h"

#define WB_PROTO_VERSION     1
#define WB_RELEASE           "0.1.0"   /* the Warble release, named in backup manifests */
#define WB_RID_MAX           64        /* request id: 1-64 of A-Z a-z 0-9 . _ : - */
#define WB_BATCH_MAX         64        /* requests in one batch */
#define WB_MEDIA_MAX_DEFAULT (1 << 20) /* an image upload's default limit, bytes (media-max) */
#define WB_MEDIA_MAX_LIMIT   (3 << 20) /* the largest media-max: within a 4 MiB message */

/* Value types.  ID and IDS are u64 on the wire but strings in JSON, since
 * post ids exceed 2^53 (JavaScript's exact integer range). */
typedef enum wb_type {
	WB_T_U64,
	WB_T_ID,
	WB_T_BOOL,
	WB_T_STR,
	WB_T_U64S,
	WB_T_IDS,
	WB_T_OBJS,
	WB_T_BIN, /* bytes: msgpack bin; never in JSON (media travel raw over HTTP) */
} wb_type;

/*   enum        wire name      type     meaning */
/* clang-format off */
#define WB_FIELDS(X)                                                            \
	X(OP,        "op",          STR)  /* operation name (requests) */       \
	X(V,         "v",           U64)  /* protocol version (requests) */     \
	X(OK,        "ok",          BOOL) /* reply status */                    \
	X(ERR,       "err",         STR)  /* error code name (error replies) */ \
	X(MSG,       "msg",         STR)  /* human error message */             \
	X(TOKEN,     "token",       STR)  /* session token */                   \
	X(UID,       "uid",         U64)  /* user id */                         \
	X(UIDS,      "uids",        U64S) /* user ids */                        \
	X(TARGET,    "target",      U64)  /* the other user of a relation */    \
	X(NAME,      "name",        STR)  /* username */                        \
	X(PASSWORD,  "password",    STR)  /* password (never stored/logged) */  \
	X(NEW_PASSWORD, "new_password", STR) /* password change (never logged) */ \
	X(KEY,       "key",         STR)  /* a session public key, base64url (internal) */ \
	X(KEYS,      "keys",        OBJS) /* session public keys: {kid, key, until?} */ \
	X(KID,       "kid",         U64)  /* a session key's id */              \
	X(REVOKE,    "revoke",      BOOL) /* rotate_key: end the earlier keys' sessions now */ \
	X(ADDR,      "addr",        STR)  /* the client's address (internal) */ \
	X(RETRY,     "retry_ms",    U64)  /* RATE_LIMITED: ms until a retry may pass */ \
	X(DISPLAY,   "display",     STR)  /* display name */                    \
	X(BIO,       "bio",         STR)  /* profile text */                    \
	X(CREATED,   "created",     U64)  /* ms since Unix epoch */             \
	X(ID,        "id",          ID)   /* post id */                         \
	X(IDS,       "ids",         IDS)  /* post ids */                        \
	X(AUTHOR,    "author",      U64)  /* author uid */                      \
	X(AUTHOR_NAME, "author_name", STR) /* author username (hydrated) */     \
	X(TEXT,      "text",        STR)  /* post text */                       \
	X(TIME,      "time",        U64)  /* ms since Unix epoch */             \
	X(BEFORE,    "before",      ID)   /* page cursor: ids below this */     \
	X(AFTER,     "after",       U64)  /* page cursor: uids above this */    \
	X(SINCE,     "since",       U64)  /* time range start, ms, inclusive */ \
	X(UNTIL,     "until",       U64)  /* time range end, ms, exclusive */   \
	X(LIMIT,     "limit",       U64)  /* page size */                       \
	X(NEXT,      "next",        ID)   /* cursor of the next page, if any */ \
	X(FOLLOWING, "following",   U64)  /* following count */                 \
	X(FOLLOWERS, "followers",   U64)  /* follower count */                  \
	X(FOLLOWED,  "followed",    BOOL) /* the caller follows this user */    \
	X(POSTS,     "posts",       OBJS) /* post records */                    \
	X(USERS,     "users",       OBJS) /* user records */                    \
	X(MISSING,   "missing",     U64S) /* requested ids not found */         \
	X(EVENTS,    "events",      OBJS) /* event records */                   \
	X(SOURCE,    "source",      STR)  /* event source service */            \
	X(SEQ,       "seq",         U64)  /* event sequence number */           \
	X(FROM,      "from",        U64)  /* first seq to read */               \
	X(LAST,      "last",        U64)  /* last seq in a log */               \
	X(TYPE,      "type",        STR)  /* event type */                      \
	X(SERVICE,   "service",     STR)  /* service name (stats) */            \
	X(UPTIME,    "uptime_ms",   U64)  /* ms since start (stats) */          \
	X(STATS,     "stats",       OBJS) /* per-operation stats */             \
	X(COUNT,     "count",       U64)  /* requests (stats) */                \
	X(ERRORS,    "errors",      U64)  /* error replies (stats) */           \
	X(SUM_US,    "sum_us",      U64)  /* total latency, us (stats) */       \
	X(HIST,      "hist",        U64S) /* latency histogram (stats) */       \
	X(GAUGES,    "gauges",      OBJS) /* named values (stats) */            \
	X(VALUE,     "value",       U64)  /* a gauge value */                   \
	X(RID,       "rid",         STR)  /* request id, any request or event (logs) */ \
	X(DIR,       "dir",         STR)  /* a folder on the service's machine */ \
	X(LOGS,      "logs",        OBJS) /* event-log positions: {source, last|seq} */ \
	X(STATE,     "state",       STR)  /* a long job's state */              \
	X(DONE,      "done",        U64)  /* a long job's work done */          \
	X(TOTAL,     "total",       U64)  /* a long job's work in all (estimate) */ \
	X(ELAPSED,   "elapsed_ms",  U64)  /* a long job's running time, ms */   \
	X(RELEASE,   "release",     STR)  /* the Warble release (WB_RELEASE) */ \
	X(REQS,      "reqs",        OBJS) /* requests of a batch */             \
	X(REPS,      "reps",        OBJS) /* their replies, in order (batch) */ \
	X(TITLE,     "title",       STR)  /* post title */                      \
	X(CATEGORY,  "category",    STR)  /* post category: a-z 0-9 _ */        \
	X(IMAGES,    "images",      OBJS) /* a post's images: {media, alt?} */  \
	X(MEDIA,     "media",       STR)  /* media id "<author>-<id>" */        \
	X(DATA,      "data",        BIN)  /* media bytes */                     \
	X(WIDTH,     "width",       U64)  /* image width, pixels */             \
	X(HEIGHT,    "height",      U64)  /* image height, pixels */            \
	X(ALT,       "alt",         STR)  /* image description */               \
	X(SIZE,      "size",        U64)  /* media bytes */                     \
	X(PUBLIC,    "public",      BOOL) /* media attached to a post (anyone may read it) */ \
	X(LAG,       "lag_ms",      U64)  /* inbox.home: every delete older than this is applied */ \
	X(SHARD,     "shard",       U64)  /* WRONG_SHARD: the index of the shard that owns it */ \
	X(SLOTS,     "slots",       U64S) /* a slot range [lo, hi) (rel.fans: only those fans) */ \
	X(PREVIEW,   "preview",     BOOL) /* media: the image's preview, not the original */ \
	X(PREVIEW_WIDTH, "preview_width", U64) /* its preview's width, pixels */ \
	X(PREVIEW_HEIGHT, "preview_height", U64) /* its preview's height, pixels */ \
	X(PREVIEW_SIZE, "preview_size", U64) /* its preview's bytes */            \
	X(PREVIEW_URL, "preview_url", STR) /* its preview's path on the HTTP port */ \
	X(BLOCKING,  "blocking",    BOOL) /* the caller blocks this user */      \
	X(BLOCKED_BY, "blocked_by", BOOL) /* this user blocks the caller */      \
	X(FOLLOWED_BY, "followed_by", U64) /* suggestions: followed by this many of one's follows */ \
	X(CONSUMER,  "consumer",    STR)  /* *.log: the reader reporting ("inbox/2") */ \
	X(APPLIED,   "applied",     U64)  /* *.log: the last seq that consumer applied */ \
	X(FIRST,     "first",       U64)  /* *.log: the first seq the log still holds */
/* clang-format on */

typedef enum wb_field {
#define WB_FIELD_ENUM(e, name, type) WB_F_##e,
	WB_FIELDS(WB_FIELD_ENUM)
#undef WB_FIELD_ENUM
	    WB_FIELD_COUNT /* number of fields (WB_F_COUNT is the "count" field) */
} wb_field;

/* A set of fields, one bit per field (operations' field masks). */
__extension__ typedef unsigned __int128 wb_mask;

_Static_assert(WB_FIELD_COUNT <= 128, "field masks are 128 bits");

/* WB_MASK_ALL is the mask of every field. */
#define WB_MASK_ALL (~(wb_mask)0)

/* WB_M(F) is the bit of field F in an operation's field masks. */
#define WB_M(f) ((wb_mask)1 << WB_F_##f)

/* wb_mask_bit returns the bit of field f (a wb_field value) in a mask. */
static inline wb_mask
wb_mask_bit(int f)
{
	return (wb_mask)1 << f;
}

/* wb_mask_first returns the lowest field in a nonzero mask. */
static inline int
wb_mask_first(wb_mask m)
{
	uint64_t lo = (uint64_t)m;
	return lo != 0 ? __builtin_ctzll(lo) : 64 + __builtin_ctzll((uint64_t)(m >> 64));
}

/*
 * Operations: enum, wire name, required fields, optional fields.
 * Internal operations are prefixed with their service; the unprefixed
 * ones are the gateway's public API (token = the caller's session).
 */
/* clang-format off */
#define WB_OPS(X)                                                                  \
	/* every service */                                                        \
	X(PING,           "ping",             0, 0)                                \
	X(STATS,          "stats",            0, 0)                                \
	X(BATCH,          "batch",            WB_M(REQS), 0) /* reps: one per req */ \
	/* every service with a store (internal port only, never the gateway) */  \
	X(ADMIN_BACKUP,   "admin.backup",     WB_M(DIR), 0) /* checkpoint into dir */ \
	/* user service */                                                         \
	X(USER_REGISTER,  "user.register",    WB_M(NAME) | WB_M(PASSWORD), WB_M(ADDR)) \
	X(USER_LOGIN,     "user.login",       WB_M(NAME) | WB_M(PASSWORD), WB_M(ADDR)) \
	X(USER_LOGOUT,    "user.logout",      WB_M(TOKEN), 0)                      \
	X(USER_AUTH,      "user.auth",        WB_M(TOKEN), 0)                      \
	X(USER_GET,       "user.get",         WB_M(UIDS), 0)                       \
	X(USER_LOOKUP,    "user.lookup",      WB_M(NAME), 0)                       \
	X(USER_UPDATE,    "user.update",      WB_M(UID), WB_M(DISPLAY) | WB_M(BIO)) \
	X(USER_REGISTER_MANY, "user.register_many", WB_M(NAME) | WB_M(PASSWORD) | WB_M(FROM) | WB_M(LIMIT), 0) /* load setup: names NAME<FROM>.. */ \
	X(USER_LOGOUT_ALL, "user.logout_all", WB_M(TOKEN), 0)                  \
	X(USER_PASSWORD,  "user.password",    WB_M(TOKEN) | WB_M(PASSWORD) | WB_M(NEW_PASSWORD), WB_M(ADDR)) \
	X(USER_SESSION_KEYS, "user.session_keys", 0, 0) /* public keys only */  \
	X(USER_ROTATE_KEY, "user.rotate_key", 0, WB_M(REVOKE)) /* admin */     \
	X(USER_REVOCATIONS, "user.revocations", WB_M(FROM), WB_M(LIMIT))       \
	/* relation service */                                                     \
	X(REL_FOLLOW,     "rel.follow",       WB_M(UID) | WB_M(TARGET), 0)         \
	X(REL_UNFOLLOW,   "rel.unfollow",     WB_M(UID) | WB_M(TARGET), 0)         \
	X(REL_FOLLOWING,  "rel.following",    WB_M(UID), WB_M(AFTER) | WB_M(LIMIT)) \
	X(REL_FANS,       "rel.fans",         WB_M(UID), WB_M(AFTER) | WB_M(LIMIT) | WB_M(SLOTS)) \
	X(REL_IS_FOLLOWING, "rel.is_following", WB_M(UID) | WB_M(TARGET), 0)       \
	X(REL_COUNTS,     "rel.counts",       WB_M(UIDS), 0)                       \
	X(REL_LOG,        "rel.log",          WB_M(FROM), WB_M(LIMIT) | WB_M(CONSUMER) | WB_M(APPLIED))             \
	X(REL_FOLLOW_MANY, "rel.follow_many", WB_M(TARGET) | WB_M(UIDS), 0) /* each of uids follows target */ \
	X(REL_FOLLOWED,   "rel.followed",     0, WB_M(AFTER) | WB_M(LIMIT)) /* users with fans */ \
	/* content service */                                                      \
	X(POST_PUBLISH,   "post.publish",     WB_M(UID),                           \
	    WB_M(TEXT) | WB_M(TITLE) | WB_M(CATEGORY) | WB_M(IMAGES))            \
	X(POST_GET,       "post.get",         WB_M(IDS), WB_M(UIDS)) /* uids: author hints */ \
	X(POST_TIMELINE,  "post.timeline",    WB_M(UID),                           \
	    WB_M(BEFORE) | WB_M(LIMIT) | WB_M(SINCE) | WB_M(UNTIL) | WB_M(CATEGORY)) \
	X(POST_DELETE,    "post.delete",      WB_M(UID) | WB_M(ID), 0)             \
	X(POST_LOG,       "post.log",         WB_M(FROM), WB_M(LIMIT) | WB_M(CONSUMER) | WB_M(APPLIED))             \
	X(MEDIA_PUT,      "media.put",        WB_M(UID) | WB_M(DATA), 0) /* an upload */ \
	X(MEDIA_GET,      "media.get",        WB_M(MEDIA), WB_M(UID) | WB_M(PREVIEW)) /* uid: the reader */ \
	X(MEDIA_REENCODE, "media.reencode",   0, 0) /* every stored image again (long job) */ \
	X(MEDIA_REENCODE_STATUS, "media.reencode_status", 0, 0)                  \
	X(POST_AUTHORS,   "post.authors",     0, WB_M(AFTER) | WB_M(LIMIT) | WB_M(SLOTS)) /* users with posts */ \
	/* inbox service */                                                        \
	X(INBOX_HOME,     "inbox.home",       WB_M(UID), WB_M(BEFORE) | WB_M(LIMIT)) \
	X(INBOX_REBUILD,  "inbox.rebuild",    0, WB_M(LIMIT)) /* limit: posts per follow */ \
	X(INBOX_REBUILD_STATUS, "inbox.rebuild_status", 0, 0)                  \
	/* pub/sub: a batch of events from one source */                          \
	X(EVENTS,         "events",           WB_M(SOURCE) | WB_M(EVENTS), 0)      \
	/* gateway: the public API */                                              \
	X(REGISTER,       "register",         WB_M(NAME) | WB_M(PASSWORD), 0)      \
	X(LOGIN,          "login",            WB_M(NAME) | WB_M(PASSWORD), 0)      \
	X(LOGOUT,         "logout",           WB_M(TOKEN), 0)                      \
	X(WHOAMI,         "whoami",           WB_M(TOKEN), 0)                      \
	X(PUBLISH,        "publish",          WB_M(TOKEN),                         \
	    WB_M(TEXT) | WB_M(TITLE) | WB_M(CATEGORY) | WB_M(IMAGES))            \
	X(DELETE,         "delete",           WB_M(TOKEN) | WB_M(ID), 0)           \
	X(HOME,           "home",             WB_M(TOKEN), WB_M(BEFORE) | WB_M(LIMIT)) \
	X(TIMELINE,       "timeline",         WB_M(NAME), WB_M(TOKEN) |            \
	    WB_M(BEFORE) | WB_M(LIMIT) | WB_M(SINCE) | WB_M(UNTIL) | WB_M(CATEGORY)) \
	X(FOLLOW,         "follow",           WB_M(TOKEN) | WB_M(NAME), 0)         \
	X(UNFOLLOW,       "unfollow",         WB_M(TOKEN) | WB_M(NAME), 0)         \
	X(FOLLOWING_LIST, "following",        WB_M(NAME), WB_M(TOKEN) | WB_M(AFTER) | WB_M(LIMIT)) \
	X(FANS_LIST,      "fans",             WB_M(NAME), WB_M(TOKEN) | WB_M(AFTER) | WB_M(LIMIT)) \
	X(PROFILE,        "profile",          WB_M(NAME), WB_M(TOKEN))             \
	X(UPDATE_PROFILE, "update_profile",   WB_M(TOKEN), WB_M(DISPLAY) | WB_M(BIO)) \
	X(LOGOUT_ALL,     "logout_all",       WB_M(TOKEN), 0)                      \
	X(CHANGE_PASSWORD, "change_password", WB_M(TOKEN) | WB_M(PASSWORD) | WB_M(NEW_PASSWORD), 0) \
	X(UPLOAD,         "upload",           WB_M(TOKEN) | WB_M(DATA), 0)         \
	X(MEDIA,          "media",            WB_M(MEDIA), WB_M(TOKEN) | WB_M(PREVIEW)) \
	X(POST,           "post",             WB_M(ID), WB_M(TOKEN)) /* one post, hydrated */ \
	/* relation service: blocks, and what suggestions read */                \
	X(REL_BLOCK,      "rel.block",        WB_M(UID) | WB_M(TARGET), 0) /* uid blocks target */ \
	X(REL_UNBLOCK,    "rel.unblock",      WB_M(UID) | WB_M(TARGET), 0)         \
	X(REL_BLOCKS,     "rel.blocks",       WB_M(UID), WB_M(AFTER) | WB_M(LIMIT)) \
	X(REL_BLOCK_PEER, "rel.block_peer",                                       \
	    WB_M(UID) | WB_M(TARGET) | WB_M(SEQ) | WB_M(BLOCKING), 0)             \
	    /* relation to relation: target's block of uid, as of its seq */     \
	X(REL_FOLLOWING_MANY, "rel.following_many", WB_M(UIDS), WB_M(AFTER) | WB_M(LIMIT)) \
	    /* users: each uid's followees after `after`, wrapping round */       \
	X(REL_UNRELATED,  "rel.unrelated",    WB_M(UID) | WB_M(UIDS), 0)           \
	    /* uids that uid neither follows nor blocks, nor is blocked by */    \
	X(REL_POPULAR,    "rel.popular",      0, WB_M(LIMIT)) /* this shard's most followed */ \
	/* gateway: blocks and suggestions */                                      \
	X(BLOCK,          "block",            WB_M(TOKEN) | WB_M(NAME), 0)         \
	X(UNBLOCK,        "unblock",          WB_M(TOKEN) | WB_M(NAME), 0)         \
	X(BLOCKS_LIST,    "blocks",           WB_M(TOKEN), WB_M(AFTER) | WB_M(LIMIT)) \
	X(SUGGESTIONS,    "suggestions",      WB_M(TOKEN), WB_M(LIMIT)) /* whom to follow */ \
	/* deleting an account: the user service's, then the gateway's */       \
	X(USER_DELETE,    "user.delete",      WB_M(TOKEN) | WB_M(PASSWORD), WB_M(ADDR)) \
	X(USER_DELETE_NAME, "user.delete_name", WB_M(NAME), 0) /* admin: no password */ \
	X(USER_LOG,       "user.log",         WB_M(FROM), WB_M(LIMIT)) /* the deletions */ \
	X(DELETE_ACCOUNT, "delete_account",   WB_M(TOKEN) | WB_M(PASSWORD), 0)
/* clang-format on */

typedef enum wb_op {
	WB_OP_NONE = 0,
#define WB_OP_ENUM(e, name, req, opt) WB_OP_##e,
	WB_OPS(WB_OP_ENUM)
#undef WB_OP_ENUM
	    WB_OP_COUNT
} wb_op;

/*
 * wb_obj: a map of known fields.  A root object owns an arena; every
 * string, array and nested object set on it (or decoded into it) lives in
 * that arena and is freed with the root by wb_msg_free.  Objects are small
 * (fields are stored sparsely) and not thread-safe.
 */
typedef struct wb_obj   wb_obj;
typedef struct wb_arena wb_arena;

typedef struct wb_val {
	uint16_t field; /* wb_field */
	union {
		uint64_t u;
		bool     b;
		struct {
			const char *p; /* NUL-terminated */
			uint32_t    n;
		} s;
		struct {
			uint64_t *v;
			uint32_t  n;
		} a;
		struct {
			wb_obj  *v;
			uint32_t n;
		} o;
	};
} wb_val;

struct wb_obj {
	wb_arena *arena;
	wb_val   *vals;
	uint16_t  n, cap;
};

/* Limits the decoder enforces; wb_limits_default gives sane defaults. */
typedef struct wb_limits {
	size_t max_bytes;  /* whole message (default 4 MiB) */
	size_t max_str;    /* one string (default 64 KiB) */
	size_t max_bin;    /* one bin value: media (default 4 MiB) */
	size_t max_array;  /* elements of one array (default 100000) */
	size_t max_fields; /* fields of one map (default 128) */
	int    max_depth;  /* nesting of maps/arrays (default 6: a batch of stats replies) */
} wb_limits;

extern const wb_limits wb_limits_default;

/* wb_field_name returns a field's wire name. */
const char *wb_field_name(wb_field f);

/* wb_field_type returns a field's value type. */
wb_type wb_field_type(wb_field f);

/* wb_field_lookup maps a wire name to a field, or returns -1. */
int wb_field_lookup(const char *name, size_t len);

/* wb_op_name returns an operation's wire name ("?" for WB_OP_NONE). */
const char *wb_op_name(wb_op op);

/* wb_op_lookup maps a wire name to an operation, or WB_OP_NONE. */
wb_op wb_op_lookup(const char *name, size_t len);

/* wb_op_fields gives an operation's required and optional field masks. */
void wb_op_fields(wb_op op, wb_mask *required, wb_mask *optional);

/* wb_msg_new creates an empty root object with its own arena (NULL if out of memory). */
wb_obj *wb_msg_new(void);

/* wb_msg_free frees a root object and everything in its arena; NULL is ignored. */
void wb_msg_free(wb_obj *m);

/* wb_request creates a root object with op and protocol version set. */
wb_obj *wb_request(wb_op op);

/*
 * Request ids.  Each thread has a current request id (NULL: none): a
 * server sets it from the request it serves, the gateway from the client
 * or a new one, and wb_request stamps it on every request the thread
 * builds, so one id follows a request through every service it touches
 * (and into the events it causes) and names it in their logs.
 */

/* wb_rid returns the calling thread's request id, or NULL. */
const char *wb_rid(void);

/* wb_rid_swap makes rid (NULL: none; kept by pointer, so it must outlive its use) the calling thread's request id and returns the one before. */
const char *wb_rid_swap(const char *rid);

/* wb_rid_ok tells whether s (n bytes) is a well-formed request id. */
bool wb_rid_ok(const char *s, size_t n);

/* wb_reset empties a root object and its arena for reuse. */
void wb_reset(wb_obj *m);

/* wb_set_u64 sets a U64/ID field (replacing any value); returns a wb_err. */
int wb_set_u64(wb_obj *o, wb_field f, uint64_t v);

/* wb_set_bool sets a BOOL field. */
int wb_set_bool(wb_obj *o, wb_field f, bool v);

/* wb_set_str copies n bytes into a STR field (NUL-terminated copy). */
int wb_set_str(wb_obj *o, wb_field f, const char *s, size_t n);

/* wb_set_bin copies n bytes into a BIN field (a NUL follows them, not counted). */
int wb_set_bin(wb_obj *o, wb_field f, const void *p, size_t n);

/* wb_set_bin_ref points a BIN field at n bytes without copying them: they must outlive o (a request forwarding its caller's bytes). */
int wb_set_bin_ref(wb_obj *o, wb_field f, const void *p, size_t n);

/* wb_get_bin reads a BIN field; false if absent. */
bool wb_get_bin(const wb_obj *o, wb_field f, const void **p, size_t *n);

/* wb_set_cstr sets a STR field from a C string. */
int wb_set_cstr(wb_obj *o, wb_field f, const char *s);

/* wb_set_u64s copies an array into a U64S/IDS field. */
int wb_set_u64s(wb_obj *o, wb_field f, const uint64_t *v, size_t n);

/* wb_add_u64s allocates an n-element U64S/IDS field for the caller to fill (NULL on error). */
uint64_t *wb_add_u64s(wb_obj *o, wb_field f, size_t n);

/* wb_add_objs allocates n empty nested objects in an OBJS field (NULL on error). */
wb_obj *wb_add_objs(wb_obj *o, wb_field f, size_t n);

/* wb_shrink shortens an array field already set to n elements (n <= current). */
void wb_shrink(wb_obj *o, wb_field f, size_t n);

/* wb_del removes a field if present. */
void wb_del(wb_obj *o, wb_field f);

/* wb_has tells whether a field is present. */
bool wb_has(const wb_obj *o, wb_field f);

/* wb_get_u64 reads a U64/ID field; false if absent. */
bool wb_get_u64(const wb_obj *o, wb_field f, uint64_t *out);

/* wb_u64 reads a U64/ID field or returns dflt. */
uint64_t wb_u64(const wb_obj *o, wb_field f, uint64_t dflt);

/* wb_get_bool reads a BOOL field; false if absent. */
bool wb_get_bool(const wb_obj *o, wb_field f, bool *out);

/* wb_get_str reads a STR field (NUL-terminated, length in *n if n != NULL). */
bool wb_get_str(const wb_obj *o, wb_field f, const char **s, size_t *n);

/* wb_str reads a STR field or returns dflt. */
const char *wb_str(const wb_obj *o, wb_field f, const char *dflt);

/* wb_get_u64s reads a U64S/IDS field. */
bool wb_get_u64s(const wb_obj *o, wb_field f, const uint64_t **v, size_t *n);

/* wb_get_objs reads an OBJS field. */
bool wb_get_objs(const wb_obj *o, wb_field f, const wb_obj **v, size_t *n);

/* wb_copy copies every field of src into dst (nested objects too, into dst's arena), replacing those dst has; returns a wb_err. */
int wb_copy(wb_obj *dst, const wb_obj *src);

/* wb_equal tells whether two objects hold the same fields with the same values (order aside). */
bool wb_equal(const wb_obj *a, const wb_obj *b);

/* wb_op_of returns a request's operation (WB_OP_NONE if absent or unknown). */
wb_op wb_op_of(const wb_obj *req);

/*
 * wb_check_request validates a decoded request: known op, supported
 * version, every required field present, no field the op does not take.
 * On error it writes a human message to err (errlen bytes).
 */
int wb_check_request(const wb_obj *req, wb_op *op, char *err, size_t errlen);

/* wb_reply_ok turns an empty root object into a success reply. */
int wb_reply_ok(wb_obj *rep);

/*
 * wb_page_limit reads req's LIMIT by the one rule of every list
 * operation: absent gives dflt, 0 is an error (WB_EINVAL, with rep made
 * the error reply "limit must be 1-max"), above max gives max.
 */
int wb_page_limit(const wb_obj *req, uint64_t dflt, uint64_t max, uint64_t *out, wb_obj *rep);

/* wb_reply_error resets rep into an error reply with code and a printf-style message (NULL fmt: the code's message). */
int wb_reply_error(wb_obj *rep, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* wb_reply_code returns WB_OK for a success reply, else the error code it carries (and its message in *msg). */
int wb_reply_code(const wb_obj *rep, const char **msg);

/* wb_write_fn receives encoded bytes; returns 0 or a nonzero error. */
typedef int (*wb_write_fn)(void *arg, const char *buf, size_t len);

/* wb_encode writes m as msgpack through fn. */
int wb_encode(const wb_obj *m, wb_write_fn fn, void *arg);

/* wb_encode_buf encodes m into a malloc'd buffer the caller frees. */
int wb_encode_buf(const wb_obj *m, char **buf, size_t *len);

/*
 * wb_decode parses msgpack bytes into a new root object.  It checks every
 * declared length against the bytes present and the limits before anything
 * is allocated, so hostile input costs at most O(len) memory.  On error it
 * returns a code (WB_EBADMSG, WB_ETOOBIG, WB_ENOMEM) and a message in err.
 */
int wb_decode(
    wb_obj **out, const void *buf, size_t len, const wb_limits *lim, char *err, size_t errlen);

/*
 * wb_decode_head decodes the top-level fields wholly within the first len
 * bytes of a message whose rest is still on its way (a server reads a
 * large request's op and token before taking its body): the fields up to
 * the first one cut off, checked as wb_decode checks them.  Fewer bytes
 * than a map's header give an object without fields.
 */
int wb_decode_head(
    wb_obj **out, const void *buf, size_t len, const wb_limits *lim, char *err, size_t errlen);

#endif
