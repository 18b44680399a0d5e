/*
 * wb_session.h - signed session tokens: the user service signs them with
 * an Ed25519 private key that never leaves it; a gateway checks them with
 * the public key alone, without a hop, and cannot make one.
 *
 *   0    2        10       18       26                                90 bytes
 *   +----+--------+--------+--------+----------------------------------+
 *   | kid| uid    | sid    | expires| Ed25519 signature of the first   |
 *   |2 BE| 8 BE   | 8 BE   | 8 BE   | 26 bytes (64)                    |
 *   +----+--------+--------+--------+----------------------------------+
 *        \                                 /
 *         '--- base64url, no padding: 120 characters ---'
 *
 *   kid     = the id of the key that signed it, so keys can be rotated
 *             while tokens of the earlier key still verify
 *   sid     = issue time (Unix ms) << 16 | 16 random bits, so a session
 *             id tells when it began ("log out everywhere" revokes every
 *             session that began before a moment)
 *   expires = Unix ms when the session ends (login time + session TTL)
 *
 * A valid signature proves the user service issued the token; whether it
 * was revoked since (logout, log out everywhere, a password change) is
 * the revocation feed's business (user.revocations).
 */
#ifndef WB_SESSION_H
#define WB_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WB_SESSION_PK_LEN    32  /* bytes of a public key (crypto_sign_PUBLICKEYBYTES) */
#define WB_SESSION_SK_LEN    64  /* bytes of a private key (crypto_sign_SECRETKEYBYTES) */
#define WB_SESSION_TOKEN_LEN 120 /* characters of a token */
#define WB_SESSION_SID_SHIFT 16  /* sid >> this = issue time in Unix ms */

/* A token's contents. */
typedef struct wb_session {
	uint16_t kid;
	uint64_t uid;
	uint64_t sid;
	uint64_t expires_ms;
} wb_session;

/* wb_session_sid draws a fresh session id that began at now_ms. */
uint64_t wb_session_sid(uint64_t now_ms);

/* wb_session_began returns the Unix ms at which session sid began. */
uint64_t wb_session_began(uint64_t sid);

/* wb_session_keypair draws a fresh signing key pair. */
void wb_session_keypair(uint8_t pk[WB_SESSION_PK_LEN], uint8_t sk[WB_SESSION_SK_LEN]);

/*
 * wb_session_sign writes the token of s (s->kid naming sk) into out
 * (WB_SESSION_TOKEN_LEN + 1 bytes, NUL-terminated).
 */
void wb_session_sign(char *out, const wb_session *s, const uint8_t sk[WB_SESSION_SK_LEN]);

/*
 * wb_session_parse decodes tok into *s without checking its signature
 * (to find the key it names, or where a stored session row vouches for
 * it); WB_EAUTH if it does not have a token's shape.
 */
int wb_session_parse(wb_session *s, const char *tok, size_t len);

/*
 * wb_session_verify checks tok's signature under pk and that it has not
 * expired at now_ms, and fills *s; WB_EAUTH if it is malformed, forged or
 * expired (*s is filled whenever tok has a token's shape).
 */
int wb_session_verify(wb_session *s, const char *tok, size_t len,
    const uint8_t pk[WB_SESSION_PK_LEN], uint64_t now_ms);

#endif
