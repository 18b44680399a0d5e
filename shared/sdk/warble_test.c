/*
 * warble_test.c - libwarble against a real cluster (wbt_cluster): every
 * function with typed results, the error codes and messages an
 * application sees, the token kept by the client, concurrent use of one
 * client, a gateway that is not there; rich posts, uploads and media
 * (0.2), previews (0.3), one post by its id (0.4), blocks and suggestions
 * (0.5); and a program built
 * against the 0.1 header reading posts through the newest shared library.
 */
#include <criterion/criterion.h>
#include <libgen.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "warble.h"
#include "wbt.h"
#include "wbt_cluster.h"
#include "wbt_img.h"
#include "wbt_png.h"

static wbt_cluster    cl;
static warble_client *wc;

static void
st_start(const char *const *env)
{
	cr_assert_eq(wbt_cluster_start(&cl, env), 0, "cluster did not start");
	cr_assert_eq(warble_open(&wc, cl.gateway_url, 10000), WARBLE_OK);
}

static void
st_fini(void)
{
	warble_close(wc);
	wc = NULL;
	wbt_cleanup();
}

/* st_err checks a call's code and that warble_errmsg explains it. */
#define st_err(call, want)                                                            \
	do {                                                                          \
		int st_rc_ = (call);                                                  \
		cr_assert_eq(st_rc_, (want), "%s: got %s (%s), want %s", #call,       \
		    warble_errname(st_rc_), warble_errmsg(wc), warble_errname(want)); \
		cr_assert_neq(warble_errmsg(wc)[0], '\0', "%s: no message", #call);   \
	} while (0)

/* st_home_wait polls the home timeline until it has want posts (fan-out is asynchronous). */
static warble_posts_t *
st_home_wait(warble_client *c, size_t want)
{
	long long       deadline = wbt_now_ms() + 10000;
	warble_posts_t *p;

	for (;;) {
		cr_assert_eq(warble_home(c, 0, 0, &p), WARBLE_OK, "%s", warble_errmsg(c));
		if (p->n == want) {
			return p;
		}
		size_t n = p->n;
		warble_posts_free(p);
		cr_assert_lt(
		    wbt_now_ms(), deadline, "home never held %zu posts (has %zu)", want, n);
		wbt_sleep_ms(20);
	}
}

Test(sdk, open_rejects_bad_arguments)
{
	warble_client *c = (warble_client *)1;

	cr_assert_eq(warble_open(&c, NULL, 1000), WARBLE_EINVAL);
	cr_assert_null(c);
	cr_assert_eq(warble_open(&c, "", 1000), WARBLE_EINVAL);
	cr_assert_eq(warble_open(&c, "bogus://nowhere", 1000), WARBLE_EINVAL);
	cr_assert_eq(warble_open(&c, "inproc://gateway", 1000), WARBLE_EINVAL);
	cr_assert_null(c);
	cr_assert_str_eq(warble_errname(WARBLE_EEXIST), "NAME_TAKEN");
	cr_assert_str_eq(warble_strerror(WARBLE_ESELF), "cannot follow yourself");
	warble_close(NULL);
	warble_posts_free(NULL);
	warble_users_free(NULL);
	warble_user_free(NULL);
	warble_media_free(NULL);
	cr_assert_str_eq(warble_errname(WARBLE_EMEDIATYPE), "BAD_MEDIA");
	cr_assert_str_eq(warble_errname(WARBLE_ENOMEDIA), "NO_SUCH_MEDIA");
}

Test(sdk, no_gateway_is_unavailable, .fini = wbt_cleanup, .timeout = 30)
{
	char           url[160];
	warble_client *c;
	uint64_t       uid;

	cr_assert_eq(wbt_ipc_url(url, sizeof(url), "nobody-home"), 0);
	cr_assert_eq(warble_open(&c, url, 500), WARBLE_OK);
	long long t0 = wbt_now_ms();
	int       rc = warble_register(c, "ghost", "password1", &uid);
	cr_assert(rc == WARBLE_EUNAVAIL || rc == WARBLE_ETIMEDOUT, "got %s", warble_errname(rc));
	cr_assert_lt(wbt_now_ms() - t0, 5000);
	cr_assert_str_eq(
	    warble_errmsg(c), rc == WARBLE_EUNAVAIL ? "gateway unavailable" : "gateway timed out");
	cr_assert_eq(warble_whoami(c, &(warble_user_t *) { NULL }), WARBLE_EAUTH,
	    "no token: refused locally");
	cr_assert_str_eq(warble_errmsg(c), "not logged in");
	warble_close(c);
}

Test(sdk, every_function, .fini = st_fini, .timeout = 90)
{
	warble_client  *bob;
	warble_user_t  *u;
	warble_users_t *us;
	warble_posts_t *p;
	uint64_t        auid = 0, buid = 0, id[4];

	st_start(NULL);
	cr_assert_eq(warble_register(wc, "alice", "password1", &auid), WARBLE_OK);
	cr_assert_gt(auid, 0);
	cr_assert_eq(warble_register(wc, "bob", "password2", &buid), WARBLE_OK);
	cr_assert_neq(auid, buid);
	cr_assert_null(warble_token(wc));
	uint64_t uid = 0;
	cr_assert_eq(warble_login(wc, "alice", "password1", &uid), WARBLE_OK);
	cr_assert_eq(uid, auid);
	cr_assert_not_null(warble_token(wc));

	cr_assert_eq(warble_open(&bob, cl.gateway_url, 10000), WARBLE_OK);
	cr_assert_eq(warble_login(bob, "bob", "password2", NULL), WARBLE_OK);

	cr_assert_eq(warble_update_profile(wc, "Alice", NULL), WARBLE_OK);
	cr_assert_eq(warble_update_profile(wc, NULL, "tea & code"), WARBLE_OK);
	cr_assert_eq(warble_whoami(wc, &u), WARBLE_OK);
	cr_assert_eq(u->uid, auid);
	cr_assert_str_eq(u->name, "alice");
	cr_assert_str_eq(u->display, "Alice", "a NULL display leaves it unchanged");
	cr_assert_str_eq(u->bio, "tea & code");
	cr_assert_gt(u->created, 0);
	warble_user_free(u);

	cr_assert_eq(warble_follow(bob, "alice"), WARBLE_OK);
	for (int i = 0; i < 4; i++) {
		char text[32];
		snprintf(text, sizeof(text), "post %d", i);
		cr_assert_eq(warble_post(wc, text, &id[i]), WARBLE_OK);
		cr_assert_gt(id[i], 0);
	}
	p = st_home_wait(bob, 4);
	cr_assert_eq(p->posts[0].id, id[3]);
	cr_assert_str_eq(p->posts[0].text, "post 3");
	cr_assert_str_eq(p->posts[0].author_name, "alice");
	cr_assert_eq(p->posts[0].author, auid);
	cr_assert_gt(p->posts[0].time, 0);
	cr_assert_eq(p->next, 0);
	warble_posts_free(p);

	/* paging through the timeline, 3 then 1 */
	cr_assert_eq(warble_timeline(bob, "alice", 0, 3, &p), WARBLE_OK);
	cr_assert_eq(p->n, 3);
	cr_assert_eq(p->next, id[1]);
	uint64_t next = p->next;
	warble_posts_free(p);
	cr_assert_eq(warble_timeline(bob, "alice", next, 3, &p), WARBLE_OK);
	cr_assert_eq(p->n, 1);
	cr_assert_eq(p->posts[0].id, id[0]);
	cr_assert_eq(p->next, 0);
	warble_posts_free(p);

	cr_assert_eq(warble_delete(wc, id[3]), WARBLE_OK);
	p = st_home_wait(bob, 3);
	cr_assert_eq(p->posts[0].id, id[2]);
	warble_posts_free(p);

	cr_assert_eq(warble_profile(bob, "alice", &u), WARBLE_OK);
	cr_assert_eq(u->followers, 1);
	cr_assert_eq(u->following, 0);
	cr_assert(u->followed);
	cr_assert_str_eq(u->display, "Alice");
	warble_user_free(u);
	cr_assert_eq(warble_profile(wc, "bob", &u), WARBLE_OK);
	cr_assert_eq(u->following, 1);
	cr_assert_not(u->followed);
	warble_user_free(u);

	cr_assert_eq(warble_fans(wc, "alice", 0, 0, &us), WARBLE_OK);
	cr_assert_eq(us->n, 1);
	cr_assert_eq(us->users[0].uid, buid);
	cr_assert_str_eq(us->users[0].name, "bob");
	warble_users_free(us);
	cr_assert_eq(warble_following(wc, "bob", 0, 0, &us), WARBLE_OK);
	cr_assert_eq(us->n, 1);
	cr_assert_str_eq(us->users[0].name, "alice");
	warble_users_free(us);
	cr_assert_eq(warble_following(wc, "alice", 0, 0, &us), WARBLE_OK);
	cr_assert_eq(us->n, 0);
	warble_users_free(us);

	cr_assert_eq(warble_unfollow(bob, "alice"), WARBLE_OK);
	warble_posts_free(st_home_wait(bob, 0));

	/* The token moves between clients. */
	warble_client *again;
	cr_assert_eq(warble_open(&again, cl.gateway_url, 10000), WARBLE_OK);
	cr_assert_eq(warble_set_token(again, warble_token(bob)), WARBLE_OK);
	cr_assert_eq(warble_whoami(again, &u), WARBLE_OK);
	cr_assert_str_eq(u->name, "bob");
	warble_user_free(u);
	cr_assert_eq(warble_logout(bob), WARBLE_OK);
	cr_assert_null(warble_token(bob), "logout forgets the token");
	cr_assert_eq(warble_whoami(again, &u), WARBLE_EAUTH, "the session is over everywhere");
	warble_close(again);
	warble_close(bob);
}

Test(sdk, errors, .fini = st_fini, .timeout = 90)
{
	char            toolong[300];
	warble_user_t  *u = NULL;
	warble_posts_t *p = NULL;

	st_start(NULL);
	cr_assert_eq(warble_register(wc, "carol", "password1", NULL), WARBLE_OK);
	st_err(warble_register(wc, "carol", "password1", NULL), WARBLE_EEXIST);
	cr_assert_str_eq(warble_errmsg(wc), "username already taken");
	st_err(warble_register(wc, "x", "password1", NULL), WARBLE_EBADNAME);
	st_err(warble_register(wc, "dave", "pw", NULL), WARBLE_EBADPASS);
	st_err(warble_login(wc, "carol", "not-the-password", NULL), WARBLE_ELOGIN);
	cr_assert_null(warble_token(wc), "a failed login sets no token");
	st_err(warble_post(wc, "hi", NULL), WARBLE_EAUTH);

	cr_assert_eq(warble_set_token(wc, "bogus-token"), WARBLE_OK);
	st_err(warble_whoami(wc, &u), WARBLE_EAUTH);
	cr_assert_null(u);
	st_err(warble_home(wc, 0, 0, &p), WARBLE_EAUTH);
	cr_assert_null(p);

	cr_assert_eq(warble_login(wc, "carol", "password1", NULL), WARBLE_OK);
	memset(toolong, 'a', 281);
	toolong[281] = '\0';
	st_err(warble_post(wc, toolong, NULL), WARBLE_ETOOLONG);
	memset(toolong, 0, sizeof(toolong));
	/* 280 characters of 2-byte UTF-8 are fine: characters, not bytes */
	for (int i = 0; i < 140; i++) {
		memcpy(toolong + 2 * i, "\xc3\xa9", 2);
	}
	cr_assert_eq(warble_post(wc, toolong, NULL), WARBLE_OK, "%s", warble_errmsg(wc));
	st_err(warble_post(wc, "\xc3\x28 broken", NULL), WARBLE_EBADTEXT);
	/* only white space, of any kind: nothing would show */
	st_err(warble_post(wc, " \t\n ", NULL), WARBLE_EBADTEXT);
	cr_assert(strstr(warble_errmsg(wc), "white space") != NULL, "%s", warble_errmsg(wc));
	st_err(warble_post(wc, "\xc2\xa0\xe3\x80\x80\xe2\x80\x8b\r\n", NULL), WARBLE_EBADTEXT);
	st_err(
	    warble_post_rich(wc, "\xe3\x80\x80", "a title", NULL, NULL, 0, NULL), WARBLE_EBADTEXT);
	cr_assert_eq(
	    warble_post(wc, "\xe3\x80\x80x\xe3\x80\x80", NULL), WARBLE_OK, "%s", warble_errmsg(wc));
	st_err(warble_follow(wc, "carol"), WARBLE_ESELF);
	st_err(warble_follow(wc, "nosuchuser"), WARBLE_ENOUSER);
	cr_assert(strstr(warble_errmsg(wc), "nosuchuser") != NULL, "%s", warble_errmsg(wc));
	st_err(warble_unfollow(wc, "nosuchuser"), WARBLE_ENOUSER);
	st_err(warble_profile(wc, "nosuchuser", &u), WARBLE_ENOUSER);
	st_err(warble_timeline(wc, "nosuchuser", 0, 0, &p), WARBLE_ENOUSER);
	st_err(warble_delete(wc, 1), WARBLE_ENOPOST);
	st_err(warble_follow(wc, NULL), WARBLE_EINVAL);

	/* one post: a deleted one is gone at once through this gateway, an id never issued
	 * (its node names some shard) is gone too */
	warble_post_t *q = NULL;
	uint64_t       id;
	cr_assert_eq(warble_post(wc, "soon gone", &id), WARBLE_OK);
	cr_assert_eq(warble_post_get(wc, id, &q), WARBLE_OK, "%s", warble_errmsg(wc));
	cr_assert_str_eq(q->text, "soon gone");
	cr_assert_str_eq(q->author_name, "carol");
	warble_post_free(q);
	cr_assert_eq(warble_delete(wc, id), WARBLE_OK);
	q = NULL;
	st_err(warble_post_get(wc, id, &q), WARBLE_ENOPOST);
	cr_assert_null(q);
	st_err(warble_post_get(wc, id + 1, &q), WARBLE_ENOPOST);
	st_err(warble_post_get(wc, 0, &q), WARBLE_EINVAL);
	cr_assert_eq(warble_post_get(wc, id, NULL), WARBLE_EINVAL);
}

Test(sdk, expired_token, .fini = st_fini, .timeout = 60)
{
	const char    *env[] = { "WARBLE_SESSION_TTL=1", NULL };
	warble_user_t *u;
	int            rc;

	st_start(env);
	cr_assert_eq(warble_register(wc, "erin", "password1", NULL), WARBLE_OK);
	cr_assert_eq(warble_login(wc, "erin", "password1", NULL), WARBLE_OK);
	cr_assert_eq(warble_whoami(wc, &u), WARBLE_OK);
	warble_user_free(u);
	long long deadline = wbt_now_ms() + 4000;
	while ((rc = warble_whoami(wc, &u)) == WARBLE_OK) {
		warble_user_free(u);
		cr_assert_lt(wbt_now_ms(), deadline, "session did not expire");
		wbt_sleep_ms(50);
	}
	cr_assert_eq(rc, WARBLE_EAUTH);
	cr_assert_eq(warble_post(wc, "late", NULL), WARBLE_EAUTH);
}

#define ST_THREADS 4
#define ST_POSTS   25

static void *
st_poster(void *arg)
{
	intptr_t ok = 0;

	for (int i = 0; i < ST_POSTS; i++) {
		char     text[64];
		uint64_t id;
		snprintf(text, sizeof(text), "thread %d post %d", (int)(intptr_t)arg, i);
		ok += warble_post(wc, text, &id) == WARBLE_OK && id != 0;
	}
	return (void *)ok;
}

Test(sdk, one_client_many_threads, .fini = st_fini, .timeout = 90)
{
	pthread_t       th[ST_THREADS];
	warble_posts_t *p;
	size_t          total = 0;
	uint64_t        before = 0;

	st_start(NULL);
	cr_assert_eq(warble_register(wc, "gina", "password1", NULL), WARBLE_OK);
	cr_assert_eq(warble_login(wc, "gina", "password1", NULL), WARBLE_OK);
	for (intptr_t i = 0; i < ST_THREADS; i++) {
		cr_assert_eq(pthread_create(&th[i], NULL, st_poster, (void *)i), 0);
	}
	for (int i = 0; i < ST_THREADS; i++) {
		void *ok;
		pthread_join(th[i], &ok);
		cr_assert_eq((intptr_t)ok, ST_POSTS, "thread %d: some posts failed", i);
	}
	/* Page through all of them, 30 at a time, strictly newest first. */
	for (int pages = 0; pages < 10; pages++) {
		cr_assert_eq(warble_timeline(wc, "gina", before, 30, &p), WARBLE_OK);
		for (size_t i = 0; i < p->n; i++) {
			cr_assert(before == 0 || p->posts[i].id < before);
			before = p->posts[i].id;
		}
		total += p->n;
		uint64_t next = p->next;
		warble_posts_free(p);
		if (next == 0) {
			break;
		}
		cr_assert_eq(next, before);
	}
	cr_assert_eq(total, ST_THREADS * ST_POSTS);
}

/* --- rich posts, uploads and media (0.2) -------------------------------- */

/* An upload, the bytes it was made of and the bytes stored (written again by the server). */
typedef struct st_img {
	warble_media_t *m;
	unsigned char  *png;
	size_t          len;
	warble_media_t *stored;
} st_img;

/* st_upload uploads a w x h PNG (pixels from seed) as c and checks the reply. */
static st_img
st_upload(warble_client *c, uint64_t uid, uint32_t w, uint32_t h, uint32_t seed)
{
	st_img im = { 0 };
	char   prefix[32];
	int    rc;

	im.png = wbt_png(w, h, seed, &im.len);
	cr_assert_not_null(im.png);
	rc = warble_upload(c, im.png, im.len, &im.m);
	cr_assert_eq(rc, WARBLE_OK, "upload: %s (%s)", warble_errname(rc), warble_errmsg(c));
	snprintf(prefix, sizeof(prefix), "%llu-", (unsigned long long)uid);
	cr_assert_eq(strncmp(im.m->media, prefix, strlen(prefix)), 0,
	    "a media id names its owner: %s (uid %s)", im.m->media, prefix);
	cr_assert_gt(strlen(im.m->media), strlen(prefix));
	cr_assert_eq(strspn(im.m->media + strlen(prefix), "0123456789"),
	    strlen(im.m->media + strlen(prefix)), "%s", im.m->media);
	cr_assert_str_eq(im.m->type, "image/png");
	cr_assert_eq(im.m->width, w);
	cr_assert_eq(im.m->height, h);
	cr_assert_gt(im.m->size, 0);
	cr_assert_null(im.m->data, "an upload's reply carries no bytes");
	cr_assert_not(im.m->public_);
	cr_assert_eq(im.m->preview_width, w <= 640 && h <= 640 ? w : im.m->preview_width);
	cr_assert_eq(im.m->preview_height, w <= 640 && h <= 640 ? h : im.m->preview_height);
	cr_assert_gt(im.m->preview_size, 0);
	/* what is stored: a PNG written again, of the size the reply gave */
	cr_assert_eq(warble_media(c, im.m->media, &im.stored), WARBLE_OK, "%s", warble_errmsg(c));
	cr_assert_eq(im.stored->size, im.m->size);
	cr_assert_eq(memcmp(im.stored->data, "\x89PNG", 4), 0);
	return im;
}

static void
st_img_free(st_img *im)
{
	warble_media_free(im->m);
	warble_media_free(im->stored);
	free(im->png);
	memset(im, 0, sizeof(*im));
}

/* st_media_same fetches media and its preview as c and checks the bytes are the ones stored, and
 * whether it is public. */
static void
st_media_same(warble_client *c, const st_img *im, bool public_)
{
	warble_media_t *m = NULL;

	cr_assert_eq(warble_media_preview(c, im->m->media, &m), WARBLE_OK, "preview %s: %s",
	    im->m->media, warble_errmsg(c));
	cr_assert_str_eq(m->type, "image/webp");
	cr_assert_eq(m->width, im->m->preview_width);
	cr_assert_eq(m->height, im->m->preview_height);
	cr_assert_eq(m->size, im->m->preview_size);
	cr_assert_eq(memcmp(m->data, "RIFF", 4), 0);
	cr_assert_eq(m->public_, public_);
	warble_media_free(m);
	m = NULL;

	cr_assert_eq(warble_media(c, im->m->media, &m), WARBLE_OK, "media %s: %s", im->m->media,
	    warble_errmsg(c));
	cr_assert_str_eq(m->media, im->m->media);
	cr_assert_str_eq(m->type, "image/png");
	cr_assert_eq(m->width, im->m->width);
	cr_assert_eq(m->height, im->m->height);
	cr_assert_eq(m->size, im->stored->size);
	cr_assert_not_null(m->data);
	cr_assert_eq(memcmp(m->data, im->stored->data, m->size), 0, "the bytes differ");
	cr_assert_eq(((const char *)m->data)[m->size], '\0', "a NUL follows the bytes");
	cr_assert_eq(m->public_, public_, "%s: public %d, want %d", m->media, m->public_, public_);
	warble_media_free(m);
}

/* st_image_is checks one image of a post against its upload. */
static void
st_image_is(const warble_image_t *im, const st_img *up, const char *alt)
{
	cr_assert_str_eq(im->media, up->m->media);
	cr_assert_str_eq(im->type, "image/png");
	cr_assert_eq(im->width, up->m->width);
	cr_assert_eq(im->height, up->m->height);
	cr_assert_eq(im->preview_width, up->m->preview_width);
	cr_assert_eq(im->preview_height, up->m->preview_height);
	cr_assert_str_eq(im->alt, alt);
}

/* st_login opens a second client logged in as name. */
static warble_client *
st_login(const char *name, const char *password, uint64_t *uid)
{
	warble_client *c;

	cr_assert_eq(warble_open(&c, cl.gateway_url, 10000), WARBLE_OK);
	cr_assert_eq(warble_login(c, name, password, uid), WARBLE_OK, "%s", warble_errmsg(c));
	return c;
}

/* st_category collects every post of name's category through pages of limit, newest first. */
static size_t
st_category(
    warble_client *c, const char *name, const char *cat, unsigned limit, uint64_t *ids, size_t max)
{
	warble_posts_t *p;
	uint64_t        before = 0;
	size_t          n = 0;

	for (int pages = 0; pages < 20; pages++) {
		cr_assert_eq(warble_timeline_category(c, name, cat, before, limit, &p), WARBLE_OK,
		    "%s", warble_errmsg(c));
		for (size_t i = 0; i < p->n; i++) {
			if (cat != NULL && cat[0] != '\0') {
				cr_assert_str_eq(p->posts[i].category, cat);
			}
			cr_assert_lt(n, max, "more posts than expected");
			ids[n++] = p->posts[i].id;
		}
		before = p->next;
		warble_posts_free(p);
		if (before == 0) {
			return n;
		}
	}
	cr_assert_fail("category %s: too many pages", cat);
	return n;
}

Test(sdk, rich_posts_and_media, .fini = st_fini, .timeout = 120)
{
	warble_client  *bob, *anon;
	warble_posts_t *p;
	warble_media_t *m = NULL;
	uint64_t        auid = 0, id1, id2, id3, id4, ids[8];

	st_start(NULL);
	cr_assert_eq(warble_register(wc, "alice", "password1", &auid), WARBLE_OK);
	cr_assert_eq(warble_register(wc, "bob", "password2", NULL), WARBLE_OK);
	cr_assert_eq(warble_login(wc, "alice", "password1", NULL), WARBLE_OK);
	bob = st_login("bob", "password2", NULL);
	cr_assert_eq(warble_open(&anon, cl.gateway_url, 10000), WARBLE_OK);
	cr_assert_eq(warble_follow(bob, "alice"), WARBLE_OK);

	/* An upload is its uploader's alone until it is on a post. */
	st_img a = st_upload(wc, auid, 40, 30, 1);
	st_img b = st_upload(wc, auid, 16, 64, 2);
	cr_assert_str_neq(a.m->media, b.m->media);
	st_media_same(wc, &a, false);
	cr_assert_eq(warble_media(bob, a.m->media, &m), WARBLE_ENOMEDIA);
	cr_assert_neq(warble_errmsg(bob)[0], '\0');
	cr_assert_null(m);
	cr_assert_eq(warble_media(anon, a.m->media, &m), WARBLE_ENOMEDIA);

	warble_attach_t two[] = { { a.m->media, "a grey stripe" }, { b.m->media, NULL } };
	cr_assert_eq(warble_post_rich(wc, "look at these", "Grey things", "cats", two, 2, &id1),
	    WARBLE_OK, "%s", warble_errmsg(wc));
	cr_assert_gt(id1, 0);
	cr_assert_eq(warble_post(wc, "plain", &id2), WARBLE_OK);
	st_img          c = st_upload(wc, auid, 8, 8, 3);
	warble_attach_t one[] = { { c.m->media, NULL } };
	cr_assert_eq(warble_post_rich(wc, NULL, NULL, "dogs", one, 1, &id3), WARBLE_OK,
	    "images only, no text: %s", warble_errmsg(wc));

	/* A follower's home carries every field, dimensions included. */
	p = st_home_wait(bob, 3);
	cr_assert_eq(p->posts[0].id, id3);
	cr_assert_str_eq(p->posts[0].text, "");
	cr_assert_str_eq(p->posts[0].title, "");
	cr_assert_str_eq(p->posts[0].category, "dogs");
	cr_assert_eq(p->posts[0].nimages, 1);
	st_image_is(&p->posts[0].images[0], &c, "");
	cr_assert_eq(p->posts[1].id, id2);
	cr_assert_str_eq(p->posts[1].text, "plain");
	cr_assert_str_eq(p->posts[1].title, "");
	cr_assert_str_eq(p->posts[1].category, "");
	cr_assert_null(p->posts[1].images);
	cr_assert_eq(p->posts[1].nimages, 0);
	cr_assert_eq(p->posts[2].id, id1);
	cr_assert_str_eq(p->posts[2].text, "look at these");
	cr_assert_str_eq(p->posts[2].title, "Grey things");
	cr_assert_str_eq(p->posts[2].category, "cats");
	cr_assert_eq(p->posts[2].nimages, 2);
	st_image_is(&p->posts[2].images[0], &a, "a grey stripe");
	st_image_is(&p->posts[2].images[1], &b, "");
	cr_assert_eq(p->posts[2].author, auid);
	cr_assert_str_eq(p->posts[2].author_name, "alice");
	warble_posts_free(p);

	/* The author's timeline, read by anyone, too. */
	cr_assert_eq(warble_timeline(anon, "alice", 0, 0, &p), WARBLE_OK);
	cr_assert_eq(p->n, 3);
	cr_assert_str_eq(p->posts[2].title, "Grey things");
	cr_assert_eq(p->posts[2].nimages, 2);
	st_image_is(&p->posts[2].images[1], &b, "");
	warble_posts_free(p);

	/* One post by its id (0.4), read by anyone, as timelines show it. */
	warble_post_t *one_post = NULL;
	cr_assert_eq(warble_post_get(anon, id1, &one_post), WARBLE_OK, "%s", warble_errmsg(anon));
	cr_assert_eq(one_post->id, id1);
	cr_assert_eq(one_post->author, auid);
	cr_assert_str_eq(one_post->author_name, "alice");
	cr_assert_str_eq(one_post->text, "look at these");
	cr_assert_str_eq(one_post->title, "Grey things");
	cr_assert_str_eq(one_post->category, "cats");
	cr_assert_gt(one_post->time, 0);
	cr_assert_eq(one_post->nimages, 2);
	st_image_is(&one_post->images[0], &a, "a grey stripe");
	st_image_is(&one_post->images[1], &b, "");
	warble_post_free(one_post);
	cr_assert_eq(warble_post_get(bob, id2, &one_post), WARBLE_OK, "logged in, too");
	cr_assert_str_eq(one_post->text, "plain");
	cr_assert_null(one_post->images);
	warble_post_free(one_post);
	warble_post_free(NULL);

	/* On a post, an image is anyone's to read, byte for byte. */
	st_media_same(bob, &a, true);
	st_media_same(anon, &b, true);
	st_media_same(wc, &c, true);

	/* Timelines by category, paged. */
	cr_assert_eq(warble_post_rich(wc, "cat two", NULL, "cats", NULL, 0, &id4), WARBLE_OK, "%s",
	    warble_errmsg(wc));
	cr_assert_eq(st_category(bob, "alice", "cats", 0, ids, 8), 2);
	cr_assert_eq(ids[0], id4);
	cr_assert_eq(ids[1], id1);
	cr_assert_eq(st_category(anon, "alice", "cats", 1, ids, 8), 2, "one per page");
	cr_assert_eq(ids[0], id4);
	cr_assert_eq(ids[1], id1);
	cr_assert_eq(st_category(bob, "alice", "dogs", 0, ids, 8), 1);
	cr_assert_eq(ids[0], id3);
	cr_assert_eq(st_category(bob, "alice", "birds", 0, ids, 8), 0);
	cr_assert_eq(st_category(bob, "alice", NULL, 0, ids, 8), 4, "NULL: every post");
	cr_assert_eq(st_category(bob, "alice", "", 0, ids, 8), 4, "\"\": every post");

	/* Text of only white space is refused, unless the post has an image. */
	st_img          d = st_upload(wc, auid, 8, 8, 5);
	warble_attach_t with_d[] = { { d.m->media, NULL } };
	cr_assert_eq(warble_post_rich(wc, " \n", "A title", NULL, NULL, 0, NULL), WARBLE_EBADTEXT);
	cr_assert_eq(warble_post_rich(wc, " \xe3\x80\x80\n", NULL, NULL, with_d, 1, &id4),
	    WARBLE_OK, "blank text beside an image: %s", warble_errmsg(wc));
	st_img_free(&d);

	st_img_free(&a);
	st_img_free(&b);
	st_img_free(&c);
	warble_close(anon);
	warble_close(bob);
}

/*
 * An upload over the gateway's limit before authentication (64 KiB) is
 * read on only once its first bytes show the token, which the SDK sends
 * before the image: it works as the first request of a connection, and a
 * bad token is refused as UNAUTHORIZED before the image is taken, the
 * connection serving on.
 */
Test(sdk, large_upload_first_on_a_connection, .fini = st_fini, .timeout = 120)
{
	warble_client  *fresh;
	warble_media_t *m = NULL;
	uint64_t        uid = 0;
	size_t          len;
	unsigned char  *png;

	st_start(NULL);
	cr_assert_eq(warble_register(wc, "erin", "password1", &uid), WARBLE_OK);
	cr_assert_eq(warble_login(wc, "erin", "password1", NULL), WARBLE_OK);
	cr_assert_eq(warble_open(&fresh, cl.gateway_url, 10000), WARBLE_OK);
	cr_assert_eq(warble_set_token(fresh, warble_token(wc)), WARBLE_OK);
	st_img big = st_upload(fresh, uid, 400, 300, 5); /* 120,000 pixels: about 118 KiB */
	cr_assert_gt(big.len, 64 * 1024);
	st_media_same(wc, &big, false);
	warble_close(fresh);

	cr_assert_eq(warble_open(&fresh, cl.gateway_url, 10000), WARBLE_OK);
	cr_assert_eq(warble_set_token(fresh, "not-a-session-token"), WARBLE_OK);
	cr_assert_eq(
	    warble_upload(fresh, big.png, big.len, &m), WARBLE_EAUTH, "%s", warble_errmsg(fresh));
	cr_assert_null(m);
	cr_assert_eq(warble_set_token(fresh, warble_token(wc)), WARBLE_OK);
	cr_assert_not_null(png = wbt_png(300, 300, 6, &len));
	cr_assert_eq(warble_upload(fresh, png, len, &m), WARBLE_OK, "after a refused upload: %s",
	    warble_errmsg(fresh));
	cr_assert(m->width == 300 && m->height == 300 && m->size > 0, "the image, decoded");
	warble_media_free(m);
	free(png);
	st_img_free(&big);
	warble_close(fresh);
}

Test(sdk, media_errors, .fini = st_fini, .timeout = 120)
{
	warble_client  *dave, *anon;
	warble_media_t *m = NULL;
	st_img          im[6];
	uint64_t        cuid = 0, duid = 0, id;
	char           *s;
	int             rc;

	st_start(NULL);
	cr_assert_eq(warble_register(wc, "carol", "password1", &cuid), WARBLE_OK);
	cr_assert_eq(warble_register(wc, "dave", "password2", NULL), WARBLE_OK);
	cr_assert_eq(warble_open(&anon, cl.gateway_url, 10000), WARBLE_OK);
	cr_assert_eq(warble_upload(anon, "x", 1, &m), WARBLE_EAUTH);
	cr_assert_str_eq(warble_errmsg(anon), "not logged in");
	cr_assert_eq(warble_login(wc, "carol", "password1", NULL), WARBLE_OK);
	dave = st_login("dave", "password2", &duid);

	/* Checked before anything is sent. */
	st_err(warble_upload(wc, NULL, 10, &m), WARBLE_EINVAL);
	cr_assert_null(m);
	cr_assert_eq(warble_upload(wc, "x", 1, NULL), WARBLE_EINVAL);
	st_err(warble_media(wc, NULL, &m), WARBLE_EINVAL);
	st_err(warble_media_preview(wc, NULL, &m), WARBLE_EINVAL);
	cr_assert_eq(warble_media_preview(wc, "1-1", NULL), WARBLE_EINVAL);
	st_err(warble_post_rich(wc, NULL, NULL, NULL, NULL, 0, &id), WARBLE_EINVAL);
	st_err(warble_post_rich(wc, "hi", NULL, NULL, NULL, 1, &id), WARBLE_EINVAL);
	warble_attach_t nomedia = { NULL, "alt" };
	st_err(warble_post_rich(wc, "hi", NULL, NULL, &nomedia, 1, &id), WARBLE_EINVAL);
	st_err(warble_timeline_category(wc, NULL, "cats", 0, 0, &(warble_posts_t *) { NULL }),
	    WARBLE_EINVAL);

	/* Not an image, or a PNG cut inside its header. */
	const char text[] = "hello, I am not an image at all";
	st_err(warble_upload(wc, text, sizeof(text) - 1, &m), WARBLE_EMEDIATYPE);
	cr_assert_null(m);
	im[0] = st_upload(wc, cuid, 20, 10, 1);
	st_err(warble_upload(wc, im[0].png, 20, &m), WARBLE_EMEDIATYPE);
	st_err(warble_upload(wc, im[0].png, 0, &m), WARBLE_EMEDIATYPE); /* nothing at all */
	/* A whole PNG with more after it (a file joined to another). */
	size_t         jn;
	unsigned char *joined = wbt_img_join(im[0].png, im[0].len, "<html>", 6, &jn);
	st_err(warble_upload(wc, joined, jn, &m), WARBLE_EMEDIATYPE);
	free(joined);

	/* Unknown media, or not a media id at all. */
	st_err(warble_media(wc, "1-1", &m), WARBLE_ENOMEDIA);
	cr_assert_null(m);
	rc = warble_media(wc, "not-an-id", &m);
	cr_assert(rc == WARBLE_ENOMEDIA || rc == WARBLE_EINVAL, "got %s", warble_errname(rc));
	/* Someone else's upload, not yet on a post: invisible. */
	st_img theirs = st_upload(dave, duid, 12, 12, 9);
	st_err(warble_media(wc, theirs.m->media, &m), WARBLE_ENOMEDIA);
	st_err(warble_media_preview(wc, theirs.m->media, &m), WARBLE_ENOMEDIA);

	/* Not your image (FORBIDDEN, as HTTP's 403 in tests/http/media_test.c). */
	warble_attach_t att[5] = { { theirs.m->media, NULL } };
	st_err(warble_post_rich(wc, "stolen", NULL, NULL, att, 1, &id), WARBLE_EPERM);
	st_media_same(dave, &theirs, false);

	/* Five images are one too many; the refused post attaches none of them. */
	for (int i = 1; i < 5; i++) {
		im[i] = st_upload(wc, cuid, 10 + (uint32_t)i, 10, (uint32_t)i);
	}
	for (int i = 0; i < 5; i++) {
		att[i] = (warble_attach_t) { im[i].m->media, NULL };
	}
	st_err(warble_post_rich(wc, "five", NULL, NULL, att, 5, &id), WARBLE_EINVAL);
	st_media_same(wc, &im[0], false);
	cr_assert_eq(warble_post_rich(wc, "four", NULL, NULL, att, 4, &id), WARBLE_OK,
	    "the refused post attached nothing: %s", warble_errmsg(wc));
	st_media_same(wc, &im[0], true);
	/* Each image is on one post only. */
	st_err(warble_post_rich(wc, "again", NULL, NULL, att, 1, &id), WARBLE_EINVAL);
	st_err(warble_post_rich(wc, "again", NULL, NULL, &att[3], 2, &id), WARBLE_EINVAL);
	st_media_same(wc, &im[4], false);

	/* Titles: 100 characters (not bytes), no more. */
	s = wbt_repeat("t", 101);
	st_err(warble_post_rich(wc, "x", s, NULL, NULL, 0, &id), WARBLE_EINVAL);
	s[100] = '\0';
	cr_assert_eq(
	    warble_post_rich(wc, "x", s, NULL, NULL, 0, &id), WARBLE_OK, "%s", warble_errmsg(wc));
	free(s);
	s = wbt_repeat("\xc3\xa9", 100);
	cr_assert_eq(warble_post_rich(wc, "x", s, NULL, NULL, 0, &id), WARBLE_OK,
	    "100 two-byte characters: %s", warble_errmsg(wc));
	free(s);
	st_err(warble_post_rich(wc, "x", "bad \xff title", NULL, NULL, 0, &id), WARBLE_EINVAL);

	/* Categories: [a-z0-9_]{1,32}. */
	st_err(warble_post_rich(wc, "x", NULL, "Bad-Cat", NULL, 0, &id), WARBLE_EINVAL);
	st_err(warble_post_rich(wc, "x", NULL, "CAPS", NULL, 0, &id), WARBLE_EINVAL);
	s = wbt_repeat("c", 33);
	st_err(warble_post_rich(wc, "x", NULL, s, NULL, 0, &id), WARBLE_EINVAL);
	s[32] = '\0';
	cr_assert_eq(
	    warble_post_rich(wc, "x", NULL, s, NULL, 0, &id), WARBLE_OK, "%s", warble_errmsg(wc));
	free(s);
	cr_assert_eq(warble_post_rich(wc, "x", NULL, "snake_case_9", NULL, 0, &id), WARBLE_OK, "%s",
	    warble_errmsg(wc));

	/* Alt text: 1000 characters, no more. */
	s = wbt_repeat("a", 1001);
	att[0] = (warble_attach_t) { im[4].m->media, s };
	st_err(warble_post_rich(wc, "alt", NULL, NULL, att, 1, &id), WARBLE_EINVAL);
	s[1000] = '\0';
	cr_assert_eq(warble_post_rich(wc, "alt", NULL, NULL, att, 1, &id), WARBLE_OK, "%s",
	    warble_errmsg(wc));
	free(s);

	/* Text: none at all only with images, and still at most 280 characters. */
	rc = warble_post_rich(wc, "", NULL, "cats", NULL, 0, &id);
	cr_assert_neq(rc, WARBLE_OK, "an empty post without images");
	im[5] = st_upload(wc, cuid, 5, 5, 5);
	s = wbt_repeat("z", 281);
	att[0] = (warble_attach_t) { im[5].m->media, NULL };
	st_err(warble_post_rich(wc, s, NULL, NULL, att, 1, &id), WARBLE_ETOOLONG);
	free(s);
	cr_assert_eq(
	    warble_post_rich(wc, "", NULL, NULL, att, 1, &id), WARBLE_OK, "%s", warble_errmsg(wc));

	for (int i = 0; i < 6; i++) {
		st_img_free(&im[i]);
	}
	st_img_free(&theirs);
	warble_close(anon);
	warble_close(dave);
}

/* --- blocks and suggestions (0.5) ------------------------------------------ */

/* warble_user_t kept its size: the new fields took padding and one reserved slot */
_Static_assert(sizeof(void *) != 8 || sizeof(warble_user_t) == 128, "warble_user_t's size");

/* st_as logs c in as name (registering it first); its uid. */
static uint64_t
st_as(warble_client *c, const char *name)
{
	uint64_t uid;

	cr_assert_eq(warble_register(c, name, "password1", &uid), WARBLE_OK, "%s", name);
	cr_assert_eq(warble_login(c, name, "password1", NULL), WARBLE_OK, "%s", name);
	return uid;
}

Test(sdk, blocks, .fini = st_fini, .timeout = 90)
{
	warble_client  *bob;
	warble_user_t  *u;
	warble_users_t *us;
	warble_posts_t *p;
	uint64_t        buid, id;

	st_start(NULL);
	cr_assert_eq(warble_open(&bob, cl.gateway_url, 10000), WARBLE_OK);
	(void)st_as(wc, "ann");
	buid = st_as(bob, "ben");
	cr_assert_eq(warble_follow(wc, "ben"), WARBLE_OK);
	cr_assert_eq(warble_follow(bob, "ann"), WARBLE_OK);
	cr_assert_eq(warble_post(bob, "ben writes", &id), WARBLE_OK);

	cr_assert_eq(warble_block(wc, "ben"), WARBLE_OK, "%s", warble_errmsg(wc));
	cr_assert_eq(warble_block(wc, "ben"), WARBLE_OK, "again: nothing changes");
	cr_assert_eq(warble_profile(wc, "ben", &u), WARBLE_OK);
	cr_assert(u->blocking && !u->blocked_by && !u->followed);
	cr_assert_eq(u->followers, 0, "ann's follow ended");
	cr_assert_eq(u->following, 0, "ben's follow ended");
	warble_user_free(u);
	cr_assert_eq(warble_profile(bob, "ann", &u), WARBLE_OK);
	cr_assert(!u->blocking && u->blocked_by && !u->followed);
	warble_user_free(u);

	st_err(warble_follow(wc, "ben"), WARBLE_EBLOCKED);
	cr_assert(strstr(warble_errmsg(wc), "unblock") != NULL, "%s", warble_errmsg(wc));
	cr_assert_eq(warble_follow(bob, "ann"), WARBLE_EBLOCKED);
	cr_assert(strstr(warble_errmsg(bob), "blocks you") != NULL, "%s", warble_errmsg(bob));
	cr_assert_str_eq(warble_errname(WARBLE_EBLOCKED), "BLOCKED");

	/* neither reads the other's posts: timeline and the post on its own */
	cr_assert_eq(warble_timeline(wc, "ben", 0, 0, &p), WARBLE_OK);
	cr_assert_eq(p->n, 0, "ann sees ben's posts while blocking him");
	warble_posts_free(p);
	cr_assert_eq(warble_post_get(wc, id, &(warble_post_t *) { NULL }), WARBLE_ENOPOST);
	cr_assert_eq(warble_post(wc, "ann writes", &id), WARBLE_OK);
	cr_assert_eq(warble_timeline(bob, "ann", 0, 0, &p), WARBLE_OK);
	cr_assert_eq(p->n, 0, "ben sees ann's posts while blocked");
	warble_posts_free(p);
	cr_assert_eq(warble_post_get(bob, id, &(warble_post_t *) { NULL }), WARBLE_ENOPOST);

	cr_assert_eq(warble_blocks(wc, 0, 0, &us), WARBLE_OK);
	cr_assert_eq(us->n, 1);
	cr_assert_eq(us->users[0].uid, buid);
	cr_assert_str_eq(us->users[0].name, "ben");
	warble_users_free(us);
	cr_assert_eq(warble_blocks(bob, 0, 0, &us), WARBLE_OK);
	cr_assert_eq(us->n, 0);
	warble_users_free(us);
	st_err(warble_block(wc, "ann"), WARBLE_EINVAL);
	st_err(warble_block(wc, "nobody_here"), WARBLE_ENOUSER);
	cr_assert_eq(warble_block(wc, NULL), WARBLE_EINVAL);
	cr_assert_eq(warble_blocks(wc, 0, 0, NULL), WARBLE_EINVAL);

	cr_assert_eq(warble_unblock(wc, "ben"), WARBLE_OK);
	cr_assert_eq(warble_unblock(wc, "ben"), WARBLE_OK, "again: nothing changes");
	cr_assert_eq(warble_timeline(wc, "ben", 0, 0, &p), WARBLE_OK);
	cr_assert_eq(p->n, 1);
	warble_posts_free(p);
	cr_assert_eq(warble_follow(bob, "ann"), WARBLE_OK, "%s", warble_errmsg(bob));
	warble_close(bob);
}

Test(sdk, suggestions, .fini = st_fini, .timeout = 90)
{
	warble_client  *c;
	warble_users_t *us;

	st_start(NULL);
	cr_assert_eq(warble_open(&c, cl.gateway_url, 10000), WARBLE_OK);
	/* ann follows boz and cyd; boz follows dee and eve, cyd follows dee: dee first, then eve */
	(void)st_as(c, "boz");
	(void)st_as(c, "cyd");
	(void)st_as(c, "dee");
	(void)st_as(c, "eve");
	cr_assert_eq(warble_login(c, "boz", "password1", NULL), WARBLE_OK);
	cr_assert_eq(warble_follow(c, "dee"), WARBLE_OK);
	cr_assert_eq(warble_follow(c, "eve"), WARBLE_OK);
	cr_assert_eq(warble_login(c, "cyd", "password1", NULL), WARBLE_OK);
	cr_assert_eq(warble_follow(c, "dee"), WARBLE_OK);
	(void)st_as(wc, "ann");
	cr_assert_eq(warble_suggestions(wc, 0, &us), WARBLE_OK, "%s", warble_errmsg(wc));
	cr_assert_geq(us->n, 1, "nobody followed yet: the most followed come");
	cr_assert_str_eq(us->users[0].name, "dee");
	cr_assert_eq(us->users[0].followed_by, 0);
	warble_users_free(us);

	cr_assert_eq(warble_follow(wc, "boz"), WARBLE_OK);
	cr_assert_eq(warble_follow(wc, "cyd"), WARBLE_OK);
	cr_assert_eq(warble_suggestions(wc, 2, &us), WARBLE_OK, "%s", warble_errmsg(wc));
	cr_assert_eq(us->n, 2);
	cr_assert_str_eq(us->users[0].name, "dee");
	cr_assert_eq(us->users[0].followed_by, 2);
	cr_assert_str_eq(us->users[1].name, "eve");
	cr_assert_eq(us->users[1].followed_by, 1);
	warble_users_free(us);

	/* followed, or blocked either way: never suggested */
	cr_assert_eq(warble_follow(wc, "dee"), WARBLE_OK);
	cr_assert_eq(warble_login(c, "eve", "password1", NULL), WARBLE_OK);
	cr_assert_eq(warble_block(c, "ann"), WARBLE_OK);
	cr_assert_eq(warble_suggestions(wc, 0, &us), WARBLE_OK, "%s", warble_errmsg(wc));
	for (size_t i = 0; i < us->n; i++) {
		cr_assert(strcmp(us->users[i].name, "dee") != 0 &&
		              strcmp(us->users[i].name, "eve") != 0 &&
		              strcmp(us->users[i].name, "ann") != 0 &&
		              strcmp(us->users[i].name, "boz") != 0,
		    "%s suggested", us->users[i].name);
	}
	warble_users_free(us);
	cr_assert_eq(warble_suggestions(wc, 0, NULL), WARBLE_EINVAL);
	warble_close(c);
}

/* --- the 0.1 ABI ----------------------------------------------------------- */

/* st_sh runs a shell command (printf-style) and returns its exit status. */
static int __attribute__((format(printf, 1, 2))) st_sh(const char *fmt, ...)
{
	char    cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* st_shared_lib finds the build's libwarble.so.0 (<build>/test/warble_test -> <build>/dist). */
static void
st_shared_lib(char *buf, size_t n)
{
	char    self[512], path[600];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

	cr_assert_gt(len, 0);
	self[len] = '\0';
	snprintf(path, sizeof(path), "%s/../dist/libwarble.so.0", dirname(self));
	cr_assert(
	    realpath(path, buf) != NULL && strlen(buf) < n, "no %s: `make sdk` builds it", path);
}

Test(sdk, delete_account, .fini = st_fini, .timeout = 60)
{
	warble_user_t *u = NULL;
	uint64_t       uid;

	st_start(NULL);
	st_err(warble_delete_account(wc, "password1"), WARBLE_EAUTH); /* not logged in */
	cr_assert_eq(warble_register(wc, "gwen", "password1", &uid), WARBLE_OK);
	cr_assert_eq(warble_login(wc, "gwen", "password1", NULL), WARBLE_OK);
	st_err(warble_delete_account(wc, NULL), WARBLE_EINVAL);
	st_err(warble_delete_account(wc, "password2"), WARBLE_ELOGIN);
	cr_assert_not_null(warble_token(wc), "a wrong password keeps the session");
	cr_assert_eq(warble_delete_account(wc, "password1"), WARBLE_OK, "%s", warble_errmsg(wc));
	cr_assert_null(warble_token(wc), "the token is forgotten");
	st_err(warble_profile(wc, "gwen", &u), WARBLE_ENOUSER);
	st_err(warble_login(wc, "gwen", "password1", NULL), WARBLE_ELOGIN);
	cr_assert_eq(warble_delete_account(NULL, "x"), WARBLE_EINVAL);
}

Test(sdk, old_header_program, .fini = st_fini, .timeout = 120)
{
	const char     *src = "tests/data/abi/warble-0.1-reader.c";
	char            lib[4096], dir[256], line[1024], want[1024];
	warble_posts_t *p;
	uint64_t        uid, id;
	FILE           *f;

	if (wbt_ms(1) > 1) {
		cr_skip_test("sanitized build: the program would need the sanitizer's runtime");
	}
	cr_assert_eq(access(src, R_OK), 0, "run from the checkout (tests/run.sh does)");
	st_shared_lib(lib, sizeof(lib));
	/* 0.1's functions stay in WARBLE_0, 0.2's are in WARBLE_0.2, 0.3's in WARBLE_0.3, 0.4's in
	 * WARBLE_0.4, 0.5's in WARBLE_0.5 */
	cr_assert_eq(st_sh("nm -D --defined-only %s | grep -q ' warble_timeline@@WARBLE_0$'", lib),
	    0, "warble_timeline is in WARBLE_0");
	static const char *const new_fns[] = { "warble_post_rich", "warble_upload", "warble_media",
		"warble_media_free", "warble_timeline_category" };
	for (size_t i = 0; i < sizeof(new_fns) / sizeof(new_fns[0]); i++) {
		cr_assert_eq(
		    st_sh("nm -D --defined-only %s | grep -q ' %s@@WARBLE_0.2$'", lib, new_fns[i]),
		    0, "%s is in WARBLE_0.2", new_fns[i]);
	}
	cr_assert_eq(
	    st_sh("nm -D --defined-only %s | grep -q ' warble_media_preview@@WARBLE_0.3$'", lib), 0,
	    "warble_media_preview is in WARBLE_0.3");
	static const char *const fns_0_4[] = { "warble_post_get", "warble_post_free" };
	for (size_t i = 0; i < sizeof(fns_0_4) / sizeof(fns_0_4[0]); i++) {
		cr_assert_eq(
		    st_sh("nm -D --defined-only %s | grep -q ' %s@@WARBLE_0.4$'", lib, fns_0_4[i]),
		    0, "%s is in WARBLE_0.4", fns_0_4[i]);
	}
	static const char *const fns_0_5[] = { "warble_block", "warble_unblock", "warble_blocks",
		"warble_suggestions", "warble_delete_account" };
	for (size_t i = 0; i < sizeof(fns_0_5) / sizeof(fns_0_5[0]); i++) {
		cr_assert_eq(
		    st_sh("nm -D --defined-only %s | grep -q ' %s@@WARBLE_0.5$'", lib, fns_0_5[i]),
		    0, "%s is in WARBLE_0.5", fns_0_5[i]);
	}

	st_start(NULL);
	cr_assert_eq(warble_register(wc, "erin", "password1", &uid), WARBLE_OK);
	cr_assert_eq(warble_login(wc, "erin", "password1", NULL), WARBLE_OK);
	cr_assert_eq(warble_post(wc, "plain one", &id), WARBLE_OK);
	st_img          a = st_upload(wc, uid, 24, 12, 4);
	warble_attach_t att = { a.m->media, "a stripe" };
	cr_assert_eq(warble_post_rich(wc, "rich one", "A title", "abi", &att, 1, &id), WARBLE_OK,
	    "%s", warble_errmsg(wc));
	cr_assert_eq(warble_post(wc, "plain two", &id), WARBLE_OK);
	st_img_free(&a);

	/* Built against the 0.1 header, linked to this libwarble.so.0. */
	cr_assert_eq(wbt_path(dir, sizeof(dir), "abi"), 0);
	cr_assert_eq(mkdir(dir, 0700), 0);
	cr_assert_eq(st_sh("ln -s %s %s/libwarble.so.0", lib, dir), 0);
	cr_assert_eq(st_sh("cc -std=c11 -Wall -Wextra -Werror -Iproto -o %s/reader %s "
	                   "%s/libwarble.so.0",
	                 dir, src, dir),
	    0, "build the 0.1 program");
	cr_assert_eq(st_sh("nm -D %s/reader | grep -q ' warble_timeline@WARBLE_0$'", dir), 0,
	    "the 0.1 program asks for WARBLE_0");

	snprintf(
	    line, sizeof(line), "LD_LIBRARY_PATH=%s %s/reader %s erin", dir, dir, cl.gateway_url);
	cr_assert_not_null(f = popen(line, "r"));
	cr_assert_eq(warble_timeline(wc, "erin", 0, 0, &p), WARBLE_OK);
	cr_assert_eq(p->n, 3);
	cr_assert_str_eq(p->posts[1].title, "A title", "the new header sees the new fields");
	cr_assert_not_null(fgets(line, sizeof(line), f), "the 0.1 program printed nothing");
	snprintf(want, sizeof(want), "size %zu\n", sizeof(warble_post_t));
	cr_assert_str_eq(line, want, "a post keeps its size");
	for (size_t i = 0; i < p->n; i++) {
		const warble_post_t *q = &p->posts[i];
		snprintf(want, sizeof(want), "%llu %llu %llu %s %s\n", (unsigned long long)q->id,
		    (unsigned long long)q->author, (unsigned long long)q->time, q->author_name,
		    q->text);
		cr_assert_not_null(fgets(line, sizeof(line), f), "post %zu missing", i);
		cr_assert_str_eq(line, want, "post %zu as the 0.1 program reads it", i);
	}
	cr_assert_null(fgets(line, sizeof(line), f), "more posts than there are: %s", line);
	warble_posts_free(p);
	cr_assert_eq(pclose(f), 0, "the 0.1 program failed");
}
