/*
 * erase_fault_test.c - the erasure of a deleted account survives kill -9
 * of any daemon while it runs.
 *
 * One round per daemon (user, relation, content, inbox, gateway): an
 * account with EF_FANS fans (user.register_many and rel.follow_many on
 * the services' own ports) that follows three of them and has posted,
 * so that its posts are in every fan's inbox, is deleted through the
 * gateway, and the round's daemon is killed (SIGKILL) in the middle of
 * the work that is its own: relation once it has removed some of the
 * fans' edges and not all, the inbox once it has purged some of the
 * fans' inboxes and not all (both read from their stats), the others
 * right after the deletion's reply.  It is started again on the same
 * data, and once every service has applied the user log and the inbox
 * every event of relation and content, the end state must be exact:
 * relation holds no edge of the account and every count is back where
 * it was (every fan follows nobody, the three have no fans), content no
 * post of it, and no fan's inbox a post of it (all EF_FANS read straight
 * from the inbox), its own inbox nothing.
 */
#include <signal.h>

#include "../integration/it.h"

/* the daemons under a sanitizer run several times slower: a smaller audience, the same phases */
#define EF_FANS     (wbt_ms(1) >= 8 ? 2000 : wbt_ms(1) > 1 ? 6000 : 20000)
#define EF_BULK     (wbt_ms(1) > 1 ? 2000 : 10000)
#define EF_FANS_MAX 20000
#define EF_POSTS    2
#define EF_CHECKERS 4
#define EF_PASS     "erase-fault-1"
#define EF_CONVERGE 240000 /* ms, scaled */

/* The daemons, in the order of the rounds. */
enum { EF_USER, EF_RELATION, EF_CONTENT, EF_INBOX, EF_GATEWAY, EF_NSVC };
static const char *const ef_names[EF_NSVC] = { "user", "relation", "content", "inbox", "gateway" };

static uint64_t ef_fans[EF_FANS_MAX];

/* ef_slot returns the cluster's slot of daemon i. */
static wbt_daemon **
ef_slot(int i)
{
	wbt_daemon **s[EF_NSVC] = { &it_cl.user, &it_cl.relation, &it_cl.content, &it_cl.inbox,
		&it_cl.gateway };
	return s[i];
}

/* ef_bulk sends one setup request (freed) to url with a long deadline (not idempotent: no retry). */
static wb_obj *
ef_bulk(const char *url, wb_obj *req)
{
	rt_client_opts o = { .timeout_ms = wbt_ms(120000) };
	rt_client     *c = NULL;
	wb_obj        *rep = NULL;
	int            rc = rt_client_open(&c, url, &o);

	if (rc == WB_OK) {
		rc = rt_call(c, req, &rep);
		rt_client_close(c);
	}
	wb_msg_free(req);
	cr_assert_eq(rc, WB_OK, "%s: %s", url, wb_err_name(rc));
	return rep;
}

/* ef_counts reads following and followers of uids[0..n) (at most 1000) from relation. */
static void
ef_counts(const uint64_t *uids, size_t n, uint64_t *following, uint64_t *followers)
{
	wb_obj       *req = wb_request(WB_OP_REL_COUNTS), *rep = NULL;
	const wb_obj *u = NULL;
	size_t        nu = 0;

	wb_set_u64s(req, WB_F_UIDS, uids, n);
	cr_assert_eq(it_call(it_cl.relation_url, req, &rep), WB_OK);
	cr_assert(wb_get_objs(rep, WB_F_USERS, &u, &nu) && nu == n);
	for (size_t i = 0; i < n; i++) {
		following[i] = wb_u64(&u[i], WB_F_FOLLOWING, UINT64_MAX);
		followers[i] = wb_u64(&u[i], WB_F_FOLLOWERS, UINT64_MAX);
	}
	wb_msg_free(rep);
}

/* ef_list counts a rel.following or rel.fans list of uid (one page of up to 10,000). */
static size_t
ef_list(wb_op op, uint64_t uid)
{
	wb_obj         *req = wb_request(op), *rep = NULL;
	const uint64_t *v = NULL;
	size_t          n = 0;

	wb_set_u64(req, WB_F_UID, uid);
	wb_set_u64(req, WB_F_LIMIT, 10000);
	cr_assert_eq(it_call(it_cl.relation_url, req, &rep), WB_OK);
	(void)wb_get_u64s(rep, WB_F_UIDS, &v, &n);
	wb_msg_free(rep);
	return n;
}

/* A thread reading fans' inboxes straight from the inbox. */
typedef struct ef_checker {
	pthread_t thread;
	size_t    from, to;
	uint64_t  author;
	size_t    want; /* cells by author each inbox must hold */
	size_t    bad;
} ef_checker;

static void *
ef_checker_main(void *arg)
{
	ef_checker    *k = arg;
	rt_client_opts o = { .timeout_ms = wbt_ms(20000) };
	rt_client     *c = NULL;

	if (rt_client_open(&c, it_cl.inbox_url, &o) != WB_OK) {
		it_fail("cannot open an inbox client");
		return NULL;
	}
	for (size_t i = k->from; i < k->to; i++) {
		wb_obj       *req = wb_request(WB_OP_INBOX_HOME), *rep = NULL;
		const wb_obj *p = NULL;
		size_t        n = 0, by = 0;
		int           rc;

		wb_set_u64(req, WB_F_UID, ef_fans[i]);
		wb_set_u64(req, WB_F_LIMIT, 100);
		rc = rt_call(c, req, &rep);
		wb_msg_free(req);
		if (rc != WB_OK) {
			it_fail("fan %llu: inbox.home: %s", (unsigned long long)ef_fans[i],
			    wb_err_name(rc));
			k->bad++;
			wb_msg_free(rep);
			continue;
		}
		(void)wb_get_objs(rep, WB_F_POSTS, &p, &n);
		for (size_t j = 0; j < n; j++) {
			by += wb_u64(&p[j], WB_F_AUTHOR, 0) == k->author;
		}
		if (by != k->want) {
			if (k->bad++ < 3) {
				it_fail("fan %llu: inbox holds %zu posts of %llu, want %zu",
				    (unsigned long long)ef_fans[i], by,
				    (unsigned long long)k->author, k->want);
			}
		}
		wb_msg_free(rep);
	}
	rt_client_close(c);
	return NULL;
}

/* ef_check_inboxes reads every fan's inbox: each must hold want posts of author; the bad ones. */
static size_t
ef_check_inboxes(uint64_t author, size_t want)
{
	ef_checker k[EF_CHECKERS];
	size_t     per = ((size_t)EF_FANS + EF_CHECKERS - 1) / EF_CHECKERS, bad = 0;

	for (int i = 0; i < EF_CHECKERS; i++) {
		size_t from = (size_t)i * per,
		       to = from + per < (size_t)EF_FANS ? from + per : EF_FANS;
		k[i] = (ef_checker) { .from = from, .to = to, .author = author, .want = want };
		cr_assert_eq(pthread_create(&k[i].thread, NULL, ef_checker_main, &k[i]), 0);
	}
	for (int i = 0; i < EF_CHECKERS; i++) {
		pthread_join(k[i].thread, NULL);
		bad += k[i].bad;
	}
	return bad;
}

/* ef_wait_gauge waits until a gauge of url reaches want (at the deadline the test fails). */
static void
ef_wait_gauge(const char *url, const char *gauge, uint64_t want, long long deadline)
{
	for (;;) {
		uint64_t v = it_gauge(url, gauge);
		if (v != UINT64_MAX && v >= want) {
			return;
		}
		cr_assert_lt(wbt_now_ms(), deadline, "%s %s is %llu, never %llu", url, gauge,
		    (unsigned long long)v, (unsigned long long)want);
		wbt_sleep_ms(20);
	}
}

/* ef_wait_erased waits until every consumer has applied the user log, then the inbox the rest. */
static long long
ef_wait_erased(void)
{
	long long t0 = wbt_now_ms(), deadline = t0 + wbt_ms(EF_CONVERGE);
	uint64_t  last = it_log_last(it_cl.user_url, WB_OP_USER_LOG);

	ef_wait_gauge(it_cl.relation_url, "user_applied", last, deadline);
	ef_wait_gauge(it_cl.content_url, "user_applied", last, deadline);
	ef_wait_gauge(it_cl.inbox_url, "user_applied", last, deadline);
	ef_wait_gauge(it_cl.user_url, "sessions_swept_seq", last, deadline);
	(void)it_wait_inbox(wbt_ms(EF_CONVERGE));
	return wbt_now_ms() - t0;
}

/*
 * ef_kill_during kills daemon svc while its part of the erasure runs:
 * relation once erased_edges is past base and short of all, the inbox
 * once cells_deleted has moved past base and relation's log is not all
 * applied; the others at once.  Restarts it; returns what it saw.
 */
static const char *
ef_kill_during(int svc, uint64_t base, uint64_t edges)
{
	static char what[160];
	long long   deadline = wbt_now_ms() + wbt_ms(60000);
	const char *url = svc == EF_RELATION ? it_cl.relation_url : it_cl.inbox_url;

	snprintf(what, sizeof(what), "at once");
	while ((svc == EF_RELATION || svc == EF_INBOX) && wbt_now_ms() < deadline) {
		uint64_t v = it_gauge(url, svc == EF_RELATION ? "erased_edges" : "cells_deleted");
		uint64_t behind = svc == EF_INBOX ? it_gauge(url, "relation_behind") : 0;
		if (v == UINT64_MAX || v <= base) {
			wbt_sleep_ms(2);
			continue;
		}
		if (svc == EF_RELATION && v >= base + edges) {
			snprintf(what, sizeof(what), "after it had erased every edge (%llu)",
			    (unsigned long long)(v - base));
		} else if (svc == EF_INBOX && behind == 0) {
			snprintf(what, sizeof(what), "after the purges (%llu cells)",
			    (unsigned long long)(v - base));
		} else {
			snprintf(what, sizeof(what), "%s %llu of %llu",
			    svc == EF_RELATION ? "with the edges erased" : "with the cells purged",
			    (unsigned long long)(v - base), (unsigned long long)edges);
		}
		break;
	}
	cr_assert_eq(wbt_cluster_restart(&it_cl, ef_slot(svc), SIGKILL), 0, "%s did not come back",
	    ef_names[svc]);
	return what;
}

Test(erase_fault, kill_each_daemon_during_an_erasure, .fini = it_fini, .timeout = 1800)
{
	size_t   nfans = (size_t)EF_FANS;
	uint64_t following[1000], followers[1000];

	cr_assert_leq(nfans, EF_FANS_MAX);
	it_start_as(NULL, WBT_FIVE);
	for (size_t off = 0; off < nfans; off += EF_BULK) {
		wb_obj         *req = wb_request(WB_OP_USER_REGISTER_MANY), *rep;
		const uint64_t *v = NULL;
		size_t          nv = 0;

		wb_set_cstr(req, WB_F_NAME, "effan");
		wb_set_u64(req, WB_F_FROM, off);
		wb_set_u64(req, WB_F_LIMIT, EF_BULK);
		wb_set_cstr(req, WB_F_PASSWORD, EF_PASS);
		rep = ef_bulk(it_cl.user_url, req);
		cr_assert(wb_get_u64s(rep, WB_F_UIDS, &v, &nv) && nv == (size_t)EF_BULK);
		memcpy(&ef_fans[off], v, nv * sizeof(uint64_t));
		wb_msg_free(rep);
	}
	for (int svc = 0; svc < EF_NSVC; svc++) {
		warble_client *c = it_client();
		char           name[32];
		uint64_t       x = 0, base = 0;
		long long      t0 = wbt_now_ms();

		/* the account: three follows, its fans, posts in every fan's inbox */
		snprintf(name, sizeof(name), "efx%d", svc);
		free(it_join(c, name, EF_PASS, &x));
		for (int k = 0; k < 3; k++) {
			char fan[32];
			snprintf(fan, sizeof(fan), "effan%d", k);
			cr_assert_eq(warble_follow(c, fan), WARBLE_OK, "%s", warble_errmsg(c));
		}
		for (size_t off = 0; off < nfans; off += EF_BULK) {
			wb_obj *req = wb_request(WB_OP_REL_FOLLOW_MANY);
			wb_set_u64(req, WB_F_TARGET, x);
			wb_set_u64s(req, WB_F_UIDS, &ef_fans[off], EF_BULK);
			wb_msg_free(ef_bulk(it_cl.relation_url, req));
		}
		for (int p = 0; p < EF_POSTS; p++) {
			cr_assert_eq(warble_post(c, "a post to erase", NULL), WARBLE_OK);
		}
		(void)it_wait_inbox(wbt_ms(EF_CONVERGE));
		cr_assert_eq(ef_check_inboxes(x, EF_POSTS), 0, "the fans' inboxes before");
		long long setup = wbt_now_ms() - t0;

		/* deleted, and the round's daemon killed while it erases */
		base = it_gauge(svc == EF_RELATION ? it_cl.relation_url : it_cl.inbox_url,
		    svc == EF_RELATION ? "erased_edges" : "cells_deleted");
		cr_assert_eq(warble_delete_account(c, EF_PASS), WARBLE_OK, "%s", warble_errmsg(c));
		const char *when = ef_kill_during(svc, base, nfans + 3);
		long long   erased = ef_wait_erased();

		/* the end state, exact */
		cr_assert_eq(ef_list(WB_OP_REL_FANS, x), 0, "fans left");
		cr_assert_eq(ef_list(WB_OP_REL_FOLLOWING, x), 0, "follows left");
		ef_counts(&x, 1, following, followers);
		cr_assert(following[0] == 0 && followers[0] == 0, "its counts %llu %llu",
		    (unsigned long long)following[0], (unsigned long long)followers[0]);
		for (size_t off = 0; off < nfans; off += 1000) {
			size_t n = nfans - off < 1000 ? nfans - off : 1000;
			ef_counts(&ef_fans[off], n, following, followers);
			for (size_t i = 0; i < n; i++) {
				cr_assert_eq(following[i], 0,
				    "fan %llu follows %llu after the round",
				    (unsigned long long)ef_fans[off + i],
				    (unsigned long long)following[i]);
				cr_assert_eq(followers[i], 0, "fan %llu has %llu fans",
				    (unsigned long long)ef_fans[off + i],
				    (unsigned long long)followers[i]);
			}
		}
		wb_obj       *req = wb_request(WB_OP_POST_TIMELINE), *rep = NULL;
		const wb_obj *posts = NULL;
		size_t        np = 0;
		wb_set_u64(req, WB_F_UID, x);
		cr_assert_eq(it_call(it_cl.content_url, req, &rep), WB_OK);
		(void)wb_get_objs(rep, WB_F_POSTS, &posts, &np);
		cr_assert_eq(np, 0, "%zu of its posts are in content", np);
		wb_msg_free(rep);
		req = wb_request(WB_OP_INBOX_HOME);
		wb_set_u64(req, WB_F_UID, x);
		cr_assert_eq(it_call(it_cl.inbox_url, req, &rep), WB_OK);
		posts = NULL;
		np = 0;
		(void)wb_get_objs(rep, WB_F_POSTS, &posts, &np);
		cr_assert_eq(np, 0, "its own inbox holds %zu posts", np);
		wb_msg_free(rep);
		size_t bad = ef_check_inboxes(x, 0);
		cr_assert_eq(bad, 0, "%zu fans' inboxes still hold its posts", bad);
		fprintf(stderr,
		    "erase_fault: %s killed %s; %zu fans: set up in %.1f s, erased %.1f s after "
		    "the restart, then every count and inbox read\n",
		    ef_names[svc], when, nfans, (double)setup / 1000.0, (double)erased / 1000.0);
		warble_close(c);
	}
	cr_assert_eq(it_failures(), 0);
	cr_assert_eq(wbt_cluster_stop(&it_cl, 15000), 0);
}
