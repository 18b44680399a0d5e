/* user_rate.c - the login failure limiter (see user_rate.h). */
#include <pthread.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "user_rate.h"
#include "wb_errors.h"

typedef struct user_rate_slot {
	uint8_t  key[USER_RATE_KEY];
	uint8_t  klen;
	uint32_t fails;
	uint64_t window_start;
	uint64_t locked_until;
} user_rate_slot;

struct user_rate {
	pthread_mutex_t mu;
	unsigned        max_fails;
	uint64_t        window_ms, cooldown_ms;
	uint8_t         hkey[crypto_shorthash_KEYBYTES];
	user_rate_slot  slots[USER_RATE_SLOTS];
};

int
user_rate_open(user_rate **out, unsigned max_fails, uint64_t window_ms,
    uint64_t cooldown_ms)
{
	user_rate *r;

	*out = NULL;
	if (sodium_init() < 0) {
		return WB_EINTERNAL;
	}
	if ((r = calloc(1, sizeof(*r))) == NULL) {
		return WB_ENOMEM;
	}
	pthread_mutex_init(&r->mu, NULL);
	r->max_fails   = max_fails;
	r->window_ms   = window_ms;
	r->cooldown_ms = cooldown_ms;
	randombytes_buf(r->hkey, sizeof(r->hkey));
	*out = r;
	return WB_OK;
}

void
user_rate_close(user_rate *r)
{
	if (r == NULL) {
		return;
	}
	pthread_mutex_destroy(&r->mu);
	free(r);
}

/* user_rate_slot_find returns key's slot (its key bytes in *k, *kl). */
static user_rate_slot *
user_rate_slot_find(user_rate *r, const void *key, size_t len, size_t *kl)
{
	uint8_t  h[crypto_shorthash_BYTES];
	uint64_t v;

	*kl = len < USER_RATE_KEY ? len : USER_RATE_KEY;
	crypto_shorthash(h, key, *kl, r->hkey);
	memcpy(&v, h, sizeof(v));
	return &r->slots[v % USER_RATE_SLOTS];
}

static int
user_rate_slot_is(const user_rate_slot *s, const void *key, size_t kl)
{
	return s->klen == kl && memcmp(s->key, key, kl) == 0;
}

int
user_rate_check(user_rate *r, const void *key, size_t len, uint64_t now_ms,
    uint64_t *retry_ms)
{
	user_rate_slot *s;
	size_t          kl;
	int             rc = WB_OK;

	*retry_ms = 0;
	if (r == NULL || r->max_fails == 0) {
		return WB_OK;
	}
	pthread_mutex_lock(&r->mu);
	s = user_rate_slot_find(r, key, len, &kl);
	if (user_rate_slot_is(s, key, kl) && s->locked_until > now_ms) {
		*retry_ms = s->locked_until - now_ms;
		rc        = WB_ERATE;
	}
	pthread_mutex_unlock(&r->mu);
	return rc;
}

void
user_rate_fail(user_rate *r, const void *key, size_t len, uint64_t now_ms)
{
	user_rate_slot *s;
	size_t          kl;

	if (r == NULL || r->max_fails == 0) {
		return;
	}
	pthread_mutex_lock(&r->mu);
	s = user_rate_slot_find(r, key, len, &kl);
	if (!user_rate_slot_is(s, key, kl)) {
		if (s->locked_until > now_ms) {
			pthread_mutex_unlock(&r->mu); /* never evict a live lock */
			return;
		}
		memset(s, 0, sizeof(*s));
		memcpy(s->key, key, kl);
		s->klen = (uint8_t) kl;
	}
	if (s->fails == 0 || now_ms - s->window_start >= r->window_ms) {
		s->fails        = 0;
		s->window_start = now_ms;
	}
	if (++s->fails >= r->max_fails) {
		s->locked_until = now_ms + r->cooldown_ms;
		s->fails        = 0;
	}
	pthread_mutex_unlock(&r->mu);
}

void
user_rate_ok(user_rate *r, const void *key, size_t len)
{
	user_rate_slot *s;
	size_t          kl;

	if (r == NULL || r->max_fails == 0) {
		return;
	}
	pthread_mutex_lock(&r->mu);
	s = user_rate_slot_find(r, key, len, &kl);
	if (user_rate_slot_is(s, key, kl)) {
		memset(s, 0, sizeof(*s));
	}
	pthread_mutex_unlock(&r->mu);
}
