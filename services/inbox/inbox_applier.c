/*
 * inbox_applier.c - the event queue, the applier thread and the log pulls
 * (inbox.c makes the sources: one per content shard, one per relation
 * shard overlapping the inbox's slots).
 *
 * Per source, the applier keeps the last applied seq (also stored in
 * meta, in the batch that finishes each event).  For an event with seq:
 *
 *   seq <= applied       already applied: skip
 *   seq == applied + 1   apply
 *   seq >  applied + 1   a gap (pub/sub dropped something): pull the log
 *                        from applied + 1, then continue
 *
 * It also pulls on start and whenever a source has been quiet for
 * poll_ms.  A source (or the service fan-out needs) that fails is retried
 * with backoff (100 ms doubling to 5 s) while inbox.home keeps serving.
 *
 * Every log read carries {consumer "inbox/<shard>", applied}, and a
 * source that no read reached for INBOX_REPORT_MS (a busy one, whose
 * events all come by pub/sub) gets a read of no events that carries it:
 * the source trims its log below what its consumers applied
 * (evlog_retain.c).  Each reply says the first seq the log still holds;
 * when it is above applied + 1 the events due here are gone, and the
 * inbox rebuilds from the stores instead (inbox_source_trimmed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "inbox_int.h"
#include "rt_log.h"
#include "inbox_schema.h"
#include "wb_clock.h"
#include "wb_hash.h"

#define INBOX_BACKOFF_MIN 100
#define INBOX_BACKOFF_MAX 5000
/*
 * The applier's nice value.  On cores the read path keeps busy, a
 * fan-out run held one for 256 cells at a time while reads and publish
 * acks queued behind it; niced, it gives way when they wake and catches
 * up in the gaps (docs/benchmarks.md, 2026-11-26 09:00 UTC).  Idle cores
 * it runs on as before.
 */
#define INBOX_APPLIER_NICE 10

bool
inbox_event_parse(const wb_obj *o, inbox_event *ev)
{
	const char *type = NULL;
	size_t      len = 0;
	memset(ev, 0, sizeof(*ev));
	if (!wb_get_u64(o, WB_F_SEQ, &ev->seq) || ev->seq == 0) {
		return false;
	}
	ev->uid = wb_u64(o, WB_F_UID, 0);
	ev->target = wb_u64(o, WB_F_TARGET, 0);
	ev->id = wb_u64(o, WB_F_ID, 0);
	ev->time = wb_u64(o, WB_F_TIME, 0);
	ev->type = wb_get_str(o, WB_F_TYPE, &type, &len) ? wb_event_lookup(type, len) : WB_EV_NONE;
	if (wb_get_str(o, WB_F_RID, &type, &len) && wb_rid_ok(type, len)) {
		memcpy(ev->rid, type, len); /* ev was zeroed: NUL-terminated */
	}
	return true;
}

uint64_t
inbox_event_mark(const inbox_event *ev)
{
	uint64_t h = wb_mix64(ev->seq);
	h = wb_mix64(h ^ (uint64_t)ev->type);
	h = wb_mix64(h ^ ev->uid);
	h = wb_mix64(h ^ ev->target);
	h = wb_mix64(h ^ ev->id);
	h = wb_mix64(h ^ ev->time);
	return h != 0 ? h : 1;
}

/* inbox_source_diverged reports that source s no longer holds the history applied here, and asks for a rebuild. */
static int
inbox_source_diverged(inbox_source *s, const char *why)
{
	RT_ERRORF("%s: %s; the source went back in time (restored from an older copy, or "
	          "its store lost): rebuilding every inbox",
	    s->name, why);
	INBOX_ADD(&s->in->source_errors, 1);
	(void)inbox_rebuild_ask(s->in, s->in->opts.backfill > 0 ? s->in->opts.backfill : 800);
	return WB_ECORRUPT;
}

/* inbox_source_trimmed reports that s's log starts at first, past the next event due here, and
 * asks for a rebuild (counted once per rebuild asked). */
static int
inbox_source_trimmed(inbox_source *s, uint64_t first)
{
	inbox *in = s->in;

	if (inbox_rebuild_ask(in, in->opts.backfill > 0 ? in->opts.backfill : 800)) {
		INBOX_ADD(&in->trim_rebuilds, 1);
		RT_ERRORF(
		    "%s: its log was trimmed past what this inbox applied (applied %llu, the "
		    "log starts at %llu): this inbox was away longer than the log keeps events "
		    "for it; rebuilding every inbox from relation and content",
		    s->name, (unsigned long long)s->applied, (unsigned long long)first);
	}
	return WB_ECORRUPT;
}

/* inbox_rebuild_queued tells whether a rebuild waits to run (pulls until then are wasted). */
static bool
inbox_rebuild_queued(inbox *in)
{
	return INBOX_LOAD(&in->rb_state) == INBOX_RB_QUEUED;
}

/* inbox_log_req makes a read of s's log from `from` that reports this inbox's applied seq. */
static wb_obj *
inbox_log_req(inbox_source *s, uint64_t from, uint64_t limit)
{
	wb_obj *req = wb_request(s->log_op);

	s->reported = INBOX_LOAD(&s->applied);
	if (req != NULL && (wb_set_u64(req, WB_F_FROM, from) != WB_OK ||
	                       (limit > 0 && wb_set_u64(req, WB_F_LIMIT, limit) != WB_OK) ||
	                       wb_set_cstr(req, WB_F_CONSUMER, s->in->consumer) != WB_OK ||
	                       wb_set_u64(req, WB_F_APPLIED, s->reported) != WB_OK)) {
		wb_msg_free(req);
		req = NULL;
	}
	return req;
}

void
inbox_sub_cb(void *arg, const wb_obj *msg)
{
	inbox_source *s = arg;
	inbox        *in = s->in;
	const wb_obj *evs = NULL;
	size_t        n = 0;
	const char   *src = NULL;
	if (wb_op_of(msg) != WB_OP_EVENTS || !wb_get_str(msg, WB_F_SOURCE, &src, NULL) ||
	    strcmp(src, s->name) != 0 || !wb_get_objs(msg, WB_F_EVENTS, &evs, &n) || n == 0) {
		return;
	}
	inbox_msg *m = malloc(sizeof(*m) + n * sizeof(m->ev[0]));
	if (m == NULL) {
		INBOX_ADD(&in->dropped, n);
		return;
	}
	m->next = NULL;
	m->src = s->idx;
	m->recv_ms = wb_mono_us() / 1000;
	m->n = 0;
	for (size_t i = 0; i < n; i++) {
		if (inbox_event_parse(&evs[i], &m->ev[m->n])) {
			m->n++;
		}
	}
	pthread_mutex_lock(&in->mu);
	if (in->queued + m->n > INBOX_QUEUE_MAX || in->stop) {
		pthread_mutex_unlock(&in->mu);
		INBOX_ADD(&in->dropped, m->n);
		free(m);
		return;
	}
	if (in->tail) {
		in->tail->next = m;
	} else {
		in->head = m;
	}
	in->tail = m;
	in->queued += m->n;
	pthread_cond_signal(&in->cv);
	pthread_mutex_unlock(&in->mu);
}

/* inbox_source_fail notes a failure of s and schedules its retry. */
static void
inbox_source_fail(inbox_source *s, int rc, const char *what)
{
	uint64_t b = s->backoff_ms ? s->backoff_ms * 2 : INBOX_BACKOFF_MIN;
	if (b > INBOX_BACKOFF_MAX) {
		b = INBOX_BACKOFF_MAX;
	}
	s->backoff_ms = b;
	s->retry_ms = wb_mono_us() / 1000 + b;
	INBOX_ADD(&s->in->source_errors, 1);
	RT_WARNF("%s events: %s failed at seq %llu: %s; retry in %llu ms", s->name, what,
	    (unsigned long long)(s->applied + 1), wb_strerror(rc), (unsigned long long)b);
}

/* inbox_source_known raises the newest seq known from s. */
static void
inbox_source_known(inbox_source *s, uint64_t seq)
{
	if (seq > INBOX_LOAD(&s->known_last)) {
		INBOX_STORE(&s->known_last, seq);
	}
}

/* inbox_source_synced notes that s had published nothing by at_ms that is not applied here. */
static void
inbox_source_synced(inbox_source *s, uint64_t at_ms)
{
	if (at_ms > INBOX_LOAD(&s->synced_ms)) {
		INBOX_STORE(&s->synced_ms, at_ms);
	}
}

/* inbox_source_pull reads s's log from applied + 1 to its end, applying
 * every event; stops at the first failure (retried after backoff). */
static int
inbox_source_pull(inbox_source *s)
{
	inbox *in = s->in;
	/* the first page starts at the applied event itself, to check its mark */
	bool     check = s->mark != 0 && s->applied > 0;
	uint64_t asked_ms;
	INBOX_ADD(&in->pulls, 1);
	for (;;) {
		wb_obj *req = inbox_log_req(s, check ? s->applied : s->applied + 1, INBOX_LOG_PAGE),
		       *rep = NULL;
		if (req == NULL) {
			return WB_ENOMEM;
		}
		asked_ms = wb_mono_us() / 1000;
		s->reported_ms = asked_ms;
		int rc = rt_call(inbox_source_client(in, s), req, &rep);
		wb_msg_free(req);
		if (rc != WB_OK) {
			wb_msg_free(rep);
			inbox_source_fail(s, rc, wb_op_name(s->log_op));
			return rc;
		}
		uint64_t last = wb_u64(rep, WB_F_LAST, 0), next = s->applied + 1;
		uint64_t first = wb_u64(rep, WB_F_FIRST, 0); /* 0: a source that does not say */
		const wb_obj *evs = NULL;
		size_t        n = 0, used = 0;
		inbox_event  *run = NULL;
		(void)wb_get_objs(rep, WB_F_EVENTS, &evs, &n);
		inbox_source_known(s, last);
		if (last < s->applied) {
			/* the source holds fewer events than were applied here: the
			 * seqs above last will name other events, and skipping them
			 * as applied would lose them */
			char why[128];
			snprintf(why, sizeof(why),
			    "log ends at seq %llu but seq %llu was applied here",
			    (unsigned long long)last, (unsigned long long)s->applied);
			wb_msg_free(rep);
			return inbox_source_diverged(s, why);
		}
		if (first > next && (n == 0 || wb_u64(&evs[0], WB_F_SEQ, 0) > next)) {
			/* the log no longer holds the next event due here (and this read
			 * did not catch it before a trim took it) */
			wb_msg_free(rep);
			return inbox_source_trimmed(s, first);
		}
		if (n > 0 && (run = malloc(n * sizeof(*run))) == NULL) {
			wb_msg_free(rep);
			return WB_ENOMEM;
		}
		for (size_t i = 0; i < n; i++) {
			inbox_event ev;
			if (!inbox_event_parse(&evs[i], &ev)) {
				continue;
			}
			if (check && ev.seq == s->applied && inbox_event_mark(&ev) != s->mark) {
				/* another event at the applied seq: the source went back
				 * and on again since */
				free(run);
				wb_msg_free(rep);
				return inbox_source_diverged(
				    s, "its log holds another event at the applied seq");
			}
			check = false;
			if (ev.seq < next) {
				continue;
			}
			if (ev.seq != next) {
				RT_WARNF("%s log goes from %llu to %llu (a hole: damage?): "
				         "skipping ahead",
				    s->name, (unsigned long long)next - 1,
				    (unsigned long long)ev.seq);
			}
			run[used++] = ev;
			next = ev.seq + 1;
		}
		wb_msg_free(rep);
		rc = inbox_apply_many(in, s, run, used);
		free(run);
		if (rc != WB_OK) {
			inbox_source_fail(s, rc, "apply");
			return rc;
		}
		if (in->stop || n == 0 || used == 0 || s->applied >= last) {
			break;
		}
	}
	if (s->applied >= INBOX_LOAD(&s->known_last)) {
		inbox_source_synced(s, asked_ms); /* the log ended there when asked */
	}
	s->heard_ms = wb_mono_us() / 1000;
	s->backoff_ms = 0;
	s->retry_ms = 0;
	return WB_OK;
}

/* inbox_source_report tells s the seq applied here with a read of no events, and learns the log's
 * ends from the reply. */
static int
inbox_source_report(inbox_source *s)
{
	wb_obj  *req = inbox_log_req(s, UINT64_MAX, 0), *rep = NULL;
	uint64_t first;
	int      rc;

	if (req == NULL) {
		return WB_ENOMEM;
	}
	s->reported_ms = wb_mono_us() / 1000;
	rc = rt_call(inbox_source_client(s->in, s), req, &rep);
	wb_msg_free(req);
	if (rc != WB_OK) {
		wb_msg_free(rep);
		inbox_source_fail(s, rc, "report");
		return rc;
	}
	inbox_source_known(s, wb_u64(rep, WB_F_LAST, 0));
	first = wb_u64(rep, WB_F_FIRST, 0);
	wb_msg_free(rep);
	return first > s->applied + 1 ? inbox_source_trimmed(s, first) : WB_OK;
}

/* inbox_report_due gives when s is next due to hear the applied seq: soon after it moved, so
 * that the source paces its producers by a recent one, else every INBOX_REPORT_MS. */
static uint64_t
inbox_report_due(const inbox_source *s)
{
	return s->reported_ms +
	       (INBOX_LOAD(&s->applied) != s->reported ? INBOX_REPORT_BUSY_MS : INBOX_REPORT_MS);
}

/* inbox_source_offer handles the events of one pub/sub message, in seq order. */
static void
inbox_source_offer(inbox_source *s, const inbox_event *evs, size_t n)
{
	size_t i = 0;

	while (i < n && !s->in->stop) {
		const inbox_event *ev = &evs[i];
		size_t             k = 1;

		inbox_source_known(s, ev->seq);
		if (ev->seq == s->applied && s->mark != 0 && inbox_event_mark(ev) != s->mark) {
			(void)inbox_source_diverged(s, "another event came with the applied seq");
			return;
		}
		if (ev->seq <= s->applied || wb_mono_us() / 1000 < s->retry_ms) {
			i++; /* done, or the source is in backoff: a pull will catch up */
			continue;
		}
		if (ev->seq > s->applied + 1) {
			INBOX_ADD(&s->in->gaps, 1);
			if (inbox_source_pull(s) != WB_OK) {
				return;
			}
			i += ev->seq > s->applied + 1; /* still a gap: the next pull mends it */
			continue;
		}
		while (i + k < n && evs[i + k].seq == ev->seq + k) {
			k++;
		}
		inbox_source_known(s, evs[i + k - 1].seq);
		int rc = inbox_apply_many(s->in, s, ev, k);
		if (rc != WB_OK) {
			inbox_source_fail(s, rc, "apply");
			return;
		}
		s->backoff_ms = 0;
		i += k;
	}
}

/* inbox_queue_join appends to m the queued messages of its source that
 * follow it, up to INBOX_LOG_PAGE events in all, so that the posts of a
 * backlog are applied together; call with mu held. */
static inbox_msg *
inbox_queue_join(inbox *in, inbox_msg *m)
{
	size_t n = m->n;

	for (inbox_msg *q = in->head; q != NULL && q->src == m->src && n + q->n <= INBOX_LOG_PAGE;
	     q = q->next) {
		n += q->n;
	}
	inbox_msg *all = n > m->n ? realloc(m, sizeof(*m) + n * sizeof(m->ev[0])) : NULL;
	if (all == NULL) {
		return m; /* nothing to join, or no memory to join it in */
	}
	while (all->n < n) {
		inbox_msg *q = in->head;
		memcpy(&all->ev[all->n], q->ev, q->n * sizeof(q->ev[0]));
		all->n += q->n;
		all->recv_ms = q->recv_ms;
		in->queued -= q->n;
		in->head = q->next;
		free(q);
	}
	if (in->head == NULL) {
		in->tail = NULL;
	}
	return all;
}

/* inbox_queue_pop waits up to wait_ms for a queued message (NULL if none or stopping). */
static inbox_msg *
inbox_queue_pop(inbox *in, uint64_t wait_ms)
{
	pthread_mutex_lock(&in->mu);
	if (in->head == NULL && !in->stop && !in->rb_asked && wait_ms > 0) {
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += (time_t)(wait_ms / 1000);
		dl.tv_nsec += (long)(wait_ms % 1000) * 1000000;
		if (dl.tv_nsec >= 1000000000) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000;
		}
		while (in->head == NULL && !in->stop && !in->rb_asked) {
			if (pthread_cond_timedwait(&in->cv, &in->mu, &dl) != 0) {
				break;
			}
		}
	}
	inbox_msg *m = in->stop ? NULL : in->head;
	if (m != NULL) {
		in->head = m->next;
		if (in->head == NULL) {
			in->tail = NULL;
		}
		in->queued -= m->n;
		m = inbox_queue_join(in, m);
	}
	pthread_mutex_unlock(&in->mu);
	return m;
}

/* inbox_meta_load reads the applied seq of s from meta (none: 0, from the log's start). */
int
inbox_meta_load(inbox_source *s)
{
	hb_cell *c = NULL;
	int      rc = hb_get(s->in->t, INBOX_FAM_META, s->name, strlen(s->name), NULL, 0, &c);

	if (rc == WB_ENOTFOUND) {
		return WB_OK;
	}
	if (rc != WB_OK) {
		return rc;
	}
	if (c->value_len == 8 || c->value_len == INBOX_META_LEN) { /* 8: no mark (older builds) */
		INBOX_STORE(&s->applied, hb_be_u64(c->value));
		s->mark =
		    c->value_len == INBOX_META_LEN ? hb_be_u64((const uint8_t *)c->value + 8) : 0;
	} else {
		rc = WB_ECORRUPT;
	}
	hb_cell_free(c);
	return rc;
}

/* inbox_rebuild_mark_load asks for a rebuild if one was left unfinished or the options ask for one. */
int
inbox_rebuild_mark_load(inbox *in)
{
	hb_cell *c = NULL;
	int      rc = hb_get(
	         in->t, INBOX_FAM_META, INBOX_META_REBUILD, strlen(INBOX_META_REBUILD), NULL, 0, &c);
	uint32_t depth = in->opts.backfill > 0 ? in->opts.backfill : 800;

	if (rc == WB_OK) {
		const uint8_t *v = c->value;
		if (c->value_len == 4) {
			depth = (uint32_t)v[0] << 24 | (uint32_t)v[1] << 16 | (uint32_t)v[2] << 8 |
			        v[3];
		}
		hb_cell_free(c);
		RT_WARNF("an inbox rebuild was left unfinished: starting it over");
	} else if (rc != WB_ENOTFOUND) {
		return rc;
	}
	if (rc == WB_OK || in->opts.rebuild) {
		(void)inbox_rebuild_ask(in, depth > 0 ? depth : 800);
	}
	return WB_OK;
}

void *
inbox_applier_main(void *arg)
{
	inbox   *in = arg;
	uint64_t poll = in->opts.poll_ms ? in->opts.poll_ms : 500;
	/* per thread on Linux; a failure leaves it at the daemon's */
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), INBOX_APPLIER_NICE);
	if (inbox_rebuild_due(in)) {
		(void)inbox_rebuild_run(in); /* asked at start, or a rebuild left unfinished */
	}
	for (int i = 0; i < in->nsrc; i++) {
		if (!in->stop && !inbox_rebuild_queued(in)) {
			(void)inbox_source_pull(&in->src[i]);
		}
	}
	while (!in->stop) {
		if (inbox_rebuild_due(in)) {
			(void)inbox_rebuild_run(in);
			continue;
		}
		/* sleep until the next quiet-source poll or retry is due */
		uint64_t now = wb_mono_us() / 1000, wait = poll;
		for (int i = 0; i < in->nsrc; i++) {
			inbox_source *s = &in->src[i];
			uint64_t      due = s->heard_ms + poll;
			if (inbox_report_due(s) < due) {
				due = inbox_report_due(s);
			}
			if (s->retry_ms > due) {
				due = s->retry_ms;
			}
			uint64_t w = due > now ? due - now : 0;
			if (w < wait) {
				wait = w;
			}
		}
		inbox_msg *m = inbox_queue_pop(in, wait);
		if (m != NULL) {
			inbox_source *s = &in->src[m->src];
			s->heard_ms = wb_mono_us() / 1000;
			inbox_source_offer(s, m->ev, m->n);
			if (m->n > 0 && s->applied >= m->ev[m->n - 1].seq) {
				/* short by the message's time in transit: well under a ms */
				inbox_source_synced(s, m->recv_ms);
			}
			free(m);
		}
		now = wb_mono_us() / 1000;
		for (int i = 0; i < in->nsrc && !in->stop && !inbox_rebuild_queued(in); i++) {
			inbox_source *s = &in->src[i];
			if (now >= s->heard_ms + poll && now >= s->retry_ms) {
				(void)inbox_source_pull(s);
			} else if (now >= inbox_report_due(s) && now >= s->retry_ms) {
				(void)inbox_source_report(s); /* events by pub/sub alone */
			}
		}
	}
	return NULL;
}
