/*
 * backup_test.c - backup, restore and inbox rebuild on real clusters,
 * driven through warblectl (spawned with argument vectors):
 *
 *   under_load      users publish, follow and unfollow through the SDK while
 *                   `warblectl admin backup` runs; the backup is restored
 *                   into a fresh folder and a new cluster started on it:
 *                   every post and follow acknowledged before the backup
 *                   began is there, the counts agree with the logs, every
 *                   inbox equals the one recomputed from relation and
 *                   content, before and after `admin rebuild-inbox`;
 *   unsafe_order    a backup that takes the inbox last under load is
 *                   refused, and so is its restore; an inbox restored
 *                   ahead of its sources heals itself (a rebuild) and
 *                   then takes new posts that reuse the old seqs;
 *   diverged_source an inbox from another history, whose applied seq a
 *                   restored source has passed again with other events,
 *                   notices (the event at that seq has another mark) and
 *                   rebuilds;
 *   usage           warblectl's and admin.backup's errors.
 *
 * The rebuild at size (follows and posts from the bulk setup paths) is
 * rebuild_test.c.
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "it.h"
#include "wbt_png.h"

#define BK_USERS   16
#define BK_THREADS 4
#define BK_MAXOPS  20000
#define BK_OUT_MAX 65536
#define BK_HOME    4096 /* most inbox entries read per user */
#define BK_POSTS   600  /* posts in all: every inbox stays under the cap (800) */
#define BK_PAUSE   4    /* ms between a worker's writes (a steady load, not a flood) */

/* One acknowledged write: a post (target 0) or a follow/unfollow of target. */
typedef struct bk_op {
	uint64_t  uid, target, id;
	bool      follow;
	long long ack_ms;
} bk_op;

/* a backfill deeper than any author's posts: a follow copies them all */
static const char *const bk_env[] = { "WARBLE_BACKFILL=1000", NULL };

static char            bk_names[BK_USERS][16], *bk_tokens[BK_USERS];
static uint64_t        bk_uid[BK_USERS];
static bk_op           bk_ops[BK_MAXOPS];
static size_t          bk_nops;
static pthread_mutex_t bk_mu = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool     bk_stop;
static atomic_ulong    bk_errors;
static atomic_ulong    bk_posts;

/* bk_record notes an acknowledged write. */
static void
bk_record(bk_op op)
{
	pthread_mutex_lock(&bk_mu);
	if (bk_nops < BK_MAXOPS) {
		op.ack_ms = wbt_now_ms();
		bk_ops[bk_nops++] = op;
	}
	pthread_mutex_unlock(&bk_mu);
}

/* bk_worker publishes, follows and unfollows as its users until bk_stop. */
static void *
bk_worker(void *arg)
{
	int            t = (int)(intptr_t)arg;
	uint64_t       seed = 77 + (uint64_t)t;
	warble_client *c[BK_USERS / BK_THREADS];

	for (int k = 0; k < BK_USERS / BK_THREADS; k++) {
		if (warble_open(&c[k], it_cl.gateway_url, wbt_ms(IT_TIMEOUT_MS)) != WARBLE_OK ||
		    warble_set_token(c[k], bk_tokens[t + k * BK_THREADS]) != WARBLE_OK) {
			it_fail("worker %d: no client", t);
			return NULL;
		}
	}
	for (unsigned n = 0; !atomic_load(&bk_stop); n++) {
		int k = (int)(it_rand(&seed) % (BK_USERS / BK_THREADS)), u = t + k * BK_THREADS;
		uint64_t id = 0;
		char     text[64];

		wbt_sleep_ms(BK_PAUSE);
		if (n % 4 != 3 && atomic_fetch_add(&bk_posts, 1) < BK_POSTS) {
			snprintf(text, sizeof(text), "post %u of %s", n, bk_names[u]);
			if (warble_post(c[k], text, &id) == WARBLE_OK) {
				bk_record((bk_op) { .uid = bk_uid[u], .id = id });
			} else {
				it_fail("%s post: %s", bk_names[u], warble_errmsg(c[k]));
				atomic_fetch_add(&bk_errors, 1);
			}
			continue;
		}
		int  v = (int)(it_rand(&seed) % BK_USERS);
		bool follow = it_rand(&seed) % 3 != 0;
		if (v == u) {
			continue;
		}
		int rc =
		    follow ? warble_follow(c[k], bk_names[v]) : warble_unfollow(c[k], bk_names[v]);
		if (rc == WARBLE_OK) {
			bk_record(
			    (bk_op) { .uid = bk_uid[u], .target = bk_uid[v], .follow = follow });
		} else {
			it_fail("%s %s %s: %s", bk_names[u], follow ? "follow" : "unfollow",
			    bk_names[v], warble_errmsg(c[k]));
			atomic_fetch_add(&bk_errors, 1);
		}
	}
	for (int k = 0; k < BK_USERS / BK_THREADS; k++) {
		warble_close(c[k]);
	}
	return NULL;
}

/* bk_load_start starts the load threads. */
static void
bk_load_start(pthread_t *th)
{
	atomic_store(&bk_stop, false);
	for (int t = 0; t < BK_THREADS; t++) {
		cr_assert_eq(pthread_create(&th[t], NULL, bk_worker, (void *)(intptr_t)t), 0);
	}
}

/* bk_load_stop stops the load threads and waits for them. */
static void
bk_load_stop(pthread_t *th)
{
	atomic_store(&bk_stop, true);
	for (int t = 0; t < BK_THREADS; t++) {
		pthread_join(th[t], NULL);
	}
}

/* bk_nops_now returns how many writes were acknowledged so far. */
static size_t
bk_nops_now(void)
{
	pthread_mutex_lock(&bk_mu);
	size_t n = bk_nops;
	pthread_mutex_unlock(&bk_mu);
	return n;
}

/* bk_users registers and logs in the users, each following the next three. */
static void
bk_users(void)
{
	warble_client *c = it_client();

	for (int i = 0; i < BK_USERS; i++) {
		snprintf(bk_names[i], sizeof(bk_names[i]), "bk%02d", i);
		bk_tokens[i] = it_join(c, bk_names[i], "backup-password", &bk_uid[i]);
		cr_assert_not_null(bk_tokens[i]);
	}
	for (int i = 0; i < BK_USERS; i++) {
		cr_assert_eq(warble_set_token(c, bk_tokens[i]), WARBLE_OK);
		for (int k = 1; k <= 3; k++) {
			const char *v = bk_names[(i + k) % BK_USERS];
			cr_assert_eq(warble_follow(c, v), WARBLE_OK, "%s", warble_errmsg(c));
			bk_record((bk_op) { .uid = bk_uid[i],
			    .target = bk_uid[(i + k) % BK_USERS],
			    .follow = true });
		}
	}
	warble_close(c);
}

/*
 * bk_ctl runs warblectl with args (NULL-terminated); its stdout and stderr
 * go into out (BK_OUT_MAX); returns its exit status.
 */
static int
bk_ctl(char *out, const char *const *args)
{
	int rc = wbt_run_capture(out, BK_OUT_MAX, "warblectl", args, NULL);

	cr_assert_geq(rc, 0, "warblectl did not run");
	return rc;
}

/* bk_admin runs `warblectl admin CMD ARG...` against it_cl's service ports. */
static int
bk_admin(char *out, const char *cmd, const char *a1, const char *a2, const char *flag)
{
	const char *args[20];
	int         n = 0;

	args[n++] = "admin";
	args[n++] = cmd;
	if (a1 != NULL) {
		args[n++] = a1;
	}
	if (a2 != NULL) {
		args[n++] = a2;
	}
	if (flag != NULL) {
		args[n++] = flag;
	}
	if (strcmp(cmd, "restore") == 0) { /* local files only */
		args[n] = NULL;
		return bk_ctl(out, args);
	}
	args[n++] = "--user-url";
	args[n++] = it_cl.user_url;
	args[n++] = "--relation-url";
	args[n++] = it_cl.relation_url;
	args[n++] = "--content-url";
	args[n++] = it_cl.content_url;
	args[n++] = "--inbox-url";
	args[n++] = it_cl.inbox_url;
	args[n] = NULL;
	return bk_ctl(out, args);
}

/* bk_list reads a whole id list page by page: a user's posts (post.timeline) or inbox (inbox.home), newest first. */
static long
bk_list(const char *url, wb_op op, uint64_t uid, uint64_t *ids, uint64_t *authors, size_t cap)
{
	uint64_t before = 0;
	size_t   n = 0;

	for (;;) {
		wb_obj       *req = wb_request(op), *rep = NULL;
		const wb_obj *posts = NULL;
		size_t        k = 0;

		wb_set_u64(req, WB_F_UID, uid);
		wb_set_u64(req, WB_F_LIMIT, 100);
		if (before != 0) {
			wb_set_u64(req, WB_F_BEFORE, before);
		}
		int rc = it_call(url, req, &rep);
		cr_assert_eq(rc, WB_OK, "%s %llu: %s", wb_op_name(op), (unsigned long long)uid,
		    wb_err_name(rc));
		(void)wb_get_objs(rep, WB_F_POSTS, &posts, &k);
		cr_assert_leq(
		    n + k, cap, "%s of %llu: too long", wb_op_name(op), (unsigned long long)uid);
		for (size_t i = 0; i < k; i++) {
			ids[n] = wb_u64(&posts[i], WB_F_ID, 0);
			if (authors != NULL) {
				authors[n] = wb_u64(&posts[i], WB_F_AUTHOR, 0);
			}
			n++;
		}
		bool more = k > 0 && wb_get_u64(rep, WB_F_NEXT, &before) && before != 0;
		wb_msg_free(rep);
		if (!more) {
			return (long)n;
		}
	}
}

/* bk_following reads uid's followees from relation. */
static long
bk_following(uint64_t uid, uint64_t *out, size_t cap)
{
	wb_obj         *req = wb_request(WB_OP_REL_FOLLOWING), *rep = NULL;
	const uint64_t *v = NULL;
	size_t          n = 0;

	wb_set_u64(req, WB_F_UID, uid);
	wb_set_u64(req, WB_F_LIMIT, 10000);
	cr_assert_eq(it_call(it_cl.relation_url, req, &rep), WB_OK);
	(void)wb_get_u64s(rep, WB_F_UIDS, &v, &n);
	cr_assert_leq(n, cap);
	memcpy(out, v, n * sizeof(*v));
	wb_msg_free(rep);
	return (long)n;
}

/* An entry of an inbox: post id and author. */
typedef struct bk_cell {
	uint64_t id, author;
} bk_cell;

static int
bk_cell_desc(const void *a, const void *b)
{
	uint64_t x = ((const bk_cell *)a)->id, y = ((const bk_cell *)b)->id;

	return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * bk_check_inboxes compares every user's inbox with the one recomputed
 * from relation and content by the inbox's rules (every post of every
 * followee and of the user: no author has more posts than the backfill
 * depth, no inbox more than the cap); returns the cells compared.
 */
static size_t
bk_check_inboxes(void)
{
	static uint64_t ids[BK_HOME], authors[BK_HOME], posts[BK_HOME];
	static bk_cell  want[BK_HOME];
	uint64_t        fol[BK_USERS + 1];
	size_t          cells = 0;

	for (int u = 0; u < BK_USERS; u++) {
		long   nf = bk_following(bk_uid[u], fol, BK_USERS);
		size_t nw = 0;
		fol[nf++] = bk_uid[u]; /* one's own posts are in one's home */
		for (long f = 0; f < nf; f++) {
			long np = bk_list(
			    it_cl.content_url, WB_OP_POST_TIMELINE, fol[f], posts, NULL, BK_HOME);
			for (long p = 0; p < np; p++) {
				cr_assert_lt(nw, BK_HOME);
				want[nw++] = (bk_cell) { posts[p], fol[f] };
			}
		}
		qsort(want, nw, sizeof(*want), bk_cell_desc);
		cr_assert_leq(nw, 800, "the test keeps every inbox under the cap");
		long n =
		    bk_list(it_cl.inbox_url, WB_OP_INBOX_HOME, bk_uid[u], ids, authors, BK_HOME);
		cr_assert_eq(
		    (size_t)n, nw, "%s: inbox holds %ld posts, recomputed %zu", bk_names[u], n, nw);
		for (size_t i = 0; i < nw; i++) {
			cr_assert_eq(ids[i], want[i].id, "%s: inbox[%zu]", bk_names[u], i);
			cr_assert_eq(
			    authors[i], want[i].author, "%s: inbox[%zu] author", bk_names[u], i);
		}
		cells += nw;
	}
	return cells;
}

/* bk_wait_rebuilt waits until the inbox reports a finished rebuild (done, or failed: a test failure). */
static void
bk_wait_rebuilt(int timeout_ms)
{
	long long deadline = wbt_now_ms() + wbt_ms(timeout_ms);

	for (;;) {
		wb_obj *rep = NULL;
		cr_assert_eq(
		    it_call(it_cl.inbox_url, wb_request(WB_OP_INBOX_REBUILD_STATUS), &rep), WB_OK);
		const char *st = wb_str(rep, WB_F_STATE, "?");
		bool        done = strcmp(st, "done") == 0;
		cr_assert_str_neq(st, "failed", "rebuild failed: %s", wb_str(rep, WB_F_MSG, "?"));
		wb_msg_free(rep);
		if (done) {
			return;
		}
		cr_assert_lt(wbt_now_ms(), deadline, "the rebuild never finished (state %s)", st);
		wbt_sleep_ms(50);
	}
}

/* bk_copy_store copies the flat folder of a closed store from src into a new folder dst. */
static void
bk_copy_store(const char *src, const char *dst)
{
	DIR           *d = opendir(src);
	struct dirent *e;
	char           a[1024], b[1024], buf[65536];

	cr_assert_not_null(d, "%s", src);
	cr_assert_eq(mkdir(dst, 0755), 0, "%s", dst);
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.') {
			continue;
		}
		snprintf(a, sizeof(a), "%s/%s", src, e->d_name);
		snprintf(b, sizeof(b), "%s/%s", dst, e->d_name);
		int     in = open(a, O_RDONLY), out = open(b, O_WRONLY | O_CREAT | O_EXCL, 0644);
		ssize_t k;
		cr_assert(in >= 0 && out >= 0, "copy %s", a);
		while ((k = read(in, buf, sizeof(buf))) > 0) {
			cr_assert_eq(write(out, buf, (size_t)k), k);
		}
		close(in);
		close(out);
	}
	closedir(d);
}

/* What the content service stored for each upload of bk_media (written again from the upload): the
 * image and its preview. */
static uint8_t *bk_stored[2][2];
static size_t   bk_stored_n[2][2];

/* bk_media uploads a 400x300 PNG unique to seq as user 0 (put: the id goes into media), or reads it
 * and its preview back and compares them with what was stored, through the content service; the
 * preview is past the blob file threshold. */
static void
bk_media(char media[64], unsigned seq, bool put)
{
	wb_obj     *req, *rep = NULL;
	const void *data;
	size_t      n, len;
	uint8_t    *img;

	if (put) {
		cr_assert_not_null(img = wbt_png(400, 300, seq + 1, &len));
		req = wb_request(WB_OP_MEDIA_PUT);
		wb_set_u64(req, WB_F_UID, bk_uid[0]);
		wb_set_bin(req, WB_F_DATA, img, len);
		cr_assert_eq(
		    it_call(it_cl.content_url, req, &rep), WB_OK, "%s", wb_str(rep, WB_F_MSG, ""));
		snprintf(media, 64, "%s", wb_str(rep, WB_F_MEDIA, ""));
		wb_msg_free(rep);
		free(img);
	}
	for (int preview = 0; preview < 2; preview++) {
		req = wb_request(WB_OP_MEDIA_GET);
		wb_set_u64(req, WB_F_UID, bk_uid[0]);
		wb_set_cstr(req, WB_F_MEDIA, media);
		if (preview) {
			wb_set_bool(req, WB_F_PREVIEW, true);
		}
		cr_assert_eq(
		    it_call(it_cl.content_url, req, &rep), WB_OK, "%s", wb_str(rep, WB_F_MSG, ""));
		cr_assert(wb_get_bin(rep, WB_F_DATA, &data, &n));
		if (preview) {
			cr_assert_gt(
			    n, 4096, "in a blob file (content_schema.h: CONTENT_BLOB_MIN)");
		}
		if (put) {
			cr_assert_not_null(bk_stored[seq][preview] = malloc(n));
			memcpy(bk_stored[seq][preview], data, n);
			bk_stored_n[seq][preview] = n;
		} else {
			cr_assert(n == bk_stored_n[seq][preview] &&
			              memcmp(data, bk_stored[seq][preview], n) == 0,
			    "image %s%s differs", media, preview ? "'s preview" : "");
			free(bk_stored[seq][preview]);
			bk_stored[seq][preview] = NULL;
		}
		wb_msg_free(rep);
	}
}

Test(backup, under_load, .fini = it_fini, .timeout = 600)
{
	char            media[2][64];
	static char     out[BK_OUT_MAX];
	static uint64_t ids[BK_HOME];
	char            dir[256], data[256], env_data[300];
	pthread_t       th[BK_THREADS];

	it_start(bk_env);
	bk_users();
	bk_load_start(th);
	while (bk_nops_now() < 300 && it_failures() == 0) {
		wbt_sleep_ms(10);
	}
	bk_media(media[0], 0, true); /* images live in blob files: the backup holds them too */
	bk_media(media[1], 1, true);
	cr_assert_eq(wbt_path(dir, sizeof(dir), "backup1"), 0);
	long long began = wbt_now_ms();
	size_t    before = bk_nops_now();
	int       st = bk_admin(out, "backup", dir, NULL, NULL);
	cr_assert_eq(st, 0, "backup under load: %s", out);
	cr_assert_not_null(strstr(out, "inbox/0 applied content/0"), "%s", out);
	while (bk_nops_now() < before + 100 && it_failures() == 0) {
		wbt_sleep_ms(10); /* the load goes on after the backup too */
	}
	bk_load_stop(th);
	cr_assert_eq(it_failures(), 0);
	cr_assert_eq(atomic_load(&bk_errors), 0);
	size_t nops = bk_nops;
	cr_assert_lt(nops, BK_MAXOPS, "the record overflowed");
	cr_assert_eq(wbt_cluster_stop(&it_cl, wbt_ms(10000)), 0);

	/* restore into a fresh folder and start a new cluster there */
	cr_assert_eq(wbt_path(data, sizeof(data), "restored"), 0);
	cr_assert_eq(bk_admin(out, "restore", dir, data, NULL), 0, "%s", out);
	cr_assert_neq(bk_admin(out, "restore", dir, data, NULL), 0, "a restore never overwrites");
	cr_assert_not_null(strstr(out, "exists"), "%s", out);
	snprintf(env_data, sizeof(env_data), "WARBLE_DATA=%s", data);
	const char *env2[] = { bk_env[0], env_data, NULL };
	it_start(env2);
	it_wait_inbox(wbt_ms(30000));
	bk_media(media[0], 0, false);
	bk_media(media[1], 1, false);

	/* every post acknowledged before the backup began is there; nothing unknown is */
	size_t total = 0, p0 = 0, later = 0;
	for (int u = 0; u < BK_USERS; u++) {
		long n =
		    bk_list(it_cl.content_url, WB_OP_POST_TIMELINE, bk_uid[u], ids, NULL, BK_HOME);
		total += (size_t)n;
		for (size_t i = 0; i < nops; i++) {
			const bk_op *o = &bk_ops[i];
			if (o->id == 0 || o->uid != bk_uid[u]) {
				continue;
			}
			bool found = false;
			for (long k = 0; k < n && !found; k++) {
				found = ids[k] == o->id;
			}
			if (o->ack_ms < began) {
				cr_assert(found,
				    "%s: post %llu acknowledged before the backup is lost",
				    bk_names[u], (unsigned long long)o->id);
				p0++;
			} else if (found) {
				later++;
			}
		}
	}
	cr_assert_eq(total, p0 + later, "the restored posts are exactly the acknowledged ones");
	cr_assert_eq(it_log_last(it_cl.content_url, WB_OP_POST_LOG), total,
	    "one post event per restored post");

	/* every follow whose last change was acknowledged before the backup began is there */
	size_t pairs = 0;
	for (int u = 0; u < BK_USERS; u++) {
		uint64_t fol[BK_USERS];
		long     nf = bk_following(bk_uid[u], fol, BK_USERS);
		for (int v = 0; v < BK_USERS; v++) {
			const bk_op *last = NULL;
			bool         after = false;
			for (size_t i = 0; i < nops; i++) {
				const bk_op *o = &bk_ops[i];
				if (o->id == 0 && o->uid == bk_uid[u] && o->target == bk_uid[v]) {
					if (o->ack_ms < began) {
						last = o;
					} else {
						after = true;
					}
				}
			}
			if (last == NULL || after) {
				continue;
			}
			bool found = false;
			for (long k = 0; k < nf; k++) {
				found = found || fol[k] == bk_uid[v];
			}
			cr_assert_eq(found, last->follow,
			    "%s -> %s: the follow state acknowledged "
			    "before the backup",
			    bk_names[u], bk_names[v]);
			pairs++;
		}
	}
	size_t cells = bk_check_inboxes();
	fprintf(stderr,
	    "backup under load: %zu writes, %zu posts before it began, %zu after; restored %zu "
	    "posts, %zu follow pairs checked, %zu inbox cells equal to the recomputed ones\n",
	    nops, p0, later, total, pairs, cells);
	cr_assert_gt(p0, 0);

	/* a rebuild gives the same inboxes */
	cr_assert_eq(bk_admin(out, "rebuild-inbox", NULL, NULL, NULL), 0, "%s", out);
	cr_assert_not_null(strstr(out, "rebuild-inbox ["), "a progress line: %s", out);
	cr_assert_eq(bk_check_inboxes(), cells);
	cr_assert_eq(wbt_cluster_stop(&it_cl, wbt_ms(10000)), 0);
}

Test(backup, unsafe_order, .fini = it_fini, .timeout = 600)
{
	static char out[BK_OUT_MAX];
	char        dir[256], data[256], live_inbox[300], restored_inbox[300], env_data[300];
	pthread_t   th[BK_THREADS];
	bool        refused = false;

	it_start(bk_env);
	bk_users();

	/* the inbox taken last, while events flow, is refused (and so is its restore) */
	bk_load_start(th);
	for (int attempt = 0; attempt < 10 && !refused; attempt++) {
		char name[32];
		snprintf(name, sizeof(name), "unsafe%d", attempt);
		cr_assert_eq(wbt_path(dir, sizeof(dir), name), 0);
		int st = bk_admin(out, "backup", dir, NULL, "--inbox-last");
		cr_assert(st == 0 || st == 1, "exit %d: %s", st, out);
		refused = st == 1;
		if (refused) {
			cr_assert_not_null(strstr(out, "refused"), "%s", out);
			cr_assert_eq(wbt_path(data, sizeof(data), "unsafe-data"), 0);
			cr_assert_eq(bk_admin(out, "restore", dir, data, NULL), 1, "%s", out);
			cr_assert_not_null(strstr(out, "refused"), "%s", out);
		}
	}
	bk_load_stop(th);
	cr_assert(refused, "ten backups taking the inbox last under load were never refused");
	cr_assert_eq(it_failures(), 0);

	/* a safe backup, then more posts: an inbox copy from after them is ahead of its sources */
	cr_assert_eq(wbt_path(dir, sizeof(dir), "safe"), 0);
	cr_assert_eq(bk_admin(out, "backup", dir, NULL, NULL), 0, "%s", out);
	warble_client *c = it_client();
	cr_assert_eq(warble_set_token(c, bk_tokens[0]), WARBLE_OK);
	for (int i = 0; i < 20; i++) {
		uint64_t id;
		cr_assert_eq(warble_post(c, "after the backup", &id), WARBLE_OK);
	}
	it_wait_inbox(wbt_ms(30000));
	cr_assert_eq(wbt_cluster_stop(&it_cl, wbt_ms(10000)), 0);
	cr_assert_eq(wbt_path(data, sizeof(data), "healed"), 0);
	cr_assert_eq(bk_admin(out, "restore", dir, data, NULL), 0, "%s", out);
	snprintf(live_inbox, sizeof(live_inbox), "%s/inbox", it_cl.data);
	snprintf(restored_inbox, sizeof(restored_inbox), "%s/inbox", data);
	char gone[320];
	snprintf(gone, sizeof(gone), "%s.set-aside", restored_inbox);
	cr_assert_eq(rename(restored_inbox, gone), 0);
	bk_copy_store(live_inbox, restored_inbox);

	/* the inbox sees the content log end before what it applied, and rebuilds */
	snprintf(env_data, sizeof(env_data), "WARBLE_DATA=%s", data);
	const char *env2[] = { bk_env[0], env_data, NULL };
	it_start(env2);
	long long deadline = wbt_now_ms() + wbt_ms(30000);
	while (it_gauge(it_cl.inbox_url, "rebuild_state") != 3 /* done */) {
		cr_assert_lt(wbt_now_ms(), deadline, "the inbox never rebuilt itself");
		wbt_sleep_ms(50);
	}
	bk_wait_rebuilt(30000);
	it_wait_inbox(wbt_ms(30000));
	size_t cells = bk_check_inboxes();

	/* new posts take the seqs the inbox had applied before: they must arrive */
	warble_close(c);
	c = it_client();
	cr_assert_eq(warble_set_token(c, bk_tokens[0]), WARBLE_OK);
	for (int i = 0; i < 5; i++) {
		uint64_t id;
		cr_assert_eq(
		    warble_post(c, "after the restore", &id), WARBLE_OK, "%s", warble_errmsg(c));
	}
	it_wait_inbox(wbt_ms(30000));
	wb_obj *req = wb_request(WB_OP_REL_COUNTS), *rep = NULL;
	wb_set_u64s(req, WB_F_UIDS, &bk_uid[0], 1);
	cr_assert_eq(it_call(it_cl.relation_url, req, &rep), WB_OK);
	const wb_obj *u = NULL;
	size_t        nu = 0;
	cr_assert(wb_get_objs(rep, WB_F_USERS, &u, &nu) && nu == 1);
	uint64_t fans = wb_u64(&u[0], WB_F_FOLLOWERS, 0);
	wb_msg_free(rep);
	cr_assert_eq(bk_check_inboxes(), cells + 5 * (fans + 1),
	    "each new post reaches bk00's fans and bk00");
	warble_close(c);
	cr_assert_eq(wbt_cluster_stop(&it_cl, wbt_ms(10000)), 0);
}

/* bk_publish publishes n posts as user u. */
static void
bk_publish(int u, int n)
{
	warble_client *c = it_client();

	cr_assert_eq(warble_set_token(c, bk_tokens[u]), WARBLE_OK);
	for (int i = 0; i < n; i++) {
		uint64_t id;
		cr_assert_eq(warble_post(c, "a post", &id), WARBLE_OK, "%s", warble_errmsg(c));
	}
	warble_close(c);
}

Test(backup, diverged_source, .fini = it_fini, .timeout = 600)
{
	static char out[BK_OUT_MAX];
	char        dir[256], data[256], old_inbox[256], env_data[300], path[300], aside[320];

	/* a backup, then 20 posts the restored cluster will never have seen */
	it_start(bk_env);
	bk_users();
	bk_publish(0, 10);
	it_wait_inbox(wbt_ms(30000));
	cr_assert_eq(wbt_path(dir, sizeof(dir), "backup"), 0);
	cr_assert_eq(bk_admin(out, "backup", dir, NULL, NULL), 0, "%s", out);
	bk_publish(0, 20);
	it_wait_inbox(wbt_ms(30000));
	cr_assert_eq(wbt_cluster_stop(&it_cl, wbt_ms(10000)), 0);
	cr_assert_eq(wbt_path(old_inbox, sizeof(old_inbox), "old-inbox"), 0);
	snprintf(path, sizeof(path), "%s/inbox", it_cl.data);
	bk_copy_store(path, old_inbox);

	/* the restored cluster goes on: its next 30 posts take the same seqs and more */
	cr_assert_eq(wbt_path(data, sizeof(data), "restored"), 0);
	cr_assert_eq(bk_admin(out, "restore", dir, data, NULL), 0, "%s", out);
	snprintf(env_data, sizeof(env_data), "WARBLE_DATA=%s", data);
	const char *env2[] = { bk_env[0], env_data, NULL };
	/* five daemons even under WARBLE_TEST_MODE=one: the inbox alone is swapped */
	cr_assert_eq(wbt_cluster_start_as(&it_cl, env2, WBT_FIVE), 0);
	bk_publish(1, 30);
	it_wait_inbox(wbt_ms(30000));

	/* an inbox from the other history: its applied seq is behind the log's
	 * end, but the log holds another event at that seq */
	cr_assert_eq(wbt_stop(it_cl.inbox, SIGTERM, wbt_ms(10000)), 0);
	snprintf(path, sizeof(path), "%s/inbox", data);
	snprintf(aside, sizeof(aside), "%s.aside", path);
	cr_assert_eq(rename(path, aside), 0);
	bk_copy_store(old_inbox, path);
	cr_assert_eq(wbt_cluster_restart(&it_cl, &it_cl.inbox, 0), 0);
	long long deadline = wbt_now_ms() + wbt_ms(30000);
	while (it_gauge(it_cl.inbox_url, "rebuild_state") != 3 /* done */) {
		cr_assert_lt(wbt_now_ms(), deadline, "the inbox never noticed the other history");
		wbt_sleep_ms(50);
	}
	it_wait_inbox(wbt_ms(30000));
	size_t cells = bk_check_inboxes();
	bk_publish(2, 3);
	it_wait_inbox(wbt_ms(30000));
	cr_assert_gt(bk_check_inboxes(), cells, "new posts arrive after the rebuild");
	cr_assert_eq(wbt_cluster_stop(&it_cl, wbt_ms(10000)), 0);
}

Test(backup, usage, .fini = it_fini, .timeout = 300)
{
	static char out[BK_OUT_MAX];
	char        dir[256];

	cr_assert_eq(bk_ctl(out, (const char *const[]) { "admin", NULL }), 2);
	cr_assert_eq(bk_ctl(out, (const char *const[]) { "admin", "bogus", NULL }), 2);
	cr_assert_not_null(strstr(out, "unknown admin command"), "%s", out);
	cr_assert_eq(bk_ctl(out, (const char *const[]) { "admin", "backup", "rel/dir", NULL }), 2);
	cr_assert_eq(bk_ctl(out, (const char *const[]) { "admin", "backup", NULL }), 2);
	cr_assert_eq(
	    bk_ctl(out, (const char *const[]) { "admin", "rebuild-inbox", "--depth", "0", NULL }),
	    2);
	cr_assert_eq(bk_ctl(out, (const char *const[]) { "admin", "restore", "/nonexistent/x",
	                             "/tmp/y", NULL }),
	    1);
	cr_assert_eq(
	    bk_ctl(out, (const char *const[]) { "post", "x", "--inbox-url", "ipc:///x", NULL }), 2,
	    "admin options apply to admin commands only");

	it_start(NULL);
	/* admin.backup checks its dir; the gateway never routes it */
	const char *bad[] = { "", "relative", "/no/such/parent/x", "/a/../b" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		wb_obj *req = wb_request(WB_OP_ADMIN_BACKUP), *rep = NULL;
		wb_set_cstr(req, WB_F_DIR, bad[i]);
		cr_assert_eq(it_call(it_cl.content_url, req, &rep), WB_EINVAL, "dir '%s'", bad[i]);
		wb_msg_free(rep);
	}
	wb_obj *req = wb_request(WB_OP_ADMIN_BACKUP), *rep = NULL;
	cr_assert_eq(it_call(it_cl.content_url, req, &rep), WB_EINVAL, "dir is required");
	wb_msg_free(rep);
	req = wb_request(WB_OP_ADMIN_BACKUP);
	cr_assert_eq(wbt_path(dir, sizeof(dir), "via-gateway"), 0);
	wb_set_cstr(req, WB_F_DIR, dir);
	int rc = it_call(it_cl.gateway_url, req, &rep);
	cr_assert_neq(rc, WB_OK, "the gateway does not serve admin.backup");
	wb_msg_free(rep);
	cr_assert_eq(access(dir, F_OK), -1);
	req = wb_request(WB_OP_INBOX_REBUILD);
	wb_set_u64(req, WB_F_LIMIT, 0);
	cr_assert_eq(it_call(it_cl.inbox_url, req, &rep), WB_EINVAL, "limit 0");
	wb_msg_free(rep);

	/* the content service's re-encode pass: admin only, nothing to do on a new store */
	req = wb_request(WB_OP_MEDIA_REENCODE);
	cr_assert_neq(it_call(it_cl.gateway_url, req, &rep), WB_OK,
	    "the gateway does not serve media.reencode");
	wb_msg_free(rep);
	cr_assert_eq(bk_admin(out, "reencode-media", NULL, NULL, NULL), 0, "%s", out);
	cr_assert_not_null(strstr(out, "reencode-media done: 0 images"), "%s", out);

	/* a backup folder is never overwritten */
	cr_assert_eq(wbt_path(dir, sizeof(dir), "twice"), 0);
	cr_assert_eq(bk_admin(out, "backup", dir, NULL, NULL), 0, "%s", out);
	cr_assert_eq(bk_admin(out, "backup", dir, NULL, NULL), 1, "%s", out);
	cr_assert_not_null(strstr(out, "already exists"), "%s", out);
	cr_assert_eq(wbt_cluster_stop(&it_cl, wbt_ms(10000)), 0);
}
