/*
 * gw_suggest.c - suggestions: whom to follow.
 *
 * Up to GW_SUGGEST_MAX accounts that the people the reader follows
 * follow (friends of friends), ranked by how many of them follow each,
 * then, while there is room, the most followed accounts (a reader who
 * follows nobody yet sees these).  Never the reader, an account the
 * reader follows, one with a block between them either way, or a closed
 * one (gw_suggest_shown).  The cost is bounded whatever the graph:
 *
 *   1. rel.following of the reader, at most GW_SUGGEST_FOLLOWS (10,000)
 *      uids, on the reader's shard: the set to leave out and the friends
 *      to sample from;
 *   2. GW_SUGGEST_FRIENDS (64) of them picked at random; of each, at
 *      most GW_SUGGEST_EACH (128) followees, a window that starts at a
 *      random uid of the reader's range and wraps round (so no friend's
 *      list is read whole, and every friend's window covers the same
 *      uids, which is what makes the counts comparable): one
 *      rel.following_many per relation shard, all at once, at most
 *      64 x 128 = 8,192 uids read in all;
 *   3. the candidates counted and ranked here (a table of at most
 *      16,384), the followed ones left out;
 *   4. rel.unrelated on the reader's shard for the best 2 x 20 at a time
 *      (follows beyond the 10,000 read, and blocks either way), at most
 *      GW_SUGGEST_ROUNDS (4) times: at most 160 uids, 3 point reads each;
 *   5. if room is left, rel.popular of every shard at once (each keeps
 *      its 100 most followed in memory), the parts added up, ranked and
 *      checked the same way;
 *   6. one user.get for the records.
 *
 * So at most 3 + 2 x (relation shards) + 8 calls, and 18,192 cells read
 * on the relation shards; only step 1 grows with the reader's follows, up
 * to its cap (docs/benchmarks.md measures 5,000 against 50).
 */
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "gw_int.h"

#define GW_SUGGEST_MAX     20                   /* accounts a reply holds at most */
#define GW_SUGGEST_FOLLOWS 10000                /* the reader's followees read (REL_LIST_MAX) */
#define GW_SUGGEST_FRIENDS 64                   /* followees sampled */
#define GW_SUGGEST_EACH    128                  /* followees read of each */
#define GW_SUGGEST_POPULAR 50                   /* most followed asked of each shard */
#define GW_SUGGEST_ROUNDS  4                    /* rel.unrelated calls of each source at most */
#define GW_SUGGEST_CHECK   (2 * GW_SUGGEST_MAX) /* candidates checked per call */
#define GW_SUGGEST_TABLE   (2 * GW_SUGGEST_FRIENDS * GW_SUGGEST_EACH) /* power of two */

/* A candidate: uid, and how many sampled friends follow it (or its fans, when popular). */
typedef struct gw_cand {
	uint64_t uid, score;
} gw_cand;

/* What one request has found so far. */
typedef struct gw_suggest {
	gw             *g;
	uint64_t        reader;
	const uint64_t *follows; /* the reader's followees read, ascending */
	size_t          nfollows;
	gw_cand        *table; /* GW_SUGGEST_TABLE slots, uid 0 empty */
	size_t          ncand;
	uint64_t        kept[GW_SUGGEST_MAX], score[GW_SUGGEST_MAX];
	size_t          nkept, limit;
} gw_suggest;

/* gw_suggest_followed tells whether the reader follows uid (as far as it was read). */
static bool
gw_suggest_followed(const gw_suggest *s, uint64_t uid)
{
	size_t lo = 0, hi = s->nfollows;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->follows[mid] == uid) {
			return true;
		}
		if (s->follows[mid] < uid) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	return false;
}

/* gw_suggest_count adds n to uid's score, unless uid is the reader or followed. */
static void
gw_suggest_count(gw_suggest *s, uint64_t uid, uint64_t n)
{
	size_t mask = GW_SUGGEST_TABLE - 1, i;

	if (uid == 0 || uid == s->reader || gw_suggest_followed(s, uid)) {
		return;
	}
	for (i = (size_t)(uid * UINT64_C(0x9E3779B97F4A7C15) >> 40) & mask;
	     s->table[i].uid != 0 && s->table[i].uid != uid; i = (i + 1) & mask) {
	}
	if (s->table[i].uid == 0) {
		if (s->ncand + 1 >= GW_SUGGEST_TABLE) {
			return; /* full: only by a caller past the bounds */
		}
		s->table[i].uid = uid;
		s->ncand++;
	}
	s->table[i].score += n;
}

/* gw_suggest_rank orders candidates by score, highest first, then by uid. */
static int
gw_suggest_rank(const void *a, const void *b)
{
	const gw_cand *x = a, *y = b;

	if (x->score != y->score) {
		return x->score > y->score ? -1 : 1;
	}
	return x->uid < y->uid ? -1 : x->uid > y->uid;
}

/* gw_suggest_ranked moves the table's candidates to its front, ranked; their count. */
static size_t
gw_suggest_ranked(gw_suggest *s)
{
	size_t n = 0;

	for (size_t i = 0; i < GW_SUGGEST_TABLE; i++) {
		if (s->table[i].uid != 0) {
			s->table[n++] = s->table[i];
		}
	}
	qsort(s->table, n, sizeof(s->table[0]), gw_suggest_rank);
	return n;
}

/* gw_suggest_clear empties the table. */
static void
gw_suggest_clear(gw_suggest *s)
{
	memset(s->table, 0, GW_SUGGEST_TABLE * sizeof(s->table[0]));
	s->ncand = 0;
}

/*
 * gw_suggest_check keeps, of the ranked cands[0..n), those the reader has
 * nothing to do with (rel.unrelated, GW_SUGGEST_CHECK at a time) and not
 * kept already, until the reply is full or GW_SUGGEST_ROUNDS calls are
 * made; score_kept says whether their scores go into the reply.
 */
static int
gw_suggest_check(gw_suggest *s, const gw_cand *cands, size_t n, bool score_kept, wb_obj *rep)
{
	int rc = WB_OK;

	for (size_t at = 0, round = 0;
	     rc == WB_OK && at < n && s->nkept < s->limit && round < GW_SUGGEST_ROUNDS; round++) {
		uint64_t        ask[GW_SUGGEST_CHECK], score[GW_SUGGEST_CHECK];
		const uint64_t *ok = NULL;
		size_t          nask = 0, nok = 0;
		wb_obj         *q, *r = NULL;

		for (; at < n && nask < GW_SUGGEST_CHECK; at++) {
			bool dup = false;
			for (size_t k = 0; k < s->nkept; k++) {
				dup = dup || s->kept[k] == cands[at].uid;
			}
			if (!dup) {
				score[nask] = cands[at].score;
				ask[nask++] = cands[at].uid;
			}
		}
		if (nask == 0) {
			break; /* every one left is kept already */
		}
		if ((q = wb_request(WB_OP_REL_UNRELATED)) != NULL &&
		    (wb_set_u64(q, WB_F_UID, s->reader) != WB_OK ||
		        wb_set_u64s(q, WB_F_UIDS, ask, nask) != WB_OK)) {
			wb_msg_free(q);
			q = NULL;
		}
		rc = gw_call(
		    WB_SVC_RELATION, gw_shard(s->g, WB_SVC_RELATION, s->reader), q, &r, rep);
		if (rc != WB_OK) {
			break;
		}
		(void)wb_get_u64s(r, WB_F_UIDS, &ok, &nok);
		for (size_t i = 0; i < nok && s->nkept < s->limit; i++) {
			size_t k = 0;
			while (k < nask && ask[k] != ok[i]) {
				k++;
			}
			if (k < nask) { /* in the order asked: ranked */
				s->kept[s->nkept] = ok[i];
				s->score[s->nkept++] = score_kept ? score[k] : 0;
			}
		}
		wb_msg_free(r);
	}
	return rc;
}

/* gw_suggest_fof counts the followees of up to GW_SUGGEST_FRIENDS of the reader's followees. */
static int
gw_suggest_fof(gw_suggest *s, wb_obj *rep)
{
	rt_shards  *rel = s->g->svc[WB_SVC_RELATION];
	unsigned    nshards = rt_shards_count(rel);
	uint64_t    friends[GW_SUGGEST_FRIENDS], pick[GW_SUGGEST_FRIENDS];
	rt_pending *p[WB_SHARDS_MAX] = { NULL };
	size_t      nf = s->nfollows < GW_SUGGEST_FRIENDS ? s->nfollows : GW_SUGGEST_FRIENDS;
	uint64_t    lo, hi, after;
	int         rc = WB_OK;

	if (nf == 0) {
		return WB_OK;
	}
	/* a random sample of nf distinct followees (Floyd's algorithm) */
	for (size_t j = s->nfollows - nf, k = 0; j < s->nfollows; j++, k++) {
		uint64_t t = randombytes_uniform((uint32_t)(j + 1));
		bool     seen = false;

		for (size_t i = 0; i < k; i++) {
			seen = seen || pick[i] == t;
		}
		pick[k] = seen ? j : t;
		friends[k] = s->follows[pick[k]];
	}
	/* the window of every friend's followees: from a random uid of the reader's range */
	lo = s->follows[0];
	hi = s->follows[s->nfollows - 1];
	after = lo + (uint64_t)randombytes_uniform(
	                 (uint32_t)(hi - lo < UINT32_MAX ? hi - lo + 1 : UINT32_MAX));
	after = after > 0 ? after - 1 : 0;
	for (unsigned sh = 0; sh < nshards; sh++) {
		uint64_t mine[GW_SUGGEST_FRIENDS];
		size_t   n = 0;
		wb_obj  *q;

		for (size_t i = 0; i < nf; i++) {
			if (wb_uid_shard(friends[i], nshards) == sh) {
				mine[n++] = friends[i];
			}
		}
		if (n == 0) {
			continue;
		}
		if ((q = wb_request(WB_OP_REL_FOLLOWING_MANY)) != NULL &&
		    (wb_set_u64s(q, WB_F_UIDS, mine, n) != WB_OK ||
		        wb_set_u64(q, WB_F_LIMIT, GW_SUGGEST_EACH) != WB_OK ||
		        (after != 0 && wb_set_u64(q, WB_F_AFTER, after) != WB_OK))) {
			wb_msg_free(q);
			q = NULL;
		}
		p[sh] = gw_call_start(rt_shards_at(rel, sh), q);
		if (p[sh] == NULL) {
			rc = WB_ENOMEM;
		}
	}
	for (unsigned sh = 0; sh < nshards; sh++) {
		const wb_obj *users = NULL;
		size_t        nu = 0;
		wb_obj       *r = NULL;
		int           src;

		if (p[sh] == NULL) {
			continue;
		}
		if ((src = gw_call_finish(WB_SVC_RELATION, p[sh], &r, rep)) != WB_OK) {
			rc = rc == WB_OK ? src : rc;
			continue;
		}
		(void)wb_get_objs(r, WB_F_USERS, &users, &nu);
		for (size_t i = 0; i < nu; i++) {
			const uint64_t *v = NULL;
			size_t          k = 0;

			(void)wb_get_u64s(&users[i], WB_F_UIDS, &v, &k);
			for (size_t j = 0; j < k; j++) {
				gw_suggest_count(s, v[j], 1);
			}
		}
		wb_msg_free(r);
	}
	return rc;
}

/* gw_suggest_popular counts the most followed accounts of every shard, by their fans. */
static int
gw_suggest_popular(gw_suggest *s, wb_obj *rep)
{
	rt_shards  *rel = s->g->svc[WB_SVC_RELATION];
	unsigned    nshards = rt_shards_count(rel);
	rt_pending *p[WB_SHARDS_MAX];
	int         rc = WB_OK;

	for (unsigned sh = 0; sh < nshards; sh++) {
		wb_obj *q = wb_request(WB_OP_REL_POPULAR);

		if (q != NULL && wb_set_u64(q, WB_F_LIMIT, GW_SUGGEST_POPULAR) != WB_OK) {
			wb_msg_free(q);
			q = NULL;
		}
		p[sh] = gw_call_start(rt_shards_at(rel, sh), q);
	}
	for (unsigned sh = 0; sh < nshards; sh++) {
		const wb_obj *users = NULL;
		size_t        nu = 0;
		wb_obj       *r = NULL;
		int           src = gw_call_finish(WB_SVC_RELATION, p[sh], &r, rep);

		if (src != WB_OK) {
			rc = rc == WB_OK ? src : rc;
			continue;
		}
		(void)wb_get_objs(r, WB_F_USERS, &users, &nu);
		for (size_t i = 0; i < nu; i++) {
			gw_suggest_count(s, wb_u64(&users[i], WB_F_UID, 0),
			    wb_u64(&users[i], WB_F_FOLLOWERS, 0));
		}
		wb_msg_free(r);
	}
	return rc;
}

/*
 * gw_suggest_shown tells whether an account (its user record) may be
 * suggested at all: any record user.get gives.  A closed account has none
 * from the moment it is closed (user_account.c), so it is skipped before
 * this, as an unknown uid is (erase_test checks it).
 */
static bool
gw_suggest_shown(const wb_obj *user)
{
	return wb_u64(user, WB_F_UID, 0) != 0;
}

/* gw_suggest_reply writes the kept accounts' records into rep, each with followed_by. */
static int
gw_suggest_reply(gw_suggest *s, wb_obj *rep)
{
	wb_obj       *h = wb_msg_new(), *out = NULL;
	const wb_obj *users = NULL;
	size_t        n = 0, shown = 0;
	int           rc;

	if (h == NULL) {
		wb_reply_error(rep, WB_ENOMEM, NULL);
		return WB_ENOMEM;
	}
	if ((rc = gw_hydrate_users_with(s->g, s->kept, s->nkept, WB_F_FOLLOWED_BY, s->score, h)) !=
	    WB_OK) {
		wb_reset(rep);
		(void)wb_copy(rep, h);
		wb_msg_free(h);
		return rc;
	}
	(void)wb_get_objs(h, WB_F_USERS, &users, &n);
	for (size_t i = 0; i < n; i++) {
		shown += gw_suggest_shown(&users[i]);
	}
	wb_reset(rep);
	if ((rc = wb_reply_ok(rep)) == WB_OK &&
	    (out = wb_add_objs(rep, WB_F_USERS, shown)) == NULL && shown > 0) {
		rc = WB_ENOMEM;
	}
	for (size_t i = 0, k = 0; rc == WB_OK && i < n; i++) {
		if (gw_suggest_shown(&users[i])) {
			rc = wb_copy(&out[k++], &users[i]);
		}
	}
	if (rc != WB_OK) {
		wb_reply_error(rep, rc, NULL);
	}
	wb_msg_free(h);
	return rc;
}

int
gw_op_suggestions(gw *g, const wb_obj *req, wb_obj *rep)
{
	gw_suggest s = { .g = g };
	uint64_t   limit;
	wb_obj    *q, *r = NULL;
	int        rc;

	if ((rc = gw_auth(g, req, &s.reader, rep)) != WB_OK ||
	    (rc = wb_page_limit(req, GW_SUGGEST_MAX, GW_SUGGEST_MAX, &limit, rep)) != WB_OK) {
		return rc;
	}
	s.limit = (size_t)limit;
	if ((q = wb_request(WB_OP_REL_FOLLOWING)) != NULL &&
	    (wb_set_u64(q, WB_F_UID, s.reader) != WB_OK ||
	        wb_set_u64(q, WB_F_LIMIT, GW_SUGGEST_FOLLOWS) != WB_OK)) {
		wb_msg_free(q);
		q = NULL;
	}
	if ((rc = gw_call(WB_SVC_RELATION, gw_shard(g, WB_SVC_RELATION, s.reader), q, &r, rep)) !=
	    WB_OK) {
		return rc;
	}
	(void)wb_get_u64s(r, WB_F_UIDS, &s.follows, &s.nfollows);
	if ((s.table = calloc(GW_SUGGEST_TABLE, sizeof(*s.table))) == NULL) {
		wb_msg_free(r);
		wb_reply_error(rep, WB_ENOMEM, NULL);
		return WB_ENOMEM;
	}
	if ((rc = gw_suggest_fof(&s, rep)) == WB_OK) {
		size_t n = gw_suggest_ranked(&s);
		rc = gw_suggest_check(&s, s.table, n, true, rep);
	}
	if (rc == WB_OK && s.nkept < s.limit) {
		gw_suggest_clear(&s);
		if ((rc = gw_suggest_popular(&s, rep)) == WB_OK) {
			size_t n = gw_suggest_ranked(&s);
			rc = gw_suggest_check(&s, s.table, n, false, rep);
		}
	}
	free(s.table);
	wb_msg_free(r);
	return rc == WB_OK ? gw_suggest_reply(&s, rep) : rc;
}
