/*
 * user.c - the user service's state, its route table and its gauges (the
 * shared lookups are user_store.c).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_log.h"
#include "user_schema.h"
#include "user_int.h"

/* user_meta_load reads the last allocated uid (0 on a fresh table). */
static int
user_meta_load(user_svc *u)
{
	hb_cell *c;
	int      rc;

	rc = hb_get(u->t, USER_FAM_META, USER_META_UID, strlen(USER_META_UID), NULL, 0, &c);
	if (rc == WB_ENOTFOUND) {
		u->last_uid = 0;
		return WB_OK;
	}
	if (rc != WB_OK) {
		return rc;
	}
	if (c->value_len != 8) {
		hb_cell_free(c);
		return WB_ECORRUPT;
	}
	u->last_uid = hb_be_u64(c->value);
	hb_cell_free(c);
	return WB_OK;
}

/* user_svc_open creates the service over an open table. */
int
user_svc_open(user_svc **out, hb_table *t, evlog *log, const user_svc_opts *opts)
{
	user_svc          *u;
	uint8_t            pw[32];
	pthread_condattr_t ca;
	int                rc;

	if (sodium_init() < 0) {
		return WB_EINTERNAL;
	}
	if ((u = calloc(1, sizeof(*u))) == NULL) {
		return WB_ENOMEM;
	}
	u->t = t;
	u->log = log;
	u->opts = *opts;
	pthread_mutex_init(&u->alloc_mu, NULL);
	pthread_mutex_init(&u->rev_mu, NULL);
	pthread_rwlock_init(&u->keys_lock, NULL);
	pthread_mutex_init(&u->erase_mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&u->erase_cv, &ca);
	pthread_condattr_destroy(&ca);
	if (u->opts.session_ttl_ms == 0) {
		u->opts.session_ttl_ms = 7 * 86400 * UINT64_C(1000);
	}
	if (u->opts.login_wait_max_ms == 0) {
		u->opts.login_wait_max_ms = 900000;
	}
	if ((rc = user_limit_open(u)) != WB_OK) {
		user_svc_close(u);
		return rc;
	}
	if ((rc = user_meta_load(u)) != WB_OK) {
		RT_ERRORF("cannot read the uid counter: %s", wb_strerror(rc));
		user_svc_close(u);
		return rc;
	}
	if ((rc = user_session_load(u)) != WB_OK || (rc = user_keys_load(u)) != WB_OK) {
		RT_ERRORF("cannot read or store the session keys: %s", wb_strerror(rc));
		user_svc_close(u);
		return rc;
	}
	if ((rc = user_hold_load(u)) != WB_OK) {
		RT_ERRORF("cannot read or store the name hold's key: %s", wb_strerror(rc));
		user_svc_close(u);
		return rc;
	}
	randombytes_buf(pw, sizeof(pw));
	if (crypto_pwhash_str(u->dummy_hash, (const char *)pw, sizeof(pw), u->opts.pwhash_ops,
	        u->opts.pwhash_mem) != 0) {
		RT_ERRORF("password hashing failed (memory limit %zu bytes)", u->opts.pwhash_mem);
		user_svc_close(u);
		return WB_ENOMEM;
	}
	*out = u;
	return WB_OK;
}

static uint64_t
user_gauge_users(void *arg)
{
	user_svc *u = arg;
	uint64_t  n;

	pthread_mutex_lock(&u->alloc_mu);
	n = u->last_uid;
	pthread_mutex_unlock(&u->alloc_mu);
	return n;
}

/* user_routes: the service's operations (the user service is one shard: no owners). */
const rt_route user_routes[] = {
	{ WB_OP_USER_REGISTER, user_handle_register, 0, RT_ROUTE_SLOW, RT_PEER_GATEWAY },
	{ WB_OP_USER_LOGIN, user_handle_login, 0, RT_ROUTE_SLOW, RT_PEER_GATEWAY },
	{ WB_OP_USER_LOGOUT, user_handle_logout, 0, 0, RT_PEER_GATEWAY },
	{ WB_OP_USER_AUTH, user_handle_auth, 0, 0, RT_PEER_GATEWAY },
	{ WB_OP_USER_GET, user_handle_get, 0, 0, RT_PEER_GATEWAY | RT_PEER_RELATION },
	{ WB_OP_USER_LOOKUP, user_handle_lookup, 0, 0, RT_PEER_GATEWAY },
	{ WB_OP_USER_UPDATE, user_handle_update, 0, 0, RT_PEER_GATEWAY },
	{ WB_OP_USER_REGISTER_MANY, user_handle_register_many, 0, RT_ROUTE_SLOW, 0 },
	{ WB_OP_USER_LOGOUT_ALL, user_handle_logout_all, 0, 0, RT_PEER_GATEWAY },
	{ WB_OP_USER_PASSWORD, user_handle_password, 0, RT_ROUTE_SLOW, RT_PEER_GATEWAY },
	{ WB_OP_USER_SESSION_KEYS, user_handle_session_keys, 0, 0, RT_PEER_GATEWAY },
	{ WB_OP_USER_ROTATE_KEY, user_handle_rotate_key, 0, 0, 0 },
	{ WB_OP_USER_REVOCATIONS, user_handle_revocations, 0, 0, RT_PEER_GATEWAY },
	{ WB_OP_USER_DELETE, user_handle_delete, 0, RT_ROUTE_SLOW, RT_PEER_GATEWAY },
	{ WB_OP_USER_DELETE_NAME, user_handle_delete_name, 0, 0, 0 },
	{ WB_OP_USER_LOG, user_handle_log, 0, 0,
	    RT_PEER_RELATION | RT_PEER_CONTENT | RT_PEER_INBOX },
	{ WB_OP_NONE },
};

static uint64_t
user_gauge_last_seq(void *arg)
{
	user_svc *u = arg;

	return evlog_last(u->log);
}

static uint64_t
user_gauge_swept(void *arg)
{
	user_svc *u = arg;

	return __atomic_load_n(&u->swept, __ATOMIC_RELAXED);
}

/* user_svc_gauges adds the service's figures to a server's stats: users, the last deletion's seq,
 * and the last one whose sessions are erased. */
int
user_svc_gauges(user_svc *u, rt_server *s)
{
	int rc = rt_server_gauge(s, "users", user_gauge_users, u);

	if (rc == WB_OK) {
		rc = rt_server_gauge(s, "log_last_seq", user_gauge_last_seq, u);
	}
	return rc == WB_OK ? rt_server_gauge(s, "sessions_swept_seq", user_gauge_swept, u) : rc;
}

int
user_svc_start(user_svc *u)
{
	return user_erase_start(u);
}

/* user_svc_close frees the service; NULL is ignored. */
void
user_svc_close(user_svc *u)
{
	if (u == NULL) {
		return;
	}
	user_erase_stop(u);
	pthread_mutex_destroy(&u->erase_mu);
	pthread_cond_destroy(&u->erase_cv);
	pthread_mutex_destroy(&u->alloc_mu);
	pthread_mutex_destroy(&u->rev_mu);
	pthread_rwlock_destroy(&u->keys_lock);
	user_keys_wipe(u);
	user_limit_close(u);
	sodium_memzero(u->dummy_hash, sizeof(u->dummy_hash));
	free(u);
}
