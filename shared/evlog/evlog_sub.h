/*
 * evlog_sub.h - a durable consumer of another service's event log.
 *
 * Relation, content and the inbox follow the user service's log this
 * way (docs/architecture.md, "Deleting an account").  Pub/sub is only the
 * doorbell: a message from the source wakes the consumer's thread, which
 * reads the log itself (the source's "*.log" operation, a page at a
 * time) from the last event it applied, and applies each event in seq
 * order.  It reads the log also on start and whenever poll_ms pass
 * without a message, so nothing is lost to a dropped message, a restart
 * of either side, or a publisher it cannot reach.
 *
 * Position: the last applied seq and a digest of that event (its mark),
 * one row of the consumer's own store (row = the source's name, version
 * 0, value seq (8 BE) | mark (8 BE)).  apply gets a batch that already
 * holds the position of the event it applies, and writes that batch as
 * its last write (hb_write, or evlog_commit for a service with a log of
 * its own), so the event's last effects and the new position commit
 * together.  An event whose apply fails or is cut short by a crash is
 * applied again: apply must be idempotent, and may write its work in
 * several batches before the last one (relation erases a million fans a
 * thousand at a time).
 *
 * A log that ends before the applied seq, or holds another event there
 * (the source restored from an older copy, or its store lost), went back
 * in time: the consumer says so and applies the whole log again from its
 * first event.
 */
#ifndef EVLOG_SUB_H
#define EVLOG_SUB_H

#include <stdbool.h>
#include <stdint.h>

#include "hb.h"
#include "rt_client.h"
#include "rt_tls.h"
#include "wb_proto.h"

typedef struct evlog_sub evlog_sub;

/*
 * An evlog_apply_fn applies one event (a map {seq, type, uid, ...}) on
 * the consumer's thread, writing b (which holds the new position) as its
 * last write; it returns WB_OK, or an error after which the event is
 * tried again (with backoff, 100 ms doubling to 5 s).
 */
typedef int (*evlog_apply_fn)(void *arg, evlog_sub *s, const wb_obj *ev, hb_batch *b);

typedef struct evlog_sub_opts {
	const char *source;  /* the log's name ("user"): its messages' source, the row */
	const char *pub_url; /* where the source publishes (NULL or "": reads alone) */
	rt_tls     *tls;     /* the identity to subscribe as (NULL: plain) */
	rt_client  *client;  /* the source's service (borrowed: must outlive the consumer) */
	wb_op       log_op; /* the operation that reads its log ({from, limit} -> {events, last}) */
	hb_table   *t;      /* the consumer's store */
	int         fam;    /* the family of the position (variable rows, no qualifier) */
	evlog_apply_fn apply;
	void          *arg;
	uint32_t       poll_ms; /* read the log this often when nothing arrives (0: 500) */
} evlog_sub_opts;

/* evlog_sub_open makes a consumer and reads its position (nothing runs yet). */
int evlog_sub_open(evlog_sub **out, const evlog_sub_opts *o);

/* evlog_sub_start subscribes to the source and starts the consumer's thread. */
int evlog_sub_start(evlog_sub *s);

/* evlog_sub_stop ends the subscription and the thread (an apply in progress is left to finish or
 * fail); the figures stay readable until evlog_sub_close. */
void evlog_sub_stop(evlog_sub *s);

/* evlog_sub_close stops the consumer if it runs and frees it; NULL is ignored. */
void evlog_sub_close(evlog_sub *s);

/* evlog_sub_stopping tells a long apply that the consumer is closing: return WB_ECLOSED soon. */
bool evlog_sub_stopping(evlog_sub *s);

/* evlog_sub_applied returns the last applied seq (a gauge: its argument is the consumer). */
uint64_t evlog_sub_applied(void *s);

/* evlog_sub_behind returns the events the source is known to hold beyond the applied one (a gauge). */
uint64_t evlog_sub_behind(void *s);

/* evlog_mark returns the digest of an event kept with its seq (never 0). */
uint64_t evlog_mark(const wb_obj *ev);

#endif
