/*
 * inbox_int.h - the inbox service's state, shared by its files.
 *
 *   content/0..C-1 SUB ---\                       /--> post.log, post.timeline
 *                          > queue -> applier ---<
 *   relation/j..k SUB ----/   (one thread)        \--> rel.log, rel.fans {slots}
 *                                 |
 *                                 v
 *                tl cells + meta seq (one batch per page)
 *
 * An inbox shard owns the inboxes of a slot range (its readers).  It
 * takes the events of every content shard (any author may have fans
 * here) and of the relation shards whose slots overlap its own (the
 * follows of its readers are there), one applier thread for all, each
 * source in seq order; subscriber callbacks only copy events into the
 * queue.
 */
#ifndef INBOX_INT_H
#define INBOX_INT_H

#include <pthread.h>
#include <stdbool.h>

#include "inbox.h"
#include "inbox_cache.h"
#include "rt_client.h"
#include "rt_pubsub.h"
#include "rt_shards.h"
#include "wb_services.h"
#include "wb_slot.h"

#define INBOX_QUEUE_MAX 200000 /* queued events beyond this are dropped (the log has them) */
#define INBOX_REPORT_MS 2000   /* each source hears the applied seq at least this often */
#define INBOX_REPORT_BUSY_MS \
	10 /* ... and this often while it moves: the source paces its producers by it (evlog_pace.c) */

/* An event as the applier needs it. */
typedef struct inbox_event {
	uint64_t seq, uid, target, id, time;
	wb_event type;                /* WB_EV_NONE: a type this build ignores */
	char     rid[WB_RID_MAX + 1]; /* the id of the request that made it ("": none) */
} inbox_event;

/* A queued message: the events of one published batch. */
typedef struct inbox_msg {
	struct inbox_msg *next;
	int               src;
	uint64_t          recv_ms; /* when it came: its source had published it by then */
	size_t            n;
	inbox_event       ev[];
} inbox_msg;

#define INBOX_VISIBLE_BUCKETS 22 /* bounds of the histogram of posts' commit to visible (inbox.c) */

#define INBOX_SRC_MAX (2 * WB_SHARDS_MAX) /* every content shard and relation shard, at most */

/* One event source: a content shard's log or a relation shard's. */
typedef struct inbox_source {
	inbox   *in;
	int      idx;
	bool     relation; /* a relation shard (follow, unfollow), else a content shard */
	unsigned shard;    /* its index among its service's shards */
	char     name[24]; /* "content/0", "relation/2": the meta row and the events' source */
	char    *pub_url;
	wb_op    log_op; /* post.log or rel.log */
	rt_sub  *sub;
	uint64_t applied;    /* last applied seq (atomic for gauges) */
	uint64_t mark;       /* inbox_event_mark of that event (0: unknown; applier only) */
	uint64_t known_last; /* newest seq seen from the source (atomic) */
	uint64_t heard_ms;   /* last message or successful pull */
	uint64_t synced_ms;  /* every event published by then is applied (atomic; 0: never) */
	uint64_t retry_ms;   /* after a failure: nothing before this */
	uint64_t backoff_ms;
	uint64_t reported_ms; /* the last time the applied seq was told to the source */
	uint64_t reported;    /* the applied seq told then (applier only) */
} inbox_source;

struct inbox {
	hb_table  *t;
	inbox_opts opts;
	unsigned   lo, hi;         /* the slots of its readers: [lo, hi) */
	unsigned   ncontent;       /* content shards */
	unsigned   nrelation;      /* relation shards */
	unsigned   rel_lo, rel_hi; /* the relation shards overlapping [lo, hi): [rel_lo, rel_hi) */
	rt_shards *content;        /* dialled by inbox_start */
	rt_shards *relation;
	char       consumer[24]; /* its name to the sources: "inbox/<shard>" */
	inbox_source src[INBOX_SRC_MAX];
	int          nsrc;      /* content sources first, then relation ones */
	hb_batch    *batch;     /* the applier's, reused */
	hb_batch    *batch2;    /* the other half of a large page */
	inbox_cache *cache;     /* the newest cells of recent readers (NULL: none) */
	rt_client   *users;     /* user.log */
	evlog_sub   *deletions; /* the user service's log: inbox_erase.c */
	uint64_t     mark;      /* the mark of the event being applied (applier only) */

	pthread_mutex_t mu; /* queue */
	pthread_cond_t  cv;
	inbox_msg      *head, *tail;
	size_t          queued; /* events in the queue */
	_Atomic bool    stop;   /* read by the applier outside mu */
	bool            running;
	pthread_t       applier;

	/* figures for stats (atomic) */
	uint64_t events_applied;
	uint64_t posts_merged; /* post events applied in a write with others */
	uint64_t cells_written;
	uint64_t cells_deleted;
	uint64_t last_fanout_ms;
	uint64_t last_fanout_cells;
	uint64_t visible[INBOX_VISIBLE_BUCKETS + 1]; /* posts applied by ms from their commit
	                                               * (inbox_visible_note) */
	uint64_t visible_ms;                         /* ... those ms in all */
	uint64_t fanout_in_progress;
	uint64_t dropped;
	uint64_t pulls;
	uint64_t gaps;
	uint64_t source_errors;
	uint64_t
	    trim_rebuilds;   /* rebuilds asked because a source's log no longer held what was due */
	uint64_t cache_hits; /* inbox.home answered from the cache */
	uint64_t cache_misses; /* inbox.home that read the store */

	/* rebuild (inbox_rebuild.c): asked under mu, run by the applier */
	bool     rb_asked;    /* under mu */
	uint32_t rb_depth;    /* under mu: posts per follow */
	uint64_t rb_retry_ms; /* applier only: after a failure, not before this */
	uint64_t rb_state;    /* INBOX_RB_* (atomic, as are the figures below) */
	uint64_t rb_done;     /* follows written */
	uint64_t rb_total;    /* follows in all (relation's estimate) */
	uint64_t rb_authors;  /* followed users done */
	uint64_t rb_own;      /* readers given their own posts */
	uint64_t rb_t0_ms;    /* start, monotonic ms */
	uint64_t rb_elapsed;  /* ms, once over */
	uint64_t rb_err;      /* the failure's code */

	/* hybrid fan-out (inbox_hybrid.c) */
	pthread_rwlock_t   big_mu;      /* the set of big accounts */
	bool               big_mu_live; /* big_mu was made */
	struct inbox_big  *big;         /* big accounts here, by uid (under big_mu) */
	size_t             nbig, big_cap;
	uint64_t           nbig_live;    /* nbig, read without big_mu (atomic) */
	struct inbox_seen *seen;         /* recent authors' local fans (applier only) */
	uint64_t           outbox_posts; /* posts written to an outbox instead of fanned out */
	uint64_t           crossed_up;   /* accounts found over the limit */
	uint64_t           crossed_down; /* big accounts found at or under it again */
};

typedef struct inbox_seen inbox_seen;
typedef struct inbox_big  inbox_big;

enum { INBOX_RB_IDLE = 0, INBOX_RB_QUEUED, INBOX_RB_RUNNING, INBOX_RB_DONE, INBOX_RB_FAILED };

#define INBOX_META_REBUILD "rebuild" /* meta row present while a rebuild is unfinished */

/* meta row of a source: its applied seq (8 BE), then that event's mark (8 BE; absent: unknown) */
#define INBOX_META_LEN 16

/* inbox_source_client returns the client of the shard whose log s is. */
rt_client *inbox_source_client(inbox *in, const inbox_source *s);

/* inbox_mine tells whether reader uid's inbox is kept here. */
static inline bool
inbox_mine(const inbox *in, uint64_t uid)
{
	unsigned slot = wb_slot(uid);

	return slot >= in->lo && slot < in->hi;
}

/* inbox_rel_slots gives the slots of this inbox's readers on relation shard j: [*lo, *hi). */
void inbox_rel_slots(const inbox *in, unsigned j, unsigned *lo, unsigned *hi);

/* inbox_fans_req builds rel.fans {uid, after?, limit, slots} for the fans relation shard j holds in this inbox's slots (NULL if out of memory). */
wb_obj *inbox_fans_req(inbox *in, unsigned j, uint64_t uid, uint64_t after, uint64_t limit);

/* inbox_commit writes the applier's batch (adding s's applied seq when last) and clears it. */
int inbox_commit(inbox *in, inbox_source *s, uint64_t seq, bool last);

/* inbox_hybrid_open prepares hybrid fan-out and loads the big accounts from the store. */
int inbox_hybrid_open(inbox *in);

/* inbox_hybrid_close frees what inbox_hybrid_open made. */
void inbox_hybrid_close(inbox *in);

/* inbox_big_is tells whether uid's posts go to its outbox here (any thread). */
bool inbox_big_is(inbox *in, uint64_t uid);

/* inbox_big_suspect tells whether uid may be over the limit: big here, or many fans here at
 * its last fan-out (applier). */
bool inbox_big_suspect(inbox *in, uint64_t uid);

/* inbox_big_seen notes the fans uid had in this shard's slots at a fan-out (applier). */
void inbox_big_seen(inbox *in, uint64_t uid, uint64_t fans);

/* inbox_big_post applies post ev of s when its author is big (crossing up first if it
 * just became so; *done then true, seq written), or crosses down (*done false: fan it out). */
int inbox_big_post(inbox *in, inbox_source *s, const inbox_event *ev, bool *done);

/* inbox_big_delete deletes the post of delete ev from its author's outbox, if big. */
int inbox_big_delete(inbox *in, const inbox_event *ev);

/* inbox_big_erase adds to b the deletes of a deleted account's hybrid rows: its list of big
 * accounts followed (if its inbox is here) and, on every shard, its outbox and big mark. */
int inbox_big_erase(inbox *in, hb_batch *b, uint64_t uid);

/* inbox_big_forget takes uid out of the in-memory set of big accounts (once its rows are gone). */
void inbox_big_forget(inbox *in, uint64_t uid);

/* inbox_big_follow adds to b the bigf cell of a follow of a big account, or its delete on
 * unfollow. */
int inbox_big_follow(inbox *in, hb_batch *b, const inbox_event *ev, bool follow);

/* inbox_big_merge merges into cells[0..*n) (newest first) the posts below maxv (0: any) of
 * the big accounts uid follows, keeping the newest want (cells holds INBOX_PAGE_MAX + 1). */
int inbox_big_merge(
    inbox *in, uint64_t uid, uint64_t maxv, size_t want, inbox_cell *cells, size_t *n);

/* inbox_big_clear forgets every big account, outbox and bigf cell (a rebuild fans out all). */
int inbox_big_clear(inbox *in);

/* inbox_apply applies one event of source s (whose seq is applied + 1, or
 * the first after a trimmed log), writing the meta seq with its last
 * cells; on success s->applied is the event's seq. */
int inbox_apply(inbox *in, inbox_source *s, const inbox_event *ev);

/* inbox_apply_many applies evs[0..n) of s (consecutive seqs, the first
 * applied + 1) in order, runs of posts together; stops at the first
 * failure, with s->applied the last event applied. */
int inbox_apply_many(inbox *in, inbox_source *s, const inbox_event *evs, size_t n);

/* inbox_visible_note counts the posts among n events just applied in the histogram of their
 * time from commit (the event's time) to visible here. */
void inbox_visible_note(inbox *in, const inbox_event *evs, size_t n);

/* inbox_applier_main is the applier thread. */
void *inbox_applier_main(void *arg);

/* inbox_sub_cb queues a published batch of events (a subscriber callback; arg is the source). */
void inbox_sub_cb(void *arg, const wb_obj *msg);

/* inbox_rebuild_due tells the applier whether a rebuild waits for it (taking the request). */
bool inbox_rebuild_due(inbox *in);

/* inbox_rebuild_run rebuilds every inbox on the applier thread (see inbox_rebuild.c). */
int inbox_rebuild_run(inbox *in);

/* inbox_rebuild_ask queues a rebuild of depth posts per follow (the applier runs it); false if one is queued or running already. */
bool inbox_rebuild_ask(inbox *in, uint32_t depth);

/*
 * inbox_event_mark is a 64-bit digest of an event (seq, type, uid,
 * target, id, time; never 0), kept with the applied seq: the event a
 * source's log holds at that seq must have the same mark, or the source
 * was restored from an older copy and has handed the seq to another
 * event since.
 */
uint64_t inbox_event_mark(const inbox_event *ev);

/* inbox_erase_row drops reader uid's whole row (if kept here) with s's applied seq: relation's
 * "erased" event, after which nothing more comes into it (inbox_fanout.c). */
int inbox_erase_row(inbox *in, inbox_source *s, const inbox_event *ev);

/* inbox_event_parse reads an event record (false if it lacks a seq). */
bool inbox_event_parse(const wb_obj *o, inbox_event *ev);

#define INBOX_LOAD(p)     __atomic_load_n((p), __ATOMIC_RELAXED)
#define INBOX_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define INBOX_ADD(p, v)   __atomic_add_fetch((p), (v), __ATOMIC_RELAXED)

#endif
