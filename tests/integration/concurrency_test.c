/*
 * concurrency_test.c - many clients at once, then an exact model check.
 *
 * THREADS client threads publish, delete, follow and unfollow at the same
 * time on a shared population of USERS users, at random from a fixed
 * seed (WARBLE_SEED overrides it; the seed is printed).  Thread t acts
 * only as the users u with u % THREADS == t, so the order of each user's
 * own actions is known, and it records every acknowledged action.  Once
 * the inbox has applied every event, each user must match the model:
 *
 *   following(u) = the last acknowledged follow/unfollow of each target
 *   fans(u)      = the users whose following holds u
 *   counts       = the lengths of those lists
 *   timeline(u)  = u's acknowledged posts minus its deletes, newest first
 *   home(u)      = the timelines of u's final followees and u's own,
 *                  merged newest first (the newest INBOX_MAX of them)
 *
 * A user publishes at most MAX_POSTS posts, below the inbox's follow
 * backfill (50), so a late follow brings every post of the followee, and
 * the mix keeps every home below the inbox's cap (checked).
 */
#include "it.h"

#define USERS     60
#define THREADS   8
#define OPS       400 /* per thread */
#define MAX_POSTS 40  /* per user, under the backfill of 50 */
#define INBOX_MAX 800
#define SEED      20240601u

typedef struct cc_post {
	uint64_t id;
	bool     deleted;
} cc_post;

typedef struct cc_user {
	char     name[16];
	char    *token;
	uint64_t uid;
	bool     follows[USERS]; /* written only by the owning thread */
	cc_post  posts[MAX_POSTS];
	int      nposts;
} cc_user;

static cc_user       cc_users[USERS];
static uint64_t      cc_seed;
static atomic_ulong  cc_acked[4]; /* follow, unfollow, publish, delete */
static atomic_ulong  cc_entries;
static atomic_size_t cc_maxhome; /* the longest home in the model */

static void
cc_job_register(warble_client *c, int t)
{
	for (int i = t; i < USERS; i += THREADS) {
		cc_user *u = &cc_users[i];
		u->token = it_join(c, u->name, "cc-password", &u->uid);
	}
}

/* cc_job_act does OPS random acknowledged actions as thread t's users. */
static void
cc_job_act(warble_client *c, int t)
{
	uint64_t s = cc_seed ^ ((uint64_t)t << 32);
	char     text[64];
	int      mine = (USERS - t + THREADS - 1) / THREADS; /* users t, t+THREADS, ... */

	for (int k = 0; k < OPS; k++) {
		cc_user *u = &cc_users[t + THREADS * (int)(it_rand(&s) % (uint64_t)mine)];
		int      b = (int)(it_rand(&s) % USERS), roll = (int)(it_rand(&s) % 100), rc;

		warble_set_token(c, u->token);
		if (roll >= 92 && u->nposts > 0) { /* delete one of u's posts (maybe again) */
			cc_post *p = &u->posts[it_rand(&s) % (uint64_t)u->nposts];
			rc = warble_delete(c, p->id);
			if (rc == WARBLE_OK && !p->deleted) {
				p->deleted = true;
				atomic_fetch_add(&cc_acked[3], 1);
			} else if (!(rc == WARBLE_ENOPOST && p->deleted)) {
				it_fail("%s delete %llu: %s: %s", u->name,
				    (unsigned long long)p->id, warble_errname(rc),
				    warble_errmsg(c));
			}
		} else if (roll >= 60 && u->nposts < MAX_POSTS) {
			cc_post *p = &u->posts[u->nposts];
			snprintf(text, sizeof(text), "%s says %d", u->name, k);
			if ((rc = warble_post(c, text, &p->id)) != WARBLE_OK || p->id == 0) {
				it_fail("%s post: %s: %s", u->name, warble_errname(rc),
				    warble_errmsg(c));
				continue;
			}
			u->nposts++;
			atomic_fetch_add(&cc_acked[2], 1);
		} else if (&cc_users[b] != u) {
			bool follow = roll < 40 || roll >= 60;
			rc = follow ? warble_follow(c, cc_users[b].name)
			            : warble_unfollow(c, cc_users[b].name);
			if (rc != WARBLE_OK) {
				it_fail("%s %s %s: %s: %s", u->name, follow ? "follow" : "unfollow",
				    cc_users[b].name, warble_errname(rc), warble_errmsg(c));
				continue;
			}
			u->follows[b] = follow;
			atomic_fetch_add(&cc_acked[follow ? 0 : 1], 1);
		}
	}
}

/* cc_live writes user i's live post ids into out; returns the count. */
static size_t
cc_live(int i, uint64_t *out)
{
	size_t n = 0;

	for (int k = 0; k < cc_users[i].nposts; k++) {
		if (!cc_users[i].posts[k].deleted) {
			out[n++] = cc_users[i].posts[k].id;
		}
	}
	return n;
}

/* cc_job_check compares thread t's share of users with the model. */
static void
cc_job_check(warble_client *c, int t)
{
	enum { CAP = USERS * MAX_POSTS };
	static _Thread_local uint64_t want[CAP], got[CAP], by[CAP];

	for (int i = t; i < USERS; i += THREADS) {
		cc_user *u = &cc_users[i];
		size_t   n = 0, nf = 0, nfans = 0;
		long     k;

		for (int b = 0; b < USERS; b++) {
			if (u->follows[b] || b == i) { /* one's own posts are in one's home */
				n += cc_live(b, &want[n]);
			}
		}
		qsort(want, n, sizeof(*want), it_cmp_desc);
		if (n > INBOX_MAX) { /* the mix is sized to stay below the cap */
			it_fail("%s: the model's home holds %zu posts, over the inbox's %d",
			    u->name, n, INBOX_MAX);
			n = INBOX_MAX;
		}
		for (size_t m = atomic_load(&cc_maxhome); n > m;) {
			if (atomic_compare_exchange_weak(&cc_maxhome, &m, n)) {
				break;
			}
		}
		warble_set_token(c, u->token);
		k = it_home_all(c, u->name, got, by, CAP);
		it_same_ids(u->name, "home", got, k, want, n);
		atomic_fetch_add(&cc_entries, n);

		n = cc_live(i, want);
		qsort(want, n, sizeof(*want), it_cmp_desc);
		k = it_timeline_all(c, u->name, got, CAP);
		it_same_ids(u->name, "timeline", got, k, want, n);
		atomic_fetch_add(&cc_entries, n);

		for (int b = 0; b < USERS; b++) {
			if (u->follows[b]) {
				want[nf++] = cc_users[b].uid;
			}
		}
		it_check_list(c, u->name, false, want, nf, got, CAP);
		for (int a = 0; a < USERS; a++) {
			if (cc_users[a].follows[i]) {
				want[nfans++] = cc_users[a].uid;
			}
		}
		it_check_list(c, u->name, true, want, nfans, got, CAP);
		it_profile_counts(c, u->name, nf, nfans);
		atomic_fetch_add(&cc_entries, nf + nfans + 2);
	}
}

Test(concurrency, mixed_writers_exact_model, .fini = it_fini, .timeout = 180)
{
	const char *env_seed = getenv("WARBLE_SEED");

	cc_seed = env_seed != NULL ? strtoull(env_seed, NULL, 10) : SEED;
	for (int i = 0; i < USERS; i++) {
		snprintf(cc_users[i].name, sizeof(cc_users[i].name), "cc%02d", i);
	}
	it_start(NULL);
	double s = it_run(THREADS, cc_job_register);
	cr_assert_eq(it_failures(), 0, "registration failed");
	fprintf(stderr, "concurrency: seed %llu, %d users registered in %.2f s\n",
	    (unsigned long long)cc_seed, USERS, s);

	s = it_run(THREADS, cc_job_act);
	fprintf(stderr,
	    "concurrency: %d threads x %d actions in %.2f s: acknowledged %lu follows, "
	    "%lu unfollows, %lu posts, %lu deletes\n",
	    THREADS, OPS, s, atomic_load(&cc_acked[0]), atomic_load(&cc_acked[1]),
	    atomic_load(&cc_acked[2]), atomic_load(&cc_acked[3]));
	cr_assert_eq(it_failures(), 0, "an action was refused (see stderr)");

	long long waited = it_wait_inbox(60000);
	size_t    edges = 0;
	for (int a = 0; a < USERS; a++) {
		for (int b = 0; b < USERS; b++) {
			edges += cc_users[a].follows[b];
		}
	}
	s = it_run(THREADS, cc_job_check);
	fprintf(stderr,
	    "concurrency: inbox caught up in %.2f s; %zu final follows; compared %d "
	    "homes, timelines, following and fans lists and profiles: %lu entries (longest "
	    "home %zu) in %.2f s, %lu mismatches\n",
	    waited / 1000.0, edges, USERS, atomic_load(&cc_entries), atomic_load(&cc_maxhome), s,
	    it_failures());
	cr_assert_eq(it_failures(), 0, "the cluster differs from the model (see stderr)");
	cr_assert_gt(atomic_load(&cc_acked[1]), 0, "the mix had no unfollows");
	cr_assert_gt(atomic_load(&cc_acked[3]), 0, "the mix had no deletes");
	cr_assert_eq(wbt_cluster_stop(&it_cl, 10000), 0, "a daemon did not stop cleanly");
	for (int i = 0; i < USERS; i++) {
		free(cc_users[i].token);
	}
}
