/*
 * user_check.h - the user service's pure input checks: usernames,
 * passwords, session tokens and profile text.  No I/O, no state; unit
 * tested in user_check_test.c.
 *
 * A session token is a signed one (120 characters of base64url,
 * proto/wb_session.h).  Only its hash is ever stored:
 *
 *   token  "AAEA...120 chars..."  --crypto_generichash-->  32-byte row key
 */
#ifndef USER_CHECK_H
#define USER_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wb_limits.h"

#define USER_NAME_MIN    3
#define USER_NAME_MAX    32
#define USER_PASS_MIN    8
#define USER_PASS_MAX    1024
#define USER_TOKEN_HASH  32             /* bytes of a token's stored hash */
#define USER_DISPLAY_MAX WB_DISPLAY_MAX /* characters */
#define USER_BIO_MAX     WB_BIO_MAX     /* bytes */

/* user_name_normalize lowercases name into out (USER_NAME_MAX + 1 bytes,
 * NUL-terminated) and checks it is 3-32 of [a-z0-9_]; WB_EBADNAME if not. */
int user_name_normalize(char *out, const char *name, size_t len);

/* user_password_check tells whether a password of len bytes is acceptable (WB_EBADPASS if not). */
int user_password_check(size_t len);

/* user_token_hash computes the stored hash of a token; WB_EAUTH if the
 * string cannot be a token (wrong length or alphabet). */
int user_token_hash(uint8_t out[USER_TOKEN_HASH], const char *token, size_t len);

/* user_utf8_check tells whether s[0..n) is valid UTF-8 (no overlongs,
 * surrogates or NUL) and counts its characters into *chars if not NULL. */
bool user_utf8_check(const char *s, size_t n, size_t *chars);

/* user_display_check validates a display name: UTF-8, at most 64
 * characters, no control characters; WB_EINVAL with a reason in *why. */
int user_display_check(const char *s, size_t n, const char **why);

/* user_bio_check validates a bio: UTF-8, at most 280 bytes, no control
 * characters but tab and newlines; WB_EINVAL with a reason in *why. */
int user_bio_check(const char *s, size_t n, const char **why);

#endif
