/*
 * user_int.h - the user service's state and helpers shared by its handler
 * files (user_account.c, user_profile.c).  Not for other modules.
 */
#ifndef USER_INT_H
#define USER_INT_H

#include <pthread.h>
#include <sodium.h>

#include "hb.h"
#include "rt_rate.h"
#include "user.h"
#include "wb_session.h"
#include "wb_proto.h"

struct user_svc {
	hb_table       *t;
	user_svc_opts   opts;
	pthread_mutex_t alloc_mu; /* serializes uid allocation and name claims */
	uint64_t        last_uid; /* under alloc_mu */
	rt_rate        *rate;     /* failed logins per username */
	uint8_t         session_key[WB_SESSION_KEY_LEN]; /* MAC key of signed tokens */
	pthread_mutex_t rev_mu;  /* orders revocation records: seq order = commit order */
	uint64_t        rev_seq; /* last revocation seq, under rev_mu */
	/* A hash of a random password, verified when the name is unknown so
	 * that a wrong name costs as much time as a wrong password. */
	char dummy_hash[crypto_pwhash_STRBYTES];
};

/* user_fail fills rep with an error (msg NULL: the code's message) and returns code. */
int user_fail(wb_obj *rep, int code, const char *msg);

/* user_name_uid looks up a lowercased username's uid (WB_ENOTFOUND if none). */
int user_name_uid(user_svc *u, const char *name, uint64_t *uid);

/* user_account_put adds one account's info cells and name claim to b (not the uid counter). */
int user_account_put(user_svc *u, hb_batch *b, uint64_t uid, const char *name, const char *hash,
    const uint8_t created[8]);

/* user_account_commit adds the uid counter (uid, the last one assigned) to b
 * and writes b; on success last_uid becomes uid.  Called under alloc_mu. */
int user_account_commit(user_svc *u, hb_batch *b, uint64_t uid);

/* user_password_verify checks pw against uid's stored hash (WB_ELOGIN if wrong). */
int user_password_verify(user_svc *u, uint64_t uid, const char *pw, size_t pw_len);

/* user_session_new stores a session of uid begun at now_ms and writes its signed token into token (WB_SESSION_TOKEN_LEN + 1 bytes). */
int user_session_new(user_svc *u, uint64_t uid, uint64_t now_ms, char *token);

/* user_session_keys loads the session MAC key (drawing and storing one on first start) and the last revocation seq. */
int user_session_keys(user_svc *u);

/* user_record_load fills rec with a user's public record; WB_ENOTFOUND if no such user. */
int user_record_load(user_svc *u, uint64_t uid, wb_obj *rec);

/* Handlers (rt_handler_fn), by job. */
int user_handle_register(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_login(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_logout(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_auth(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_logout_all(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_password(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_session_key(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_revocations(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_get(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_lookup(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_update(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_register_many(void *arg, const wb_obj *req, wb_obj *rep);

#endif
