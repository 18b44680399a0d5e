/*
 * bulk_test.c - the load generator's setup ops on a real cluster:
 * user.register_many and rel.follow_many keep the invariants of
 * user.register and rel.follow (checks, idempotence, exact counts, one
 * event per new follow, inbox backfill).
 */
#include <criterion/criterion.h>
#include <string.h>

#include "rt_client.h"
#include "wbt_cluster.h"

static wbt_cluster cl;
static rt_client  *user, *rel, *content, *inbox;

static void
setup(void)
{
	cr_assert_eq(wbt_cluster_start(&cl, NULL), 0);
	cr_assert_eq(rt_client_open(&user, cl.user_url, NULL), 0);
	cr_assert_eq(rt_client_open(&rel, cl.relation_url, NULL), 0);
	cr_assert_eq(rt_client_open(&content, cl.content_url, NULL), 0);
	cr_assert_eq(rt_client_open(&inbox, cl.inbox_url, NULL), 0);
}

static void
teardown(void)
{
	rt_client_close(user);
	rt_client_close(rel);
	rt_client_close(content);
	rt_client_close(inbox);
	wbt_cleanup();
}

static int
register_many(const char *prefix, uint64_t from, uint64_t n, uint64_t *uids)
{
	wb_obj         *req = wb_request(WB_OP_USER_REGISTER_MANY), *rep = NULL;
	const uint64_t *v;
	size_t          nv = 0;

	wb_set_cstr(req, WB_F_NAME, prefix);
	wb_set_u64(req, WB_F_FROM, from);
	wb_set_u64(req, WB_F_LIMIT, n);
	wb_set_cstr(req, WB_F_PASSWORD, "bulk-password");
	int rc = wbt_call(user, req, &rep);
	if (rc == WB_OK && uids != NULL) {
		cr_assert(wb_get_u64s(rep, WB_F_UIDS, &v, &nv));
		cr_assert_eq(nv, n);
		memcpy(uids, v, n * sizeof(uint64_t));
	}
	wb_msg_free(rep);
	return rc;
}

static int
lookup(const char *name, uint64_t *uid)
{
	wb_obj *req = wb_request(WB_OP_USER_LOOKUP), *rep = NULL;

	wb_set_cstr(req, WB_F_NAME, name);
	int rc = wbt_call(user, req, &rep);
	if (rc == WB_OK && uid != NULL) {
		*uid = wb_u64(rep, WB_F_UID, 0);
	}
	wb_msg_free(rep);
	return rc;
}

static int
follow_many(uint64_t target, const uint64_t *uids, size_t n, uint64_t *count)
{
	wb_obj *req = wb_request(WB_OP_REL_FOLLOW_MANY), *rep = NULL;

	wb_set_u64(req, WB_F_TARGET, target);
	wb_set_u64s(req, WB_F_UIDS, uids, n);
	int rc = wbt_call(rel, req, &rep);
	if (rc == WB_OK && count != NULL) {
		*count = wb_u64(rep, WB_F_COUNT, UINT64_MAX);
	}
	wb_msg_free(rep);
	return rc;
}

/* counts returns uid's following and followers counts. */
static void
counts(uint64_t uid, uint64_t *following, uint64_t *followers)
{
	wb_obj       *req = wb_request(WB_OP_REL_COUNTS), *rep = NULL;
	const wb_obj *u;
	size_t        n = 0;

	wb_set_u64s(req, WB_F_UIDS, &uid, 1);
	cr_assert_eq(wbt_call(rel, req, &rep), WB_OK);
	cr_assert(wb_get_objs(rep, WB_F_USERS, &u, &n) && n == 1);
	*following = wb_u64(&u[0], WB_F_FOLLOWING, UINT64_MAX);
	*followers = wb_u64(&u[0], WB_F_FOLLOWERS, UINT64_MAX);
	wb_msg_free(rep);
}

/* log_last returns the relation log's last seq. */
static uint64_t
log_last(void)
{
	wb_obj *req = wb_request(WB_OP_REL_LOG), *rep = NULL;

	wb_set_u64(req, WB_F_FROM, UINT64_MAX);
	cr_assert_eq(wbt_call(rel, req, &rep), WB_OK);
	uint64_t last = wb_u64(rep, WB_F_LAST, UINT64_MAX);
	wb_msg_free(rep);
	return last;
}

Test(bulk, register_many, .init = setup, .fini = teardown, .timeout = 60)
{
	uint64_t uids[3], uid, more[2];
	wb_obj  *req, *rep = NULL;

	cr_assert_eq(register_many("bk", 7, 3, uids), WB_OK);
	cr_assert_eq(uids[1], uids[0] + 1);
	cr_assert_eq(uids[2], uids[0] + 2);
	cr_assert_eq(lookup("bk8", &uid), WB_OK);
	cr_assert_eq(uid, uids[1]);
	/* every account logs in with the password */
	req = wb_request(WB_OP_USER_LOGIN);
	wb_set_cstr(req, WB_F_NAME, "bk9");
	wb_set_cstr(req, WB_F_PASSWORD, "bulk-password");
	cr_assert_eq(wbt_call(user, req, &rep), WB_OK);
	cr_assert_eq(wb_u64(rep, WB_F_UID, 0), uids[2]);
	wb_msg_free(rep);
	req = wb_request(WB_OP_USER_LOGIN);
	wb_set_cstr(req, WB_F_NAME, "bk9");
	wb_set_cstr(req, WB_F_PASSWORD, "wrong-password");
	cr_assert_eq(wbt_call(user, req, NULL), WB_ELOGIN);
	/* a taken name fails the whole call: bk10 is not written */
	cr_assert_eq(register_many("bk", 9, 2, NULL), WB_EEXIST);
	cr_assert_eq(lookup("bk10", NULL), WB_ENOUSER);
	/* the same checks as user.register */
	cr_assert_eq(register_many("b", 1, 1, NULL), WB_EBADNAME); /* "b1": too short */
	cr_assert_eq(register_many("No Way", 1, 1, NULL), WB_EBADNAME);
	cr_assert_eq(register_many("bk", 100, 0, NULL), WB_EINVAL);
	cr_assert_eq(register_many("bk", 100, 10001, NULL), WB_EINVAL);
	req = wb_request(WB_OP_USER_REGISTER_MANY);
	wb_set_cstr(req, WB_F_NAME, "bk");
	wb_set_u64(req, WB_F_FROM, 100);
	wb_set_u64(req, WB_F_LIMIT, 1);
	wb_set_cstr(req, WB_F_PASSWORD, "short");
	cr_assert_eq(wbt_call(user, req, NULL), WB_EBADPASS);
	/* uids stay consecutive with single registrations */
	cr_assert_eq(register_many("bk", 10, 2, more), WB_OK);
	cr_assert_eq(more[0], uids[2] + 1);
}

Test(bulk, follow_many, .init = setup, .fini = teardown, .timeout = 60)
{
	uint64_t u[5], count, fg, fr;

	cr_assert_eq(register_many("fm", 0, 5, u), WB_OK);
	/* a post by the target before the follows: backfilled into new fans' inboxes */
	wb_obj *req = wb_request(WB_OP_POST_PUBLISH), *rep = NULL;
	wb_set_u64(req, WB_F_UID, u[0]);
	wb_set_cstr(req, WB_F_TEXT, "before the fans came");
	cr_assert_eq(wbt_call(content, req, &rep), WB_OK);
	uint64_t post = wb_u64(rep, WB_F_ID, 0);
	wb_msg_free(rep);

	uint64_t last0 = log_last();
	uint64_t fans[] = { u[1], u[2], u[1], u[3] }; /* u[1] twice */
	cr_assert_eq(follow_many(u[0], fans, 4, &count), WB_OK);
	cr_assert_eq(count, 3);
	cr_assert_eq(log_last(), last0 + 3, "one event per new follow");
	counts(u[0], &fg, &fr);
	cr_assert_eq(fr, 3);
	counts(u[1], &fg, &fr);
	cr_assert_eq(fg, 1);
	/* idempotent; a single rel.follow of an existing edge changes nothing either */
	cr_assert_eq(follow_many(u[0], fans, 4, &count), WB_OK);
	cr_assert_eq(count, 0);
	cr_assert_eq(log_last(), last0 + 3);
	uint64_t more[] = { u[3], u[4] };
	cr_assert_eq(follow_many(u[0], more, 2, &count), WB_OK);
	cr_assert_eq(count, 1);
	counts(u[0], &fg, &fr);
	cr_assert_eq(fr, 4);
	/* the same refusals as rel.follow; nothing written */
	uint64_t self[] = { u[4], u[0] };
	cr_assert_eq(follow_many(u[0], self, 2, NULL), WB_ESELF);
	uint64_t ghost[] = { u[4] + 1000 };
	cr_assert_eq(follow_many(u[1], ghost, 1, NULL), WB_ENOUSER);
	cr_assert_eq(follow_many(u[4] + 1000, &u[1], 1, NULL), WB_ENOUSER);
	counts(u[1], &fg, &fr);
	cr_assert_eq(fr, 0);
	cr_assert_eq(log_last(), last0 + 4);
	/* rel.fans lists them */
	req = wb_request(WB_OP_REL_FANS);
	wb_set_u64(req, WB_F_UID, u[0]);
	cr_assert_eq(wbt_call(rel, req, &rep), WB_OK);
	const uint64_t *v;
	size_t          n = 0;
	cr_assert(wb_get_u64s(rep, WB_F_UIDS, &v, &n));
	cr_assert_eq(n, 4);
	wb_msg_free(rep);
	/* the inbox hears every follow and backfills the earlier post */
	long long dl = wbt_now_ms() + 20000;
	for (int i = 1; i <= 4; i++) {
		for (;;) {
			const wb_obj *posts;
			size_t        np = 0;
			req = wb_request(WB_OP_INBOX_HOME);
			wb_set_u64(req, WB_F_UID, u[i]);
			cr_assert_eq(wbt_call(inbox, req, &rep), WB_OK);
			bool got = wb_get_objs(rep, WB_F_POSTS, &posts, &np) && np == 1 &&
			           wb_u64(&posts[0], WB_F_ID, 0) == post;
			wb_msg_free(rep);
			if (got) {
				break;
			}
			cr_assert_lt(wbt_now_ms(), dl, "fan %d never got the backfilled post", i);
			wbt_sleep_ms(20);
		}
	}
}

Test(bulk, follow_many_limits, .init = setup, .fini = teardown, .timeout = 60)
{
	uint64_t  u[2], count;
	uint64_t *many = calloc(10001, sizeof(uint64_t));

	cr_assert_eq(register_many("lim", 0, 2, u), WB_OK);
	cr_assert_eq(follow_many(u[0], many, 10001, NULL), WB_EINVAL);
	cr_assert_eq(follow_many(u[0], many, 0, &count), WB_OK);
	cr_assert_eq(count, 0);
	free(many);
}
