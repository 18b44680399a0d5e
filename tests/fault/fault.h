/*
 * fault.h - the fault suite's workload, model and fault injection
 * (header-only, like it.h: fault_test.c is one Criterion binary).
 *
 * FT_THREADS client threads publish, delete, follow and unfollow through
 * the SDK as FT_USERS users (thread t acts only as the users u with
 * u % FT_THREADS == t, so each user's own actions are ordered) while the
 * test's main thread kills (SIGKILL) and restarts daemons, or stops
 * (SIGSTOP) and resumes them.  Every acknowledged action goes into the
 * model.  An action whose reply was lost (UNAVAILABLE, TIMEOUT, CLOSED:
 * the gateway or a service died under it) is ambiguous: it may or may
 * not have happened.  The model marks it so, and at the end of the round
 * resolves it by reading the authoritative state once (the author's
 * timeline for a publish or delete: every attempt has a unique text; the
 * following list for a follow or unfollow), counting each decision.
 *
 * A round: writers run, one fault strikes, writers run on, then pause;
 * the inbox must catch up (events_behind 0, applied = each log's last
 * seq) before a deadline, and then every user must match the model
 * exactly (ft_check):
 *
 *   timeline(u)  = u's posts that were acknowledged (or resolved as
 *                  committed) and not deleted, newest first; a post whose
 *                  text matches no attempt, or an attempt seen twice, fails
 *   home(u)      = the timelines of u's followees and u's own timeline
 *                  merged, newest first, each id once (a duplicate fails
 *                  the exact comparison);
 *                  the inbox row itself (inbox.home straight from the
 *                  inbox) too, so a cell the hydration hides (a deleted
 *                  post) fails as well
 *   following(u), fans(u) and the profile counts = the model's edges
 *
 * A home or row that differs is explained entry by entry on stderr
 * ("fault: explain:"): the post, its author, what the model says (edge,
 * post state), the reader's follow/unfollow actions on that author and
 * the author's actions on the post (codes, sent/answered times in ms since
 * the seed was set, the clock of post ids), and what relation, content
 * and the inbox row say now.
 *
 * A user keeps at most FT_LIVE_MAX live posts (it deletes when full), so
 * a follow's backfill (WARBLE_BACKFILL, 50) brings all of a followee's
 * posts and every home stays under the inbox cap (FT_INBOX_MAX, checked).
 */
#ifndef FAULT_H
#define FAULT_H

#include <sched.h>
#include <signal.h>
#include <time.h>

#include "../integration/it.h"
#include "wb_id.h"
#include "wb_clock.h"

#if defined(__SANITIZE_ADDRESS__)
#define FT_ASAN 1
#else
#define FT_ASAN 0
#endif
/* the test or its daemons run under a sanitizer (TSan runs release test
 * binaries against sanitized daemons): smaller setups, same checks */
#define FT_SANITIZED (FT_ASAN || wbt_ms(1) > 1)

#define FT_USERS       24
#define FT_THREADS     4
#define FT_LIVE_MAX    30     /* live posts per user, under the backfill of 50 */
#define FT_INBOX_MAX   800    /* the inbox's default cap; homes stay below it */
#define FT_CALL_MS     5000   /* per SDK call of the writers */
#define FT_CONVERGE_MS 120000 /* scaled by wbt_ms */
#define FT_PAUSE_MS    30000  /* writers finish their call in flight within this */
/* The writers' pace, all threads together: a round's work is the same
 * whatever the build's speed.  Unpaced, the release build made three
 * times the follow/unfollow churn once the services sped up, and the
 * inbox's unfollow purge (a scan of the reader's whole row, tombstones
 * included) fell minutes behind: see docs/benchmarks.md. */
#define FT_ACTIONS_PER_S 2000

enum { FT_RUN, FT_PAUSE, FT_STOP };
enum { FT_MIX_MIXED, FT_MIX_PUBLISH, FT_MIX_FOLLOW };
enum { FT_P_ACKED, FT_P_AMBIG, FT_P_ABSENT }; /* a publish attempt's outcome */
enum { FT_D_NO, FT_D_YES, FT_D_AMBIG };       /* its deletion */
enum { FT_A_FOLLOW, FT_A_UNFOLLOW, FT_A_PUBLISH, FT_A_DELETE, FT_A_COUNT };

/* The daemons, as indexes for counts and names. */
enum { FT_SVC_USER, FT_SVC_RELATION, FT_SVC_CONTENT, FT_SVC_INBOX, FT_SVC_GATEWAY, FT_SVC_COUNT };
static const char *const ft_svc_names[FT_SVC_COUNT] = {
	"user",
	"relation",
	"content",
	"inbox",
	"gateway",
};

typedef struct ft_post {
	uint64_t id;
	uint8_t  pstate, dstate;
} ft_post;

#define FT_HIST 4096 /* actions remembered per user (a ring), for explaining a mismatch */

/* One action of a user, for the diagnostics: times in ms since the seed was set (wb_now_ms clock, as post ids). */
typedef struct ft_hist {
	uint64_t
	    arg; /* follow/unfollow: the other user's index; publish/delete: the post id (0 if none) */
	int32_t t0, t1; /* sent, answered */
	uint8_t what;   /* FT_A_* */
	int8_t  rc;     /* WARBLE_* */
} ft_hist;

typedef struct ft_user {
	char     name[16];
	char    *token;
	uint64_t uid;
	bool     follows[FT_USERS]; /* the model's edges (after resolution) */
	bool     fambig[FT_USERS];  /* the last action on the edge was ambiguous */
	bool     pending; /* an action was ambiguous: no more actions until ft_check settles it */
	ft_post *posts;   /* every publish attempt k, text "ft<i>-<k>" */
	size_t   nposts, cap;
	ft_hist  hist[FT_HIST]; /* the last FT_HIST actions (written by its worker only) */
	size_t   nhist;         /* actions in all */
} ft_user;

typedef struct ft_worker {
	pthread_t      thread;
	int            index;
	uint64_t       rand;
	warble_client *c;
} ft_worker;

static ft_user       ft_users[FT_USERS];
static ft_worker     ft_workers[FT_THREADS];
static uint64_t      ft_seed;
static atomic_int    ft_phase, ft_idle, ft_mix;
static atomic_ulong  ft_acked[FT_A_COUNT], ft_ambig[FT_A_COUNT];
static atomic_ulong  ft_decided[4]; /* publish committed, publish absent, delete done, edge read */
static unsigned long ft_kills[FT_SVC_COUNT], ft_stops;
static unsigned long ft_posts_checked, ft_entries, ft_homes;
static uint64_t      ft_wall0; /* wb_now_ms() when the seed was set: the diagnostics' time 0 */
static long long     ft_fault_at = -1; /* the last fault's time, on that clock */
static const char *const ft_act_names[FT_A_COUNT] = { "follow", "unfollow", "publish", "delete" };

/* ft_ms returns the diagnostics' clock: ms since ft_wall0 (the clock of post ids). */
static inline int32_t
ft_ms(void)
{
	return (int32_t)((int64_t)wb_now_ms() - (int64_t)ft_wall0);
}

/* ft_note records one action of u (its worker thread only). */
static inline void
ft_note(ft_user *u, int what, uint64_t arg, int32_t t0, int rc)
{
	u->hist[u->nhist++ % FT_HIST] = (ft_hist) {
		.arg = arg, .t0 = t0, .t1 = ft_ms(), .what = (uint8_t)what, .rc = (int8_t)rc
	};
}

/* ft_slot returns the cluster's slot of daemon svc. */
static inline wbt_daemon **
ft_slot(int svc)
{
	wbt_daemon **slots[FT_SVC_COUNT] = { &it_cl.user, &it_cl.relation, &it_cl.content,
		&it_cl.inbox, &it_cl.gateway };

	return slots[svc];
}

/* ft_name names the process a fault of svc strikes: the daemon, or warble hosting every service. */
static inline const char *
ft_name(int svc)
{
	return wbt_cluster_is_one(&it_cl) ? "warble" : ft_svc_names[svc];
}

/* ft_transport tells whether a code means the reply was lost (the action may or may not have happened). */
static inline bool
ft_transport(int rc)
{
	return rc == WARBLE_EUNAVAIL || rc == WARBLE_ETIMEDOUT || rc == WARBLE_ECLOSED;
}

/* ft_live counts u's posts that are or may be live. */
static inline size_t
ft_live(const ft_user *u)
{
	size_t n = 0;

	for (size_t k = 0; k < u->nposts; k++) {
		n += u->posts[k].pstate != FT_P_ABSENT && u->posts[k].dstate != FT_D_YES;
	}
	return n;
}

/* ft_outcome records an ambiguous or refused action (refusals are failures). */
static inline void
ft_outcome(warble_client *c, ft_user *u, int what, int rc, const char *detail)
{
	if (!ft_transport(rc)) {
		it_fail("%s %s %s: %s: %s (treated as ambiguous)", u->name, ft_act_names[what],
		    detail, warble_errname(rc), warble_errmsg(c));
	}
	atomic_fetch_add(&ft_ambig[what], 1);
	u->pending = true; /* a late execution must not reorder with this user's next action */
	wbt_sleep_ms(20);  /* pacing while a daemon restarts */
}

/* ft_do_publish publishes attempt k of u. */
static inline void
ft_do_publish(warble_client *c, ft_user *u, int i)
{
	char     text[48];
	uint64_t id = 0;

	if (u->nposts == u->cap) {
		size_t   cap = u->cap ? u->cap * 2 : 64;
		ft_post *p = realloc(u->posts, cap * sizeof(*p));
		if (p == NULL) {
			it_fail("%s: out of memory", u->name);
			return;
		}
		u->posts = p;
		u->cap = cap;
	}
	ft_post *p = &u->posts[u->nposts];
	snprintf(text, sizeof(text), "ft%d-%zu", i, u->nposts);
	int32_t t0 = ft_ms();
	int     rc = warble_post(c, text, &id);
	ft_note(u, FT_A_PUBLISH, id, t0, rc);
	*p = (ft_post) { .id = id, .pstate = FT_P_ACKED, .dstate = FT_D_NO };
	u->nposts++;
	if (rc == WARBLE_OK && id != 0) {
		atomic_fetch_add(&ft_acked[FT_A_PUBLISH], 1);
		return;
	}
	p->pstate = FT_P_AMBIG;
	p->id = 0;
	ft_outcome(c, u, FT_A_PUBLISH, rc == WARBLE_OK ? WARBLE_EINTERNAL : rc, text);
}

/* ft_do_delete deletes one of u's acknowledged posts; false if u has none. */
static inline bool
ft_do_delete(warble_client *c, ft_user *u, uint64_t r)
{
	char detail[48];

	for (size_t j = 0; j < u->nposts; j++) {
		ft_post *p = &u->posts[(r + j) % u->nposts];
		if (p->pstate != FT_P_ACKED || p->dstate == FT_D_YES) {
			continue;
		}
		int32_t t0 = ft_ms();
		int     rc = warble_delete(c, p->id);
		ft_note(u, FT_A_DELETE, p->id, t0, rc);
		snprintf(detail, sizeof(detail), "%llu", (unsigned long long)p->id);
		if (rc == WARBLE_OK) {
			p->dstate = FT_D_YES;
			atomic_fetch_add(&ft_acked[FT_A_DELETE], 1);
		} else if (rc == WARBLE_ENOPOST && p->dstate == FT_D_AMBIG) {
			p->dstate = FT_D_YES; /* the ambiguous delete happened */
			ft_decided[2]++;
		} else if (rc == WARBLE_ENOPOST) {
			it_fail("%s delete %s: the acknowledged post is gone", u->name, detail);
			p->dstate = FT_D_YES;
		} else {
			p->dstate = FT_D_AMBIG;
			ft_outcome(c, u, FT_A_DELETE, rc, detail);
		}
		return true;
	}
	return false;
}

/* ft_do_edge makes u follow (or unfollow) user b. */
static inline void
ft_do_edge(warble_client *c, ft_user *u, int b, bool follow)
{
	int32_t t0 = ft_ms();
	int rc = follow ? warble_follow(c, ft_users[b].name) : warble_unfollow(c, ft_users[b].name);

	ft_note(u, follow ? FT_A_FOLLOW : FT_A_UNFOLLOW, (uint64_t)b, t0, rc);

	if (rc == WARBLE_OK) {
		u->follows[b] = follow;
		u->fambig[b] = false;
		atomic_fetch_add(&ft_acked[follow ? FT_A_FOLLOW : FT_A_UNFOLLOW], 1);
		return;
	}
	u->fambig[b] = true;
	ft_outcome(c, u, follow ? FT_A_FOLLOW : FT_A_UNFOLLOW, rc, ft_users[b].name);
}

/* ft_act does one random action as one of worker w's users, in the current mix. */
static inline void
ft_act(ft_worker *w)
{
	static const int pub[] = { 40, 70, 10 }, del[] = { 15, 10, 5 };
	int              mine = (FT_USERS - w->index + FT_THREADS - 1) / FT_THREADS;
	int              j = (int)(it_rand(&w->rand) % (uint64_t)mine);
	int              i = -1;
	int              mix = atomic_load(&ft_mix);
	int              roll = (int)(it_rand(&w->rand) % 100);
	uint64_t         r = it_rand(&w->rand);

	for (int tries = 0; tries < mine && i < 0; tries++, j = (j + 1) % mine) {
		if (!ft_users[w->index + FT_THREADS * j].pending) {
			i = w->index + FT_THREADS * j;
		}
	}
	if (i < 0) {
		wbt_sleep_ms(5); /* all of this thread's users wait for ft_check */
		return;
	}
	ft_user *u = &ft_users[i];
	bool     full = ft_live(u) >= FT_LIVE_MAX;

	warble_set_token(w->c, u->token);
	if (roll < pub[mix] && !full) {
		ft_do_publish(w->c, u, i);
		return;
	}
	if ((roll < pub[mix] + del[mix] || full) && ft_do_delete(w->c, u, r)) {
		return;
	}
	int b = (int)(r % FT_USERS);
	if (b != i) {
		ft_do_edge(w->c, u, b, (r >> 32) % 100 < 60);
	}
}

/* ft_worker_main runs actions until told to stop, idling while paused. */
static void *
ft_worker_main(void *arg)
{
	ft_worker *w = arg;
	long long  window = wbt_now_ms(); /* 100 ms windows of FT_ACTIONS_PER_S / 10 actions */
	int        done = 0;

	for (;;) {
		int ph = atomic_load(&ft_phase);
		if (ph == FT_STOP) {
			break;
		}
		if (ph == FT_PAUSE) {
			atomic_fetch_add(&ft_idle, 1);
			while (atomic_load(&ft_phase) == FT_PAUSE) {
				wbt_sleep_ms(2);
			}
			atomic_fetch_sub(&ft_idle, 1);
			window = wbt_now_ms();
			done = 0;
			continue;
		}
		ft_act(w);
		if (++done >= FT_ACTIONS_PER_S / FT_THREADS / 10) {
			long long left = window + 100 - wbt_now_ms();
			if (left > 0) {
				wbt_sleep_ms((int)left); /* the pace, not a synchronization */
			}
			window = wbt_now_ms();
			done = 0;
		}
	}
	return NULL;
}

/* ft_pause stops the writers between two actions (every call in flight has its answer or error). */
static inline void
ft_pause(void)
{
	long long deadline = wbt_now_ms() + wbt_ms(FT_PAUSE_MS);

	atomic_store(&ft_phase, FT_PAUSE);
	while (atomic_load(&ft_idle) != FT_THREADS) {
		cr_assert_lt(wbt_now_ms(), deadline, "the writers did not pause");
		wbt_sleep_ms(2);
	}
}

/* ft_register_all registers and logs in every user (main thread, before the workers start). */
static inline void
ft_register_all(warble_client *c)
{
	for (int i = 0; i < FT_USERS; i++) {
		ft_user *u = &ft_users[i];
		uint64_t uid = 0;

		snprintf(u->name, sizeof(u->name), "ft%02d", i);
		int rc = warble_register(c, u->name, "ft-password", &u->uid);
		if (rc == WARBLE_OK) {
			rc = warble_login(c, u->name, "ft-password", &uid);
		}
		cr_assert(rc == WARBLE_OK && uid == u->uid && warble_token(c) != NULL,
		    "%s: register/login: %s: %s", u->name, warble_errname(rc), warble_errmsg(c));
		u->token = strdup(warble_token(c));
	}
}

/* ft_start_workers starts the writers (paused) with seed-derived random states. */
static inline void
ft_start_workers(void)
{
	atomic_store(&ft_phase, FT_PAUSE);
	for (int t = 0; t < FT_THREADS; t++) {
		ft_worker *w = &ft_workers[t];
		*w = (ft_worker) { .index = t, .rand = ft_seed ^ ((uint64_t)(t + 1) << 40) };
		cr_assert_eq(warble_open(&w->c, it_cl.gateway_url, wbt_ms(FT_CALL_MS)), WARBLE_OK);
		cr_assert_eq(pthread_create(&w->thread, NULL, ft_worker_main, w), 0);
	}
	ft_pause();
}

/* ft_stop_workers ends the writers and frees the model. */
static inline void
ft_stop_workers(void)
{
	atomic_store(&ft_phase, FT_STOP);
	for (int t = 0; t < FT_THREADS; t++) {
		pthread_join(ft_workers[t].thread, NULL);
		warble_close(ft_workers[t].c);
	}
	for (int i = 0; i < FT_USERS; i++) {
		free(ft_users[i].token);
		free(ft_users[i].posts);
	}
}

/*
 * ft_converge waits until the inbox has applied everything both logs
 * hold (events_behind 0, content_applied and relation_applied equal to
 * the logs' last seqs); returns the ms it took.  Fails at the deadline.
 */
static inline long long
ft_converge(const char *what)
{
	long long t0 = wbt_now_ms(), deadline = t0 + wbt_ms(FT_CONVERGE_MS);

	for (;;) {
		uint64_t c = it_log_last(it_cl.content_url, WB_OP_POST_LOG);
		uint64_t r = it_log_last(it_cl.relation_url, WB_OP_REL_LOG);
		uint64_t ca = it_gauge(it_cl.inbox_url, "content_applied");
		uint64_t ra = it_gauge(it_cl.inbox_url, "relation_applied");
		uint64_t behind = it_gauge(it_cl.inbox_url, "events_behind");
		if (ca == c && ra == r && behind == 0) {
			return wbt_now_ms() - t0;
		}
		cr_assert_lt(wbt_now_ms(), deadline,
		    "%s: inbox never caught up: content %llu/%llu, relation %llu/%llu applied, "
		    "%llu behind",
		    what, (unsigned long long)ca, (unsigned long long)c, (unsigned long long)ra,
		    (unsigned long long)r, (unsigned long long)behind);
		wbt_sleep_ms(20);
	}
}

/* ft_attempt parses a post text "ft<i>-<k>" of user i into k; false if it is no attempt of i. */
static inline bool
ft_attempt(int i, const char *text, size_t *k)
{
	int                n = 0;
	unsigned long long kk;
	int                ii;

	if (text == NULL || sscanf(text, "ft%d-%llu%n", &ii, &kk, &n) != 2 || text[n] != '\0' ||
	    ii != i || kk >= ft_users[i].nposts) {
		return false;
	}
	*k = (size_t)kk;
	return true;
}

/*
 * ft_resolve_posts reads user i's timeline (the authoritative posts),
 * settles its ambiguous publishes and deletes from it, and checks that
 * it holds exactly the model's live posts, newest first.
 */
static inline void
ft_resolve_posts(warble_client *c, int i, uint64_t *want, uint64_t *got, size_t cap)
{
	ft_user *u = &ft_users[i];
	uint64_t before = 0;
	size_t   n = 0, nwant = 0;
	bool    *seen = calloc(u->nposts + 1, sizeof(bool));

	cr_assert_not_null(seen);
	for (int pages = 0; pages < 10000; pages++) {
		warble_posts_t *p = NULL;
		int             rc = warble_timeline(c, u->name, before, IT_PAGE, &p);
		if (rc != WARBLE_OK) {
			it_fail(
			    "%s: timeline: %s: %s", u->name, warble_errname(rc), warble_errmsg(c));
			free(seen);
			return;
		}
		for (size_t j = 0; j < p->n && n < cap; j++) {
			size_t k;
			got[n++] = p->posts[j].id;
			if (!ft_attempt(i, p->posts[j].text, &k) || p->posts[j].author != u->uid) {
				it_fail("%s: timeline holds %llu (\"%s\"), which no attempt wrote",
				    u->name, (unsigned long long)p->posts[j].id, p->posts[j].text);
				continue;
			}
			ft_post *q = &u->posts[k];
			if (seen[k]) {
				it_fail("%s: attempt %zu is in the timeline twice (%llu)", u->name,
				    k, (unsigned long long)p->posts[j].id);
			}
			seen[k] = true;
			if (q->pstate == FT_P_AMBIG) {
				q->pstate = FT_P_ACKED; /* decided: committed */
				q->id = p->posts[j].id;
				ft_decided[0]++;
			} else if (q->pstate == FT_P_ABSENT) {
				it_fail("%s: attempt %zu, decided absent earlier, appeared as %llu",
				    u->name, k, (unsigned long long)p->posts[j].id);
			}
			if (q->dstate == FT_D_AMBIG) {
				q->dstate = FT_D_NO; /* decided: the delete did not happen */
			}
		}
		before = p->next;
		bool more = p->next != 0 && p->n > 0;
		warble_posts_free(p);
		if (!more) {
			break;
		}
	}
	for (size_t k = 0; k < u->nposts; k++) {
		ft_post *q = &u->posts[k];
		if (q->pstate == FT_P_AMBIG && !seen[k]) {
			q->pstate = FT_P_ABSENT; /* decided: never committed */
			ft_decided[1]++;
		}
		if (q->pstate == FT_P_ACKED && q->dstate == FT_D_AMBIG && !seen[k]) {
			q->dstate = FT_D_YES; /* decided: deleted */
			ft_decided[2]++;
		}
		if (q->pstate == FT_P_ACKED && q->dstate == FT_D_NO && nwant < cap) {
			want[nwant++] = q->id;
		}
	}
	free(seen);
	qsort(want, nwant, sizeof(*want), it_cmp_desc);
	it_same_ids(u->name, "timeline", got, (long)n, want, nwant);
	ft_posts_checked += nwant;
}

/* ft_resolve_edges reads the following list of user i when one of its edges is ambiguous, and settles them. */
static inline void
ft_resolve_edges(warble_client *c, int i, uint64_t *got, size_t cap)
{
	ft_user *u = &ft_users[i];
	bool     any = false;

	for (int b = 0; b < FT_USERS; b++) {
		any |= u->fambig[b];
	}
	if (!any) {
		return;
	}
	long k = it_users_all(c, u->name, false, got, cap);
	if (k < 0) {
		return;
	}
	for (int b = 0; b < FT_USERS; b++) {
		if (!u->fambig[b]) {
			continue;
		}
		u->follows[b] = false;
		for (long j = 0; j < k; j++) {
			u->follows[b] |= got[j] == ft_users[b].uid;
		}
		u->fambig[b] = false;
		ft_decided[3]++;
	}
}

/* ft_user_of returns the index of the workload user with uid, or -1 (the soak's celebrity, say). */
static inline int
ft_user_of(uint64_t uid)
{
	for (int a = 0; a < FT_USERS; a++) {
		if (ft_users[a].uid == uid) {
			return a;
		}
	}
	return -1;
}

/* ft_post_find finds post id among every user's attempts: the author's index and the attempt (-1 if none). */
static inline int
ft_post_find(uint64_t id, size_t *k)
{
	for (int a = 0; id != 0 && a < FT_USERS; a++) {
		for (size_t j = 0; j < ft_users[a].nposts; j++) {
			if (ft_users[a].posts[j].id == id) {
				*k = j;
				return a;
			}
		}
	}
	return -1;
}

/* ft_inbox_raw reads reader uid's inbox straight from the inbox service (ids and authors); the count, or -1 (it_fail) if it did not answer or holds more than cap. */
static inline long
ft_inbox_raw(uint64_t uid, uint64_t *ids, uint64_t *authors, size_t cap)
{
	uint64_t before = 0;
	size_t   n = 0;

	for (int pages = 0; pages < 1000; pages++) {
		wb_obj       *req = wb_request(WB_OP_INBOX_HOME), *rep = NULL;
		const wb_obj *posts = NULL;
		size_t        np = 0;

		if (req != NULL) {
			wb_set_u64(req, WB_F_UID, uid);
			wb_set_u64(req, WB_F_LIMIT, IT_PAGE);
			if (before != 0) {
				wb_set_u64(req, WB_F_BEFORE, before);
			}
		}
		int rc = it_call(it_cl.inbox_url, req, &rep);
		if (rc != WB_OK) {
			it_fail(
			    "uid %llu: inbox.home: %s", (unsigned long long)uid, wb_err_name(rc));
			wb_msg_free(rep);
			return -1;
		}
		(void)wb_get_objs(rep, WB_F_POSTS, &posts, &np);
		if (n + np > cap) {
			it_fail("uid %llu: the inbox row holds more than %zu cells",
			    (unsigned long long)uid, cap);
			wb_msg_free(rep);
			return -1;
		}
		for (size_t j = 0; j < np; j++, n++) {
			ids[n] = wb_u64(&posts[j], WB_F_ID, 0);
			authors[n] = wb_u64(&posts[j], WB_F_AUTHOR, 0);
		}
		bool more = wb_get_u64(rep, WB_F_NEXT, &before) && before != 0 && np > 0;
		wb_msg_free(rep);
		if (!more) {
			return (long)n;
		}
	}
	it_fail("uid %llu: the inbox row never ended", (unsigned long long)uid);
	return -1;
}

/* ft_rel_follows asks relation whether uid follows target now: 1, 0, or -1 if it did not answer. */
static inline int
ft_rel_follows(uint64_t uid, uint64_t target)
{
	wb_obj *req = wb_request(WB_OP_REL_IS_FOLLOWING), *rep = NULL;
	bool    f = false;
	int     v = -1;

	if (req != NULL) {
		wb_set_u64(req, WB_F_UID, uid);
		wb_set_u64(req, WB_F_TARGET, target);
	}
	if (it_call(it_cl.relation_url, req, &rep) == WB_OK &&
	    wb_get_bool(rep, WB_F_FOLLOWED, &f)) {
		v = f;
	}
	wb_msg_free(rep);
	return v;
}

/* ft_post_exists asks content (post.get) whether post id exists now: 1, 0, or -1 if it did not answer. */
static inline int
ft_post_exists(uint64_t id)
{
	wb_obj       *req = wb_request(WB_OP_POST_GET), *rep = NULL;
	const wb_obj *posts = NULL;
	size_t        n = 0;
	int           v = -1;

	if (req != NULL) {
		wb_set_u64s(req, WB_F_IDS, &id, 1);
	}
	if (it_call(it_cl.content_url, req, &rep) == WB_OK) {
		v = wb_get_objs(rep, WB_F_POSTS, &posts, &n) && n == 1;
	}
	wb_msg_free(rep);
	return v;
}

/* ft_history prints user i's remembered actions on user b's edge (b >= 0) or on post id (b < 0). */
static inline void
ft_history(int i, int b, uint64_t id)
{
	const ft_user *u = &ft_users[i];
	size_t         first = u->nhist > FT_HIST ? u->nhist - FT_HIST : 0;
	int            shown = 0;

	for (size_t h = first; h < u->nhist; h++) {
		const ft_hist *e = &u->hist[h % FT_HIST];
		bool           edge = e->what == FT_A_FOLLOW || e->what == FT_A_UNFOLLOW;
		if (b >= 0 ? !(edge && e->arg == (uint64_t)b) : (edge || e->arg != id)) {
			continue;
		}
		fprintf(stderr,
		    "fault: explain:     %s %s %s: sent at %d ms, answered at %d ms: %s\n", u->name,
		    ft_act_names[e->what], b >= 0 ? ft_users[b].name : "", e->t0, e->t1,
		    warble_errname(e->rc));
		shown++;
	}
	if (shown == 0) {
		fprintf(stderr, "fault: explain:     (no such action among %s's last %zu)\n",
		    u->name, u->nhist - first);
	}
}

/* ft_home_entry explains one entry (id, author) that list what of reader i has (extra) or lacks (missing). */
static inline void
ft_home_entry(int i, const char *what, uint64_t id, uint64_t author, bool extra,
    const uint64_t *raw, const uint64_t *rawa, long nraw)
{
	static const char *const pstates[] = { "acknowledged", "ambiguous", "absent" };
	static const char *const dstates[] = { "not deleted", "deleted", "delete ambiguous" };
	const ft_user           *u = &ft_users[i];
	size_t                   k = 0;
	int                      a = ft_post_find(id, &k);
	int                      ua = ft_user_of(author);
	long                     inraw = -1;

	if (a < 0) {
		a = ua;
	}
	for (long j = 0; j < nraw; j++) {
		if (raw[j] == id) {
			inraw = j;
		}
	}
	fprintf(stderr,
	    "fault: explain: %s: %s %s post %llu (published at %d ms) by %s (uid "
	    "%llu)\n",
	    u->name, what, extra ? "has an extra" : "lacks", (unsigned long long)id,
	    (int)((int64_t)wb_id_ms(id) - (int64_t)ft_wall0),
	    a >= 0 ? ft_users[a].name : "no workload user", (unsigned long long)author);
	if (a >= 0 && ft_post_find(id, &k) == a) {
		const ft_post *q = &ft_users[a].posts[k];
		fprintf(stderr, "fault: explain:   model: attempt %zu of %s, %s, %s\n", k,
		    ft_users[a].name, pstates[q->pstate], dstates[q->dstate]);
	} else {
		fprintf(stderr, "fault: explain:   model: no attempt has this id\n");
	}
	if (a == i) {
		fprintf(
		    stderr, "fault: explain:   model: %s's own post, in its own home\n", u->name);
		fprintf(stderr, "fault: explain:   %s's actions on the post:\n", u->name);
		ft_history(i, -1, id);
	} else if (a >= 0) {
		fprintf(stderr, "fault: explain:   model: %s %s %s%s; relation says: %d\n", u->name,
		    u->follows[a] ? "follows" : "does not follow", ft_users[a].name,
		    u->fambig[a] ? " (ambiguous)" : "", ft_rel_follows(u->uid, ft_users[a].uid));
		fprintf(stderr, "fault: explain:   %s's actions on the edge to %s:\n", u->name,
		    ft_users[a].name);
		ft_history(i, a, 0);
		fprintf(stderr, "fault: explain:   %s's actions on the post:\n", ft_users[a].name);
		ft_history(a, -1, id);
	}
	fprintf(stderr,
	    "fault: explain:   content has the post: %d; the inbox row holds it: %s "
	    "(author %llu)\n",
	    ft_post_exists(id), inraw >= 0 ? "yes" : "no",
	    (unsigned long long)(inraw >= 0 ? rawa[inraw] : 0));
}

/*
 * ft_home_explain prints every entry where reader i's list what (the
 * hydrated home or the raw inbox row: got, with authors gauth, newest
 * first) and the model's want differ, with what the model, the users'
 * action histories and the services say about each.
 */
static inline void
ft_home_explain(int i, const char *what, const uint64_t *got, const uint64_t *gauth, long ngot,
    const uint64_t *want, size_t nwant)
{
	enum { RAW = 4096, SHOWN = 12 };
	static uint64_t raw[RAW], rawa[RAW];
	long            nraw = ft_inbox_raw(ft_users[i].uid, raw, rawa, RAW);
	size_t          g = 0, w = 0;
	int             shown = 0;

	fprintf(stderr,
	    "fault: explain: %s (uid %llu): %s has %ld entries, the model %zu, the "
	    "inbox row %ld; the last fault struck at %lld ms, now %d ms\n",
	    ft_users[i].name, (unsigned long long)ft_users[i].uid, what, ngot, nwant, nraw,
	    ft_fault_at, ft_ms());
	while ((g < (size_t)(ngot > 0 ? ngot : 0) || w < nwant) && shown < SHOWN) {
		if (g < (size_t)ngot && w < nwant && got[g] == want[w]) {
			g++, w++;
		} else if (g < (size_t)ngot && (w == nwant || got[g] > want[w])) {
			ft_home_entry(i, what, got[g], gauth[g], true, raw, rawa, nraw);
			g++, shown++;
		} else {
			size_t k = 0;
			int    a = ft_post_find(want[w], &k);
			ft_home_entry(
			    i, what, want[w], a >= 0 ? ft_users[a].uid : 0, false, raw, rawa, nraw);
			w++, shown++;
		}
	}
}

/* ft_check settles every ambiguity, then compares every user's timeline, home, lists and counts with the model. */
static inline void
ft_check(warble_client *c)
{
	enum { CAP = FT_USERS * FT_LIVE_MAX * 2 + 16 };
	static uint64_t want[CAP], got[CAP], gauth[CAP];

	for (int i = 0; i < FT_USERS; i++) {
		ft_resolve_posts(c, i, want, got, CAP);
		ft_resolve_edges(c, i, got, CAP);
		ft_users[i].pending = false;
	}
	for (int i = 0; i < FT_USERS; i++) {
		ft_user *u = &ft_users[i];
		size_t   n = 0, nf = 0, nfans = 0;
		long     k;

		for (int b = 0; b < FT_USERS; b++) {
			if (!u->follows[b] && b != i) { /* one's own posts are in one's home */
				continue;
			}
			for (size_t j = 0; j < ft_users[b].nposts && n < CAP; j++) {
				const ft_post *q = &ft_users[b].posts[j];
				if (q->pstate == FT_P_ACKED && q->dstate == FT_D_NO) {
					want[n++] = q->id;
				}
			}
		}
		qsort(want, n, sizeof(*want), it_cmp_desc);
		if (n >= FT_INBOX_MAX) {
			it_fail("%s: the model's home holds %zu posts, at the inbox's cap %d",
			    u->name, n, FT_INBOX_MAX);
		}
		warble_set_token(c, u->token);
		k = it_home_all(c, u->name, got, gauth, CAP);
		if (!it_same_ids(u->name, "home", got, k, want, n) && k >= 0) {
			ft_home_explain(i, "home", got, gauth, k, want, n);
		}
		/* the row itself, read from the inbox: no cell the hydration hides (a deleted post) */
		k = ft_inbox_raw(u->uid, got, gauth, CAP);
		if (!it_same_ids(u->name, "inbox row", got, k, want, n) && k >= 0) {
			ft_home_explain(i, "inbox row", got, gauth, k, want, n);
		}
		ft_entries += n;
		ft_homes++;

		for (int b = 0; b < FT_USERS; b++) {
			if (u->follows[b]) {
				want[nf++] = ft_users[b].uid;
			}
		}
		it_check_list(c, u->name, false, want, nf, got, CAP);
		for (int a = 0; a < FT_USERS; a++) {
			if (ft_users[a].follows[i]) {
				want[nfans++] = ft_users[a].uid;
			}
		}
		it_check_list(c, u->name, true, want, nfans, got, CAP);
		it_profile_counts(c, u->name, nf, nfans);
		ft_entries += nf + nfans + 2;
	}
}

/* The faults a round can inject. */
enum {
	FT_F_KILL,       /* SIGKILL at a random moment, restart */
	FT_F_KILL_ACKED, /* SIGKILL right after an acknowledged publish (content) or follow (relation) */
	FT_F_STOP,       /* SIGSTOP for stop_ms, then SIGCONT */
};

typedef struct ft_fault {
	int type, svc;
	int before_ms, after_ms; /* writers run this long before and after the fault */
	int stop_ms;
	void (*hook)(void *arg); /* if set, called right before the fault */
	void *arg;
} ft_fault;

/* ft_wait_ack waits (up to 10 s) until one more action of kind what is acknowledged; false if none came. */
static inline bool
ft_wait_ack(int what)
{
	unsigned long v = atomic_load(&ft_acked[what]);
	long long     deadline = wbt_now_ms() + 10000;

	while (atomic_load(&ft_acked[what]) == v) {
		if (wbt_now_ms() > deadline) {
			return false;
		}
		sched_yield();
	}
	return true;
}

/* ft_round runs the writers around one fault, pauses them, waits for the inbox and checks the model; prints one line. */
static inline void
ft_round(int no, const ft_fault *f, warble_client *checker)
{
	char      desc[160];
	long long t_fault, t_back, t_conv, t_check;

	atomic_store(&ft_mix, f->type == FT_F_KILL_ACKED
	                          ? (f->svc == FT_SVC_RELATION ? FT_MIX_FOLLOW : FT_MIX_PUBLISH)
	                      : f->type == FT_F_STOP ? FT_MIX_PUBLISH
	                                             : FT_MIX_MIXED);
	atomic_store(&ft_phase, FT_RUN);
	wbt_sleep_ms(f->before_ms); /* the workload's length, not a synchronization */
	if (f->hook != NULL) {
		f->hook(f->arg);
	}
	unsigned long acked0 = 0, ambig0 = 0;
	for (int a = 0; a < FT_A_COUNT; a++) {
		acked0 += atomic_load(&ft_acked[a]);
		ambig0 += atomic_load(&ft_ambig[a]);
	}
	if (f->type == FT_F_STOP) {
		wbt_daemon *d = *ft_slot(f->svc);
		snprintf(desc, sizeof(desc), "SIGSTOP %s for %d ms", ft_name(f->svc), f->stop_ms);
		t_fault = wbt_now_ms();
		ft_fault_at = ft_ms();
		cr_assert_eq(wbt_pause(d), 0);
		wbt_sleep_ms(f->stop_ms); /* the fault's length */
		cr_assert_eq(wbt_resume(d), 0);
		ft_stops++;
	} else {
		bool acked = true;
		if (f->type == FT_F_KILL_ACKED) {
			acked = ft_wait_ack(f->svc == FT_SVC_RELATION ? FT_A_FOLLOW : FT_A_PUBLISH);
		}
		t_fault = wbt_now_ms();
		ft_fault_at = ft_ms();
		cr_assert_eq(wbt_cluster_restart(&it_cl, ft_slot(f->svc), SIGKILL), 0,
		    "%s did not come back", ft_name(f->svc));
		snprintf(desc, sizeof(desc), "kill -9 %s%s", ft_name(f->svc),
		    f->type != FT_F_KILL_ACKED  ? " at a random moment"
		    : !acked                    ? " (no acknowledgement came first)"
		    : f->svc == FT_SVC_RELATION ? " right after an acknowledged follow"
		                                : " right after an acknowledged publish");
		ft_kills[f->svc]++;
	}
	t_back = wbt_now_ms() - t_fault;
	wbt_sleep_ms(f->after_ms);
	ft_pause();
	t_conv = ft_converge(desc);
	long long     t_all = wbt_now_ms() - t_fault;
	unsigned long acked = 0, ambig = 0;
	for (int a = 0; a < FT_A_COUNT; a++) {
		acked += atomic_load(&ft_acked[a]);
		ambig += atomic_load(&ft_ambig[a]);
	}
	uint64_t pulls = it_gauge(it_cl.inbox_url, "log_pulls");
	uint64_t gaps = it_gauge(it_cl.inbox_url, "seq_gaps");
	uint64_t drops = it_gauge(it_cl.inbox_url, "events_dropped");
	t_check = wbt_now_ms();
	ft_check(checker);
	fprintf(stderr,
	    "fault: round %d: %s: back in %lld ms; writers ran %d ms more; inbox "
	    "caught up %lld ms after they paused (%lld ms after the fault; since its start: %llu "
	    "log pulls, %llu seq gaps, %llu events dropped); %lu actions acknowledged, %lu "
	    "ambiguous; model checked in %lld ms, %lu mismatches\n",
	    no, desc, t_back, f->after_ms, t_conv, t_all, (unsigned long long)pulls,
	    (unsigned long long)gaps, (unsigned long long)drops, acked - acked0, ambig - ambig0,
	    wbt_now_ms() - t_check, it_failures());
	cr_assert_eq(
	    it_failures(), 0, "round %d (%s): the cluster differs from the model", no, desc);
}

/* ft_summary prints the totals of a workload run. */
static inline void
ft_summary(const char *what, int rounds)
{
	fprintf(stderr,
	    "fault: %s: seed %llu, %d rounds; kills survived: user %lu, relation %lu, "
	    "content %lu, inbox %lu, gateway %lu; SIGSTOPs %lu\n",
	    what, (unsigned long long)ft_seed, rounds, ft_kills[FT_SVC_USER],
	    ft_kills[FT_SVC_RELATION], ft_kills[FT_SVC_CONTENT], ft_kills[FT_SVC_INBOX],
	    ft_kills[FT_SVC_GATEWAY], ft_stops);
	fprintf(stderr,
	    "fault: %s: acknowledged %lu follows, %lu unfollows, %lu publishes, %lu "
	    "deletes; ambiguous %lu follows, %lu unfollows, %lu publishes, %lu deletes; decided "
	    "%lu publishes committed, %lu never committed, %lu deletes done, %lu edges read\n",
	    what, atomic_load(&ft_acked[0]), atomic_load(&ft_acked[1]), atomic_load(&ft_acked[2]),
	    atomic_load(&ft_acked[3]), atomic_load(&ft_ambig[0]), atomic_load(&ft_ambig[1]),
	    atomic_load(&ft_ambig[2]), atomic_load(&ft_ambig[3]), atomic_load(&ft_decided[0]),
	    atomic_load(&ft_decided[1]), atomic_load(&ft_decided[2]), atomic_load(&ft_decided[3]));
	fprintf(stderr,
	    "fault: %s: checked %lu timeline posts and %lu homes, %lu home/list "
	    "entries in all\n",
	    what, ft_posts_checked, ft_homes, ft_entries);
}

/* ft_seed_init takes the seed from WARBLE_SEED or the given default, and prints it. */
static inline void
ft_seed_init(uint64_t dflt, const char *what)
{
	const char *env = getenv("WARBLE_SEED");

	ft_seed = env != NULL ? strtoull(env, NULL, 10) : dflt;
	ft_wall0 = wb_now_ms();
	fprintf(stderr, "fault: %s: seed %llu (replay with WARBLE_SEED=%llu)%s\n", what,
	    (unsigned long long)ft_seed, (unsigned long long)ft_seed,
	    FT_SANITIZED ? "; sanitized build" : "");
}

#endif
