/*
 * gw_postcache.c - a bounded, lock-striped cache of post records.
 *
 *   slots[hash(id) & mask] -> { id, author, expires, len, text (malloc'd) }
 *
 * A slot is read and written under one of GW_POSTCACHE_LOCKS mutexes
 * (slot index modulo the count).  The delete epoch is read by a put under
 * its slot's lock, and a forget advances it before taking that lock, so a
 * put that raced a delete either sees the new epoch or is dropped by the
 * forget right after it.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "wb_hash.h"
#include "gw_postcache.h"
#include "wb_id.h"
#include "wb_clock.h"

#define GW_POSTCACHE_LOCKS 64

typedef struct gw_postcache_slot {
	uint64_t id; /* 0: empty */
	uint64_t author;
	uint64_t expires_ms;
	size_t   len;
	char    *text;
} gw_postcache_slot;

struct gw_postcache {
	size_t               mask;
	uint64_t             ttl_ms;
	gw_postcache_slot   *slots; /* NULL: caching off */
	atomic_uint_fast64_t epoch;
	pthread_mutex_t      locks[GW_POSTCACHE_LOCKS];
};

static size_t
gw_postcache_slot_of(const gw_postcache *c, uint64_t id)
{
	return (size_t)wb_mix64(id) & c->mask;
}

int
gw_postcache_open(gw_postcache **out, size_t slots, uint64_t ttl_ms)
{
	gw_postcache *c;
	size_t        size = 64;

	*out = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		return WB_ENOMEM;
	}
	while (slots > 0 && size < slots && size < ((size_t)1 << 24)) {
		size <<= 1;
	}
	c->mask = size - 1;
	c->ttl_ms = ttl_ms;
	atomic_init(&c->epoch, 0);
	if (slots > 0 && ttl_ms > 0 && (c->slots = calloc(size, sizeof(*c->slots))) == NULL) {
		free(c);
		return WB_ENOMEM;
	}
	for (int i = 0; i < GW_POSTCACHE_LOCKS; i++) {
		pthread_mutex_init(&c->locks[i], NULL);
	}
	*out = c;
	return WB_OK;
}

void
gw_postcache_close(gw_postcache *c)
{
	if (c == NULL) {
		return;
	}
	for (size_t i = 0; c->slots != NULL && i <= c->mask; i++) {
		free(c->slots[i].text);
	}
	for (int i = 0; i < GW_POSTCACHE_LOCKS; i++) {
		pthread_mutex_destroy(&c->locks[i]);
	}
	free(c->slots);
	free(c);
}

uint64_t
gw_postcache_epoch(gw_postcache *c)
{
	return atomic_load(&c->epoch);
}

bool
gw_postcache_get(gw_postcache *c, uint64_t id, wb_obj *dst)
{
	size_t             i;
	gw_postcache_slot *s;
	bool               hit;

	if (c->slots == NULL || id == 0) {
		return false;
	}
	i = gw_postcache_slot_of(c, id);
	s = &c->slots[i];
	pthread_mutex_lock(&c->locks[i % GW_POSTCACHE_LOCKS]);
	hit = s->id == id && s->expires_ms > wb_mono_us() / 1000 &&
	      wb_set_u64(dst, WB_F_ID, id) == WB_OK &&
	      wb_set_u64(dst, WB_F_AUTHOR, s->author) == WB_OK &&
	      wb_set_str(dst, WB_F_TEXT, s->text, s->len) == WB_OK &&
	      wb_set_u64(dst, WB_F_TIME, wb_id_ms(id)) == WB_OK;
	pthread_mutex_unlock(&c->locks[i % GW_POSTCACHE_LOCKS]);
	return hit;
}

void
gw_postcache_put(gw_postcache *c, uint64_t epoch, const wb_obj *post)
{
	uint64_t           id = wb_u64(post, WB_F_ID, 0), author = wb_u64(post, WB_F_AUTHOR, 0);
	const char        *text;
	size_t             len, i;
	char              *copy;
	gw_postcache_slot *s;

	if (c->slots == NULL || id == 0 || author == 0 ||
	    !wb_get_str(post, WB_F_TEXT, &text, &len) || (copy = malloc(len + 1)) == NULL) {
		return;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	i = gw_postcache_slot_of(c, id);
	s = &c->slots[i];
	pthread_mutex_lock(&c->locks[i % GW_POSTCACHE_LOCKS]);
	if (atomic_load(&c->epoch) == epoch) {
		char *old = s->text;

		*s = (gw_postcache_slot) { id, author, wb_mono_us() / 1000 + c->ttl_ms, len, copy };
		copy = old;
	}
	pthread_mutex_unlock(&c->locks[i % GW_POSTCACHE_LOCKS]);
	free(copy);
}

void
gw_postcache_forget(gw_postcache *c, uint64_t id)
{
	size_t             i;
	gw_postcache_slot *s;
	char              *old = NULL;

	atomic_fetch_add(&c->epoch, 1);
	if (c->slots == NULL) {
		return;
	}
	i = gw_postcache_slot_of(c, id);
	s = &c->slots[i];
	pthread_mutex_lock(&c->locks[i % GW_POSTCACHE_LOCKS]);
	if (s->id == id) {
		old = s->text;
		*s = (gw_postcache_slot) { 0 };
	}
	pthread_mutex_unlock(&c->locks[i % GW_POSTCACHE_LOCKS]);
	free(old);
}
