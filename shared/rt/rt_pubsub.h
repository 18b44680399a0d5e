/*
 * rt_pubsub.h - events over nng pub/sub.  Fast but lossy by design (a
 * slow, restarting or not yet connected subscriber misses messages); the
 * sources' durable event logs make delivery complete.  Buffers are raised
 * to 8192 messages each way; publish batches of events, not single ones.
 */
#ifndef RT_PUBSUB_H
#define RT_PUBSUB_H

#include "wb_proto.h"

typedef struct rt_pub rt_pub;
typedef struct rt_sub rt_sub;

/* rt_sub_fn receives one decoded message on the subscriber's own thread; it may block. */
typedef void (*rt_sub_fn)(void *arg, const wb_obj *msg);

/* rt_pub_open listens for subscribers on url. */
int rt_pub_open(rt_pub **out, const char *url);

/* rt_pub_send encodes and publishes m; never blocks (drops if buffers are full). */
int rt_pub_send(rt_pub *p, const wb_obj *m);

/* rt_pub_close closes the publisher; NULL is ignored. */
void rt_pub_close(rt_pub *p);

/* rt_sub_open dials url (redialling as needed) and calls fn for every message on a thread of its own. */
int rt_sub_open(rt_sub **out, const char *url, rt_sub_fn fn, void *arg);

/* rt_sub_close stops the thread (waiting for a running fn) and closes; NULL is ignored. */
void rt_sub_close(rt_sub *s);

#endif
