/*
 * rt_uidset.c - a set of uids held for a while (see rt_uidset.h).
 *
 *   slots[hash(uid) & (cap - 1)], probing forward: { uid, added ms }
 *
 * uid 0 marks an empty slot.  Entries are never removed one by one (so a
 * probe never crosses a hole that was not there when it was put): a
 * growth rebuilds the table from the entries still held.
 */
#include <pthread.h>
#include <stdlib.h>

#include "rt_uidset.h"
#include "wb_errors.h"
#include "wb_hash.h"

#define RT_UIDSET_MIN 64 /* slots of an empty set */

typedef struct rt_uidset_slot {
	uint64_t uid, added_ms;
} rt_uidset_slot;

struct rt_uidset {
	pthread_mutex_t mu;
	rt_uidset_slot *slots;
	size_t          cap; /* a power of two */
	size_t          n;   /* slots in use */
	uint64_t        hold_ms;
};

/* rt_uidset_find returns uid's slot, or the empty slot where it would go. */
static rt_uidset_slot *
rt_uidset_find(rt_uidset_slot *slots, size_t cap, uint64_t uid)
{
	size_t i = (size_t)wb_mix64(uid) & (cap - 1);

	while (slots[i].uid != 0 && slots[i].uid != uid) {
		i = (i + 1) & (cap - 1);
	}
	return &slots[i];
}

/* rt_uidset_held tells whether an entry added at added_ms still counts at now_ms. */
static bool
rt_uidset_held(const rt_uidset *s, uint64_t added_ms, uint64_t now_ms)
{
	return now_ms < added_ms || now_ms - added_ms < s->hold_ms;
}

int
rt_uidset_open(rt_uidset **out, uint64_t hold_ms)
{
	rt_uidset *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (s == NULL || (s->slots = calloc(RT_UIDSET_MIN, sizeof(*s->slots))) == NULL) {
		free(s);
		return WB_ENOMEM;
	}
	s->cap = RT_UIDSET_MIN;
	s->hold_ms = hold_ms;
	pthread_mutex_init(&s->mu, NULL);
	*out = s;
	return WB_OK;
}

void
rt_uidset_close(rt_uidset *s)
{
	if (s == NULL) {
		return;
	}
	pthread_mutex_destroy(&s->mu);
	free(s->slots);
	free(s);
}

/* rt_uidset_rebuild moves the entries still held at now_ms into a table with room for one more. */
static int
rt_uidset_rebuild(rt_uidset *s, uint64_t now_ms)
{
	size_t live = 0, cap = RT_UIDSET_MIN;

	for (size_t i = 0; i < s->cap; i++) {
		live += s->slots[i].uid != 0 && rt_uidset_held(s, s->slots[i].added_ms, now_ms);
	}
	while ((live + 1) * 2 > cap) {
		cap *= 2;
	}
	rt_uidset_slot *slots = calloc(cap, sizeof(*slots));
	if (slots == NULL) {
		return WB_ENOMEM;
	}
	for (size_t i = 0; i < s->cap; i++) {
		if (s->slots[i].uid != 0 && rt_uidset_held(s, s->slots[i].added_ms, now_ms)) {
			*rt_uidset_find(slots, cap, s->slots[i].uid) = s->slots[i];
		}
	}
	free(s->slots);
	s->slots = slots;
	s->cap = cap;
	s->n = live;
	return WB_OK;
}

int
rt_uidset_add(rt_uidset *s, uint64_t uid, uint64_t now_ms)
{
	int rc = WB_OK;

	if (uid == 0) {
		return WB_EINVAL;
	}
	pthread_mutex_lock(&s->mu);
	rt_uidset_slot *e = rt_uidset_find(s->slots, s->cap, uid);
	if (e->uid == 0 && (s->n + 1) * 2 > s->cap) {
		if ((rc = rt_uidset_rebuild(s, now_ms)) == WB_OK) {
			e = rt_uidset_find(s->slots, s->cap, uid);
		}
	}
	if (rc == WB_OK) {
		s->n += e->uid == 0;
		*e = (rt_uidset_slot) { uid, now_ms };
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

bool
rt_uidset_has(rt_uidset *s, uint64_t uid, uint64_t now_ms)
{
	bool held;

	if (uid == 0) {
		return false;
	}
	pthread_mutex_lock(&s->mu);
	const rt_uidset_slot *e = rt_uidset_find(s->slots, s->cap, uid);
	held = e->uid == uid && rt_uidset_held(s, e->added_ms, now_ms);
	pthread_mutex_unlock(&s->mu);
	return held;
}

uint64_t
rt_uidset_count(rt_uidset *s, uint64_t now_ms)
{
	uint64_t n = 0;

	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < s->cap; i++) {
		n += s->slots[i].uid != 0 && rt_uidset_held(s, s->slots[i].added_ms, now_ms);
	}
	pthread_mutex_unlock(&s->mu);
	return n;
}
