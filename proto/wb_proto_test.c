/* wb_proto_test.c - tables, lookups, wb_obj, request checks and replies. */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "wb_proto.h"
#include "wb_sample.h"

Test(wb_tables, every_field_name_looks_up_to_itself)
{
	for (int f = 0; f < WB_FIELD_COUNT; f++) {
		const char *name = wb_field_name((wb_field)f);
		cr_assert_eq(wb_field_lookup(name, strlen(name)), f, "field %s", name);
		cr_assert_leq((int)wb_field_type((wb_field)f), (int)WB_T_BIN);
	}
	cr_assert_str_eq(wb_field_name(WB_F_COUNT), "count");
	cr_assert_str_eq(wb_field_name(WB_F_UPTIME), "uptime_ms");
	cr_assert_eq(wb_field_type(WB_F_IDS), WB_T_IDS);
	cr_assert_str_eq(wb_field_name(WB_FIELD_COUNT), "?");
}

Test(wb_tables, every_op_name_looks_up_to_itself)
{
	wb_mask req, opt;

	for (int op = 1; op < WB_OP_COUNT; op++) {
		const char *name = wb_op_name((wb_op)op);
		cr_assert_eq(wb_op_lookup(name, strlen(name)), op, "op %s", name);
		wb_op_fields((wb_op)op, &req, &opt);
		cr_assert_eq(req & opt, 0, "op %s: a field both required and optional", name);
		cr_assert_eq(
		    (req | opt) & (WB_M(OP) | WB_M(V) | WB_M(OK) | WB_M(ERR) | WB_M(MSG)), 0);
	}
	cr_assert_str_eq(wb_op_name(WB_OP_NONE), "?");
	cr_assert_str_eq(wb_op_name(WB_OP_COUNT), "?");
	wb_op_fields(WB_OP_POST_PUBLISH, &req, &opt);
	cr_assert_eq(req, WB_M(UID));
	cr_assert_eq(opt, WB_M(TEXT) | WB_M(TITLE) | WB_M(CATEGORY) | WB_M(IMAGES));
}

Test(wb_tables, unknown_names_do_not_match)
{
	static const char *bad[] = { "", "u", "ui", "uidx", "UID", "uid ", "post.", "post.publis",
		"post.publishh", "Post.publish", "rel.is_followin", "ping\0", "op\0x",
		"a_name_that_is_far_longer_than_any_field_name_in_the_list" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t n = strlen(bad[i]) + (i >= 11 && i <= 12 ? 2 : 0);
		cr_assert_eq(wb_field_lookup(bad[i], n), -1, "%s", bad[i]);
		cr_assert_eq(wb_op_lookup(bad[i], n), WB_OP_NONE, "%s", bad[i]);
	}
	cr_assert_eq(wb_field_lookup(NULL, 0), -1);
	cr_assert_eq(wb_op_lookup(NULL, 3), WB_OP_NONE);
	/* an op name is not a field name and the other way round */
	cr_assert_eq(wb_field_lookup("ping", 4), -1);
	cr_assert_eq(wb_op_lookup("uid", 3), WB_OP_NONE);
	/* names that are both ("following", "stats", "events") map in their own table */
	cr_assert_eq(wb_op_lookup("following", 9), WB_OP_FOLLOWING_LIST);
	cr_assert_eq(wb_field_lookup("following", 9), WB_F_FOLLOWING);
	/* a public op that is the prefix of internal ones ("post", "post.get") is itself */
	cr_assert_eq(wb_op_lookup("post", 4), WB_OP_POST);
	cr_assert_eq(wb_op_lookup("post.get", 8), WB_OP_POST_GET);
}

static void *
lookup_all(void *arg)
{
	long bad = 0;
	(void)arg;
	for (int round = 0; round < 2000; round++) {
		for (int f = 0; f < WB_FIELD_COUNT; f++) {
			const char *name = wb_field_name((wb_field)f);
			bad += wb_field_lookup(name, strlen(name)) != f;
		}
		for (int op = 1; op < WB_OP_COUNT; op++) {
			const char *name = wb_op_name((wb_op)op);
			bad += wb_op_lookup(name, strlen(name)) != (wb_op)op;
		}
	}
	return (void *)bad;
}

Test(wb_tables, first_lookups_race_from_several_threads)
{
	pthread_t t[4];
	void     *bad;

	for (int i = 0; i < 4; i++) {
		cr_assert_eq(pthread_create(&t[i], NULL, lookup_all, NULL), 0);
	}
	for (int i = 0; i < 4; i++) {
		cr_assert_eq(pthread_join(t[i], &bad), 0);
		cr_assert_null(bad, "thread %d saw %ld wrong lookups", i, (long)bad);
	}
}

Test(wb_obj, setters_getters_and_replacement)
{
	wb_obj         *m = wb_msg_new();
	uint64_t        u;
	bool            b;
	const char     *s;
	size_t          n;
	const uint64_t *a;
	uint64_t        ids[3] = { 1, 2, UINT64_MAX };

	cr_assert_not_null(m);
	cr_assert_eq(wb_set_u64(m, WB_F_UID, 7), WB_OK);
	cr_assert_eq(wb_set_u64(m, WB_F_UID, 8), WB_OK);
	cr_assert_eq(m->n, 1, "a set replaces the value");
	cr_assert(wb_get_u64(m, WB_F_UID, &u));
	cr_assert_eq(u, 8);
	cr_assert_eq(wb_u64(m, WB_F_TARGET, 42), 42);
	cr_assert_eq(wb_set_bool(m, WB_F_OK, true), WB_OK);
	cr_assert(wb_get_bool(m, WB_F_OK, &b) && b);
	cr_assert_eq(wb_set_str(m, WB_F_TEXT, "hello world", 5), WB_OK);
	cr_assert(wb_get_str(m, WB_F_TEXT, &s, &n));
	cr_assert_eq(n, 5);
	cr_assert_str_eq(s, "hello", "a copy is NUL-terminated");
	cr_assert_eq(wb_set_cstr(m, WB_F_TEXT, "bye"), WB_OK);
	cr_assert_str_eq(wb_str(m, WB_F_TEXT, "x"), "bye");
	cr_assert_str_eq(wb_str(m, WB_F_NAME, "dflt"), "dflt");
	cr_assert_eq(wb_set_str(m, WB_F_BIO, NULL, 0), WB_OK);
	cr_assert_str_eq(wb_str(m, WB_F_BIO, "x"), "");
	cr_assert_eq(wb_set_u64s(m, WB_F_IDS, ids, 3), WB_OK);
	ids[0] = 99; /* the message holds a copy */
	cr_assert(wb_get_u64s(m, WB_F_IDS, &a, &n));
	cr_assert_eq(n, 3);
	cr_assert_eq(a[0], 1);
	cr_assert_eq(a[2], UINT64_MAX);
	wb_shrink(m, WB_F_IDS, 2);
	cr_assert(wb_get_u64s(m, WB_F_IDS, &a, &n));
	cr_assert_eq(n, 2);
	wb_shrink(m, WB_F_IDS, 5); /* never grows */
	cr_assert(wb_get_u64s(m, WB_F_IDS, &a, &n));
	cr_assert_eq(n, 2);

	/* types are checked both ways */
	cr_assert_eq(wb_set_u64(m, WB_F_TEXT, 1), WB_EINVAL);
	cr_assert_eq(wb_set_cstr(m, WB_F_UID, "1"), WB_EINVAL);
	cr_assert_eq(wb_set_bool(m, WB_F_UID, true), WB_EINVAL);
	cr_assert_eq(wb_set_u64s(m, WB_F_POSTS, ids, 1), WB_EINVAL);
	cr_assert_null(wb_add_objs(m, WB_F_UIDS, 1));
	cr_assert_eq(wb_set_u64(m, WB_FIELD_COUNT, 1), WB_EINVAL);
	cr_assert_eq(wb_set_u64(m, (wb_field)-1, 1), WB_EINVAL);
	cr_assert_not(wb_get_u64(m, WB_F_TEXT, &u));
	cr_assert_not(wb_get_str(m, WB_F_UID, &s, &n));
	cr_assert_not(wb_get_bool(m, WB_F_UID, &b));
	cr_assert_not(wb_get_u64s(m, WB_F_TEXT, &a, &n));

	cr_assert(wb_has(m, WB_F_UID));
	wb_del(m, WB_F_UID);
	cr_assert_not(wb_has(m, WB_F_UID));
	cr_assert(wb_has(m, WB_F_OK) && wb_has(m, WB_F_TEXT) && wb_has(m, WB_F_IDS));
	wb_del(m, WB_F_UID); /* absent: nothing happens */
	cr_assert_eq(m->n, 4);
	wb_msg_free(m);
	wb_msg_free(NULL);
}

Test(wb_obj, nested_objects_and_big_allocations)
{
	wb_obj       *m = wb_msg_new();
	wb_obj       *posts;
	const wb_obj *got;
	size_t        n;
	uint64_t     *big;

	posts = wb_add_objs(m, WB_F_POSTS, 20);
	cr_assert_not_null(posts);
	for (int i = 0; i < 20; i++) {
		cr_assert_eq(wb_set_u64(&posts[i], WB_F_ID, (uint64_t)i), WB_OK);
		cr_assert_eq(
		    wb_set_cstr(&posts[i], WB_F_TEXT, "a post of some length, like most posts are"),
		    WB_OK);
		cr_assert_eq(posts[i].arena, m->arena);
	}
	big = wb_add_u64s(m, WB_F_UIDS, 200000); /* bigger than any chunk */
	cr_assert_not_null(big);
	for (int i = 0; i < 200000; i++) {
		big[i] = (uint64_t)i;
	}
	cr_assert(wb_get_objs(m, WB_F_POSTS, &got, &n));
	cr_assert_eq(n, 20);
	cr_assert_eq(wb_u64(&got[19], WB_F_ID, 0), 19);
	cr_assert_null(wb_add_u64s(m, WB_F_UIDS, SIZE_MAX / 4));
	cr_assert_null(wb_add_objs(m, WB_F_POSTS, SIZE_MAX / 8));
	cr_assert_eq(wb_add_objs(m, WB_F_USERS, 0) != NULL, true);

	/* reset empties the message and it can be filled again */
	for (int round = 0; round < 3; round++) {
		wb_reset(m);
		cr_assert_eq(m->n, 0);
		cr_assert_not(wb_has(m, WB_F_POSTS));
		for (int i = 0; i < 1000; i++) {
			cr_assert_eq(
			    wb_set_cstr(m, WB_F_TEXT, "filling the arena over several chunks"),
			    WB_OK);
		}
		cr_assert_str_eq(wb_str(m, WB_F_TEXT, ""), "filling the arena over several chunks");
	}
	wb_msg_free(m);
}

Test(wb_obj, equal)
{
	wb_obj *a = wb_sample_request(WB_OP_TIMELINE, true);
	wb_obj *b = wb_sample_request(WB_OP_TIMELINE, true);

	cr_assert(wb_equal(a, b));
	wb_set_u64(b, WB_F_LIMIT, 12345);
	cr_assert_not(wb_equal(a, b));
	wb_del(b, WB_F_LIMIT);
	cr_assert_not(wb_equal(a, b));
	wb_msg_free(a);
	wb_msg_free(b);
}

Test(wb_check, every_op_with_its_fields)
{
	char  err[128];
	wb_op op;

	for (int o = 1; o < WB_OP_COUNT; o++) {
		wb_mask req, opt;
		for (int all = 0; all < 2; all++) {
			wb_obj *m = wb_sample_request((wb_op)o, all);
			cr_assert_not_null(m);
			cr_assert_eq(wb_check_request(m, &op, err, sizeof(err)), WB_OK, "%s: %s",
			    wb_op_name((wb_op)o), err);
			cr_assert_eq(op, o);
			cr_assert_eq(wb_op_of(m), o);
			wb_msg_free(m);
		}
		/* every required field missing in turn */
		wb_op_fields((wb_op)o, &req, &opt);
		for (int f = 0; f < WB_FIELD_COUNT; f++) {
			char want[128];
			if (!(req & wb_mask_bit(f))) {
				continue;
			}
			wb_obj *m = wb_sample_request((wb_op)o, true);
			wb_del(m, (wb_field)f);
			cr_assert_eq(wb_check_request(m, &op, err, sizeof(err)), WB_EINVAL);
			snprintf(want, sizeof(want), "%s: missing field '%s'", wb_op_name((wb_op)o),
			    wb_field_name((wb_field)f));
			cr_assert_str_eq(err, want);
			wb_msg_free(m);
		}
		/* a request id, well formed or not */
		{
			wb_obj *m = wb_sample_request((wb_op)o, false);
			cr_assert_eq(wb_set_cstr(m, WB_F_RID, "0af3-1b.c:d_E"), WB_OK);
			cr_assert_eq(wb_check_request(m, &op, err, sizeof(err)), WB_OK, "%s", err);
			cr_assert_eq(wb_set_cstr(m, WB_F_RID, "a b"), WB_OK);
			cr_assert_eq(wb_check_request(m, &op, err, sizeof(err)), WB_EINVAL);
			cr_assert_eq(wb_set_str(m, WB_F_RID, "", 0), WB_OK);
			cr_assert_eq(wb_check_request(m, &op, err, sizeof(err)), WB_EINVAL);
			wb_msg_free(m);
		}
		/* every field the op does not take, in turn */
		for (int f = 0; f < WB_FIELD_COUNT; f++) {
			char want[128];
			if ((req | opt | WB_M(OP) | WB_M(V) | WB_M(RID)) & wb_mask_bit(f)) {
				continue;
			}
			wb_obj *m = wb_sample_request((wb_op)o, false);
			cr_assert_eq(wb_sample_fill(m, (wb_field)f, 1), WB_OK);
			cr_assert_eq(wb_check_request(m, &op, err, sizeof(err)), WB_EINVAL);
			snprintf(want, sizeof(want), "field '%s' is not taken by '%s'",
			    wb_field_name((wb_field)f), wb_op_name((wb_op)o));
			cr_assert_str_eq(err, want);
			wb_msg_free(m);
		}
	}
}

Test(wb_check, messages)
{
	char    err[128];
	wb_op   op;
	wb_obj *m = wb_request(WB_OP_POST_PUBLISH);

	wb_set_cstr(m, WB_F_TEXT, "hi");
	cr_assert_eq(wb_check_request(m, &op, err, sizeof(err)), WB_EINVAL);
	cr_assert_str_eq(err, "post.publish: missing field 'uid'");
	cr_assert_eq(op, WB_OP_POST_PUBLISH);
	wb_msg_free(m);

	m = wb_request(WB_OP_PING);
	wb_set_u64(m, WB_F_LIMIT, 1);
	cr_assert_eq(wb_check_request(m, NULL, err, sizeof(err)), WB_EINVAL);
	cr_assert_str_eq(err, "field 'limit' is not taken by 'ping'");
	wb_del(m, WB_F_LIMIT);
	cr_assert_eq(wb_check_request(m, NULL, NULL, 0), WB_OK);
	wb_set_u64(m, WB_F_V, 2);
	cr_assert_eq(wb_check_request(m, &op, err, sizeof(err)), WB_EVERSION);
	cr_assert_str_eq(err, "ping: protocol version 2 not supported (this side speaks 1)");
	wb_del(m, WB_F_V);
	cr_assert_eq(wb_check_request(m, &op, err, sizeof(err)), WB_EVERSION);
	cr_assert_str_eq(err, "ping: missing protocol version 'v'");
	wb_set_cstr(m, WB_F_OP, "pong\n\x01");
	wb_set_u64(m, WB_F_V, 1);
	cr_assert_eq(wb_check_request(m, &op, err, sizeof(err)), WB_EBADOP);
	cr_assert_str_eq(err, "unknown operation 'pong?"
	                      "?'");
	cr_assert_eq(op, WB_OP_NONE);
	cr_assert_eq(wb_op_of(m), WB_OP_NONE);
	wb_del(m, WB_F_OP);
	cr_assert_eq(wb_check_request(m, &op, err, sizeof(err)), WB_EBADOP);
	cr_assert_str_eq(err, "request has no 'op' field");
	/* a tiny error buffer truncates, never overflows */
	cr_assert_eq(wb_check_request(m, &op, err, 4), WB_EBADOP);
	cr_assert_str_eq(err, "req");
	wb_msg_free(m);
	cr_assert_null(wb_request(WB_OP_NONE));
	cr_assert_null(wb_request(WB_OP_COUNT));
}

Test(wb_reply, ok_and_every_error_code)
{
	wb_obj     *m = wb_msg_new();
	const char *msg;

	cr_assert_eq(wb_reply_ok(m), WB_OK);
	cr_assert_eq(wb_reply_code(m, &msg), WB_OK);
	for (int code = 1; code < WB_ERR_COUNT; code++) {
		cr_assert_eq(wb_reply_error(m, code, NULL), WB_OK);
		cr_assert_eq(wb_reply_code(m, &msg), code);
		cr_assert_str_eq(msg, wb_strerror(code));
		cr_assert_str_eq(wb_str(m, WB_F_ERR, ""), wb_err_name(code));
		cr_assert_eq(wb_reply_error(m, code, "code %d: %s", code, "detail"), WB_OK);
		cr_assert_eq(wb_reply_code(m, &msg), code);
		char want[64];
		snprintf(want, sizeof(want), "code %d: detail", code);
		cr_assert_str_eq(msg, want);
		cr_assert_eq(m->n, 3, "an error reply holds ok, err and msg only");
	}
	/* a message longer than the formatting buffer */
	char long_text[1000];
	memset(long_text, 'x', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = '\0';
	cr_assert_eq(wb_reply_error(m, WB_EINVAL, "[%s]", long_text), WB_OK);
	cr_assert_eq(wb_reply_code(m, &msg), WB_EINVAL);
	cr_assert_eq(strlen(msg), 1001);
	cr_assert_eq(msg[1000], ']');
	/* bogus codes become INTERNAL */
	cr_assert_eq(wb_reply_error(m, 0, NULL), WB_OK);
	cr_assert_eq(wb_reply_code(m, NULL), WB_EINTERNAL);
	cr_assert_eq(wb_reply_error(m, 9999, NULL), WB_OK);
	cr_assert_eq(wb_reply_code(m, NULL), WB_EINTERNAL);
	/* replies a peer got wrong */
	wb_reset(m);
	cr_assert_eq(wb_reply_code(m, &msg), WB_EBADMSG);
	wb_set_bool(m, WB_F_OK, false);
	cr_assert_eq(wb_reply_code(m, &msg), WB_EINTERNAL);
	wb_set_cstr(m, WB_F_ERR, "OK");
	cr_assert_eq(wb_reply_code(m, &msg), WB_EINTERNAL);
	wb_set_cstr(m, WB_F_ERR, "NO_SUCH_POST");
	cr_assert_eq(wb_reply_code(m, &msg), WB_ENOPOST);
	cr_assert_str_eq(msg, "no such post");
	wb_msg_free(m);
}

Test(wb_copy, deep_copy_outlives_its_source)
{
	wb_obj       *src = wb_sample_request(WB_OP_EVENTS, true), *dst = wb_msg_new();
	wb_obj       *batch = wb_request(WB_OP_BATCH), *items;
	const wb_obj *got;
	size_t        n;

	cr_assert_not_null(src);
	/* a batch of replies nests records two levels down */
	cr_assert_not_null(items = wb_add_objs(batch, WB_F_REPS, 2));
	cr_assert_eq(wb_copy(&items[0], src), WB_OK);
	cr_assert_eq(wb_copy(&items[1], src), WB_OK);
	cr_assert_eq(wb_copy(dst, src), WB_OK);
	cr_assert(wb_equal(dst, src));
	cr_assert(wb_equal(&items[1], src));
	/* a copy into an object with fields replaces them and keeps the others */
	wb_set_u64(&items[0], WB_F_UID, 9);
	cr_assert_eq(wb_copy(&items[0], src), WB_OK);
	cr_assert_eq(wb_u64(&items[0], WB_F_UID, 0), 9);
	wb_del(&items[0], WB_F_UID);
	cr_assert(wb_equal(&items[0], src));
	wb_msg_free(src); /* the copies own their bytes */
	cr_assert(wb_equal(dst, &items[1]));
	cr_assert(wb_get_objs(dst, WB_F_EVENTS, &got, &n));
	cr_assert_eq(n, 2);
	cr_assert(wb_has(&got[1], WB_F_HIST));
	/* and the nested copy round-trips the codec at the default depth */
	{
		char   *buf, err[128];
		size_t  len;
		wb_obj *back = NULL;

		cr_assert_eq(wb_encode_buf(batch, &buf, &len), WB_OK);
		cr_assert_eq(wb_decode(&back, buf, len, NULL, err, sizeof(err)), WB_OK, "%s", err);
		cr_assert(wb_equal(back, batch));
		wb_msg_free(back);
		free(buf);
	}
	cr_assert_eq(wb_copy(NULL, dst), WB_EINVAL);
	cr_assert_eq(wb_copy(dst, NULL), WB_EINVAL);
	wb_msg_free(dst);
	wb_msg_free(batch);
}
