/* gw_tokens.c - the gateway's token -> uid cache (see gw_tokens.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gw_tokens.h"
#include "wb_errors.h"
#include "wb_clock.h"

typedef struct gw_tokens_slot {
	char     tok[GW_TOKENS_LEN];
	uint8_t  len; /* 0: empty */
	uint64_t uid;
	uint64_t expires; /* monotonic ms */
} gw_tokens_slot;

struct gw_tokens {
	pthread_mutex_t mtx;
	int             ttl_ms;
	gw_tokens_slot  slots[GW_TOKENS_SLOTS];
};

int
gw_tokens_open(gw_tokens **out, int ttl_ms)
{
	gw_tokens *t;

	*out = NULL;
	if (ttl_ms < 0 || ttl_ms > 1000) {
		return WB_EINVAL;
	}
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		return WB_ENOMEM;
	}
	pthread_mutex_init(&t->mtx, NULL);
	t->ttl_ms = ttl_ms;
	*out = t;
	return WB_OK;
}

void
gw_tokens_close(gw_tokens *t)
{
	if (t == NULL) {
		return;
	}
	pthread_mutex_destroy(&t->mtx);
	free(t);
}

/* gw_tokens_slot_of hashes a token (FNV-1a) to its slot. */
static gw_tokens_slot *
gw_tokens_slot_of(gw_tokens *t, const char *tok, size_t len)
{
	uint64_t h = UINT64_C(1469598103934665603);

	for (size_t i = 0; i < len; i++) {
		h = (h ^ (unsigned char)tok[i]) * UINT64_C(1099511628211);
	}
	return &t->slots[h % GW_TOKENS_SLOTS];
}

static bool
gw_tokens_slot_match(const gw_tokens_slot *s, const char *tok, size_t len)
{
	return s->len == len && memcmp(s->tok, tok, len) == 0;
}

bool
gw_tokens_get(gw_tokens *t, const char *tok, size_t len, uint64_t *uid)
{
	gw_tokens_slot *s;
	bool            hit = false;

	if (t == NULL || t->ttl_ms == 0 || len == 0 || len >= GW_TOKENS_LEN) {
		return false;
	}
	s = gw_tokens_slot_of(t, tok, len);
	pthread_mutex_lock(&t->mtx);
	if (gw_tokens_slot_match(s, tok, len)) {
		if (wb_mono_us() / 1000 < s->expires) {
			*uid = s->uid;
			hit = true;
		} else {
			s->len = 0;
		}
	}
	pthread_mutex_unlock(&t->mtx);
	return hit;
}

void
gw_tokens_put(gw_tokens *t, const char *tok, size_t len, uint64_t uid, uint64_t asked_ms)
{
	gw_tokens_slot *s;

	if (t == NULL || t->ttl_ms == 0 || len == 0 || len >= GW_TOKENS_LEN) {
		return;
	}
	s = gw_tokens_slot_of(t, tok, len);
	pthread_mutex_lock(&t->mtx);
	memcpy(s->tok, tok, len);
	s->len = (uint8_t)len;
	s->uid = uid;
	s->expires = asked_ms + (uint64_t)t->ttl_ms;
	pthread_mutex_unlock(&t->mtx);
}

void
gw_tokens_drop(gw_tokens *t, const char *tok, size_t len)
{
	gw_tokens_slot *s;

	if (t == NULL || len == 0 || len >= GW_TOKENS_LEN) {
		return;
	}
	s = gw_tokens_slot_of(t, tok, len);
	pthread_mutex_lock(&t->mtx);
	if (gw_tokens_slot_match(s, tok, len)) {
		s->len = 0;
	}
	pthread_mutex_unlock(&t->mtx);
}
