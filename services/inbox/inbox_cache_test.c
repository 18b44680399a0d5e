/*
 * inbox_cache_test.c - the inbox cache answers exactly what the store
 * would: a model row (a sorted array) takes every write, the cache is
 * told of each as the fan-out tells it, and every read the cache answers
 * must equal the model's newest cells.  A fill that raced a write is
 * refused.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "inbox_cache.h"
#include "wb_errors.h"

#define MODEL_MAX 256

/* A row as the store holds it: ids newest first. */
typedef struct model {
	inbox_cell cells[MODEL_MAX];
	size_t     n;
} model;

static void
model_put(model *m, inbox_cell c)
{
	size_t p = 0;

	while (p < m->n && m->cells[p].id > c.id) {
		p++;
	}
	if (p < m->n && m->cells[p].id == c.id) {
		m->cells[p] = c;
		return;
	}
	cr_assert(m->n < MODEL_MAX);
	memmove(&m->cells[p + 1], &m->cells[p], (m->n - p) * sizeof(c));
	m->cells[p] = c;
	m->n++;
}

static void
model_del(model *m, uint64_t id)
{
	for (size_t p = 0; p < m->n; p++) {
		if (m->cells[p].id == id) {
			memmove(
			    &m->cells[p], &m->cells[p + 1], (m->n - p - 1) * sizeof(m->cells[0]));
			m->n--;
			return;
		}
	}
}

/* model_read is a read through the cache: a hit must equal the model, a miss fills from it. */
static bool
model_read(inbox_cache *c, uint64_t uid, const model *m, size_t want, unsigned window)
{
	inbox_cell out[INBOX_CACHE_CELLS];
	uint64_t   gen;
	int        got = inbox_cache_get(c, uid, want, out, &gen);
	size_t     expect = m->n < want ? m->n : want;

	if (got < 0) {
		size_t k = m->n < window ? m->n : window;
		inbox_cache_fill(c, uid, gen, m->cells, k, m->n <= window);
		return false;
	}
	cr_assert_eq((size_t)got, expect, "uid %llu: %d cells, the store has %zu",
	    (unsigned long long)uid, got, expect);
	for (size_t i = 0; i < expect; i++) {
		cr_assert_eq(out[i].id, m->cells[i].id, "cell %zu", i);
		cr_assert_eq(out[i].author, m->cells[i].author, "cell %zu", i);
	}
	return true;
}

Test(inbox_cache, no_cache_never_answers)
{
	inbox_cache *c = (inbox_cache *)1;
	inbox_cell   out[1];
	uint64_t     gen;

	cr_assert_eq(inbox_cache_open(&c, 0, 24), WB_OK);
	cr_assert_null(c);
	cr_assert_eq(inbox_cache_get(c, 1, 1, out, &gen), -1);
	inbox_cache_put(c, 1, (inbox_cell) { 1, 2 });
	inbox_cache_del(c, 1, 1);
	inbox_cache_drop(c, 1);
	inbox_cache_clear(c);
	inbox_cache_close(c);
	cr_assert_eq(inbox_cache_window(c), 0);
}

Test(inbox_cache, a_fill_then_writes_stay_equal_to_the_store)
{
	inbox_cache *c;
	model        m[8] = { 0 };
	unsigned     window = 12;
	size_t       hits = 0;

	cr_assert_eq(inbox_cache_open(&c, 4, window), WB_OK); /* 8 readers, 4 slots: evictions */
	cr_assert_eq(inbox_cache_window(c), window);
	srand(7);
	for (int step = 0; step < 20000; step++) {
		uint64_t uid = 1 + (uint64_t)(rand() % 8);
		model   *r = &m[uid - 1];
		int      what = rand() % 10;

		if (what < 4 && r->n < MODEL_MAX) { /* a post, new or replayed, any age */
			inbox_cell cell = { 1 + (uint64_t)(rand() % 400), 1000 + uid };
			model_put(r, cell);
			inbox_cache_put(c, uid, cell);
		} else if (what < 6 && r->n > 0) { /* a delete, of a cell kept or not */
			uint64_t id = r->cells[(size_t)rand() % r->n].id;
			model_del(r, id);
			inbox_cache_del(c, uid, id);
		} else if (what == 6 && rand() % 20 == 0) { /* an unfollow or backfill */
			r->n /= 2;
			inbox_cache_drop(c, uid);
		} else {
			hits += model_read(c, uid, r, 1 + (size_t)rand() % window, window);
		}
	}
	cr_assert_gt(hits, 1000, "the cache answered only %zu reads", hits);
	inbox_cache_clear(c);
	for (uint64_t uid = 1; uid <= 8; uid++) {
		inbox_cell out[1];
		uint64_t   gen;
		cr_assert_eq(inbox_cache_get(c, uid, 1, out, &gen), -1, "cleared");
	}
	inbox_cache_close(c);
}

Test(inbox_cache, a_fill_older_than_a_write_is_refused)
{
	inbox_cache *c;
	inbox_cell   old[2] = { { 5, 1 }, { 3, 1 } }, out[4];
	uint64_t     gen;

	cr_assert_eq(inbox_cache_open(&c, 16, 24), WB_OK);
	cr_assert_eq(inbox_cache_get(c, 9, 2, out, &gen), -1);
	/* the store took post 7 after the reader's miss, before its fill */
	inbox_cache_put(c, 9, (inbox_cell) { 7, 1 });
	inbox_cache_fill(c, 9, gen, old, 2, true);
	cr_assert_eq(inbox_cache_get(c, 9, 2, out, &gen), -1, "a stale fill was kept");
	/* a fill after the write holds */
	inbox_cell now[3] = { { 7, 1 }, { 5, 1 }, { 3, 1 } };
	inbox_cache_fill(c, 9, gen, now, 3, true);
	cr_assert_eq(inbox_cache_get(c, 9, 4, out, &gen), 3, "complete: fewer than asked");
	cr_assert_eq(out[0].id, 7);
	cr_assert_eq(out[2].id, 3);
	inbox_cache_close(c);
}

Test(inbox_cache, a_row_longer_than_the_window_is_not_complete)
{
	inbox_cache *c;
	inbox_cell   cells[4] = { { 40, 1 }, { 30, 1 }, { 20, 1 }, { 10, 1 } }, out[4];
	uint64_t     gen;

	cr_assert_eq(inbox_cache_open(&c, 16, 3), WB_OK);
	cr_assert_eq(inbox_cache_get(c, 2, 3, out, &gen), -1);
	inbox_cache_fill(c, 2, gen, cells, 4, true); /* more than the window: cut */
	cr_assert_eq(inbox_cache_get(c, 2, 3, out, &gen), 3);
	inbox_cache_del(c, 2, 30);
	cr_assert_eq(inbox_cache_get(c, 2, 3, out, &gen), -1, "the fourth cell is not known");
	cr_assert_eq(inbox_cache_get(c, 2, 2, out, &gen), 2);
	cr_assert_eq(out[1].id, 20);
	inbox_cache_put(c, 2, (inbox_cell) { 5, 1 }); /* older than every kept cell */
	cr_assert_eq(inbox_cache_get(c, 2, 3, out, &gen), -1);
	inbox_cache_close(c);
}

/* Fills interleaved with writes, in every order a seeded generator picks:
 * a reader's miss (gen taken, the store read) and its fill are two steps,
 * and any number of puts and drops (a follow or unfollow) may come
 * between them, as they may between a worker's scan and its fill.  A hit
 * must always equal the store's newest cells, so a fill that a write
 * overtook must be refused. */
Test(inbox_cache, fills_overtaken_by_writes_are_refused)
{
	inbox_cache *c;
	model        m = { 0 };
	inbox_cell   snap[8], out[8];
	uint64_t     gen = 0, id = 0;
	size_t       k = 0, hits = 0, refused = 0;
	bool         pending = false;

	cr_assert_eq(inbox_cache_open(&c, 1, 8), WB_OK);
	srand(3);
	for (int step = 0; step < 50000; step++) {
		int what = rand() % 8;

		if (what < 3) { /* a post reaches the store, then the cache */
			inbox_cell cell = { ++id, 3 };
			m.n -= m.n == MODEL_MAX; /* the store's cap: the oldest goes */
			model_put(&m, cell);
			inbox_cache_put(c, 1, cell);
		} else if (what == 3) { /* a follow or unfollow */
			inbox_cache_drop(c, 1);
		} else if (what < 6 && !pending) { /* a read: a hit, or a miss and its scan */
			int    got = inbox_cache_get(c, 1, 8, out, &gen);
			size_t want = m.n < 8 ? m.n : 8;

			if (got >= 0) {
				cr_assert_eq((size_t)got, want, "step %d: %d cells, the store %zu",
				    step, got, want);
				for (size_t i = 0; i < want; i++) {
					cr_assert_eq(
					    out[i].id, m.cells[i].id, "step %d cell %zu", step, i);
				}
				hits++;
			} else {
				k = want;
				memcpy(snap, m.cells, k * sizeof(snap[0]));
				pending = true;
			}
		} else if (pending) { /* the miss's fill, maybe after writes */
			uint64_t now;
			bool     stale = k != (m.n < 8 ? m.n : 8) ||
			             (k > 0 && memcmp(snap, m.cells, k * sizeof(snap[0])) != 0);

			inbox_cache_fill(c, 1, gen, snap, k, k < 8);
			if (stale && inbox_cache_get(c, 1, 1, out, &now) >= 0) {
				cr_assert_fail(
				    "step %d: a fill overtaken by a write was kept", step);
			}
			refused += stale;
			pending = false;
		}
	}
	cr_assert_gt(hits, 1000, "%zu hits", hits);
	cr_assert_gt(refused, 100, "%zu stale fills: no write ever overtook a fill", refused);
	inbox_cache_close(c);
}
