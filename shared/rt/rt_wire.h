/*
 * rt_wire.h - the SP request/reply wire format, as nng 1.5's tcp and ipc
 * transports and its REQ/REP version 0 protocols speak it; shared by the
 * client (rt_sp.c) and the server (rt_server.c).
 *
 *   handshake, each side once    00 'S' 'P' 00 | protocol (u16 BE) | 00 00
 *   a tcp message                length (u64 BE) | payload
 *   an ipc message               01 | length (u64 BE) | payload
 *   a request's payload          request id (u32 BE, top bit set) | body
 *   its reply's payload          the same request id | body
 *
 * A request that passed through devices carries one 4-byte word per hop
 * before the id (top bit clear); a reply copies them all back.
 */
#ifndef RT_WIRE_H
#define RT_WIRE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define RT_WIRE_REQ      0x30 /* nng's REQ version 0 */
#define RT_WIRE_REP      0x31 /* nng's REP version 0 */
#define RT_WIRE_PUB      0x20 /* nng's PUB version 0 (its messages: the payload alone) */
#define RT_WIRE_SUB      0x21 /* nng's SUB version 0 */
#define RT_WIRE_HELLO    8    /* bytes of a handshake */
#define RT_WIRE_MAX_HOPS 8    /* words of a request's header at most (nng's default TTL) */

/* rt_wire_hello writes the handshake of protocol proto into h. */
static inline void
rt_wire_hello(uint8_t h[RT_WIRE_HELLO], uint8_t proto)
{
	memcpy(h, (const uint8_t[RT_WIRE_HELLO]) { 0, 'S', 'P', 0, 0, proto, 0, 0 }, RT_WIRE_HELLO);
}

/* rt_wire_hello_ok tells whether h is the handshake of protocol proto. */
static inline bool
rt_wire_hello_ok(const uint8_t h[RT_WIRE_HELLO], uint8_t proto)
{
	uint8_t want[RT_WIRE_HELLO];

	rt_wire_hello(want, proto);
	return memcmp(h, want, RT_WIRE_HELLO) == 0;
}

/* rt_wire_put writes v as n big-endian bytes at p. */
static inline void
rt_wire_put(uint8_t *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8) {
		p[i] = (uint8_t)v;
	}
}

/* rt_wire_get reads n big-endian bytes at p. */
static inline uint64_t
rt_wire_get(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++) {
		v = v << 8 | p[i];
	}
	return v;
}

#endif
