/*
 * cluster_fault_test.c - faults across hosts (suite "cluster_fault"), on
 * the shape of cluster_test.c (ct.h): authors publish and readers follow
 * and unfollow through both gateways while
 *
 *   shards_killed   every shard, a relation, a content and an inbox shard
 *                   in turn, is killed (-9) and restarted in place:
 *                   no acknowledged post lost or stored twice, an attempt
 *                   whose reply was lost stored at most once, every
 *                   acknowledged follow as acknowledged, and every home
 *                   (the users', and a sample of a crowd that follows two
 *                   authors) equal to the one recomputed from what the
 *                   content and relation shards hold
 *   inbox_cut_off   an inbox shard is cut off the network for 5 s: calls
 *                   for its readers fail with a transport error within
 *                   their deadline, straight to the shard and through a
 *                   gateway (which names the inbox), the other shards'
 *                   readers are served, /readyz answers 503 naming it,
 *                   writes go on, and once healed it serves again and
 *                   catches up with nothing lost
 *
 * Each test ends by reading every store back (no row outside its shard).
 * Needs root (each test skips otherwise).
 */
#include "ct.h"

#define CT_AUTHORS   8
#define CT_READERS   40
#define CT_CROWD     1200 /* readers of authors 0 and 1: wide fan-outs in flight */
#define CT_CROWD_CHK 7    /* every 7th crowd reader's home is compared */
#define CT_STEP      25   /* posts acknowledged between faults */
#define CT_CUT_MS    5000 /* how long a partition lasts (longer in a slower build) */
#define CT_PROBE_MS  1500 /* the deadline of a call to a shard that is cut off */
#define CT_GW_MS     2000 /* the gateways' deadline of a downstream call, in inbox_cut_off */

static const char *const ct_env[] = { CT_ENV_BACKFILL, NULL };

/* ct_user_on returns a reader of the model (not an author) whose inbox is on shard k. */
static unsigned
ct_user_on(unsigned k)
{
	for (unsigned u = ct_w.nauthors; u < ct_w.nusers; u++) {
		if (wb_uid_shard(ct_w.u[u].uid, ct_cl.ninbox) == k) {
			return u;
		}
	}
	cr_assert_fail("no reader on inbox shard %u", k);
	return 0;
}

/*
 * ct_gw_probe reads user u's home through its gateway: the code, and
 * whether it came within the gateway's deadline (plus a second); a
 * failure must be a transport error that names the inbox.
 */
static int
ct_gw_probe(unsigned u, bool *in_time)
{
	warble_posts_t *p = NULL;
	long long       t0 = wbt_now_ms();
	int             rc = warble_home(ct_w.u[u].sdk, 0, 10, &p);

	*in_time = wbt_now_ms() - t0 <= wbt_ms(CT_GW_MS) + wbt_ms(1000);
	warble_posts_free(p);
	if (rc != WARBLE_OK && (rc != WARBLE_ETIMEDOUT && rc != WARBLE_EUNAVAIL)) {
		ct_fail("home of %s through gateway %u: %s, not a transport error: %s",
		    ct_w.u[u].name, ct_w.u[u].gw, warble_errname(rc), warble_errmsg(ct_w.u[u].sdk));
	} else if (rc != WARBLE_OK && strstr(warble_errmsg(ct_w.u[u].sdk), "inbox") == NULL) {
		ct_fail("home of %s through gateway %u: '%s' does not name the inbox",
		    ct_w.u[u].name, ct_w.u[u].gw, warble_errmsg(ct_w.u[u].sdk));
	}
	return rc;
}

/* ct_decide_and_check decides the ambiguous writes from the stores, then checks every home. */
static void
ct_decide_and_check(const char *what, long long caught_up_ms)
{
	size_t   stored = ct_decide_posts();
	unsigned decided = ct_decide_follows();
	size_t   homes = ct_check_homes(CT_CROWD_CHK);

	fprintf(stderr,
	    "cluster: %s: %zu posts and %lu follows acknowledged, %lu replies lost (%zu of %zu "
	    "posts stored, %u follows decided from the stores); caught up in %lld ms; %zu "
	    "homes equal to the recomputed ones\n",
	    what, ct_w.nposts, atomic_load(&ct_w.nfollows), atomic_load(&ct_w.nambiguous), stored,
	    ct_w.nmaybe, decided, caught_up_ms, homes);
}

/*
 * Every shard killed (-9) under publish and follow load through both
 * gateways, a relation, a content and an inbox shard in turn, each
 * restarted in place; then nothing acknowledged is lost or doubled, and
 * every home equals what the stores say it must hold.
 */
Test(cluster_fault, shards_killed, .fini = ct_fini, .timeout = 300)
{
	struct ct_kill {
		wbc_host *h;
		size_t    at, back;
	} kills[3 * WBC_SHARDS_MAX] = { { NULL, 0, 0 } };
	int     nkills = 0;
	ct_load l;

	ct_start(CT_SHAPE, ct_env);
	ct_world_make(0xC2u, CT_AUTHORS, CT_READERS, CT_CROWD, 4);
	for (unsigned i = 0; i < WBC_SHARDS_MAX; i++) { /* relation 1, content 0, inbox 1, ... */
		if (i < ct_cl.nrelation) {
			kills[nkills++].h = ct_cl.relation[(i + 1) % ct_cl.nrelation];
		}
		if (i < ct_cl.ncontent) {
			kills[nkills++].h = ct_cl.content[i];
		}
		if (i < ct_cl.ninbox) {
			kills[nkills++].h = ct_cl.inbox[(i + 1) % ct_cl.ninbox];
		}
	}
	atomic_store(&ct_w.faults, true);
	ct_load_start(&l, true);
	for (int i = 0; i < nkills; i++) {
		cr_assert(ct_wait_posts(ct_nposts() + CT_STEP, wbt_ms(30000)),
		    "the load stalled at %zu posts", ct_nposts());
		kills[i].at = ct_nposts();
		cr_assert_eq(wbc_restart(kills[i].h, SIGKILL, wbt_ms(20000)), 0,
		    "%s did not come back", wbc_host_name(kills[i].h));
		cr_assert_eq(wbc_daemon(kills[i].h)->status, -1); /* the new one runs */
		kills[i].back = ct_nposts();
	}
	bool more = ct_wait_posts(ct_nposts() + CT_STEP, wbt_ms(30000));
	ct_load_stop(&l);
	cr_assert(more, "the load stalled at %zu posts after the restarts", ct_nposts());
	cr_assert_eq(atomic_load(&ct_nfail), 0, "see the failures above");
	long long ms = ct_wait_caught_up(wbt_ms(CT_CAUGHT_UP_MS));
	for (int i = 0; i < nkills; i++) {
		fprintf(stderr, "cluster: %s killed at %zu posts, back at %zu\n",
		    wbc_host_name(kills[i].h), kills[i].at, kills[i].back);
	}
	ct_decide_and_check("every shard killed in turn", ms);
	ct_stop(true);
}

/*
 * An inbox shard cut off the network for 5 s under publish and follow
 * load: calls for its readers fail with a transport error within their
 * deadline, the other shards' readers are served, no write fails, and
 * once healed it catches up with nothing lost.
 */
Test(cluster_fault, inbox_cut_off, .fini = ct_fini, .timeout = 300)
{
	const unsigned cut = 2;
	rt_client_opts po = { .timeout_ms = wbt_ms(CT_PROBE_MS) };
	rt_client     *probe = NULL;
	ct_load        l;
	int            failed = 0, served = 0;

	char tmo[64];
	snprintf(tmo, sizeof(tmo), "WARBLE_GATEWAY_TIMEOUT_MS=%d", wbt_ms(CT_GW_MS));
	const char *const env[] = { CT_ENV_BACKFILL, tmo, NULL };
	int               gw_failed = 0, gw_served = 0, st = 0;
	/* 5 s, or longer in a slower build: a gateway's call and a straight one fit in the cut */
	int cut_ms = wbt_ms(CT_GW_MS) + wbt_ms(CT_PROBE_MS) + wbt_ms(1000);
	cut_ms = cut_ms > CT_CUT_MS ? cut_ms : CT_CUT_MS;

	ct_start(CT_SHAPE, env);
	ct_world_make(0xC3u, CT_AUTHORS, CT_READERS, CT_CROWD, 4);
	unsigned reader = ct_user_on(cut), other = ct_user_on((cut + 1) % ct_cl.ninbox);
	ct_load_start(&l, true); /* no fault on the write path: every write must succeed */
	cr_assert(ct_wait_posts(30, wbt_ms(30000)), "the load made %zu posts", ct_nposts());
	cr_assert_eq(rt_client_open(&probe, ct_cl.inbox_url[cut], &po), WB_OK);

	uint64_t  errors0 = wbt_stat(ct_inbox[cut], "source_errors");
	size_t    at_cut = ct_nposts();
	long long t0 = wbt_now_ms();
	cr_assert_eq(wbc_cut(ct_cl.inbox[cut]), 0);
	/* through a gateway first: the cut shard's reader refused in time, another served */
	bool in_time;
	int  rc = ct_gw_probe(reader, &in_time);
	if (rc == WARBLE_OK) {
		ct_fail("gateway %u served %s's home while inbox %u was cut off", ct_w.u[reader].gw,
		    ct_w.u[reader].name, cut);
	} else if (!in_time) {
		ct_fail("gateway %u took longer than its deadline", ct_w.u[reader].gw);
	} else {
		gw_failed++;
	}
	gw_served += ct_gw_probe(other, &in_time) == WARBLE_OK;
	char       *ready = ct_http_get(ct_cl.http_url[0], "/readyz", &st, wbt_ms(5000));
	const char *failed_list = strstr(ready, "\"failed\":[");
	if (st != 503 || failed_list == NULL || strstr(failed_list, "\"inbox/2\"") == NULL) {
		ct_fail("/readyz while inbox 2 is cut off: %d %s", st, ready);
	}
	free(ready);
	do { /* then straight to the shards, while a whole probe fits in the cut (at least one) */
		wb_obj   *rep = NULL;
		long long c0 = wbt_now_ms();
		rc = wbt_call(probe, ct_home_req(ct_reader_on(cut), 0), &rep);
		long long took = wbt_now_ms() - c0;

		wb_msg_free(rep);
		if (rc == WB_OK) {
			ct_fail("inbox %u answered while cut off", cut);
		} else if (rc != WB_ETIMEDOUT && rc != WB_EUNAVAIL) {
			ct_fail(
			    "inbox %u cut off: %s, not a transport error", cut, wb_err_name(rc));
		} else if (took > wbt_ms(CT_PROBE_MS) + wbt_ms(1000)) {
			ct_fail("a call to the cut inbox took %lld ms, its deadline is %d", took,
			    wbt_ms(CT_PROBE_MS));
		} else {
			failed++;
		}
		for (unsigned k = 0; k < ct_cl.ninbox; k++) {
			if (k != cut) {
				rc = wbt_call(ct_inbox[k], ct_home_req(ct_reader_on(k), 0), &rep);
				wb_msg_free(rep);
				if (rc != WB_OK) {
					ct_fail("inbox %u, not cut off, failed: %s", k,
					    wb_err_name(rc));
				} else {
					served++;
				}
			}
		}
	} while (wbt_now_ms() - t0 < cut_ms - wbt_ms(CT_PROBE_MS));
	if (wbt_now_ms() - t0 < cut_ms) {
		wbt_sleep_ms((int)(cut_ms - (wbt_now_ms() - t0)));
	}
	cr_assert_eq(wbc_heal(ct_cl.inbox[cut]), 0);
	size_t at_heal = ct_nposts();
	cr_assert_gt(at_heal, at_cut, "no post was made while inbox %u was cut off", cut);
	bool more = ct_wait_posts(at_heal + 30, wbt_ms(30000));
	ct_load_stop(&l);
	rt_client_close(probe);
	cr_assert(more, "the load stalled at %zu posts after the heal", ct_nposts());
	cr_assert_eq(atomic_load(&ct_nfail), 0, "see the failures above");
	cr_assert_gt(failed, 0);
	cr_assert_gt(served, 0);
	cr_assert_gt(gw_failed, 0);
	cr_assert_gt(gw_served, 0);
	long long ms = ct_wait_caught_up(wbt_ms(CT_CAUGHT_UP_MS));
	cr_assert_eq(ct_gw_probe(reader, &in_time), WARBLE_OK, "the gateway does not serve %s",
	    ct_w.u[reader].name);
	ready = ct_http_get(ct_cl.http_url[0], "/readyz", &st, wbt_ms(5000));
	cr_assert_eq(st, 200, "/readyz after the heal: %d %s", st, ready);
	free(ready);
	fprintf(stderr,
	    "cluster: inbox %u cut off for %d ms at %zu posts (%d calls refused, %d served "
	    "elsewhere; through a gateway %d refused, %d served), healed at %zu; its source "
	    "errors %llu, seq gaps %llu\n",
	    cut, cut_ms, at_cut, failed, served, gw_failed, gw_served, at_heal,
	    (unsigned long long)(wbt_stat(ct_inbox[cut], "source_errors") - errors0),
	    (unsigned long long)wbt_stat(ct_inbox[cut], "seq_gaps"));
	char what[64];
	snprintf(what, sizeof(what), "an inbox shard cut off for %d ms", cut_ms);
	ct_decide_and_check(what, ms);
	cr_assert_eq(ct_w.nmaybe, 0);
	ct_stop(true);
}
