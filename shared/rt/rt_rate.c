/* rt_rate.c - the login failure limiter (see rt_rate.h). */
#include <pthread.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "rt_rate.h"
#include "wb_errors.h"
#include "wb_clock.h"

typedef struct rt_rate_slot {
	uint8_t  key[RT_RATE_KEY];
	uint8_t  klen;
	uint32_t fails;
	uint64_t window_start;
	uint64_t locked_until;
} rt_rate_slot;

struct rt_rate {
	pthread_mutex_t mu;
	unsigned        max_fails;
	uint64_t        window_ms, cooldown_ms;
	uint8_t         hkey[crypto_shorthash_KEYBYTES];
	rt_rate_slot    slots[RT_RATE_SLOTS];
};

int
rt_rate_open(rt_rate **out, unsigned max_fails, uint64_t window_ms, uint64_t cooldown_ms)
{
	rt_rate *r;

	*out = NULL;
	if (sodium_init() < 0) {
		return WB_EINTERNAL;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		return WB_ENOMEM;
	}
	pthread_mutex_init(&r->mu, NULL);
	r->max_fails = max_fails;
	r->window_ms = window_ms;
	r->cooldown_ms = cooldown_ms;
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
	return &r->slots[v % RT_RATE_SLOTS];
}

static int
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
	if (r == NULL || r->max_fails == 0) {
		return WB_OK;
	}
	pthread_mutex_lock(&r->mu);
	s = rt_rate_slot_find(r, key, len, &kl);
	if (rt_rate_slot_is(s, key, kl) && s->locked_until > now_ms) {
		*retry_ms = s->locked_until - now_ms;
		rc = WB_ERATE;
	}
	pthread_mutex_unlock(&r->mu);
	return rc;
}

void
rt_rate_fail(rt_rate *r, const void *key, size_t len, uint64_t now_ms)
{
	rt_rate_slot *s;
	size_t        kl;

	if (r == NULL || r->max_fails == 0) {
		return;
	}
	pthread_mutex_lock(&r->mu);
	s = rt_rate_slot_find(r, key, len, &kl);
	if (!rt_rate_slot_is(s, key, kl)) {
		if (s->locked_until > now_ms) {
			pthread_mutex_unlock(&r->mu); /* never evict a live lock */
			return;
		}
		memset(s, 0, sizeof(*s));
		memcpy(s->key, key, kl);
		s->klen = (uint8_t)kl;
	}
	/* now_ms was read before the lock: another thread's may be later */
	if (s->fails == 0 || wb_elapsed(now_ms, s->window_start) >= r->window_ms) {
		s->fails = 0;
		s->window_start = now_ms;
	}
	if (++s->fails >= r->max_fails) {
		s->locked_until = now_ms + r->cooldown_ms;
		s->fails = 0;
	}
	pthread_mutex_unlock(&r->mu);
}

void
rt_rate_success(rt_rate *r, const void *key, size_t len)
{
	rt_rate_slot *s;
	size_t        kl;

	if (r == NULL || r->max_fails == 0) {
		return;
	}
	pthread_mutex_lock(&r->mu);
	s = rt_rate_slot_find(r, key, len, &kl);
	if (rt_rate_slot_is(s, key, kl)) {
		memset(s, 0, sizeof(*s));
	}
	pthread_mutex_unlock(&r->mu);
}
