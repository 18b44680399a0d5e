/*
 * rt_pubsub.h - events, published to every subscriber connected at the
 * time.  Fast but lossy by design (a slow, restarting or not yet
 * connected subscriber misses messages); the sources' durable event logs
 * make delivery complete.  Publish batches of events, not single ones.
 *
 * On tcp:// and ipc:// the SP pub/sub protocol is spoken here, as nng's
 * pub0 and sub0 speak it (rt_wire.h framing, protocols 0x20 and 0x21),
 * with mutual TLS when given an identity: a publisher thread holds up to
 * RT_PUB_QUEUE messages a subscriber and drops the oldest beyond.  Other
 * transports (inproc://, one process) go through libnng's pub0/sub0
 * with the same depth.
 */
#ifndef RT_PUBSUB_H
#define RT_PUBSUB_H

#include "rt_tls.h"
#include "wb_proto.h"

#define RT_PUB_QUEUE 8192 /* messages held for a subscriber before the oldest is dropped */

typedef struct rt_pub rt_pub;
typedef struct rt_sub rt_sub;

/* rt_sub_fn receives one decoded message on the subscriber's own thread; it may block. */
typedef void (*rt_sub_fn)(void *arg, const wb_obj *msg);

/*
 * rt_pub_open listens for subscribers on url; with tls, each must present
 * a certificate naming one of the identities in subscribers (rt_peer
 * bits; admin always may).
 */
int rt_pub_open(rt_pub **out, const char *url, rt_tls *tls, unsigned subscribers);

/* rt_pub_send encodes and publishes m; never blocks (drops the oldest of a full queue). */
int rt_pub_send(rt_pub *p, const wb_obj *m);

/* rt_pub_drops returns the messages dropped so far for subscribers too slow to take them. */
uint64_t rt_pub_drops(const rt_pub *p);

/* rt_pub_close closes the publisher and every subscriber's connection; NULL is ignored. */
void rt_pub_close(rt_pub *p);

/* rt_sub_open dials url (as tls's identity, else rt_tls_default's), redialling as needed, and calls fn for every message on a thread of its own. */
int rt_sub_open(rt_sub **out, const char *url, rt_tls *tls, rt_sub_fn fn, void *arg);

/* rt_sub_close stops the thread (waiting for a running fn) and closes; NULL is ignored. */
void rt_sub_close(rt_sub *s);

#endif
