/*
 * evlog_retain.c - how long a log keeps its events: its consumers'
 * positions, kept in the store, and the trim.
 *
 * Positions.  A consumer reports the last seq it applied with its reads
 * of the log (evlog_serve).  The table of positions is a table attribute
 * (RocksDB's default family, so a checkpoint carries it beside the log),
 * written when a consumer first reports, then at most once every
 * EVLOG_SAVE_MS, by each trim pass and at close.  A position lost in a
 * crash is an older one, which holds the trim lower, never higher:
 *
 *   "evlog.consumers:<source>" =
 *   +---------+---------+------+----------------+-----------------+
 *   | ver (1) | len (1) | name | applied (8 BE) | heard_ms (8 BE) |  one record
 *   +---------+---------+------+----------------+-----------------+  per consumer
 *
 * The trim.  One pass at now, over the kept run [first, last]:
 *
 *   hold  = min(every consumer's applied)          (none: last)
 *   keep  = first seq younger than the retention   (none: last)
 *   must  = first seq younger than the max age     (none: last)
 *   bound = min(max(min(hold, keep), must), last)
 *
 * and the rows [first, bound) go in one range delete (hb_delete_range),
 * then that range is compacted so the disk space comes back at once.
 * The applied event itself stays (the consumer checks its digest), and
 * the last one always (the next seq after a restart follows it).  first
 * moves up before the delete is written and a read takes it after its
 * scan, so a read that misses rows always says so.  Consumers silent for
 * longer than the max age are forgotten before the pass.
 *
 * An event's time is its commit's, and commits are serialized in seq
 * order, so time grows with seq (a clock stepped back only makes a few
 * events look younger, and keeps them longer): keep and must are found
 * by bisection, a few point reads a pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evlog_int.h"
#include "rt_config.h"
#include "rt_log.h"
#include "wb_clock.h"

#define EVLOG_SAVE_MS    1000  /* positions are written at most this often between passes */
#define EVLOG_PASS_MIN   1000  /* the shortest time between passes, ms */
#define EVLOG_PASS_MAX   60000 /* the longest */
#define EVLOG_REC_MAX    (2 + EVLOG_CONSUMER_NAME_MAX + 16)
#define EVLOG_TABLE_MAX  (1 + EVLOG_CONSUMERS_MAX * EVLOG_REC_MAX)
#define EVLOG_TABLE_VER  1
#define EVLOG_ATTR_MAX   64
#define EVLOG_SECS_LIMIT (UINT64_C(100) * 366 * 86400) /* a century: any larger is a typo */

/* evlog_attr_name writes the name of the attribute that keeps l's positions. */
static void
evlog_attr_name(const evlog *l, char *name, size_t cap)
{
	snprintf(name, cap, "evlog.consumers:%s", l->source);
}

/* evlog_consumers_save writes the positions into the store; call with cons_mu held. */
static int
evlog_consumers_save(evlog *l, uint64_t now_ms)
{
	uint8_t buf[EVLOG_TABLE_MAX];
	size_t  n = 0;
	char    name[EVLOG_ATTR_MAX];

	buf[n++] = EVLOG_TABLE_VER;
	for (size_t i = 0; i < l->ncons; i++) {
		size_t k = strlen(l->cons[i].name);
		buf[n++] = (uint8_t)k;
		memcpy(buf + n, l->cons[i].name, k);
		n += k;
		hb_u64_be(buf + n, l->cons[i].applied);
		hb_u64_be(buf + n + 8, l->cons[i].heard_ms);
		n += 16;
	}
	evlog_attr_name(l, name, sizeof(name));
	int rc = hb_attr_set(l->t, name, buf, n);
	if (rc == WB_OK) {
		l->saved_ms = now_ms;
		l->dirty = false;
	} else {
		RT_WARNF("%s log: consumers' positions not saved: %s %s", l->source,
		    wb_strerror(rc), hb_last_error());
	}
	return rc;
}

/* evlog_name_ok tells whether a consumer's name is 1-EVLOG_CONSUMER_NAME_MAX of
 * a-z A-Z 0-9 / . _ : -. */
static bool
evlog_name_ok(const char *p, size_t n)
{
	if (n == 0 || n > EVLOG_CONSUMER_NAME_MAX) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		        c == '/' || c == '.' || c == '_' || c == ':' || c == '-')) {
			return false;
		}
	}
	return true;
}

/* evlog_table_decode reads a saved table into l (WB_ECORRUPT if it is not one). */
static int
evlog_table_decode(evlog *l, const uint8_t *p, size_t n)
{
	size_t off = 1;

	if (n < 1 || p[0] != EVLOG_TABLE_VER) {
		return WB_ECORRUPT;
	}
	while (off < n) {
		size_t k = p[off++];
		if (l->ncons == EVLOG_CONSUMERS_MAX || off + k + 16 > n ||
		    !evlog_name_ok((const char *)p + off, k)) {
			return WB_ECORRUPT;
		}
		evlog_consumer *c = &l->cons[l->ncons++];
		memcpy(c->name, p + off, k);
		c->name[k] = '\0';
		c->applied = hb_be_u64(p + off + k);
		c->heard_ms = hb_be_u64(p + off + k + 8);
		off += k + 16;
	}
	return WB_OK;
}

int
evlog_consumers_load(evlog *l)
{
	char     name[EVLOG_ATTR_MAX];
	uint8_t *buf = malloc(EVLOG_TABLE_MAX + 1);
	size_t   n = 0;
	int      rc;

	if (buf == NULL) {
		return WB_ENOMEM;
	}
	evlog_attr_name(l, name, sizeof(name));
	rc = hb_attr_get(l->t, name, (char *)buf, EVLOG_TABLE_MAX + 1, &n);
	if (rc == WB_OK && evlog_table_decode(l, buf, n) != WB_OK) {
		/* only the trim reads it: with none it holds for no consumer until they report */
		RT_ERRORF(
		    "%s log: the consumers' positions in the store are unreadable (%zu bytes): "
		    "starting with none",
		    l->source, n);
		l->ncons = 0;
	} else if (rc == WB_OK && l->ncons > 0) {
		uint64_t low = UINT64_MAX;
		for (size_t i = 0; i < l->ncons; i++) {
			low = l->cons[i].applied < low ? l->cons[i].applied : low;
		}
		RT_INFOF("%s log: %zu consumers known, the lowest applied %llu", l->source,
		    l->ncons, (unsigned long long)low);
	}
	free(buf);
	return rc == WB_ENOTFOUND || rc == WB_ETOOBIG ? WB_OK : rc;
}

int
evlog_report(evlog *l, const char *name, size_t len, uint64_t applied, uint64_t now_ms)
{
	size_t i;

	if (!evlog_name_ok(name, len)) {
		return WB_EINVAL;
	}
	pthread_mutex_lock(&l->cons_mu);
	for (i = 0; i < l->ncons; i++) {
		if (strlen(l->cons[i].name) == len && memcmp(l->cons[i].name, name, len) == 0) {
			break;
		}
	}
	if (i == l->ncons) {
		if (l->ncons == EVLOG_CONSUMERS_MAX) {
			pthread_mutex_unlock(&l->cons_mu);
			return WB_ETOOBIG;
		}
		memcpy(l->cons[i].name, name, len);
		l->cons[i].name[len] = '\0';
		l->ncons++;
		l->saved_ms = 0; /* a new consumer is written at once */
		RT_INFOF(
		    "%s log: consumer %s reports for the first time, applied %llu (first %llu, "
		    "last %llu)",
		    l->source, l->cons[i].name, (unsigned long long)applied,
		    (unsigned long long)evlog_first(l), (unsigned long long)evlog_last(l));
	}
	l->cons[i].applied = applied;
	l->cons[i].heard_ms = now_ms;
	l->dirty = true;
	evlog_pace_heard(l);
	if (now_ms >= l->saved_ms + EVLOG_SAVE_MS) {
		(void)evlog_consumers_save(l, now_ms);
	}
	pthread_mutex_unlock(&l->cons_mu);
	return WB_OK;
}

/* evlog_time_at finds the first kept seq >= seq (*at, 0 if none) and its event's time. */
static int
evlog_time_at(evlog *l, uint64_t seq, uint64_t *at, uint64_t *time_ms)
{
	uint8_t      start[8];
	hb_scan     *s = NULL;
	hb_cell      c;
	hb_scan_opts o = { .start_row = start, .start_row_len = 8, .limit = 1 };
	int          rc;

	*at = *time_ms = 0;
	hb_u64_be(start, seq);
	if ((rc = hb_scan_open(&s, l->t, l->fam, &o)) != WB_OK) {
		return rc;
	}
	if ((rc = hb_scan_next(s, &c)) == WB_OK && c.row_len == 8) {
		wb_obj *ev = NULL;
		char    err[128];
		*at = hb_be_u64(c.row);
		if (wb_decode(&ev, c.value, c.value_len, &wb_limits_default, err, sizeof(err)) ==
		    WB_OK) {
			*time_ms = wb_u64(ev, WB_F_TIME, 0); /* none or unreadable: old, 0 */
		}
		wb_msg_free(ev);
	}
	hb_scan_close(s);
	return rc == WB_EEND ? WB_OK : rc;
}

/* evlog_young finds the first seq in [lo, hi] before which every kept event is older than cut
 * (hi if none younger before it). */
static int
evlog_young(evlog *l, uint64_t lo, uint64_t hi, uint64_t cut, uint64_t *out)
{
	int rc = WB_OK;

	while (rc == WB_OK && lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2, at, t;
		if ((rc = evlog_time_at(l, mid, &at, &t)) != WB_OK) {
			break;
		}
		if (at == 0 || at >= hi || t >= cut) {
			hi = mid; /* no kept seq in [mid, at) was older */
		} else {
			lo = at + 1;
		}
	}
	*out = lo;
	return rc;
}

/* evlog_forget drops the consumers silent since before now - max_age, and finds the lowest
 * applied of the rest (and whose); call with cons_mu held. */
static uint64_t
evlog_forget(evlog *l, uint64_t now_ms, uint64_t max_age_ms, char *who, size_t cap)
{
	uint64_t hold = UINT64_MAX;
	size_t   k = 0;

	for (size_t i = 0; i < l->ncons; i++) {
		evlog_consumer *c = &l->cons[i];
		if (c->heard_ms + max_age_ms < now_ms) {
			RT_WARNF("%s log: consumer %s forgotten: silent for %llu s (log-max-age "
			         "%llu s), "
			         "its last applied %llu",
			    l->source, c->name, (unsigned long long)((now_ms - c->heard_ms) / 1000),
			    (unsigned long long)(max_age_ms / 1000),
			    (unsigned long long)c->applied);
			l->dirty = true;
			continue;
		}
		if (c->applied < hold) {
			hold = c->applied;
			snprintf(who, cap, "%s", c->name);
		}
		l->cons[k++] = *c;
	}
	l->ncons = k;
	return hold;
}

int
evlog_trim(evlog *l, const evlog_retention *r, uint64_t now_ms, uint64_t *trimmed)
{
	uint64_t first, last, keep, must, hold, bound;
	uint8_t  lo[8], hi[8];
	char     who[EVLOG_CONSUMER_NAME_MAX + 1] = "";
	int      rc = WB_OK;

	if (trimmed != NULL) {
		*trimmed = 0;
	}
	if (r->retention_ms == 0) {
		return WB_OK;
	}
	pthread_mutex_lock(&l->trim_mu);
	pthread_mutex_lock(&l->cons_mu);
	hold = evlog_forget(l, now_ms, r->max_age_ms, who, sizeof(who));
	if (l->dirty) {
		(void)evlog_consumers_save(l, now_ms);
	}
	pthread_mutex_unlock(&l->cons_mu);
	EVLOG_ADD(&l->trim_passes, 1);

	first = evlog_first(l);
	last = evlog_last(l);
	if (first == 0 || first >= last) {
		pthread_mutex_unlock(&l->trim_mu);
		return WB_OK;
	}
	rc = evlog_young(
	    l, first, last, now_ms > r->retention_ms ? now_ms - r->retention_ms : 0, &keep);
	if (rc == WB_OK) {
		rc = evlog_young(
		    l, first, keep, now_ms > r->max_age_ms ? now_ms - r->max_age_ms : 0, &must);
	}
	bound = hold < keep ? hold : keep;
	if (rc == WB_OK && bound < must) {
		RT_WARNF("%s log: events older than log-max-age (%llu s) trimmed past consumer %s, "
		         "which applied only %llu: it rebuilds from the stores if it comes back",
		    l->source, (unsigned long long)(r->max_age_ms / 1000), who,
		    (unsigned long long)hold);
		bound = must;
	}
	if (bound > last) {
		bound = last;
	}
	if (rc != WB_OK || bound <= first) {
		pthread_mutex_unlock(&l->trim_mu);
		return rc;
	}
	hb_u64_be(lo, first);
	hb_u64_be(hi, bound);
	pthread_mutex_lock(&l->commit_mu);
	EVLOG_STORE(&l->first, bound); /* before the rows go: see the top of this file */
	pthread_mutex_unlock(&l->commit_mu);
	if ((rc = hb_delete_range(l->t, l->fam, lo, 8, hi, 8)) != WB_OK) {
		EVLOG_STORE(&l->first, first);
		RT_ERRORF("%s log: trim of [%llu, %llu) failed: %s %s", l->source,
		    (unsigned long long)first, (unsigned long long)bound, wb_strerror(rc),
		    hb_last_error());
		pthread_mutex_unlock(&l->trim_mu);
		return rc;
	}
	/* gone for readers now; the disk space once compacted */
	EVLOG_ADD(&l->trimmed, bound - first);
	(void)hb_compact_range(l->t, l->fam, lo, 8, hi, 8);
	RT_DEBUGF("%s log: trimmed seqs [%llu, %llu); held by %s at %llu", l->source,
	    (unsigned long long)first, (unsigned long long)bound, who[0] ? who : "none",
	    (unsigned long long)hold);
	if (trimmed != NULL) {
		*trimmed = bound - first;
	}
	pthread_mutex_unlock(&l->trim_mu);
	return WB_OK;
}

/* evlog_pass_ms is the time between two passes for a retention. */
static uint64_t
evlog_pass_ms(uint64_t retention_ms)
{
	uint64_t p = retention_ms / 4;

	return p < EVLOG_PASS_MIN ? EVLOG_PASS_MIN : p > EVLOG_PASS_MAX ? EVLOG_PASS_MAX : p;
}

/* evlog_trimmer_main is the background pass: evlog_trim every evlog_pass_ms until closed. */
static void *
evlog_trimmer_main(void *arg)
{
	evlog   *l = arg;
	uint64_t period = evlog_pass_ms(l->ret.retention_ms);

	pthread_mutex_lock(&l->trim_mu);
	while (!l->trim_stop) {
		struct timespec dl;
		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += (time_t)(period / 1000);
		dl.tv_nsec += (long)(period % 1000) * 1000000;
		if (dl.tv_nsec >= 1000000000) {
			dl.tv_sec++;
			dl.tv_nsec -= 1000000000;
		}
		while (
		    !l->trim_stop && pthread_cond_timedwait(&l->trim_cv, &l->trim_mu, &dl) == 0) {
		}
		if (l->trim_stop) {
			break;
		}
		pthread_mutex_unlock(&l->trim_mu);
		(void)evlog_trim(l, &l->ret, wb_now_ms(), NULL);
		pthread_mutex_lock(&l->trim_mu);
	}
	pthread_mutex_unlock(&l->trim_mu);
	return NULL;
}

int
evlog_retain(evlog *l, const evlog_retention *r)
{
	if (l->has_trimmer || (r->retention_ms > 0 && r->max_age_ms < r->retention_ms)) {
		return WB_EINVAL;
	}
	l->ret = *r;
	if (r->retention_ms == 0) {
		RT_INFOF("%s log: kept whole (log-retention 0)", l->source);
		return WB_OK;
	}
	if (pthread_create(&l->trimmer, NULL, evlog_trimmer_main, l) != 0) {
		return WB_ENOMEM;
	}
	l->has_trimmer = true;
	RT_INFOF("%s log: events go once applied and %llu s old, or %llu s old in any case; a "
	         "pass every %llu ms; first seq %llu, last %llu",
	    l->source, (unsigned long long)(r->retention_ms / 1000),
	    (unsigned long long)(r->max_age_ms / 1000),
	    (unsigned long long)evlog_pass_ms(r->retention_ms), (unsigned long long)evlog_first(l),
	    (unsigned long long)evlog_last(l));
	return WB_OK;
}

void
evlog_consumers_close(evlog *l)
{
	pthread_mutex_lock(&l->trim_mu);
	l->trim_stop = true;
	pthread_cond_broadcast(&l->trim_cv);
	pthread_mutex_unlock(&l->trim_mu);
	if (l->has_trimmer) {
		pthread_join(l->trimmer, NULL);
		l->has_trimmer = false;
	}
	pthread_mutex_lock(&l->cons_mu);
	if (l->dirty) {
		(void)evlog_consumers_save(l, wb_now_ms());
	}
	pthread_mutex_unlock(&l->cons_mu);
}

int
evlog_retention_config(evlog_retention *r, const char *retention, const char *max_age)
{
	uint64_t a, m;

	if (rt_config_u64("log-retention", retention, 0, EVLOG_SECS_LIMIT, &a) != 0 ||
	    rt_config_u64("log-max-age", max_age, 1, EVLOG_SECS_LIMIT, &m) != 0) {
		return WB_EINVAL;
	}
	if (a > 0 && m < a) {
		fprintf(stderr, "log-max-age (%llu s) must be at least log-retention (%llu s)\n",
		    (unsigned long long)m, (unsigned long long)a);
		return WB_EINVAL;
	}
	r->retention_ms = a * 1000;
	r->max_age_ms = m * 1000;
	return WB_OK;
}

/* Gauges. */
static uint64_t
evlog_g_first(void *arg)
{
	return evlog_first(arg);
}

static uint64_t
evlog_g_last(void *arg)
{
	return evlog_last(arg);
}

static uint64_t
evlog_g_bytes(void *arg)
{
	evlog   *l = arg;
	uint64_t bytes = 0;

	(void)hb_family_stats(l->t, l->fam, &bytes, NULL);
	return bytes;
}

static uint64_t
evlog_g_trimmed(void *arg)
{
	return EVLOG_LOAD(&((evlog *)arg)->trimmed);
}

static uint64_t
evlog_g_consumers(void *arg)
{
	evlog *l = arg;

	pthread_mutex_lock(&l->cons_mu);
	uint64_t n = l->ncons;
	pthread_mutex_unlock(&l->cons_mu);
	return n;
}

/* evlog_g_list gives each consumer's applied seq and the age of its last report. */
static size_t
evlog_g_list(void *arg, rt_gauge_val *out, size_t cap)
{
	evlog   *l = arg;
	uint64_t now = wb_now_ms();
	size_t   n = 0;

	pthread_mutex_lock(&l->cons_mu);
	for (size_t i = 0; i < l->ncons && n + 2 <= cap; i++) {
		const evlog_consumer *c = &l->cons[i];
		snprintf(
		    out[n].name, sizeof(out[n].name), "log_consumer_applied{consumer=%s}", c->name);
		out[n++].value = c->applied;
		snprintf(
		    out[n].name, sizeof(out[n].name), "log_consumer_age_ms{consumer=%s}", c->name);
		out[n++].value = now > c->heard_ms ? now - c->heard_ms : 0;
	}
	pthread_mutex_unlock(&l->cons_mu);
	return n;
}

int
evlog_gauges(evlog *l, rt_server *s)
{
	static const struct {
		const char *name;
		rt_gauge_fn fn;
	} g[] = {
		{ "log_first_seq", evlog_g_first },
		{ "log_last_seq", evlog_g_last },
		{ "log_bytes", evlog_g_bytes },
		{ "log_trimmed", evlog_g_trimmed },
		{ "log_consumers", evlog_g_consumers },
	};
	int rc = WB_OK;

	for (size_t i = 0; rc == WB_OK && i < sizeof(g) / sizeof(g[0]); i++) {
		rc = rt_server_gauge(s, g[i].name, g[i].fn, l);
	}
	if (rc == WB_OK) {
		rc = evlog_pace_gauges(l, s);
	}
	return rc == WB_OK ? rt_server_gauge_list(s, evlog_g_list, l) : rc;
}
