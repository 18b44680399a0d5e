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
 * meta     row "uid", no qualifier, version 0 -> last allocated uid (8 BE)
 */
#ifndef USER_SCHEMA_H
#define USER_SCHEMA_H

#include <stdint.h>

#include "hb.h"

enum user_fam { USER_FAM_INFO = 0, USER_FAM_NAME, USER_FAM_SESSION, USER_FAM_META, USER_FAM_COUNT };

#define USER_Q_NAME    "name"
#define USER_Q_PW      "pw"
#define USER_Q_CREATED "created"
#define USER_Q_DISPLAY "display"
#define USER_Q_BIO     "bio"
#define USER_META_UID  "uid"
#define USER_VERSION   0 /* the version of every info, name and meta cell */

/* user_schema fills fams[USER_FAM_COUNT] with the families; sessions expire after session_ttl_ms. */
void user_schema(hb_family_opts *fams, uint64_t session_ttl_ms);

#endif
