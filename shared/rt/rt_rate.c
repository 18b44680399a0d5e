/* rt_rate.c - the failure limiter with growing waits (see rt_rate.h). */
#include <pthread.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "rt_rate.h"
#include "wb_clock.h"
#include "wb_errors.h"

typedef struct rt_rate_slot {
	uint8_t  key[RT_RATE_KEY];
	uint8_t  klen;
	uint32_t fails;
	uint64_t window_start;
	uint64_t wait_until;
	uint64_t known_until;
} rt_rate_slot;

struct rt_rate {
	pthread_mutex_t mu;
	rt_rate_opts    o;
	uint8_t         hkey[crypto_shorthash_KEYBYTES];
	rt_rate_slot   *slots;
};

int
rt_rate_open(rt_rate **out, const rt_rate_opts *opts)
{
	rt_rate *r;

	*out = NULL;
	if (sodium_init() < 0) {
		return WB_EINTERNAL;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		return WB_ENOMEM;
	}
	r->o = *opts;
	if (r->o.slots == 0) {
		r->o.slots = RT_RATE_SLOTS;
	}
	if (r->o.wait_max_ms < r->o.wait_ms) {
		r->o.wait_max_ms = r->o.wait_ms;
	}
	if ((r->slots = calloc(r->o.slots, sizeof(rt_rate_slot))) == NULL) {
		free(r);
		return WB_ENOMEM;
	}
	pthread_mutex_init(&r->mu, NULL);
	randombytes_buf(r->hkey, sizeof(r->hkey));
	*out = r;
	return WB_OK;
}

void
rt_rate_close(rt_rate *r)
{
	if (r == NULL) {
		return;
	}
	pthread_mutex_destroy(&r->mu);
	free(r->slots);
	free(r);
}

/* rt_rate_slot_find returns key's slot (the compared key length in *kl). */
static rt_rate_slot *
rt_rate_slot_find(rt_rate *r, const void *key, size_t len, size_t *kl)
{
	uint8_t  h[crypto_shorthash_BYTES];
	uint64_t v;

	*kl = len < RT_RATE_KEY ? len : RT_RATE_KEY;
	crypto_shorthash(h, key, *kl, r->hkey);
	memcpy(&v, h, sizeof(v));
	return &r->slots[v % r->o.slots];
}

static bool
rt_rate_slot_is(const rt_rate_slot *s, const void *key, size_t kl)
{
	return s->klen == kl && memcmp(s->key, key, kl) == 0;
}

int
rt_rate_check(rt_rate *r, const void *key, size_t len, uint64_t now_ms, uint64_t *retry_ms)
{
	rt_rate_slot *s;
	size_t        kl;
	int           rc = WB_OK;

	*retry_ms = 0;
	if (r == NULL || r->o.free == 0) {
		return WB_OK;
	}
	pthread_mutex_lock(&r->mu);
	s = rt_rate_slot_find(r, key, len, &kl);
	if (rt_rate_slot_is(s, key, kl) && s->wait_until > now_ms) {
		*retry_ms = s->wait_until - now_ms;
		rc = WB_ERATE;
	}
	pthread_mutex_unlock(&r->mu);
	return rc;
}

/* rt_rate_wait returns the wait after the n-th failure past the free ones (n >= 1). */
static uint64_t
rt_rate_wait(const rt_rate *r, uint32_t n)
{
	uint64_t w = r->o.wait_ms;

	while (--n > 0 && w < r->o.wait_max_ms) {
		w *= 2;
	}
	return w < r->o.wait_max_ms ? w : r->o.wait_max_ms;
}

uint64_t
rt_rate_fail(rt_rate *r, const void *key, size_t len, uint64_t now_ms)
{
	rt_rate_slot *s;
	size_t        kl;
	uint64_t      wait = 0;

	if (r == NULL || r->o.free == 0) {
		return 0;
	}
	pthread_mutex_lock(&r->mu);
	s = rt_rate_slot_find(r, key, len, &kl);
	if (!rt_rate_slot_is(s, key, kl)) {
		if (s->wait_until > now_ms) {
			pthread_mutex_unlock(&r->mu); /* never evict a live wait */
			return 0;
		}
		memset(s, 0, sizeof(*s));
		memcpy(s->key, key, kl);
		s->klen = (uint8_t)kl;
	}
	/* now_ms was read before the lock: another thread's may be later */
	if (s->fails == 0 || wb_elapsed(now_ms, s->window_start) >= r->o.window_ms) {
		s->fails = 0;
		s->window_start = now_ms;
	}
	if (++s->fails > r->o.free) {
		wait = rt_rate_wait(r, s->fails - r->o.free);
		s->wait_until = now_ms + wait;
	}
	pthread_mutex_unlock(&r->mu);
	return wait;
}

void
rt_rate_success(rt_rate *r, const void *key, size_t len, uint64_t now_ms)
{
	rt_rate_slot *s;
	size_t        kl;

	if (r == NULL || r->o.free == 0) {
		return;
	}
	pthread_mutex_lock(&r->mu);
	s = rt_rate_slot_find(r, key, len, &kl);
	if (rt_rate_slot_is(s, key, kl)) {
		memset(s, 0, sizeof(*s));
	} else if (r->o.remember_ms == 0 || s->wait_until > now_ms) {
		s = NULL; /* nothing to remember, or another key's live wait */
	}
	if (s != NULL && r->o.remember_ms > 0) {
		memset(s, 0, sizeof(*s));
		memcpy(s->key, key, kl);
		s->klen = (uint8_t)kl;
		s->known_until = now_ms + r->o.remember_ms;
	}
	pthread_mutex_unlock(&r->mu);
}

bool
rt_rate_known(rt_rate *r, const void *key, size_t len, uint64_t now_ms)
{
	rt_rate_slot *s;
	size_t        kl;
	bool          known;

	if (r == NULL || r->o.free == 0) {
		return false;
	}
	pthread_mutex_lock(&r->mu);
	s = rt_rate_slot_find(r, key, len, &kl);
	known = rt_rate_slot_is(s, key, kl) && s->known_until > now_ms;
	pthread_mutex_unlock(&r->mu);
	return known;
}
