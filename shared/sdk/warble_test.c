/*
 * warble_test.c - libwarble against a real cluster (wbt_cluster): every
 * function with typed results, the error codes and messages an
 * application sees, the token kept by the client, concurrent use of one
 * client, and a gateway that is not there.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "warble.h"
#include "wbt.h"
#include "wbt_cluster.h"

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
	cr_assert_neq(warble_open(&c, "bogus://nowhere", 1000), WARBLE_OK);
	cr_assert_str_eq(warble_errname(WARBLE_EEXIST), "NAME_TAKEN");
	cr_assert_str_eq(warble_strerror(WARBLE_ESELF), "cannot follow yourself");
	warble_close(NULL);
	warble_posts_free(NULL);
	warble_users_free(NULL);
	warble_user_free(NULL);
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
	st_err(warble_follow(wc, "carol"), WARBLE_ESELF);
	st_err(warble_follow(wc, "nosuchuser"), WARBLE_ENOUSER);
	cr_assert(strstr(warble_errmsg(wc), "nosuchuser") != NULL, "%s", warble_errmsg(wc));
	st_err(warble_unfollow(wc, "nosuchuser"), WARBLE_ENOUSER);
	st_err(warble_profile(wc, "nosuchuser", &u), WARBLE_ENOUSER);
	st_err(warble_timeline(wc, "nosuchuser", 0, 0, &p), WARBLE_ENOUSER);
	st_err(warble_delete(wc, 1), WARBLE_ENOPOST);
	st_err(warble_follow(wc, NULL), WARBLE_EINVAL);
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
