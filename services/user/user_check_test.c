/*
 * user_check_test.c - unit tests of the user service's pure checks.
 */
#include <criterion/criterion.h>
#include <sodium.h>
#include <string.h>

#include "user_check.h"
#include "wb_session.h"
#include "wb_errors.h"

static int
norm(char *out, const char *s)
{
	return user_name_normalize(out, s, strlen(s));
}

Test(user_check, names_lowercased_and_validated)
{
	char out[USER_NAME_MAX + 1];

	cr_assert_eq(norm(out, "Alice_01"), WB_OK);
	cr_assert_str_eq(out, "alice_01");
	cr_assert_eq(norm(out, "abc"), WB_OK);
	cr_assert_eq(norm(out, "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"), WB_OK); /* 32 */
	cr_assert_str_eq(out, "abcdefghijklmnopqrstuvwxyz012345");
	cr_assert_eq(norm(out, "ab"), WB_EBADNAME);
	cr_assert_eq(norm(out, ""), WB_EBADNAME);
	cr_assert_eq(norm(out, "abcdefghijklmnopqrstuvwxyz0123456"), WB_EBADNAME); /* 33 */
	cr_assert_eq(norm(out, "al ice"), WB_EBADNAME);
	cr_assert_eq(norm(out, "al-ice"), WB_EBADNAME);
	cr_assert_eq(norm(out, "al.ice"), WB_EBADNAME);
	cr_assert_eq(norm(out, "\xc3\xa9t\xc3\xa9"), WB_EBADNAME);
	cr_assert_eq(user_name_normalize(out, "ab\0c", 4), WB_EBADNAME);
	cr_assert_eq(user_name_normalize(out, NULL, 0), WB_EBADNAME);
}

Test(user_check, password_lengths)
{
	cr_assert_eq(user_password_check(7), WB_EBADPASS);
	cr_assert_eq(user_password_check(8), WB_OK);
	cr_assert_eq(user_password_check(1024), WB_OK);
	cr_assert_eq(user_password_check(1025), WB_EBADPASS);
	cr_assert_eq(user_password_check(0), WB_EBADPASS);
}

/* a token's shape: WB_SESSION_TOKEN_LEN characters of base64url */
static void
token_fill(char *t, char c)
{
	memset(t, c, WB_SESSION_TOKEN_LEN);
	t[WB_SESSION_TOKEN_LEN] = '\0';
}

Test(user_check, token_hash)
{
	char    a[WB_SESSION_TOKEN_LEN + 1], b[WB_SESSION_TOKEN_LEN + 1];
	uint8_t ha[USER_TOKEN_HASH], ha2[USER_TOKEN_HASH], hb[USER_TOKEN_HASH];

	cr_assert_geq(sodium_init(), 0);
	token_fill(a, 'A');
	token_fill(b, 'A');
	b[7] = '_';
	cr_assert_eq(user_token_hash(ha, a, strlen(a)), WB_OK);
	cr_assert_eq(user_token_hash(ha2, a, strlen(a)), WB_OK);
	cr_assert_eq(user_token_hash(hb, b, strlen(b)), WB_OK);
	cr_assert_eq(memcmp(ha, ha2, sizeof(ha)), 0);
	cr_assert_neq(memcmp(ha, hb, sizeof(ha)), 0);
	/* the hash is not the token */
	cr_assert_neq(memcmp(ha, a, sizeof(ha)), 0);

	cr_assert_eq(user_token_hash(ha, a, strlen(a) - 1), WB_EAUTH);
	cr_assert_eq(user_token_hash(ha, a, 43), WB_EAUTH, "the earliest form is gone");
	cr_assert_eq(user_token_hash(ha, a, 64), WB_EAUTH, "the keyed-hash form is gone");
	cr_assert_eq(user_token_hash(ha, "", 0), WB_EAUTH);
	cr_assert_eq(user_token_hash(ha, NULL, 0), WB_EAUTH);
	a[5] = '+';
	cr_assert_eq(user_token_hash(ha, a, strlen(a)), WB_EAUTH);
	a[5] = '\0';
	cr_assert_eq(user_token_hash(ha, a, WB_SESSION_TOKEN_LEN), WB_EAUTH);
}

Test(user_check, utf8)
{
	size_t n;

	cr_assert(user_utf8_check("", 0, &n));
	cr_assert_eq(n, 0);
	cr_assert(user_utf8_check("h\xc3\xa9llo \xe4\xb8\xad \xf0\x9f\x98\x80", 15, &n));
	cr_assert_eq(n, 9);
	cr_assert_not(user_utf8_check("\xc3", 1, NULL));             /* truncated */
	cr_assert_not(user_utf8_check("\xc0\xaf", 2, NULL));         /* overlong */
	cr_assert_not(user_utf8_check("\xe0\x80\xaf", 3, NULL));     /* overlong */
	cr_assert_not(user_utf8_check("\xed\xa0\x80", 3, NULL));     /* surrogate */
	cr_assert_not(user_utf8_check("\xf4\x90\x80\x80", 4, NULL)); /* > U+10FFFF */
	cr_assert_not(user_utf8_check("\xff", 1, NULL));
	cr_assert_not(user_utf8_check("\x80", 1, NULL));
	cr_assert_not(user_utf8_check("a\0b", 3, NULL));
}

Test(user_check, display_and_bio)
{
	const char *why = NULL;
	char        buf[400];

	cr_assert_eq(user_display_check("Alice", 5, &why), WB_OK);
	/* 64 three-byte characters are fine, 65 are not */
	for (int i = 0; i < 65; i++) {
		memcpy(buf + 3 * i, "\xe4\xb8\xad", 3);
	}
	cr_assert_eq(user_display_check(buf, 64 * 3, &why), WB_OK);
	cr_assert_eq(user_display_check(buf, 65 * 3, &why), WB_EINVAL);
	cr_assert(strstr(why, "64") != NULL, "why: %s", why);
	cr_assert_eq(user_display_check("a\nb", 3, &why), WB_EINVAL);
	cr_assert_eq(user_display_check("\xff", 1, &why), WB_EINVAL);
	cr_assert(strstr(why, "UTF-8") != NULL, "why: %s", why);

	memset(buf, 'x', sizeof(buf));
	cr_assert_eq(user_bio_check(buf, 280, &why), WB_OK);
	cr_assert_eq(user_bio_check(buf, 281, &why), WB_EINVAL);
	cr_assert(strstr(why, "280") != NULL, "why: %s", why);
	cr_assert_eq(user_bio_check("line\nline\ttab", 13, &why), WB_OK);
	cr_assert_eq(user_bio_check("bell\a", 5, &why), WB_EINVAL);
	cr_assert_eq(user_bio_check("\xc3(", 2, &why), WB_EINVAL);
}
