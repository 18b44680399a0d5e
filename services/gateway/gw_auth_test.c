/*
 * gw_auth_test.c - the client's address behind reverse proxies: which
 * proxies are trusted, and how far an X-Forwarded-For is believed.
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "gw_int.h"

static gw g;

/* peer fills ss with address a (IPv4 or IPv6). */
static const struct sockaddr_storage *
peer(struct sockaddr_storage *ss, const char *a)
{
	memset(ss, 0, sizeof(*ss));
	if (strchr(a, ':') == NULL) {
		struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
		s4->sin_family = AF_INET;
		cr_assert_eq(inet_pton(AF_INET, a, &s4->sin_addr), 1);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
		s6->sin6_family = AF_INET6;
		cr_assert_eq(inet_pton(AF_INET6, a, &s6->sin6_addr), 1);
	}
	return ss;
}

/* client returns the address a request from peer_addr with header xff counts as. */
static const char *
client(const char *peer_addr, const char *xff)
{
	static char             addr[GW_ADDR_MAX];
	struct sockaddr_storage ss;
	gw_from                 from = { peer(&ss, peer_addr), xff };

	gw_auth_addr(&g, &from, addr);
	return addr;
}

Test(gw_auth, proxies_parse)
{
	cr_assert_eq(gw_auth_proxies(&g, NULL), WB_OK);
	cr_assert_eq(g.nproxies, 0);
	cr_assert_eq(gw_auth_proxies(&g, " 10.0.0.0/8, 192.0.2.7 ,fd00::/8,::1"), WB_OK);
	cr_assert_eq(g.nproxies, 4);
	const char *bad[] = { "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/x", "10.0.0.0/-1", "fd00::/129",
		"not-an-address", "10.0.0", "10.0.0.1/8/8" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(gw_auth_proxies(&g, bad[i]), WB_EINVAL, "%s was taken", bad[i]);
	}
	char many[2048] = "";
	for (int i = 0; i <= GW_PROXIES; i++) {
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "10.0.0.%d,", i);
	}
	cr_assert_eq(gw_auth_proxies(&g, many), WB_EINVAL, "more than %d ranges", GW_PROXIES);
}

Test(gw_auth, the_peer_without_trusted_proxies)
{
	cr_assert_eq(gw_auth_proxies(&g, ""), WB_OK);
	cr_assert_str_eq(client("203.0.113.5", NULL), "203.0.113.5");
	cr_assert_str_eq(client("203.0.113.5", "198.51.100.1"), "203.0.113.5",
	    "a header from an untrusted peer is ignored");
	cr_assert_str_eq(client("2001:db8::1", "198.51.100.1"), "2001:db8::1");
	cr_assert_str_eq(client("::ffff:203.0.113.9", NULL), "203.0.113.9", "a mapped IPv4 peer");
	char    addr[GW_ADDR_MAX];
	gw_from none = { NULL, NULL };
	gw_auth_addr(&g, &none, addr);
	cr_assert_str_eq(addr, "", "no peer: unknown");
	gw_auth_addr(&g, NULL, addr);
	cr_assert_str_eq(addr, "");
}

Test(gw_auth, forwarded_for_is_read_from_the_right)
{
	cr_assert_eq(gw_auth_proxies(&g, "10.0.0.0/8, 2001:db8:ffff::/48"), WB_OK);
	cr_assert_str_eq(client("10.1.2.3", NULL), "10.1.2.3", "a proxy that sends no header");
	cr_assert_str_eq(client("10.1.2.3", "198.51.100.1"), "198.51.100.1");
	cr_assert_str_eq(client("10.1.2.3", "198.51.100.1, 10.9.9.9"), "198.51.100.1",
	    "trusted hops are skipped");
	cr_assert_str_eq(client("10.1.2.3", "6.6.6.6, 198.51.100.1"), "198.51.100.1",
	    "what the client wrote itself, left of the first untrusted hop, is ignored");
	cr_assert_str_eq(
	    client("10.1.2.3", "10.0.0.1,10.0.0.2"), "10.0.0.1", "all trusted: the farthest");
	cr_assert_str_eq(client("10.1.2.3", "198.51.100.1, garbage"), "10.1.2.3",
	    "a malformed hop ends the walk at the last good one");
	cr_assert_str_eq(client("10.1.2.3", "garbage, 10.0.0.5"), "10.0.0.5");
	cr_assert_str_eq(client("10.1.2.3", ""), "10.1.2.3");
	cr_assert_str_eq(client("10.1.2.3", " , "), "10.1.2.3");
	cr_assert_str_eq(client("10.1.2.3", "2001:db8::7"), "2001:db8::7");
	cr_assert_str_eq(
	    client("2001:db8:ffff:1::1", "203.0.113.4"), "203.0.113.4", "an IPv6 proxy");
	cr_assert_str_eq(
	    client("2001:db8:fffe::1", "203.0.113.4"), "2001:db8:fffe::1", "outside the /48");
	cr_assert_str_eq(client("11.0.0.1", "203.0.113.4"), "11.0.0.1", "outside the /8");
	char long_hop[200];
	memset(long_hop, '1', sizeof(long_hop) - 1);
	long_hop[sizeof(long_hop) - 1] = '\0';
	cr_assert_str_eq(client("10.1.2.3", long_hop), "10.1.2.3");
}
