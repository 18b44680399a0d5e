/*
 * gw_tokens.c - session tokens checked at the gateway: the public keys,
 * the cache of verified tokens, and the revocation feed that keeps the
 * check honest (see gw_tokens.h).
 */
#include <errno.h>
#include <pthread.h>
#include <sodium.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gw_tokens.h"
#include "rt_log.h"
#include "wb_clock.h"
#include "wb_hash.h"
#include "wb_session.h"

#define GW_TOKENS_PAGE  1000 /* records per user.revocations call */
#define GW_TOKENS_KEYS  16   /* public keys held: the user service keeps at most as many */
#define GW_TOKENS_WAYS  4    /* verified tokens per set */
#define GW_TOKENS_LOCKS 256  /* lock stripes over the sets */
#define GW_TOKENS_CLOSED_POLL_MS \
	250 /* with no checks here, the feed is still pulled this often for closures */

/* An open-addressing table of u64 key -> (value, until); key 0 is empty. */
typedef struct gw_tokens_entry {
	uint64_t key, value, until_ms;
} gw_tokens_entry;

typedef struct gw_tokens_table {
	gw_tokens_entry *e;
	size_t           cap, n; /* cap a power of two, n <= cap / 2 */
} gw_tokens_table;

/* A public key of the user service's. */
typedef struct gw_tokens_key {
	uint16_t kid;
	uint8_t  pk[WB_SESSION_PK_LEN];
} gw_tokens_key;

/* A verified token: its characters and what they say (kid 0: empty). */
typedef struct gw_tokens_seen {
	char       tok[WB_SESSION_TOKEN_LEN];
	wb_session s;
	uint64_t   stamp; /* when put: the oldest of a set is replaced */
} gw_tokens_seen;

struct gw_tokens {
	rt_client           *user;
	int                  poll_ms, trust_ms;
	int                  pull_ms; /* the feed thread's period (poll_ms, or closures' alone) */
	gw_tokens_closed_fn  closed;  /* hears of deleted accounts */
	void                *closed_arg;
	pthread_rwlock_t     lock; /* the tables, the keys, last, trusted_until, full */
	gw_tokens_key        keys[GW_TOKENS_KEYS];
	size_t               nkeys;
	uint16_t             kid;   /* the current key, as the feed last said */
	bool                 stale; /* a token named a key not held: fetch the keys again */
	gw_tokens_table      ended; /* sid -> (uid, until) */
	gw_tokens_table      nb;    /* uid -> (not-before ms, until) */
	uint64_t             last;  /* last seq applied */
	uint64_t             trusted_until_ms; /* monotonic ms */
	bool                 full;             /* a table reached GW_TOKENS_REVOKED */
	pthread_mutex_t      pull_mu;          /* one pull at a time */
	pthread_mutex_t      mu;               /* closing, with cv */
	pthread_cond_t       cv;
	bool                 closing;
	pthread_t            thread;
	bool                 started;
	uint8_t              hkey[crypto_shorthash_KEYBYTES]; /* picks a token's set */
	atomic_uint_fast64_t stamp;
	pthread_mutex_t      seen_mu[GW_TOKENS_LOCKS];
	gw_tokens_seen      *seen; /* GW_TOKENS_CACHED */
};

static uint64_t
gw_tokens_mono_ms(void)
{
	return wb_mono_us() / 1000;
}

/* --- revocation tables ------------------------------------------------- */

static size_t
gw_tokens_slot(const gw_tokens_table *t, uint64_t key)
{
	size_t i = (size_t)wb_mix64(key) & (t->cap - 1);

	while (t->e[i].key != 0 && t->e[i].key != key) {
		i = (i + 1) & (t->cap - 1);
	}
	return i;
}

/* gw_tokens_find returns key's entry or NULL. */
static const gw_tokens_entry *
gw_tokens_find(const gw_tokens_table *t, uint64_t key)
{
	const gw_tokens_entry *e;

	if (t->cap == 0) {
		return NULL;
	}
	e = &t->e[gw_tokens_slot(t, key)];
	return e->key == key ? e : NULL;
}

/* gw_tokens_rebuild moves the live entries (until >= now) of t into a table of cap slots. */
static int
gw_tokens_rebuild(gw_tokens_table *t, size_t cap, uint64_t now_ms)
{
	gw_tokens_table nt = { calloc(cap, sizeof(gw_tokens_entry)), cap, 0 };

	if (nt.e == NULL) {
		return WB_ENOMEM;
	}
	for (size_t i = 0; i < t->cap; i++) {
		if (t->e[i].key != 0 && t->e[i].until_ms >= now_ms) {
			nt.e[gw_tokens_slot(&nt, t->e[i].key)] = t->e[i];
			nt.n++;
		}
	}
	free(t->e);
	*t = nt;
	return WB_OK;
}

/* gw_tokens_put sets key's entry (the newer feed record wins); WB_ETOOBIG when the table is full. */
static int
gw_tokens_put(gw_tokens_table *t, uint64_t key, uint64_t value, uint64_t until_ms)
{
	gw_tokens_entry *e;
	uint64_t         now = wb_now_ms();
	int              rc;

	if (until_ms < now) {
		return WB_OK; /* what it revokes has expired */
	}
	if (t->cap == 0 || (t->n + 1) * 2 > t->cap) {
		/* drop what expired first; grow only if that was not enough */
		size_t cap = t->cap ? t->cap : 1024;
		size_t live = 0;
		for (size_t i = 0; i < t->cap; i++) {
			live += t->e[i].key != 0 && t->e[i].until_ms >= now;
		}
		while ((live + 1) * 2 > cap) {
			cap *= 2;
		}
		if (live + 1 > GW_TOKENS_REVOKED) {
			return WB_ETOOBIG;
		}
		if ((rc = gw_tokens_rebuild(t, cap, now)) != WB_OK) {
			return rc;
		}
	}
	e = &t->e[gw_tokens_slot(t, key)];
	t->n += e->key == 0;
	*e = (gw_tokens_entry) { key, value, until_ms };
	return WB_OK;
}

/* gw_tokens_apply applies one revocation record (under the write lock). */
static void
gw_tokens_apply(gw_tokens *t, const wb_obj *ev)
{
	const char *type = wb_str(ev, WB_F_TYPE, "");
	uint64_t    uid = wb_u64(ev, WB_F_UID, 0), until = wb_u64(ev, WB_F_UNTIL, 0);
	int         rc = WB_OK;

	if (strcmp(type, "session") == 0 && wb_u64(ev, WB_F_ID, 0) != 0) {
		rc = gw_tokens_put(&t->ended, wb_u64(ev, WB_F_ID, 0), uid, until);
	} else if (strcmp(type, "all") == 0 && uid != 0) {
		rc = gw_tokens_put(&t->nb, uid, wb_u64(ev, WB_F_TIME, 0), until);
	}
	if (rc != WB_OK && !t->full) {
		t->full = true;
		RT_WARNF("session revocations: tables full (%u entries); every request now asks "
		         "the user service",
		    GW_TOKENS_REVOKED);
	}
}

/* --- public keys ------------------------------------------------------- */

/* gw_tokens_key_find returns the public key kid (the read or write lock held), or NULL. */
static const gw_tokens_key *
gw_tokens_key_find(const gw_tokens *t, uint16_t kid)
{
	for (size_t i = 0; i < t->nkeys; i++) {
		if (t->keys[i].kid == kid) {
			return &t->keys[i];
		}
	}
	return NULL;
}

/*
 * gw_tokens_fetch_keys replaces the keys held with the user service's
 * (user.session_keys): a key it no longer lists, retired or revoked, no
 * longer verifies anything here.
 */
static int
gw_tokens_fetch_keys(gw_tokens *t)
{
	wb_obj       *q = wb_request(WB_OP_USER_SESSION_KEYS), *r = NULL;
	const wb_obj *keys = NULL;
	gw_tokens_key got[GW_TOKENS_KEYS];
	size_t        n = 0;
	int           rc;

	if (q == NULL) {
		return WB_ENOMEM;
	}
	rc = rt_call(t->user, q, &r);
	wb_msg_free(q);
	if (rc == WB_OK && (!wb_get_objs(r, WB_F_KEYS, &keys, &n) || n > GW_TOKENS_KEYS)) {
		rc = WB_EBADMSG;
	}
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		const char *b64;
		size_t      len, bin = 0;
		uint64_t    kid = wb_u64(&keys[i], WB_F_KID, 0);
		if (kid == 0 || kid > UINT16_MAX || !wb_get_str(&keys[i], WB_F_KEY, &b64, &len) ||
		    sodium_base642bin(got[i].pk, sizeof(got[i].pk), b64, len, NULL, &bin, NULL,
		        sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
		    bin != WB_SESSION_PK_LEN) {
			rc = WB_EBADMSG;
		}
		got[i].kid = (uint16_t)kid;
	}
	if (rc == WB_OK) {
		pthread_rwlock_wrlock(&t->lock);
		memcpy(t->keys, got, n * sizeof(got[0]));
		t->nkeys = n;
		t->kid = (uint16_t)wb_u64(r, WB_F_KID, 0);
		t->stale = false;
		pthread_rwlock_unlock(&t->lock);
	}
	wb_msg_free(r);
	return rc;
}

/* --- the verified-token cache ------------------------------------------ */

/* gw_tokens_set returns the index of tok's first slot; *lock its lock stripe. */
static size_t
gw_tokens_set(gw_tokens *t, const char *tok, pthread_mutex_t **lock)
{
	uint8_t  h[crypto_shorthash_BYTES];
	uint64_t v;
	size_t   set;

	crypto_shorthash(h, (const unsigned char *)tok, WB_SESSION_TOKEN_LEN, t->hkey);
	memcpy(&v, h, sizeof(v));
	set = (size_t)(v % (GW_TOKENS_CACHED / GW_TOKENS_WAYS));
	*lock = &t->seen_mu[set % GW_TOKENS_LOCKS];
	return set * GW_TOKENS_WAYS;
}

/* gw_tokens_seen_get copies what tok says into *s if it was verified here before. */
static bool
gw_tokens_seen_get(gw_tokens *t, const char *tok, wb_session *s)
{
	pthread_mutex_t *mu;
	size_t           at = gw_tokens_set(t, tok, &mu);
	bool             hit = false;

	pthread_mutex_lock(mu);
	for (size_t i = at; i < at + GW_TOKENS_WAYS && !hit; i++) {
		if (t->seen[i].s.kid != 0 &&
		    memcmp(t->seen[i].tok, tok, WB_SESSION_TOKEN_LEN) == 0) {
			*s = t->seen[i].s;
			hit = true;
		}
	}
	pthread_mutex_unlock(mu);
	return hit;
}

/* gw_tokens_seen_put keeps verified tok in its set, in the slot put longest ago. */
static void
gw_tokens_seen_put(gw_tokens *t, const char *tok, const wb_session *s)
{
	pthread_mutex_t *mu;
	size_t           at = gw_tokens_set(t, tok, &mu), old = at;

	pthread_mutex_lock(mu);
	for (size_t i = at; i < at + GW_TOKENS_WAYS; i++) {
		if (t->seen[i].stamp < t->seen[old].stamp) {
			old = i;
		}
	}
	memcpy(t->seen[old].tok, tok, WB_SESSION_TOKEN_LEN);
	t->seen[old].s = *s;
	t->seen[old].stamp = atomic_fetch_add(&t->stamp, 1) + 1;
	pthread_mutex_unlock(mu);
}

/* --- the feed ---------------------------------------------------------- */

/* gw_tokens_reset forgets everything learned (the user service's store was replaced). */
static void
gw_tokens_reset(gw_tokens *t)
{
	free(t->ended.e);
	free(t->nb.e);
	memset(&t->ended, 0, sizeof(t->ended));
	memset(&t->nb, 0, sizeof(t->nb));
	t->last = 0;
	t->full = false;
	t->nkeys = 0;
	t->kid = 0;
	t->trusted_until_ms = 0;
}

/* gw_tokens_need_keys tells whether the keys must be fetched before trusting the feed. */
static bool
gw_tokens_need_keys(gw_tokens *t)
{
	bool need;

	pthread_rwlock_rdlock(&t->lock);
	need = t->nkeys == 0 || t->stale || gw_tokens_key_find(t, t->kid) == NULL;
	pthread_rwlock_unlock(&t->lock);
	return need;
}

int
gw_tokens_sync(gw_tokens *t)
{
	uint64_t asked = gw_tokens_mono_ms();
	int      rc = WB_OK;

	pthread_mutex_lock(&t->pull_mu);
	for (bool more = true; rc == WB_OK && more;) {
		wb_obj       *q = wb_request(WB_OP_USER_REVOCATIONS), *r = NULL;
		const wb_obj *ev = NULL;
		size_t        n = 0;
		if (q == NULL || wb_set_u64(q, WB_F_FROM, t->last + 1) != WB_OK ||
		    wb_set_u64(q, WB_F_LIMIT, GW_TOKENS_PAGE) != WB_OK) {
			wb_msg_free(q);
			rc = WB_ENOMEM;
			break;
		}
		rc = rt_call(t->user, q, &r);
		wb_msg_free(q);
		if (rc == WB_OK) {
			uint64_t last = wb_u64(r, WB_F_LAST, 0);
			wb_get_objs(r, WB_F_EVENTS, &ev, &n);
			pthread_rwlock_wrlock(&t->lock);
			if (last < t->last) {
				/* the feed went back: a new store, so new keys too */
				RT_WARNF("session revocations went back from seq %llu to %llu; "
				         "starting over",
				    (unsigned long long)t->last, (unsigned long long)last);
				gw_tokens_reset(t);
				more = false;
				rc = WB_EUNAVAIL;
			} else {
				for (size_t i = 0; i < n; i++) {
					gw_tokens_apply(t, &ev[i]);
					t->last = wb_u64(&ev[i], WB_F_SEQ, t->last);
				}
				/* the current key, as of this reply: a change is fetched below */
				t->kid = (uint16_t)wb_u64(r, WB_F_KID, t->kid);
				/* records past their TTL are gone: nothing left below last */
				more = n == GW_TOKENS_PAGE;
				if (!more) {
					t->last = last;
				}
			}
			pthread_rwlock_unlock(&t->lock);
			/* deleted accounts, told once their sessions have ended here */
			for (size_t i = 0; rc == WB_OK && t->closed != NULL && i < n; i++) {
				uint64_t uid = wb_u64(&ev[i], WB_F_UID, 0);
				if (strcmp(wb_str(&ev[i], WB_F_TYPE, ""), "closed") == 0 &&
				    uid != 0) {
					t->closed(t->closed_arg, uid);
				}
			}
		}
		wb_msg_free(r);
	}
	/* keys fetched after the pull, so a rotation the pull saw is in them */
	if (rc == WB_OK && gw_tokens_need_keys(t)) {
		rc = gw_tokens_fetch_keys(t);
	}
	if (rc == WB_OK) {
		pthread_rwlock_wrlock(&t->lock);
		t->trusted_until_ms = asked + (uint64_t)t->trust_ms;
		pthread_rwlock_unlock(&t->lock);
	}
	pthread_mutex_unlock(&t->pull_mu);
	return rc;
}

static void *
gw_tokens_main(void *arg)
{
	gw_tokens *t = arg;
	int        last_rc = WB_OK;

	pthread_mutex_lock(&t->mu);
	while (!t->closing) {
		pthread_mutex_unlock(&t->mu);
		int rc = gw_tokens_sync(t);
		if (rc != WB_OK && rc != last_rc) {
			RT_WARNF("session revocations: %s; requests ask the user service until the "
			         "feed answers",
			    wb_strerror(rc));
		} else if (rc == WB_OK && last_rc != WB_OK) {
			RT_INFOF("session revocations: following the feed again");
		}
		last_rc = rc;
		pthread_mutex_lock(&t->mu);
		if (!t->closing) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_nsec += (long)(t->pull_ms % 1000) * 1000000L;
			ts.tv_sec += t->pull_ms / 1000 + ts.tv_nsec / 1000000000L;
			ts.tv_nsec %= 1000000000L;
			while (!t->closing &&
			       pthread_cond_timedwait(&t->cv, &t->mu, &ts) != ETIMEDOUT) {
			}
		}
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

int
gw_tokens_open(gw_tokens **out, rt_client *user, int poll_ms, int trust_ms,
    gw_tokens_closed_fn closed, void *closed_arg)
{
	gw_tokens         *t;
	pthread_condattr_t ca;

	*out = NULL;
	if (poll_ms < 0 || trust_ms < poll_ms) {
		return WB_EINVAL;
	}
	if (sodium_init() < 0) {
		return WB_EINTERNAL;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		return WB_ENOMEM;
	}
	if ((t->seen = calloc(GW_TOKENS_CACHED, sizeof(gw_tokens_seen))) == NULL) {
		free(t);
		return WB_ENOMEM;
	}
	t->user = user;
	t->poll_ms = poll_ms;
	/* no checks here (poll_ms 0): the feed is still followed for deleted accounts */
	t->pull_ms = poll_ms > 0 ? poll_ms : GW_TOKENS_CLOSED_POLL_MS;
	t->trust_ms = trust_ms;
	t->closed = closed;
	t->closed_arg = closed_arg;
	randombytes_buf(t->hkey, sizeof(t->hkey));
	atomic_init(&t->stamp, 0);
	for (size_t i = 0; i < GW_TOKENS_LOCKS; i++) {
		pthread_mutex_init(&t->seen_mu[i], NULL);
	}
	pthread_rwlock_init(&t->lock, NULL);
	pthread_mutex_init(&t->pull_mu, NULL);
	pthread_mutex_init(&t->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (poll_ms > 0 || closed != NULL) {
		if (pthread_create(&t->thread, NULL, gw_tokens_main, t) != 0) {
			gw_tokens_close(t);
			return WB_ENOMEM;
		}
		t->started = true;
	}
	*out = t;
	return WB_OK;
}

void
gw_tokens_close(gw_tokens *t)
{
	if (t == NULL) {
		return;
	}
	pthread_mutex_lock(&t->mu);
	t->closing = true;
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);
	if (t->started) {
		pthread_join(t->thread, NULL);
	}
	gw_tokens_reset(t);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	pthread_mutex_destroy(&t->pull_mu);
	pthread_rwlock_destroy(&t->lock);
	for (size_t i = 0; i < GW_TOKENS_LOCKS; i++) {
		pthread_mutex_destroy(&t->seen_mu[i]);
	}
	free(t->seen);
	free(t);
}

/* --- the check --------------------------------------------------------- */

/*
 * gw_tokens_verify checks tok's signature with the key it names (the
 * cache answers for a token verified before); GW_TOKEN_OK with *s, BAD,
 * or ASK for a key not held (it is fetched with the next pull).
 */
static gw_token_verdict
gw_tokens_verify(gw_tokens *t, const char *tok, size_t len, wb_session *s)
{
	const gw_tokens_key *k;
	uint8_t              pk[WB_SESSION_PK_LEN];

	if (wb_session_parse(s, tok, len) != WB_OK || s->kid == 0) {
		return GW_TOKEN_BAD;
	}
	if (gw_tokens_seen_get(t, tok, s)) {
		return GW_TOKEN_OK;
	}
	pthread_rwlock_rdlock(&t->lock);
	if ((k = gw_tokens_key_find(t, s->kid)) != NULL) {
		memcpy(pk, k->pk, sizeof(pk));
	}
	pthread_rwlock_unlock(&t->lock);
	if (k == NULL) {
		pthread_rwlock_wrlock(&t->lock);
		t->stale = true;
		pthread_rwlock_unlock(&t->lock);
		return GW_TOKEN_ASK;
	}
	if (wb_session_verify(s, tok, len, pk, 0) != WB_OK) {
		return GW_TOKEN_BAD; /* forged: a held key's signature does not match */
	}
	gw_tokens_seen_put(t, tok, s);
	return GW_TOKEN_OK;
}

gw_token_verdict
gw_tokens_check(gw_tokens *t, const char *tok, size_t len, uint64_t *uid)
{
	gw_token_verdict       v;
	const gw_tokens_entry *e;
	wb_session             s;

	if (t->poll_ms == 0) {
		return GW_TOKEN_ASK;
	}
	if ((v = gw_tokens_verify(t, tok, len, &s)) != GW_TOKEN_OK) {
		return v;
	}
	if (s.expires_ms <= wb_now_ms()) {
		return GW_TOKEN_BAD;
	}
	pthread_rwlock_rdlock(&t->lock);
	if (t->full || gw_tokens_mono_ms() >= t->trusted_until_ms) {
		v = GW_TOKEN_ASK;
	} else if (gw_tokens_key_find(t, s.kid) == NULL) {
		v = GW_TOKEN_BAD; /* its key was revoked since it was verified */
	} else if (gw_tokens_find(&t->ended, s.sid) != NULL ||
	           ((e = gw_tokens_find(&t->nb, s.uid)) != NULL &&
	               wb_session_began(s.sid) < e->value)) {
		v = GW_TOKEN_BAD;
	} else {
		*uid = s.uid;
	}
	pthread_rwlock_unlock(&t->lock);
	return v;
}

uint64_t
gw_tokens_revoked(void *arg)
{
	gw_tokens *t = arg;
	uint64_t   n;

	pthread_rwlock_rdlock(&t->lock);
	n = t->ended.n + t->nb.n;
	pthread_rwlock_unlock(&t->lock);
	return n;
}
