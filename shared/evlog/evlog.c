/*
 * evlog.c - a service's durable event log, published over pub/sub.
 *
 * Log cells (one family of the service's table):
 *
 *   key:   +----------------+------------------+
 *          | seq (8, BE)    | ~version 0 (8)   |   no qualifier
 *          +----------------+------------------+
 *   value: msgpack map {seq, type, uid, target | id, time}
 *
 * Commits hold one mutex from assigning the seq to the end of the write,
 * so seqs are consecutive and seq n is durable before n+1 exists.  After
 * the write the event is queued; a publisher thread sends the queue in
 * batches of up to EVLOG_BATCH events, waiting at most EVLOG_FLUSH_US for
 * a batch to fill:
 *
 *   {"op":"events", "v":1, "source":"content", "events":[{...}, ...]}
 *
 * Publishing is best effort (pub/sub drops when buffers are full, and a
 * queue over EVLOG_QUEUE_MAX is dropped too): consumers pull what they
 * missed with evlog_read.
 *
 * Retention (evlog_retain.c) deletes rows below a seq with one range
 * tombstone, never the last: seqs need only be contiguous from the first
 * kept one (recovery below looks for the first row, not for seq 1).
 * Readers asking for a trimmed seq get the first kept event and FIRST.
 */
#include "evlog_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_log.h"
#include "wb_clock.h"

hb_family_opts
evlog_family(const char *name)
{
	/* each row is written once at version 0: no version limit to keep, which
	 * lets a trim be one range tombstone (hb_delete_range) */
	hb_family_opts f = {
		.name = name,
		.row_len = 8,
		.qual_len = HB_NONE,
		.compression = HB_COMPRESS_LZ4,
	};
	return f;
}

/* evlog_obj_copy copies the scalar and array fields of src into dst (nested objects are not events' business). */
static int
evlog_obj_copy(wb_obj *dst, const wb_obj *src)
{
	for (uint16_t i = 0; i < src->n; i++) {
		const wb_val *v = &src->vals[i];
		wb_field      f = (wb_field)v->field;
		int           rc = WB_OK;
		switch (wb_field_type(f)) {
		case WB_T_U64:
		case WB_T_ID:
			rc = wb_set_u64(dst, f, v->u);
			break;
		case WB_T_BOOL:
			rc = wb_set_bool(dst, f, v->b);
			break;
		case WB_T_STR:
			rc = wb_set_str(dst, f, v->s.p, v->s.n);
			break;
		case WB_T_U64S:
		case WB_T_IDS:
			rc = wb_set_u64s(dst, f, v->a.v, v->a.n);
			break;
		case WB_T_OBJS:
		case WB_T_BIN:
			break;
		}
		if (rc != WB_OK) {
			return rc;
		}
	}
	return WB_OK;
}

/* evlog_row_get tells whether seq has a log cell. */
static int
evlog_row_exists(evlog *l, uint64_t seq, bool *exists)
{
	uint8_t  row[8];
	hb_cell *c = NULL;
	hb_u64_be(row, seq);
	int rc = hb_get(l->t, l->fam, row, 8, NULL, 0, &c);
	if (rc == WB_OK) {
		hb_cell_free(c);
		*exists = true;
		return WB_OK;
	}
	*exists = false;
	return rc == WB_ENOTFOUND ? WB_OK : rc;
}

/* evlog_first_from finds the first seq >= from that has a cell (0 if none). */
static int
evlog_first_from(evlog *l, uint64_t from, uint64_t *out)
{
	uint8_t      start[8];
	hb_scan     *s = NULL;
	hb_cell      c;
	hb_scan_opts o = { .start_row = start, .start_row_len = 8, .limit = 1 };
	hb_u64_be(start, from);
	*out = 0;
	int rc = hb_scan_open(&s, l->t, l->fam, &o);
	if (rc != WB_OK) {
		return rc;
	}
	rc = hb_scan_next(s, &c);
	if (rc == WB_OK && c.row_len == 8) {
		*out = hb_be_u64(c.row);
	}
	hb_scan_close(s);
	return rc == WB_EEND ? WB_OK : rc;
}

/*
 * evlog_recover finds the last seq.  Kept seqs form one contiguous run
 * [first, last], so: find the first row, gallop then bisect on existence,
 * and check that nothing lies beyond (if something does, a hole was left
 * by damage: continue from there rather than ever reuse a seq).
 */
static int
evlog_recover(evlog *l)
{
	uint64_t lo = 0, next;
	int      rc = evlog_first_from(l, 1, &next);

	EVLOG_STORE(&l->first, next);
	while (rc == WB_OK && next != 0) {
		lo = next;
		uint64_t step = 1;
		bool     ex = true;
		while (rc == WB_OK && ex && step < (UINT64_C(1) << 62)) {
			rc = evlog_row_exists(l, lo + step, &ex);
			if (rc == WB_OK && ex) {
				lo += step;
				step <<= 1;
			}
		}
		/* lo exists, lo + step does not: bisect (lo, lo + step) */
		uint64_t hi = lo + step;
		while (rc == WB_OK && hi - lo > 1) {
			uint64_t mid = lo + (hi - lo) / 2;
			rc = evlog_row_exists(l, mid, &ex);
			if (ex) {
				lo = mid;
			} else {
				hi = mid;
			}
		}
		if (rc == WB_OK) {
			rc = evlog_first_from(l, lo + 1, &next);
		}
		if (rc == WB_OK && next != 0) {
			RT_WARNF("%s log: hole after seq %llu, continuing at %llu", l->source,
			    (unsigned long long)lo, (unsigned long long)next);
		}
	}
	if (rc == WB_OK) {
		l->last = lo;
	}
	return rc;
}

/* evlog_publish_batch sends up to n queued events (taken off the queue by the caller) as one message. */
static void
evlog_publish_batch(evlog *l, wb_obj **evs, size_t n)
{
	wb_obj *m = wb_request(WB_OP_EVENTS);
	wb_obj *objs = NULL;
	int     rc = m ? wb_set_cstr(m, WB_F_SOURCE, l->source) : WB_ENOMEM;
	if (rc == WB_OK && (objs = wb_add_objs(m, WB_F_EVENTS, n)) == NULL) {
		rc = WB_ENOMEM;
	}
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		rc = evlog_obj_copy(&objs[i], evs[i]);
	}
	if (rc == WB_OK) {
		rc = rt_pub_send(l->pub, m);
	}
	if (rc != WB_OK) {
		RT_DEBUGF(
		    "%s log: publish of %zu events failed: %s", l->source, n, wb_strerror(rc));
	}
	wb_msg_free(m);
	for (size_t i = 0; i < n; i++) {
		wb_msg_free(evs[i]);
	}
}

/* evlog_deadline returns now + us on CLOCK_REALTIME for pthread_cond_timedwait. */
static struct timespec
evlog_deadline(long us)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += us * 1000;
	while (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return ts;
}

/* evlog_publisher_main is the publisher thread: wait for events, let a batch fill briefly, send. */
static void *
evlog_publisher_main(void *arg)
{
	evlog  *l = arg;
	wb_obj *batch[EVLOG_BATCH];
	pthread_mutex_lock(&l->q_mu);
	for (;;) {
		while (l->q_len == 0 && !l->closing) {
			pthread_cond_wait(&l->q_cv, &l->q_mu);
		}
		if (l->q_len == 0 && l->closing) {
			break;
		}
		if (l->q_len < EVLOG_BATCH && !l->closing) {
			struct timespec dl = evlog_deadline(EVLOG_FLUSH_US);
			while (l->q_len < EVLOG_BATCH && !l->closing) {
				if (pthread_cond_timedwait(&l->q_cv, &l->q_mu, &dl) == ETIMEDOUT) {
					break;
				}
			}
		}
		size_t n = l->q_len < EVLOG_BATCH ? l->q_len : EVLOG_BATCH;
		for (size_t i = 0; i < n; i++) {
			batch[i] = l->q[l->q_head];
			l->q_head = (l->q_head + 1) % EVLOG_QUEUE_MAX;
		}
		l->q_len -= n;
		pthread_mutex_unlock(&l->q_mu);
		evlog_publish_batch(l, batch, n);
		pthread_mutex_lock(&l->q_mu);
	}
	pthread_mutex_unlock(&l->q_mu);
	return NULL;
}

int
evlog_open(evlog **out, hb_table *t, int fam, const char *source, rt_pub *pub)
{
	*out = NULL;
	evlog *l = calloc(1, sizeof(*l));
	if (l == NULL) {
		return WB_ENOMEM;
	}
	l->t = t;
	l->fam = fam;
	l->pub = pub;
	l->source = strdup(source);
	if (l->source == NULL) {
		free(l);
		return WB_ENOMEM;
	}
	pthread_mutex_init(&l->commit_mu, NULL);
	pthread_mutex_init(&l->q_mu, NULL);
	pthread_cond_init(&l->q_cv, NULL);
	pthread_mutex_init(&l->cons_mu, NULL);
	pthread_cond_init(&l->pace_cv, NULL);
	pthread_mutex_init(&l->trim_mu, NULL);
	pthread_cond_init(&l->trim_cv, NULL);
	l->times = calloc(EVLOG_TIMES, sizeof(*l->times));
	int rc = l->times != NULL ? evlog_recover(l) : WB_ENOMEM;
	if (rc == WB_OK) {
		rc = evlog_consumers_load(l);
	}
	if (rc == WB_OK && pub != NULL) {
		l->q = calloc(EVLOG_QUEUE_MAX, sizeof(*l->q));
		if (l->q == NULL) {
			rc = WB_ENOMEM;
		} else if (pthread_create(&l->thread, NULL, evlog_publisher_main, l) != 0) {
			rc = WB_ENOMEM;
		} else {
			l->has_thread = true;
		}
	}
	if (rc != WB_OK) {
		evlog_close(l);
		return rc;
	}
	*out = l;
	return WB_OK;
}

void
evlog_close(evlog *l)
{
	if (l == NULL) {
		return;
	}
	evlog_consumers_close(l);
	pthread_mutex_lock(&l->q_mu);
	l->closing = true;
	pthread_cond_broadcast(&l->q_cv);
	pthread_mutex_unlock(&l->q_mu);
	if (l->has_thread) {
		pthread_join(l->thread, NULL);
	}
	for (size_t i = 0; i < l->q_len; i++) {
		wb_msg_free(l->q[(l->q_head + i) % EVLOG_QUEUE_MAX]);
	}
	free(l->q);
	pthread_mutex_destroy(&l->commit_mu);
	pthread_mutex_destroy(&l->q_mu);
	pthread_cond_destroy(&l->q_cv);
	pthread_mutex_destroy(&l->cons_mu);
	pthread_cond_destroy(&l->pace_cv);
	pthread_mutex_destroy(&l->trim_mu);
	pthread_cond_destroy(&l->trim_cv);
	free(l->times);
	free(l->source);
	free(l);
}

/* evlog_queue hands a copy of a committed event to the publisher (dropping it if the queue is full). */
static void
evlog_queue(evlog *l, const wb_obj *event)
{
	wb_obj *copy = wb_msg_new();
	if (copy == NULL || evlog_obj_copy(copy, event) != WB_OK) {
		wb_msg_free(copy);
		return;
	}
	pthread_mutex_lock(&l->q_mu);
	if (l->q_len < EVLOG_QUEUE_MAX && !l->closing) {
		l->q[(l->q_head + l->q_len) % EVLOG_QUEUE_MAX] = copy;
		l->q_len++;
		if (l->q_len == 1 || l->q_len == EVLOG_BATCH) {
			pthread_cond_signal(&l->q_cv);
		}
		copy = NULL;
	} else {
		l->dropped++;
	}
	pthread_mutex_unlock(&l->q_mu);
	wb_msg_free(copy);
}

int
evlog_commit(evlog *l, hb_batch *b, wb_obj *event, uint64_t *seq)
{
	uint8_t row[8];
	char   *buf = NULL;
	size_t  len = 0;
	pthread_mutex_lock(&l->commit_mu);
	uint64_t s = l->last + 1;
	int      rc = wb_set_u64(event, WB_F_SEQ, s);
	if (rc == WB_OK && !wb_has(event, WB_F_TIME)) {
		rc = wb_set_u64(event, WB_F_TIME, wb_now_ms());
	}
	if (rc == WB_OK) {
		rc = wb_encode_buf(event, &buf, &len);
	}
	if (rc == WB_OK) {
		hb_u64_be(row, s);
		rc = hb_batch_put(b, l->t, l->fam, row, 8, NULL, 0, 0, buf, len);
	}
	if (rc == WB_OK) {
		rc = hb_write(l->t, b);
	}
	if (rc == WB_OK) {
		evlog_times_note(l, s, s);
		EVLOG_STORE(&l->last, s);
		if (EVLOG_LOAD(&l->first) == 0) {
			EVLOG_STORE(&l->first, s);
		}
	}
	if (rc == WB_OK && l->pub != NULL) {
		evlog_queue(l, event); /* under commit_mu: the queue stays in seq order */
	}
	pthread_mutex_unlock(&l->commit_mu);
	free(buf);
	if (rc == WB_OK && seq != NULL) {
		*seq = s;
	}
	return rc;
}

int
evlog_commit_many(evlog *l, hb_batch *b, wb_obj *const *events, size_t n, uint64_t *first_seq)
{
	uint8_t  row[8];
	uint64_t now = wb_now_ms();
	int      rc = WB_OK;
	pthread_mutex_lock(&l->commit_mu);
	uint64_t s = l->last + 1;
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		char  *buf = NULL;
		size_t len = 0;
		rc = wb_set_u64(events[i], WB_F_SEQ, s + i);
		if (rc == WB_OK && !wb_has(events[i], WB_F_TIME)) {
			rc = wb_set_u64(events[i], WB_F_TIME, now);
		}
		if (rc == WB_OK) {
			rc = wb_encode_buf(events[i], &buf, &len);
		}
		if (rc == WB_OK) {
			hb_u64_be(row, s + i);
			rc = hb_batch_put(b, l->t, l->fam, row, 8, NULL, 0, 0, buf, len);
		}
		free(buf);
	}
	if (rc == WB_OK && n > 0) {
		rc = hb_write(l->t, b);
	}
	if (rc == WB_OK && n > 0) {
		evlog_times_note(l, s, s + n - 1);
		EVLOG_STORE(&l->last, s + n - 1);
		if (EVLOG_LOAD(&l->first) == 0) {
			EVLOG_STORE(&l->first, s);
		}
		for (size_t i = 0; l->pub != NULL && i < n; i++) {
			evlog_queue(l, events[i]);
		}
	}
	pthread_mutex_unlock(&l->commit_mu);
	if (rc == WB_OK && first_seq != NULL) {
		*first_seq = s;
	}
	return rc;
}

uint64_t
evlog_last(evlog *l)
{
	pthread_mutex_lock(&l->commit_mu);
	uint64_t s = l->last;
	pthread_mutex_unlock(&l->commit_mu);
	return s;
}

uint64_t
evlog_first(evlog *l)
{
	return EVLOG_LOAD(&l->first);
}

int
evlog_serve(evlog *l, const wb_obj *req, wb_obj *rep)
{
	uint64_t    from = wb_u64(req, WB_F_FROM, 1), limit, applied = 0;
	const char *name = NULL;
	size_t      len = 0;
	int         rc;

	if ((rc = wb_page_limit(req, EVLOG_READ_MAX, EVLOG_READ_MAX, &limit, rep)) != WB_OK) {
		return rc;
	}
	if (wb_get_str(req, WB_F_CONSUMER, &name, &len) !=
	    wb_get_u64(req, WB_F_APPLIED, &applied)) {
		wb_reply_error(rep, WB_EINVAL, "consumer and applied come together");
		return WB_EINVAL;
	}
	if (name != NULL && (rc = evlog_report(l, name, len, applied, wb_now_ms())) != WB_OK) {
		if (rc == WB_EINVAL) {
			wb_reply_error(rep, rc, "consumer: 1-%d of a-z A-Z 0-9 / . _ : -",
			    EVLOG_CONSUMER_NAME_MAX);
		} else {
			wb_reply_error(rep, rc, "the %s log keeps at most %d consumers", l->source,
			    EVLOG_CONSUMERS_MAX);
		}
		return rc;
	}
	wb_reply_ok(rep);
	if ((rc = evlog_read(l, from, (size_t)limit, rep)) != WB_OK) {
		wb_reply_error(rep, rc, "%s log: %s", l->source, wb_strerror(rc));
		return rc;
	}
	return WB_OK;
}

int
evlog_read(evlog *l, uint64_t from, size_t limit, wb_obj *rep)
{
	if (from == 0) {
		from = 1;
	}
	if (limit == 0 || limit > EVLOG_READ_MAX) {
		limit = EVLOG_READ_MAX;
	}
	uint64_t last = evlog_last(l); /* read first: every event <= last is durable */
	wb_obj  *evs[EVLOG_READ_MAX];
	size_t   n = 0;
	uint8_t  start[8];
	hb_scan *s = NULL;
	hb_cell  c;
	hb_u64_be(start, from);
	hb_scan_opts o = { .start_row = start, .start_row_len = 8, .limit = limit };
	int          rc = from > last ? WB_EEND : hb_scan_open(&s, l->t, l->fam, &o);
	while (rc == WB_OK && n < limit && (rc = hb_scan_next(s, &c)) == WB_OK) {
		if (c.row_len != 8 || hb_be_u64(c.row) > last) {
			break;
		}
		char err[128];
		rc = wb_decode(&evs[n], c.value, c.value_len, &wb_limits_default, err, sizeof(err));
		if (rc != WB_OK) {
			RT_ERRORF("%s log: seq %llu undecodable: %s", l->source,
			    (unsigned long long)hb_be_u64(c.row), err);
			rc = WB_ECORRUPT;
			break;
		}
		n++;
	}
	hb_scan_close(s);
	if (rc == WB_EEND) {
		rc = WB_OK;
	}
	wb_obj *objs = NULL;
	if (rc == WB_OK && n > 0 && (objs = wb_add_objs(rep, WB_F_EVENTS, n)) == NULL) {
		rc = WB_ENOMEM;
	}
	for (size_t i = 0; rc == WB_OK && i < n; i++) {
		rc = evlog_obj_copy(&objs[i], evs[i]);
	}
	if (rc == WB_OK && n == 0) {
		(void)wb_add_objs(rep, WB_F_EVENTS, 0); /* absent EVENTS also means none */
	}
	if (rc == WB_OK) {
		rc = wb_set_u64(rep, WB_F_LAST, last);
	}
	if (rc == WB_OK) {
		/* after the scan: a trim that took rows from under it had moved first before */
		rc = wb_set_u64(rep, WB_F_FIRST, evlog_first(l));
	}
	for (size_t i = 0; i < n; i++) {
		wb_msg_free(evs[i]);
	}
	return rc;
}

int
evlog_backup_logs(void *log, wb_obj *rep)
{
	evlog  *l = log;
	wb_obj *o = wb_add_objs(rep, WB_F_LOGS, 1);

	if (o == NULL) {
		return WB_ENOMEM;
	}
	int rc = wb_set_cstr(o, WB_F_SOURCE, l->source);
	return rc == WB_OK ? wb_set_u64(o, WB_F_LAST, evlog_last(l)) : rc;
}
