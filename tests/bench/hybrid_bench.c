/*
 * hybrid_bench.c - what hybrid fan-out saves on write and costs on read.
 *
 * Starts a real cluster (five daemons, tests/support/wbt_cluster.h) with
 * WARBLE_FANOUT_LIMIT = limit (and WARBLE_BACKFILL=0: every follow comes
 * before the first post), and makes with the bulk operations
 * (user.register_many, rel.follow_many):
 *
 *   fans         FANS users, each following big0..big4
 *   big0..big4   FANS followers each, the same ones (over the limit: big)
 *   mid          the first limit fans as followers (at the limit: fanned out)
 *   small0..19   no followers but the two readers
 *   reader A     follows big0..big4 and small0..19
 *   reader B     follows small0..19 (no big account)
 *
 * and prints how long each part of that took.  Each big account posts
 * once (fanned out, which notes its fans here) and again (the inbox finds
 * it over the limit and crosses), then POSTS posts each by the big
 * accounts, by mid and by the small ones, published straight to content;
 * after each group the inbox's cells_written tells the cells a post wrote.
 *
 * Publish-to-visible: SAMPLE followers spread evenly over the fans (over
 * mid's for mid); SAMPLE posts of big0 and 20 of mid, one at a time, post
 * k timed at sampled follower k alone, from the publish until its newest
 * home post is it (inbox.home {limit 1} polled straight from the inbox),
 * then its first page checked to hold the post once; p50, p99 and max.
 * Then every sampled follower's home is paged through whole and checked to
 * hold each of the author's last 100 of those posts exactly once, and no
 * id twice: a post missing or duplicated fails the bench.
 *
 * Last, inbox.home {limit 20} is asked READS times for A and for B,
 * alternating in runs of 100 on one connection, straight from the inbox
 * (the merge is there), and p50, p99 and max of each are printed.
 *
 *   build/bench/hybrid_bench [fans (20000)] [limit (10000)] [reads (20000)] [posts (40)]
 *                            [sample (1000), at most limit]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_client.h"
#include "wbt.h"
#include "wbt_cluster.h"
#include "wb_clock.h"

#define HY_BIG   5
#define HY_SMALL 20
#define HY_RUN   100 /* reads of one reader before switching to the other */
#define HY_VIS   20  /* posts of mid timed */

static uint64_t    nfans = 20000, limit = 10000, nreads = 20000, nposts = 40, nsample = 1000;
static wbt_cluster cl;
static uint64_t    npublished; /* content log seq: posts published */

/* hy_caught_up waits until the inbox has applied every post and every relation event. */
static int
hy_caught_up(rt_client *in, double *secs)
{
	long long t0 = wbt_now_ms();

	for (;;) {
		uint64_t ca = wbt_stat(in, "content_applied"),
		         behind = wbt_stat(in, "events_behind");
		if (ca != UINT64_MAX && ca >= npublished && behind == 0) {
			*secs = (double)(wbt_now_ms() - t0) / 1000.0;
			/* the applied seq is stored with an event's last cells, and
			 * cells_written counted just after: wait until it holds still */
			for (uint64_t c0 = UINT64_MAX, c1;; c0 = c1) {
				wbt_sleep_ms(50);
				if ((c1 = wbt_stat(in, "cells_written")) == c0) {
					return 0;
				}
			}
		}
		if (wbt_now_ms() - t0 > 1800000) {
			fprintf(stderr, "hybrid_bench: the inbox never caught up\n");
			return -1;
		}
		wbt_sleep_ms(5);
	}
}

/* hy_publish publishes one post by uid straight to content (its id in *id, if not NULL). */
static int
hy_publish_id(rt_client *content, uint64_t uid, uint64_t *id)
{
	wb_obj *req = wb_request(WB_OP_POST_PUBLISH), *rep = NULL;
	char    text[64];
	int     rc;

	snprintf(text, sizeof(text), "post %llu", (unsigned long long)npublished);
	wb_set_u64(req, WB_F_UID, uid);
	wb_set_cstr(req, WB_F_TEXT, text);
	rc = wbt_call(content, req, &rep);
	if (rc == WB_OK && id != NULL) {
		*id = wb_u64(rep, WB_F_ID, 0);
	}
	wb_msg_free(rep);
	if (rc != WB_OK) {
		fprintf(stderr, "hybrid_bench: post.publish: %s\n", wb_strerror(rc));
		return -1;
	}
	npublished++;
	return 0;
}

static int
hy_publish(rt_client *content, uint64_t uid)
{
	return hy_publish_id(content, uid, NULL);
}

/* hy_follow makes uids[0..n) follow target (rel.follow_many, 10,000 a call). */
static int
hy_follow(rt_client *rel, uint64_t target, const uint64_t *uids, size_t n)
{
	for (size_t a = 0; a < n; a += 10000) {
		size_t  k = n - a < 10000 ? n - a : 10000;
		wb_obj *req = wb_request(WB_OP_REL_FOLLOW_MANY), *rep = NULL;
		int     rc;

		wb_set_u64(req, WB_F_TARGET, target);
		wb_set_u64s(req, WB_F_UIDS, uids + a, k);
		rc = wbt_call(rel, req, &rep);
		wb_msg_free(rep);
		if (rc != WB_OK) {
			fprintf(stderr, "hybrid_bench: follow_many: %s\n", wb_strerror(rc));
			return -1;
		}
	}
	return 0;
}

/* hy_group publishes nposts posts by each of uids[0..n) and prints the cells a post wrote. */
static int
hy_group(rt_client *content, rt_client *in, const char *what, const uint64_t *uids, size_t n)
{
	double   secs;
	uint64_t c0 = wbt_stat(in, "cells_written"), c1;

	for (uint64_t p = 0; p < nposts; p++) {
		for (size_t i = 0; i < n; i++) {
			if (hy_publish(content, uids[i]) != 0) {
				return -1;
			}
		}
	}
	if (hy_caught_up(in, &secs) != 0) {
		return -1;
	}
	c1 = wbt_stat(in, "cells_written");
	printf("hybrid_bench: %-34s %6llu posts, %10.1f cells a post (inbox done %.2f s after)\n",
	    what, (unsigned long long)(nposts * n), (double)(c1 - c0) / (double)(nposts * n), secs);
	return 0;
}

static int
hy_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* The posts one author published while timed, oldest first. */
typedef struct hy_posts {
	uint64_t *ids;
	size_t    n;
} hy_posts;

/* hy_home_count pages through uid's whole home (at most HY_PAGES pages of 100): *dup counts
 * the ids met more than once, have[k] how often ids[k] was met (have holds n). */
#define HY_PAGES 40
static int
hy_home_count(
    rt_client *in, uint64_t uid, const uint64_t *ids, size_t n, unsigned *have, uint64_t *dup)
{
	uint64_t *seen = malloc(HY_PAGES * 100 * sizeof(uint64_t)), before = 0;
	size_t    nseen = 0;
	int       rc = seen != NULL ? 0 : -1;

	memset(have, 0, n * sizeof(*have));
	for (int pg = 0; rc == 0 && pg < HY_PAGES; pg++) {
		wb_obj       *req = wb_request(WB_OP_INBOX_HOME), *rep = NULL;
		const wb_obj *posts = NULL;
		size_t        np = 0;
		wb_set_u64(req, WB_F_UID, uid);
		wb_set_u64(req, WB_F_LIMIT, 100);
		if (before != 0) {
			wb_set_u64(req, WB_F_BEFORE, before);
		}
		if (wbt_call(in, req, &rep) != WB_OK) {
			fprintf(stderr, "hybrid_bench: inbox.home of %llu failed\n",
			    (unsigned long long)uid);
			rc = -1;
		} else {
			(void)wb_get_objs(rep, WB_F_POSTS, &posts, &np);
			for (size_t i = 0; i < np && nseen < HY_PAGES * 100; i++) {
				seen[nseen++] = wb_u64(&posts[i], WB_F_ID, 0);
			}
			if (np == 0 || !wb_get_u64(rep, WB_F_NEXT, &before)) {
				pg = HY_PAGES;
			}
		}
		wb_msg_free(rep);
	}
	if (rc == 0) {
		qsort(seen, nseen, sizeof(seen[0]), hy_cmp_u64);
		for (size_t i = 1; i < nseen; i++) {
			*dup += seen[i] == seen[i - 1];
		}
		for (size_t k = 0; k < n; k++) {
			size_t lo = 0, hi = nseen; /* the first seen[j] >= ids[k] */
			while (lo < hi) {
				size_t m = lo + (hi - lo) / 2;
				*(seen[m] < ids[k] ? &lo : &hi) = seen[m] < ids[k] ? m + 1 : m;
			}
			for (; lo < nseen && seen[lo] == ids[k]; lo++) {
				have[k]++;
			}
		}
	}
	free(seen);
	return rc;
}

/* hy_check waits for the inbox to apply every post, then pages through the whole home of
 * each of sample[0..ns) and counts the author's newest HY_CHECKED posts missing from it, or
 * in it more than once, and any id twice. */
#define HY_CHECKED 100
static int
hy_check(rt_client *in, const char *what, const hy_posts *pp, const uint64_t *sample, size_t ns)
{
	size_t    w = pp->n < HY_CHECKED ? pp->n : HY_CHECKED;
	uint64_t  missing = 0, twice = 0, dup = 0, t0 = wb_mono_us();
	unsigned *have = malloc(w * sizeof(*have));
	double    secs;
	int       rc = have != NULL ? hy_caught_up(in, &secs) : -1;

	for (size_t i = 0; rc == 0 && i < ns; i++) {
		rc = hy_home_count(in, sample[i], pp->ids + pp->n - w, w, have, &dup);
		for (size_t k = 0; rc == 0 && k < w; k++) {
			missing += have[k] == 0;
			twice += have[k] > 1;
		}
	}
	free(have);
	if (rc == 0) {
		printf("hybrid_bench: homes of %-29s %zu sampled followers paged whole against "
		       "the author's last %zu posts: %llu missing, %llu duplicated (%llu ids met "
		       "twice), %.2f s\n",
		    what, ns, w, (unsigned long long)missing, (unsigned long long)twice,
		    (unsigned long long)dup, (wb_mono_us() - t0) / 1e6);
	}
	return rc != 0 ? -1 : missing + twice + dup > 0 ? 1 : 0;
}

/* hy_newest reads uid's home {limit want} into ids (at most 100) and *n. */
static int
hy_newest(rt_client *in, uint64_t uid, uint64_t want, uint64_t *ids, size_t *n)
{
	wb_obj       *req = wb_request(WB_OP_INBOX_HOME), *rep = NULL;
	const wb_obj *posts = NULL;
	size_t        np = 0;
	int           rc;

	*n = 0;
	wb_set_u64(req, WB_F_UID, uid);
	wb_set_u64(req, WB_F_LIMIT, want);
	rc = wbt_call(in, req, &rep);
	if (rc == WB_OK && wb_get_objs(rep, WB_F_POSTS, &posts, &np)) {
		for (size_t i = 0; i < np && i < 100; i++) {
			ids[(*n)++] = wb_u64(&posts[i], WB_F_ID, 0);
		}
	}
	wb_msg_free(rep);
	return rc;
}

/*
 * hy_visible publishes nvis posts by author, one at a time, post k timed at sampled follower
 * k % ns alone: from the publish until that follower's newest home post is it (polled with a
 * pause of HY_POLL_US), then its first page checked to hold the post once.  A post not seen
 * within HY_LATE_US counts as missing.  The ids go to *pp.
 */
#define HY_POLL_US 100
#define HY_LATE_US 10000000
static int
hy_visible(rt_client *content, rt_client *in, const char *what, uint64_t author,
    const uint64_t *sample, size_t ns, size_t nvis, hy_posts *pp)
{
	uint64_t       *us = malloc(nvis * sizeof(uint64_t)), page[100], missing = 0, twice = 0;
	size_t          nus = 0;
	struct timespec pause = { 0, HY_POLL_US * 1000 };

	pp->ids = malloc(nvis * sizeof(uint64_t));
	pp->n = 0;
	if (us == NULL || pp->ids == NULL) {
		free(us);
		return -1;
	}
	for (size_t k = 0; k < nvis; k++) {
		uint64_t id = 0, fan = sample[k % ns], t0 = wb_mono_us(), t = 0;
		size_t   n = 0, once = 0;
		if (hy_publish_id(content, author, &id) != 0) {
			free(us);
			return -1;
		}
		pp->ids[pp->n++] = id;
		for (;;) {
			if (hy_newest(in, fan, 1, page, &n) == WB_OK && n == 1 && page[0] == id) {
				t = wb_mono_us() - t0;
				break;
			}
			if (wb_mono_us() - t0 > HY_LATE_US) {
				break;
			}
			nanosleep(&pause, NULL);
		}
		if (t == 0) {
			missing++;
			continue;
		}
		us[nus++] = t;
		(void)hy_newest(in, fan, 100, page, &n);
		for (size_t i = 0; i < n; i++) {
			once += page[i] == id;
		}
		missing += once == 0;
		twice += once > 1;
	}
	qsort(us, nus, sizeof(us[0]), hy_cmp_u64);
	printf("hybrid_bench: publish-to-visible, %-22s p50 %6.2f ms, p99 %6.2f ms, max %6.2f ms "
	       "(%zu posts, each timed at one of %zu sampled followers); %llu missing, "
	       "%llu duplicated\n",
	    what, nus > 0 ? us[nus / 2] / 1e3 : 0, nus > 0 ? us[nus * 99 / 100] / 1e3 : 0,
	    nus > 0 ? us[nus - 1] / 1e3 : 0, nvis, ns < nvis ? ns : nvis,
	    (unsigned long long)missing, (unsigned long long)twice);
	free(us);
	return missing + twice > 0 ? 1 : 0;
}

/* hy_reads times inbox.home {uid, limit 20} for readers a and b, alternating in runs. */
static int
hy_reads(rt_client *in, uint64_t a, uint64_t b, uint64_t *na_posts, uint64_t *nb_posts)
{
	uint64_t *lat[2];
	uint64_t  uid[2] = { a, b };
	size_t    n[2] = { 0, 0 };
	int       rc = 0;

	lat[0] = malloc(nreads * sizeof(uint64_t));
	lat[1] = malloc(nreads * sizeof(uint64_t));
	if (lat[0] == NULL || lat[1] == NULL) {
		return -1;
	}
	for (uint64_t k = 0; rc == 0 && (n[0] < nreads || n[1] < nreads); k++) {
		int      who = (int)((k / HY_RUN) % 2);
		wb_obj  *req = wb_request(WB_OP_INBOX_HOME), *rep = NULL;
		uint64_t t0 = wb_mono_us();

		if (n[who] >= nreads) {
			continue;
		}
		wb_set_u64(req, WB_F_UID, uid[who]);
		wb_set_u64(req, WB_F_LIMIT, 20);
		if (wbt_call(in, req, &rep) != WB_OK) {
			fprintf(stderr, "hybrid_bench: inbox.home failed\n");
			rc = -1;
		} else {
			const wb_obj *posts = NULL;
			size_t        np = 0;
			lat[who][n[who]++] = wb_mono_us() - t0;
			(void)wb_get_objs(rep, WB_F_POSTS, &posts, &np);
			*(who == 0 ? na_posts : nb_posts) = np;
		}
		wb_msg_free(rep);
	}
	for (int w = 0; rc == 0 && w < 2; w++) {
		qsort(lat[w], n[w], sizeof(uint64_t), hy_cmp_u64);
		printf("hybrid_bench: home of %-30s p50 %4llu us, p99 %4llu us, max %5llu us "
		       "(%zu reads)\n",
		    w == 0 ? "a reader of 5 big + 20 small" : "a reader of 20 small, no big",
		    (unsigned long long)lat[w][n[w] / 2],
		    (unsigned long long)lat[w][n[w] * 99 / 100],
		    (unsigned long long)lat[w][n[w] - 1], n[w]);
	}
	free(lat[0]);
	free(lat[1]);
	return rc;
}

int
main(int argc, char **argv)
{
	uint64_t *argp[] = { &nfans, &limit, &nreads, &nposts, &nsample };
	char      limit_env[64];
	double    secs;

	for (int i = 1; i < argc && i <= 5; i++) {
		*argp[i - 1] = strtoull(argv[i], NULL, 10);
	}
	if (nfans <= limit || limit == 0 || nreads == 0 || nsample == 0 || nsample > limit) {
		fprintf(stderr, "usage: hybrid_bench [fans > limit] [limit > 0] [reads] [posts] "
		                "[sample <= limit]\n");
		return 2;
	}
	snprintf(
	    limit_env, sizeof(limit_env), "WARBLE_FANOUT_LIMIT=%llu", (unsigned long long)limit);
	/* the follows come before any post: a backfill would find nothing to copy */
	const char *env[] = { limit_env, "WARBLE_BACKFILL=0", NULL };
	if (wbt_cluster_start_as(&cl, env, WBT_FIVE) != 0) {
		return 1;
	}
	rt_client     *user = NULL, *rel = NULL, *content = NULL, *in = NULL;
	rt_client_opts o = { .timeout_ms = 60000 };
	int            rc = rt_client_open(&user, cl.user_url, &o) != WB_OK ||
	         rt_client_open(&rel, cl.relation_url, &o) != WB_OK ||
	         rt_client_open(&content, cl.content_url, &o) != WB_OK ||
	         rt_client_open(&in, cl.inbox_url, &o) != WB_OK;

	/* users: big0..4, mid, small0..19, A, B, then the fans */
	size_t          nusers = HY_BIG + 1 + HY_SMALL + 2 + nfans;
	wb_obj         *req = NULL, *rep = NULL;
	const uint64_t *u = NULL;
	size_t          nu = 0;
	uint64_t       *uids = malloc(nusers * sizeof(uint64_t));
	long long       t0 = wbt_now_ms();
	for (size_t from = 0; rc == 0 && from < nusers; from += 10000) {
		size_t n = nusers - from < 10000 ? nusers - from : 10000;
		req = wb_request(WB_OP_USER_REGISTER_MANY);
		wb_set_cstr(req, WB_F_NAME, "hyb");
		wb_set_u64(req, WB_F_FROM, from);
		wb_set_u64(req, WB_F_LIMIT, n);
		wb_set_cstr(req, WB_F_PASSWORD, "hybrid-bench-password");
		rc = wbt_call(user, req, &rep) != WB_OK || !wb_get_u64s(rep, WB_F_UIDS, &u, &nu) ||
		     nu != n;
		if (rc == 0) {
			memcpy(&uids[from], u, n * sizeof(uint64_t));
		}
		wb_msg_free(rep);
		rep = NULL;
	}
	long long       t1 = wbt_now_ms();
	const uint64_t *big = uids, *mid = uids + HY_BIG, *small = mid + 1;
	uint64_t        a = small[HY_SMALL], b = small[HY_SMALL + 1];
	const uint64_t *fans = small + HY_SMALL + 2;
	uint64_t        ab[2] = { a, b };
	for (int i = 0; rc == 0 && i < HY_BIG; i++) {
		rc = hy_follow(rel, big[i], fans, nfans) || hy_follow(rel, big[i], &a, 1);
	}
	rc = rc || hy_follow(rel, mid[0], fans, limit);
	for (int i = 0; rc == 0 && i < HY_SMALL; i++) {
		rc = hy_follow(rel, small[i], ab, 2);
	}
	long long t2 = wbt_now_ms();
	rc = rc || hy_caught_up(in, &secs);
	long long t3 = wbt_now_ms();
	/* one post each: fanned out, it notes the big accounts' fans here */
	for (int i = 0; rc == 0 && i < HY_BIG; i++) {
		rc = hy_publish(content, big[i]);
	}
	rc = rc || hy_caught_up(in, &secs);
	long long t4 = wbt_now_ms();
	/* a second each: the inbox finds them over the limit and crosses (a bigf cell a fan) */
	for (int i = 0; rc == 0 && i < HY_BIG; i++) {
		rc = hy_publish(content, big[i]);
	}
	rc = rc || hy_caught_up(in, &secs);
	if (rc == 0) {
		printf(
		    "hybrid_bench: %zu users, 5 x %llu + %llu follows, limit %llu: made in %.1f s "
		    "(users %.1f s, follows %.1f s, inbox %.1f s after them; the big accounts' "
		    "first posts fanned out %.1f s, their second crossed the limit %.1f s)\n",
		    nusers, (unsigned long long)nfans, (unsigned long long)limit,
		    (unsigned long long)limit, (double)(wbt_now_ms() - t0) / 1000.0,
		    (double)(t1 - t0) / 1000.0, (double)(t2 - t1) / 1000.0,
		    (double)(t3 - t2) / 1000.0, (double)(t4 - t3) / 1000.0,
		    (double)(wbt_now_ms() - t4) / 1000.0);
	}
	rc = rc || hy_group(content, in, "big account (over the limit)", big, HY_BIG);
	rc = rc || hy_group(content, in, "mid account (at the limit, fanned)", mid, 1);
	rc = rc || hy_group(content, in, "small account (2 fans)", small, HY_SMALL);
	if (rc == 0) {
		printf("hybrid_bench: big accounts %llu, posts to outboxes %llu\n",
		    (unsigned long long)wbt_stat(in, "big_accounts"),
		    (unsigned long long)wbt_stat(in, "outbox_posts"));
	}
	/* the sampled followers, spread evenly over the fans (the first limit: mid's fans too) */
	uint64_t *sb = malloc(nsample * sizeof(uint64_t)), *sm = malloc(nsample * sizeof(uint64_t));
	hy_posts  pb = { NULL, 0 }, pm = { NULL, 0 };
	int       bad = 0, r;
	rc = rc || sb == NULL || sm == NULL;
	for (size_t i = 0; rc == 0 && i < nsample; i++) {
		sb[i] = fans[i * nfans / nsample];
		sm[i] = fans[i * limit / nsample];
	}
	if (rc == 0 &&
	    (r = hy_visible(content, in, "big account:", big[0], sb, nsample, nsample, &pb)) != 0) {
		rc = r < 0;
		bad = 1;
	}
	if (rc == 0 && (r = hy_check(in, "the big account's", &pb, sb, nsample)) != 0) {
		rc = r < 0;
		bad = 1;
	}
	if (rc == 0 && (r = hy_visible(content, in, "mid account (fanned):", mid[0], sm, nsample,
	                    HY_VIS, &pm)) != 0) {
		rc = r < 0;
		bad = 1;
	}
	if (rc == 0 && (r = hy_check(in, "the mid account's", &pm, sm, nsample)) != 0) {
		rc = r < 0;
		bad = 1;
	}
	uint64_t na = 0, nb = 0;
	rc = rc || hy_reads(in, a, b, &na, &nb);
	if (rc == 0) {
		printf("hybrid_bench: pages of %llu and %llu posts\n", (unsigned long long)na,
		    (unsigned long long)nb);
	}
	rt_client_close(user);
	rt_client_close(rel);
	rt_client_close(content);
	rt_client_close(in);
	free(uids);
	free(sb);
	free(sm);
	free(pb.ids);
	free(pm.ids);
	wbt_cluster_stop(&cl, 10000);
	wbt_cleanup();
	if (rc == 0 && bad) {
		fprintf(stderr,
		    "hybrid_bench: a sampled follower's home missed a post or had it twice\n");
	}
	return rc != 0 || bad;
}
