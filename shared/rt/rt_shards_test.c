/* rt_shards_test.c - lists of shard addresses, and which shard a uid or post id goes to. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "rt_shards.h"
#include "wb_errors.h"

Test(rt_shards, lists)
{
	rt_shards *s;

	cr_assert_eq(rt_shards_open(&s, NULL, "ipc:///tmp/one", NULL), WB_OK, "the single one");
	cr_assert_eq(rt_shards_count(s), 1);
	cr_assert_str_eq(rt_shards_url(s, 0), "ipc:///tmp/one");
	cr_assert_eq(rt_shards_for_uid(s, 42), rt_shards_at(s, 0));
	rt_shards_close(s);

	cr_assert_eq(rt_shards_open(
	                 &s, " ipc:///tmp/a , ipc:///tmp/b,ipc:///tmp/c, ", "ipc:///tmp/one", NULL),
	    WB_OK);
	cr_assert_eq(rt_shards_count(s), 3, "a list wins over the single address");
	cr_assert_str_eq(rt_shards_url(s, 1), "ipc:///tmp/b");
	for (uint64_t uid = 1; uid < 1000; uid++) {
		cr_assert_eq(rt_shards_for_uid(s, uid), rt_shards_at(s, wb_uid_shard(uid, 3)));
	}
	uint64_t id = (UINT64_C(1000) << 22) | (UINT64_C(63) << 16) | 5; /* group 63 */
	cr_assert_eq(rt_shards_index_of_id(s, id), 2);
	cr_assert_eq(rt_shards_for_id(s, id), rt_shards_at(s, 2));
	rt_shards_close(s);

	cr_assert_eq(rt_shards_list_count(NULL), 0);
	cr_assert_eq(rt_shards_list_count(" , "), 0);
	cr_assert_eq(rt_shards_list_count("a,b"), 2);
	cr_assert_eq(rt_shards_open(&s, ",", NULL, NULL), WB_EINVAL, "nothing in the list");
	cr_assert_eq(rt_shards_open(&s, "ipc:///tmp/a,http://x", NULL, NULL), WB_EINVAL);
	char many[4096] = "";
	for (int i = 0; i <= WB_SHARDS_MAX; i++) {
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "ipc:///tmp/s%d,", i);
	}
	cr_assert_eq(rt_shards_open(&s, many, NULL, NULL), WB_EINVAL, "65 shards");
}
