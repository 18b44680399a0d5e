/*
 * wb_session_test.c - signed session tokens: round trip, forgery, expiry,
 * malformed input.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "wb_errors.h"
#include "wb_session.h"

static const uint8_t key1[WB_SESSION_KEY_LEN] = { 1, 2, 3 };
static const uint8_t key2[WB_SESSION_KEY_LEN] = { 1, 2, 4 };

Test(wb_session, round_trip)
{
	wb_session s = { 42, wb_session_sid(1700000000000), 1700000600000 }, back;
	char       tok[WB_SESSION_TOKEN_LEN + 1];

	wb_session_sign(tok, &s, key1);
	cr_assert_eq(strlen(tok), WB_SESSION_TOKEN_LEN);
	cr_assert(wb_session_is_signed(tok, strlen(tok)));
	cr_assert_eq(wb_session_verify(&back, tok, strlen(tok), key1, 1700000000001), WB_OK);
	cr_assert_eq(back.uid, 42);
	cr_assert_eq(back.sid, s.sid);
	cr_assert_eq(back.expires_ms, s.expires_ms);
	cr_assert_eq(wb_session_began(back.sid), 1700000000000);
}

Test(wb_session, forged_expired_and_malformed_are_refused)
{
	wb_session s = { 7, wb_session_sid(1000), 5000 }, back;
	char       tok[WB_SESSION_TOKEN_LEN + 1];

	wb_session_sign(tok, &s, key1);
	cr_assert_eq(wb_session_verify(&back, tok, strlen(tok), key2, 2000), WB_EAUTH, "other key");
	cr_assert_eq(wb_session_verify(&back, tok, strlen(tok), key1, 5000), WB_EAUTH, "expired");
	for (size_t i = 0; i < WB_SESSION_TOKEN_LEN; i += 7) {
		char bad[WB_SESSION_TOKEN_LEN + 1];
		memcpy(bad, tok, sizeof(bad));
		bad[i] = bad[i] == 'A' ? 'B' : 'A';
		cr_assert_eq(wb_session_verify(&back, bad, strlen(bad), key1, 2000), WB_EAUTH,
		    "character %zu changed", i);
	}
	cr_assert_eq(wb_session_verify(&back, tok, WB_SESSION_TOKEN_LEN - 1, key1, 2000), WB_EAUTH);
	cr_assert_eq(wb_session_verify(&back, NULL, 0, key1, 2000), WB_EAUTH);
	tok[3] = '+';
	cr_assert_not(wb_session_is_signed(tok, strlen(tok)), "not base64url");
	cr_assert_eq(wb_session_verify(&back, tok, strlen(tok), key1, 2000), WB_EAUTH);
	cr_assert_not(wb_session_is_signed("q1VbQ2xvY2tzIGFyZSBub3QgdG9rZW5zIGF0IGFsbCE", 43),
	    "the earlier unsigned form");
}
