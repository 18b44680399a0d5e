/*
 * wb_session.c - signed session tokens (layout in wb_session.h).
 */
#include <sodium.h>
#include <string.h>

#include "wb_errors.h"
#include "wb_session.h"

#define WB_SESSION_BODY 24 /* uid, sid, expires */
#define WB_SESSION_MAC  24 /* bytes of the MAC kept */
#define WB_SESSION_RAW  (WB_SESSION_BODY + WB_SESSION_MAC)

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

/* wb_session_mac computes the kept part of the MAC of body. */
static void
wb_session_mac(uint8_t mac[WB_SESSION_MAC], const uint8_t body[WB_SESSION_BODY],
    const uint8_t key[WB_SESSION_KEY_LEN])
{
	uint8_t full[crypto_auth_BYTES];

	crypto_auth(full, body, WB_SESSION_BODY, key);
	memcpy(mac, full, WB_SESSION_MAC);
	sodium_memzero(full, sizeof(full));
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
wb_session_sign(char *out, const wb_session *s, const uint8_t key[WB_SESSION_KEY_LEN])
{
	uint8_t raw[WB_SESSION_RAW];

	wb_session_put_u64(raw, s->uid);
	wb_session_put_u64(raw + 8, s->sid);
	wb_session_put_u64(raw + 16, s->expires_ms);
	wb_session_mac(raw + WB_SESSION_BODY, raw, key);
	sodium_bin2base64(out, WB_SESSION_TOKEN_LEN + 1, raw, sizeof(raw),
	    sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	sodium_memzero(raw, sizeof(raw));
}

bool
wb_session_is_signed(const char *tok, size_t len)
{
	if (tok == NULL || len != WB_SESSION_TOKEN_LEN) {
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		char c = tok[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		        c == '-' || c == '_')) {
			return false;
		}
	}
	return true;
}

int
wb_session_verify(wb_session *s, const char *tok, size_t len, const uint8_t key[WB_SESSION_KEY_LEN],
    uint64_t now_ms)
{
	uint8_t raw[WB_SESSION_RAW], mac[WB_SESSION_MAC];
	size_t  n = 0;
	int     ok;

	if (!wb_session_is_signed(tok, len) ||
	    sodium_base642bin(raw, sizeof(raw), tok, len, NULL, &n, NULL,
	        sodium_base64_VARIANT_URLSAFE_NO_PADDING) != 0 ||
	    n != sizeof(raw)) {
		return WB_EAUTH;
	}
	wb_session_mac(mac, raw, key);
	ok = sodium_memcmp(mac, raw + WB_SESSION_BODY, WB_SESSION_MAC) == 0;
	s->uid = wb_session_get_u64(raw);
	s->sid = wb_session_get_u64(raw + 8);
	s->expires_ms = wb_session_get_u64(raw + 16);
	if (!ok || s->uid == 0 || s->expires_ms <= now_ms) {
		return WB_EAUTH;
	}
	return WB_OK;
}
