/*
 * wbc_test.c - the multi-host harness itself (wbc.h, suite "wbc"): a
 * daemon runs in its host's namespace and is reached at its address; a
 * host cut off, healed, blocked from another, killed and restarted in
 * place; nothing left behind after a close, a crash of the test process
 * or an earlier run (these need root: each skips otherwise).  And the
 * store check (wbc_stores.h) finding what does not belong in a shard.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "content_schema.h"
#include "ct.h" /* ct_net, ct_open_net */
#include "hb.h"
#include "inbox_schema.h"
#include "rel_schema.h"
#include "wb_errors.h"
#include "wb_id.h"
#include "wb_slot.h"
#include "wbc.h"
#include "wbc_cluster.h"
#include "wbc_stores.h"
#include "wbt.h"

/* ct_netns_of tells whether pid runs in the namespace /run/netns/<netns>. */
static bool
ct_netns_of(int pid, const char *netns)
{
	char        a[64], b[128];
	struct stat sa, sb;

	snprintf(a, sizeof(a), "/proc/%d/ns/net", pid);
	snprintf(b, sizeof(b), "/run/netns/%s", netns);
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/*
 * The harness: a daemon runs in its host's namespace and is reached at its
 * address; cut off, it does not answer, and healed it does again; killed
 * (-9) and restarted, it answers at the same address; after wbc_close no
 * namespace or link of the run is left.
 */
Test(wbc, hosts, .fini = wbc_fini, .timeout = 120)
{
	char      url[2][WBC_URL_MAX], prefix[32], what[64];
	wbc_host *h[2];

	ct_open_net();
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(wbc_host_add(ct_net, i == 0 ? "a" : "b", &h[i]), 0);
		cr_assert_eq(wbc_url(url[i], sizeof(url[i]), h[i], "tcp", WBC_REP_PORT), 0);
		const char *env[] = { NULL, NULL };
		char        e[WBC_URL_MAX + 32];
		snprintf(e, sizeof(e), "WARBLE_PING_URL=%s", url[i]);
		env[0] = e;
		cr_assert_eq(wbc_start(h[i], "warble-ping", NULL, env, url[i], wbt_ms(20000)), 0);
		cr_assert(ct_netns_of(wbc_daemon(h[i])->pid, wbc_host_netns(h[i])),
		    "warble-ping does not run in %s", wbc_host_netns(h[i]));
	}
	cr_assert_neq(strcmp(wbc_host_addr(h[0]), wbc_host_addr(h[1])), 0);

	cr_assert_eq(wbc_cut(h[0]), 0);
	long long t0 = wbt_now_ms();
	int       rc = wbt_ping(url[0], wbt_ms(1000));
	cr_assert(
	    rc == WB_ETIMEDOUT || rc == WB_EUNAVAIL, "a cut host answered: %s", wb_err_name(rc));
	cr_assert_leq(wbt_now_ms() - t0, wbt_ms(1000) + wbt_ms(1000));
	cr_assert_eq(wbt_ping(url[1], wbt_ms(5000)), WB_OK, "the other host was cut too");
	cr_assert_eq(wbc_heal(h[0]), 0);
	cr_assert_eq(wbt_wait_ready(wbc_daemon(h[0]), url[0], wbt_ms(15000)), 0);

	int old = wbc_daemon(h[0])->pid;
	cr_assert_eq(wbc_restart(h[0], SIGKILL, wbt_ms(20000)), 0);
	cr_assert_neq(wbc_daemon(h[0])->pid, old);
	cr_assert(ct_netns_of(wbc_daemon(h[0])->pid, wbc_host_netns(h[0])));
	cr_assert_eq(wbt_ping(url[0], wbt_ms(5000)), WB_OK);

	cr_assert_eq(wbc_partition(h[1], 200), 0);
	cr_assert_eq(wbt_wait_ready(wbc_daemon(h[1]), url[1], wbt_ms(15000)), 0);

	wbc_prefix(prefix, sizeof(prefix), (int)getpid());
	cr_assert_gt(wbc_leftovers(prefix, NULL, 0), 0);
	cr_assert_eq(wbc_close(ct_net), 0);
	ct_net = NULL;
	cr_assert_eq(wbc_leftovers(prefix, what, sizeof(what)), 0, "left behind: %s", what);
}

/*
 * A test process that dies without cleaning up (SIGKILL: no .fini, no
 * atexit) leaves nothing behind: its guard removes the namespaces and
 * links once it is gone.
 */
Test(wbc, crash_leaves_nothing, .fini = wbc_fini, .timeout = 120)
{
	char  prefix[32], what[64];
	pid_t child;
	int   st = 0;

	ct_open_net(); /* the skips, and a network of this process that must survive the child */
	if ((child = fork()) == 0) {
		wbc_net  *n;
		wbc_host *h;
		char      why[256];

		if (wbc_open(&n, why, sizeof(why)) != 0 || wbc_host_add(n, "doomed", &h) != 0 ||
		    wbc_host_add(n, "doomed2", &h) != 0) {
			_exit(2);
		}
		raise(SIGKILL);
		_exit(3);
	}
	cr_assert_gt(child, 0);
	cr_assert_eq(waitpid(child, &st, 0), child);
	cr_assert(
	    WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the child did not get to die: %d", st);
	wbc_prefix(prefix, sizeof(prefix), (int)child);
	long long deadline = wbt_now_ms() + wbt_ms(15000);
	while (wbc_leftovers(prefix, what, sizeof(what)) > 0 && wbt_now_ms() < deadline) {
		wbt_sleep_ms(20);
	}
	cr_assert_eq(wbc_leftovers(prefix, what, sizeof(what)), 0, "left behind: %s", what);
	wbc_prefix(prefix, sizeof(prefix), (int)getpid());
	cr_assert_eq(wbc_leftovers(prefix, NULL, 0), 1, "the parent's bridge went too");
	cr_assert_eq(wbc_close(ct_net), 0);
	ct_net = NULL;
}

/*
 * What a run left behind whose guard did not finish (names of a pid that
 * is gone) is removed by the next wbc_open; names of live processes are
 * not touched.
 */
Test(wbc, sweeps_stale_names, .fini = wbc_fini, .timeout = 120)
{
	char  stale[32], mine[32], what[64];
	pid_t gone;

	ct_open_net();
	cr_assert_eq(wbc_close(ct_net), 0);
	ct_net = NULL;
	if ((gone = fork()) == 0) {
		_exit(0);
	}
	cr_assert_gt(gone, 0);
	cr_assert_eq(waitpid(gone, NULL, 0), gone);
	wbc_prefix(stale, sizeof(stale), (int)gone);
	cr_assert_eq(wbc_ip_run(NULL, 0, "netns add %sx", stale), 0);
	cr_assert_eq(wbc_ip_run(NULL, 0, "link add %sbr type bridge", stale), 0);

	ct_open_net();
	cr_assert_eq(wbc_leftovers(stale, what, sizeof(what)), 0, "not swept: %s", what);
	wbc_prefix(mine, sizeof(mine), (int)getpid());
	cr_assert_eq(wbc_leftovers(mine, NULL, 0), 1, "the live run's bridge was swept");
	cr_assert_eq(wbc_close(ct_net), 0);
	ct_net = NULL;
}

/* ct_probe runs warble-probe in host from's namespace against url; its exit status. */
static int
ct_probe(wbc_host *from, const char *url)
{
	const char *args[] = { "--timeout-ms", "1000", url, NULL };
	wbt_daemon *d = wbt_spawn_netns(wbc_host_netns(from), "warble-probe", args, NULL);

	cr_assert_not_null(d);
	d->stopping = true; /* its failure is expected: no log tail */
	return wbt_wait_exit(d, wbt_ms(10000));
}

/*
 * wbc_block cuts the link between two hosts alone: neither reaches the
 * other, both reach a third host and the test; wbc_unblock mends it.
 */
Test(wbc, block, .fini = wbc_fini, .timeout = 120)
{
	char      url[3][WBC_URL_MAX];
	wbc_host *h[3];

	ct_open_net();
	for (int i = 0; i < 3; i++) {
		char name[2] = { (char)('a' + i), '\0' }, e[WBC_URL_MAX * 4];
		cr_assert_eq(wbc_host_add(ct_net, name, &h[i]), 0);
		cr_assert_eq(wbc_url(url[i], sizeof(url[i]), h[i], "tcp", WBC_REP_PORT), 0);
		snprintf(e, sizeof(e), "WARBLE_PING_URL=%s", url[i]);
		const char *env[] = { e, NULL };
		cr_assert_eq(wbc_start(h[i], "warble-ping", NULL, env, url[i], wbt_ms(20000)), 0);
	}
	cr_assert_eq(ct_probe(h[0], url[1]), 0, "a reaches b");
	cr_assert_eq(wbc_block(h[0], h[1]), 0);
	cr_assert_eq(ct_probe(h[0], url[1]), 1, "a still reaches b");
	cr_assert_eq(ct_probe(h[1], url[0]), 1, "b still reaches a");
	cr_assert_eq(ct_probe(h[0], url[2]), 0, "a lost c too");
	cr_assert_eq(ct_probe(h[1], url[2]), 0, "b lost c too");
	cr_assert_eq(wbt_ping(url[0], wbt_ms(5000)), WB_OK, "the test lost a");
	cr_assert_eq(wbt_ping(url[1], wbt_ms(5000)), WB_OK, "the test lost b");
	cr_assert_eq(wbc_unblock(h[0], h[1]), 0);
	cr_assert_eq(ct_probe(h[0], url[1]), 0, "a does not reach b again");
	cr_assert_eq(ct_probe(h[1], url[0]), 0, "b does not reach a again");
	cr_assert_eq(wbc_close(ct_net), 0);
	ct_net = NULL;
}

/* ct_store_make makes a store of svc at path with its families, and returns it open. */
static hb_table *
ct_store_make(const char *path, const char *svc)
{
	hb_family_opts f[16];
	size_t         n;
	hb_table      *t = NULL;

	memset(f, 0, sizeof(f));
	if (strcmp(svc, "relation") == 0) {
		rel_schema(f), n = REL_FAM_NFAMS;
	} else if (strcmp(svc, "content") == 0) {
		content_schema_families(f), n = CONTENT_FAM_COUNT;
	} else {
		inbox_schema_families(f, 800, 0), n = INBOX_FAM_COUNT;
	}
	cr_assert_eq(hb_open(&t, path, f, n, NULL), WB_OK, "%s", hb_last_error());
	return t;
}

/* ct_uid_on returns a uid above from whose slot shard s of n owns. */
static uint64_t
ct_uid_on(uint64_t from, unsigned s, unsigned n)
{
	while (wb_uid_shard(from, n) != s) {
		from++;
	}
	return from;
}

/*
 * wbc_stores_check finds what does not belong in a shard's store: a
 * follow of another shard's follower, a fan filed under a slot not its
 * own, a post (and its index entry) of another shard's author, an id
 * whose node is not its author's group, an inbox row of another
 * shard's reader; a followers part of any uid is a shard's own.  Needs
 * no root.
 */
Test(wbc, stores_check, .fini = wbt_cleanup, .timeout = 60)
{
	const wb_shard   s = { 0, 2 };
	uint64_t         mine = ct_uid_on(1000, 0, 2), other = ct_uid_on(1000, 1, 2);
	uint8_t          a[8], b[8], q[REL_FAN_QUAL], v[8];
	char             path[512], why[256];
	wbc_store_report r;
	hb_table        *t;
	hb_batch        *bt;

	/* relation: a follow and its fan of our follower, a followers part of another's uid */
	cr_assert_eq(wbt_path(path, sizeof(path), "relation"), 0);
	t = ct_store_make(path, "relation");
	hb_u64_be(a, mine);
	hb_u64_be(b, other);
	rel_fan_qual(q, mine);
	cr_assert_eq(hb_put(t, REL_FAM_FOLLOW, a, 8, b, 8, 0, "", 0), WB_OK);
	cr_assert_eq(hb_put(t, REL_FAM_FANS, b, 8, q, sizeof(q), 0, "", 0), WB_OK);
	cr_assert_eq(hb_batch_new(&bt), WB_OK);
	cr_assert_eq(hb_batch_add(bt, t, REL_FAM_COUNT, a, 8, "following", 9, 1), WB_OK);
	cr_assert_eq(hb_batch_add(bt, t, REL_FAM_COUNT, b, 8, "followers", 9, 1), WB_OK);
	cr_assert_eq(hb_write(t, bt), WB_OK);
	hb_close(t);
	cr_assert_eq(wbc_stores_check(path, "relation", s, &r, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(r.foreign, 0, "%s", r.first);
	cr_assert_eq(r.cells, 3);
	/* then another shard's follow, and a fan under the wrong slot */
	t = ct_store_make(path, "relation");
	cr_assert_eq(hb_put(t, REL_FAM_FOLLOW, b, 8, a, 8, 0, "", 0), WB_OK);
	hb_close(t);
	cr_assert_eq(wbc_stores_check(path, "relation", s, &r, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(r.foreign, 1);
	cr_assert_not_null(strstr(r.first, "follow: a cell of uid"), "%s", r.first);
	t = ct_store_make(path, "relation");
	hb_batch_clear(bt);
	cr_assert_eq(hb_batch_delete_row(bt, t, REL_FAM_FOLLOW, b, 8), WB_OK);
	q[0] ^= 0x01;
	cr_assert_eq(hb_batch_put(bt, t, REL_FAM_FANS, b, 8, q, sizeof(q), 0, "", 0), WB_OK);
	cr_assert_eq(hb_write(t, bt), WB_OK);
	hb_close(t);
	cr_assert_eq(wbc_stores_check(path, "relation", s, &r, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(r.foreign, 1);
	cr_assert_not_null(strstr(r.first, "filed under slot"), "%s", r.first);

	/* content: another shard's post, and an index entry naming another group */
	cr_assert_eq(wbt_path(path, sizeof(path), "content"), 0);
	t = ct_store_make(path, "content");
	uint64_t id =
	    (uint64_t)wb_slot_group(wb_slot(mine)) << WB_ID_SEQ_BITS | 1; /* node: its group */
	hb_u64_be(v, mine);
	cr_assert_eq(hb_put(t, CONTENT_FAM_POST, a, 8, NULL, 0, id, "hi", 2), WB_OK);
	hb_u64_be(b, id);
	cr_assert_eq(hb_put(t, CONTENT_FAM_PIDX, b, 8, NULL, 0, 0, v, 8), WB_OK);
	hb_close(t);
	cr_assert_eq(wbc_stores_check(path, "content", s, &r, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(r.foreign, 0, "%s", r.first);
	cr_assert_eq(r.cells, 2);
	t = ct_store_make(path, "content");
	hb_u64_be(b, id + (1u << WB_ID_SEQ_BITS)); /* another group, the same author */
	cr_assert_eq(hb_put(t, CONTENT_FAM_PIDX, b, 8, NULL, 0, 0, v, 8), WB_OK);
	hb_u64_be(a, other);
	cr_assert_eq(hb_put(t, CONTENT_FAM_MEDIA, a, 8, NULL, 0, 7, "img", 3), WB_OK);
	hb_close(t);
	cr_assert_eq(wbc_stores_check(path, "content", s, &r, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(r.foreign, 2, "%s", r.first);

	/* inbox: another shard's reader */
	cr_assert_eq(wbt_path(path, sizeof(path), "inbox"), 0);
	t = ct_store_make(path, "inbox");
	hb_u64_be(a, mine);
	cr_assert_eq(hb_put(t, INBOX_FAM_TL, a, 8, NULL, 0, id, v, 8), WB_OK);
	hb_u64_be(a, other);
	cr_assert_eq(hb_put(t, INBOX_FAM_TL, a, 8, NULL, 0, id, v, 8), WB_OK);
	hb_close(t);
	cr_assert_eq(wbc_stores_check(path, "inbox", s, &r, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(r.cells, 2);
	cr_assert_eq(r.foreign, 1, "%s", r.first);
	cr_assert_eq(wbc_stores_check(path, "user", s, &r, why, sizeof(why)), -1);
	hb_batch_free(bt);
}
