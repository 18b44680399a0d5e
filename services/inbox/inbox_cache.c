/*
 * inbox_cache.c - the newest cells of recently read inboxes (inbox_cache.h).
 *
 * Slots are direct-mapped by a hash of the reader: a reader whose slot
 * another reader took is read from the store, and takes it back.  An
 * entry is the newest n cells of the row, newest first; `complete` says
 * the row has no older cell, so a read of more than n cells can be
 * answered too.
 *
 * Slots share their mutexes, and their generation, in stripes.  Which
 * reader holds a slot is kept apart from the cells (8 bytes a slot), so
 * a fan-out to readers that are not cached reads that small array and
 * writes only the stripe's generation: a 1M fan-out neither touches nor
 * makes resident the 13 MB of cells.  A write to any slot of a stripe
 * refuses the fills of the whole stripe that were in flight, which at
 * 32 slots a stripe costs a refill now and then.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "inbox_cache.h"
#include "wb_errors.h"
#include "wb_hash.h"

#define INBOX_CACHE_STRIPES 1024 /* slot i is in stripe i % 1024 */

typedef struct inbox_slot {
	uint8_t    n;
	bool       complete;
	inbox_cell cells[INBOX_CACHE_CELLS];
} inbox_slot;

typedef struct inbox_stripe {
	pthread_mutex_t mu;
	uint64_t        gen; /* bumped by every write to a row of the stripe's slots */
} inbox_stripe;

struct inbox_cache {
	inbox_slot  *slots;
	uint64_t    *uids; /* the reader of each slot (0: none) */
	size_t       mask;
	unsigned     window;
	inbox_stripe stripes[INBOX_CACHE_STRIPES];
};

int
inbox_cache_open(inbox_cache **out, size_t slots, unsigned window)
{
	inbox_cache *c;
	size_t       n = 1;

	*out = NULL;
	if (slots == 0 || window == 0) {
		return WB_OK;
	}
	if (slots > ((size_t)1 << 30)) {
		return WB_EINVAL;
	}
	while (n < slots) {
		n <<= 1;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL ||
	    (c->slots = calloc(n, sizeof(*c->slots))) == NULL ||
	    (c->uids = calloc(n, sizeof(*c->uids))) == NULL) {
		if (c != NULL) {
			free(c->slots);
		}
		free(c);
		return WB_ENOMEM;
	}
	c->mask = n - 1;
	c->window = window < INBOX_CACHE_CELLS ? window : INBOX_CACHE_CELLS;
	for (int i = 0; i < INBOX_CACHE_STRIPES; i++) {
		pthread_mutex_init(&c->stripes[i].mu, NULL);
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
		pthread_mutex_destroy(&c->stripes[i].mu);
	}
	free(c->uids);
	free(c->slots);
	free(c);
}

unsigned
inbox_cache_window(const inbox_cache *c)
{
	return c != NULL ? c->window : 0;
}

/* inbox_cache_lock locks the stripe of uid's slot, whose index goes into *i, and returns the stripe. */
static inbox_stripe *
inbox_cache_lock(inbox_cache *c, uint64_t uid, size_t *i)
{
	inbox_stripe *st;

	*i = (size_t)wb_mix64(uid) & c->mask;
	st = &c->stripes[*i % INBOX_CACHE_STRIPES];
	pthread_mutex_lock(&st->mu);
	return st;
}

int
inbox_cache_get(inbox_cache *c, uint64_t uid, size_t want, inbox_cell *out, uint64_t *gen)
{
	inbox_stripe *st;
	inbox_slot   *s;
	size_t        i;
	int           n = -1;

	*gen = 0;
	if (c == NULL) {
		return -1;
	}
	st = inbox_cache_lock(c, uid, &i);
	s = &c->slots[i];
	*gen = st->gen;
	if (c->uids[i] == uid && (s->n >= want || s->complete)) {
		n = s->n < want ? s->n : (int)want;
		memcpy(out, s->cells, (size_t)n * sizeof(*out));
	}
	pthread_mutex_unlock(&st->mu);
	return n;
}

void
inbox_cache_fill(
    inbox_cache *c, uint64_t uid, uint64_t gen, const inbox_cell *cells, size_t n, bool complete)
{
	inbox_stripe *st;
	inbox_slot   *s;
	size_t        i;

	if (c == NULL || uid == 0) {
		return;
	}
	st = inbox_cache_lock(c, uid, &i);
	if (st->gen == gen) {
		if (n > c->window) {
			n = c->window;
			complete = false;
		}
		s = &c->slots[i];
		c->uids[i] = uid;
		s->n = (uint8_t)n;
		s->complete = complete;
		memcpy(s->cells, cells, n * sizeof(*cells));
	}
	pthread_mutex_unlock(&st->mu);
}

/* inbox_cache_touch locks uid's stripe for a write, bumping its generation, and returns uid's slot with *st to unlock; NULL if uid has no entry (nothing left locked). */
static inbox_slot *
inbox_cache_touch(inbox_cache *c, uint64_t uid, inbox_stripe **st)
{
	size_t i;

	if (c == NULL) {
		return NULL;
	}
	*st = inbox_cache_lock(c, uid, &i);
	(*st)->gen++;
	if (c->uids[i] == uid && uid != 0) {
		return &c->slots[i];
	}
	pthread_mutex_unlock(&(*st)->mu);
	return NULL;
}

void
inbox_cache_put(inbox_cache *c, uint64_t uid, inbox_cell cell)
{
	inbox_stripe *st;
	inbox_slot   *s = inbox_cache_touch(c, uid, &st);
	size_t        p = 0;

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
	pthread_mutex_unlock(&st->mu);
}

void
inbox_cache_del(inbox_cache *c, uint64_t uid, uint64_t id)
{
	inbox_stripe *st;
	inbox_slot   *s = inbox_cache_touch(c, uid, &st);

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
	pthread_mutex_unlock(&st->mu);
}

void
inbox_cache_drop(inbox_cache *c, uint64_t uid)
{
	inbox_stripe *st;
	inbox_slot   *s = inbox_cache_touch(c, uid, &st);

	if (s != NULL) {
		c->uids[s - c->slots] = 0;
		pthread_mutex_unlock(&st->mu);
	}
}

void
inbox_cache_clear(inbox_cache *c)
{
	for (size_t k = 0; c != NULL && k < INBOX_CACHE_STRIPES; k++) {
		inbox_stripe *st = &c->stripes[k];

		pthread_mutex_lock(&st->mu);
		st->gen++;
		for (size_t i = k; i <= c->mask; i += INBOX_CACHE_STRIPES) {
			c->uids[i] = 0;
		}
		pthread_mutex_unlock(&st->mu);
	}
}
