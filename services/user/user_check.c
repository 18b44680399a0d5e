/*
 * user_check.c - pure input checks of the user service.
 */
#include <sodium.h>
#include <string.h>

#include "user_check.h"
#include "wb_session.h"
#include "wb_errors.h"

/* user_name_normalize lowercases name into out and checks it is 3-32 of [a-z0-9_]. */
int
user_name_normalize(char *out, const char *name, size_t len)
{
	if (name == NULL || len < USER_NAME_MIN || len > USER_NAME_MAX) {
		return WB_EBADNAME;
	}
	for (size_t i = 0; i < len; i++) {
		char c = name[i];
		if (c >= 'A' && c <= 'Z') {
			c = (char)(c - 'A' + 'a');
		}
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
			return WB_EBADNAME;
		}
		out[i] = c;
	}
	out[len] = '\0';
	return WB_OK;
}

/* user_password_check tells whether a password of len bytes is acceptable. */
int
user_password_check(size_t len)
{
	return len >= USER_PASS_MIN && len <= USER_PASS_MAX ? WB_OK : WB_EBADPASS;
}

static bool
user_token_char_ok(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_';
}

/*
 * user_token_hash hashes the token string itself (not its decoded bytes),
 * so two spellings of the same bytes can never name one session.
 */
int
user_token_hash(uint8_t out[USER_TOKEN_HASH], const char *token, size_t len)
{
	if (token == NULL || len != WB_SESSION_TOKEN_LEN) {
		return WB_EAUTH;
	}
	for (size_t i = 0; i < len; i++) {
		if (!user_token_char_ok(token[i])) {
			return WB_EAUTH;
		}
	}
	crypto_generichash(out, USER_TOKEN_HASH, (const unsigned char *)token, len, NULL, 0);
	return WB_OK;
}

/* user_utf8_next decodes one character at s[i], returning its length or 0 if invalid. */
static size_t
user_utf8_next(const unsigned char *s, size_t n, size_t i, uint32_t *cp)
{
	unsigned char c = s[i];
	size_t        len;
	uint32_t      v, min;

	if (c < 0x80) {
		*cp = c;
		return 1;
	} else if ((c & 0xE0) == 0xC0) {
		len = 2, v = c & 0x1F, min = 0x80;
	} else if ((c & 0xF0) == 0xE0) {
		len = 3, v = c & 0x0F, min = 0x800;
	} else if ((c & 0xF8) == 0xF0) {
		len = 4, v = c & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (n - i < len) {
		return 0;
	}
	for (size_t k = 1; k < len; k++) {
		if ((s[i + k] & 0xC0) != 0x80) {
			return 0;
		}
		v = (v << 6) | (s[i + k] & 0x3F);
	}
	if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
		return 0;
	}
	*cp = v;
	return len;
}

/* user_utf8_scan validates s and reports its character count and whether it holds disallowed controls. */
static bool
user_utf8_scan(const char *s, size_t n, size_t *chars, bool allow_newlines, bool *controls)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t               count = 0;

	*controls = false;
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t   len = user_utf8_next(u, n, i, &cp);
		if (len == 0 || cp == 0) {
			return false;
		}
		if (cp < 0x20 || cp == 0x7F || (cp >= 0x80 && cp < 0xA0)) {
			if (!(allow_newlines && (cp == '\n' || cp == '\r' || cp == '\t'))) {
				*controls = true;
			}
		}
		i += len;
		count++;
	}
	if (chars != NULL) {
		*chars = count;
	}
	return true;
}

/* user_utf8_check tells whether s[0..n) is valid UTF-8 without NUL. */
bool
user_utf8_check(const char *s, size_t n, size_t *chars)
{
	bool controls;

	return user_utf8_scan(s, n, chars, true, &controls);
}

/* user_display_check validates a display name. */
int
user_display_check(const char *s, size_t n, const char **why)
{
	size_t chars;
	bool   controls;

	if (n > USER_DISPLAY_MAX * 4) {
		*why = "display name longer than 64 characters";
		return WB_EINVAL;
	}
	if (!user_utf8_scan(s, n, &chars, false, &controls)) {
		*why = "display name must be valid UTF-8";
		return WB_EINVAL;
	}
	if (chars > USER_DISPLAY_MAX) {
		*why = "display name longer than 64 characters";
		return WB_EINVAL;
	}
	if (controls) {
		*why = "display name must not contain control characters";
		return WB_EINVAL;
	}
	return WB_OK;
}

/* user_bio_check validates a bio. */
int
user_bio_check(const char *s, size_t n, const char **why)
{
	bool controls;

	if (n > USER_BIO_MAX) {
		*why = "bio longer than 280 bytes";
		return WB_EINVAL;
	}
	if (!user_utf8_scan(s, n, NULL, true, &controls)) {
		*why = "bio must be valid UTF-8";
		return WB_EINVAL;
	}
	if (controls) {
		*why = "bio must not contain control characters (tab and newlines are fine)";
		return WB_EINVAL;
	}
	return WB_OK;
}
