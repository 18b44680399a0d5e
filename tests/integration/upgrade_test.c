/*
 * upgrade_test.c - a data folder made by the release before shards opens
 * in this one as shard 0 of 1 of every service, with no step by the
 * operator, and serves what that release served.
 *
 * The folder is tests/data/stores/release-ba27c1b.tar.gz, made by that
 * release's own daemons and warblectl (tests/data/stores/make-store.sh;
 * the manifest beside it says what it holds and what the release
 * answered).  On it, as five daemons and as one warble process:
 *
 *   - the inbox takes over its applied positions (content -> content/0,
 *     relation -> relation/0): after its first pulls it has applied no
 *     event, and an admin backup reports the old seqs;
 *   - the release's session tokens are refused (UNAUTHORIZED, HTTP 401),
 *     and every user logs in with the old password (one hashed at the
 *     release's default cost);
 *   - every following and fans list, count, home and timeline equals
 *     both what the release answered and the model of the manifest;
 *     deleted posts stay deleted; the image is served, with a preview;
 *   - a new post, an old post deleted, two follows and an unfollow then
 *     apply exactly once each (the inbox's events_applied), and every
 *     home equals the model again: the new post once in each fan's home
 *     and in its author's (the release put nobody's own posts in their
 *     home: until a rebuild, a home holds only the reader's new ones);
 *   - `warblectl admin rebuild-inbox` then gives every reader their own
 *     posts of the release too (docs/operations.md, upgrading);
 *   - stopped, each store records "<service> 0/1", relation's copy as it
 *     was is in relation.before-shards, and relation, content and inbox
 *     refuse to start as 1/2 or 0/2, naming both layouts.
 *
 * A fresh store made as 0/1 refuses 1/2 and 0/2 alike, and a store of
 * the release, with no record, refuses them before anything is changed.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <rocksdb/c.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "../http/ht.h"
#include "it.h"

#define UP_STORE   "tests/data/stores/release-ba27c1b"
#define UP_USERS   24
#define UP_POSTS   64
#define UP_FANPAGE 5 /* fans read this many to a page: the most followed has 18 */

extern char **environ;

typedef struct up_post {
	uint64_t id;
	int      author; /* index in up_store.users */
	char     text[160], title[128], category[40];
	bool     deleted;
	char     media[64], type[32], alt[40]; /* its image, if media[0] */
	uint32_t width, height;
	bool     fresh; /* published by this release: in its author's own home at once */
} up_post;

typedef struct up_user {
	char     name[16], password[32], token[160];
	uint64_t uid;
	uint64_t home[UP_POSTS], tl[UP_POSTS]; /* as the release answered */
	size_t   nhome, ntl;
	uint64_t following[UP_USERS], fans[UP_USERS];
	size_t   nfollowing, nfans;
	uint64_t following_count, followers_count;
} up_user;

typedef struct up_store {
	up_user  users[UP_USERS];
	size_t   nusers;
	up_post  posts[UP_POSTS];
	size_t   nposts;
	bool     follows[UP_USERS][UP_USERS]; /* [follower][followee] */
	uint64_t content_applied, relation_applied;
	int      default_cost; /* the user whose password has the release's default cost */
	bool     rebuilt; /* an inbox rebuild gave every reader their own posts of the release */
	char     tarball[1024];
} up_store;

static up_store st;

/* up_user_index returns the index of user name (-1 if unknown). */
static int
up_user_index(const char *name)
{
	for (size_t i = 0; i < st.nusers; i++) {
		if (strcmp(st.users[i].name, name) == 0) {
			return (int)i;
		}
	}
	return -1;
}

/* up_ids reads a JSON array of ids (strings) or uids (integers) into out. */
static size_t
up_ids(json_t *a, uint64_t *out, size_t cap)
{
	size_t  i, n = 0;
	json_t *v;

	json_array_foreach(a, i, v)
	{
		cr_assert_lt(n, cap, "a list of the manifest is too long");
		out[n++] = json_is_string(v) ? strtoull(json_string_value(v), NULL, 10)
		                             : (uint64_t)json_integer_value(v);
	}
	return n;
}

/* up_str copies the string member key of o into buf ("" if absent). */
static void
up_str(json_t *o, const char *key, char *buf, size_t n)
{
	json_t *v = json_object_get(o, key);

	snprintf(buf, n, "%s", json_is_string(v) ? json_string_value(v) : "");
}

/* up_load reads the manifest into st and finds the tarball beside it. */
static void
up_load(void)
{
	char         root[900], path[1100];
	json_error_t err;
	json_t      *m, *v;
	size_t       i;

	memset(&st, 0, sizeof(st));
	cr_assert_eq(ht_root(root, sizeof(root), UP_STORE ".json"), 0, "no %s", UP_STORE ".json");
	snprintf(path, sizeof(path), "%s/%s.json", root, UP_STORE);
	snprintf(st.tarball, sizeof(st.tarball), "%s/%s.tar.gz", root, UP_STORE);
	cr_assert_not_null(m = json_load_file(path, 0, &err), "%s: %s", path, err.text);
	st.content_applied = (uint64_t)json_integer_value(json_object_get(m, "content_applied"));
	st.relation_applied = (uint64_t)json_integer_value(json_object_get(m, "relation_applied"));
	json_array_foreach(json_object_get(m, "users"), i, v)
	{
		cr_assert_lt(st.nusers, UP_USERS);
		up_user *u = &st.users[st.nusers++];
		up_str(v, "name", u->name, sizeof(u->name));
		up_str(v, "password", u->password, sizeof(u->password));
		up_str(v, "token", u->token, sizeof(u->token));
		u->uid = (uint64_t)json_integer_value(json_object_get(v, "uid"));
		u->nhome = up_ids(json_object_get(v, "home"), u->home, UP_POSTS);
		u->ntl = up_ids(json_object_get(v, "timeline"), u->tl, UP_POSTS);
		u->nfollowing = up_ids(json_object_get(v, "following"), u->following, UP_USERS);
		u->nfans = up_ids(json_object_get(v, "fans"), u->fans, UP_USERS);
		u->following_count =
		    (uint64_t)json_integer_value(json_object_get(v, "following_count"));
		u->followers_count =
		    (uint64_t)json_integer_value(json_object_get(v, "followers_count"));
	}
	json_array_foreach(json_object_get(m, "posts"), i, v)
	{
		char    author[16];
		json_t *im = json_array_get(json_object_get(v, "images"), 0);
		cr_assert_lt(st.nposts, UP_POSTS);
		up_post *p = &st.posts[st.nposts++];
		p->id = strtoull(json_string_value(json_object_get(v, "id")), NULL, 10);
		up_str(v, "author", author, sizeof(author));
		cr_assert_geq(p->author = up_user_index(author), 0, "post by %s", author);
		up_str(v, "text", p->text, sizeof(p->text));
		up_str(v, "title", p->title, sizeof(p->title));
		up_str(v, "category", p->category, sizeof(p->category));
		p->deleted = json_is_true(json_object_get(v, "deleted"));
		if (im != NULL) {
			up_str(im, "media", p->media, sizeof(p->media));
			up_str(im, "type", p->type, sizeof(p->type));
			up_str(im, "alt", p->alt, sizeof(p->alt));
			p->width = (uint32_t)json_integer_value(json_object_get(im, "width"));
			p->height = (uint32_t)json_integer_value(json_object_get(im, "height"));
		}
	}
	json_array_foreach(json_object_get(m, "follows"), i, v)
	{
		int a = up_user_index(json_string_value(json_array_get(v, 0)));
		int b = up_user_index(json_string_value(json_array_get(v, 1)));
		cr_assert(a >= 0 && b >= 0, "follow %zu names an unknown user", i);
		st.follows[a][b] = true;
	}
	st.default_cost = up_user_index(json_string_value(json_object_get(m, "default_cost_user")));
	cr_assert(st.nusers >= 20 && st.nposts >= 40 && st.default_cost >= 0, "a short manifest");
	json_decref(m);
}

/* up_model_posts writes the live posts by the authors in want into out, newest first; the count. */
static size_t
up_model_posts(const bool want[UP_USERS], uint64_t *out)
{
	size_t n = 0;

	for (size_t i = 0; i < st.nposts; i++) {
		if (!st.posts[i].deleted && want[st.posts[i].author]) {
			out[n++] = st.posts[i].id;
		}
	}
	qsort(out, n, sizeof(*out), it_cmp_desc);
	return n;
}

/* up_model_home writes user i's home as the model has it: the live posts of whom it follows and
 * its own, those of the release only once a rebuild has given them. */
static size_t
up_model_home(int i, uint64_t *out)
{
	size_t n = up_model_posts(st.follows[i], out);

	for (size_t k = 0; k < st.nposts; k++) {
		const up_post *p = &st.posts[k];
		if (p->author == i && !p->deleted && (p->fresh || st.rebuilt)) {
			out[n++] = p->id;
		}
	}
	qsort(out, n, sizeof(*out), it_cmp_desc);
	return n;
}

/* up_model_timeline writes user i's own live posts, newest first. */
static size_t
up_model_timeline(int i, uint64_t *out)
{
	bool only[UP_USERS] = { false };

	only[i] = true;
	return up_model_posts(only, out);
}

/* up_model_users writes the uids user i follows (fans = false) or that follow it, ascending. */
static size_t
up_model_users(int i, bool fans, uint64_t *out)
{
	size_t n = 0;

	for (size_t j = 0; j < st.nusers; j++) {
		if (fans ? st.follows[j][i] : st.follows[i][j]) {
			out[n++] = st.users[j].uid;
		}
	}
	qsort(out, n, sizeof(*out), it_cmp_asc);
	return n;
}

/* up_sorted copies n uids into out, ascending. */
static const uint64_t *
up_sorted(const uint64_t *in, size_t n, uint64_t *out)
{
	memcpy(out, in, n * sizeof(*in));
	qsort(out, n, sizeof(*out), it_cmp_asc);
	return out;
}

/* up_manifest_agrees checks that what the release answered is the model of what was made. */
static void
up_manifest_agrees(void)
{
	uint64_t want[UP_POSTS], got[UP_POSTS];

	for (size_t i = 0; i < st.nusers; i++) {
		up_user *u = &st.users[i];
		size_t   n = up_model_home((int)i, want);
		it_same_ids(u->name, "home (manifest)", u->home, (long)u->nhome, want, n);
		n = up_model_timeline((int)i, want);
		it_same_ids(u->name, "timeline (manifest)", u->tl, (long)u->ntl, want, n);
		n = up_model_users((int)i, false, want);
		it_same_ids(u->name, "following (manifest)",
		    up_sorted(u->following, u->nfollowing, got), (long)u->nfollowing, want, n);
		cr_assert_eq(u->following_count, n, "%s", u->name);
		n = up_model_users((int)i, true, want);
		it_same_ids(u->name, "fans (manifest)", up_sorted(u->fans, u->nfans, got),
		    (long)u->nfans, want, n);
		cr_assert_eq(u->followers_count, n, "%s", u->name);
	}
	cr_assert_eq(it_failures(), 0, "the manifest disagrees with itself");
}

/* up_unpack makes folder dir and unpacks the release's store into it. */
static void
up_unpack(const char *dir)
{
	char *const argv[] = { "tar", "-xzf", st.tarball, "-C", (char *)dir, NULL };
	pid_t       pid;
	int         status = 0;

	cr_assert_eq(mkdir(dir, 0755), 0, "mkdir %s", dir);
	cr_assert_eq(posix_spawnp(&pid, "tar", NULL, NULL, argv, environ), 0, "tar");
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "tar -xzf %s failed", st.tarball);
}

/*
 * up_store_read opens the store at path read-only (with every column
 * family it has) and reads its layout attribute into layout ("" if
 * none); *fan tells whether it has the family "fan" of the release
 * before shards.  0, or -1 if it cannot be opened.
 */
static int
up_store_read(const char *path, char *layout, size_t n, bool *fan)
{
	rocksdb_options_t *o = rocksdb_options_create();
	char              *err = NULL, *v;
	size_t             ncf = 0, vlen = 0, dflt = 0;
	char             **names = rocksdb_list_column_families(o, path, &ncf, &err);
	int                rc = -1;

	layout[0] = '\0';
	*fan = false;
	if (err != NULL) {
		fprintf(stderr, "%s: %s\n", path, err);
		free(err);
		rocksdb_options_destroy(o);
		return -1;
	}
	const rocksdb_options_t        **copts = calloc(ncf, sizeof(*copts));
	rocksdb_column_family_handle_t **h = calloc(ncf, sizeof(*h));
	for (size_t i = 0; i < ncf; i++) {
		copts[i] = o;
		dflt = strcmp(names[i], "default") == 0 ? i : dflt;
		*fan = *fan || strcmp(names[i], "fan") == 0;
	}
	rocksdb_t *db = rocksdb_open_for_read_only_column_families(
	    o, path, (int)ncf, (const char *const *)names, copts, h, 0, &err);
	if (db != NULL) {
		rocksdb_readoptions_t *ro = rocksdb_readoptions_create();
		v = rocksdb_get_cf(db, ro, h[dflt], "warble.layout", 13, &vlen, &err);
		if (err == NULL) {
			snprintf(layout, n, "%.*s", v != NULL ? (int)vlen : 0, v != NULL ? v : "");
			rc = 0;
		}
		free(v);
		rocksdb_readoptions_destroy(ro);
		for (size_t i = 0; i < ncf; i++) {
			rocksdb_column_family_handle_destroy(h[i]);
		}
		rocksdb_close(db);
	}
	if (err != NULL) {
		fprintf(stderr, "%s: %s\n", path, err);
		free(err);
	}
	rocksdb_list_column_families_destroy(names, ncf);
	free(copts);
	free(h);
	rocksdb_options_destroy(o);
	return rc;
}

/* up_has reports whether path exists. */
static bool
up_has(const char *dir, const char *name)
{
	char        path[2100];
	struct stat sb;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return stat(path, &sb) == 0;
}

/*
 * up_refused starts prog on data folder dir as shard `shard` and checks
 * that it exits non-zero with a log that holds have and want (the two
 * layouts).
 */
static void
up_refused(const char *prog, const char *dir, const char *shard, const char *have, const char *want)
{
	char        bufs[12][WBT_URL_MAX + 32], data[1100], sh[32];
	const char *env[16];
	int         k = wbt_cluster_env(&it_cl, bufs, env, 12);

	snprintf(data, sizeof(data), "WARBLE_DATA=%s", dir);
	snprintf(sh, sizeof(sh), "WARBLE_SHARD=%s", shard);
	env[k++] = data;
	env[k++] = sh;
	env[k++] = "WARBLE_HTTP_URL=http://127.0.0.1:0";
	env[k] = NULL;
	wbt_daemon *d = wbt_spawn(prog, NULL, env);
	cr_assert_not_null(d, "%s did not spawn", prog);
	int status = wbt_wait_exit(d, wbt_ms(15000));
	cr_assert_neq(status, -1, "%s as %s still runs on a store of %s", prog, shard, have);
	cr_assert_neq(status, 0, "%s as %s exited 0 on a store of %s", prog, shard, have);
	char *log = wbt_read_file(d->log);
	cr_assert_not_null(log);
	cr_assert(strstr(log, have) != NULL && strstr(log, want) != NULL,
	    "%s as %s: the message names %s and %s? %s", prog, shard, have, want, log);
	free(log);
}

/* up_gauge_wait waits until the inbox's gauge name reaches at least min; returns it. */
static uint64_t
up_gauge_wait(const char *name, uint64_t min)
{
	long long deadline = wbt_now_ms() + wbt_ms(10000);
	uint64_t  v;

	while ((v = it_gauge(it_cl.inbox_url, name)) == UINT64_MAX || v < min) {
		cr_assert_lt(wbt_now_ms(), deadline, "inbox %s stayed at %llu, below %llu", name,
		    (unsigned long long)v, (unsigned long long)min);
		wbt_sleep_ms(20);
	}
	return v;
}

/* up_backup_seqs asks the inbox for a backup into dir and checks the applied seqs it reports. */
static void
up_backup_seqs(const char *dir, uint64_t content, uint64_t relation)
{
	wb_obj       *req = wb_request(WB_OP_ADMIN_BACKUP), *rep = NULL;
	const wb_obj *logs = NULL;
	size_t        n = 0;
	int           seen = 0;

	cr_assert_not_null(req);
	wb_set_cstr(req, WB_F_DIR, dir);
	cr_assert_eq(it_call(it_cl.inbox_url, req, &rep), WB_OK, "admin.backup of the inbox");
	cr_assert(wb_get_objs(rep, WB_F_LOGS, &logs, &n) && n == 2, "%zu logs", n);
	for (size_t i = 0; i < n; i++) {
		const char *src = wb_str(&logs[i], WB_F_SOURCE, "");
		uint64_t    seq = wb_u64(&logs[i], WB_F_SEQ, 0);
		if (strcmp(src, "content/0") == 0) {
			cr_assert_eq(seq, content, "backup: content/0 applied %llu",
			    (unsigned long long)seq);
			seen |= 1;
		} else if (strcmp(src, "relation/0") == 0) {
			cr_assert_eq(seq, relation, "backup: relation/0 applied %llu",
			    (unsigned long long)seq);
			seen |= 2;
		}
	}
	cr_assert_eq(seen, 3, "the backup names content/0 and relation/0");
	wb_msg_free(rep);
}

/* up_old_tokens checks that the release's session tokens are refused, over the SDK and HTTP. */
static void
up_old_tokens(warble_client *c, int port)
{
	for (size_t i = 0; i < st.nusers; i++) {
		warble_user_t *me = NULL;
		cr_assert_eq(warble_set_token(c, st.users[i].token), WARBLE_OK);
		int rc = warble_whoami(c, &me);
		warble_user_free(me);
		cr_assert_eq(rc, WARBLE_EAUTH, "%s: an old token got %s", st.users[i].name,
		    warble_errname(rc));
	}
	ht_res r;
	cr_assert_eq(ht_request(port, "GET", "/api/v1/home", st.users[1].token, NULL, &r), 0);
	cr_assert_eq(r.status, 401, "an old token over HTTP: %d %s", r.status, r.body);
	cr_assert(strstr(r.body, "UNAUTHORIZED") != NULL, "%s", r.body);
	ht_res_free(&r);
	cr_assert_eq(warble_set_token(c, NULL), WARBLE_OK);
}

/* up_login logs every user in with the release's password; the tokens go to tok. */
static void
up_login(warble_client *c, char tok[][160])
{
	for (size_t i = 0; i < st.nusers; i++) {
		uint64_t uid = 0;
		int      rc = warble_login(c, st.users[i].name, st.users[i].password, &uid);
		cr_assert_eq(rc, WARBLE_OK, "%s: login: %s: %s%s", st.users[i].name,
		    warble_errname(rc), warble_errmsg(c),
		    (int)i == st.default_cost ? " (default cost)" : "");
		cr_assert_eq(uid, st.users[i].uid, "%s", st.users[i].name);
		snprintf(tok[i], sizeof(tok[i]), "%s", warble_token(c));
		cr_assert_neq(strcmp(tok[i], st.users[i].token), 0, "the same token again");
	}
}

/* up_check_posts compares user i's timeline, post by post, with the manifest's posts. */
static void
up_check_posts(warble_client *c, int i)
{
	warble_posts_t *p = NULL;
	uint64_t        want[UP_POSTS];
	size_t          n = up_model_timeline(i, want);
	int             rc = warble_timeline(c, st.users[i].name, 0, IT_PAGE, &p);

	cr_assert_eq(rc, WARBLE_OK, "timeline %s: %s", st.users[i].name, warble_errname(rc));
	cr_assert_eq(p->n, n, "%s: %zu posts, want %zu", st.users[i].name, p->n, n);
	for (size_t k = 0; k < p->n; k++) {
		const warble_post_t *q = &p->posts[k];
		const up_post       *m = NULL;
		for (size_t j = 0; j < st.nposts; j++) {
			m = st.posts[j].id == q->id ? &st.posts[j] : m;
		}
		cr_assert(m != NULL && !m->deleted && q->id == want[k], "%s: post %llu",
		    st.users[i].name, (unsigned long long)q->id);
		cr_assert_eq(q->author, st.users[i].uid);
		cr_assert_str_eq(q->author_name, st.users[i].name);
		cr_assert_str_eq(q->text, m->text);
		cr_assert_str_eq(q->title, m->title);
		cr_assert_str_eq(q->category, m->category);
		cr_assert_eq(q->nimages, m->media[0] != '\0' ? 1u : 0u, "post %llu",
		    (unsigned long long)q->id);
		if (q->nimages == 1) {
			cr_assert_str_eq(q->images[0].media, m->media);
			cr_assert_str_eq(q->images[0].type, m->type);
			cr_assert_str_eq(q->images[0].alt, m->alt);
			cr_assert_eq(q->images[0].width, m->width);
			cr_assert_eq(q->images[0].height, m->height);
		}
	}
	warble_posts_free(p);
}

/* up_check_image fetches the release's image and waits for the preview the re-encode pass makes. */
static void
up_check_image(warble_client *c)
{
	const up_post  *m = NULL;
	warble_media_t *im = NULL;
	long long       deadline = wbt_now_ms() + wbt_ms(15000);
	int             rc;

	for (size_t j = 0; j < st.nposts; j++) {
		m = st.posts[j].media[0] != '\0' ? &st.posts[j] : m;
	}
	cr_assert_not_null(m, "the manifest has no image");
	rc = warble_media(c, m->media, &im);
	cr_assert_eq(rc, WARBLE_OK, "media %s: %s", m->media, warble_errname(rc));
	cr_assert_str_eq(im->type, m->type);
	cr_assert(im->width == m->width && im->height == m->height && im->size > 8);
	cr_assert_eq(memcmp(im->data, "\x89PNG", 4), 0, "a PNG");
	warble_media_free(im);
	while ((rc = warble_media_preview(c, m->media, &im)) == WARBLE_ENOMEDIA) {
		cr_assert_lt(wbt_now_ms(), deadline, "no preview of %s", m->media);
		wbt_sleep_ms(50);
	}
	cr_assert_eq(rc, WARBLE_OK, "preview %s: %s", m->media, warble_errname(rc));
	cr_assert_str_eq(im->type, "image/webp");
	warble_media_free(im);
}

/* up_check_all compares every user's lists, counts and home with the model. */
static void
up_check_all(warble_client *c, char tok[][160])
{
	uint64_t want[UP_POSTS], got[UP_POSTS * 2], wu[UP_USERS];

	for (size_t i = 0; i < st.nusers; i++) {
		const char *name = st.users[i].name;
		size_t      nf = up_model_users((int)i, false, wu);
		it_check_list(c, name, false, wu, nf, got, UP_POSTS);
		size_t nfans = up_model_users((int)i, true, wu);
		it_check_list(c, name, true, wu, nfans, got, UP_POSTS);
		it_profile_counts(c, name, nf, nfans);
		cr_assert_eq(warble_set_token(c, tok[i]), WARBLE_OK);
		size_t n = up_model_home((int)i, want);
		it_same_ids(
		    name, "home", got, it_home_all(c, name, got, NULL, UP_POSTS * 2), want, n);
		up_check_posts(c, (int)i);
	}
	cr_assert_eq(it_failures(), 0, "lists, counts or homes differ (above)");
}

/* up_check_fans_paged reads user i's fans UP_FANPAGE to a page: each once, all of them. */
static void
up_check_fans_paged(warble_client *c, int i)
{
	uint64_t want[UP_USERS], got[UP_USERS + UP_FANPAGE], after = 0;
	size_t   n = up_model_users(i, true, want), k = 0;
	int      pages = 0;

	cr_assert_gt(n, UP_FANPAGE, "%s has fans for more than one page", st.users[i].name);
	for (;;) {
		warble_users_t *u = NULL;
		int             rc = warble_fans(c, st.users[i].name, after, UP_FANPAGE, &u);
		cr_assert_eq(rc, WARBLE_OK, "fans page %d: %s", pages, warble_errname(rc));
		cr_assert_leq(k + u->n, n, "fans pages hold more than %zu", n);
		for (size_t j = 0; j < u->n; j++) {
			got[k++] = u->users[j].uid;
		}
		after = u->next;
		bool more = u->next != 0 && u->n > 0;
		warble_users_free(u);
		pages++;
		if (!more) {
			break;
		}
		cr_assert_lt(pages, 100);
	}
	qsort(got, k, sizeof(*got), it_cmp_asc);
	cr_assert(it_same_ids(st.users[i].name, "fans by pages", got, (long)k, want, n));
	cr_assert_geq(pages, (int)((n + UP_FANPAGE - 1) / UP_FANPAGE));
}

/* up_act runs one write as user i (its token in tok) and checks it succeeded. */
#define up_act(c, tok, i, call, ...)                                                       \
	do {                                                                               \
		cr_assert_eq(warble_set_token((c), (tok)[i]), WARBLE_OK);                  \
		int up_rc_ = call((c), __VA_ARGS__);                                       \
		cr_assert_eq(up_rc_, WARBLE_OK, "%s: " #call ": %s: %s", st.users[i].name, \
		    warble_errname(up_rc_), warble_errmsg(c));                             \
	} while (0)

/* up_new_writes writes through this release and updates the model; returns the new post's id. */
static uint64_t
up_new_writes(warble_client *c, char tok[][160])
{
	int      star = up_user_index("user01"), two = up_user_index("user02");
	int      three = up_user_index("user03"), ten = up_user_index("user10");
	int      last = up_user_index("user20");
	uint64_t id = 0, newest = 0;
	up_post *p = NULL;

	for (size_t j = 0; j < st.nposts; j++) {
		newest = st.posts[j].id > newest ? st.posts[j].id : newest;
		if (p == NULL && st.posts[j].author == two && !st.posts[j].deleted) {
			p = &st.posts[j]; /* user02's first post */
		}
	}
	cr_assert(star >= 0 && two >= 0 && three >= 0 && ten >= 0 && last >= 0 && p != NULL);
	cr_assert(st.follows[three][ten] && !st.follows[last][star] && !st.follows[star][two]);

	up_act(c, tok, star, warble_post, "the first post of user01 in this release", &id);
	cr_assert_gt(id, newest, "a new id above the release's");
	cr_assert_lt(st.nposts, UP_POSTS);
	st.posts[st.nposts++] = (up_post) {
		.id = id,
		.author = star,
		.text = "the first post of user01 in this release",
		.fresh = true,
	};
	up_act(c, tok, two, warble_delete, p->id);
	p->deleted = true;
	up_act(c, tok, star, warble_follow, "user02");
	st.follows[star][two] = true;
	up_act(c, tok, three, warble_unfollow, "user10");
	st.follows[three][ten] = false;
	up_act(c, tok, last, warble_follow, "user01");
	st.follows[last][star] = true;
	return id;
}

/* up_once checks that post id is in the home of every fan of its author, and of its author,
 * exactly once. */
static void
up_once(warble_client *c, char tok[][160], uint64_t id, int author)
{
	uint64_t got[UP_POSTS * 2];
	size_t   fans = 0;

	for (size_t i = 0; i < st.nusers; i++) {
		if (!st.follows[i][author] && (int)i != author) {
			continue;
		}
		cr_assert_eq(warble_set_token(c, tok[i]), WARBLE_OK);
		long n = it_home_all(c, st.users[i].name, got, NULL, UP_POSTS * 2), seen = 0;
		for (long k = 0; k < n; k++) {
			seen += got[k] == id;
		}
		cr_assert_eq(seen, 1, "%s has the new post %ld times", st.users[i].name, seen);
		fans += (int)i != author;
	}
	cr_assert_eq(fans, 19, "user01 has 19 fans now");
}

/* up_rebuild runs `warblectl admin rebuild-inbox` (it waits for the end) and checks it succeeded. */
static void
up_rebuild(void)
{
	char  bin[512];
	char *argv[] = { bin, "admin", "rebuild-inbox", "--inbox-url", it_cl.inbox_url, NULL };
	pid_t pid;
	int   st_ = 0;

	cr_assert_eq(wbt_bin_path(bin, sizeof(bin), "warblectl"), 0);
	cr_assert_eq(posix_spawn(&pid, bin, NULL, NULL, argv, environ), 0);
	cr_assert_eq(waitpid(pid, &st_, 0), pid);
	cr_assert(WIFEXITED(st_) && WEXITSTATUS(st_) == 0, "warblectl admin rebuild-inbox");
}

/*
 * up_check runs the whole check on a fresh copy of the release's store
 * in the given shape, then starts the upgraded store again, and with
 * other layouts (as one warble process, or relation, content and inbox
 * each on its own).
 */
static void
up_check(wbt_shape shape)
{
	char           dir[900], bak[900], port_env[64], tok[UP_USERS][160];
	const char    *env[8];
	int            port = wbt_free_port();
	warble_client *c;
	uint64_t       id;

	up_load();
	up_manifest_agrees();
	cr_assert_eq(wbt_path(dir, sizeof(dir), "old"), 0);
	cr_assert_eq(wbt_path(bak, sizeof(bak), "backup"), 0);
	up_unpack(dir);
	char data_env[1000];
	snprintf(data_env, sizeof(data_env), "WARBLE_DATA=%s", dir);
	snprintf(port_env, sizeof(port_env), "WARBLE_HTTP_URL=http://127.0.0.1:%d", port);
	env[0] = data_env;
	env[1] = port_env;
	env[2] = "WARBLE_INBOX_FANOUT_PAGE=4"; /* user01's fans take 5 pages, as in the release */
	env[3] = "WARBLE_INBOX_POLL_MS=100";
	env[4] = NULL;
	it_start_as(env, shape);

	/* the applied positions carried over: the first pulls of both logs apply nothing */
	up_gauge_wait("log_pulls", 3); /* the applier pulls in turn: the first two are done */
	cr_assert_eq(it_gauge(it_cl.inbox_url, "events_applied"), 0, "old events applied again");
	cr_assert_eq(it_gauge(it_cl.inbox_url, "content_applied"), st.content_applied);
	cr_assert_eq(it_gauge(it_cl.inbox_url, "relation_applied"), st.relation_applied);
	cr_assert_eq(it_gauge(it_cl.inbox_url, "rebuild_state"), 0, "an inbox rebuild started");
	up_backup_seqs(bak, st.content_applied, st.relation_applied);

	c = it_client();
	up_old_tokens(c, port);
	up_login(c, tok);
	up_check_all(c, tok);
	up_check_fans_paged(c, up_user_index("user01"));
	up_check_image(c);
	warble_posts_t *news = NULL;
	cr_assert_eq(warble_timeline_category(c, "user01", "news", 0, IT_PAGE, &news), WARBLE_OK);
	cr_assert(
	    news->n == 1 && strcmp(news->posts[0].title, "A title from the old release") == 0);
	warble_posts_free(news);

	/* this release's writes: each event applied once */
	id = up_new_writes(c, tok);
	it_wait_inbox(wbt_ms(15000));
	cr_assert_eq(it_gauge(it_cl.inbox_url, "content_applied"), st.content_applied + 2);
	cr_assert_eq(it_gauge(it_cl.inbox_url, "relation_applied"), st.relation_applied + 3);
	cr_assert_eq(it_gauge(it_cl.inbox_url, "events_applied"), 5,
	    "a post, a delete, two follows and an unfollow");
	up_check_all(c, tok);
	up_once(c, tok, id, up_user_index("user01"));

	/* the upgrade's one step: a rebuild gives each reader their own posts of the release */
	up_rebuild();
	st.rebuilt = true;
	up_check_all(c, tok);
	warble_close(c);
	cr_assert_eq(wbt_cluster_stop(&it_cl, wbt_ms(10000)), 0, "a daemon did not stop cleanly");

	/* the stores now say what they are; relation's copy as it was is kept */
	static const char *svc[] = { "user", "relation", "content", "inbox" };
	for (size_t i = 0; i < 4; i++) {
		char path[1000], layout[64], want[64];
		bool fan;
		snprintf(path, sizeof(path), "%s/%s", dir, svc[i]);
		snprintf(want, sizeof(want), "%s 0/1", svc[i]);
		cr_assert_eq(up_store_read(path, layout, sizeof(layout), &fan), 0, "%s", path);
		cr_assert_str_eq(layout, want, "%s records its layout", path);
		snprintf(path, sizeof(path), "%s.before-shards", svc[i]);
		cr_assert_eq(up_has(dir, path), i == 1, "%s/%s", dir, path);
	}
	char before[1000], layout[64];
	bool fan = false;
	snprintf(before, sizeof(before), "%s/relation.before-shards", dir);
	cr_assert_eq(up_store_read(before, layout, sizeof(layout), &fan), 0);
	cr_assert(fan && layout[0] == '\0', "the copy is the release's store: fan, no layout");

	/* started again: the positions were kept under their new names */
	it_start_as(env, shape);
	up_gauge_wait("log_pulls", 3);
	cr_assert_eq(it_gauge(it_cl.inbox_url, "events_applied"), 0, "events applied again");
	cr_assert_eq(it_gauge(it_cl.inbox_url, "content_applied"), st.content_applied + 2);
	cr_assert_eq(it_gauge(it_cl.inbox_url, "relation_applied"), st.relation_applied + 3);
	cr_assert_eq(wbt_cluster_stop(&it_cl, wbt_ms(10000)), 0, "a daemon did not stop cleanly");

	/* another layout on the upgraded store: refused, naming both */
	if (shape == WBT_ONE) {
		up_refused("warble", dir, "1/2", "relation 0/1", "relation 1/2");
		return;
	}
	for (size_t i = 1; i < 4; i++) {
		char have[32], want1[32], want0[32], prog[32];
		snprintf(prog, sizeof(prog), "warble-%s", svc[i]);
		snprintf(have, sizeof(have), "made as %s 0/1", svc[i]);
		snprintf(want1, sizeof(want1), "%s 1/2", svc[i]);
		snprintf(want0, sizeof(want0), "%s 0/2", svc[i]);
		up_refused(prog, dir, "1/2", have, want1);
		up_refused(prog, dir, "0/2", have, want0);
	}
}

Test(upgrade, five_daemons, .fini = it_fini, .timeout = 120)
{
	up_check(WBT_FIVE);
}

Test(upgrade, one_process, .fini = it_fini, .timeout = 120)
{
	up_check(WBT_ONE);
}

Test(upgrade, other_layout_refused, .fini = it_fini, .timeout = 120)
{
	static const char *svc[] = { "relation", "content", "inbox" };
	const char        *env[] = { "WARBLE_SHARD=0/1", NULL };
	char               old[900];

	/* a store made by this release as 0/1 */
	it_start_as(env, WBT_FIVE);
	cr_assert_eq(wbt_cluster_stop(&it_cl, wbt_ms(10000)), 0);
	for (size_t i = 0; i < 3; i++) {
		char have[32], want1[32], want0[32], prog[32];
		snprintf(prog, sizeof(prog), "warble-%s", svc[i]);
		snprintf(have, sizeof(have), "made as %s 0/1", svc[i]);
		snprintf(want1, sizeof(want1), "%s 1/2", svc[i]);
		snprintf(want0, sizeof(want0), "%s 0/2", svc[i]);
		up_refused(prog, it_cl.data, "1/2", have, want1);
		up_refused(prog, it_cl.data, "0/2", have, want0);
	}
	it_start_as(env, WBT_FIVE); /* refused, and unharmed */
	cr_assert_eq(wbt_cluster_stop(&it_cl, wbt_ms(10000)), 0);

	/* a store of the release before shards: refused before anything changes */
	up_load();
	cr_assert_eq(wbt_path(old, sizeof(old), "old"), 0);
	up_unpack(old);
	for (size_t i = 0; i < 3; i++) {
		char have[64], want[32], prog[32], path[1000], layout[64];
		bool fan;
		snprintf(prog, sizeof(prog), "warble-%s", svc[i]);
		snprintf(have, sizeof(have), "before shards, so it is %s 0/1", svc[i]);
		snprintf(want, sizeof(want), "%s 1/2", svc[i]);
		up_refused(prog, old, "1/2", have, want);
		snprintf(path, sizeof(path), "%s/%s", old, svc[i]);
		cr_assert_eq(up_store_read(path, layout, sizeof(layout), &fan), 0);
		cr_assert_str_eq(layout, "", "%s: no layout recorded by a refused start", path);
		cr_assert_eq(fan, i == 0, "%s", path);
	}
	cr_assert(!up_has(old, "relation.before-shards"), "a refused start took a copy");
}
