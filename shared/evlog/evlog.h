/*
 * evlog.h - a service's durable event log, published over pub/sub.
 *
 * A source service (content, relation) commits each state change and its
 * event in one atomic batch, answers its client, and only then publishes
 * the event.  Consumers (inbox) track the last seq they applied and pull
 * what pub/sub dropped from the log with the source's "*.log" operation.
 *
 *   log cell:  row = seq (8 bytes, big-endian), no qualifier, version 0
 *              value = the event as a msgpack map {seq, type, uid, target|id, time}
 *
 * Seqs start at 1 and have no gaps: commits are serialized, so seq n is
 * durable before n+1 is assigned.  Published messages batch several
 * events: {"op":"events", "source":"content", "events":[...]}.
 */
#ifndef EVLOG_H
#define EVLOG_H

#include "hb.h"
#include "rt_pubsub.h"
#include "wb_proto.h"

#define EVLOG_READ_MAX 1000 /* most events one read returns */

typedef struct evlog evlog;

/* evlog_family gives the settings of a log family named name (callers add it to their table). */
hb_family_opts evlog_family(const char *name);

/* evlog_open attaches a log to family fam of t; events go out on pub (may be NULL) as source. */
int evlog_open(evlog **out, hb_table *t, int fam, const char *source, rt_pub *pub);

/* evlog_close publishes what is pending and frees the log; NULL is ignored. */
void evlog_close(evlog *l);

/*
 * evlog_commit assigns the next seq to event (an object with TYPE, UID and
 * TARGET or ID set; SEQ and TIME are filled in), adds it to batch b, writes
 * b atomically and queues the event for publishing.  Commits are
 * serialized across threads.  On error nothing is written.
 */
int evlog_commit(evlog *l, hb_batch *b, wb_obj *event, uint64_t *seq);

/*
 * evlog_commit_many is evlog_commit for n events at once: they get n
 * consecutive seqs (the first in *first_seq) and go into b, which is
 * written once, atomically.  On error nothing is written.
 */
int evlog_commit_many(evlog *l, hb_batch *b, wb_obj *const *events, size_t n, uint64_t *first_seq);

/* evlog_last returns the last committed seq (0 if none). */
uint64_t evlog_last(evlog *l);

/*
 * evlog_backup_logs adds the log's position to a backup's reply as LOGS
 * [{source, last}]: the last committed seq, read before the checkpoint
 * (rt_admin_logs(admin, evlog_backup_logs, log, false)), so the copy
 * holds at least that much.
 */
int evlog_backup_logs(void *log, wb_obj *rep);

/* evlog_read fills rep with EVENTS from seq from on (at most limit, capped at EVLOG_READ_MAX) and LAST. */
int evlog_read(evlog *l, uint64_t from, size_t limit, wb_obj *rep);

#endif
