/*
 * evlog_pace.c - the producers' pace: a commit waits while a consumer is
 * too far behind, so that a consumer slower than its producers (the
 * inbox's fan-out under a load that keeps every core busy) bounds how
 * late it applies an event instead of falling ever further behind.
 *
 * How far behind: the log keeps the time of its last EVLOG_TIMES commits
 * by seq, and each consumer's last reported applied seq (evlog_retain.c);
 * a consumer is as far behind as the age of the first event it has not
 * applied.  Only consumers heard from in the last EVLOG_PACE_ACTIVE_MS
 * count: one that stopped (killed, or rebuilding) holds nobody back for
 * longer than that.  A consumer's report is a little old when it comes,
 * so it should report often while it applies (the inbox: every
 * INBOX_REPORT_BUSY_MS).
 *
 * A commit that finds the lag over lag_ms waits for the next report
 * until the lag is under it again, or wait_ms has passed (then it goes
 * on: the log slows its producers down, it never refuses them).  The
 * waiting worker lets a spare thread serve meanwhile
 * (rt_loop_slow_begin), and at most `waiters` wait at once, so that the
 * consumer's own reports, which reach the same server, are served.
 */
#include <time.h>

#include "evlog_int.h"
#include "rt_loop.h"
#include "wb_clock.h"

#define EVLOG_PACE_ACTIVE_MS 1000 /* a consumer silent this long holds nobody back */
#define EVLOG_PACE_TICK_MS   5    /* a waiter looks again at least this often */

void
evlog_times_note(evlog *l, uint64_t first, uint64_t last)
{
	uint64_t now = wb_now_ms();

	for (uint64_t s = first; s <= last; s++) {
		EVLOG_STORE(&l->times[s % EVLOG_TIMES], now);
	}
}

/* evlog_time_of gives when seq was committed (the oldest time kept if it is older still). */
static uint64_t
evlog_time_of(evlog *l, uint64_t seq, uint64_t last)
{
	if (last >= EVLOG_TIMES && seq <= last - EVLOG_TIMES) {
		seq = last - EVLOG_TIMES + 1;
	}
	return EVLOG_LOAD(&l->times[seq % EVLOG_TIMES]);
}

/* evlog_behind_locked is evlog_behind_ms with cons_mu held. */
static uint64_t
evlog_behind_locked(evlog *l, uint64_t now_ms)
{
	uint64_t last = EVLOG_LOAD(&l->last), next = UINT64_MAX;

	for (size_t i = 0; i < l->ncons; i++) {
		const evlog_consumer *c = &l->cons[i];
		if (c->applied < last && c->heard_ms + EVLOG_PACE_ACTIVE_MS >= now_ms &&
		    c->applied + 1 < next) {
			next = c->applied + 1;
		}
	}
	if (next == UINT64_MAX) {
		return 0;
	}
	uint64_t t = evlog_time_of(l, next, last);
	return t != 0 && now_ms > t ? now_ms - t : 0; /* 0: committed before this process began */
}

uint64_t
evlog_behind_ms(evlog *l, uint64_t now_ms)
{
	pthread_mutex_lock(&l->cons_mu);
	uint64_t ms = evlog_behind_locked(l, now_ms);
	pthread_mutex_unlock(&l->cons_mu);
	return ms;
}

void
evlog_pace_set(evlog *l, const evlog_pace *p)
{
	pthread_mutex_lock(&l->cons_mu);
	l->pace = *p;
	pthread_mutex_unlock(&l->cons_mu);
}

void
evlog_pace_heard(evlog *l)
{
	if (l->pace_waiting > 0) {
		pthread_cond_broadcast(&l->pace_cv);
	}
}

/* evlog_pace_sleep waits on pace_cv with cons_mu held, up to ms. */
static void
evlog_pace_sleep(evlog *l, uint64_t ms)
{
	struct timespec dl;

	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_nsec += (long)ms * 1000000;
	dl.tv_sec += dl.tv_nsec / 1000000000;
	dl.tv_nsec %= 1000000000;
	(void)pthread_cond_timedwait(&l->pace_cv, &l->cons_mu, &dl);
}

void
evlog_pace_wait(evlog *l)
{
	uint64_t start = wb_now_ms(), now = start;

	pthread_mutex_lock(&l->cons_mu);
	evlog_pace p = l->pace;
	if (p.lag_ms == 0 || evlog_behind_locked(l, now) <= p.lag_ms ||
	    (p.waiters > 0 && l->pace_waiting >= p.waiters)) {
		pthread_mutex_unlock(&l->cons_mu);
		return;
	}
	l->pace_waiting++;
	pthread_mutex_unlock(&l->cons_mu);
	rt_loop_slow_begin();
	pthread_mutex_lock(&l->cons_mu);
	while (now < start + p.wait_ms && evlog_behind_locked(l, now) > p.lag_ms) {
		uint64_t left = start + p.wait_ms - now;
		evlog_pace_sleep(l, left < EVLOG_PACE_TICK_MS ? left : EVLOG_PACE_TICK_MS);
		now = wb_now_ms();
	}
	l->pace_waiting--;
	l->paced++;
	l->pace_ms += now - start;
	l->pace_over += now >= start + p.wait_ms;
	pthread_mutex_unlock(&l->cons_mu);
	rt_loop_slow_end();
}

/* evlog_g_behind is the gauge log_behind_ms. */
static uint64_t
evlog_g_behind(void *arg)
{
	return evlog_behind_ms(arg, wb_now_ms());
}

/* evlog_pace_read reads one of the pace's counters under cons_mu. */
static uint64_t
evlog_pace_read(evlog *l, const uint64_t *v)
{
	pthread_mutex_lock(&l->cons_mu);
	uint64_t n = *v;
	pthread_mutex_unlock(&l->cons_mu);
	return n;
}

static uint64_t
evlog_g_paced(void *arg)
{
	evlog *l = arg;
	return evlog_pace_read(l, &l->paced);
}

static uint64_t
evlog_g_pace_ms(void *arg)
{
	evlog *l = arg;
	return evlog_pace_read(l, &l->pace_ms);
}

static uint64_t
evlog_g_pace_over(void *arg)
{
	evlog *l = arg;
	return evlog_pace_read(l, &l->pace_over);
}

int
evlog_pace_gauges(evlog *l, rt_server *s)
{
	static const struct {
		const char *name;
		rt_gauge_fn fn;
	} g[] = {
		{ "log_behind_ms", evlog_g_behind },
		{ "log_paced", evlog_g_paced },
		{ "log_paced_ms", evlog_g_pace_ms },
		{ "log_pace_over", evlog_g_pace_over },
	};
	int rc = WB_OK;

	for (size_t i = 0; rc == WB_OK && i < sizeof(g) / sizeof(g[0]); i++) {
		rc = rt_server_gauge(s, g[i].name, g[i].fn, l);
	}
	return rc;
}
