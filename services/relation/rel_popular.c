/*
 * rel_popular.c - the users with the most fans on this shard, for the
 * suggestions of a reader who follows too few to have friends of
 * friends (rel.popular).
 *
 * Each shard keeps REL_POPULAR_KEEP users and their fans here (its part
 * of their follower counts), in memory.  The first rel.popular reads the
 * `count` family once, at most REL_POPULAR_SEED cells of it; after that
 * every follow and unfollow committed here brings the followee's entry
 * up to date (one counter read).  An unfollow can leave out a user who
 * now has more fans than the last one kept, until their next follow: the
 * list is a good guess at the top, not an exact one, and a restart reads
 * the family again.  The gateway adds the parts of every shard up.
 */
#include <stdlib.h>
#include <string.h>

#include "rel_int.h"
#include "rel_schema.h"
#include "rt_log.h"

#define REL_POPULAR_SEED    200000 /* count cells read to fill the list the first time */
#define REL_POPULAR_DEFAULT 20

void
rel_popular_init(rel_popular *p)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->mu, NULL);
}

void
rel_popular_free(rel_popular *p)
{
	pthread_mutex_destroy(&p->mu);
}

/* rel_popular_set puts uid with fans into the list (held under mu): replaces its entry, or the
 * entry with the fewest fans when full and fans is more. */
static void
rel_popular_set(rel_popular *p, uint64_t uid, uint64_t fans)
{
	size_t low = 0;

	for (size_t i = 0; i < p->n; i++) {
		if (p->uid[i] == uid) {
			if (fans == 0) {
				p->n--;
				p->uid[i] = p->uid[p->n];
				p->fans[i] = p->fans[p->n];
			} else {
				p->fans[i] = fans;
			}
			return;
		}
		if (p->fans[i] < p->fans[low]) {
			low = i;
		}
	}
	if (fans == 0) {
		return;
	}
	if (p->n < REL_POPULAR_KEEP) {
		p->uid[p->n] = uid;
		p->fans[p->n++] = fans;
	} else if (fans > p->fans[low]) {
		p->uid[low] = uid;
		p->fans[low] = fans;
	}
}

/* rel_popular_seed fills the list from the count family (held under mu). */
static int
rel_popular_seed(rel_svc *r)
{
	rel_popular *p = &r->popular;
	hb_scan     *s;
	hb_cell      c;
	size_t       cells = 0;
	size_t       qlen = strlen(REL_Q_FOLLOWERS);
	int          rc;

	if ((rc = hb_scan_open(&s, r->t, REL_FAM_COUNT, NULL)) != WB_OK) {
		return rc;
	}
	while (cells < REL_POPULAR_SEED && (rc = hb_scan_next(s, &c)) == WB_OK) {
		cells++;
		if (c.row_len != 8 || c.qual_len != qlen ||
		    memcmp(c.qual, REL_Q_FOLLOWERS, qlen) != 0 || c.value_len != 8) {
			continue;
		}
		uint64_t       v = 0;
		const uint8_t *b = c.value;
		for (int i = 7; i >= 0; i--) {
			v = v << 8 | b[i]; /* a counter: little-endian (hb_counter_get) */
		}
		if ((int64_t)v > 0) {
			rel_popular_set(p, hb_be_u64(c.row), v);
		}
	}
	hb_scan_close(s);
	if (rc != WB_OK && rc != WB_EEND) {
		return rc;
	}
	p->seeded = true;
	return WB_OK;
}

void
rel_popular_note(rel_svc *r, uint64_t uid)
{
	rel_popular *p = &r->popular;
	uint8_t      row[8];
	int64_t      v = 0;

	pthread_mutex_lock(&p->mu);
	hb_u64_be(row, uid);
	/* not seeded yet: the first read of the family will see this */
	if (p->seeded && hb_counter_get(r->t, REL_FAM_COUNT, row, 8, REL_Q_FOLLOWERS,
	                     strlen(REL_Q_FOLLOWERS), &v) == WB_OK) {
		rel_popular_set(p, uid, v > 0 ? (uint64_t)v : 0);
	}
	pthread_mutex_unlock(&p->mu);
}

/* rel_popular_cmp orders entries by fans, most first, then by uid. */
static int
rel_popular_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b; /* {fans, uid} */

	if (x[0] != y[0]) {
		return x[0] > y[0] ? -1 : 1;
	}
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* rel_handle_popular: rel.popular {limit?} -> {users: [{uid, followers}]}: this shard's users with
 * the most fans here, most first (followers: this shard's part). */
int
rel_handle_popular(void *arg, const wb_obj *req, wb_obj *rep)
{
	rel_svc     *r = arg;
	rel_popular *p = &r->popular;
	uint64_t     limit, top[REL_POPULAR_KEEP][2];
	size_t       n;
	wb_obj      *recs;
	int          rc = WB_OK;

	if ((rc = wb_page_limit(req, REL_POPULAR_DEFAULT, REL_POPULAR_KEEP, &limit, rep)) !=
	    WB_OK) {
		return rc;
	}
	pthread_mutex_lock(&p->mu);
	if (!p->seeded && (rc = rel_popular_seed(r)) != WB_OK) {
		RT_ERRORF("reading the fan counts failed: %s %s", wb_strerror(rc), hb_last_error());
	}
	n = p->n;
	for (size_t i = 0; i < n; i++) {
		top[i][0] = p->fans[i];
		top[i][1] = p->uid[i];
	}
	pthread_mutex_unlock(&p->mu);
	if (rc != WB_OK) {
		return rel_fail(rep, rc, NULL);
	}
	qsort(top, n, sizeof(top[0]), rel_popular_cmp);
	n = n < limit ? n : (size_t)limit;
	wb_reply_ok(rep);
	if ((recs = wb_add_objs(rep, WB_F_USERS, n)) == NULL && n > 0) {
		return rel_fail(rep, WB_ENOMEM, NULL);
	}
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		if ((rc = wb_set_u64(&recs[i], WB_F_UID, top[i][1])) == WB_OK) {
			rc = wb_set_u64(&recs[i], WB_F_FOLLOWERS, top[i][0]);
		}
	}
	return rc != WB_OK ? rel_fail(rep, rc, NULL) : WB_OK;
}
