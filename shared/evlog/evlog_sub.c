/*
 * evlog_sub.c - a durable consumer of another service's event log (see
 * evlog_sub.h).
 *
 *   source PUB --doorbell--> rt_sub callback: known_last = max seq, wake
 *                                   |
 *   consumer thread: read LOG_OP {from, limit} page by page from the
 *   applied seq, apply each event in seq order; the position goes with
 *   each event's last write:
 *
 *       position row:  +------------------+------------------+
 *       (row = source) | applied seq (BE) | its mark (BE)    |
 *                      +------------------+------------------+
 *
 * A read starts at the applied event itself when its mark is known, to
 * check that the log still holds that event there.  A failure (the source
 * down, an apply refused) waits 100 ms, doubling to 5 s, and reads again.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evlog.h"
#include "evlog_sub.h"
#include "rt_log.h"
#include "rt_pubsub.h"
#include "wb_clock.h"
#include "wb_hash.h"

#define EVLOG_SUB_PAGE        EVLOG_READ_MAX
#define EVLOG_SUB_BACKOFF_MIN 100
#define EVLOG_SUB_BACKOFF_MAX 5000
#define EVLOG_SUB_POS_LEN     16

struct evlog_sub {
	evlog_sub_opts   o;
	char            *source, *pub_url;
	rt_sub          *sub;
	_Atomic uint64_t applied;    /* last applied seq (the thread writes it) */
	_Atomic uint64_t known_last; /* newest seq heard of */
	uint64_t         mark;       /* the applied event's mark (0: unknown; the thread's) */
	uint64_t         backoff_ms; /* the thread's */
	pthread_mutex_t  mu;         /* closing, rung, with cv */
	pthread_cond_t   cv;
	bool             closing, rung;
	atomic_bool      stopping;
	pthread_t        thread;
	bool             running;
};

uint64_t
evlog_mark(const wb_obj *ev)
{
	static const wb_field f[] = { WB_F_SEQ, WB_F_UID, WB_F_TARGET, WB_F_ID, WB_F_TIME };
	const char           *type = "";
	size_t                len = 0;
	uint64_t              h = 0x6576;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		h = wb_mix64(h ^ wb_u64(ev, f[i], 0));
	}
	(void)wb_get_str(ev, WB_F_TYPE, &type, &len);
	for (size_t i = 0; i < len; i++) {
		h = wb_mix64(h ^ (uint8_t)type[i]);
	}
	return h != 0 ? h : 1;
}

/* evlog_sub_pos_load reads the position (none: 0, from the log's first event). */
static int
evlog_sub_pos_load(evlog_sub *s)
{
	hb_cell *c = NULL;
	int      rc = hb_get(s->o.t, s->o.fam, s->source, strlen(s->source), NULL, 0, &c);

	if (rc == WB_ENOTFOUND) {
		return WB_OK;
	}
	if (rc != WB_OK) {
		return rc;
	}
	if (c->value_len == EVLOG_SUB_POS_LEN) {
		atomic_store(&s->applied, hb_be_u64(c->value));
		s->mark = hb_be_u64((const uint8_t *)c->value + 8);
	} else {
		rc = WB_ECORRUPT;
	}
	hb_cell_free(c);
	return rc;
}

int
evlog_sub_open(evlog_sub **out, const evlog_sub_opts *o)
{
	evlog_sub         *s;
	pthread_condattr_t ca;
	int                rc;

	*out = NULL;
	if (o->source == NULL || o->client == NULL || o->t == NULL || o->apply == NULL) {
		return WB_EINVAL;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		return WB_ENOMEM;
	}
	s->o = *o;
	if (s->o.poll_ms == 0) {
		s->o.poll_ms = 500;
	}
	s->source = strdup(o->source);
	s->pub_url = o->pub_url != NULL && o->pub_url[0] != '\0' ? strdup(o->pub_url) : NULL;
	pthread_mutex_init(&s->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (s->source == NULL || (o->pub_url != NULL && o->pub_url[0] != '\0' && !s->pub_url)) {
		rc = WB_ENOMEM;
	} else {
		rc = evlog_sub_pos_load(s);
	}
	if (rc != WB_OK) {
		evlog_sub_close(s);
		return rc;
	}
	atomic_store(&s->known_last, atomic_load(&s->applied));
	*out = s;
	return WB_OK;
}

/* evlog_sub_known raises the newest seq heard of. */
static void
evlog_sub_known(evlog_sub *s, uint64_t seq)
{
	uint64_t k = atomic_load(&s->known_last);

	while (seq > k && !atomic_compare_exchange_weak(&s->known_last, &k, seq)) {
	}
}

/* evlog_sub_ring is the subscriber's callback: a message of the source's is a doorbell. */
static void
evlog_sub_ring(void *arg, const wb_obj *msg)
{
	evlog_sub    *s = arg;
	const wb_obj *evs = NULL;
	const char   *src = NULL;
	size_t        n = 0;

	if (wb_op_of(msg) != WB_OP_EVENTS || !wb_get_str(msg, WB_F_SOURCE, &src, NULL) ||
	    strcmp(src, s->source) != 0 || !wb_get_objs(msg, WB_F_EVENTS, &evs, &n)) {
		return;
	}
	for (size_t i = 0; i < n; i++) {
		evlog_sub_known(s, wb_u64(&evs[i], WB_F_SEQ, 0));
	}
	pthread_mutex_lock(&s->mu);
	s->rung = true;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

/* evlog_sub_went_back starts over from the log's first event: the source no longer holds what was applied. */
static void
evlog_sub_went_back(evlog_sub *s, const char *why)
{
	RT_ERRORF("%s events: %s; the source went back in time (restored from an older copy, or "
	          "its store lost): applying its whole log again",
	    s->source, why);
	atomic_store(&s->applied, 0);
	atomic_store(&s->known_last, 0);
	s->mark = 0;
}

/* evlog_sub_apply applies one event, its position in the same last write. */
static int
evlog_sub_apply(evlog_sub *s, const wb_obj *ev, uint64_t seq)
{
	hb_batch *b = NULL;
	uint8_t   v[EVLOG_SUB_POS_LEN];
	uint64_t  mark = evlog_mark(ev);
	int       rc = hb_batch_new(&b);

	hb_u64_be(v, seq);
	hb_u64_be(v + 8, mark);
	if (rc == WB_OK) {
		rc = hb_batch_put(
		    b, s->o.t, s->o.fam, s->source, strlen(s->source), NULL, 0, 0, v, sizeof(v));
	}
	if (rc == WB_OK) {
		rc = s->o.apply(s->o.arg, s, ev, b);
	}
	hb_batch_free(b);
	if (rc == WB_OK) {
		atomic_store(&s->applied, seq);
		s->mark = mark;
	}
	return rc;
}

/* evlog_sub_pull reads the log from the applied event to its end, applying each event. */
static int
evlog_sub_pull(evlog_sub *s)
{
	for (;;) {
		uint64_t applied = atomic_load(&s->applied);
		bool     check = applied > 0 && s->mark != 0;
		wb_obj  *req = wb_request(s->o.log_op), *rep = NULL;
		int      rc = req == NULL ? WB_ENOMEM : WB_OK;

		if (rc == WB_OK &&
		    ((rc = wb_set_u64(req, WB_F_FROM, check ? applied : applied + 1)) != WB_OK ||
		        (rc = wb_set_u64(req, WB_F_LIMIT, EVLOG_SUB_PAGE)) != WB_OK)) {
			wb_msg_free(req);
			return rc;
		}
		if (rc == WB_OK) {
			rc = rt_call(s->o.client, req, &rep);
		}
		wb_msg_free(req);
		if (rc != WB_OK) {
			RT_WARNF("%s events: %s failed at seq %llu: %s", s->source,
			    wb_op_name(s->o.log_op), (unsigned long long)applied + 1,
			    wb_strerror(rc));
			wb_msg_free(rep);
			return rc;
		}
		uint64_t      last = wb_u64(rep, WB_F_LAST, 0), next = applied + 1;
		const wb_obj *evs = NULL;
		size_t        n = 0;
		bool          again = false;

		(void)wb_get_objs(rep, WB_F_EVENTS, &evs, &n);
		evlog_sub_known(s, last);
		if (last < applied) {
			evlog_sub_went_back(s, "its log ends before the applied seq");
			again = true;
		}
		for (size_t i = 0; !again && rc == WB_OK && i < n; i++) {
			uint64_t seq = wb_u64(&evs[i], WB_F_SEQ, 0);

			if (check && seq == applied && evlog_mark(&evs[i]) != s->mark) {
				evlog_sub_went_back(
				    s, "its log holds another event at the applied seq");
				again = true;
				break;
			}
			check = false;
			if (seq < next) {
				continue;
			}
			if (seq != next) {
				RT_WARNF("%s log goes from %llu to %llu (trimmed?): skipping ahead",
				    s->source, (unsigned long long)next - 1,
				    (unsigned long long)seq);
			}
			if (evlog_sub_stopping(s)) {
				rc = WB_ECLOSED;
			} else if ((rc = evlog_sub_apply(s, &evs[i], seq)) != WB_OK) {
				RT_WARNF("%s event %llu (%s): %s", s->source,
				    (unsigned long long)seq, wb_str(&evs[i], WB_F_TYPE, "?"),
				    wb_strerror(rc));
			}
			next = seq + 1;
		}
		wb_msg_free(rep);
		if (rc != WB_OK) {
			return rc;
		}
		if (!again && (n == 0 || atomic_load(&s->applied) >= last)) {
			return WB_OK;
		}
	}
}

/* evlog_sub_main is the consumer's thread: read the log, then wait for a doorbell, the poll or a retry. */
static void *
evlog_sub_main(void *arg)
{
	evlog_sub *s = arg;

	pthread_mutex_lock(&s->mu);
	while (!s->closing) {
		s->rung = false;
		pthread_mutex_unlock(&s->mu);
		int      rc = evlog_sub_pull(s);
		uint64_t wait = s->o.poll_ms;
		if (rc != WB_OK) {
			s->backoff_ms =
			    s->backoff_ms == 0 ? EVLOG_SUB_BACKOFF_MIN : s->backoff_ms * 2;
			if (s->backoff_ms > EVLOG_SUB_BACKOFF_MAX) {
				s->backoff_ms = EVLOG_SUB_BACKOFF_MAX;
			}
			wait = s->backoff_ms;
		} else {
			s->backoff_ms = 0;
		}
		struct timespec dl;
		clock_gettime(CLOCK_MONOTONIC, &dl);
		dl.tv_sec += (time_t)(wait / 1000);
		dl.tv_nsec += (long)(wait % 1000) * 1000000L;
		if (dl.tv_nsec >= 1000000000L) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&s->mu);
		while (!s->closing && (!s->rung || rc != WB_OK)) {
			if (pthread_cond_timedwait(&s->cv, &s->mu, &dl) == ETIMEDOUT) {
				break;
			}
		}
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

int
evlog_sub_start(evlog_sub *s)
{
	int rc = WB_OK;

	if (s->pub_url != NULL) {
		rc = rt_sub_open(&s->sub, s->pub_url, s->o.tls, evlog_sub_ring, s);
	}
	if (rc == WB_OK && pthread_create(&s->thread, NULL, evlog_sub_main, s) != 0) {
		rc = WB_ENOMEM;
	}
	if (rc != WB_OK) {
		rt_sub_close(s->sub);
		s->sub = NULL;
		return rc;
	}
	s->running = true;
	return WB_OK;
}

bool
evlog_sub_stopping(evlog_sub *s)
{
	return atomic_load(&s->stopping);
}

void
evlog_sub_stop(evlog_sub *s)
{
	atomic_store(&s->stopping, true);
	rt_sub_close(s->sub); /* no more doorbells, and its callback is not running */
	s->sub = NULL;
	pthread_mutex_lock(&s->mu);
	s->closing = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	if (s->running) {
		pthread_join(s->thread, NULL);
		s->running = false;
	}
}

void
evlog_sub_close(evlog_sub *s)
{
	if (s == NULL) {
		return;
	}
	evlog_sub_stop(s);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s->source);
	free(s->pub_url);
	free(s);
}

uint64_t
evlog_sub_applied(void *arg)
{
	evlog_sub *s = arg;

	return atomic_load(&s->applied);
}

uint64_t
evlog_sub_behind(void *arg)
{
	evlog_sub *s = arg;
	uint64_t   k = atomic_load(&s->known_last), a = atomic_load(&s->applied);

	return k > a ? k - a : 0;
}
