/*
 * fault_test.c - kill -9, SIGSTOP and restart Warble's daemons under load,
 * then check that nothing acknowledged was lost or duplicated (fault.h).
 *
 *   fault/workload   the SDK workload through a fixed schedule: content
 *                    killed right after acknowledged publishes, relation
 *                    right after acknowledged follows, gateway, inbox and
 *                    user at random moments, inbox SIGSTOPped for 5 s while
 *                    posts are published; the model checked after each
 *   fault/celebrity  a user with FT_FANS followers (rel.follow_many): the
 *                    inbox killed twice in the middle of one post's
 *                    fan-out (seen in its stats: fanout_in_progress, cells
 *                    written so far); afterwards every one of the fans'
 *                    inboxes holds exactly the celebrity's posts (all of
 *                    them read with inbox.home straight from the inbox)
 *   fault/soak       a randomized schedule over every daemon for
 *                    WARBLE_SOAK_SECONDS (make soak; 0 or unset: three
 *                    random rounds); WARBLE_SEED replays a schedule; a
 *                    celebrity with 20k fans (10k in the short run) posts
 *                    right before each fault, and 1000 random fans' inboxes
 *                    are checked after each round, all of them at the end
 *
 * Sanitized (ASan, or daemons under TSan), the celebrity has 20k fans
 * instead of 100k (the output says so).
 */
#include "fault.h"

#define FT_FANS_MAX 100000
/* ThreadSanitizer's daemons run about 8x slower (WARBLE_TEST_SLOW=8): a
 * smaller celebrity keeps the same phases well inside the test's limit */
#define FT_FANS (wbt_ms(1) >= 8 ? 4000 : FT_SANITIZED ? 20000 : FT_FANS_MAX)
/* users per user.register_many / rel.follow_many: relation checks each
 * batch's uids with one user.get of 1.5 s deadline, which a sanitized
 * user service on a loaded machine missed with 10,000 (TIMEOUT) */
#define FT_BULK        (FT_SANITIZED ? 2000 : 10000)
#define FT_CHECKERS    4 /* threads reading the fans' inboxes */
#define FT_CELEB_POSTS 8
#define FT_SEED        20240611u

/* ft_bulk_call sends one setup request (freed) to url with a long deadline, no retry (it is not idempotent). */
static int
ft_bulk_call(const char *url, wb_obj *req, wb_obj **rep)
{
	rt_client_opts o = { .timeout_ms = wbt_ms(120000) };
	rt_client     *c = NULL;
	int            rc;

	*rep = NULL;
	if ((rc = rt_client_open(&c, url, &o)) == WB_OK) {
		rc = rt_call(c, req, rep);
		rt_client_close(c);
	}
	wb_msg_free(req);
	return rc;
}

/* ft_gauges reads the inbox's fanout_in_progress and cells_written through c; false if it did not answer. */
static bool
ft_gauges(rt_client *c, uint64_t *in_progress, uint64_t *cells)
{
	wb_obj       *req = wb_request(WB_OP_STATS), *rep = NULL;
	const wb_obj *g = NULL;
	size_t        n = 0;
	bool          ok = false;

	*in_progress = *cells = UINT64_MAX;
	if (req != NULL && rt_call(c, req, &rep) == WB_OK &&
	    wb_get_objs(rep, WB_F_GAUGES, &g, &n)) {
		for (size_t i = 0; i < n; i++) {
			const char *name = wb_str(&g[i], WB_F_NAME, "");
			if (strcmp(name, "fanout_in_progress") == 0) {
				*in_progress = wb_u64(&g[i], WB_F_VALUE, 0);
			} else if (strcmp(name, "cells_written") == 0) {
				*cells = wb_u64(&g[i], WB_F_VALUE, 0);
			}
		}
		ok = *in_progress != UINT64_MAX && *cells != UINT64_MAX;
	}
	wb_msg_free(req);
	wb_msg_free(rep);
	return ok;
}

/*
 * ft_catch_fanout polls the inbox's stats until a fan-out is in progress
 * with some but not all of its cells written (cells_written between
 * base and base + FT_FANS), then kills the inbox (noting the time in
 * *killed_at) and restarts it; returns the cells written at the kill,
 * or -1 if the fan-out ended before it was caught.
 */
static long
ft_catch_fanout(uint64_t base, long long *killed_at)
{
	rt_client_opts o = { .timeout_ms = 2000 };
	rt_client     *c = NULL;
	long long      deadline = wbt_now_ms() + wbt_ms(60000);
	long           caught = -1;

	cr_assert_eq(rt_client_open(&c, it_cl.inbox_url, &o), WB_OK);
	while (wbt_now_ms() < deadline) {
		uint64_t busy, cells;
		if (!ft_gauges(c, &busy, &cells)) {
			wbt_sleep_ms(5);
			continue;
		}
		if (busy == 1 && cells > base && cells < base + FT_FANS) {
			caught = (long)(cells - base);
			break;
		}
		if (busy == 0 && cells >= base + FT_FANS) {
			break; /* done before we saw it half way */
		}
	}
	rt_client_close(c);
	if (caught >= 0) {
		*killed_at = wbt_now_ms();
		cr_assert_eq(wbt_cluster_restart(&it_cl, &it_cl.inbox, SIGKILL), 0,
		    "the inbox did not come back");
		ft_kills[FT_SVC_INBOX]++;
	}
	return caught;
}

typedef struct ft_fancheck {
	pthread_t       thread;
	const uint64_t *fans;
	size_t          from, to;
	const uint64_t *want; /* the celebrity's posts, newest first */
	size_t          nwant;
	uint64_t        celeb;
	unsigned long   ok;
} ft_fancheck;

/* ft_fancheck_main reads the inbox of fans[from..to) straight from the inbox service and compares it with want. */
static void *
ft_fancheck_main(void *arg)
{
	ft_fancheck   *f = arg;
	rt_client_opts o = { .timeout_ms = 10000 };
	rt_client     *c = NULL;

	if (rt_client_open(&c, it_cl.inbox_url, &o) != WB_OK) {
		it_fail("cannot open an inbox client");
		return NULL;
	}
	for (size_t i = f->from; i < f->to; i++) {
		wb_obj       *req = wb_request(WB_OP_INBOX_HOME), *rep = NULL;
		const wb_obj *posts = NULL;
		size_t        n = 0;
		int           rc;

		wb_set_u64(req, WB_F_UID, f->fans[i]);
		wb_set_u64(req, WB_F_LIMIT, FT_CELEB_POSTS + 4);
		rc = rt_call(c, req, &rep);
		wb_msg_free(req);
		if (rc != WB_OK) {
			it_fail("fan %llu: inbox.home: %s", (unsigned long long)f->fans[i],
			    wb_err_name(rc));
			wb_msg_free(rep);
			continue;
		}
		(void)wb_get_objs(rep, WB_F_POSTS, &posts, &n);
		bool same = n == f->nwant;
		for (size_t j = 0; same && j < n; j++) {
			same = wb_u64(&posts[j], WB_F_ID, 0) == f->want[j] &&
			       wb_u64(&posts[j], WB_F_AUTHOR, 0) == f->celeb;
		}
		if (same) {
			f->ok++;
		} else {
			it_fail("fan %llu: inbox holds %zu posts (first %llu), want the "
			        "celebrity's %zu "
			        "(first %llu)",
			    (unsigned long long)f->fans[i], n,
			    (unsigned long long)(n ? wb_u64(&posts[0], WB_F_ID, 0) : 0), f->nwant,
			    (unsigned long long)f->want[0]);
		}
		wb_msg_free(rep);
	}
	rt_client_close(c);
	return NULL;
}

/* ft_celeb_fans registers n fans (names fan<i>) and makes each follow celeb, FT_BULK at a time; returns ms. */
static long long
ft_celeb_fans(uint64_t celeb, uint64_t *fans, size_t n)
{
	long long t0 = wbt_now_ms();
	wb_obj   *req, *rep = NULL;
	int       rc;

	cr_assert_eq(n % FT_BULK, 0);
	for (size_t off = 0; off < n; off += FT_BULK) {
		const uint64_t *v;
		size_t          nv = 0;
		req = wb_request(WB_OP_USER_REGISTER_MANY);
		wb_set_cstr(req, WB_F_NAME, "fan");
		wb_set_u64(req, WB_F_FROM, off);
		wb_set_u64(req, WB_F_LIMIT, FT_BULK);
		wb_set_cstr(req, WB_F_PASSWORD, "ft-password");
		rc = ft_bulk_call(it_cl.user_url, req, &rep);
		cr_assert_eq(rc, WB_OK, "user.register_many: %s", wb_err_name(rc));
		cr_assert(wb_get_u64s(rep, WB_F_UIDS, &v, &nv) && nv == FT_BULK);
		memcpy(&fans[off], v, FT_BULK * sizeof(uint64_t));
		wb_msg_free(rep);
		req = wb_request(WB_OP_REL_FOLLOW_MANY);
		wb_set_u64(req, WB_F_TARGET, celeb);
		wb_set_u64s(req, WB_F_UIDS, &fans[off], FT_BULK);
		rc = ft_bulk_call(it_cl.relation_url, req, &rep);
		cr_assert_eq(rc, WB_OK, "rel.follow_many: %s", wb_err_name(rc));
		cr_assert_eq(wb_u64(rep, WB_F_COUNT, 0), FT_BULK);
		wb_msg_free(rep);
	}
	return wbt_now_ms() - t0;
}

/*
 * ft_fans_check reads the inbox of each of the n fans in list straight
 * from the inbox service (FT_CHECKERS threads) and compares it with the
 * celebrity's posts want (newest first); returns how many matched
 * exactly (each mismatch is an it_fail).
 */
static unsigned long
ft_fans_check(const uint64_t *list, size_t n, uint64_t celeb, const uint64_t *want, size_t nwant)
{
	ft_fancheck   chk[FT_CHECKERS];
	unsigned long ok = 0;

	for (int i = 0; i < FT_CHECKERS; i++) {
		chk[i] = (ft_fancheck) { .fans = list,
			.from = n * (size_t)i / FT_CHECKERS,
			.to = n * (size_t)(i + 1) / FT_CHECKERS,
			.want = want,
			.nwant = nwant,
			.celeb = celeb };
		cr_assert_eq(pthread_create(&chk[i].thread, NULL, ft_fancheck_main, &chk[i]), 0);
	}
	for (int i = 0; i < FT_CHECKERS; i++) {
		pthread_join(chk[i].thread, NULL);
		ok += chk[i].ok;
	}
	return ok;
}

Test(fault, celebrity_fanout, .fini = it_fini, .timeout = 600)
{
	static char     page[64], run[64];
	static uint64_t fans[FT_FANS_MAX];
	const char     *env[] = { page, run, NULL };
	uint64_t        celeb, posts[FT_CELEB_POSTS], fr;
	size_t          nposts = 0;
	wb_obj         *req, *rep = NULL;

	/* 20 pages and runs per fan-out, so a kill can land between two of them */
	snprintf(page, sizeof(page), "WARBLE_INBOX_FANOUT_PAGE=%d", FT_FANS / 20);
	snprintf(run, sizeof(run), "WARBLE_INBOX_FANOUT_RUN=%d", FT_FANS / 20);
	fprintf(stderr, "fault: celebrity: %d fans%s, %s\n", FT_FANS,
	    FT_SANITIZED ? " (sanitized build: 20k instead of 100k)" : "", page);
	it_start_as(env, WBT_FIVE); /* the inbox alone is killed */
	warble_client *c = it_client();
	cr_assert_eq(warble_register(c, "celeb", "ft-password", &celeb), WARBLE_OK);
	cr_assert_eq(warble_login(c, "celeb", "ft-password", NULL), WARBLE_OK);
	cr_assert_eq(warble_post(c, "before the fans came", &posts[nposts]), WARBLE_OK);
	nposts++;

	long long t0;
	long long t_setup = ft_celeb_fans(celeb, fans, FT_FANS);
	long long t_back = ft_converge("celebrity follows");
	fprintf(stderr,
	    "fault: celebrity: %d fans registered and following in %.1f s; the inbox "
	    "applied their follows (each a backfill) %.1f s later\n",
	    FT_FANS, t_setup / 1000.0, t_back / 1000.0);

	/* kill the inbox in the middle of a fan-out; try a few posts if one finishes unseen */
	long      caught = -1;
	long long t_kill = 0, t_kill2 = 0;
	for (int attempt = 0; caught < 0 && attempt < 4; attempt++) {
		uint64_t base = it_gauge(it_cl.inbox_url, "cells_written");
		cr_assert_neq(base, UINT64_MAX);
		cr_assert_eq(warble_post(c, "to every fan", &posts[nposts]), WARBLE_OK);
		nposts++;
		caught = ft_catch_fanout(base, &t_kill);
		if (caught < 0) {
			fprintf(stderr,
			    "fault: celebrity: post %zu: its fan-out ended before it was seen "
			    "half way; another post\n",
			    nposts - 1);
		}
	}
	cr_assert_geq(caught, 0, "never caught a fan-out in progress");
	fprintf(stderr,
	    "fault: celebrity: kill -9 inbox with the fan-out of post %llu in progress "
	    "(fanout_in_progress 1, %ld of %d cells written), back in %lld ms\n",
	    (unsigned long long)posts[nposts - 1], caught, FT_FANS, wbt_now_ms() - t_kill);
	/* the restarted inbox replays the event from its start: kill it again half way */
	long again = ft_catch_fanout(0, &t_kill2);
	if (again >= 0) {
		fprintf(stderr,
		    "fault: celebrity: kill -9 inbox again during the replayed fan-out (%ld "
		    "of %d cells written), back in %lld ms\n",
		    again, FT_FANS, wbt_now_ms() - t_kill2);
	} else {
		fprintf(
		    stderr, "fault: celebrity: the replayed fan-out ended before a second kill\n");
	}
	long long t_conv = ft_converge("celebrity fan-out after kills");
	fprintf(stderr,
	    "fault: celebrity: inbox caught up %.2f s after its last restart (%.2f s "
	    "after the first kill)\n",
	    t_conv / 1000.0, (wbt_now_ms() - t_kill) / 1000.0);

	/* the celebrity's own timeline, counts and fans list */
	qsort(posts, nposts, sizeof(*posts), it_cmp_desc);
	uint64_t *got = calloc(FT_FANS + 1, sizeof(uint64_t));
	cr_assert_not_null(got);
	long k = it_timeline_all(c, "celeb", got, FT_CELEB_POSTS);
	it_same_ids("celeb", "timeline", got, k, posts, nposts);
	it_profile_counts(c, "celeb", 0, FT_FANS);
	size_t nf = 0;
	for (uint64_t after = 0;;) {
		const uint64_t *v;
		size_t          nv = 0;
		req = wb_request(WB_OP_REL_FANS);
		wb_set_u64(req, WB_F_UID, celeb);
		wb_set_u64(req, WB_F_LIMIT, FT_BULK);
		if (after != 0) {
			wb_set_u64(req, WB_F_AFTER, after);
		}
		cr_assert_eq(it_call(it_cl.relation_url, req, &rep), WB_OK);
		(void)wb_get_u64s(rep, WB_F_UIDS, &v, &nv);
		cr_assert_leq(nf + nv, FT_FANS, "more fans than follows");
		memcpy(&got[nf], v, nv * sizeof(uint64_t));
		nf += nv;
		bool more = wb_get_u64(rep, WB_F_NEXT, &after) && after != 0 && nv > 0;
		wb_msg_free(rep);
		if (!more) {
			break;
		}
	}
	qsort(got, nf, sizeof(*got), it_cmp_asc);
	it_same_ids("celeb", "fans", got, (long)nf, fans, FT_FANS);
	req = wb_request(WB_OP_REL_COUNTS);
	wb_set_u64s(req, WB_F_UIDS, &celeb, 1);
	cr_assert_eq(it_call(it_cl.relation_url, req, &rep), WB_OK);
	const wb_obj *u;
	size_t        nu = 0;
	cr_assert(wb_get_objs(rep, WB_F_USERS, &u, &nu) && nu == 1);
	fr = wb_u64(&u[0], WB_F_FOLLOWERS, 0);
	wb_msg_free(rep);
	cr_assert_eq(fr, FT_FANS, "followers count %llu", (unsigned long long)fr);
	free(got);

	/* every fan's inbox: exactly the celebrity's posts, newest first */
	t0 = wbt_now_ms();
	unsigned long ok = ft_fans_check(fans, FT_FANS, celeb, posts, nposts);
	fprintf(stderr,
	    "fault: celebrity: read all %d fans' inboxes (inbox.home over ipc) in %.1f "
	    "s: %lu hold exactly the %zu posts, %lu mismatches; kills survived: inbox %lu\n",
	    FT_FANS, (wbt_now_ms() - t0) / 1000.0, ok, nposts, it_failures(),
	    ft_kills[FT_SVC_INBOX]);
	cr_assert_eq(it_failures(), 0, "fans' inboxes differ from the celebrity's posts");
	cr_assert_eq(ok, FT_FANS);
	/* and the celebrity's own: the same posts, its own home written through the kills too */
	cr_assert_eq(ft_fans_check(&celeb, 1, celeb, posts, nposts), 1, "the celebrity's own home");
	warble_close(c);
}

/* The fixed schedule of fault/workload. */
static const ft_fault ft_schedule[] = {
	{ FT_F_KILL_ACKED, FT_SVC_CONTENT, 0, 0, 0 },
	{ FT_F_KILL_ACKED, FT_SVC_RELATION, 0, 0, 0 },
	{ FT_F_KILL, FT_SVC_GATEWAY, 0, 0, 0 },
	{ FT_F_KILL_ACKED, FT_SVC_CONTENT, 0, 0, 0 },
	{ FT_F_KILL, FT_SVC_INBOX, 0, 0, 0 },
	{ FT_F_STOP, FT_SVC_INBOX, 0, 0, 5000 },
	{ FT_F_KILL_ACKED, FT_SVC_RELATION, 0, 0, 0 },
	{ FT_F_KILL, FT_SVC_USER, 0, 0, 0 },
	{ FT_F_KILL, FT_SVC_GATEWAY, 0, 0, 0 },
	{ FT_F_KILL_ACKED, FT_SVC_CONTENT, 0, 0, 0 },
};

/* ft_schedule_run runs the workload through the n faults of s on a cluster of shape. */
static void
ft_schedule_run(const char *what, const ft_fault *s, int n, wbt_shape shape)
{
	uint64_t rs;

	ft_seed_init(FT_SEED, what);
	rs = ft_seed;
	it_start_as(NULL, shape);
	warble_client *checker = it_client();
	ft_register_all(checker);
	ft_start_workers();
	for (int i = 0; i < n; i++) {
		ft_fault f = s[i];
		f.before_ms = 300 + (int)(it_rand(&rs) % 500);
		f.after_ms = 300 + (int)(it_rand(&rs) % 500);
		ft_round(i + 1, &f, checker);
	}
	ft_stop_workers();
	ft_summary(what, n);
	for (int a = 0; a < FT_A_COUNT; a++) {
		cr_assert_gt(atomic_load(&ft_acked[a]), 0, "no %s acknowledged", ft_act_names[a]);
	}
	warble_close(checker);
	cr_assert_eq(wbt_cluster_stop(&it_cl, 10000), 0, "a daemon did not stop cleanly");
}

Test(fault, workload, .fini = it_fini, .timeout = 600)
{
	/* one daemon at a time is killed or stopped */
	ft_schedule_run(
	    "workload", ft_schedule, (int)(sizeof(ft_schedule) / sizeof(ft_schedule[0])), WBT_FIVE);
}

/*
 * The one-process warble under the same workload: killed (right after an
 * acknowledged publish or follow, or at a random moment) and stopped as a
 * whole, every service at once; nothing acknowledged may be lost.
 */
static const ft_fault ft_one_schedule[] = {
	{ FT_F_KILL_ACKED, FT_SVC_CONTENT, 0, 0, 0 },
	{ FT_F_KILL, FT_SVC_GATEWAY, 0, 0, 0 },
	{ FT_F_KILL_ACKED, FT_SVC_RELATION, 0, 0, 0 },
	{ FT_F_STOP, FT_SVC_INBOX, 0, 0, 3000 },
	{ FT_F_KILL_ACKED, FT_SVC_CONTENT, 0, 0, 0 },
};

Test(fault, one_process, .fini = it_fini, .timeout = 600)
{
	ft_schedule_run("one_process", ft_one_schedule,
	    (int)(sizeof(ft_one_schedule) / sizeof(ft_one_schedule[0])), WBT_ONE);
}

/*
 * The soak's celebrity: SOAK_FANS followers; right before each fault it
 * publishes a post (and deletes its oldest beyond FT_CELEB_POSTS - 2
 * live ones), so faults land on fan-outs in flight.  Every daemon is up
 * at that moment, so these actions must be acknowledged.
 */
typedef struct ft_soak_celeb {
	warble_client *c;
	uint64_t       uid;
	uint64_t      *fans, *sample;
	size_t         nfans;
	uint64_t       live[FT_CELEB_POSTS]; /* oldest first */
	size_t         nlive;
	unsigned long  published, deleted, checked;
} ft_soak_celeb;

/* ft_soak_celeb_act publishes (and deletes the oldest post when full) as the celebrity. */
static void
ft_soak_celeb_act(void *arg)
{
	ft_soak_celeb *cb = arg;
	int            rc;

	if (cb->nlive >= FT_CELEB_POSTS - 2) {
		rc = warble_delete(cb->c, cb->live[0]);
		cr_assert_eq(rc, WARBLE_OK, "celebrity delete: %s: %s", warble_errname(rc),
		    warble_errmsg(cb->c));
		memmove(&cb->live[0], &cb->live[1], --cb->nlive * sizeof(uint64_t));
		cb->deleted++;
	}
	rc = warble_post(cb->c, "to every fan, before a fault", &cb->live[cb->nlive]);
	cr_assert_eq(
	    rc, WARBLE_OK, "celebrity post: %s: %s", warble_errname(rc), warble_errmsg(cb->c));
	cb->nlive++;
	cb->published++;
}

/* ft_soak_celeb_check compares n fans' inboxes (n == nfans: all, else a random sample) with the celebrity's live posts. */
static void
ft_soak_celeb_check(ft_soak_celeb *cb, size_t n, uint64_t *rs)
{
	uint64_t want[FT_CELEB_POSTS];

	for (size_t i = 0; i < cb->nlive; i++) {
		want[i] = cb->live[cb->nlive - 1 - i];
	}
	const uint64_t *list = cb->fans;
	if (n < cb->nfans) {
		for (size_t i = 0; i < n; i++) {
			cb->sample[i] = cb->fans[it_rand(rs) % cb->nfans];
		}
		list = cb->sample;
	}
	unsigned long ok = ft_fans_check(list, n, cb->uid, want, cb->nlive);
	cb->checked += n;
	cr_assert_eq(it_failures(), 0, "fans' inboxes differ from the celebrity's posts");
	cr_assert_eq(ok, n);
}

Test(fault, soak, .fini = it_fini, .timeout = 0)
{
	const char   *env = getenv("WARBLE_SOAK_SECONDS");
	long          secs = env != NULL ? strtol(env, NULL, 10) : 0;
	int           limit = secs > 0 ? 100000 : 3; /* rounds */
	uint64_t      rs;
	int           rounds = 0, restarts = 0;
	ft_soak_celeb cb = { .nfans = secs > 0 ? 20000 : 10000 };

	ft_seed_init(
	    env != NULL && getenv("WARBLE_SEED") == NULL ? (uint64_t)time(NULL) : FT_SEED, "soak");
	if (secs > 0) {
		fprintf(stderr, "fault: soak: %ld s of random faults\n", secs);
	}
	rs = ft_seed;
	it_start_as(NULL, WBT_FIVE); /* one daemon at a time is killed */
	warble_client *checker = it_client();
	ft_register_all(checker);
	cb.c = it_client();
	cb.fans = calloc(cb.nfans, sizeof(uint64_t));
	cb.sample = calloc(cb.nfans, sizeof(uint64_t));
	cr_assert(cb.fans != NULL && cb.sample != NULL);
	cr_assert_eq(warble_register(cb.c, "celeb", "ft-password", &cb.uid), WARBLE_OK);
	cr_assert_eq(warble_login(cb.c, "celeb", "ft-password", NULL), WARBLE_OK);
	long long t_fans = ft_celeb_fans(cb.uid, cb.fans, cb.nfans);
	long long t_conv = ft_converge("soak: celebrity follows");
	fprintf(stderr,
	    "fault: soak: a celebrity with %zu fans (set up in %.1f s, applied %.1f s "
	    "later) posts right before each fault\n",
	    cb.nfans, t_fans / 1000.0, t_conv / 1000.0);
	ft_start_workers();
	long long end = wbt_now_ms() + secs * 1000;
	/* each restart is one more harness daemon (at most 1024 per test) */
	while (rounds < limit && restarts < 900 && (secs <= 0 || wbt_now_ms() < end)) {
		ft_fault f = { .hook = ft_soak_celeb_act, .arg = &cb };
		int      r = (int)(it_rand(&rs) % 100);
		f.svc = (int)(it_rand(&rs) % FT_SVC_COUNT);
		f.type = r < 50 ? FT_F_KILL : r < 75 ? FT_F_KILL_ACKED : FT_F_STOP;
		if (f.type == FT_F_KILL_ACKED && f.svc != FT_SVC_CONTENT &&
		    f.svc != FT_SVC_RELATION) {
			f.type = FT_F_KILL;
		}
		f.stop_ms = 500 + (int)(it_rand(&rs) % 4500);
		f.before_ms = 200 + (int)(it_rand(&rs) % 1800);
		f.after_ms = 200 + (int)(it_rand(&rs) % 1800);
		restarts += f.type != FT_F_STOP;
		ft_round(++rounds, &f, checker);
		ft_soak_celeb_check(&cb, 1000, &rs);
	}
	ft_stop_workers();
	long long t0 = wbt_now_ms();
	ft_soak_celeb_check(&cb, cb.nfans, &rs);
	fprintf(stderr,
	    "fault: soak: the celebrity published %lu posts and deleted %lu, each just "
	    "before a fault; fans' inboxes compared: %lu (1000 sampled after each round, all %zu "
	    "at "
	    "the end in %.1f s)\n",
	    cb.published, cb.deleted, cb.checked, cb.nfans, (wbt_now_ms() - t0) / 1000.0);
	ft_summary("soak", rounds);
	warble_close(checker);
	warble_close(cb.c);
	free(cb.fans);
	free(cb.sample);
	cr_assert_eq(wbt_cluster_stop(&it_cl, 10000), 0, "a daemon did not stop cleanly");
}
