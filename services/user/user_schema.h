/*
 * user_schema.h - the user service's table: column families and key layouts.
 *
 * info     one row per user, a cell per attribute (max_versions 1,
 *          written at version 0 so a clock step never hides an update)
 *
 *     row = uid (8 bytes BE)    qualifier         value
 *     +---------------------+   +-----------+     +--------------------------+
 *     | 00 00 00 00 00 00 07|   | "name"    |  -> | lowercased username      |
 *     +---------------------+   | "pw"      |  -> | argon2id hash string     |
 *                               | "created" |  -> | ms since epoch, 8 BE     |
 *                               | "display" |  -> | UTF-8, <= 64 characters  |
 *                               | "bio"     |  -> | UTF-8, <= 280 bytes      |
 *                               +-----------+     +--------------------------+
 *
 * name     row = lowercased username (escaped), no qualifier -> uid (8 BE)
 *
 * session  row = crypto_generichash(token) (32 bytes), no qualifier,
 *          version = login time in ms, TTL = session lifetime -> uid (8 BE)
 *          (the raw token is never stored)
 *
 *          A signed token (proto/wb_session.h) is stored the same way: the
 *          row is the hash of its 120 characters.
 *
 * meta     no qualifier, version 0:
 *          row "uid"         -> last allocated uid (8 BE)
 *          row "sign/<kid>"  -> a token signing key: Ed25519 private key
 *                               (64 bytes) | retired ms (8 BE; 0 for the
 *                               current key); kid in five decimal digits
 *                               (user_keys.c; never logged, never sent)
 *          row "revseq"      -> last revocation seq (8 BE)
 *
 * revoke   the revocation feed gateways pull (user.revocations); TTL =
 *          session lifetime, counted from the version (write time, ms), so
 *          a record outlives every token it revokes
 *
 *     row = seq (8 BE)          value (33 bytes)
 *     +---------------------+   +------+--------+--------+--------+--------+
 *     | 00 00 00 00 00 00 2a| ->| kind | uid    | sid    | time   | until  |
 *     +---------------------+   | 1 B  | 8 BE   | 8 BE   | 8 BE   | 8 BE   |
 *                               +------+--------+--------+--------+--------+
 *     kind 1 (session): session sid of uid ended; until = its expiry
 *     kind 2 (all): every session of uid begun before time ended;
 *                   until = time + session lifetime
 *
 *     kind 3 (closed): the account uid was deleted at time; until = time +
 *                      session lifetime (gateways forget its name)
 *
 * info also holds, per user, qualifier "nb" -> the ms before which every
 * session of the user is void (log out everywhere, password change).
 *
 * hold     the names of deleted accounts, held so that nobody takes one
 *          at once (user_delete.c): row = a keyed hash of the lowercased
 *          name, crypto_generichash(name, key = meta "hold_key"), 32
 *          bytes; no qualifier; version = the deletion's ms; TTL = the
 *          name hold (WARBLE_NAME_HOLD) -> "" (empty).  The name itself
 *          is not stored: whoever holds the store and its key can only
 *          test a guess.
 *
 * log      the user service's event log (evlog): row = seq (8 BE) ->
 *          {seq, type "erase", uid, time}: an account deleted, whose data
 *          relation, content and the inbox then erase (and this service
 *          its sessions, user_erase.c); no name in it.
 *
 * meta also holds row "hold_key" -> the 32-byte key of the hold hash
 *          (made at the first start), and row "swept" -> the seq of the
 *          last log event whose sessions user_erase.c has deleted (8 BE).
 */
#ifndef USER_SCHEMA_H
#define USER_SCHEMA_H

#include <stdint.h>

#include "hb.h"

enum user_fam {
	USER_FAM_INFO = 0,
	USER_FAM_NAME,
	USER_FAM_SESSION,
	USER_FAM_META,
	USER_FAM_REVOKE,
	USER_FAM_HOLD,
	USER_FAM_LOG,
	USER_FAM_COUNT
};

/* Revocation kinds (the first byte of a revoke cell). */
enum user_revoke_kind { USER_REVOKE_SESSION = 1, USER_REVOKE_ALL = 2, USER_REVOKE_CLOSED = 3 };
#define USER_REVOKE_LEN 33

#define USER_Q_NAME       "name"
#define USER_Q_PW         "pw"
#define USER_Q_CREATED    "created"
#define USER_Q_DISPLAY    "display"
#define USER_Q_BIO        "bio"
#define USER_Q_NB         "nb"
#define USER_META_UID     "uid"
#define USER_META_SIGN    "sign/"       /* + kid: a token signing key */
#define USER_META_MAC_KEY "session_key" /* the keyed-hash key of an earlier release: deleted */
#define USER_META_REV     "revseq"
#define USER_META_HOLD    "hold_key" /* the key of the hold family's hash */
#define USER_META_SWEPT   "swept"    /* the log seq whose sessions are deleted */
#define USER_HOLD_KEY     32         /* bytes of that key, and of a hold row */
#define USER_VERSION      0          /* the version of every info, name and meta cell */

/* user_schema fills fams[USER_FAM_COUNT] with the families; sessions expire after session_ttl_ms,
 * a deleted account's name is held for name_hold_ms. */
void user_schema(hb_family_opts *fams, uint64_t session_ttl_ms, uint64_t name_hold_ms);

#endif
