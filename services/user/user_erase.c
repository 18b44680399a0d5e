/*
 * user_erase.c - the user service's own part of erasing a deleted
 * account: its session rows.
 *
 * A session row is keyed by the hash of its token (user_schema.h), so a
 * user's sessions are found by reading the whole session family (one
 * row per live session, the uid its value) and deleting those of the
 * account.  That runs here, on a thread of its own, after the deletion
 * has committed (user_delete.c): from then on no session of the account
 * can begin, and those it had are void already (user.auth finds no
 * account; the revocation records end them at the gateways).
 *
 * The thread follows the service's own log: meta "swept" holds the seq
 * of the last event done, written in the batch of that event's deletes,
 * so a crash at any point leaves it to finish after the restart.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "rt_log.h"
#include "user_check.h"
#include "user_int.h"
#include "user_schema.h"
#include "wb_services.h"

#define USER_ERASE_POLL_MS 1000 /* the log is looked at this often besides each deletion */

/* user_erase_sessions deletes every session row of uid, and marks seq swept, in one write. */
static int
user_erase_sessions(user_svc *u, uint64_t uid, uint64_t seq, uint64_t *n)
{
	hb_batch *b = NULL;
	hb_scan  *sc = NULL;
	hb_cell   c;
	uint8_t   v[8];
	int       rc = hb_batch_new(&b);

	*n = 0;
	if (rc == WB_OK && uid != 0) {
		rc = hb_scan_open(&sc, u->t, USER_FAM_SESSION, NULL);
	}
	while (rc == WB_OK && sc != NULL && (rc = hb_scan_next(sc, &c)) == WB_OK) {
		if (c.value_len == 8 && hb_be_u64(c.value) == uid) {
			rc = hb_batch_delete_row(b, u->t, USER_FAM_SESSION, c.row, c.row_len);
			(*n)++;
		}
	}
	hb_scan_close(sc);
	if (rc == WB_EEND) {
		rc = WB_OK;
	}
	hb_u64_be(v, seq);
	if (rc == WB_OK) {
		rc = hb_batch_put(b, u->t, USER_FAM_META, USER_META_SWEPT, strlen(USER_META_SWEPT),
		    NULL, 0, USER_VERSION, v, sizeof(v));
	}
	if (rc == WB_OK) {
		rc = hb_write(u->t, b);
	}
	hb_batch_free(b);
	return rc;
}

/* user_erase_catch_up applies every log event after the swept one; stops at a failure. */
static int
user_erase_catch_up(user_svc *u)
{
	uint64_t swept = __atomic_load_n(&u->swept, __ATOMIC_RELAXED);
	int      rc = WB_OK;

	while (rc == WB_OK && swept < evlog_last(u->log)) {
		wb_obj       *page = wb_msg_new();
		const wb_obj *evs = NULL;
		size_t        n = 0;

		rc = page == NULL ? WB_ENOMEM : evlog_read(u->log, swept + 1, EVLOG_READ_MAX, page);
		(void)wb_get_objs(page, WB_F_EVENTS, &evs, &n);
		for (size_t i = 0; rc == WB_OK && i < n; i++) {
			uint64_t    seq = wb_u64(&evs[i], WB_F_SEQ, 0), uid = 0, gone = 0;
			const char *type = wb_str(&evs[i], WB_F_TYPE, "");

			if (seq <= swept) {
				continue;
			}
			if (strcmp(type, wb_event_name(WB_EV_ERASE)) == 0) {
				uid = wb_u64(&evs[i], WB_F_UID, 0);
			}
			if ((rc = user_erase_sessions(u, uid, seq, &gone)) == WB_OK) {
				swept = seq;
				__atomic_store_n(&u->swept, swept, __ATOMIC_RELAXED);
				if (uid != 0) {
					RT_INFOF("uid %llu: %llu sessions erased",
					    (unsigned long long)uid, (unsigned long long)gone);
				}
			}
		}
		wb_msg_free(page);
		if (n == 0) {
			break; /* nothing more to read */
		}
	}
	if (rc != WB_OK) {
		RT_ERRORF("erasing the sessions of event %llu failed: %s %s",
		    (unsigned long long)swept + 1, wb_strerror(rc), hb_last_error());
	}
	return rc;
}

/* user_erase_main is the thread: catch up, then wait for a deletion or the poll. */
static void *
user_erase_main(void *arg)
{
	user_svc *u = arg;

	pthread_mutex_lock(&u->erase_mu);
	while (!u->erase_stop) {
		u->erase_due = false;
		pthread_mutex_unlock(&u->erase_mu);
		(void)user_erase_catch_up(u);
		struct timespec dl;
		clock_gettime(CLOCK_MONOTONIC, &dl);
		dl.tv_sec += USER_ERASE_POLL_MS / 1000;
		pthread_mutex_lock(&u->erase_mu);
		while (!u->erase_stop && !u->erase_due) {
			if (pthread_cond_timedwait(&u->erase_cv, &u->erase_mu, &dl) == ETIMEDOUT) {
				break;
			}
		}
	}
	pthread_mutex_unlock(&u->erase_mu);
	return NULL;
}

int
user_erase_start(user_svc *u)
{
	hb_cell *c = NULL;
	int rc = hb_get(u->t, USER_FAM_META, USER_META_SWEPT, strlen(USER_META_SWEPT), NULL, 0, &c);

	if (rc == WB_OK) {
		rc = c->value_len == 8 ? WB_OK : WB_ECORRUPT;
		if (rc == WB_OK) {
			__atomic_store_n(&u->swept, hb_be_u64(c->value), __ATOMIC_RELAXED);
		}
		hb_cell_free(c);
	} else if (rc == WB_ENOTFOUND) {
		rc = WB_OK;
	}
	if (rc == WB_OK && pthread_create(&u->erase_thread, NULL, user_erase_main, u) != 0) {
		rc = WB_ENOMEM;
	}
	u->erase_running = rc == WB_OK;
	return rc;
}

void
user_erase_kick(user_svc *u)
{
	pthread_mutex_lock(&u->erase_mu);
	u->erase_due = true;
	pthread_cond_signal(&u->erase_cv);
	pthread_mutex_unlock(&u->erase_mu);
}

void
user_erase_stop(user_svc *u)
{
	pthread_mutex_lock(&u->erase_mu);
	u->erase_stop = true;
	pthread_cond_broadcast(&u->erase_cv);
	pthread_mutex_unlock(&u->erase_mu);
	if (u->erase_running) {
		pthread_join(u->erase_thread, NULL);
		u->erase_running = false;
	}
}
