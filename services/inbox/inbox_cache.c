/*
 * inbox_cache.c - the newest cells of recently read inboxes (inbox_cache.h).
 *
 * Slots are direct-mapped by a hash of the reader: a reader whose slot
 * another reader took is read from the store, and takes it back.  Slots
 * share their mutexes in stripes.  An entry is the newest n cells of the
 * row, newest first; `complete` says the row has no older cell, so a read
 * of more than n cells can be answered too.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "inbox_cache.h"
#include "wb_errors.h"

#define INBOX_CACHE_STRIPES 1024 /* mutexes: slot i takes mutex i % 1024 */

typedef struct inbox_slot {
	uint64_t   uid;
	uint64_t   gen; /* bumped by every write to a row of this slot */
	uint8_t    n;
	bool       used, complete;
	inbox_cell cells[INBOX_CACHE_CELLS];
} inbox_slot;

struct inbox_cache {
	inbox_slot     *slots;
	size_t          mask;
	unsigned        bits, window;
	pthread_mutex_t mu[INBOX_CACHE_STRIPES];
};

int
inbox_cache_open(inbox_cache **out, size_t slots, unsigned window)
{
	inbox_cache *c;
	size_t       n = 1;
	unsigned     bits = 0;

	*out = NULL;
	if (slots == 0 || window == 0) {
		return WB_OK;
	}
	if (slots > ((size_t)1 << 30)) {
		return WB_EINVAL;
	}
	while (n < slots) {
		n <<= 1;
		bits++;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->slots = calloc(n, sizeof(*c->slots))) == NULL) {
		free(c);
		return WB_ENOMEM;
	}
	c->mask = n - 1;
	c->bits = bits;
	c->window = window < INBOX_CACHE_CELLS ? window : INBOX_CACHE_CELLS;
	for (int i = 0; i < INBOX_CACHE_STRIPES; i++) {
		pthread_mutex_init(&c->mu[i], NULL);
	}
	*out = c;
	return WB_OK;
}

void
inbox_cache_close(inbox_cache *c)
{
	if (c == NULL) {
		return;
	}
	for (int i = 0; i < INBOX_CACHE_STRIPES; i++) {
		pthread_mutex_destroy(&c->mu[i]);
	}
	free(c->slots);
	free(c);
}

unsigned
inbox_cache_window(const inbox_cache *c)
{
	return c != NULL ? c->window : 0;
}

/* inbox_cache_lock locks uid's slot and returns it. */
static inbox_slot *
inbox_cache_lock(inbox_cache *c, uint64_t uid)
{
	size_t i = c->bits ? (size_t)((uid * 0x9E3779B97F4A7C15ull) >> (64 - c->bits)) : 0;

	pthread_mutex_lock(&c->mu[i % INBOX_CACHE_STRIPES]);
	return &c->slots[i];
}

/* inbox_cache_unlock unlocks slot s. */
static void
inbox_cache_unlock(inbox_cache *c, inbox_slot *s)
{
	pthread_mutex_unlock(&c->mu[(size_t)(s - c->slots) % INBOX_CACHE_STRIPES]);
}

int
inbox_cache_get(inbox_cache *c, uint64_t uid, size_t want, inbox_cell *out, uint64_t *gen)
{
	inbox_slot *s;
	int         n = -1;

	*gen = 0;
	if (c == NULL) {
		return -1;
	}
	s = inbox_cache_lock(c, uid);
	*gen = s->gen;
	if (s->used && s->uid == uid && (s->n >= want || s->complete)) {
		n = s->n < want ? s->n : (int)want;
		memcpy(out, s->cells, (size_t)n * sizeof(*out));
	}
	inbox_cache_unlock(c, s);
	return n;
}

void
inbox_cache_fill(
    inbox_cache *c, uint64_t uid, uint64_t gen, const inbox_cell *cells, size_t n, bool complete)
{
	inbox_slot *s;

	if (c == NULL) {
		return;
	}
	s = inbox_cache_lock(c, uid);
	if (s->gen == gen) {
		if (n > c->window) {
			n = c->window;
			complete = false;
		}
		s->used = true;
		s->uid = uid;
		s->n = (uint8_t)n;
		s->complete = complete;
		memcpy(s->cells, cells, n * sizeof(*cells));
	}
	inbox_cache_unlock(c, s);
}

/* inbox_cache_touch locks uid's slot for a write, bumping its generation; NULL if uid has no entry (the slot unlocked). */
static inbox_slot *
inbox_cache_touch(inbox_cache *c, uint64_t uid)
{
	inbox_slot *s;

	if (c == NULL) {
		return NULL;
	}
	s = inbox_cache_lock(c, uid);
	s->gen++;
	if (s->used && s->uid == uid) {
		return s;
	}
	inbox_cache_unlock(c, s);
	return NULL;
}

void
inbox_cache_put(inbox_cache *c, uint64_t uid, inbox_cell cell)
{
	inbox_slot *s = inbox_cache_touch(c, uid);
	size_t      p = 0;

	if (s == NULL) {
		return;
	}
	while (p < s->n && s->cells[p].id > cell.id) {
		p++;
	}
	if (p < s->n && s->cells[p].id == cell.id) {
		s->cells[p] = cell; /* written again (an event replayed) */
	} else if (p == s->n && !s->complete) {
		/* older than every cell kept, among those that are not */
	} else if (s->n < c->window) {
		memmove(&s->cells[p + 1], &s->cells[p], (s->n - p) * sizeof(cell));
		s->cells[p] = cell;
		s->n++;
	} else {
		s->complete = false; /* the oldest kept cell, or this one, falls out */
		if (p < s->n) {
			memmove(&s->cells[p + 1], &s->cells[p], (s->n - p - 1) * sizeof(cell));
			s->cells[p] = cell;
		}
	}
	inbox_cache_unlock(c, s);
}

void
inbox_cache_del(inbox_cache *c, uint64_t uid, uint64_t id)
{
	inbox_slot *s = inbox_cache_touch(c, uid);

	if (s == NULL) {
		return;
	}
	for (size_t p = 0; p < s->n; p++) {
		if (s->cells[p].id == id) {
			memmove(
			    &s->cells[p], &s->cells[p + 1], (s->n - p - 1) * sizeof(s->cells[0]));
			s->n--;
			break;
		}
	}
	inbox_cache_unlock(c, s);
}

void
inbox_cache_drop(inbox_cache *c, uint64_t uid)
{
	inbox_slot *s = inbox_cache_touch(c, uid);

	if (s != NULL) {
		s->used = false;
		inbox_cache_unlock(c, s);
	}
}

void
inbox_cache_clear(inbox_cache *c)
{
	for (size_t i = 0; c != NULL && i <= c->mask; i++) {
		pthread_mutex_lock(&c->mu[i % INBOX_CACHE_STRIPES]);
		c->slots[i].gen++;
		c->slots[i].used = false;
		pthread_mutex_unlock(&c->mu[i % INBOX_CACHE_STRIPES]);
	}
}
