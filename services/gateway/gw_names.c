/*
 * gw_names.c - a bounded, lock-striped cache of uid <-> username.
 *
 *   by_uid  [hash(uid)  & mask] -> { uid, len, name }
 *   by_name [hash(name) & mask] -> { uid, len, name }   (name lowercased)
 *
 * Each table is in sets of GW_NAMES_WAYS slots: an entry may take any
 * slot of its set, a newcomer taking the one put longest ago, so memory
 * is fixed at open.  (Direct-mapped, 5% of 4,000 authors shared a slot
 * with another and pushed each other out: a user.get in one home read in
 * six.)  A set is read and written under one of GW_NAMES_LOCKS mutexes
 * (set index modulo the count).
 *
 * Forgetting a deleted uid looks up its name by_uid and drops both
 * entries, then walks the whole of by_name for any other entry of the
 * uid (its by_uid entry may have been pushed out first): a deletion is
 * rare, the walk a few milliseconds.  The uid then stays in `gone` for
 * GW_NAMES_GONE_MS, and puts of it are ignored.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "gw_names.h"
#include "rt_uidset.h"
#include "wb_clock.h"
#include "wb_errors.h"
#include "wb_hash.h"

#define GW_NAMES_LOCKS 64
#define GW_NAMES_WAYS  4 /* slots an entry may take */

typedef struct gw_names_slot {
	uint64_t uid;  /* 0: empty */
	uint32_t tick; /* when it was put (the table's count of puts) */
	uint8_t  len;
	char     name[GW_NAME_MAX + 1];
} gw_names_slot;

typedef struct gw_names_table {
	gw_names_slot   *slots;
	_Atomic uint32_t ticks; /* puts so far */
	pthread_mutex_t  locks[GW_NAMES_LOCKS];
} gw_names_table;

struct gw_names {
	size_t         mask; /* of the set index */
	gw_names_table by_uid, by_name;
	rt_uidset     *gone; /* uids forgotten lately: not put back */
};

/* gw_names_lower copies name lowercased into out; false if it cannot be a username. */
static bool
gw_names_lower(char *out, const char *name, size_t len)
{
	if (len == 0 || len > GW_NAME_MAX) {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		char c = name[i];

		out[i] = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
	}
	out[len] = '\0';
	return true;
}

static uint64_t
gw_names_hash_name(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		h = (h ^ (uint8_t)s[i]) * 0x100000001b3ULL;
	}
	return wb_mix64(h);
}

static int
gw_names_table_init(gw_names_table *t, size_t nslots)
{
	if ((t->slots = calloc(nslots, sizeof(gw_names_slot))) == NULL) {
		return WB_ENOMEM;
	}
	for (int i = 0; i < GW_NAMES_LOCKS; i++) {
		pthread_mutex_init(&t->locks[i], NULL);
	}
	return WB_OK;
}

static void
gw_names_table_fini(gw_names_table *t)
{
	if (t->slots == NULL) {
		return;
	}
	for (int i = 0; i < GW_NAMES_LOCKS; i++) {
		pthread_mutex_destroy(&t->locks[i]);
	}
	free(t->slots);
}

int
gw_names_open(gw_names **out, size_t slots)
{
	gw_names *n;
	size_t    size = 64;

	*out = NULL;
	if (slots == 0) {
		slots = GW_NAMES_SLOTS;
	}
	while (size < slots && size < ((size_t)1 << 24)) {
		size <<= 1;
	}
	if ((n = calloc(1, sizeof(*n))) == NULL) {
		return WB_ENOMEM;
	}
	n->mask = size / GW_NAMES_WAYS - 1;
	if (gw_names_table_init(&n->by_uid, size) != WB_OK ||
	    gw_names_table_init(&n->by_name, size) != WB_OK ||
	    rt_uidset_open(&n->gone, GW_NAMES_GONE_MS) != WB_OK) {
		gw_names_close(n);
		return WB_ENOMEM;
	}
	*out = n;
	return WB_OK;
}

void
gw_names_close(gw_names *n)
{
	if (n == NULL) {
		return;
	}
	gw_names_table_fini(&n->by_uid);
	gw_names_table_fini(&n->by_name);
	rt_uidset_close(n->gone);
	free(n);
}

/* gw_names_set locks set i of t and returns its first slot. */
static gw_names_slot *
gw_names_set(gw_names_table *t, size_t i)
{
	pthread_mutex_lock(&t->locks[i % GW_NAMES_LOCKS]);
	return &t->slots[i * GW_NAMES_WAYS];
}

/* gw_names_unset unlocks set i of t. */
static void
gw_names_unset(gw_names_table *t, size_t i)
{
	pthread_mutex_unlock(&t->locks[i % GW_NAMES_LOCKS]);
}

/* gw_names_same tells whether slot s holds uid (by_name false) or the lowercased name key (by_name true). */
static bool
gw_names_same(const gw_names_slot *s, bool by_name, uint64_t uid, const char *key, size_t len)
{
	if (!by_name) {
		return s->uid == uid;
	}
	return s->uid != 0 && s->len == len && memcmp(s->name, key, len) == 0;
}

bool
gw_names_name(gw_names *n, uint64_t uid, char *out)
{
	size_t i = wb_mix64(uid) & n->mask;
	bool   hit = false;

	if (uid == 0) {
		return false;
	}
	gw_names_slot *s = gw_names_set(&n->by_uid, i);
	for (int w = 0; w < GW_NAMES_WAYS && !hit; w++) {
		if ((hit = gw_names_same(&s[w], false, uid, NULL, 0))) {
			memcpy(out, s[w].name, (size_t)s[w].len + 1);
		}
	}
	gw_names_unset(&n->by_uid, i);
	return hit;
}

bool
gw_names_uid(gw_names *n, const char *name, size_t len, uint64_t *uid)
{
	char key[GW_NAME_MAX + 1];
	bool hit = false;

	if (!gw_names_lower(key, name, len)) {
		return false;
	}
	size_t         i = gw_names_hash_name(key, len) & n->mask;
	gw_names_slot *s = gw_names_set(&n->by_name, i);
	for (int w = 0; w < GW_NAMES_WAYS && !hit; w++) {
		if ((hit = gw_names_same(&s[w], true, 0, key, len))) {
			*uid = s[w].uid;
		}
	}
	gw_names_unset(&n->by_name, i);
	return hit;
}

/* gw_names_table_put keeps uid and name in set i of t, in the slot that has the same key (uid, or name if by_name), else an empty one, else the one put longest ago; not a uid forgotten lately (checked under the set's lock, which gw_names_forget's walk takes after marking it). */
static void
gw_names_table_put(gw_names *n, gw_names_table *t, size_t i, bool by_name, uint64_t uid,
    const char *name, size_t len)
{
	uint32_t       tick = atomic_fetch_add_explicit(&t->ticks, 1, memory_order_relaxed);
	gw_names_slot *s = gw_names_set(t, i), *v = NULL;

	if (rt_uidset_has(n->gone, uid, wb_now_ms())) {
		gw_names_unset(t, i);
		return;
	}

	for (int w = 0; w < GW_NAMES_WAYS && v == NULL; w++) {
		if (gw_names_same(&s[w], by_name, uid, name, len)) {
			v = &s[w];
		}
	}
	if (v == NULL) { /* an empty slot, else the one put longest ago (across a wrap too) */
		v = &s[0];
		for (int w = 1; w < GW_NAMES_WAYS && v->uid != 0; w++) {
			if (s[w].uid == 0 || (int32_t)(s[w].tick - v->tick) < 0) {
				v = &s[w];
			}
		}
	}
	v->uid = uid;
	v->tick = tick;
	v->len = (uint8_t)len;
	memcpy(v->name, name, len);
	v->name[len] = '\0';
	gw_names_unset(t, i);
}

void
gw_names_put(gw_names *n, uint64_t uid, const char *name, size_t len)
{
	char key[GW_NAME_MAX + 1];

	if (uid == 0 || name == NULL || !gw_names_lower(key, name, len) ||
	    memchr(name, '\0', len) != NULL) {
		return;
	}
	gw_names_table_put(n, &n->by_uid, wb_mix64(uid) & n->mask, false, uid, name, len);
	gw_names_table_put(
	    n, &n->by_name, gw_names_hash_name(key, len) & n->mask, true, uid, key, len);
}

/* gw_names_drop empties the slots of set i of t that hold uid. */
static void
gw_names_drop(gw_names_table *t, size_t i, uint64_t uid)
{
	gw_names_slot *s = gw_names_set(t, i);

	for (int w = 0; w < GW_NAMES_WAYS; w++) {
		if (s[w].uid == uid) {
			memset(&s[w], 0, sizeof(s[w]));
		}
	}
	gw_names_unset(t, i);
}

void
gw_names_forget(gw_names *n, uint64_t uid)
{
	if (uid == 0) {
		return;
	}
	/* first, so that a put racing this walk is refused from here on */
	(void)rt_uidset_add(n->gone, uid, wb_now_ms());
	gw_names_drop(&n->by_uid, wb_mix64(uid) & n->mask, uid);
	for (size_t i = 0; i <= n->mask; i++) {
		gw_names_drop(&n->by_name, i, uid);
	}
}
