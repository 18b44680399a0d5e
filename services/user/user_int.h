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
#include "user_schema.h"
#include "wb_session.h"
#include "wb_proto.h"

#define USER_KEYS_MAX 16 /* signing keys kept at once: the current one and those retired */

/* A key that signs session tokens (user_keys.c). */
typedef struct user_key {
	uint16_t kid;
	uint8_t  pk[WB_SESSION_PK_LEN];
	uint8_t  sk[WB_SESSION_SK_LEN];
	uint64_t retired_ms; /* when a rotation retired it; 0 for the current key */
} user_key;

struct user_svc {
	hb_table        *t;
	evlog           *log; /* the deletions (user_delete.c) */
	user_svc_opts    opts;
	pthread_mutex_t  alloc_mu;   /* serializes uid allocation, name claims, and every write
	                            * to an account that must not outlive its deletion */
	uint64_t         last_uid;   /* under alloc_mu */
	rt_rate         *limit_pair; /* failed password checks per account and address */
	rt_rate         *limit_addr; /* ... per address */
	rt_rate         *limit_acct; /* ... per account */
	rt_rate         *limit_reg;  /* registrations per address */
	pthread_rwlock_t keys_lock;  /* keys, nkeys */
	user_key         keys[USER_KEYS_MAX]; /* the keys that sign and verify tokens */
	size_t           nkeys;
	pthread_mutex_t  rev_mu;  /* orders revocation records: seq order = commit order */
	uint64_t         rev_seq; /* last revocation seq, under rev_mu */
	/* A hash of a random password, verified when the name is unknown so
	 * that a wrong name costs as much time as a wrong password. */
	char    dummy_hash[crypto_pwhash_STRBYTES];
	uint8_t hold_key[USER_HOLD_KEY]; /* the key of the hold family's name hash */

	/* the erasure of deleted accounts' sessions (user_erase.c) */
	pthread_mutex_t erase_mu; /* erase_stop, erase_due, with erase_cv */
	pthread_cond_t  erase_cv;
	bool            erase_stop, erase_due, erase_running;
	pthread_t       erase_thread;
	uint64_t        swept; /* the last log seq whose sessions are deleted (atomic) */
};

/* user_limit_open makes the limiters of password checks and registrations (user_limit.c). */
int user_limit_open(user_svc *u);

/* user_limit_close frees them. */
void user_limit_close(user_svc *u);

/*
 * user_limit_check tells whether a password check (what: "login",
 * "password change") of account uid (0 for an unknown name) named name,
 * from client address addr (NULL or "": unknown), may go ahead: WB_OK, or
 * WB_ERATE with rep filled (retry_ms) and the refusal logged.
 */
int user_limit_check(
    user_svc *u, const char *what, uint64_t uid, const char *name, const char *addr, wb_obj *rep);

/* user_limit_done counts the outcome of a check user_limit_check let through. */
void user_limit_done(
    user_svc *u, const char *what, uint64_t uid, const char *name, const char *addr, bool ok);

/* user_limit_register counts a registration from addr: WB_OK, or WB_ERATE with rep filled. */
int user_limit_register(user_svc *u, const char *addr, wb_obj *rep);

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

/* user_session_load reads the last revocation seq. */
int user_session_load(user_svc *u);

/* user_keys_load reads the signing keys, drops those past their overlap, and makes the first on a fresh store. */
int user_keys_load(user_svc *u);

/* user_keys_sign signs s with the current key (setting s->kid) into token (WB_SESSION_TOKEN_LEN + 1 bytes). */
int user_keys_sign(user_svc *u, wb_session *s, char *token);

/* user_keys_verify checks tok's signature with the key it names, which must still be in use, and its expiry; fills *s; WB_EAUTH if not. */
int user_keys_verify(user_svc *u, wb_session *s, const char *tok, size_t len);

/* user_keys_current_id returns the current key's id. */
uint16_t user_keys_current_id(user_svc *u);

/* user_keys_wipe erases every key from memory (at close). */
void user_keys_wipe(user_svc *u);

/* user_record_load fills rec with a user's public record; WB_ENOTFOUND if no such user. */
int user_record_load(user_svc *u, uint64_t uid, wb_obj *rec);

/* user_account_live tells whether uid's account exists (WB_OK; WB_ENOUSER if not): a write to an
 * account checks it under alloc_mu, so that nothing of a deleted account is written again. */
int user_account_live(user_svc *u, uint64_t uid);

/* user_name_free tells whether lowercased name may be registered: WB_OK, WB_EEXIST if an account
 * has it or it is held after a deletion (user_delete.c); call under alloc_mu. */
int user_name_free(user_svc *u, const char *name);

/* user_revoke_put adds the revocation record seq (kind, uid, sid, time, until) to b, and the
 * last seq to meta; the caller holds rev_mu and raises rev_seq once b is written. */
int user_revoke_put(user_svc *u, hb_batch *b, uint64_t seq, int kind, uint64_t uid, uint64_t sid,
    uint64_t time_ms, uint64_t until_ms);

/* user_hold_load reads the hold key, making it on a fresh store (user_delete.c). */
int user_hold_load(user_svc *u);

/* user_erase_kick wakes the erasure of sessions after a deletion (user_erase.c). */
void user_erase_kick(user_svc *u);

/* user_erase_stop stops it and waits for its thread (at close). */
void user_erase_stop(user_svc *u);

/* user_erase_start starts its thread, which first catches up with the log. */
int user_erase_start(user_svc *u);

/* user_session_nb_next gives the moment that voids every session of uid begun so far (after now
 * and after the last such moment). */
int user_session_nb_next(user_svc *u, uint64_t uid, uint64_t *nb);

/* Handlers (rt_handler_fn), by job. */
int user_handle_register(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_login(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_logout(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_auth(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_logout_all(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_password(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_session_keys(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_rotate_key(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_revocations(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_get(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_lookup(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_update(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_register_many(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_delete(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_delete_name(void *arg, const wb_obj *req, wb_obj *rep);
int user_handle_log(void *arg, const wb_obj *req, wb_obj *rep);

#endif
