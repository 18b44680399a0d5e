/*
 * wb_session.h - signed session tokens: the user service issues them, any
 * gateway holding the service's session key checks them without a hop.
 *
 *   0        8        16       24                             48 bytes
 *   +--------+--------+--------+------------------------------+
 *   | uid    | sid    | expires| MAC: HMAC-SHA-512-256 of the |
 *   | 8 BE   | 8 BE   | 8 BE   | first 24 bytes, 24 of its 32 |
 *   +--------+--------+--------+------------------------------+
 *        \                                 /
 *         '--- base64url, no padding: 64 characters ---'
 *
 *   sid     = issue time (Unix ms) << 16 | 16 random bits, so a session
 *             id tells when it began ("log out everywhere" revokes every
 *             session that began before a moment)
 *   expires = Unix ms when the session ends (login time + session TTL)
 *
 * A valid MAC proves the user service issued the token; whether it was
 * revoked since (logout, log out everywhere, a password change) is the
 * revocation feed's business (user.revocations).  Tokens of the earlier
 * form (43 random characters) carry no MAC: only the user service can
 * check them.
 */
#ifndef WB_SESSION_H
#define WB_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WB_SESSION_KEY_LEN   32 /* bytes of the MAC key */
#define WB_SESSION_TOKEN_LEN 64 /* characters of a signed token */
#define WB_SESSION_SID_SHIFT 16 /* sid >> this = issue time in Unix ms */

/* A signed token's contents. */
typedef struct wb_session {
	uint64_t uid;
	uint64_t sid;
	uint64_t expires_ms;
} wb_session;

/* wb_session_sid draws a fresh session id that began at now_ms. */
uint64_t wb_session_sid(uint64_t now_ms);

/* wb_session_began returns the Unix ms at which session sid began. */
uint64_t wb_session_began(uint64_t sid);

/* wb_session_sign writes the token of s under key into out (WB_SESSION_TOKEN_LEN + 1 bytes, NUL-terminated). */
void wb_session_sign(char *out, const wb_session *s, const uint8_t key[WB_SESSION_KEY_LEN]);

/* wb_session_is_signed tells whether tok has a signed token's shape (length and alphabet), MAC unchecked. */
bool wb_session_is_signed(const char *tok, size_t len);

/*
 * wb_session_verify checks tok's MAC under key and that it has not expired
 * at now_ms, and fills *s; WB_EAUTH if it is malformed, forged or expired.
 */
int wb_session_verify(wb_session *s, const char *tok, size_t len,
    const uint8_t key[WB_SESSION_KEY_LEN], uint64_t now_ms);

#endif
