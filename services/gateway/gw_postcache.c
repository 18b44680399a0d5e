/*
 * gw_postcache.c - a bounded, lock-striped cache of post records.
 *
 *   set hash(id) & mask: GW_POSTCACHE_WAYS slots, each
 *     { id, author, expires, len, text (malloc'd) }
 *
 * A post may take any slot of its set: a newcomer takes an empty or
 * expired one, else the one put longest ago.  Direct-mapped (one way),
 * a third of the posts of a 10 s mix (30,000 posts in 65,536 slots) had
 * been pushed out by another post of their slot and were fetched again:
 * about 4,500 post.get a second.  Four ways keep them.
 *
 * A rich post (title, category or images) keeps its whole record, msgpack
 * encoded, in place of the text: a text-only post, the common case, is
 * read back without decoding anything.
 *
 * A set is read and written under one of GW_POSTCACHE_LOCKS mutexes
 * (set index modulo the count).  The delete epoch is read by a put under
 * its set's lock, and a forget advances it before taking that lock, so a
 * put that raced a delete either sees the new epoch or is dropped by the
 * forget right after it.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "wb_hash.h"
#include "gw_postcache.h"
#include "wb_id.h"
#include "wb_clock.h"

#define GW_POSTCACHE_LOCKS 64
#define GW_POSTCACHE_WAYS  4 /* slots a post may take */

typedef struct gw_postcache_slot {
	uint64_t id; /* 0: empty */
	uint64_t author;
	uint64_t expires_ms;
	size_t   len;
	char    *text; /* the text, or the encoded record if rich */
	bool     rich;
} gw_postcache_slot;

struct gw_postcache {
	size_t               mask; /* of the set index */
	uint64_t             ttl_ms;
	gw_postcache_slot   *slots; /* NULL: caching off */
	atomic_uint_fast64_t epoch;
	pthread_mutex_t      locks[GW_POSTCACHE_LOCKS];
};

/* gw_postcache_set returns the index of id's set (its first slot is GW_POSTCACHE_WAYS times that). */
static size_t
gw_postcache_set(const gw_postcache *c, uint64_t id)
{
	return (size_t)wb_mix64(id) & c->mask;
}

/* gw_postcache_find returns id's slot in set i, or NULL; the set's lock is held. */
static gw_postcache_slot *
gw_postcache_find(gw_postcache *c, size_t i, uint64_t id)
{
	gw_postcache_slot *s = &c->slots[i * GW_POSTCACHE_WAYS];

	for (int w = 0; w < GW_POSTCACHE_WAYS; w++) {
		if (s[w].id == id) {
			return &s[w];
		}
	}
	return NULL;
}

/* gw_postcache_victim returns the slot of set i a newcomer takes: an empty or expired one, else the one put longest ago. */
static gw_postcache_slot *
gw_postcache_victim(gw_postcache *c, size_t i, uint64_t now_ms)
{
	gw_postcache_slot *s = &c->slots[i * GW_POSTCACHE_WAYS], *v = s;

	for (int w = 0; w < GW_POSTCACHE_WAYS; w++) {
		if (s[w].id == 0 || s[w].expires_ms <= now_ms) {
			return &s[w];
		}
		if (s[w].expires_ms < v->expires_ms) {
			v = &s[w];
		}
	}
	return v;
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
	c->mask = size / GW_POSTCACHE_WAYS - 1;
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
	for (size_t i = 0; c->slots != NULL && i < (c->mask + 1) * GW_POSTCACHE_WAYS; i++) {
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

/* gw_postcache_decode copies a rich post's encoded record into dst. */
static bool
gw_postcache_decode(const char *buf, size_t len, wb_obj *dst)
{
	wb_obj *rec = NULL;
	bool ok = wb_decode(&rec, buf, len, NULL, NULL, 0) == WB_OK && wb_copy(dst, rec) == WB_OK;

	wb_msg_free(rec);
	return ok;
}

bool
gw_postcache_rich(const wb_obj *post)
{
	return wb_has(post, WB_F_TITLE) || wb_has(post, WB_F_CATEGORY) || wb_has(post, WB_F_IMAGES);
}

/* gw_postcache_copy makes the malloc'd bytes a slot keeps of post: its text, or its encoded record if rich. */
static char *
gw_postcache_copy(const wb_obj *post, size_t *len, bool *rich)
{
	const char *text;
	char       *copy;

	if ((*rich = gw_postcache_rich(post))) {
		return wb_encode_buf(post, &copy, len) == WB_OK ? copy : NULL;
	}
	if (!wb_get_str(post, WB_F_TEXT, &text, len) || (copy = malloc(*len + 1)) == NULL) {
		return NULL;
	}
	memcpy(copy, text, *len);
	copy[*len] = '\0';
	return copy;
}

bool
gw_postcache_get(gw_postcache *c, uint64_t id, uint64_t lag_ms, wb_obj *dst)
{
	size_t             i;
	gw_postcache_slot *s;
	bool               hit;

	if (c->slots == NULL || id == 0) {
		return false;
	}
	i = gw_postcache_set(c, id);
	pthread_mutex_lock(&c->locks[i % GW_POSTCACHE_LOCKS]);
	s = gw_postcache_find(c, i, id);
	hit = s != NULL && (lag_ms < c->ttl_ms || s->expires_ms > wb_mono_us() / 1000);
	if (hit && s->rich) {
		hit = gw_postcache_decode(s->text, s->len, dst) &&
		      wb_set_u64(dst, WB_F_TIME, wb_id_ms(id)) == WB_OK;
	} else if (hit) {
		hit = wb_set_u64(dst, WB_F_ID, id) == WB_OK &&
		      wb_set_u64(dst, WB_F_AUTHOR, s->author) == WB_OK &&
		      wb_set_str(dst, WB_F_TEXT, s->text, s->len) == WB_OK &&
		      wb_set_u64(dst, WB_F_TIME, wb_id_ms(id)) == WB_OK;
	}
	pthread_mutex_unlock(&c->locks[i % GW_POSTCACHE_LOCKS]);
	return hit;
}

void
gw_postcache_put(gw_postcache *c, uint64_t epoch, const wb_obj *post)
{
	uint64_t           id = wb_u64(post, WB_F_ID, 0), author = wb_u64(post, WB_F_AUTHOR, 0);
	size_t             len, i;
	char              *copy;
	bool               rich;
	gw_postcache_slot *s;

	if (c->slots == NULL || id == 0 || author == 0 ||
	    (copy = gw_postcache_copy(post, &len, &rich)) == NULL) {
		return;
	}
	uint64_t now_ms = wb_mono_us() / 1000;

	i = gw_postcache_set(c, id);
	pthread_mutex_lock(&c->locks[i % GW_POSTCACHE_LOCKS]);
	if (atomic_load(&c->epoch) == epoch) {
		char *old;

		if ((s = gw_postcache_find(c, i, id)) == NULL) {
			s = gw_postcache_victim(c, i, now_ms);
		}
		old = s->text;
		*s = (gw_postcache_slot) { id, author, now_ms + c->ttl_ms, len, copy, rich };
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
	i = gw_postcache_set(c, id);
	pthread_mutex_lock(&c->locks[i % GW_POSTCACHE_LOCKS]);
	if ((s = gw_postcache_find(c, i, id)) != NULL) {
		old = s->text;
		*s = (gw_postcache_slot) { 0 };
	}
	pthread_mutex_unlock(&c->locks[i % GW_POSTCACHE_LOCKS]);
	free(old);
}
