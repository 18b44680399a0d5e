/*
 * warble_int.h - libwarble's internals shared by its files: the client,
 * the call helper and the record conversions.  Not installed.
 */
#ifndef WARBLE_INT_H
#define WARBLE_INT_H

#include <pthread.h>

#include "rt_sp.h"
#include "warble.h"
#include "wb_proto.h"

#define WARBLE_MSG_MAX 512 /* longest error message kept */

struct warble_client {
	rt_sp          *sp;    /* blocking calls on the caller's thread */
	pthread_mutex_t mtx;   /* guards token, msg and retry_ms */
	char           *token; /* current session, or NULL */
	char            msg[WARBLE_MSG_MAX];
	uint64_t        retry_ms; /* of the last failed call: RATE_LIMITED's wait, else 0 */
};

/* The token a call sends: none, if the client has one, or mandatory. */
typedef enum warble_auth {
	WARBLE_AUTH_NONE,
	WARBLE_AUTH_OPTIONAL,
	WARBLE_AUTH_REQUIRED,
} warble_auth;

/* Every function below is the library's own: hidden from its exports
 * (the version script exports warble_*, and none of these is API). */
#pragma GCC visibility push(hidden)

/* warble_call sends req (always consumed) with the token as auth says; WARBLE_OK gives the reply in *rep. */
int warble_call(warble_client *c, wb_obj *req, warble_auth auth, wb_obj **rep);

/* warble_fail records msg as c's last error message and returns code. */
int warble_fail(warble_client *c, int code, const char *msg);

/* warble_user_from fills u from a user record (strings copied); WARBLE_ENOMEM on failure. */
int warble_user_from(warble_user_t *u, const wb_obj *o);

/* warble_post_from builds one post from a reply that is a post record (WARBLE_EBADMSG without an id). */
int warble_post_from(warble_post_t **out, const wb_obj *rep);

/* warble_posts_from builds a page from a reply's POSTS and NEXT. */
int warble_posts_from(warble_posts_t **out, const wb_obj *rep);

/* warble_users_from builds a page from a reply's USERS and NEXT. */
int warble_users_from(warble_users_t **out, const wb_obj *rep);

/*
 * warble_media_from builds a media record from an upload's or a media
 * reply (with_data: DATA is required, copied, and must match SIZE);
 * WARBLE_EBADMSG for a reply that lacks them.
 */
int warble_media_from(warble_media_t **out, const wb_obj *rep, bool with_data);

#pragma GCC visibility pop

#endif
