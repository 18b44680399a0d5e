/*
 * cluster_gateway_test.c - two gateways over one sharded Warble (suite
 * "cluster_gateway", the shape of cluster_test.c): what one gateway
 * learns of a change made through the other, and how soon
 * (docs/architecture.md, "Gateways").  Each bound is measured from the
 * acknowledgement through gateway A to the first read through gateway B
 * that no longer shows the old state, polled every CT_POLL_MS, printed,
 * and held to the bound plus CT_SLACK_MS (a poll, a revocation pull's
 * call and the scheduling of a loaded machine; scaled by wbt_ms):
 *
 *   post_deleted   a post deleted through A leaves the homes served by B
 *                  within WARBLE_POST_CACHE_MS (set to CT_CACHE_MS here):
 *                  once as it usually goes (the inbox applies the delete
 *                  at once), and once with the reader's inbox shard cut
 *                  off from the author's content shard (wbc_block), so
 *                  that the id stays listed and only the cache's bound
 *                  ends it; through A it is gone at once
 *   session_ended  a password change, and a log out everywhere, through A:
 *                  B refuses the ended session within
 *                  WARBLE_SESSION_CHECK_MS (1 s); A at once; B takes the
 *                  session the change gave
 *
 * Needs root (each test skips otherwise).
 */
#include "ct.h"

#define CT_CACHE_MS 2000 /* WARBLE_POST_CACHE_MS of this test (10 s by default) */
#define CT_CHECK_MS 1000 /* WARBLE_SESSION_CHECK_MS (its default) */
#define CT_POLL_MS  20
#define CT_SLACK_MS 750

static const char *const ct_env[] = { CT_ENV_BACKFILL, "WARBLE_POST_CACHE_MS=2000",
	"WARBLE_SESSION_CHECK_MS=1000", NULL };

/* ct_home_has tells whether id is in the first page of c's home (a failure if unreadable). */
static bool
ct_home_has(warble_client *c, uint64_t id)
{
	warble_posts_t *p = NULL;
	bool            has = false;
	int             rc = warble_home(c, 0, 100, &p);

	cr_assert_eq(rc, WARBLE_OK, "home: %s: %s", warble_errname(rc), warble_errmsg(c));
	for (size_t i = 0; i < p->n; i++) {
		has |= p->posts[i].id == id;
	}
	warble_posts_free(p);
	return has;
}

/*
 * ct_gone_after polls reader's home through c until post id is gone and
 * returns how long after t0 that was (ms); a test failure past bound_ms
 * plus the slack.  *stale counts the reads that still showed it.
 */
static long long
ct_gone_after(warble_client *c, uint64_t id, long long t0, int bound_ms, int *stale)
{
	long long limit = bound_ms + wbt_ms(CT_SLACK_MS);

	*stale = 0;
	while (ct_home_has(c, id)) {
		(*stale)++;
		cr_assert_leq(wbt_now_ms() - t0, limit,
		    "post %llu deleted through gateway 0 is still served by gateway 1 %lld ms "
		    "after: the bound is %d ms (+%d slack)",
		    (unsigned long long)id, wbt_now_ms() - t0, bound_ms, wbt_ms(CT_SLACK_MS));
		wbt_sleep_ms(CT_POLL_MS);
	}
	return wbt_now_ms() - t0;
}

/*
 * A post deleted through gateway A stops being served by gateway B
 * within WARBLE_POST_CACHE_MS, whether the inbox applies the delete at
 * once or cannot see it at all; through A it is gone at once.
 */
Test(cluster_gateway, post_deleted, .fini = ct_fini, .timeout = 240)
{
	long long took[2];
	int       stale[2];
	unsigned  reader = 1;

	ct_start(CT_SHAPE, ct_env);
	ct_users(6, 0, "user", false); /* user 0 is on gateway 0, users 1, 3, 5 on gateway 1 */
	for (unsigned u = 1; u < ct_w.nusers; u += 2) {
		cr_assert_eq(ct_relate(u, 0, true), WARBLE_OK);
	}
	/* the reader's inbox shard, and the author's content shard: wbc_block parts them */
	unsigned  k = wb_uid_shard(ct_w.u[reader].uid, ct_cl.ninbox);
	unsigned  i = wb_uid_shard(ct_w.u[0].uid, ct_cl.ncontent);
	wbc_host *inbox = ct_cl.inbox[k], *content = ct_cl.content[i];

	for (int round = 0; round < 2; round++) {
		uint64_t id;
		cr_assert_eq(ct_publish(0, NULL), WARBLE_OK);
		id = ct_w.posts[ct_w.nposts - 1].id;
		ct_wait_caught_up(wbt_ms(CT_CAUGHT_UP_MS));
		cr_assert(ct_home_has(ct_w.u[reader].sdk, id), "gateway 1 does not show the post");
		cr_assert(ct_home_has(ct_w.u[reader].sdk, id)); /* now from its cache */
		if (round == 1) {
			cr_assert_eq(wbc_block(inbox, content), 0);
		}
		long long t0 = wbt_now_ms();
		cr_assert_eq(warble_delete(ct_w.u[0].sdk, id), WARBLE_OK, "%s",
		    warble_errmsg(ct_w.u[0].sdk));
		t0 = wbt_now_ms(); /* acknowledged: the bound starts */
		warble_client *a = ct_sdk(0);
		cr_assert_eq(warble_set_token(a, warble_token(ct_w.u[reader].sdk)), WARBLE_OK);
		cr_assert(!ct_home_has(a, id), "gateway 0, which deleted it, still serves it");
		warble_close(a);
		took[round] = ct_gone_after(ct_w.u[reader].sdk, id, t0, CT_CACHE_MS, &stale[round]);
		ct_forget_post(id);
		if (round == 1) {
			cr_assert_eq(wbc_unblock(inbox, content), 0);
		}
	}
	cr_assert_eq(ct_publish(0, NULL), WARBLE_OK); /* the inbox cut off comes back whole */
	ct_wait_caught_up(wbt_ms(CT_CAUGHT_UP_MS));
	cr_assert_eq(ct_decide_posts(), 0);
	ct_check_homes(0);
	fprintf(stderr,
	    "cluster: a post deleted through gateway 0 left gateway 1's homes %lld ms after "
	    "(%d reads showed it), and %lld ms after (%d reads) with the inbox shard cut off from "
	    "the content shard; the bound is WARBLE_POST_CACHE_MS %d ms (+%d slack)\n",
	    took[0], stale[0], took[1], stale[1], CT_CACHE_MS, wbt_ms(CT_SLACK_MS));
	ct_stop(true);
}

/* ct_whoami returns whoami's code through c. */
static int
ct_whoami(warble_client *c)
{
	warble_user_t *u = NULL;
	int            rc = warble_whoami(c, &u);

	warble_user_free(u);
	return rc;
}

/*
 * ct_refused_after polls whoami through b until refused and returns how
 * long after t0 that was; a test failure past the bound plus the slack,
 * or on any other error.
 */
static long long
ct_refused_after(warble_client *b, long long t0, int *stale)
{
	long long limit = CT_CHECK_MS + wbt_ms(CT_SLACK_MS);
	int       rc;

	*stale = 0;
	while ((rc = ct_whoami(b)) == WARBLE_OK) {
		(*stale)++;
		cr_assert_leq(wbt_now_ms() - t0, limit,
		    "a session ended through gateway 0 is still honoured by gateway 1 %lld ms "
		    "after: the bound is %d ms (+%d slack)",
		    wbt_now_ms() - t0, CT_CHECK_MS, wbt_ms(CT_SLACK_MS));
		wbt_sleep_ms(CT_POLL_MS);
	}
	cr_assert_eq(rc, WARBLE_EAUTH, "an ended session: %s", warble_errname(rc));
	return wbt_now_ms() - t0;
}

/*
 * A password change and a log out everywhere through gateway A end the
 * session at A at once and at B within WARBLE_SESSION_CHECK_MS; the
 * session the change gave is good at both.
 */
Test(cluster_gateway, session_ended, .fini = ct_fini, .timeout = 240)
{
	long long took[2];
	int       stale[2];

	ct_start(CT_SHAPE, ct_env);
	ct_users(2, 0, "user", false);
	for (int round = 0; round < 2; round++) {
		warble_client *a = ct_w.u[0].sdk, *b = ct_sdk(1);
		char          *old = strdup(warble_token(a));
		long long      t0;
		int            rc;

		cr_assert_not_null(old);
		cr_assert_eq(warble_set_token(b, old), WARBLE_OK);
		cr_assert_eq(ct_whoami(b), WARBLE_OK, "gateway 1 refuses a live session");
		cr_assert_eq(ct_whoami(b), WARBLE_OK);
		if (round == 0) {
			rc = warble_change_password(a, CT_PASSWORD, "cluster-pass-2");
		} else {
			rc = warble_logout_all(a);
		}
		t0 = wbt_now_ms();
		cr_assert_eq(rc, WARBLE_OK, "%s through gateway 0: %s",
		    round == 0 ? "password change" : "log out everywhere", warble_errmsg(a));
		warble_client *again = ct_sdk(0);
		cr_assert_eq(warble_set_token(again, old), WARBLE_OK);
		cr_assert_eq(
		    ct_whoami(again), WARBLE_EAUTH, "gateway 0 honours the session it ended");
		warble_close(again);
		took[round] = ct_refused_after(b, t0, &stale[round]);
		if (round == 0) { /* the session the change gave is good at both */
			cr_assert_eq(ct_whoami(a), WARBLE_OK, "%s", warble_errmsg(a));
			cr_assert_eq(warble_set_token(b, warble_token(a)), WARBLE_OK);
			cr_assert_eq(ct_whoami(b), WARBLE_OK, "%s", warble_errmsg(b));
		} else {
			uint64_t uid = 0;
			cr_assert_eq(
			    warble_login(a, ct_w.u[0].name, "cluster-pass-2", &uid), WARBLE_OK);
		}
		free(old);
		warble_close(b);
	}
	fprintf(stderr,
	    "cluster: a session ended through gateway 0 was refused by gateway 1 %lld ms after a "
	    "password change (%d reads honoured it) and %lld ms after a log out everywhere (%d "
	    "reads); the bound is WARBLE_SESSION_CHECK_MS %d ms (+%d slack)\n",
	    took[0], stale[0], took[1], stale[1], CT_CHECK_MS, wbt_ms(CT_SLACK_MS));
	ct_stop(false);
}
