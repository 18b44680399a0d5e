/*
 * rt_uidset_test.c - the set of uids held for a while: membership, the
 * hold running out, and growth past many entries, expired ones left out.
 */
#include <criterion/criterion.h>

#include "rt_uidset.h"
#include "wb_errors.h"

Test(uidset, holds_for_the_hold)
{
	rt_uidset *s = NULL;

	cr_assert_eq(rt_uidset_open(&s, 1000), WB_OK);
	cr_assert_not(rt_uidset_has(s, 7, 0));
	cr_assert_eq(rt_uidset_add(s, 7, 5000), WB_OK);
	cr_assert(rt_uidset_has(s, 7, 5000));
	cr_assert(rt_uidset_has(s, 7, 5999));
	cr_assert_not(rt_uidset_has(s, 7, 6000), "held past its hold");
	cr_assert_not(rt_uidset_has(s, 8, 5000));
	cr_assert_eq(rt_uidset_add(s, 0, 5000), WB_EINVAL, "uid 0 marks an empty slot");
	cr_assert_not(rt_uidset_has(s, 0, 5000));
	cr_assert_eq(rt_uidset_add(s, 7, 9000), WB_OK); /* again: held from then on */
	cr_assert(rt_uidset_has(s, 7, 9500));
	cr_assert_eq(rt_uidset_count(s, 9500), 1);
	rt_uidset_close(s);
	rt_uidset_close(NULL);
}

Test(uidset, grows_and_forgets_what_expired)
{
	rt_uidset *s = NULL;

	cr_assert_eq(rt_uidset_open(&s, 100), WB_OK);
	for (uint64_t u = 1; u <= 10000; u++) {
		cr_assert_eq(rt_uidset_add(s, u, 1000), WB_OK);
	}
	for (uint64_t u = 1; u <= 10000; u++) {
		cr_assert(rt_uidset_has(s, u, 1050), "uid %llu lost", (unsigned long long)u);
	}
	cr_assert_eq(rt_uidset_count(s, 1050), 10000);
	/* later ones: the first 10,000 have expired and no longer count */
	for (uint64_t u = 20001; u <= 20100; u++) {
		cr_assert_eq(rt_uidset_add(s, u, 2000), WB_OK);
	}
	cr_assert_eq(rt_uidset_count(s, 2000), 100);
	cr_assert_not(rt_uidset_has(s, 5, 2000));
	cr_assert(rt_uidset_has(s, 20050, 2050));
	rt_uidset_close(s);
}
