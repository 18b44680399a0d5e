/*
 * gw_postcache_test.c - the gateway's post cache: hits and misses, the
 * trust period (and past it, the lag of whoever listed the post), deletes (also racing a fetch), replacement, caching off,
 * and concurrent use.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "gw_postcache.h"
#include "wb_hash.h"
#include "wb_id.h"

/* post makes a post record like post.get's in a new message. */
static wb_obj *
post(uint64_t id, uint64_t author, const char *text)
{
	wb_obj *o = wb_msg_new();

	cr_assert_not_null(o);
	cr_assert_eq(wb_set_u64(o, WB_F_ID, id), WB_OK);
	cr_assert_eq(wb_set_u64(o, WB_F_AUTHOR, author), WB_OK);
	cr_assert_eq(wb_set_cstr(o, WB_F_TEXT, text), WB_OK);
	return o;
}

/* listed tells whether id is served when listed by a source lag_ms behind content's deletes, checking its record against author and text. */
static bool
listed(gw_postcache *c, uint64_t id, uint64_t lag_ms, uint64_t author, const char *text)
{
	wb_obj *o = wb_msg_new();
	bool    hit;

	cr_assert_not_null(o);
	if ((hit = gw_postcache_get(c, id, lag_ms, o))) {
		cr_assert_eq(wb_u64(o, WB_F_ID, 0), id);
		cr_assert_eq(wb_u64(o, WB_F_AUTHOR, 0), author);
		cr_assert_str_eq(wb_str(o, WB_F_TEXT, ""), text);
		cr_assert_eq(wb_u64(o, WB_F_TIME, 0), wb_id_ms(id));
	}
	wb_msg_free(o);
	return hit;
}

/* cached tells whether id is served on its own trust (its lister's lag not known). */
static bool
cached(gw_postcache *c, uint64_t id, uint64_t author, const char *text)
{
	return listed(c, id, UINT64_MAX, author, text);
}

Test(gw_postcache, rich_post_keeps_its_columns)
{
	gw_postcache *c;
	wb_obj       *p = post(1234567890125ULL, 7, ""), *o = wb_msg_new();

	cr_assert_eq(wb_set_cstr(p, WB_F_TITLE, "a title"), WB_OK);
	cr_assert_eq(wb_set_cstr(p, WB_F_CATEGORY, "cats"), WB_OK);
	wb_obj *im = wb_add_objs(p, WB_F_IMAGES, 2);
	cr_assert_eq(wb_set_cstr(&im[0], WB_F_MEDIA, "7-1"), WB_OK);
	cr_assert_eq(wb_set_u64(&im[0], WB_F_WIDTH, 640), WB_OK);
	cr_assert_eq(wb_set_cstr(&im[1], WB_F_MEDIA, "7-2"), WB_OK);
	cr_assert_eq(wb_set_cstr(&im[1], WB_F_ALT, "two"), WB_OK);
	cr_assert_eq(gw_postcache_open(&c, 1024, 60000), WB_OK);
	gw_postcache_put(c, gw_postcache_epoch(c), p);
	cr_assert(cached(c, 1234567890125ULL, 7, ""));
	cr_assert(gw_postcache_get(c, 1234567890125ULL, UINT64_MAX, o));
	cr_assert_eq(wb_set_u64(p, WB_F_TIME, wb_id_ms(1234567890125ULL)), WB_OK);
	cr_assert(wb_equal(o, p), "the record comes back whole");
	wb_msg_free(o);
	wb_msg_free(p);
	gw_postcache_close(c);
}

Test(gw_postcache, hit_miss_and_forget)
{
	gw_postcache *c;
	wb_obj       *p = post(1234567890123ULL, 7, "hello \xe2\x9c\x93");

	cr_assert_eq(gw_postcache_open(&c, 1024, 60000), WB_OK);
	cr_assert_not(cached(c, 1234567890123ULL, 7, ""));
	gw_postcache_put(c, gw_postcache_epoch(c), p);
	cr_assert(cached(c, 1234567890123ULL, 7, "hello \xe2\x9c\x93"));
	cr_assert_not(cached(c, 1234567890124ULL, 7, ""), "another id misses");
	gw_postcache_forget(c, 1234567890123ULL);
	cr_assert_not(cached(c, 1234567890123ULL, 7, ""), "a deleted post is not served");
	gw_postcache_forget(c, 99); /* not cached: only the epoch moves */
	wb_msg_free(p);
	gw_postcache_close(c);
	gw_postcache_close(NULL);
}

Test(gw_postcache, a_put_that_raced_a_delete_is_dropped)
{
	gw_postcache *c;
	wb_obj       *p = post(5000, 3, "soon deleted");

	cr_assert_eq(gw_postcache_open(&c, 1024, 60000), WB_OK);
	uint64_t before = gw_postcache_epoch(c); /* a reader starts its post.get */
	gw_postcache_forget(c, 5000);            /* the post is deleted meanwhile */
	gw_postcache_put(c, before, p);          /* the reader's answer comes back */
	cr_assert_not(cached(c, 5000, 3, ""), "the fetched copy must not outlive the delete");
	gw_postcache_put(c, gw_postcache_epoch(c), p);
	cr_assert(cached(c, 5000, 3, "soon deleted"), "a put after the delete is kept");
	wb_msg_free(p);
	gw_postcache_close(c);
}

Test(gw_postcache, entries_expire)
{
	gw_postcache *c;
	wb_obj       *p = post(77, 1, "brief");

	cr_assert_eq(gw_postcache_open(&c, 64, 500), WB_OK);
	gw_postcache_put(c, gw_postcache_epoch(c), p);
	cr_assert(cached(c, 77, 1, "brief"));
	usleep(600 * 1000);
	cr_assert_not(cached(c, 77, 1, ""), "trusted for 500 ms only");
	cr_assert(listed(c, 77, 499, 1, "brief"), "listed by an inbox that holds every delete");
	cr_assert_not(listed(c, 77, 500, 1, ""), "listed by an inbox too far behind");
	gw_postcache_forget(c, 77);
	cr_assert_not(listed(c, 77, 0, 1, ""), "a post deleted here is gone whoever lists it");
	wb_msg_free(p);
	gw_postcache_close(c);
}

Test(gw_postcache, bounded_and_off)
{
	gw_postcache *c;
	size_t        hits = 0;

	/* 64 slots: 1000 posts cannot all stay, the newest puts of a set win */
	cr_assert_eq(gw_postcache_open(&c, 64, 60000), WB_OK);
	for (uint64_t id = 1; id <= 1000; id++) {
		wb_obj *p = post(id, id % 5 + 1, "x");
		gw_postcache_put(c, gw_postcache_epoch(c), p);
		wb_msg_free(p);
	}
	for (uint64_t id = 1; id <= 1000; id++) {
		hits += cached(c, id, id % 5 + 1, "x");
	}
	cr_assert(hits > 0 && hits <= 64, "%zu hits in 64 slots", hits);
	cr_assert(cached(c, 1000, 1000 % 5 + 1, "x"), "the last put is there");
	gw_postcache_close(c);

	/* records without an author or text are not cached */
	cr_assert_eq(gw_postcache_open(&c, 64, 60000), WB_OK);
	wb_obj *bad = wb_msg_new();
	wb_set_u64(bad, WB_F_ID, 9);
	gw_postcache_put(c, gw_postcache_epoch(c), bad);
	cr_assert_not(cached(c, 9, 0, ""));
	wb_msg_free(bad);
	gw_postcache_close(c);

	/* off: every lookup misses */
	cr_assert_eq(gw_postcache_open(&c, 0, 60000), WB_OK);
	wb_obj *p = post(1, 1, "x");
	gw_postcache_put(c, gw_postcache_epoch(c), p);
	cr_assert_not(cached(c, 1, 1, "x"));
	gw_postcache_forget(c, 1);
	wb_msg_free(p);
	gw_postcache_close(c);
}

static gw_postcache *shared;

static void *
hammer(void *arg)
{
	uint64_t base = (uint64_t)(uintptr_t)arg;

	for (uint64_t i = 0; i < 20000; i++) {
		uint64_t id = (base + i) % 3000 + 1;
		wb_obj  *o = wb_msg_new();

		if (i % 3 == 0) {
			wb_obj *p = post(id, id, "same text for every post");
			gw_postcache_put(shared, gw_postcache_epoch(shared), p);
			wb_msg_free(p);
		} else if (i % 97 == 0) {
			gw_postcache_forget(shared, id);
		} else if (gw_postcache_get(shared, id, UINT64_MAX, o)) {
			cr_assert_eq(wb_u64(o, WB_F_AUTHOR, 0), id, "a record is never torn");
		}
		wb_msg_free(o);
	}
	return NULL;
}

/* Posts whose ids share a set all stay, up to its four slots; a fifth
 * takes the slot put longest ago. */
Test(gw_postcache, a_set_keeps_four_posts)
{
	gw_postcache *c;
	uint64_t      ids[5];
	int           n = 0;

	cr_assert_eq(gw_postcache_open(&c, 64, 60000), WB_OK); /* 16 sets of 4 */
	for (uint64_t id = 1; n < 5; id++) {
		if ((wb_mix64(id) & 15) == (wb_mix64(1) & 15)) {
			ids[n++] = id;
		}
	}
	for (int k = 0; k < 4; k++) {
		wb_obj *p = post(ids[k], 7, "same set");
		gw_postcache_put(c, gw_postcache_epoch(c), p);
		wb_msg_free(p);
		usleep(2000); /* puts a few ms apart: their order is their age */
	}
	for (int k = 0; k < 4; k++) {
		cr_assert(cached(c, ids[k], 7, "same set"), "post %d of the set was pushed out", k);
	}
	wb_obj *p = post(ids[4], 7, "same set");
	gw_postcache_put(c, gw_postcache_epoch(c), p);
	wb_msg_free(p);
	cr_assert_not(cached(c, ids[0], 7, "same set"), "the oldest put stayed");
	for (int k = 1; k < 5; k++) {
		cr_assert(cached(c, ids[k], 7, "same set"), "post %d was pushed out", k);
	}
	gw_postcache_forget(c, ids[2]);
	cr_assert_not(cached(c, ids[2], 7, "same set"));
	cr_assert(cached(c, ids[3], 7, "same set"), "a forget took another post");
	gw_postcache_close(c);
}

Test(gw_postcache, concurrent_use, .timeout = 60)
{
	pthread_t th[8];

	cr_assert_eq(gw_postcache_open(&shared, 1024, 60000), WB_OK);
	for (uintptr_t i = 0; i < 8; i++) {
		cr_assert_eq(pthread_create(&th[i], NULL, hammer, (void *)(i * 7919)), 0);
	}
	for (int i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
	}
	gw_postcache_close(shared);
}
