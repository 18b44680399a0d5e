/*
 * rt_dns_test.c - background lookups: a numeric host at once, a name
 * resolved in the background and waited for, a name that does not
 * resolve (the wait ends by the deadline), and closing while a lookup
 * still runs.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>

#include "rt_dns.h"
#include "wb_clock.h"
#include "wb_errors.h"

static struct sockaddr_storage addrs[RT_DNS_ADDRS];
static socklen_t               lens[RT_DNS_ADDRS];

Test(rt_dns, numeric_at_once)
{
	rt_dns *d;

	cr_assert_eq(rt_dns_open(&d, "127.0.0.1", "7101"), WB_OK);
	cr_assert_eq(rt_dns_get(d, addrs, lens, wb_mono_us()), 1, "no wait for a numeric host");
	cr_assert_eq(addrs[0].ss_family, AF_INET);
	cr_assert_eq(ntohs(((struct sockaddr_in *)&addrs[0])->sin_port), 7101);
	rt_dns_close(d);
	cr_assert_eq(rt_dns_open(&d, "", "1"), WB_OK);
	cr_assert_eq(rt_dns_get(d, addrs, lens, wb_mono_us()), 1, "an empty host is the loopback");
	rt_dns_close(d);
}

Test(rt_dns, name_in_the_background)
{
	rt_dns *d;

	cr_assert_eq(rt_dns_open(&d, "localhost", "80"), WB_OK);
	cr_assert_geq(rt_dns_get(d, addrs, lens, wb_mono_us() + 10000000), 1);
	rt_dns_refresh(d); /* so soon after the lookup: skipped, the addresses stay */
	cr_assert_geq(rt_dns_get(d, addrs, lens, wb_mono_us()), 1);
	rt_dns_close(d); /* the refresh may still run: it frees d when it ends */
}

Test(rt_dns, unknown_name_ends_by_the_deadline)
{
	rt_dns  *d;
	uint64_t t0 = wb_mono_us();

	cr_assert_eq(rt_dns_open(&d, "no-such-host.invalid", "80"), WB_OK);
	errno = 0;
	cr_assert_eq(rt_dns_get(d, addrs, lens, t0 + 1000000), 0);
	cr_assert(errno == EHOSTUNREACH || errno == ETIMEDOUT, "errno %d", errno);
	cr_assert_lt(wb_mono_us() - t0, 3000000, "the wait outlived its deadline");
	rt_dns_close(d);
}
