/*
 * wb_services.h - the one table of Warble's endpoints and event types.
 *
 * Every daemon takes its own listen address and its peers' from
 * wb_endpoints: the option name, the environment variable and the
 * default URL are written here once.  `warble-NAME --print-defaults`
 * prints them, and deploy/warble-local and tests/deploy read that output
 * instead of repeating the ports.  The _URLS rows list a sharded
 * service's shards in shard order (shared/rt/rt_shards.h); empty, they
 * mean the one address of its _URL row.  The event types are the records
 * of the relation and content logs that the inbox applies, and of the
 * user log that relation, content and the inbox apply: "erase" {uid}, a
 * deleted account whose data each erases; "erased" {uid}, in a relation
 * or content shard's log, says that shard holds none of it any more and
 * logs nothing more of it (docs/architecture.md, "Deleting an account").
 */
#ifndef WB_SERVICES_H
#define WB_SERVICES_H

#include <stddef.h>

/*   enum            option               environment variable        default */
/* clang-format off */
#define WB_ENDPOINTS(X)                                                                    \
	X(GATEWAY,      "gateway-url",      "WARBLE_GATEWAY_URL",      "tcp://127.0.0.1:7100") \
	X(HTTP,         "http-url",         "WARBLE_HTTP_URL",         "http://127.0.0.1:8080") \
	X(USER,         "user-url",         "WARBLE_USER_URL",         "tcp://127.0.0.1:7101") \
	X(RELATION,     "relation-url",     "WARBLE_RELATION_URL",     "tcp://127.0.0.1:7102") \
	X(CONTENT,      "content-url",      "WARBLE_CONTENT_URL",      "tcp://127.0.0.1:7103") \
	X(INBOX,        "inbox-url",        "WARBLE_INBOX_URL",        "tcp://127.0.0.1:7104") \
	X(RELATION_PUB, "relation-pub-url", "WARBLE_RELATION_PUB_URL", "tcp://127.0.0.1:7112") \
	X(CONTENT_PUB,  "content-pub-url",  "WARBLE_CONTENT_PUB_URL",  "tcp://127.0.0.1:7113") \
	X(RELATION_URLS,     "relation-urls",     "WARBLE_RELATION_URLS",     "")             \
	X(CONTENT_URLS,      "content-urls",      "WARBLE_CONTENT_URLS",      "")             \
	X(INBOX_URLS,        "inbox-urls",        "WARBLE_INBOX_URLS",        "")             \
	X(RELATION_PUB_URLS, "relation-pub-urls", "WARBLE_RELATION_PUB_URLS", "")             \
	X(CONTENT_PUB_URLS,  "content-pub-urls",  "WARBLE_CONTENT_PUB_URLS",  "")             \
	X(USER_PUB,          "user-pub-url",      "WARBLE_USER_PUB_URL",      "tcp://127.0.0.1:7111")

/*   enum      name        its address    its shards' addresses (none: USER, one) */
#define WB_SERVICES(X)                                  \
	X(USER,     "user",     USER,     USER)          \
	X(RELATION, "relation", RELATION, RELATION_URLS) \
	X(CONTENT,  "content",  CONTENT,  CONTENT_URLS)  \
	X(INBOX,    "inbox",    INBOX,    INBOX_URLS)

/*   enum      wire name   log */
#define WB_EVENTS(X)                   \
	X(POST,     "post",     content)  \
	X(DELETE,   "delete",   content)  \
	X(FOLLOW,   "follow",   relation) \
	X(UNFOLLOW, "unfollow", relation) \
	X(ERASE,    "erase",    user)     \
	X(ERASED,   "erased",   relation | content)
/* clang-format on */

typedef enum wb_endpoint {
#define WB_EP_ENUM(e, flag, env, url) WB_EP_##e,
	WB_ENDPOINTS(WB_EP_ENUM)
#undef WB_EP_ENUM
	    WB_EP_COUNT
} wb_endpoint;

/* The services behind the gateway, each with a store. */
typedef enum wb_service {
#define WB_SVC_ENUM(e, name, ep, list) WB_SVC_##e,
	WB_SERVICES(WB_SVC_ENUM)
#undef WB_SVC_ENUM
	    WB_SVC_COUNT
} wb_service;

typedef struct wb_service_info {
	const char *name; /* "relation": its log, its folder DATA/<name>, metrics' label */
	wb_endpoint ep;   /* its one address (WARBLE_RELATION_URL) */
	wb_endpoint list; /* its shards' addresses (WARBLE_RELATION_URLS; ep itself: not sharded) */
} wb_service_info;

extern const wb_service_info wb_services[WB_SVC_COUNT];

typedef struct wb_endpoint_info {
	const char *flag; /* the daemons' option, without "--" */
	const char *env;  /* the environment variable */
	const char *url;  /* the default */
} wb_endpoint_info;

extern const wb_endpoint_info wb_endpoints[WB_EP_COUNT];

typedef enum wb_event {
	WB_EV_NONE = 0, /* a type this build does not know */
#define WB_EV_ENUM(e, name, log) WB_EV_##e,
	WB_EVENTS(WB_EV_ENUM)
#undef WB_EV_ENUM
	    WB_EV_COUNT
} wb_event;

/* wb_event_name returns an event type's wire name ("?" for WB_EV_NONE). */
const char *wb_event_name(wb_event ev);

/* wb_event_lookup maps a wire name to an event type, or WB_EV_NONE. */
wb_event wb_event_lookup(const char *name, size_t len);

#endif
