/*
 * wb_session.c - signed session tokens (layout in wb_session.h).
 */
#include <sodium.h>
#include <string.h>

#include "wb_errors.h"
#include "wb_session.h"

#define WB_SESSION_BODY 26 /* kid, uid, sid, expires */
#define WB_SESSION_RAW  (WB_SESSION_BODY + crypto_sign_BYTES)

_Static_assert(WB_SESSION_RAW * 4 == WB_SESSION_TOKEN_LEN * 3, "a token is whole base64 groups");
_Static_assert(WB_SESSION_PK_LEN == crypto_sign_PUBLICKEYBYTES, "public key size");
_Static_assert(WB_SESSION_SK_LEN == crypto_sign_SECRETKEYBYTES, "private key size");

static void
wb_session_put_u64(uint8_t *p, uint64_t v)
{
	for (int i = 7; i >= 0; i--, v >>= 8) {
		p[i] = (uint8_t)v;
	}
}

static uint64_t
wb_session_get_u64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++) {
		v = v << 8 | p[i];
	}
	return v;
}

uint64_t
wb_session_sid(uint64_t now_ms)
{
	return now_ms << WB_SESSION_SID_SHIFT | (randombytes_random() & 0xffff);
}

uint64_t
wb_session_began(uint64_t sid)
{
	return sid >> WB_SESSION_SID_SHIFT;
}

void
wb_session_keypair(uint8_t pk[WB_SESSION_PK_LEN], uint8_t sk[WB_SESSION_SK_LEN])
{
	crypto_sign_keypair(pk, sk);
}

void
wb_session_sign(char *out, const wb_session *s, const uint8_t sk[WB_SESSION_SK_LEN])
{
	uint8_t raw[WB_SESSION_RAW];

	raw[0] = (uint8_t)(s->kid >> 8);
	raw[1] = (uint8_t)s->kid;
	wb_session_put_u64(raw + 2, s->uid);
	wb_session_put_u64(raw + 10, s->sid);
	wb_session_put_u64(raw + 18, s->expires_ms);
	crypto_sign_detached(raw + WB_SESSION_BODY, NULL, raw, WB_SESSION_BODY, sk);
	sodium_bin2base64(out, WB_SESSION_TOKEN_LEN + 1, raw, sizeof(raw),
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
}

/* wb_session_decode turns tok into its raw bytes and *s; WB_EAUTH if it has no token's shape. */
static int
wb_session_decode(wb_session *s, uint8_t raw[WB_SESSION_RAW], const char *tok, size_t len)
{
	size_t n = 0;

	if (tok == NULL || len != WB_SESSION_TOKEN_LEN ||
	    sodium_base642bin(raw, WB_SESSION_RAW, tok, len, NULL, &n, NULL,
	        sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
	    n != WB_SESSION_RAW) {
		return WB_EAUTH;
	}
	s->kid = (uint16_t)(raw[0] << 8 | raw[1]);
	s->uid = wb_session_get_u64(raw + 2);
	s->sid = wb_session_get_u64(raw + 10);
	s->expires_ms = wb_session_get_u64(raw + 18);
	return s->uid != 0 ? WB_OK : WB_EAUTH;
}

int
wb_session_parse(wb_session *s, const char *tok, size_t len)
{
	uint8_t raw[WB_SESSION_RAW];

	return wb_session_decode(s, raw, tok, len);
}

int
wb_session_verify(wb_session *s, const char *tok, size_t len, const uint8_t pk[WB_SESSION_PK_LEN],
    uint64_t now_ms)
{
	uint8_t raw[WB_SESSION_RAW];

	if (wb_session_decode(s, raw, tok, len) != WB_OK ||
	    crypto_sign_verify_detached(raw + WB_SESSION_BODY, raw, WB_SESSION_BODY, pk) != 0 ||
	    s->expires_ms <= now_ms) {
		return WB_EAUTH;
	}
	return WB_OK;
}
