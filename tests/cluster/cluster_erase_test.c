/*
 * cluster_erase_test.c - deleting an account across hosts (suite
 * "cluster_erase"): the user service and the gateway once, content and
 * relation in two shards, the inbox in three, each process on a host of
 * its own (wbc_cluster.h).
 *
 * An account with 3,000 fans on every shard, follows of its own on both
 * relation shards, an image and posts in every fan's inbox is deleted
 * through the gateway; one relation shard is killed (-9) and restarted
 * right after.  The name no longer logs in and its session is refused at
 * once.  Its last post comes late to its own inbox shard: that shard is
 * cut off from the account's content shard (wbc_block) from before the
 * post until it has applied the user log and relation's "erased", so the
 * post's event (which writes the author's own cell in their home) comes
 * after the row was dropped; content's own "erased", later in the same
 * log, must drop it again.  Every relation, content and inbox shard then
 * applies the user log (the restarted shard reads what it missed from
 * the user service), and the end state must be exact on every shard: no
 * fan edge and no follow of it, every count summed over the shards back
 * to zero, no post or image of it on its content shard, and no post of
 * it in any fan's inbox, each read on the fan's own inbox shard.  Then,
 * the cluster stopped, every family of every relation, content and inbox
 * shard's store but the logs and positions is read from its files for
 * the account's uid and name (the user store: erase_test's nothing_left).
 * Needs root (skips otherwise), and one process per host whatever the
 * mode.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "content_schema.h"
#include "hb.h"
#include "inbox_schema.h"
#include "rel_schema.h"
#include "rt_client.h"
#include "warble.h"
#include "wb_slot.h"
#include "wbc.h"
#include "wbc_cluster.h"
#include "wbt.h"
#include "wbt_png.h"

#define CE_CONTENT  2
#define CE_RELATION 2
#define CE_INBOX    3
#define CE_FANS     3000
#define CE_FOLLOWS  10 /* fans the account follows itself */
#define CE_POSTS    3
#define CE_PASSWORD "cluster-erase-1"
#define CE_NAME     "cerased"
#define CE_FAMS_MAX 16
#define CE_WAIT_MS  90000 /* scaled */

static wbc_net    *ce_net;
static wbc_cluster ce_cl;
static rt_client  *ce_user, *ce_content[CE_CONTENT], *ce_rel[CE_RELATION], *ce_inbox[CE_INBOX];

/* ce_fini closes the test's clients, then the hosts and their daemons. */
static void
ce_fini(void)
{
	rt_client_close(ce_user);
	for (int i = 0; i < CE_CONTENT; i++) {
		rt_client_close(ce_content[i]);
	}
	for (int j = 0; j < CE_RELATION; j++) {
		rt_client_close(ce_rel[j]);
	}
	for (int k = 0; k < CE_INBOX; k++) {
		rt_client_close(ce_inbox[k]);
	}
	wbc_fini();
}

/* ce_inbox_by counts the posts of author in reader's inbox, read on the reader's inbox shard. */
static size_t
ce_inbox_by(uint64_t reader, uint64_t author)
{
	wb_obj       *req = wb_request(WB_OP_INBOX_HOME), *rep = NULL;
	const wb_obj *p = NULL;
	size_t        n = 0, by = 0;

	wb_set_u64(req, WB_F_UID, reader);
	wb_set_u64(req, WB_F_LIMIT, 100);
	cr_assert_eq(wbt_call_retry(ce_inbox[wb_uid_shard(reader, CE_INBOX)], req, &rep), WB_OK);
	(void)wb_get_objs(rep, WB_F_POSTS, &p, &n);
	for (size_t i = 0; i < n; i++) {
		by += author == 0 || wb_u64(&p[i], WB_F_AUTHOR, 0) == author;
	}
	wb_msg_free(rep);
	return by;
}

/* ce_inboxes_hold waits until every fan's inbox holds want posts of author; the fans that do not. */
static size_t
ce_inboxes_hold(const uint64_t *fans, size_t n, uint64_t author, size_t want)
{
	long long deadline = wbt_now_ms() + wbt_ms(CE_WAIT_MS);
	size_t    bad = n;

	for (size_t from = 0; bad > 0 && wbt_now_ms() < deadline;) {
		bad = 0;
		for (size_t i = from; i < n; i++) {
			if (ce_inbox_by(fans[i], author) != want) {
				if (bad++ == 0) {
					from = i; /* the ones before are done */
				}
			}
		}
		if (bad > 0) {
			wbt_sleep_ms(200);
		}
	}
	return bad;
}

/* ce_counts sums uid's following and followers over the relation shards. */
static void
ce_counts(uint64_t uid, uint64_t *following, uint64_t *followers)
{
	*following = *followers = 0;
	for (int j = 0; j < CE_RELATION; j++) {
		wb_obj       *req = wb_request(WB_OP_REL_COUNTS), *rep = NULL;
		const wb_obj *u = NULL;
		size_t        n = 0;

		wb_set_u64s(req, WB_F_UIDS, &uid, 1);
		cr_assert_eq(wbt_call_retry(ce_rel[j], req, &rep), WB_OK);
		cr_assert(wb_get_objs(rep, WB_F_USERS, &u, &n) && n == 1);
		*following += wb_u64(&u[0], WB_F_FOLLOWING, 0);
		*followers += wb_u64(&u[0], WB_F_FOLLOWERS, 0);
		wb_msg_free(rep);
	}
}

/* ce_sum adds up a gauge over clients c[lo..hi). */
static uint64_t
ce_sum(rt_client *const *c, unsigned lo, unsigned hi, const char *name)
{
	uint64_t sum = 0;

	for (unsigned i = lo; i < hi; i++) {
		sum += wbt_stat(c[i], name);
	}
	return sum;
}

/* ce_rel_of gives the relation shards [*lo, *hi) whose slots overlap inbox shard k's: the ones
 * whose logs it follows. */
static void
ce_rel_of(unsigned k, unsigned *lo, unsigned *hi)
{
	unsigned slo, shi;

	wb_shard_slots((wb_shard) { k, CE_INBOX }, &slo, &shi);
	*lo = wb_slot_shard(slo, CE_RELATION);
	*hi = wb_slot_shard(shi - 1, CE_RELATION) + 1;
}

/* ce_wait_applied waits until gauge name of inbox k equals the sum of the last seqs of the logs
 * it follows (content's: all; relation's: ce_rel_of); whether it did. */
static bool
ce_wait_applied(unsigned k, const char *name)
{
	long long deadline = wbt_now_ms() + wbt_ms(CE_WAIT_MS);
	bool      rel = strcmp(name, "relation_applied") == 0;
	unsigned  lo = 0, hi = CE_CONTENT;
	uint64_t  have, want;

	if (rel) {
		ce_rel_of(k, &lo, &hi);
	}
	while ((have = wbt_stat(ce_inbox[k], name)) !=
	       (want = ce_sum(rel ? ce_rel : ce_content, lo, hi, "log_last_seq"))) {
		if (wbt_now_ms() > deadline) {
			fprintf(stderr, "cluster_erase: inbox %u: %s %llu of %llu\n", k, name,
			    (unsigned long long)have, (unsigned long long)want);
			return false;
		}
		wbt_sleep_ms(100);
	}
	return true;
}

/* ce_list counts a rel.fans or rel.following list of uid on relation shard j (one page). */
static size_t
ce_list(unsigned j, wb_op op, uint64_t uid)
{
	wb_obj         *req = wb_request(op), *rep = NULL;
	const uint64_t *v = NULL;
	size_t          n = 0;
	int             rc;

	wb_set_u64(req, WB_F_UID, uid);
	wb_set_u64(req, WB_F_LIMIT, 10000);
	rc = wbt_call_retry(ce_rel[j], req, &rep);
	/* rel.following of another shard's user is WRONG_SHARD: it holds none of them */
	if (rc == WB_EWRONGSHARD) {
		wb_msg_free(rep);
		return 0;
	}
	cr_assert_eq(rc, WB_OK, "%s on relation %u: %s", wb_op_name(op), j, wb_err_name(rc));
	(void)wb_get_u64s(rep, WB_F_UIDS, &v, &n);
	wb_msg_free(rep);
	return n;
}

/* ce_has tells whether p[0..n) holds needle[0..len). */
static bool
ce_has(const void *p, size_t n, const void *needle, size_t len)
{
	return n >= len && memmem(p, n, needle, len) != NULL;
}

/*
 * ce_scan reads every cell (every version) of every family of the stopped
 * store of svc on host h, but its log and meta (events and positions,
 * whose seqs are numbers like any uid), for x's uid (8 bytes, big-endian,
 * anywhere in a row, qualifier or value) and its name; counts the cells
 * holding either in *found (the first described in first) and those
 * holding control, an account still there, in *seen.
 */
static void
ce_scan(wbc_host *h, const char *svc, uint64_t x, uint64_t control, uint64_t *found, uint64_t *seen,
    char *first, size_t first_len)
{
	hb_family_opts fams[CE_FAMS_MAX];
	hb_table_opts  o = { .read_only = true };
	hb_table      *t = NULL;
	size_t         nfams;
	uint8_t        xb[8], cb[8];
	char           path[512];

	memset(fams, 0, sizeof(fams));
	if (strcmp(svc, "relation") == 0) {
		rel_schema(fams);
		nfams = REL_FAM_NFAMS;
	} else if (strcmp(svc, "content") == 0) {
		content_schema_families(fams);
		nfams = CONTENT_FAM_COUNT;
	} else {
		inbox_schema_families(fams, 0, 0); /* every version, no TTL: all that is on disk */
		nfams = INBOX_FAM_COUNT;
	}
	hb_u64_be(xb, x);
	hb_u64_be(cb, control);
	cr_assert_eq(wbc_cluster_store(&ce_cl, h, svc, path, sizeof(path)), 0);
	cr_assert_eq(
	    hb_open(&t, path, fams, nfams, &o), WB_OK, "open %s: %s", path, hb_last_error());
	for (size_t fam = 0; fam < nfams; fam++) {
		hb_scan_opts so = { .all_versions = true };
		hb_scan     *sc = NULL;
		hb_cell      c;
		int          rc;

		if (strcmp(fams[fam].name, "log") == 0 || strcmp(fams[fam].name, "meta") == 0) {
			continue;
		}
		cr_assert_eq(hb_scan_open(&sc, t, (int)fam, &so), WB_OK);
		while ((rc = hb_scan_next(sc, &c)) == WB_OK) {
			bool hit = false, ctl = false;
			for (int k = 0; k < 3; k++) {
				const void *p = k == 0 ? c.row : k == 1 ? c.qual : c.value;
				size_t n = k == 0 ? c.row_len : k == 1 ? c.qual_len : c.value_len;
				hit = hit || ce_has(p, n, xb, 8) ||
				      ce_has(p, n, CE_NAME, strlen(CE_NAME));
				ctl = ctl || ce_has(p, n, cb, 8);
			}
			if (hit && (*found)++ == 0) {
				snprintf(first, first_len,
				    "%s/%s: row of %zu bytes, qualifier %zu, version %llu, value "
				    "%zu",
				    path, fams[fam].name, c.row_len, c.qual_len,
				    (unsigned long long)c.version, c.value_len);
			}
			*seen += ctl;
		}
		cr_assert_eq(rc, WB_EEND, "%s/%s: %s", path, fams[fam].name, wb_err_name(rc));
		hb_scan_close(sc);
	}
	hb_close(t);
}

Test(cluster_erase, an_account_on_every_shard, .fini = ce_fini, .timeout = 400)
{
	static uint64_t fans[CE_FANS], part[CE_RELATION][CE_FANS];
	size_t          npart[CE_RELATION] = { 0 };
	unsigned        per_inbox[CE_INBOX] = { 0 };
	const wbc_shape shape = {
		.content = CE_CONTENT, .relation = CE_RELATION, .inbox = CE_INBOX
	};
	rt_client_opts o = { .timeout_ms = wbt_ms(10000) };
	const char    *mode = getenv("WARBLE_TEST_MODE");
	warble_client *c = NULL;
	uint64_t       x = 0, following, followers, last;
	wb_obj        *req, *rep = NULL;
	char           why[512];
	int            rc;

	if (mode != NULL && strcmp(mode, "one") == 0) {
		cr_skip_test("the cluster suite runs one process per host whatever the mode");
	}
	rc = wbc_open(&ce_net, why, sizeof(why));
	if (rc == WBC_SKIP) {
		cr_skip_test("%s", why);
	}
	cr_assert_eq(rc, 0, "cannot make the hosts' network: %s", why);
	cr_assert_eq(
	    wbc_cluster_start(&ce_cl, ce_net, &shape, NULL), 0, "the cluster did not start");
	cr_assert_eq(rt_client_open(&ce_user, ce_cl.user_url, &o), WB_OK);
	for (int i = 0; i < CE_CONTENT; i++) {
		cr_assert_eq(rt_client_open(&ce_content[i], ce_cl.content_url[i], &o), WB_OK);
	}
	for (int j = 0; j < CE_RELATION; j++) {
		cr_assert_eq(rt_client_open(&ce_rel[j], ce_cl.relation_url[j], &o), WB_OK);
	}
	for (int k = 0; k < CE_INBOX; k++) {
		cr_assert_eq(rt_client_open(&ce_inbox[k], ce_cl.inbox_url[k], &o), WB_OK);
	}

	/* the account, its fans on every shard (each follow on the fan's relation shard), its
	 * follows, and its posts in every fan's inbox */
	cr_assert_eq(warble_open(&c, ce_cl.gateway_url[0], wbt_ms(15000)), WARBLE_OK);
	req = wb_request(WB_OP_USER_REGISTER_MANY);
	wb_set_cstr(req, WB_F_NAME, "cefan");
	wb_set_u64(req, WB_F_FROM, 0);
	wb_set_u64(req, WB_F_LIMIT, CE_FANS);
	wb_set_cstr(req, WB_F_PASSWORD, CE_PASSWORD);
	cr_assert_eq(wbt_call_retry(ce_user, req, &rep), WB_OK);
	const uint64_t *v = NULL;
	size_t          nv = 0;
	cr_assert(wb_get_u64s(rep, WB_F_UIDS, &v, &nv) && nv == CE_FANS);
	memcpy(fans, v, sizeof(fans));
	wb_msg_free(rep);
	/* registered after its fans: its uid is above every count and every seq but the logs' */
	cr_assert_eq(warble_register(c, CE_NAME, CE_PASSWORD, &x), WARBLE_OK);
	cr_assert_eq(warble_login(c, CE_NAME, CE_PASSWORD, NULL), WARBLE_OK);
	for (size_t i = 0; i < CE_FANS; i++) {
		unsigned j = wb_uid_shard(fans[i], CE_RELATION);
		part[j][npart[j]++] = fans[i];
		per_inbox[wb_uid_shard(fans[i], CE_INBOX)]++;
	}
	for (unsigned j = 0; j < CE_RELATION; j++) {
		req = wb_request(WB_OP_REL_FOLLOW_MANY);
		wb_set_u64(req, WB_F_TARGET, x);
		wb_set_u64s(req, WB_F_UIDS, part[j], npart[j]);
		cr_assert_eq(wbt_call_retry(ce_rel[j], req, &rep), WB_OK);
		wb_msg_free(rep);
	}
	/* a follow that stays: the erasure scan's control */
	uint64_t control = fans[CE_FANS - 1];
	req = wb_request(WB_OP_REL_FOLLOW_MANY);
	wb_set_u64(req, WB_F_TARGET, fans[CE_FANS - 2]);
	wb_set_u64s(req, WB_F_UIDS, &control, 1);
	cr_assert_eq(wbt_call_retry(ce_rel[wb_uid_shard(control, CE_RELATION)], req, &rep), WB_OK);
	wb_msg_free(rep);
	for (int i = 0; i < CE_FOLLOWS; i++) {
		char name[32];
		snprintf(name, sizeof(name), "cefan%d", i);
		cr_assert_eq(warble_follow(c, name), WARBLE_OK, "%s", warble_errmsg(c));
	}
	for (int p = 0; p < CE_POSTS - 1; p++) {
		cr_assert_eq(warble_post(c, "across the hosts", NULL), WARBLE_OK);
	}
	size_t          png_len = 0;
	unsigned char  *png = wbt_png(40, 30, 11, &png_len);
	warble_media_t *m = NULL;
	cr_assert_not_null(png);
	cr_assert_eq(warble_upload(c, png, png_len, &m), WARBLE_OK, "%s", warble_errmsg(c));
	warble_attach_t att = { m->media, "an image to erase" };
	cr_assert_eq(warble_post_rich(c, "with an image", "", "", &att, 1, NULL), WARBLE_OK, "%s",
	    warble_errmsg(c));
	free(png);
	cr_assert_eq(ce_inboxes_hold(fans, CE_FANS, x, CE_POSTS), 0, "the fans' inboxes before");
	ce_counts(x, &following, &followers);
	cr_assert(following == CE_FOLLOWS && followers == CE_FANS);

	/* its own inbox shard, once it has applied every event so far (a follow's backfill
	 * reads content), cut off from its content shard; then one more post */
	unsigned xi = wb_uid_shard(x, CE_INBOX), xc = wb_uid_shard(x, CE_CONTENT);
	cr_assert(ce_wait_applied(xi, "relation_applied"), "inbox %u behind relation before", xi);
	cr_assert(ce_wait_applied(xi, "content_applied"), "inbox %u behind content before", xi);
	cr_assert_eq(wbc_block(ce_cl.inbox[xi], ce_cl.content[xc]), 0);
	cr_assert_eq(warble_post(c, "the last one, late", NULL), WARBLE_OK);

	/* deleted; relation shard 1 killed and restarted at once */
	char token[256];
	snprintf(token, sizeof(token), "%s", warble_token(c));
	long long t0 = wbt_now_ms();
	cr_assert_eq(warble_delete_account(c, CE_PASSWORD), WARBLE_OK, "%s", warble_errmsg(c));
	cr_assert_eq(wbc_restart(ce_cl.relation[1], SIGKILL, wbt_ms(20000)), 0);
	warble_user_t *u = NULL;
	cr_assert_eq(warble_profile(c, CE_NAME, &u), WARBLE_ENOUSER);
	cr_assert_eq(warble_login(c, CE_NAME, CE_PASSWORD, NULL), WARBLE_ELOGIN, "no login");
	cr_assert_eq(warble_set_token(c, token), WARBLE_OK);
	cr_assert_eq(warble_whoami(c, &u), WARBLE_EAUTH, "its session ended");
	cr_assert_eq(warble_set_token(c, NULL), WARBLE_OK);

	/* every shard applies the user log, then every inbox loses its posts */
	last = wbt_stat(ce_user, "log_last_seq");
	cr_assert_eq(last, 1);
	long long deadline = wbt_now_ms() + wbt_ms(CE_WAIT_MS);
	for (;;) {
		bool all = wbt_stat(ce_user, "sessions_swept_seq") == last;
		for (int i = 0; i < CE_CONTENT; i++) {
			all = all && wbt_stat(ce_content[i], "user_applied") == last;
		}
		for (int j = 0; j < CE_RELATION; j++) {
			all = all && wbt_stat(ce_rel[j], "user_applied") == last;
		}
		for (int k = 0; k < CE_INBOX; k++) {
			all = all && wbt_stat(ce_inbox[k], "user_applied") == last;
		}
		if (all) {
			break;
		}
		cr_assert_lt(wbt_now_ms(), deadline, "a shard never applied the deletion");
		wbt_sleep_ms(50);
	}
	long long applied_ms = wbt_now_ms() - t0;
	cr_assert(ce_wait_applied(xi, "relation_applied"), "inbox %u never applied relation's", xi);
	cr_assert_eq(ce_inbox_by(x, 0), 0, "its own inbox, relation's erased applied");
	cr_assert_eq(wbc_unblock(ce_cl.inbox[xi], ce_cl.content[xc]), 0);
	cr_assert(ce_wait_applied(xi, "content_applied"), "inbox %u never applied content's", xi);
	cr_assert_eq(ce_inboxes_hold(fans, CE_FANS, x, 0), 0, "fans' inboxes still hold its posts");
	long long purged_ms = wbt_now_ms() - t0;

	/* the end state, on every shard */
	for (unsigned j = 0; j < CE_RELATION; j++) {
		cr_assert_eq(ce_list(j, WB_OP_REL_FANS, x), 0, "fans of it on relation %u", j);
		cr_assert_eq(
		    ce_list(j, WB_OP_REL_FOLLOWING, x), 0, "follows of it on relation %u", j);
	}
	ce_counts(x, &following, &followers);
	cr_assert(following == 0 && followers == 0, "its counts %llu %llu",
	    (unsigned long long)following, (unsigned long long)followers);
	for (size_t i = 0; i < CE_FANS; i += 37) {
		ce_counts(fans[i], &following, &followers);
		cr_assert_eq(following, 0, "fan %llu follows %llu", (unsigned long long)fans[i],
		    (unsigned long long)following);
	}
	for (int i = 0; i < CE_FOLLOWS; i++) {
		ce_counts(fans[i], &following, &followers);
		cr_assert_eq(followers, 0, "a user it followed has %llu fans",
		    (unsigned long long)followers);
	}
	req = wb_request(WB_OP_POST_TIMELINE);
	wb_set_u64(req, WB_F_UID, x);
	cr_assert_eq(wbt_call_retry(ce_content[wb_uid_shard(x, CE_CONTENT)], req, &rep), WB_OK);
	const wb_obj *posts = NULL;
	size_t        np = 0;
	(void)wb_get_objs(rep, WB_F_POSTS, &posts, &np);
	cr_assert_eq(np, 0, "%zu of its posts are on its content shard", np);
	wb_msg_free(rep);
	req = wb_request(WB_OP_MEDIA_GET);
	wb_set_cstr(req, WB_F_MEDIA, m->media);
	wb_set_u64(req, WB_F_UID, x);
	rc = wbt_call_retry(ce_content[xc], req, &rep);
	wb_msg_free(rep);
	cr_assert_eq(rc, WB_ENOMEDIA, "its image: %s", wb_err_name(rc));
	warble_media_free(m);
	cr_assert_eq(ce_inbox_by(x, 0), 0, "its own inbox (the late post's own cell too)");
	fprintf(stderr,
	    "cluster_erase: %d fans (%u, %u, %u per inbox shard): every shard applied the "
	    "deletion %lld ms after it, every inbox purged after %lld ms (relation 1 killed)\n",
	    CE_FANS, per_inbox[0], per_inbox[1], per_inbox[2], applied_ms, purged_ms);
	warble_close(c);
	cr_assert_eq(wbc_cluster_stop(&ce_cl, wbt_ms(15000)), 0, "a daemon did not stop cleanly");

	/* the erasure scan: nothing of it in any family of any shard's store */
	static const char *const svcs[] = { "relation", "content", "inbox" };
	uint64_t                 found = 0, seen = 0;
	char                     first[700] = "";
	for (int k = 0; k < 3; k++) {
		unsigned   n = k == 0 ? CE_RELATION : k == 1 ? CE_CONTENT : CE_INBOX;
		wbc_host **h = k == 0 ? ce_cl.relation : k == 1 ? ce_cl.content : ce_cl.inbox;
		for (unsigned i = 0; i < n; i++) {
			ce_scan(h[i], svcs[k], x, control, &found, &seen, first, sizeof(first));
		}
	}
	cr_assert_gt(seen, 0, "the scan does not see the cells of an account still there");
	cr_assert_eq(found, 0, "%llu cells hold its uid or name, first %s",
	    (unsigned long long)found, first);
	fprintf(stderr,
	    "cluster_erase: every relation, content and inbox store read back: its uid and name in "
	    "no cell but the logs' (%llu cells of the control)\n",
	    (unsigned long long)seen);
	char prefix[32], what[64];
	wbc_prefix(prefix, sizeof(prefix), (int)getpid());
	cr_assert_eq(wbc_close(ce_net), 0);
	ce_net = NULL;
	cr_assert_eq(wbc_leftovers(prefix, what, sizeof(what)), 0, "left behind: %s", what);
}
