/*
 * user.h - the user service: accounts, password logins and sessions.
 *
 *   user.register {name, password, addr?} -> {uid} (RATE_LIMITED past
 *                                           register_per_hour from addr)
 *   user.login    {name, password, addr?} -> {uid, token} (RATE_LIMITED with
 *                                           retry_ms after failed checks:
 *                                           user_limit.c)
 *   user.logout   {token}               -> {}
 *   user.logout_all {token}             -> {} (every session of the user ends)
 *   user.password {token, password, new_password, addr?}
 *                                       -> {uid, token} (every other session ends)
 *   user.auth     {token}               -> {uid}
 *   user.session_keys {}                -> {kid, keys} (public keys that check tokens)
 *   user.rotate_key {revoke?}           -> {kid} (a new signing key; admin)
 *   user.revocations {from, limit?}     -> {events, last} (sessions ended, by seq)
 *   user.get      {uids}                -> {users, missing}
 *   user.lookup   {name}                -> {uid, users}
 *   user.update   {uid, display?, bio?} -> {}
 *   user.delete   {token, password, addr?} -> {uid} (the account closes: user_delete.c;
 *                                           RATE_LIMITED as user.login)
 *   user.delete_name {name}             -> {uid} (the same, by name; admin)
 *   user.log      {from, limit?}        -> {events, last} (the deletions, by seq)
 */
#ifndef USER_SVC_H
#define USER_SVC_H

#include <stddef.h>
#include <stdint.h>

#include "evlog.h"
#include "hb.h"
#include "rt_daemon.h"
#include "rt_server.h"

#define USER_GET_MAX 1000 /* most uids one user.get takes */

typedef struct user_svc user_svc;

typedef struct user_svc_opts {
	uint64_t pwhash_ops;          /* argon2id passes (crypto_pwhash opslimit) */
	size_t   pwhash_mem;          /* argon2id memory in bytes (memlimit) */
	unsigned login_fails;         /* failed password checks of an account from one address
	                               * before waits begin (0: no limit; user_limit.c) */
	unsigned login_addr_fails;    /* ... from one address over every account (0: no limit) */
	unsigned login_account_fails; /* ... of one account over every address (0: no limit) */
	uint64_t login_wait_max_ms;   /* the longest wait */
	unsigned register_per_hour;   /* registrations from one address an hour (0: no limit) */
	uint64_t session_ttl_ms;      /* session lifetime (the session family's TTL) */
	uint64_t name_hold_ms;        /* a deleted account's name is held this long (0: not) */
} user_svc_opts;

/* user_svc_open creates the service over an open table (families from user_schema) and its
 * event log. */
int user_svc_open(user_svc **out, hb_table *t, evlog *log, const user_svc_opts *opts);

/* user_svc_start starts what runs beside the handlers: the erasure of deleted accounts'
 * sessions (user_erase.c). */
int user_svc_start(user_svc *u);

/* user_routes is the service's route table (handlers take the user_svc). */
extern const rt_route user_routes[];

/* user_svc_gauges adds the service's figures to a server's stats. */
int user_svc_gauges(user_svc *u, rt_server *s);

/* user_svc_close frees the service (after its server is closed); NULL is ignored. */
void user_svc_close(user_svc *u);

/* user_service describes warble-user to rt_daemon_main (user_daemon.c). */
extern const rt_service user_service;

#endif
