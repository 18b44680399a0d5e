/*
 * wb_session_test.c - signed session tokens: round trip, the key id,
 * forgery with another key, expiry, tampering, malformed input.
 */
#include <criterion/criterion.h>
#include <sodium.h>
#include <string.h>

#include "wb_errors.h"
#include "wb_session.h"

static uint8_t pk1[WB_SESSION_PK_LEN], sk1[WB_SESSION_SK_LEN];
static uint8_t pk2[WB_SESSION_PK_LEN], sk2[WB_SESSION_SK_LEN];

static void
keys(void)
{
	cr_assert_geq(sodium_init(), 0);
	wb_session_keypair(pk1, sk1);
	wb_session_keypair(pk2, sk2);
}

TestSuite(wb_session, .init = keys);

Test(wb_session, round_trip)
{
	wb_session s = { 3, 42, wb_session_sid(1700000000000), 1700000600000 }, back;
	char       tok[WB_SESSION_TOKEN_LEN + 1];

	wb_session_sign(tok, &s, sk1);
	cr_assert_eq(strlen(tok), WB_SESSION_TOKEN_LEN);
	cr_assert_eq(wb_session_verify(&back, tok, strlen(tok), pk1, 1700000000001), WB_OK);
	cr_assert_eq(back.kid, 3);
	cr_assert_eq(back.uid, 42);
	cr_assert_eq(back.sid, s.sid);
	cr_assert_eq(back.expires_ms, s.expires_ms);
	cr_assert_eq(wb_session_began(back.sid), 1700000000000);
	memset(&back, 0, sizeof(back));
	cr_assert_eq(wb_session_parse(&back, tok, strlen(tok)), WB_OK);
	cr_assert_eq(back.kid, 3, "the key id is readable before the key is known");
	cr_assert_eq(back.uid, 42);
}

Test(wb_session, forged_expired_and_malformed_are_refused)
{
	wb_session s = { 1, 7, wb_session_sid(1000), 5000 }, back;
	char       tok[WB_SESSION_TOKEN_LEN + 1], bad[WB_SESSION_TOKEN_LEN + 1];

	wb_session_sign(tok, &s, sk1);
	cr_assert_eq(wb_session_verify(&back, tok, strlen(tok), pk2, 2000), WB_EAUTH, "other key");
	cr_assert_eq(wb_session_verify(&back, tok, strlen(tok), pk1, 5000), WB_EAUTH, "expired");
	for (size_t i = 0; i < WB_SESSION_TOKEN_LEN; i += 5) {
		memcpy(bad, tok, sizeof(bad));
		bad[i] = bad[i] == 'A' ? 'B' : 'A';
		cr_assert_eq(wb_session_verify(&back, bad, strlen(bad), pk1, 2000), WB_EAUTH,
		    "character %zu changed", i);
	}
	/* a token signed by sk2 but naming sk1's id is still sk2's */
	wb_session_sign(bad, &s, sk2);
	cr_assert_eq(wb_session_verify(&back, bad, strlen(bad), pk1, 2000), WB_EAUTH);
	cr_assert_eq(wb_session_verify(&back, tok, WB_SESSION_TOKEN_LEN - 1, pk1, 2000), WB_EAUTH);
	cr_assert_eq(wb_session_verify(&back, NULL, 0, pk1, 2000), WB_EAUTH);
	cr_assert_eq(wb_session_parse(&back, NULL, 0), WB_EAUTH);
	memcpy(bad, tok, sizeof(bad));
	bad[3] = '+';
	cr_assert_eq(wb_session_parse(&back, bad, strlen(bad)), WB_EAUTH, "not base64url");
	cr_assert_eq(wb_session_verify(&back, bad, strlen(bad), pk1, 2000), WB_EAUTH);
	cr_assert_eq(wb_session_parse(&back, "q1VbQ2xvY2tzIGFyZSBub3QgdG9rZW5zIGF0IGFsbCE", 43),
	    WB_EAUTH, "the earliest unsigned form");
}

Test(wb_session, a_zero_uid_never_parses)
{
	wb_session s = { 1, 0, wb_session_sid(1000), 5000 }, back;
	char       tok[WB_SESSION_TOKEN_LEN + 1];

	wb_session_sign(tok, &s, sk1);
	cr_assert_eq(wb_session_parse(&back, tok, strlen(tok)), WB_EAUTH);
	cr_assert_eq(wb_session_verify(&back, tok, strlen(tok), pk1, 2000), WB_EAUTH);
}
