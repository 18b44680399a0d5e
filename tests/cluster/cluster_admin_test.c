/*
 * cluster_admin_test.c - warblectl's admin commands on a sharded Warble
 * (suite "cluster_admin", the shape of cluster_test.c), run as an
 * operator would: from the test's host, with the cluster's addresses in
 * WARBLE_USER_URL and WARBLE_*_URLS.
 *
 *   backup_restore  `admin backup DIR` under publish and follow load
 *                   through both gateways takes every shard (the inboxes
 *                   first, each into DIR/<service>.<i>, a manifest that
 *                   names each); the cluster is stopped, each host's part
 *                   restored with `admin restore --shard i` into a fresh
 *                   data folder of its own, and a new cluster started on
 *                   them, on the same hosts: every post and follow
 *                   acknowledged before the backup began is there, each
 *                   restored post once, as many as the content logs' post
 *                   events, nothing unknown, and every home equal to the
 *                   one recomputed from the restored content and relation
 *                   shards; then `admin rebuild-inbox` rebuilds every inbox
 *                   shard, and every home is the same again
 *
 * The restored stores are read back at the end (no row outside its
 * shard).  Needs root (the test skips otherwise).
 */
#include <sys/stat.h>

#include "ct.h"
#include "wbt_tls.h"

#define CT_AUTHORS 8
#define CT_READERS 24
#define CT_CROWD   300
#define CT_OUT_MAX 65536

extern char **environ;

static const char *const ct_env[] = { CT_ENV_BACKFILL, NULL };

/*
 * ct_ctl runs warblectl with args (NULL-terminated) and the test's
 * environment plus the cluster's addresses; its stdout and stderr go into
 * out (CT_OUT_MAX); returns its exit status.
 */
static int
ct_ctl(char *out, const char *const *args)
{
	char *envp[256], *urls[32];
	int   ne = 0, nurls, rc;

	cr_assert_geq(nurls = wbc_cluster_env_urls(&ct_cl, urls, 32), 0);
	for (int i = 0; environ[i] != NULL && ne < 200; i++) {
		if (strncmp(environ[i], "WARBLE_", 7) != 0) {
			envp[ne++] = environ[i];
		}
	}
	for (int i = 0; i < nurls; i++) {
		envp[ne++] = urls[i];
	}
	if (wbt_tls_env() != NULL) {
		envp[ne++] = (char *)wbt_tls_env(); /* WBT_TLS=1: warblectl presents admin */
	}
	envp[ne] = NULL;
	rc = wbt_run_capture(out, CT_OUT_MAX, "warblectl", args, envp);
	for (int i = 0; i < nurls; i++) {
		free(urls[i]);
	}
	cr_assert_geq(rc, 0, "warblectl did not run");
	return rc;
}

/* ct_manifest_has tells whether a manifest names a copy of store ("inbox.2") as shard i of n. */
static bool
ct_manifest_has(const char *manifest, const char *store, unsigned i, unsigned n)
{
	char        want[64];
	const char *at;

	snprintf(want, sizeof(want), "\"store\": \"%s\"", store);
	if ((at = strstr(manifest, want)) == NULL) {
		return false;
	}
	const char *open = at, *close = strchr(at, '}');
	while (open > manifest && *open != '{') {
		open--;
	}
	char shard[32], shards[32];
	snprintf(shard, sizeof(shard), "\"shard\": %u,", i);
	snprintf(shards, sizeof(shards), "\"shards\": %u,", n);
	const char *s1 = strstr(open, shard), *s2 = strstr(open, shards);
	return close != NULL && s1 != NULL && s1 < close && s2 != NULL && s2 < close;
}

/*
 * ct_restore restores each host's part of the backup in dir into
 * data/<host> with `admin restore --shard i` (i: the host's shard of its
 * service; 0 for the user service's host).
 */
static void
ct_restore(char *out, const char *dir, const char *data)
{
	wbc_host *hosts[1 + 3 * WBC_SHARDS_MAX];
	unsigned  index[1 + 3 * WBC_SHARDS_MAX], n = 0;

	hosts[n] = ct_cl.user, index[n++] = 0;
	for (unsigned j = 0; j < ct_cl.nrelation; j++) {
		hosts[n] = ct_cl.relation[j], index[n++] = j;
	}
	for (unsigned i = 0; i < ct_cl.ncontent; i++) {
		hosts[n] = ct_cl.content[i], index[n++] = i;
	}
	for (unsigned k = 0; k < ct_cl.ninbox; k++) {
		hosts[n] = ct_cl.inbox[k], index[n++] = k;
	}
	cr_assert_eq(mkdir(data, 0755), 0);
	for (unsigned h = 0; h < n; h++) {
		char        to[512], shard[16];
		const char *args[] = { "admin", "restore", "--shard", shard, dir, to, NULL };
		snprintf(to, sizeof(to), "%s/%s", data, wbc_host_name(hosts[h]));
		snprintf(shard, sizeof(shard), "%u", index[h]);
		cr_assert_eq(ct_ctl(out, args), 0, "restore of %s: %s", to, out);
	}
}

Test(cluster_admin, backup_restore, .fini = ct_fini, .timeout = 300)
{
	static char out[CT_OUT_MAX];
	static char snap[CT_USERS_MAX][CT_USERS_MAX];
	char        dir[256], data[256], path[300];
	ct_load     l;

	ct_start(CT_SHAPE, ct_env);
	ct_world_make(0xC4u, CT_AUTHORS, CT_READERS, CT_CROWD, 3);
	ct_load_start(&l, true);
	cr_assert(ct_wait_posts(60, wbt_ms(30000)), "the load made %zu posts", ct_nposts());

	/* the backup, under load; what was acknowledged before it began must come back */
	cr_assert_eq(wbt_path(dir, sizeof(dir), "backup"), 0);
	pthread_mutex_lock(&ct_w.mu);
	long long began = wbt_now_ms();
	memcpy(snap, ct_w.follows, sizeof(snap));
	pthread_mutex_unlock(&ct_w.mu);
	size_t      at_backup = ct_nposts();
	const char *backup[] = { "admin", "backup", dir, NULL };
	cr_assert_eq(ct_ctl(out, backup), 0, "backup under load: %s", out);
	for (unsigned k = 0; k < ct_cl.ninbox; k++) {
		for (unsigned i = 0; i < ct_cl.ncontent; i++) {
			char want[64];
			snprintf(want, sizeof(want), "inbox/%u applied content/%u", k, i);
			cr_assert_not_null(
			    strstr(out, want), "the order check lacks %s: %s", want, out);
		}
	}
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	char *manifest = wbt_read_file(path);
	cr_assert_not_null(manifest, "%s", path);
	cr_assert_not_null(strstr(manifest, "\"consistent\": true"), "%s", manifest);
	cr_assert(ct_manifest_has(manifest, "user", 0, 1), "%s", manifest);
	for (unsigned s = 0; s < 3; s++) {
		const char *svc = s == 0 ? "relation" : s == 1 ? "content" : "inbox";
		unsigned    n = s == 0 ? ct_cl.nrelation : s == 1 ? ct_cl.ncontent : ct_cl.ninbox;
		for (unsigned i = 0; i < n; i++) {
			char store[32];
			snprintf(store, sizeof(store), "%s.%u", svc, i);
			cr_assert(ct_manifest_has(manifest, store, i, n),
			    "the manifest lacks %s: %s", store, manifest);
		}
	}
	free(manifest);
	cr_assert(ct_wait_posts(ct_nposts() + 40, wbt_ms(30000)), "the load stalled");
	ct_load_stop(&l);
	cr_assert_eq(atomic_load(&ct_nfail), 0, "see the failures above");
	size_t acked = ct_w.nposts;
	ct_halt();

	/* each host's part into a fresh data folder of its own; a sharded backup needs --shard */
	cr_assert_eq(wbt_path(data, sizeof(data), "restored"), 0);
	const char *whole[] = { "admin", "restore", dir, data, NULL };
	cr_assert_neq(ct_ctl(out, whole), 0, "a sharded backup restored without --shard");
	cr_assert_not_null(strstr(out, "--shard"), "%s", out);
	snprintf(path, sizeof(path), "%s.3", data);
	const char *beyond[] = { "admin", "restore", "--shard", "3", dir, path, NULL };
	cr_assert_neq(ct_ctl(out, beyond), 0, "a restore of shard 3 of services of 1 to 3 shards");
	cr_assert_not_null(strstr(out, "no shard 3"), "%s", out);
	ct_restore(out, dir, data);
	snprintf(path, sizeof(path), "%s/%s", data, wbc_host_name(ct_cl.inbox[0]));
	const char *again[] = { "admin", "restore", "--shard", "0", dir, path, NULL };
	cr_assert_neq(ct_ctl(out, again), 0, "a restore overwrote a store");

	/* a new cluster on the restored folders, on the same hosts */
	cr_assert_eq(
	    wbc_cluster_run(&ct_cl, data, ct_env), 0, "the restored cluster did not start");
	ct_clients();
	long long ms = ct_wait_caught_up(wbt_ms(CT_CAUGHT_UP_MS));

	/* posts: those acknowledged before the backup began are there, the later ones may be */
	size_t before = 0;
	for (size_t p = 0; p < ct_w.nposts;) {
		if (ct_w.posts[p].ack_ms >= began) {
			ct_w.maybe[ct_w.nmaybe++] = ct_w.posts[p];
			ct_w.posts[p] = ct_w.posts[--ct_w.nposts];
		} else {
			p++, before++;
		}
	}
	size_t   later = ct_decide_posts();
	uint64_t events = 0;
	for (unsigned i = 0; i < ct_cl.ncontent; i++) {
		events += ct_log_last(ct_content[i], WB_OP_POST_LOG);
	}
	cr_assert_eq(events, ct_w.ntruth, "%llu post events in the content logs, %zu posts",
	    (unsigned long long)events, ct_w.ntruth);
	/* follows: a pair last changed before the backup began is as it was then */
	unsigned pairs = 0;
	for (unsigned u = 0; u < ct_w.nusers; u++) {
		for (unsigned v = 0; v < ct_w.nusers; v++) {
			bool later_change = ct_w.changed[u][v] >= began;
			ct_w.follows[u][v] = later_change ? CT_UNKNOWN : (uint8_t)snap[u][v];
			pairs += !later_change;
		}
	}
	unsigned decided = ct_decide_follows();
	size_t   homes = ct_check_homes(3);
	fprintf(stderr,
	    "cluster: backup under load at %zu posts; %zu acknowledged in all, %zu before the "
	    "backup began; restored %zu (%zu of the later ones), %u follow pairs as before it, "
	    "%u changed during it; caught up in %lld ms; %zu homes equal to the recomputed "
	    "ones\n",
	    at_backup, acked, before, ct_w.ntruth, later, pairs - decided, decided, ms, homes);
	cr_assert_gt(before, 0);

	/* a shard the inbox does not have is refused, not passed over */
	const char *no_shard[] = { "admin", "rebuild-inbox", "--shard", "3", NULL };
	cr_assert_neq(ct_ctl(out, no_shard), 0, "rebuild-inbox --shard 3 of 3 inbox shards");
	cr_assert_not_null(strstr(out, "no shard 3: inbox has 3 shards"), "%s", out);

	/* every inbox shard rebuilt from the restored relation and content: the same homes */
	const char *rebuild[] = { "admin", "rebuild-inbox", NULL };
	cr_assert_eq(ct_ctl(out, rebuild), 0, "%s", out);
	cr_assert_not_null(strstr(out, "rebuild-inbox ["), "a progress line: %s", out);
	cr_assert_not_null(strstr(out, "100%"), "%s", out);
	for (unsigned k = 0; k < ct_cl.ninbox; k++) {
		wb_obj *rep = NULL;
		cr_assert_eq(
		    wbt_call_retry(ct_inbox[k], wb_request(WB_OP_INBOX_REBUILD_STATUS), &rep),
		    WB_OK);
		cr_assert_str_eq(wb_str(rep, WB_F_STATE, "?"), "done", "inbox %u: %s", k,
		    wb_str(rep, WB_F_MSG, ""));
		wb_msg_free(rep);
	}
	cr_assert_eq(ct_check_homes(3), homes);
	fprintf(stderr, "cluster: every inbox shard rebuilt: %zu homes the same\n", homes);
	ct_stop(true);
}
