/*
 * rt_dial.h - connecting to the URLs Warble's clients take, as nng names
 * them: tcp://HOST:PORT (an empty HOST is the loopback, [v6] in
 * brackets; names resolved in the background by rt_dns) and ipc:///PATH.
 * The REQ client (rt_sp) and the event subscriber (rt_pubsub) dial
 * through it.
 */
#ifndef RT_DIAL_H
#define RT_DIAL_H

#include <stdbool.h>
#include <stdint.h>

typedef struct rt_dial rt_dial;

/* rt_dial_supports tells whether url is one rt_dial connects to (tcp:// or ipc://). */
bool rt_dial_supports(const char *url);

/* rt_dial_open parses url (no connection yet); WB_EINVAL if it is not one rt_dial takes. */
int rt_dial_open(rt_dial **out, const char *url);

/* rt_dial_ipc tells whether d is an ipc:// address (its messages carry a leading 01 byte). */
bool rt_dial_ipc(const rt_dial *d);

/*
 * rt_dial_connect makes a connected, non-blocking socket (TCP_NODELAY on
 * tcp) to one of d's addresses within the deadline; -1 with errno set.
 * When no address takes it, the next call looks the host up again (the
 * server may have moved).
 */
int rt_dial_connect(rt_dial *d, uint64_t deadline_us);

/* rt_dial_close frees d; NULL is ignored. */
void rt_dial_close(rt_dial *d);

#endif
