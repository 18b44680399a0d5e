/*
 * gw_names_test.c - the gateway's username cache: lookups both ways,
 * letter case, bounds, sets of four, eviction, concurrent use, and a
 * deleted account forgotten for good.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "gw_names.h"
#include "wb_hash.h"

Test(gw_names, both_ways)
{
	gw_names *n;
	char      name[GW_NAME_MAX + 1];
	uint64_t  uid = 0;

	cr_assert_eq(gw_names_open(&n, 0), 0);
	cr_assert(!gw_names_name(n, 42, name));
	cr_assert(!gw_names_uid(n, "alice", 5, &uid));
	gw_names_put(n, 42, "alice", 5);
	cr_assert(gw_names_name(n, 42, name));
	cr_assert_str_eq(name, "alice");
	cr_assert(gw_names_uid(n, "alice", 5, &uid));
	cr_assert_eq(uid, 42);
	uid = 0;
	cr_assert(gw_names_uid(n, "ALIce", 5, &uid), "names match in any letter case");
	cr_assert_eq(uid, 42);
	cr_assert(!gw_names_uid(n, "alic", 4, &uid));
	cr_assert(!gw_names_uid(n, "alice_", 6, &uid));
	cr_assert(!gw_names_name(n, 43, name));
	gw_names_close(n);
	gw_names_close(NULL);
}

Test(gw_names, refuses_what_cannot_be_a_name)
{
	gw_names *n;
	char      name[GW_NAME_MAX + 1], big[GW_NAME_MAX + 2];
	uint64_t  uid;

	cr_assert_eq(gw_names_open(&n, 64), 0);
	memset(big, 'a', sizeof(big));
	gw_names_put(n, 1, big, sizeof(big)); /* too long */
	gw_names_put(n, 2, "", 0);
	gw_names_put(n, 3, "a\0b", 3);
	gw_names_put(n, 0, "zero", 4);
	gw_names_put(n, 4, NULL, 4);
	for (uint64_t u = 0; u <= 4; u++) {
		cr_assert(!gw_names_name(n, u, name), "uid %llu", (unsigned long long)u);
	}
	cr_assert(!gw_names_uid(n, big, sizeof(big), &uid));
	cr_assert(!gw_names_uid(n, "zero", 4, &uid));
	cr_assert(!gw_names_uid(n, "", 0, &uid));
	memset(big, 'b', GW_NAME_MAX);
	gw_names_put(n, 5, big, GW_NAME_MAX); /* the longest allowed */
	cr_assert(gw_names_name(n, 5, name));
	cr_assert_eq(strlen(name), GW_NAME_MAX);
	gw_names_close(n);
}

Test(gw_names, bounded)
{
	gw_names *n;
	char      name[GW_NAME_MAX + 1], want[32];
	uint64_t  uid;
	int       hits = 0;

	cr_assert_eq(gw_names_open(&n, 64), 0);
	for (uint64_t u = 1; u <= 10000; u++) {
		snprintf(want, sizeof(want), "user%llu", (unsigned long long)u);
		gw_names_put(n, u, want, strlen(want));
	}
	for (uint64_t u = 1; u <= 10000; u++) {
		snprintf(want, sizeof(want), "user%llu", (unsigned long long)u);
		if (gw_names_name(n, u, name)) {
			cr_assert_str_eq(name, want, "a hit is always the right name");
			hits++;
		}
		if (gw_names_uid(n, want, strlen(want), &uid)) {
			cr_assert_eq(uid, u);
		}
	}
	cr_assert_leq(hits, 64, "at most the table's size is kept");
	cr_assert_gt(hits, 0);
	gw_names_close(n);
}

/* Five uids of one set (64 slots: 16 sets of 4): four stay together, and
 * the fifth takes the slot of the one put longest ago. */
Test(gw_names, a_set_keeps_four_names)
{
	gw_names *n;
	char      name[GW_NAME_MAX + 1], want[5][32];
	uint64_t  same[5];
	int       k = 0;

	cr_assert_eq(gw_names_open(&n, 64), 0);
	for (uint64_t u = 1; k < 5; u++) {
		if ((wb_mix64(u) & 15) == 3) {
			snprintf(want[k], sizeof(want[k]), "user%llu", (unsigned long long)u);
			same[k++] = u;
		}
	}
	for (int i = 0; i < 4; i++) {
		gw_names_put(n, same[i], want[i], strlen(want[i]));
	}
	for (int i = 0; i < 4; i++) {
		cr_assert(gw_names_name(n, same[i], name), "uid %d of the set was pushed out", i);
		cr_assert_str_eq(name, want[i]);
	}
	gw_names_put(n, same[0], want[0], strlen(want[0])); /* same[1] is now the oldest */
	gw_names_put(n, same[4], want[4], strlen(want[4]));
	cr_assert_not(gw_names_name(n, same[1], name), "the oldest put leaves");
	for (int i = 0; i < 5; i++) {
		uint64_t uid = 0;
		if (i != 1) {
			cr_assert(gw_names_name(n, same[i], name), "uid %d pushed out", i);
			cr_assert_str_eq(name, want[i]);
			cr_assert(
			    gw_names_uid(n, want[i], strlen(want[i]), &uid) && uid == same[i]);
		}
	}
	gw_names_close(n);
}

static gw_names *shared;

static void *
names_worker(void *arg)
{
	uint64_t base = (uint64_t)(uintptr_t)arg * 100000;
	char     want[32], name[GW_NAME_MAX + 1];
	uint64_t uid;

	for (uint64_t i = 1; i <= 20000; i++) {
		uint64_t u = base + i % 500 + 1;

		snprintf(want, sizeof(want), "u%llu", (unsigned long long)u);
		gw_names_put(shared, u, want, strlen(want));
		if (gw_names_name(shared, u, name) && strcmp(name, want) != 0) {
			return (void *)1;
		}
		if (gw_names_uid(shared, want, strlen(want), &uid) && uid != u) {
			return (void *)1;
		}
	}
	return NULL;
}

Test(gw_names, concurrent, .timeout = 60)
{
	pthread_t t[4];
	void     *bad;

	cr_assert_eq(gw_names_open(&shared, 256), 0);
	for (uintptr_t i = 0; i < 4; i++) {
		pthread_create(&t[i], NULL, names_worker, (void *)i);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], &bad);
		cr_assert_null(bad, "a lookup gave another user's entry");
	}
	gw_names_close(shared);
}

Test(gw_names, forgets_a_deleted_account)
{
	gw_names *n;
	char      name[GW_NAME_MAX + 1];
	uint64_t  uid = 0;

	cr_assert_eq(gw_names_open(&n, 64), 0); /* small: sets shared with other names */
	gw_names_put(n, 42, "alice", 5);
	for (uint64_t u = 100; u < 140; u++) {
		char other[16];
		snprintf(other, sizeof(other), "user%llu", (unsigned long long)u);
		gw_names_put(n, u, other, strlen(other));
	}
	gw_names_put(n, 42, "alice", 5); /* the newest of its sets again */
	cr_assert(gw_names_uid(n, "alice", 5, &uid) && uid == 42);
	gw_names_forget(n, 42);
	cr_assert(!gw_names_name(n, 42, name), "the uid still has its name");
	cr_assert(!gw_names_uid(n, "alice", 5, &uid), "the name still resolves to the dead uid");
	/* an answer fetched before the deletion and put after it stays out */
	gw_names_put(n, 42, "alice", 5);
	cr_assert(!gw_names_uid(n, "alice", 5, &uid), "put back after it was forgotten");
	/* the name held by a new account later resolves to that one */
	gw_names_put(n, 43, "alice", 5);
	cr_assert(gw_names_uid(n, "alice", 5, &uid));
	cr_assert_eq(uid, 43);
	/* and the others are untouched, where they still are */
	size_t kept = 0;
	for (uint64_t u = 100; u < 140; u++) {
		kept += gw_names_name(n, u, name);
	}
	cr_assert_gt(kept, 0);
	gw_names_forget(n, 0);   /* no such uid: nothing happens */
	gw_names_forget(n, 999); /* not known: nothing happens */
	cr_assert(gw_names_uid(n, "alice", 5, &uid) && uid == 43);
	gw_names_close(n);
}
