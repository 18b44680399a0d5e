/*
 * wbt_sp.h - the SP wire by hand, for the tests that send what no client
 * of Warble would (a request trickled, cut short, or too large): the REQ
 * side of the handshake, a request frame, and a reply read back.
 *
 *   frame  [length: 8 bytes, big-endian][request id: 4, top bit set][msgpack]
 *
 * The length counts the id and the msgpack; a reply carries the id of its
 * request.
 */
#ifndef WBT_SP_H
#define WBT_SP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct wb_obj;

/* wbt_sp_hello does the REQ side of the SP handshake on a connected fd; 0, or -1. */
int wbt_sp_hello(int fd);

/*
 * wbt_sp_frame encodes req as a request frame with request id id (its top
 * bit set); the frame (malloc'd, *n bytes), or NULL if req cannot be
 * encoded or memory is short.
 */
uint8_t *wbt_sp_frame(const struct wb_obj *req, uint32_t id, size_t *n);

/*
 * wbt_sp_reply reads one reply from fd within ms into *rep (its request
 * id, top bit set, into *id unless id is NULL).  WB_OK; WB_ETIMEDOUT if
 * none came in time or the peer closed; WB_EBADMSG (why in err) if what
 * came is not a whole reply under 1 MiB.
 */
int wbt_sp_reply(int fd, int ms, uint32_t *id, struct wb_obj **rep, char *err, size_t errlen);

/* wbt_sp_closed tells whether the peer closed fd within ms (its reading end sees the end). */
bool wbt_sp_closed(int fd, int ms);

#endif
