/*
 * rebuild_test.c - `warblectl admin rebuild-inbox` reproduces the live
 * inboxes cell for cell on a cluster set up through the bulk paths the
 * load generator uses (user.register_many, rel.follow_many, post.publish
 * straight to content), where no author passes the backfill depth and no
 * reader the inbox cap.  Each reader's own posts are in their inbox, as
 * the live fan-out writes them: also those of authors nobody follows.
 *
 * The size is WARBLE_TEST_REBUILD_FOLLOWS follows (default 10000, so CI
 * stays quick) among follows/10 users with follows/10 posts, half of
 * them published before the follows (they arrive by backfill) and half
 * after (by fan-out).  It prints the rebuild's time and the inbox's peak
 * RSS during it (VmHWM, reset just before through clear_refs when the
 * kernel allows), e.g. for the full size:
 *
 *   WARBLE_TEST_REBUILD_FOLLOWS=100000 build/test/rebuild_test
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt_client.h"
#include "wbt_cluster.h"

#define RB_FANS   10 /* followers of each user, and followees of each */
#define RB_LONERS 5  /* users more who post and follow nobody, and nobody them */

extern char **environ;

static wbt_cluster cl;
static rt_client  *rb_user, *rb_rel, *rb_content, *rb_inbox;

/* rb_publish publishes n posts, author i % nusers for i in [from, from + n). */
static void
rb_publish(const uint64_t *uids, size_t nusers, size_t from, size_t n)
{
	for (size_t i = from; i < from + n; i++) {
		wb_obj *req = wb_request(WB_OP_POST_PUBLISH);
		char    text[32];

		snprintf(text, sizeof(text), "post %zu", i);
		wb_set_u64(req, WB_F_UID, uids[i % nusers]);
		wb_set_cstr(req, WB_F_TEXT, text);
		cr_assert_eq(wbt_call(rb_content, req, NULL), WB_OK, "post.publish %zu", i);
	}
}

/* rb_gauge reads a named gauge of the inbox (UINT64_MAX if absent). */
static uint64_t
rb_gauge(const char *name)
{
	wb_obj  *rep = NULL;
	uint64_t v;

	cr_assert_eq(wbt_call(rb_inbox, wb_request(WB_OP_STATS), &rep), WB_OK);
	v = wbt_gauge(rep, name);
	wb_msg_free(rep);
	return v;
}

/* rb_last reads the last seq of a log (post.log on content, rel.log on relation). */
static uint64_t
rb_last(rt_client *c, wb_op op)
{
	wb_obj *req = wb_request(op), *rep = NULL;

	wb_set_u64(req, WB_F_FROM, UINT64_MAX);
	cr_assert_eq(wbt_call(c, req, &rep), WB_OK);
	uint64_t last = wb_u64(rep, WB_F_LAST, 0);
	wb_msg_free(rep);
	return last;
}

/* rb_wait_inbox waits until the inbox applied every event of both logs. */
static void
rb_wait_inbox(int timeout_ms)
{
	uint64_t  c = rb_last(rb_content, WB_OP_POST_LOG), r = rb_last(rb_rel, WB_OP_REL_LOG);
	long long deadline = wbt_now_ms() + wbt_ms(timeout_ms);

	while (rb_gauge("content_applied") < c || rb_gauge("relation_applied") < r) {
		cr_assert_lt(wbt_now_ms(), deadline, "the inbox never caught up");
		wbt_sleep_ms(50);
	}
}

/* Every inbox as read: cells of reader i are cells[off[i] .. off[i + 1]). */
typedef struct rb_snap {
	uint64_t *ids, *authors;
	size_t   *off, n, cap;
} rb_snap;

/* rb_snapshot reads every reader's whole inbox. */
static void
rb_snapshot(rb_snap *s, const uint64_t *uids, size_t nusers)
{
	memset(s, 0, sizeof(*s));
	s->off = calloc(nusers + 1, sizeof(*s->off));
	cr_assert_not_null(s->off);
	for (size_t u = 0; u < nusers; u++) {
		uint64_t before = 0;
		s->off[u] = s->n;
		for (bool more = true; more;) {
			wb_obj       *req = wb_request(WB_OP_INBOX_HOME), *rep = NULL;
			const wb_obj *posts = NULL;
			size_t        k = 0;

			wb_set_u64(req, WB_F_UID, uids[u]);
			wb_set_u64(req, WB_F_LIMIT, 100);
			if (before != 0) {
				wb_set_u64(req, WB_F_BEFORE, before);
			}
			cr_assert_eq(wbt_call(rb_inbox, req, &rep), WB_OK);
			(void)wb_get_objs(rep, WB_F_POSTS, &posts, &k);
			if (s->n + k > s->cap) {
				s->cap = (s->n + k) * 2;
				s->ids = realloc(s->ids, s->cap * sizeof(*s->ids));
				s->authors = realloc(s->authors, s->cap * sizeof(*s->authors));
				cr_assert(s->ids != NULL && s->authors != NULL);
			}
			for (size_t i = 0; i < k; i++) {
				s->ids[s->n] = wb_u64(&posts[i], WB_F_ID, 0);
				s->authors[s->n++] = wb_u64(&posts[i], WB_F_AUTHOR, 0);
			}
			more = k > 0 && wb_get_u64(rep, WB_F_NEXT, &before) && before != 0;
			wb_msg_free(rep);
		}
	}
	s->off[nusers] = s->n;
}

static void
rb_snap_free(rb_snap *s)
{
	free(s->ids);
	free(s->authors);
	free(s->off);
}

/* rb_proc_kb reads a "Name:  N kB" line of /proc/pid/status (0 if absent). */
static unsigned long
rb_proc_kb(pid_t pid, const char *name)
{
	char          path[64], line[256];
	unsigned long kb = 0;
	FILE         *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL) {
		return 0;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, name, strlen(name)) == 0 && line[strlen(name)] == ':') {
			kb = strtoul(line + strlen(name) + 1, NULL, 10);
		}
	}
	fclose(f);
	return kb;
}

/* rb_hwm_reset resets the peak RSS of pid (Linux clear_refs 5); false if not allowed. */
static bool
rb_hwm_reset(pid_t pid)
{
	char path[64];
	int  fd;

	snprintf(path, sizeof(path), "/proc/%d/clear_refs", (int)pid);
	if ((fd = open(path, O_WRONLY)) < 0) {
		return false;
	}
	bool ok = write(fd, "5", 1) == 1;
	close(fd);
	return ok;
}

/* rb_rebuild runs `warblectl admin rebuild-inbox` and returns its exit status. */
static int
rb_rebuild(void)
{
	char  bin[512];
	char *argv[] = { bin, "admin", "rebuild-inbox", "--inbox-url", cl.inbox_url, NULL };
	pid_t pid;
	int   st = 0;

	cr_assert_eq(wbt_bin_path(bin, sizeof(bin), "warblectl"), 0);
	cr_assert_eq(posix_spawn(&pid, bin, NULL, NULL, argv, environ), 0);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

Test(rebuild, reproduces_live_inboxes, .fini = wbt_cleanup, .timeout = 1800)
{
	const char *env = getenv("WARBLE_TEST_REBUILD_FOLLOWS");
	size_t      follows = env != NULL ? strtoul(env, NULL, 10) : 10000;
	size_t      nusers = follows / RB_FANS, nposts = follows / RB_FANS;
	uint64_t   *uids = calloc(nusers + RB_LONERS, sizeof(*uids)), fans[RB_FANS];
	rb_snap     live, rebuilt;
	wb_obj     *req, *rep = NULL;
	const char *extra[] = { "WARBLE_LOG_LEVEL=info", NULL };

	cr_assert(nusers >= 100 && nusers <= 10000 * 100, "follows 1000 .. 10000000");
	cr_assert_not_null(uids);
	cr_assert_eq(wbt_cluster_start(&cl, extra), 0);
	cr_assert_eq(rt_client_open(&rb_user, cl.user_url, NULL), 0);
	cr_assert_eq(rt_client_open(&rb_rel, cl.relation_url, NULL), 0);
	cr_assert_eq(rt_client_open(&rb_content, cl.content_url, NULL), 0);
	cr_assert_eq(rt_client_open(&rb_inbox, cl.inbox_url, NULL), 0);

	long long t0 = wbt_now_ms();
	for (size_t from = 0; from < nusers; from += 10000) {
		size_t          n = nusers - from < 10000 ? nusers - from : 10000;
		const uint64_t *v = NULL;
		size_t          nv = 0;

		req = wb_request(WB_OP_USER_REGISTER_MANY);
		wb_set_cstr(req, WB_F_NAME, "rb");
		wb_set_u64(req, WB_F_FROM, from);
		wb_set_u64(req, WB_F_LIMIT, n);
		wb_set_cstr(req, WB_F_PASSWORD, "rebuild-password");
		cr_assert_eq(wbt_call(rb_user, req, &rep), WB_OK);
		cr_assert(wb_get_u64s(rep, WB_F_UIDS, &v, &nv) && nv == n);
		memcpy(uids + from, v, n * sizeof(*v));
		wb_msg_free(rep);
	}
	rb_publish(uids, nusers, 0, nposts / 2); /* these arrive by backfill */
	for (size_t t = 0; t < nusers; t++) {    /* the fans of t: t + 1 + 7k, k < RB_FANS */
		for (size_t k = 0; k < RB_FANS; k++) {
			fans[k] = uids[(t + 1 + 7 * k) % nusers];
		}
		req = wb_request(WB_OP_REL_FOLLOW_MANY);
		wb_set_u64(req, WB_F_TARGET, uids[t]);
		wb_set_u64s(req, WB_F_UIDS, fans, RB_FANS);
		cr_assert_eq(wbt_call(rb_rel, req, NULL), WB_OK, "rel.follow_many %zu", t);
	}
	rb_publish(uids, nusers, nposts / 2, nposts - nposts / 2); /* these by fan-out */
	req = wb_request(WB_OP_USER_REGISTER_MANY);
	wb_set_cstr(req, WB_F_NAME, "rbloner");
	wb_set_u64(req, WB_F_FROM, 0);
	wb_set_u64(req, WB_F_LIMIT, RB_LONERS);
	wb_set_cstr(req, WB_F_PASSWORD, "rebuild-password");
	cr_assert_eq(wbt_call(rb_user, req, &rep), WB_OK);
	{
		const uint64_t *v = NULL;
		size_t          nv = 0;
		cr_assert(wb_get_u64s(rep, WB_F_UIDS, &v, &nv) && nv == RB_LONERS);
		memcpy(uids + nusers, v, RB_LONERS * sizeof(*v));
	}
	wb_msg_free(rep);
	rb_publish(
	    uids + nusers, RB_LONERS, 0, 2 * RB_LONERS); /* two each, read by their authors */
	rb_wait_inbox(600000);
	long long t_setup = wbt_now_ms() - t0;

	rb_snapshot(&live, uids, nusers + RB_LONERS);
	cr_assert_eq(live.n, nposts * (RB_FANS + 1) + 2 * RB_LONERS,
	    "every post reached its author's %d fans and its author", RB_FANS);
	unsigned long rss0 = rb_proc_kb(cl.inbox->pid, "VmRSS");
	bool          reset = rb_hwm_reset(cl.inbox->pid);
	long long     t1 = wbt_now_ms();
	cr_assert_eq(rb_rebuild(), 0, "warblectl admin rebuild-inbox");
	long long     t_rebuild = wbt_now_ms() - t1;
	unsigned long hwm = rb_proc_kb(cl.inbox->pid, "VmHWM");

	req = wb_request(WB_OP_INBOX_REBUILD_STATUS);
	cr_assert_eq(wbt_call(rb_inbox, req, &rep), WB_OK);
	cr_assert_str_eq(wb_str(rep, WB_F_STATE, ""), "done");
	cr_assert_eq(wb_u64(rep, WB_F_DONE, 0), follows, "every follow counted");
	uint64_t elapsed = wb_u64(rep, WB_F_ELAPSED, 0);
	wb_msg_free(rep);

	rb_snapshot(&rebuilt, uids, nusers + RB_LONERS);
	cr_assert_eq(rebuilt.n, live.n, "cells: rebuilt %zu, live %zu", rebuilt.n, live.n);
	for (size_t u = 0; u <= nusers + RB_LONERS; u++) {
		cr_assert_eq(rebuilt.off[u], live.off[u], "reader %zu's inbox size", u);
	}
	for (size_t i = 0; i < live.n; i++) {
		cr_assert_eq(rebuilt.ids[i], live.ids[i], "cell %zu: post", i);
		cr_assert_eq(rebuilt.authors[i], live.authors[i], "cell %zu: author", i);
	}
	fprintf(stderr,
	    "rebuild: %zu users, %zu follows, %zu posts, %zu inbox cells equal cell for cell; "
	    "setup %lld ms; rebuild %llu ms in the inbox (%lld ms with warblectl); inbox RSS "
	    "before %lu kB, peak during the rebuild %lu kB%s\n",
	    nusers, follows, nposts, live.n, t_setup, (unsigned long long)elapsed, t_rebuild, rss0,
	    hwm, reset ? "" : " (peak since start: clear_refs refused)");

	/* events after the rebuild still apply */
	rb_publish(uids, nusers, nposts, 1);
	rb_wait_inbox(60000);
	rb_snap_free(&live);
	rb_snap_free(&rebuilt);
	rt_client_close(rb_user);
	rt_client_close(rb_rel);
	rt_client_close(rb_content);
	rt_client_close(rb_inbox);
	free(uids);
	cr_assert_eq(wbt_cluster_stop(&cl, wbt_ms(10000)), 0);
}
