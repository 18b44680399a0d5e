/*
 * gw_names.c - a bounded, lock-striped cache of uid <-> username.
 *
 *   by_uid  [hash(uid)  & mask] -> { uid, len, name }
 *   by_name [hash(name) & mask] -> { uid, len, name }   (name lowercased)
 *
 * Each table is direct-mapped: a put overwrites its slot, so memory is
 * fixed at open.  A slot is read and written under one of GW_NAMES_LOCKS
 * mutexes (slot index modulo the count), held for a 48-byte copy.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "wb_hash.h"
#include "gw_names.h"
#include "wb_errors.h"

#define GW_NAMES_LOCKS 64

typedef struct gw_names_slot {
	uint64_t uid; /* 0: empty */
	uint8_t  len;
	char     name[GW_NAME_MAX + 1];
} gw_names_slot;

typedef struct gw_names_table {
	gw_names_slot  *slots;
	pthread_mutex_t locks[GW_NAMES_LOCKS];
} gw_names_table;

struct gw_names {
	size_t         mask;
	gw_names_table by_uid, by_name;
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
	n->mask = size - 1;
	if (gw_names_table_init(&n->by_uid, size) != WB_OK ||
	    gw_names_table_init(&n->by_name, size) != WB_OK) {
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
	free(n);
}

bool
gw_names_name(gw_names *n, uint64_t uid, char *out)
{
	size_t         i = wb_mix64(uid) & n->mask;
	gw_names_slot *s = &n->by_uid.slots[i];
	bool           hit;

	if (uid == 0) {
		return false;
	}
	pthread_mutex_lock(&n->by_uid.locks[i % GW_NAMES_LOCKS]);
	if ((hit = s->uid == uid)) {
		memcpy(out, s->name, (size_t)s->len + 1);
	}
	pthread_mutex_unlock(&n->by_uid.locks[i % GW_NAMES_LOCKS]);
	return hit;
}

bool
gw_names_uid(gw_names *n, const char *name, size_t len, uint64_t *uid)
{
	char           key[GW_NAME_MAX + 1];
	size_t         i;
	gw_names_slot *s;
	bool           hit;

	if (!gw_names_lower(key, name, len)) {
		return false;
	}
	i = gw_names_hash_name(key, len) & n->mask;
	s = &n->by_name.slots[i];
	pthread_mutex_lock(&n->by_name.locks[i % GW_NAMES_LOCKS]);
	if ((hit = s->uid != 0 && s->len == len && memcmp(s->name, key, len) == 0)) {
		*uid = s->uid;
	}
	pthread_mutex_unlock(&n->by_name.locks[i % GW_NAMES_LOCKS]);
	return hit;
}

static void
gw_names_table_put(gw_names_table *t, size_t i, uint64_t uid, const char *name, size_t len)
{
	gw_names_slot *s = &t->slots[i];

	pthread_mutex_lock(&t->locks[i % GW_NAMES_LOCKS]);
	s->uid = uid;
	s->len = (uint8_t)len;
	memcpy(s->name, name, len);
	s->name[len] = '\0';
	pthread_mutex_unlock(&t->locks[i % GW_NAMES_LOCKS]);
}

void
gw_names_put(gw_names *n, uint64_t uid, const char *name, size_t len)
{
	char key[GW_NAME_MAX + 1];

	if (uid == 0 || name == NULL || !gw_names_lower(key, name, len) ||
	    memchr(name, '\0', len) != NULL) {
		return;
	}
	gw_names_table_put(&n->by_uid, wb_mix64(uid) & n->mask, uid, name, len);
	gw_names_table_put(&n->by_name, gw_names_hash_name(key, len) & n->mask, uid, key, len);
}
