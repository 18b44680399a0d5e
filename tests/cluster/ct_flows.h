/*
 * ct_flows.h - the flows every shape of the cluster suite runs (ct.h's
 * model), shared by cluster_test.c (five kinds of daemons) and
 * cluster_one_test.c (`warble --shard i/N`):
 *
 *   ct_seed_flows    users registered, logged in and acting through the
 *                    SDK, half through each gateway: follows, posts,
 *                    follows again (backfilled), unfollows (purged),
 *                    deletes; then every home (from the inbox shards and
 *                    hydrated through the gateways), timeline, count and
 *                    following and fans page (cursors walked) exact
 *                    against the model
 *   ct_big_account   an account whose CT_FANS fans, made with the bulk
 *                    operations on the shards' own ports, live on every
 *                    inbox shard: each post lands in exactly its fans'
 *                    inboxes summed over the shards, read on each shard
 *   ct_misroutes     a request for a uid (or post) of one shard sent to
 *                    another's port: WRONG_SHARD naming the owner, and
 *                    nothing written
 *   ct_ops_endpoints /readyz of each gateway names every shard, /metrics
 *                    labels each shard's figures
 */
#ifndef CT_FLOWS_H
#define CT_FLOWS_H

#include "ct.h"
#include "wbt_png.h"
#include "rt_tls.h"
#include "wbt_tls.h"

#define CT_FLOW_USERS 24
#define CT_FLOW_PAGE  3 /* SDK page size: many pages, across the shards */
#define CT_CELEB_POST 4
#define CT_OTHERS     300

/* ct_other returns a client of user u's session through the other gateway (closed by caller). */
static inline warble_client *
ct_other(unsigned u)
{
	warble_client *c = ct_sdk((ct_w.u[u].gw + 1) % ct_cl.ngateway);

	cr_assert_eq(warble_set_token(c, warble_token(ct_w.u[u].sdk)), WARBLE_OK);
	return c;
}

/*
 * ct_check_sdk_posts compares a list read through the SDK (a home, or a
 * timeline: name NULL for the caller's home), page by page of
 * CT_FLOW_PAGE, with want[0..n): ids, authors, their names and texts.
 */
static inline void
ct_check_sdk_posts(
    warble_client *c, const char *who, const char *name, const ct_post *want, size_t n)
{
	uint64_t before = 0;
	size_t   got = 0;

	for (int pages = 0; pages < (int)(n / CT_FLOW_PAGE) + 3; pages++) {
		warble_posts_t *p = NULL;
		int             rc = name == NULL ? warble_home(c, before, CT_FLOW_PAGE, &p)
		                                  : warble_timeline(c, name, before, CT_FLOW_PAGE, &p);
		cr_assert_eq(rc, WARBLE_OK, "%s's %s: %s: %s", who, name ? "timeline" : "home",
		    warble_errname(rc), warble_errmsg(c));
		for (size_t i = 0; i < p->n; i++, got++) {
			const warble_post_t *q = &p->posts[i];
			char                 text[32];
			cr_assert_lt(got, n, "%s's %s holds more than the %zu posts of the model",
			    who, name ? "timeline" : "home", n);
			int a = ct_user_of(want[got].author);
			snprintf(text, sizeof(text), "p%u", want[got].seq);
			cr_assert(q->id == want[got].id && q->author == want[got].author,
			    "%s's %s: post %zu is %llu by %llu, want %llu by %llu", who,
			    name ? "timeline" : "home", got, (unsigned long long)q->id,
			    (unsigned long long)q->author, (unsigned long long)want[got].id,
			    (unsigned long long)want[got].author);
			cr_assert_str_eq(
			    q->text, text, "%s: post %llu's text", who, (unsigned long long)q->id);
			cr_assert(a >= 0 && strcmp(q->author_name, ct_w.u[a].name) == 0,
			    "%s: post %llu's author is named %s", who, (unsigned long long)q->id,
			    q->author_name);
		}
		before = p->next;
		bool last = p->n == 0 || p->next == 0;
		warble_posts_free(p);
		if (last) {
			cr_assert_eq(got, n, "%s's %s holds %zu posts, want %zu", who,
			    name ? "timeline" : "home", got, n);
			return;
		}
	}
	cr_assert_fail("%s's %s never ended", who, name ? "timeline" : "home");
}

/*
 * ct_check_sdk_list walks name's followees (fans: its fans) through the
 * SDK on c, page by page of limit, and compares them, in order, with
 * want[0..n).
 */
static inline void
ct_check_sdk_list(
    warble_client *c, const char *name, bool fans, unsigned limit, const uint64_t *want, size_t n)
{
	uint64_t after = 0;
	size_t   got = 0;

	for (size_t pages = 0; pages < n / limit + 3; pages++) {
		warble_users_t *p = NULL;
		int             rc = fans ? warble_fans(c, name, after, limit, &p)
		                          : warble_following(c, name, after, limit, &p);
		cr_assert_eq(rc, WARBLE_OK, "%s of %s: %s: %s", fans ? "fans" : "following", name,
		    warble_errname(rc), warble_errmsg(c));
		cr_assert_leq(p->n, limit);
		for (size_t i = 0; i < p->n; i++, got++) {
			cr_assert_lt(got, n, "%s of %s: more than the %zu of the model",
			    fans ? "fans" : "following", name, n);
			cr_assert_eq(p->users[i].uid, want[got],
			    "%s of %s: entry %zu is %llu, want %llu", fans ? "fans" : "following",
			    name, got, (unsigned long long)p->users[i].uid,
			    (unsigned long long)want[got]);
		}
		after = p->next;
		warble_users_free(p);
		if (after == 0) {
			cr_assert_eq(got, n, "%s of %s: %zu, want %zu", fans ? "fans" : "following",
			    name, got, n);
			return;
		}
	}
	cr_assert_fail("the %s pages of %s never ended", fans ? "fans" : "following", name);
}

/*
 * ct_check_flows checks, once every write was acknowledged, everything a
 * client can read against the model: every home from its inbox shard and
 * through the user's gateway (hydrated), every timeline, count, and the
 * following and fans pages of every user, through the other gateway.
 */
static inline void
ct_check_flows(void)
{
	static ct_post want[CT_POSTS_MAX];
	uint64_t       list[CT_USERS_MAX];

	ct_wait_caught_up(wbt_ms(CT_CAUGHT_UP_MS));
	cr_assert_eq(ct_decide_posts(), 0);
	cr_assert_eq(ct_decide_follows(), 0);
	ct_check_homes(0);
	for (unsigned u = 0; u < ct_w.nusers; u++) {
		const ct_user *x = &ct_w.u[u];
		warble_client *other = ct_other(u);
		unsigned       v = (u + 1) % ct_w.nusers; /* a viewer on the other gateway */
		size_t         n = ct_want((int)u, want), nf = 0, nfans = 0;
		warble_user_t *prof = NULL;

		ct_check_sdk_posts(x->sdk, x->name, NULL, want, n);
		n = 0;
		for (size_t p = 0; p < ct_w.ntruth; p++) {
			if (ct_w.truth[p].author == x->uid) {
				want[n++] = ct_w.truth[p];
			}
		}
		qsort(want, n, sizeof(want[0]), ct_cmp_desc);
		ct_check_sdk_posts(other, x->name, x->name, want, n);

		for (unsigned w = 0; w < ct_w.nusers; w++) {
			if (ct_w.follows[u][w] == 1) {
				list[nf++] = ct_w.u[w].uid;
			}
			nfans += ct_w.follows[w][u] == 1;
		}
		qsort(list, nf, sizeof(list[0]), ct_cmp_u64);
		ct_check_sdk_list(other, x->name, false, CT_FLOW_PAGE, list, nf);
		nf = 0;
		for (unsigned w = 0; w < ct_w.nusers; w++) {
			if (ct_w.follows[w][u] == 1) {
				list[nf++] = ct_w.u[w].uid;
			}
		}
		qsort(list, nf, sizeof(list[0]), ct_cmp_fan);
		ct_check_sdk_list(ct_w.u[v].sdk, x->name, true, CT_FLOW_PAGE, list, nf);

		int rc = warble_profile(ct_w.u[v].sdk, x->name, &prof);
		cr_assert_eq(
		    rc, WARBLE_OK, "profile %s: %s", x->name, warble_errmsg(ct_w.u[v].sdk));
		size_t following = 0;
		for (unsigned w = 0; w < ct_w.nusers; w++) {
			following += ct_w.follows[u][w] == 1;
		}
		cr_assert(prof->following == following && prof->followers == nfans,
		    "%s: following %llu, followers %llu through gateway %u; the model says %zu and "
		    "%zu",
		    x->name, (unsigned long long)prof->following,
		    (unsigned long long)prof->followers, ct_w.u[v].gw, following, nfans);
		cr_assert_eq(prof->followed, ct_w.follows[v][u] == 1, "%s follows %s?",
		    ct_w.u[v].name, x->name);
		warble_user_free(prof);
		warble_close(other);
	}
}

/*
 * ct_media has an author of each content shard upload an image through
 * its gateway and post it (a rich post, recorded in the model like any
 * other); the image and its preview read through the other gateway, by
 * another user, are the bytes the upload stored.
 */
static inline void
ct_media(void)
{
	for (unsigned i = 0; i < ct_cl.ncontent; i++) {
		unsigned u = 0;
		while (u < ct_w.nusers && wb_uid_shard(ct_w.u[u].uid, ct_cl.ncontent) != i) {
			u++;
		}
		cr_assert_lt(u, ct_w.nusers, "no user on content shard %u", i);
		size_t          len = 0;
		unsigned char  *png = wbt_png(64, 48, 7 + i, &len);
		warble_media_t *up = NULL, *got[2] = { NULL, NULL };
		warble_client  *c = ct_w.u[u].sdk, *other = ct_w.u[(u + 1) % ct_w.nusers].sdk;
		ct_post p = { .author = ct_w.u[u].uid, .seq = atomic_fetch_add(&ct_w.seq, 1) };
		char    text[32];

		cr_assert_not_null(png);
		cr_assert_eq(warble_upload(c, png, len, &up), WARBLE_OK, "upload on content %u: %s",
		    i, warble_errmsg(c));
		snprintf(text, sizeof(text), "p%u", p.seq);
		warble_attach_t a = { up->media, "a test pattern" };
		cr_assert_eq(warble_post_rich(c, text, "", "", &a, 1, &p.id), WARBLE_OK, "%s",
		    warble_errmsg(c));
		ct_post_record(p, false);
		cr_assert_eq(warble_media(other, up->media, &got[0]), WARBLE_OK,
		    "media %s through gateway %u: %s", up->media, ct_w.u[(u + 1) % ct_w.nusers].gw,
		    warble_errmsg(other));
		cr_assert_eq(
		    warble_media(c, up->media, &got[1]), WARBLE_OK, "%s", warble_errmsg(c));
		cr_assert(got[0]->size == up->size && got[1]->size == up->size &&
		              memcmp(got[0]->data, got[1]->data, up->size) == 0,
		    "image %s differs between the gateways", up->media);
		warble_media_free(got[0]);
		cr_assert_eq(warble_media_preview(other, up->media, &got[0]), WARBLE_OK, "%s",
		    warble_errmsg(other));
		cr_assert_eq(got[0]->size, up->preview_size);
		warble_media_free(got[0]);
		warble_media_free(got[1]);
		warble_media_free(up);
		free(png);
	}
}

/*
 * ct_seed_flows runs the users' flows through the SDK, half through each
 * gateway, in two rounds, checking everything after each (ct_check_flows):
 * round one follows at random and posts (an image on each content shard
 * too: ct_media); round two follows again (each
 * new follow backfills the followee's posts), unfollows (purged),
 * deletes a post of every third user through the other gateway, and
 * posts again.
 */
static inline void
ct_seed_flows(uint64_t seed)
{
	uint64_t rng = seed;
	unsigned nfollow = 0, nunfollow = 0, ndelete = 0;

	ct_users(CT_FLOW_USERS, 0, "user", true);
	for (unsigned u = 0; u < ct_w.nusers; u++) {
		for (unsigned v = 0; v < ct_w.nusers; v++) {
			if (u != v && ct_rand(&rng) % 4 == 0) {
				int rc = ct_relate(u, v, true);
				cr_assert_eq(rc, WARBLE_OK, "%s follows %s: %s", ct_w.u[u].name,
				    ct_w.u[v].name, warble_errmsg(ct_w.u[u].sdk));
				nfollow++;
			}
		}
	}
	for (unsigned n = 0; n < 2; n++) {
		for (unsigned u = 0; u < ct_w.nusers; u++) {
			cr_assert_eq(ct_publish(u, NULL), WARBLE_OK);
		}
	}
	ct_media();
	ct_check_flows();

	for (unsigned u = 0; u < ct_w.nusers; u++) {
		unsigned start = (unsigned)(ct_rand(&rng) % ct_w.nusers);
		int      f = -1, uf = -1;
		for (unsigned k = 0; k < ct_w.nusers; k++) {
			unsigned v = (start + k) % ct_w.nusers;
			if (v != u && ct_w.follows[u][v] == 0 && f < 0) {
				f = (int)v;
			} else if (v != u && ct_w.follows[u][v] == 1 && uf < 0) {
				uf = (int)v;
			}
		}
		if (f >= 0) {
			cr_assert_eq(ct_relate(u, (unsigned)f, true), WARBLE_OK, "%s",
			    warble_errmsg(ct_w.u[u].sdk));
			nfollow++;
		}
		if (uf >= 0) {
			cr_assert_eq(ct_relate(u, (unsigned)uf, false), WARBLE_OK, "%s",
			    warble_errmsg(ct_w.u[u].sdk));
			nunfollow++;
		}
	}
	for (unsigned u = 0; u < ct_w.nusers; u += 3) {
		uint64_t id = 0;
		for (size_t p = 0; p < ct_w.nposts && id == 0; p++) {
			id = ct_w.posts[p].author == ct_w.u[u].uid ? ct_w.posts[p].id : 0;
		}
		/* another user may not delete it, through either gateway */
		for (unsigned g = 1; g <= 2; g++) {
			unsigned w = (u + g) % ct_w.nusers;
			int      rc = warble_delete(ct_w.u[w].sdk, id);
			cr_assert_eq(rc, WARBLE_EPERM, "%s deletes %s's post %llu: %s",
			    ct_w.u[w].name, ct_w.u[u].name, (unsigned long long)id,
			    warble_errname(rc));
		}
		warble_client *other = ct_other(u);
		int            rc = warble_delete(other, id);
		cr_assert_eq(rc, WARBLE_OK, "%s deletes %llu through gateway %u: %s",
		    ct_w.u[u].name, (unsigned long long)id, (ct_w.u[u].gw + 1) % ct_cl.ngateway,
		    warble_errmsg(other));
		warble_close(other);
		ct_forget_post(id);
		ndelete++;
		rc = warble_delete(ct_w.u[u].sdk, id); /* gone: through either gateway */
		cr_assert_eq(
		    rc, WARBLE_ENOPOST, "a deleted post deleted again: %s", warble_errname(rc));
	}
	for (unsigned u = 0; u < ct_w.nusers; u++) {
		cr_assert_eq(ct_publish(u, NULL), WARBLE_OK);
	}
	ct_check_flows();
	fprintf(stderr,
	    "cluster: %u users through %u gateways: %u follows, %u unfollows, %zu posts, %u "
	    "deletes; every home, timeline, count and list page equal to the model\n",
	    ct_w.nusers, ct_cl.ngateway, nfollow, nunfollow, ct_w.nposts, ndelete);
}

/*
 * ct_misroutes sends, for each sharded service, a request about a uid
 * (or post) of shard s to shard s+1's port: WRONG_SHARD naming s, and,
 * for a write, nothing written.  Needs ct_seed_flows's users and posts.
 */
static inline void
ct_misroutes(void)
{
	unsigned checked = 0;

	for (unsigned u = 0; u < ct_w.nusers; u++) {
		const ct_user *x = &ct_w.u[u];
		unsigned       j = wb_uid_shard(x->uid, ct_cl.nrelation);
		unsigned       k = wb_uid_shard(x->uid, ct_cl.ninbox);
		unsigned       i = wb_uid_shard(x->uid, ct_cl.ncontent);
		unsigned       v = (u + 1) % ct_w.nusers;
		wb_obj        *req, *rep = NULL;
		int            rc;

		/* relation: a follow sent to another shard is refused and not written */
		if (ct_w.follows[u][v] == 0 && ct_cl.nrelation > 1) {
			req = wb_request(WB_OP_REL_FOLLOW);
			wb_set_u64(req, WB_F_UID, x->uid);
			wb_set_u64(req, WB_F_TARGET, ct_w.u[v].uid);
			rc = wbt_call(ct_rel[(j + 1) % ct_cl.nrelation], req, &rep);
			cr_assert_eq(rc, WB_EWRONGSHARD, "rel.follow on the wrong shard: %s",
			    wb_err_name(rc));
			cr_assert_eq(wb_u64(rep, WB_F_SHARD, 99), j,
			    "WRONG_SHARD names relation shard %llu, the follower's is %u",
			    (unsigned long long)wb_u64(rep, WB_F_SHARD, 99), j);
			wb_msg_free(rep);
			req = wb_request(WB_OP_REL_IS_FOLLOWING);
			wb_set_u64(req, WB_F_UID, x->uid);
			wb_set_u64(req, WB_F_TARGET, ct_w.u[v].uid);
			cr_assert_eq(wbt_call(ct_rel[j], req, &rep), WB_OK);
			bool followed = true;
			cr_assert(wb_get_bool(rep, WB_F_FOLLOWED, &followed) && !followed,
			    "the refused follow was written");
			wb_msg_free(rep);
			checked++;
		}
		/* inbox: a home asked of another shard */
		rc = wbt_call(ct_inbox[(k + 1) % ct_cl.ninbox], ct_home_req(x->uid, 0), &rep);
		cr_assert_eq(
		    rc, WB_EWRONGSHARD, "inbox.home on the wrong shard: %s", wb_err_name(rc));
		cr_assert_eq(wb_u64(rep, WB_F_SHARD, 99), k);
		wb_msg_free(rep);
		/* content: a timeline, a post by id, a publish, each on another shard */
		req = wb_request(WB_OP_POST_TIMELINE);
		wb_set_u64(req, WB_F_UID, x->uid);
		rc = wbt_call(ct_content[(i + 1) % ct_cl.ncontent], req, &rep);
		cr_assert_eq(
		    rc, WB_EWRONGSHARD, "post.timeline on the wrong shard: %s", wb_err_name(rc));
		cr_assert_eq(wb_u64(rep, WB_F_SHARD, 99), i);
		wb_msg_free(rep);
		for (size_t p = 0; p < ct_w.nposts; p++) {
			if (ct_w.posts[p].author == x->uid) {
				req = wb_request(WB_OP_POST_GET);
				wb_set_u64s(req, WB_F_IDS, &ct_w.posts[p].id, 1);
				rc = wbt_call(ct_content[(i + 1) % ct_cl.ncontent], req, &rep);
				cr_assert_eq(rc, WB_EWRONGSHARD, "post.get on the wrong shard: %s",
				    wb_err_name(rc));
				cr_assert_eq(wb_u64(rep, WB_F_SHARD, 99), i);
				wb_msg_free(rep);
				break;
			}
		}
		for (size_t p = 0; p < ct_w.nposts; p++) {
			if (ct_w.posts[p].author ==
			    x->uid) { /* not deleted: ct_decide_posts says */
				req = wb_request(WB_OP_POST_DELETE);
				wb_set_u64(req, WB_F_UID, x->uid);
				wb_set_u64(req, WB_F_ID, ct_w.posts[p].id);
				rc = wbt_call(ct_content[(i + 1) % ct_cl.ncontent], req, &rep);
				cr_assert_eq(rc, WB_EWRONGSHARD,
				    "post.delete on the wrong shard: %s", wb_err_name(rc));
				cr_assert_eq(wb_u64(rep, WB_F_SHARD, 99), i);
				wb_msg_free(rep);
				checked++;
				break;
			}
		}
		req = wb_request(WB_OP_POST_PUBLISH);
		wb_set_u64(req, WB_F_UID, x->uid);
		wb_set_cstr(req, WB_F_TEXT, "misrouted");
		rc = wbt_call(ct_content[(i + 1) % ct_cl.ncontent], req, &rep);
		cr_assert_eq(
		    rc, WB_EWRONGSHARD, "post.publish on the wrong shard: %s", wb_err_name(rc));
		cr_assert_eq(wb_u64(rep, WB_F_SHARD, 99), i);
		wb_msg_free(rep);
		checked += 4;
	}
	ct_decide_posts(); /* and no misrouted post was stored (its text is no "p<seq>") */
	fprintf(stderr,
	    "cluster: %u misrouted requests refused with WRONG_SHARD naming the owner\n", checked);
}

/*
 * ct_tls_refusals (WBT_TLS=1 only) calls relation shard 0 from the test,
 * a host of its own, without a certificate: refused, and relation/0's log
 * names the caller's address; then as the gateway identity, an admin
 * operation: FORBIDDEN.
 */
static inline void
ct_tls_refusals(void)
{
	rt_client_opts o = { .timeout_ms = wbt_ms(CT_CALL_MS), .plain = true };
	rt_client     *c = NULL;
	int            rc;

	if (wbt_tls_env() == NULL) {
		return;
	}
	cr_assert_eq(rt_client_open(&c, ct_cl.relation_url[0], &o), WB_OK);
	rc = wbt_call(c, wb_request(WB_OP_PING), NULL);
	cr_assert_eq(rc, WB_EUNAVAIL, "a ping without a certificate: %s", wb_err_name(rc));
	rt_client_close(c);
	long long end = wbt_now_ms() + wbt_ms(5000);
	bool      logged = false;
	while (!logged && wbt_now_ms() < end) {
		char *log = wbt_read_file(wbc_daemon(ct_cl.relation[0])->log);
		logged = log != NULL &&
		         strstr(log, "refused TLS peer 198.1") /* 198.18.0.0/15 */ != NULL;
		free(log);
		wbt_sleep_ms(logged ? 0 : 50);
	}
	cr_assert(logged, "relation/0's log (%s) does not name the refused peer's address",
	    wbc_daemon(ct_cl.relation[0])->log);
	rt_tls *gw = NULL;
	cr_assert_eq(rt_tls_open(&gw, strchr(wbt_tls_env(), '=') + 1, "gateway"), WB_OK);
	o = (rt_client_opts) { .timeout_ms = wbt_ms(CT_CALL_MS), .tls = gw };
	cr_assert_eq(rt_client_open(&c, ct_cl.inbox_url[0], &o), WB_OK);
	rc = wbt_call(c, wb_request(WB_OP_INBOX_REBUILD_STATUS), NULL);
	cr_assert_eq(rc, WB_EPERM, "the gateway asking for an admin op: %s", wb_err_name(rc));
	rt_client_close(c);
	rt_tls_close(gw);
	fprintf(stderr, "cluster: TLS: a peer without a certificate refused and logged, the "
	                "gateway refused an admin op\n");
}

/* ct_admin_get reads path from host's admin port (WBC_ADMIN_PORT): 200 or the test fails. */
static inline char *
ct_admin_get(const wbc_host *h, const char *path)
{
	char  url[WBC_URL_MAX];
	int   st = 0;
	char *body;

	cr_assert_eq(wbc_url(url, sizeof(url), h, "http", WBC_ADMIN_PORT), 0);
	body = ct_http_get(url, path, &st, wbt_ms(5000));
	cr_assert_eq(st, 200, "%s%s: %d", url, path, st);
	return body;
}

/* ct_has_line fails the test unless text holds the line begun by the printf-style want. */
static inline void __attribute__((format(printf, 3, 4)))
ct_has_line(const char *text, const char *from, const char *fmt, ...)
{
	char    want[200];
	va_list ap;

	want[0] = '\n';
	va_start(ap, fmt);
	vsnprintf(want + 1, sizeof(want) - 1, fmt, ap);
	va_end(ap);
	cr_assert_not_null(strstr(text, want), "%s lacks %s", from, want + 1);
}

/*
 * ct_ops_endpoints reads /readyz of every gateway (ready, naming every
 * shard of every service: "content/1": "ok"), each gateway's view of
 * the cluster on its admin port (/metrics/cluster: every shard up and
 * labelled with its shard), and every host's own /metrics (each service
 * it runs under its {service, shard}).
 */
static inline void
ct_ops_endpoints(void)
{
	static const char *const svcs[] = { "user", "relation", "content", "inbox" };

	for (unsigned g = 0; g < ct_cl.ngateway; g++) {
		int   st = 0;
		char *ready = ct_http_get(ct_cl.http_url[g], "/readyz", &st, wbt_ms(5000));
		char *cluster, want[160];

		cr_assert_eq(st, 200, "gateway %u /readyz: %d\n%s", g, st, ready);
		cr_assert_not_null(strstr(ready, "\"ready\":true"), "%s", ready);
		cluster = ct_admin_get(ct_cl.gateway[g], "/metrics/cluster");
		for (int s = 0; s < 4; s++) {
			unsigned n = s == 0   ? 1
			             : s == 1 ? ct_cl.nrelation
			             : s == 2 ? ct_cl.ncontent
			                      : ct_cl.ninbox;
			for (unsigned i = 0; i < n; i++) {
				snprintf(want, sizeof(want), "\"%s/%u\":\"ok\"", svcs[s], i);
				cr_assert_not_null(strstr(ready, want),
				    "gateway %u /readyz lacks %s: %s", g, want, ready);
				ct_has_line(cluster, "/metrics/cluster",
				    "warble_up{service=\"%s\",shard=\"%u\"} 1\n", svcs[s], i);
				ct_has_line(cluster, "/metrics/cluster",
				    "process_cpu_seconds_total{service=\"%s\",shard=\"%u\"} ",
				    svcs[s], i);
			}
			snprintf(want, sizeof(want), "\"%s/%u\"", svcs[s], n);
			cr_assert_null(
			    strstr(ready, want), "/readyz names a shard too many: %s", ready);
		}
		free(ready);
		free(cluster);
	}
	for (int s = 1; s < 4; s++) {
		unsigned n = s == 1 ? ct_cl.nrelation : s == 2 ? ct_cl.ncontent : ct_cl.ninbox;
		for (unsigned i = 0; i < n; i++) {
			const wbc_host *h = s == 1   ? ct_cl.relation[i]
			                    : s == 2 ? ct_cl.content[i]
			                             : ct_cl.inbox[i];
			char           *m = ct_admin_get(h, "/metrics");
			ct_has_line(m, wbc_host_name(h),
			    "process_cpu_seconds_total{service=\"%s\",shard=\"%u\"} ", svcs[s], i);
			if (s == 3) {
				ct_has_line(m, wbc_host_name(h),
				    "warble_inbox_events_behind{service=\"inbox\",shard=\"%u\"} ",
				    i);
			}
			free(m);
		}
	}
	fprintf(stderr,
	    "cluster: /readyz and /metrics/cluster of %u gateways, and every shard's own "
	    "/metrics, name every shard\n",
	    ct_cl.ngateway);
}

/*
 * ct_fans_on asks relation shard j for celeb's fans in slots [lo, hi), page by page; adds them to
 * *n in out.
 */
static inline void
ct_fans_on(
    unsigned j, uint64_t celeb, unsigned lo, unsigned hi, uint64_t *out, size_t *n, size_t cap)
{
	uint64_t after = 0, slots[2] = { lo, hi };

	for (int pages = 0; pages < 1000; pages++) {
		wb_obj         *req = wb_request(WB_OP_REL_FANS), *rep = NULL;
		const uint64_t *uids;
		size_t          nu = 0;

		wb_set_u64(req, WB_F_UID, celeb);
		wb_set_u64s(req, WB_F_SLOTS, slots, 2);
		wb_set_u64(req, WB_F_LIMIT, 1000);
		if (after != 0) {
			wb_set_u64(req, WB_F_AFTER, after);
		}
		cr_assert_eq(wbt_call_retry(ct_rel[j], req, &rep), WB_OK);
		(void)wb_get_u64s(rep, WB_F_UIDS, &uids, &nu);
		cr_assert_leq(*n + nu, cap);
		memcpy(out + *n, uids, nu * sizeof(*uids));
		*n += nu;
		after = wb_u64(rep, WB_F_NEXT, 0);
		wb_msg_free(rep);
		if (after == 0) {
			return;
		}
	}
	cr_assert_fail("rel.fans never ended");
}

/* One reader of a big account's check: which fans to read, and what each must hold. */
typedef struct ct_fan_check {
	const uint64_t *uids;
	size_t          from, to;
	const ct_post  *want;
	size_t          nwant;
	rt_client      *inbox[WBC_SHARDS_MAX];
	unsigned long   bad;
} ct_fan_check;

/* ct_fan_check_main reads the inboxes of uids[from, to) on their shards, on a thread of its own. */
static inline void *
ct_fan_check_main(void *arg)
{
	ct_fan_check *f = arg;

	for (size_t i = f->from; i < f->to; i++) {
		unsigned k = wb_uid_shard(f->uids[i], ct_cl.ninbox);
		f->bad += !ct_check_home(f->inbox[k], "fan", f->uids[i], f->want, f->nwant);
	}
	return NULL;
}

/* ct_check_fans reads the inboxes of uids[0..n) on their shards, on 4 threads: each holds want. */
static inline void
ct_check_fans(const char *who, const uint64_t *uids, size_t n, const ct_post *want, size_t nwant)
{
	enum { NT = 4 };
	rt_client_opts o = { .timeout_ms = wbt_ms(CT_CALL_MS) };
	ct_fan_check   f[NT];
	pthread_t      th[NT];
	unsigned long  bad = 0;

	for (int t = 0; t < NT; t++) {
		f[t] =
		    (ct_fan_check) { uids, n * t / NT, n * (t + 1) / NT, want, nwant, { NULL }, 0 };
		for (unsigned k = 0; k < ct_cl.ninbox; k++) {
			cr_assert_eq(rt_client_open(&f[t].inbox[k], ct_cl.inbox_url[k], &o), WB_OK);
		}
		cr_assert_eq(pthread_create(&th[t], NULL, ct_fan_check_main, &f[t]), 0);
	}
	for (int t = 0; t < NT; t++) {
		pthread_join(th[t], NULL);
		bad += f[t].bad;
		for (unsigned k = 0; k < ct_cl.ninbox; k++) {
			rt_client_close(f[t].inbox[k]);
		}
	}
	cr_assert_eq(bad, 0, "%lu %s inboxes differ from the model", bad, who);
}

/*
 * ct_big_account makes an account with CT_FANS fans on every inbox shard
 * (user.register_many, and rel.follow_many on each follower's relation
 * shard: a call mixing shards is refused whole), checks its counts and
 * fans through both gateways and each relation shard's part of each
 * inbox's slots, then posts CT_CELEB_POST times through both gateways:
 * each inbox shard writes exactly its fans' cells, and every fan's inbox,
 * read on its shard, holds exactly the posts; others hold none.  A post
 * deleted through the other gateway then leaves every fan's inbox.
 */
static inline void
ct_big_account(void)
{
	const size_t nfans = CT_FANS;
	uint64_t    *fans = calloc(nfans, sizeof(*fans)), *got = calloc(nfans, sizeof(*got));
	uint64_t     others[CT_OTHERS], base[WBC_SHARDS_MAX], count = 0, celeb;
	unsigned     per_inbox[WBC_SHARDS_MAX] = { 0 };
	ct_post      posts[CT_CELEB_POST];
	wb_obj      *req, *rep = NULL;
	int          rc;

	cr_assert(fans != NULL && got != NULL);
	ct_w.nusers = ct_w.nauthors = 1;
	snprintf(ct_w.u[0].name, sizeof(ct_w.u[0].name), "celebrity");
	ct_w.u[0].sdk = ct_join(0, "celebrity", &ct_w.u[0].uid);
	celeb = ct_w.u[0].uid;
	ct_register_many("fan", nfans, fans);
	ct_register_many("other", CT_OTHERS, others);
	for (size_t i = 0; i < nfans; i++) {
		per_inbox[wb_uid_shard(fans[i], ct_cl.ninbox)]++;
	}
	for (unsigned k = 0; k < ct_cl.ninbox; k++) {
		cr_assert_gt(
		    per_inbox[k], nfans / 10, "only %u fans on inbox shard %u", per_inbox[k], k);
	}

	/* a rel.follow_many holding followers of two shards is refused whole */
	if (ct_cl.nrelation > 1) {
		uint64_t mixed[2] = { 0, 0 };
		for (size_t i = 0; i < nfans && (mixed[0] == 0 || mixed[1] == 0); i++) {
			mixed[wb_uid_shard(fans[i], ct_cl.nrelation) == 0 ? 0 : 1] = fans[i];
		}
		req = wb_request(WB_OP_REL_FOLLOW_MANY);
		wb_set_u64(req, WB_F_TARGET, celeb);
		wb_set_u64s(req, WB_F_UIDS, mixed, 2);
		rc = wbt_call(ct_rel[0], req, &rep);
		cr_assert_eq(rc, WB_EWRONGSHARD, "a mixed rel.follow_many: %s", wb_err_name(rc));
		cr_assert_eq(wb_u64(rep, WB_F_SHARD, 99), wb_uid_shard(mixed[1], ct_cl.nrelation));
		wb_msg_free(rep);
	}
	/* the bulk operations are the shards' own: a gateway does not route them */
	for (unsigned g = 0; g < ct_cl.ngateway; g++) {
		rt_client_opts o = { .timeout_ms = wbt_ms(CT_CALL_MS), .plain = true };
		rt_client     *gw = NULL;
		cr_assert_eq(rt_client_open(&gw, ct_cl.gateway_url[g], &o), WB_OK);
		req = wb_request(WB_OP_REL_FOLLOW_MANY);
		wb_set_u64(req, WB_F_TARGET, celeb);
		wb_set_u64s(req, WB_F_UIDS, fans, 1);
		cr_assert_eq(rc = wbt_call(gw, req, NULL), WB_EBADOP,
		    "gateway %u: rel.follow_many: %s", g, wb_err_name(rc));
		req = wb_request(WB_OP_USER_REGISTER_MANY);
		wb_set_cstr(req, WB_F_NAME, "sneaky");
		wb_set_cstr(req, WB_F_PASSWORD, CT_PASSWORD);
		wb_set_u64(req, WB_F_FROM, 0);
		wb_set_u64(req, WB_F_LIMIT, 1);
		cr_assert_eq(rc = wbt_call(gw, req, NULL), WB_EBADOP,
		    "gateway %u: user.register_many: %s", g, wb_err_name(rc));
		rt_client_close(gw);
	}
	long long t0 = wbt_now_ms();
	ct_follow_many(celeb, fans, nfans);
	long long follow_ms = wbt_now_ms() - t0;

	/* counts: each relation shard's part, and through each gateway */
	for (unsigned j = 0; j < ct_cl.nrelation; j++) {
		const wb_obj *users;
		size_t        n = 0;
		req = wb_request(WB_OP_REL_COUNTS);
		wb_set_u64s(req, WB_F_UIDS, &celeb, 1);
		cr_assert_eq(wbt_call_retry(ct_rel[j], req, &rep), WB_OK);
		cr_assert(wb_get_objs(rep, WB_F_USERS, &users, &n) && n == 1);
		count += wb_u64(&users[0], WB_F_FOLLOWERS, 0);
		wb_msg_free(rep);
	}
	cr_assert_eq(count, nfans, "%llu followers over the shards, want %zu",
	    (unsigned long long)count, nfans);
	for (unsigned g = 0; g < ct_cl.ngateway; g++) {
		warble_client *c = ct_sdk(g);
		warble_user_t *p = NULL;
		cr_assert_eq(warble_profile(c, "celebrity", &p), WARBLE_OK, "%s", warble_errmsg(c));
		cr_assert_eq(p->followers, nfans, "gateway %u counts %llu followers", g,
		    (unsigned long long)p->followers);
		warble_user_free(p);
		warble_close(c);
	}

	/* rel.fans of each inbox's slot range, asked of every relation shard: exactly its fans */
	for (unsigned k = 0; k < ct_cl.ninbox; k++) {
		unsigned lo, hi;
		size_t   n = 0, want = 0;
		wb_shard_slots((wb_shard) { k, ct_cl.ninbox }, &lo, &hi);
		for (unsigned j = 0; j < ct_cl.nrelation; j++) {
			ct_fans_on(j, celeb, lo, hi, got, &n, nfans);
		}
		qsort(got, n, sizeof(got[0]), ct_cmp_u64);
		for (size_t i = 0; i < nfans; i++) {
			if (wb_uid_shard(fans[i], ct_cl.ninbox) == k) {
				want++;
				cr_assert_not_null(
				    bsearch(&fans[i], got, n, sizeof(got[0]), ct_cmp_u64),
				    "fan %llu missing from rel.fans of inbox %u's slots",
				    (unsigned long long)fans[i], k);
			}
		}
		cr_assert_eq(
		    n, want, "rel.fans of inbox %u's slots: %zu fans, want %zu", k, n, want);
	}
	/* the fans list through the last gateway, all its pages, in (slot, uid) order */
	memcpy(got, fans, nfans * sizeof(*got));
	qsort(got, nfans, sizeof(got[0]), ct_cmp_fan);
	warble_client *last = ct_sdk(ct_cl.ngateway - 1);
	ct_check_sdk_list(last, "celebrity", true, 100, got, nfans);

	/* follows applied first, so that every cell below is the posts' fan-out */
	ct_wait_caught_up(wbt_ms(CT_CAUGHT_UP_MS));
	for (unsigned k = 0; k < ct_cl.ninbox; k++) {
		base[k] = wbt_stat(ct_inbox[k], "cells_written");
		cr_assert_neq(base[k], UINT64_MAX);
	}
	cr_assert_eq(warble_set_token(last, warble_token(ct_w.u[0].sdk)), WARBLE_OK);
	for (unsigned p = 0; p < CT_CELEB_POST; p++) { /* through each gateway in turn */
		cr_assert_eq(ct_publish(0, p % 2 == 0 ? ct_w.u[0].sdk : last), WARBLE_OK);
	}
	warble_close(last);
	long long ms = ct_wait_caught_up(wbt_ms(CT_CAUGHT_UP_MS));
	uint64_t  cells = 0;
	unsigned  own =
	    wb_uid_shard(celeb, ct_cl.ninbox); /* the celebrity's own home: a cell more */
	for (unsigned k = 0; k < ct_cl.ninbox; k++) {
		uint64_t d = wbt_stat(ct_inbox[k], "cells_written") - base[k];
		cr_assert_eq(d, (uint64_t)(per_inbox[k] + (k == own)) * CT_CELEB_POST,
		    "inbox %u wrote %llu cells for %u fans%s and %d posts", k,
		    (unsigned long long)d, per_inbox[k], k == own ? " and the author" : "",
		    CT_CELEB_POST);
		cells += d;
	}
	cr_assert_eq(cells, (uint64_t)(nfans + 1) * CT_CELEB_POST);
	cr_assert_eq(ct_decide_posts(), 0);
	memcpy(posts, ct_w.truth, sizeof(posts));
	qsort(posts, CT_CELEB_POST, sizeof(posts[0]), ct_cmp_desc);
	long long r0 = wbt_now_ms();
	ct_check_fans("fan", fans, nfans, posts, CT_CELEB_POST);
	ct_check_fans("non-fan", others, CT_OTHERS, posts, 0);
	ct_check_home(NULL, "the celebrity", celeb, posts, CT_CELEB_POST); /* its own posts */
	cr_assert_eq(atomic_load(&ct_nfail), 0, "homes differ from the model");
	long long read_ms = wbt_now_ms() - r0;

	/* one post deleted through the other gateway: out of every fan's inbox, on every shard */
	for (unsigned k = 0; k < ct_cl.ninbox; k++) {
		base[k] = wbt_stat(ct_inbox[k], "cells_deleted");
	}
	warble_client *other = ct_sdk(1 % ct_cl.ngateway);
	cr_assert_eq(warble_set_token(other, warble_token(ct_w.u[0].sdk)), WARBLE_OK);
	cr_assert_eq(warble_delete(other, posts[1].id), WARBLE_OK, "%s", warble_errmsg(other));
	warble_close(other);
	ct_forget_post(posts[1].id);
	memmove(&posts[1], &posts[2], (CT_CELEB_POST - 2) * sizeof(posts[0]));
	ct_wait_caught_up(wbt_ms(CT_CAUGHT_UP_MS));
	for (unsigned k = 0; k < ct_cl.ninbox; k++) {
		uint64_t d = wbt_stat(ct_inbox[k], "cells_deleted") - base[k];
		cr_assert_eq(d, per_inbox[k] + (k == own),
		    "inbox %u deleted %llu cells for %u fans", k, (unsigned long long)d,
		    per_inbox[k]);
	}
	cr_assert_eq(ct_decide_posts(), 0);
	ct_check_fans("fan", fans, nfans, posts, CT_CELEB_POST - 1);
	fprintf(stderr,
	    "cluster: %zu fans (%u, %u, %u per inbox shard) followed in %lld ms; %d posts "
	    "through %u gateways fanned out in %lld ms, %llu cells; %zu inboxes read on their "
	    "shards in %lld ms; one post deleted from every fan's\n",
	    nfans, per_inbox[0], per_inbox[1], per_inbox[2], follow_ms, CT_CELEB_POST,
	    ct_cl.ngateway, ms, (unsigned long long)cells, nfans + CT_OTHERS, read_ms);
	free(fans);
	free(got);
}

#endif
