/*
 * evlog_int.h - the log's state, shared by evlog.c (commits, reads,
 * publishing) and evlog_retain.c (consumers' positions and the trim).
 */
#ifndef EVLOG_INT_H
#define EVLOG_INT_H

#include <pthread.h>
#include <stdbool.h>

#include "evlog.h"

#define EVLOG_BATCH     256   /* events per published message */
#define EVLOG_FLUSH_US  1000  /* longest wait for a batch to fill */
#define EVLOG_QUEUE_MAX 65536 /* pending events beyond this are dropped */
#define EVLOG_TIMES     65536 /* commit times kept, by seq (evlog_pace.c) */

/* A consumer as the source knows it. */
typedef struct evlog_consumer {
	char     name[EVLOG_CONSUMER_NAME_MAX + 1];
	uint64_t applied;  /* the last seq it reported applied */
	uint64_t heard_ms; /* when it last reported, Unix ms */
} evlog_consumer;

struct evlog {
	hb_table       *t;
	int             fam;
	char           *source;
	rt_pub         *pub;
	pthread_mutex_t commit_mu; /* serializes commits */
	uint64_t        last;      /* last committed seq (written under commit_mu, atomic) */
	uint64_t       *times;     /* Unix ms each of the last EVLOG_TIMES seqs was committed,
	                            * at seq % EVLOG_TIMES (atomic; written under commit_mu) */
	uint64_t        first;     /* first kept seq, 0 if none (atomic; written under commit_mu) */

	/* publish queue: a ring of event copies, guarded by q_mu */
	pthread_mutex_t q_mu;
	pthread_cond_t  q_cv;
	wb_obj        **q;
	size_t          q_head, q_len;
	bool            closing;
	bool            has_thread;
	pthread_t       thread;
	uint64_t        dropped;

	/* consumers (evlog_retain.c), guarded by cons_mu */
	pthread_mutex_t cons_mu;
	evlog_consumer  cons[EVLOG_CONSUMERS_MAX];
	size_t          ncons;
	uint64_t        saved_ms; /* when the table was last written to the store */
	bool            dirty;    /* a report came since */

	/* the producers' pace (evlog_pace.c), under cons_mu */
	evlog_pace     pace;
	pthread_cond_t pace_cv; /* a report came */
	unsigned       pace_waiting;
	uint64_t       paced, pace_ms, pace_over; /* waits, their ms, and those cut short */

	/* the trim (evlog_retain.c) */
	evlog_retention ret;     /* retention_ms 0: no trim */
	pthread_mutex_t trim_mu; /* one pass at a time; guards trim_stop */
	pthread_cond_t  trim_cv; /* wakes the trimmer to stop */
	bool            trim_stop;
	bool            has_trimmer;
	pthread_t       trimmer;
	uint64_t        trimmed;     /* events trimmed since open (atomic) */
	uint64_t        trim_passes; /* passes run since open (atomic) */
};

/* evlog_consumers_load reads the consumers' positions the store keeps (none: an empty table). */
int evlog_consumers_load(evlog *l);

/* evlog_consumers_close writes the positions once more and stops the trimmer. */
void evlog_consumers_close(evlog *l);

/* evlog_times_note records that seqs [first, last] were committed now (under commit_mu). */
void evlog_times_note(evlog *l, uint64_t first, uint64_t last);

/* evlog_pace_gauges adds log_behind_ms, log_paced, log_paced_ms and log_pace_over to s. */
int evlog_pace_gauges(evlog *l, rt_server *s);

/* evlog_pace_heard wakes the producers waiting for a consumer (under cons_mu). */
void evlog_pace_heard(evlog *l);

/* evlog_report notes that consumer name has applied seq applied (at now_ms). */
int evlog_report(evlog *l, const char *name, size_t name_len, uint64_t applied, uint64_t now_ms);

#define EVLOG_LOAD(p)     __atomic_load_n((p), __ATOMIC_SEQ_CST)
#define EVLOG_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)
#define EVLOG_ADD(p, v)   __atomic_add_fetch((p), (v), __ATOMIC_RELAXED)

#endif
