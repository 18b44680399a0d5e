/*
 * graph_test.c - exact timelines on a real social graph, end to end
 * through libwarble on a real cluster.
 *
 * socfb-Reed98 (962 users, 18,812 friendships; Facebook100 Reed College
 * graph from Network Repository, Rossi and Ahmed, AAAI 2015) is loaded as
 * mutual follows, every user publishes POSTS posts, and once the inbox has
 * applied every event, every user's home timeline, timeline, profile
 * counts and following and fans lists are compared, entry by entry, to a
 * model computed here from the edge file and the ids the publishes
 * returned:
 *
 *   home(u)      = posts of u's followees and u's own, newest (largest id) first,
 *                  the newest INBOX_MAX of them (the inbox's max versions;
 *                  SUBSET_MAX when a subset is loaded, to keep the cap in play)
 *   following(u) = fans(u) = u's friends; counts = their lengths
 *
 * The file is tests/data/graphs/ of the checkout (found from the current
 * folder, else from the test binary's), or in $WARBLE_GRAPHS.  Under ASan only the first ASAN_USERS users (and the
 * edges among them) are loaded, and the output says so; WARBLE_GRAPH_USERS
 * sets that number in any build (4096 or more: the whole graph).
 * Figures go to stderr.
 */
#include <limits.h>
#include <unistd.h>

#include "it.h"

#define GRAPH_FILE "socfb-Reed98.edges"
#define MAX_USERS  4096
#define POSTS      5   /* per user */
#define THREADS    8   /* client threads */
#define INBOX_MAX  800 /* the inbox's default WARBLE_INBOX_MAX */
#define SUBSET_MAX 200 /* WARBLE_INBOX_MAX for a subset, so that the cap still bites */
#define ASAN_USERS 480

#if defined(__SANITIZE_ADDRESS__)
#define GRAPH_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GRAPH_ASAN 1
#endif
#endif
#ifndef GRAPH_ASAN
#define GRAPH_ASAN 0
#endif

typedef struct graph_user {
	char      name[16];
	char     *token;
	uint64_t  uid;
	uint32_t *friends; /* indexes, ascending */
	uint32_t  nfriends, cap;
	uint64_t  posts[POSTS]; /* ids, oldest first */
} graph_user;

typedef struct graph_owner {
	uint64_t id;
	uint32_t user;
} graph_owner;

static graph_user *gr_users;
static uint32_t    gr_n;
static uint64_t    gr_edges; /* undirected, as loaded */
static uint32_t (*gr_pairs)[2];
static graph_owner *gr_owner;           /* every post id -> its author's index, by id */
static atomic_ulong gr_entries;         /* entries compared */
static atomic_ulong gr_capped;          /* homes the model cut at gr_max */
static size_t       gr_max = INBOX_MAX; /* the inbox's max versions in this run */

/* graph_find locates the edge file (see the top of the file). */
static bool
graph_find(char *path, size_t n)
{
	const char *env = getenv("WARBLE_GRAPHS");
	char        exe[PATH_MAX];
	ssize_t     k;

	if (env != NULL && env[0] != '\0') {
		snprintf(path, n, "%s/%s", env, GRAPH_FILE);
		return access(path, R_OK) == 0;
	}
	snprintf(path, n, "tests/data/graphs/%s", GRAPH_FILE);
	if (access(path, R_OK) == 0) {
		return true;
	}
	/* <checkout>/build/test/graph_test -> <checkout>/tests/data/graphs */
	if ((k = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) > 0) {
		exe[k] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash != NULL) {
			*slash = '\0';
			int w = snprintf(path, n, "%s/../../tests/data/graphs/%s", exe, GRAPH_FILE);
			return w > 0 && (size_t)w < n && access(path, R_OK) == 0;
		}
	}
	return false;
}

/* graph_add_friend appends b to a's friends. */
static void
graph_add_friend(uint32_t a, uint32_t b)
{
	graph_user *u = &gr_users[a];

	if (u->nfriends == u->cap) {
		u->cap = u->cap ? u->cap * 2 : 8;
		u->friends = realloc(u->friends, u->cap * sizeof(*u->friends));
		cr_assert_not_null(u->friends);
	}
	u->friends[u->nfriends++] = b;
}

static int
graph_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* graph_load reads the edge file: users are 0..max index, duplicates and self-loops dropped. */
static void
graph_load(const char *path, uint32_t limit)
{
	FILE         *f = fopen(path, "r");
	unsigned long a, b;
	char          line[128];
	size_t        cap = 0;
	uint8_t      *seen;

	cr_assert_not_null(f, "cannot open %s", path);
	gr_users = calloc(MAX_USERS, sizeof(*gr_users));
	seen = calloc((size_t)MAX_USERS * MAX_USERS / 8, 1);
	cr_assert(gr_users != NULL && seen != NULL);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "%lu %lu", &a, &b) != 2) {
			continue; /* blank or comment */
		}
		cr_assert(a < MAX_USERS && b < MAX_USERS, "user number too large in %s", line);
		if (a >= limit || b >= limit || a == b) {
			continue;
		}
		size_t bit = (size_t)(a < b ? a : b) * MAX_USERS + (a < b ? b : a);
		if (seen[bit / 8] & (1u << (bit % 8))) {
			continue;
		}
		seen[bit / 8] |= (uint8_t)(1u << (bit % 8));
		if (gr_n < a + 1) {
			gr_n = (uint32_t)a + 1;
		}
		if (gr_n < b + 1) {
			gr_n = (uint32_t)b + 1;
		}
		if (gr_edges == cap) {
			cap = cap ? cap * 2 : 16384;
			gr_pairs = realloc(gr_pairs, cap * sizeof(*gr_pairs));
			cr_assert_not_null(gr_pairs);
		}
		gr_pairs[gr_edges][0] = (uint32_t)a;
		gr_pairs[gr_edges][1] = (uint32_t)b;
		gr_edges++;
		graph_add_friend((uint32_t)a, (uint32_t)b);
		graph_add_friend((uint32_t)b, (uint32_t)a);
	}
	fclose(f);
	free(seen);
	for (uint32_t i = 0; i < gr_n; i++) {
		snprintf(gr_users[i].name, sizeof(gr_users[i].name), "g%04u", i);
		if (gr_users[i].nfriends > 0) {
			qsort(gr_users[i].friends, gr_users[i].nfriends, sizeof(uint32_t),
			    graph_cmp_u32);
		}
	}
}

/* graph_job_register registers and logs in the users of thread t. */
static void
graph_job_register(warble_client *c, int t)
{
	for (uint32_t i = (uint32_t)t; i < gr_n; i += THREADS) {
		graph_user *u = &gr_users[i];
		u->token = it_join(c, u->name, "graph-password", &u->uid);
	}
}

/* graph_job_follow makes both ends of thread t's share of the edges follow each other. */
static void
graph_job_follow(warble_client *c, int t)
{
	for (uint64_t k = (uint64_t)t; k < gr_edges * 2; k += THREADS) {
		uint32_t a = gr_pairs[k / 2][k % 2], b = gr_pairs[k / 2][1 - k % 2];
		int      rc;
		warble_set_token(c, gr_users[a].token);
		if ((rc = warble_follow(c, gr_users[b].name)) != WARBLE_OK) {
			it_fail("%s follow %s: %s: %s", gr_users[a].name, gr_users[b].name,
			    warble_errname(rc), warble_errmsg(c));
		}
	}
}

/* graph_job_publish publishes POSTS rounds of one post per user of thread t. */
static void
graph_job_publish(warble_client *c, int t)
{
	char text[96];

	for (int r = 0; r < POSTS; r++) {
		for (uint32_t i = (uint32_t)t; i < gr_n; i += THREADS) {
			graph_user *u = &gr_users[i];
			int         rc;
			snprintf(
			    text, sizeof(text), "post %d of %s on the Reed98 graph", r, u->name);
			warble_set_token(c, u->token);
			if ((rc = warble_post(c, text, &u->posts[r])) != WARBLE_OK ||
			    u->posts[r] == 0) {
				it_fail("%s post %d: %s: %s", u->name, r, warble_errname(rc),
				    warble_errmsg(c));
			}
		}
	}
}

static int
graph_cmp_owner(const void *a, const void *b)
{
	return it_cmp_asc(&((const graph_owner *)a)->id, &((const graph_owner *)b)->id);
}

/* graph_author returns the uid of post id's author by the publishes' replies (0 if unknown). */
static uint64_t
graph_author(uint64_t id)
{
	graph_owner key = { .id = id }, *o;

	o = bsearch(&key, gr_owner, (size_t)gr_n * POSTS, sizeof(*gr_owner), graph_cmp_owner);
	return o != NULL ? gr_users[o->user].uid : 0;
}

/* graph_job_check compares thread t's users with the model. */
static void
graph_job_check(warble_client *c, int t)
{
	size_t    cap = (size_t)gr_n * POSTS;
	uint64_t *want = malloc(cap * sizeof(*want));
	uint64_t *got = malloc(cap * sizeof(*got));
	uint64_t *by = malloc(cap * sizeof(*by));

	if (want == NULL || got == NULL || by == NULL) {
		it_fail("out of memory");
		goto out;
	}
	for (uint32_t i = (uint32_t)t; i < gr_n; i += THREADS) {
		graph_user *u = &gr_users[i];
		size_t      n = 0;
		long        k;

		/* home: every post of every friend and u's own, newest first, capped */
		for (uint32_t f = 0; f < u->nfriends; f++) {
			memcpy(&want[n], gr_users[u->friends[f]].posts, sizeof(u->posts));
			n += POSTS;
		}
		memcpy(&want[n], u->posts, sizeof(u->posts));
		n += POSTS;
		qsort(want, n, sizeof(*want), it_cmp_desc);
		if (n > gr_max) {
			n = gr_max;
			atomic_fetch_add(&gr_capped, 1);
		}
		warble_set_token(c, u->token);
		k = it_home_all(c, u->name, got, by, cap);
		if (it_same_ids(u->name, "home", got, k, want, n)) {
			for (size_t e = 0; e < n; e++) {
				if (by[e] != graph_author(got[e])) {
					it_fail("%s: home[%zu] (post %llu) by uid %llu, want %llu",
					    u->name, e, (unsigned long long)got[e],
					    (unsigned long long)by[e],
					    (unsigned long long)graph_author(got[e]));
					break;
				}
			}
		}
		atomic_fetch_add(&gr_entries, n);

		/* own timeline: its posts, newest first */
		for (int r = 0; r < POSTS; r++) {
			want[r] = u->posts[POSTS - 1 - r];
		}
		k = it_timeline_all(c, u->name, got, cap);
		it_same_ids(u->name, "timeline", got, k, want, POSTS);
		atomic_fetch_add(&gr_entries, POSTS);

		/* following and fans: both are the friends (mutual follows) */
		for (uint32_t f = 0; f < u->nfriends; f++) {
			want[f] = gr_users[u->friends[f]].uid;
		}
		qsort(want, u->nfriends, sizeof(*want), it_cmp_asc);
		for (int fans = 0; fans < 2; fans++) {
			k = it_users_all(c, u->name, fans, got, cap);
			if (k > 0) {
				qsort(got, (size_t)k, sizeof(*got), it_cmp_asc);
			}
			it_same_ids(
			    u->name, fans ? "fans" : "following", got, k, want, u->nfriends);
			atomic_fetch_add(&gr_entries, u->nfriends);
		}
		it_profile_counts(c, u->name, u->nfriends, u->nfriends);
		atomic_fetch_add(&gr_entries, 2);
	}
out:
	free(want);
	free(got);
	free(by);
}

Test(graph, reed98_exact_timelines, .fini = it_fini, .timeout = 300)
{
	char        path[PATH_MAX];
	uint32_t    limit = GRAPH_ASAN || wbt_ms(1) > 1 ? ASAN_USERS : MAX_USERS; /* sanitized */
	const char *env_users = getenv("WARBLE_GRAPH_USERS");

	if (env_users != NULL && atoi(env_users) > 0) {
		limit = (uint32_t)atoi(env_users);
	}
	uint32_t maxdeg = 0;

	cr_assert(graph_find(path, sizeof(path)),
	    "%s not found: run from the checkout, or set WARBLE_GRAPHS to its folder", GRAPH_FILE);
	long long t0 = wbt_now_ms();
	graph_load(path, limit);
	for (uint32_t i = 0; i < gr_n; i++) {
		maxdeg = gr_users[i].nfriends > maxdeg ? gr_users[i].nfriends : maxdeg;
	}
	cr_assert_gt(gr_edges, 0, "no edges in %s", path);
	if (limit < MAX_USERS) {
		fprintf(stderr,
		    "graph: %s: subset of the first %u users of %s and the edges among "
		    "them\n",
		    GRAPH_ASAN ? "ASan build" : "WARBLE_GRAPH_USERS", limit, GRAPH_FILE);
	} else {
		cr_assert_eq(gr_n, 962, "Reed98 has 962 users");
		cr_assert_eq(gr_edges, 18812, "Reed98 has 18,812 edges");
	}
	fprintf(stderr,
	    "graph: %s: %u users, %llu edges, %llu follows, max degree %u (load %.2f s)\n", path,
	    gr_n, (unsigned long long)gr_edges, (unsigned long long)gr_edges * 2, maxdeg,
	    it_secs(t0));

	char        maxenv[64];
	const char *env[] = { maxenv, NULL };
	if (limit < MAX_USERS) {
		gr_max = SUBSET_MAX;
	}
	snprintf(maxenv, sizeof(maxenv), "WARBLE_INBOX_MAX=%zu", gr_max);
	t0 = wbt_now_ms();
	it_start(gr_max == INBOX_MAX ? NULL : env); /* the full graph runs with the default */
	fprintf(stderr, "graph: cluster up in %.2f s\n", it_secs(t0));

	double s = it_run(THREADS, graph_job_register);
	fprintf(stderr, "graph: registered and logged in %u users in %.2f s\n", gr_n, s);
	cr_assert_eq(it_failures(), 0, "registration failed");

	s = it_run(THREADS, graph_job_follow);
	fprintf(stderr, "graph: %llu follows in %.2f s (%.0f/s, %d threads)\n",
	    (unsigned long long)gr_edges * 2, s, (double)gr_edges * 2 / s, THREADS);
	cr_assert_eq(it_failures(), 0, "follows failed");

	s = it_run(THREADS, graph_job_publish);
	fprintf(stderr, "graph: %u posts in %.2f s (%.0f/s)\n", gr_n * POSTS, s, gr_n * POSTS / s);
	cr_assert_eq(it_failures(), 0, "publishes failed");

	long long waited = it_wait_inbox(120000);
	fprintf(stderr, "graph: inbox caught up %.2f s after the last publish\n", waited / 1000.0);

	gr_owner = malloc((size_t)gr_n * POSTS * sizeof(*gr_owner));
	cr_assert_not_null(gr_owner);
	for (uint32_t i = 0; i < gr_n; i++) {
		for (int r = 0; r < POSTS; r++) {
			gr_owner[i * POSTS + r] = (graph_owner) { gr_users[i].posts[r], i };
		}
	}
	qsort(gr_owner, (size_t)gr_n * POSTS, sizeof(*gr_owner), graph_cmp_owner);
	for (size_t k = 1; k < (size_t)gr_n * POSTS; k++) {
		cr_assert_neq(gr_owner[k].id, gr_owner[k - 1].id, "two publishes returned one id");
	}

	s = it_run(THREADS, graph_job_check);
	fprintf(stderr,
	    "graph: compared %u home timelines, %u timelines, %u following and %u "
	    "fans lists, %u profiles: %lu entries in %.2f s; %lu homes at the %zu cap; "
	    "%lu mismatches\n",
	    gr_n, gr_n, gr_n, gr_n, gr_n, atomic_load(&gr_entries), s, atomic_load(&gr_capped),
	    gr_max, it_failures());
	cr_assert_eq(it_failures(), 0, "the cluster differs from the model (see stderr)");
	cr_assert_eq(wbt_cluster_stop(&it_cl, 10000), 0, "a daemon did not stop cleanly");

	for (uint32_t i = 0; i < gr_n; i++) {
		free(gr_users[i].token);
		free(gr_users[i].friends);
	}
	free(gr_users);
	free(gr_pairs);
	free(gr_owner);
}
