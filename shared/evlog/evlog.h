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
 *
 * Retention (evlog_retain.c): each consumer reports the last seq it
 * applied with its reads ({consumer, applied} on the "*.log" operation,
 * evlog_serve); the log keeps those positions in its table, and a
 * background pass deletes the events below what every consumer has
 * applied once they are older than the retention, and those older than
 * the max age whatever a consumer has applied.  The last event is never
 * deleted, so the seqs go on after a restart; kept seqs stay one
 * contiguous run [first, last], and every read says first, so a consumer
 * that asks from a seq below it knows the events it lacks are gone.
 *
 * The pace (evlog_pace.c): from the same reports and the commit times of
 * its last events, the log knows how far behind its slowest consumer is,
 * and a producer may wait before its commit while that is too far.
 */
#ifndef EVLOG_H
#define EVLOG_H

#include "hb.h"
#include "rt_pubsub.h"
#include "rt_server.h"
#include "wb_proto.h"

#define EVLOG_READ_MAX          1000 /* most events one read returns */
#define EVLOG_CONSUMERS_MAX     128  /* consumers one log keeps positions of */
#define EVLOG_CONSUMER_NAME_MAX 31   /* a consumer's name: 1-31 of a-z A-Z 0-9 / . _ : - */

typedef struct evlog evlog;

/* How long events stay (evlog_retain). */
typedef struct evlog_retention {
	uint64_t
	    retention_ms;    /* events this old go once every consumer applied them (0: none go) */
	uint64_t max_age_ms; /* events this old go whatever a consumer applied (>= retention) */
} evlog_retention;

/* The options of the retention, the same rows in every service with a log (rt_config.h). */
#define EVLOG_OPT_RETENTION(dst)                                                              \
	{                                                                                     \
		"log-retention", "WARBLE_LOG_RETENTION", "604800",                            \
		    "seconds an event stays in the event log once every consumer applied it " \
		    "(0: keep every event)",                                                  \
		    (dst)                                                                     \
	}
#define EVLOG_OPT_MAX_AGE(dst)                                                              \
	{                                                                                   \
		"log-max-age", "WARBLE_LOG_MAX_AGE", "2592000",                             \
		    "seconds after which an event leaves the event log even if a consumer " \
		    "has not applied it; a consumer silent this long is forgotten",         \
		    (dst)                                                                   \
	}

/* How a log holds its producers back while a consumer is behind (evlog_pace.c). */
typedef struct evlog_pace {
	uint64_t lag_ms;  /* a commit waits while a consumer has not applied an event this old
	                     (0: never waits) */
	uint64_t wait_ms; /* the longest a commit waits; then it goes on */
	unsigned waiters; /* commits held at once; the others go on at once (0: no limit) */
} evlog_pace;

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

/* evlog_pace_set sets how the log holds its producers back (none until it is set). */
void evlog_pace_set(evlog *l, const evlog_pace *p);

/*
 * evlog_pace_wait holds the calling producer while a consumer heard from
 * within the last second has not applied an event older than the pace's
 * lag_ms, up to its wait_ms (a spare thread serves meanwhile:
 * rt_loop_slow_begin); call it before a commit, holding no lock.
 */
void evlog_pace_wait(evlog *l);

/* evlog_behind_ms gives the age at now_ms of the oldest event a consumer heard from within the
 * last second has not applied (0: none). */
uint64_t evlog_behind_ms(evlog *l, uint64_t now_ms);

/*
 * evlog_backup_logs adds the log's position to a backup's reply as LOGS
 * [{source, last}]: the last committed seq, read before the checkpoint
 * (rt_admin_logs(admin, evlog_backup_logs, log, false)), so the copy
 * holds at least that much.
 */
int evlog_backup_logs(void *log, wb_obj *rep);

/* evlog_first returns the first seq the log still holds (0 if none). */
uint64_t evlog_first(evlog *l);

/*
 * evlog_read fills rep with EVENTS from seq from on (at most limit,
 * capped at EVLOG_READ_MAX), LAST and FIRST (the first seq held, read
 * after the events: an event below from that the reply lacks was trimmed
 * if FIRST is above it).
 */
int evlog_read(evlog *l, uint64_t from, size_t limit, wb_obj *rep);

/*
 * evlog_serve answers a "*.log" request {from, limit?, consumer?,
 * applied?} -> {events, last, first}: a request naming a consumer
 * reports the last seq it applied (both or neither), kept as that
 * consumer's position with the time of the report.  It is the whole
 * handler of post.log, rel.log and any other service's log.
 */
int evlog_serve(evlog *l, const wb_obj *req, wb_obj *rep);

/* evlog_retention_config checks the options' values (seconds) into r; nonzero (a message
 * printed) if bad. */
int evlog_retention_config(evlog_retention *r, const char *retention, const char *max_age);

/*
 * evlog_retain starts the background trim of the log as r says: a pass
 * every quarter of the retention, at least every minute and at most
 * every second (evlog_retain.c).  Without it nothing is trimmed, but
 * positions are still kept.
 */
int evlog_retain(evlog *l, const evlog_retention *r);

/*
 * evlog_trim runs one pass of the trim by r at now_ms (Unix ms; tests
 * pass their own) and says how many events it deleted: those below
 * min(every known consumer's applied, the first event younger than the
 * retention), and below the first event younger than the max age
 * whatever a consumer applied; never the last.  Consumers silent for
 * longer than the max age are forgotten first.
 */
int evlog_trim(evlog *l, const evlog_retention *r, uint64_t now_ms, uint64_t *trimmed);

/*
 * evlog_gauges adds the log's figures to a server's stats: log_first_seq,
 * log_last_seq, log_bytes (its SST files), log_trimmed (events deleted
 * since the start), log_consumers, log_behind_ms (evlog_behind_ms),
 * log_paced, log_paced_ms and log_pace_over (commits held by the pace,
 * their wait in all, and those it let go at wait_ms), and per consumer
 * log_consumer_applied{consumer=..} and log_consumer_age_ms{consumer=..}
 * (since its last report).
 */
int evlog_gauges(evlog *l, rt_server *s);

#endif
