/*
 * gw_sessions.c - signed session tokens checked at the gateway, and the
 * revocation feed that keeps that check honest (see gw_sessions.h).
 */
#include <errno.h>
#include <pthread.h>
#include <sodium.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wb_hash.h"
#include "gw_sessions.h"
#include "rt_log.h"
#include "wb_session.h"
#include "wb_clock.h"

#define GW_SESSIONS_PAGE 1000 /* records per user.revocations call */

/* An open-addressing table of u64 key -> (value, until); key 0 is empty. */
typedef struct gw_sessions_entry {
	uint64_t key, value, until_ms;
} gw_sessions_entry;

typedef struct gw_sessions_table {
	gw_sessions_entry *e;
	size_t             cap, n; /* cap a power of two, n <= cap / 2 */
} gw_sessions_table;

struct gw_sessions {
	rt_client        *user;
	int               poll_ms, trust_ms;
	pthread_rwlock_t  lock; /* the tables, the key, last, trusted_until, full */
	bool              have_key;
	uint8_t           key[WB_SESSION_KEY_LEN];
	gw_sessions_table ended;            /* sid -> (uid, until) */
	gw_sessions_table nb;               /* uid -> (not-before ms, until) */
	uint64_t          last;             /* last seq applied */
	uint64_t          trusted_until_ms; /* monotonic ms */
	bool              full;             /* a table reached GW_SESSIONS_MAX */
	pthread_mutex_t   pull_mu;          /* one pull at a time */
	pthread_mutex_t   mu;               /* closing, with cv */
	pthread_cond_t    cv;
	bool              closing;
	pthread_t         thread;
	bool              started;
};

static uint64_t
gw_sessions_mono_ms(void)
{
	return wb_mono_us() / 1000;
}

static size_t
gw_sessions_slot(const gw_sessions_table *t, uint64_t key)
{
	size_t i = (size_t)wb_mix64(key) & (t->cap - 1);

	while (t->e[i].key != 0 && t->e[i].key != key) {
		i = (i + 1) & (t->cap - 1);
	}
	return i;
}

/* gw_sessions_find returns key's entry or NULL. */
static const gw_sessions_entry *
gw_sessions_find(const gw_sessions_table *t, uint64_t key)
{
	const gw_sessions_entry *e;

	if (t->cap == 0) {
		return NULL;
	}
	e = &t->e[gw_sessions_slot(t, key)];
	return e->key == key ? e : NULL;
}

/* gw_sessions_rebuild moves the live entries (until >= now) of t into a table of cap slots. */
static int
gw_sessions_rebuild(gw_sessions_table *t, size_t cap, uint64_t now_ms)
{
	gw_sessions_table nt = { calloc(cap, sizeof(gw_sessions_entry)), cap, 0 };

	if (nt.e == NULL) {
		return WB_ENOMEM;
	}
	for (size_t i = 0; i < t->cap; i++) {
		if (t->e[i].key != 0 && t->e[i].until_ms >= now_ms) {
			nt.e[gw_sessions_slot(&nt, t->e[i].key)] = t->e[i];
			nt.n++;
		}
	}
	free(t->e);
	*t = nt;
	return WB_OK;
}

/* gw_sessions_put sets key's entry (the newer feed record wins); WB_ETOOBIG when the table is full. */
static int
gw_sessions_put(gw_sessions_table *t, uint64_t key, uint64_t value, uint64_t until_ms)
{
	gw_sessions_entry *e;
	uint64_t           now = wb_now_ms();
	int                rc;

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
		if (live + 1 > GW_SESSIONS_MAX) {
			return WB_ETOOBIG;
		}
		if ((rc = gw_sessions_rebuild(t, cap, now)) != WB_OK) {
			return rc;
		}
	}
	e = &t->e[gw_sessions_slot(t, key)];
	t->n += e->key == 0;
	*e = (gw_sessions_entry) { key, value, until_ms };
	return WB_OK;
}

/* gw_sessions_apply applies one revocation record (under the write lock). */
static void
gw_sessions_apply(gw_sessions *s, const wb_obj *ev)
{
	const char *type = wb_str(ev, WB_F_TYPE, "");
	uint64_t    uid = wb_u64(ev, WB_F_UID, 0), until = wb_u64(ev, WB_F_UNTIL, 0);
	int         rc = WB_OK;

	if (strcmp(type, "session") == 0 && wb_u64(ev, WB_F_ID, 0) != 0) {
		rc = gw_sessions_put(&s->ended, wb_u64(ev, WB_F_ID, 0), uid, until);
	} else if (strcmp(type, "all") == 0 && uid != 0) {
		rc = gw_sessions_put(&s->nb, uid, wb_u64(ev, WB_F_TIME, 0), until);
	}
	if (rc != WB_OK && !s->full) {
		s->full = true;
		RT_WARNF(
		    "session revocations: tables full (%u entries); every request now asks the "
		    "user service",
		    GW_SESSIONS_MAX);
	}
}

/* gw_sessions_fetch_key asks the user service for the session key (once). */
static int
gw_sessions_fetch_key(gw_sessions *s)
{
	wb_obj     *q = wb_request(WB_OP_USER_SESSION_KEY), *r = NULL;
	const char *b64;
	size_t      len, n = 0;
	uint8_t     key[WB_SESSION_KEY_LEN];
	int         rc;

	if (q == NULL) {
		return WB_ENOMEM;
	}
	rc = rt_call(s->user, q, &r);
	wb_msg_free(q);
	if (rc == WB_OK && (!wb_get_str(r, WB_F_KEY, &b64, &len) ||
	                       sodium_base642bin(key, sizeof(key), b64, len, NULL, &n, NULL,
	                           sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
	                       n != sizeof(key))) {
		rc = WB_EBADMSG;
	}
	wb_msg_free(r);
	if (rc == WB_OK) {
		pthread_rwlock_wrlock(&s->lock);
		memcpy(s->key, key, sizeof(key));
		s->have_key = true;
		pthread_rwlock_unlock(&s->lock);
	}
	sodium_memzero(key, sizeof(key));
	return rc;
}

/* gw_sessions_reset forgets everything learned (the user service's store was replaced). */
static void
gw_sessions_reset(gw_sessions *s)
{
	free(s->ended.e);
	free(s->nb.e);
	memset(&s->ended, 0, sizeof(s->ended));
	memset(&s->nb, 0, sizeof(s->nb));
	s->last = 0;
	s->full = false;
	s->have_key = false;
	s->trusted_until_ms = 0;
}

int
gw_sessions_sync(gw_sessions *s)
{
	uint64_t asked = gw_sessions_mono_ms();
	int      rc = WB_OK;

	pthread_mutex_lock(&s->pull_mu);
	if (!s->have_key) {
		rc = gw_sessions_fetch_key(s);
	}
	for (bool more = true; rc == WB_OK && more;) {
		wb_obj       *q = wb_request(WB_OP_USER_REVOCATIONS), *r = NULL;
		const wb_obj *ev = NULL;
		size_t        n = 0;
		if (q == NULL || wb_set_u64(q, WB_F_FROM, s->last + 1) != WB_OK ||
		    wb_set_u64(q, WB_F_LIMIT, GW_SESSIONS_PAGE) != WB_OK) {
			wb_msg_free(q);
			rc = WB_ENOMEM;
			break;
		}
		rc = rt_call(s->user, q, &r);
		wb_msg_free(q);
		if (rc == WB_OK) {
			uint64_t last = wb_u64(r, WB_F_LAST, 0);
			wb_get_objs(r, WB_F_EVENTS, &ev, &n);
			pthread_rwlock_wrlock(&s->lock);
			if (last < s->last) {
				/* the feed went back: a new store, so a new key too */
				RT_WARNF("session revocations went back from seq %llu to %llu; "
				         "starting over",
				    (unsigned long long)s->last, (unsigned long long)last);
				gw_sessions_reset(s);
				more = false;
				rc = WB_EUNAVAIL;
			} else {
				for (size_t i = 0; i < n; i++) {
					gw_sessions_apply(s, &ev[i]);
					s->last = wb_u64(&ev[i], WB_F_SEQ, s->last);
				}
				/* records past their TTL are gone: nothing left below last */
				more = n == GW_SESSIONS_PAGE;
				if (!more) {
					s->last = last;
					s->trusted_until_ms = asked + (uint64_t)s->trust_ms;
				}
			}
			pthread_rwlock_unlock(&s->lock);
		}
		wb_msg_free(r);
	}
	pthread_mutex_unlock(&s->pull_mu);
	return rc;
}

static void *
gw_sessions_main(void *arg)
{
	gw_sessions *s = arg;
	int          last_rc = WB_OK;

	pthread_mutex_lock(&s->mu);
	while (!s->closing) {
		pthread_mutex_unlock(&s->mu);
		int rc = gw_sessions_sync(s);
		if (rc != WB_OK && rc != last_rc) {
			RT_WARNF("session revocations: %s; requests ask the user service until the "
			         "feed answers",
			    wb_strerror(rc));
		} else if (rc == WB_OK && last_rc != WB_OK) {
			RT_INFOF("session revocations: following the feed again");
		}
		last_rc = rc;
		pthread_mutex_lock(&s->mu);
		if (!s->closing) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_nsec += (long)(s->poll_ms % 1000) * 1000000L;
			ts.tv_sec += s->poll_ms / 1000 + ts.tv_nsec / 1000000000L;
			ts.tv_nsec %= 1000000000L;
			while (!s->closing &&
			       pthread_cond_timedwait(&s->cv, &s->mu, &ts) != ETIMEDOUT) {
			}
		}
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

int
gw_sessions_open(gw_sessions **out, rt_client *user, int poll_ms, int trust_ms)
{
	gw_sessions       *s;
	pthread_condattr_t ca;

	*out = NULL;
	if (poll_ms < 0 || trust_ms < poll_ms) {
		return WB_EINVAL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		return WB_ENOMEM;
	}
	s->user = user;
	s->poll_ms = poll_ms;
	s->trust_ms = trust_ms;
	pthread_rwlock_init(&s->lock, NULL);
	pthread_mutex_init(&s->pull_mu, NULL);
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (poll_ms > 0) {
		if (pthread_create(&s->thread, NULL, gw_sessions_main, s) != 0) {
			gw_sessions_close(s);
			return WB_ENOMEM;
		}
		s->started = true;
	}
	*out = s;
	return WB_OK;
}

void
gw_sessions_close(gw_sessions *s)
{
	if (s == NULL) {
		return;
	}
	pthread_mutex_lock(&s->mu);
	s->closing = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (s->started) {
		pthread_join(s->thread, NULL);
	}
	gw_sessions_reset(s);
	sodium_memzero(s->key, sizeof(s->key));
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
	pthread_mutex_destroy(&s->pull_mu);
	pthread_rwlock_destroy(&s->lock);
	free(s);
}

gw_session_verdict
gw_sessions_check(gw_sessions *s, const char *tok, size_t len, uint64_t *uid)
{
	gw_session_verdict       v = GW_SESSION_ASK;
	const gw_sessions_entry *e;
	wb_session               ws = { 0 };
	uint64_t                 now = wb_now_ms();

	if (s->poll_ms == 0 || !wb_session_is_signed(tok, len)) {
		return GW_SESSION_ASK;
	}
	pthread_rwlock_rdlock(&s->lock);
	if (s->have_key && !s->full && gw_sessions_mono_ms() < s->trusted_until_ms) {
		int rc = wb_session_verify(&ws, tok, len, s->key, now);
		if (rc == WB_OK) {
			e = gw_sessions_find(&s->nb, ws.uid);
			if (gw_sessions_find(&s->ended, ws.sid) != NULL ||
			    (e != NULL && wb_session_began(ws.sid) < e->value)) {
				v = GW_SESSION_BAD;
			} else {
				*uid = ws.uid;
				v = GW_SESSION_OK;
			}
		} else if (ws.expires_ms <= now && ws.uid != 0) {
			/* a MAC mismatch is asked about (the key may have changed);
			 * an expired token with a good MAC is simply over */
			v = wb_session_verify(&ws, tok, len, s->key, 0) == WB_OK ? GW_SESSION_BAD
			                                                         : GW_SESSION_ASK;
		}
	}
	pthread_rwlock_unlock(&s->lock);
	return v;
}

uint64_t
gw_sessions_revoked(void *arg)
{
	gw_sessions *s = arg;
	uint64_t     n;

	pthread_rwlock_rdlock(&s->lock);
	n = s->ended.n + s->nb.n;
	pthread_rwlock_unlock(&s->lock);
	return n;
}
