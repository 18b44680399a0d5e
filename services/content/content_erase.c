/*
 * content_erase.c - a deleted account's posts and images, erased from
 * the user service's "erase" event (evlog_sub.h; docs/architecture.md,
 * "Deleting an account").  Posts and images live on their author's
 * shard, so only that shard has anything to do; the others just move
 * their position.
 *
 *   0. under write_mu, x joins c->gone: a publish or upload of x is
 *      refused from then on (NO_SUCH_USER), so nothing new appears behind
 *      the sweep;
 *   1. x's post row is read page by page (CONTENT_ERASE_PAGE posts, newest
 *      first, each page below the last) and the id index cell of each post
 *      is deleted, a write a page;
 *   2. under write_mu, one last write: x's rows of post, pcat, media,
 *      media_preview, upload and upload_preview, the consumer's position,
 *      and one event in this shard's log, "erased" {uid: x}.  (The
 *      re-encode pass writes only what it finds under write_mu, so it
 *      cannot bring one back.)
 *
 * No delete event is logged for each post: the posts leave the inboxes as
 * the relation shards remove x's fans ("unfollow" each, rel_erase.c).
 * The one "erased" event comes after every "post" of x in this log, so
 * the inbox shard of x, dropping x's row on it, drops x's own cells of
 * posts whose events it applied late (an author's own cell: inbox_fanout.c).
 * A crash replays the event: step 1 reads the rows that are still there
 * and deletes their index cells again, which is harmless, and step 2 is
 * one write.
 */
#include <string.h>

#include "content_int.h"
#include "content_schema.h"
#include "rt_log.h"
#include "wb_clock.h"
#include "wb_services.h"
#include "wb_slot.h"

#define CONTENT_ERASE_PAGE 1000                    /* posts a write */
#define CONTENT_GONE_MS    (3600 * UINT64_C(1000)) /* a deleted author is refused this long */

int
content_erase_open(content *c, wb_shard shard)
{
	c->shard = shard;
	return rt_uidset_open(&c->gone, CONTENT_GONE_MS);
}

bool
content_gone(content *c, uint64_t uid)
{
	return c->gone != NULL && rt_uidset_has(c->gone, uid, wb_now_ms());
}

/* content_erase_index deletes the id index cells of x's posts, a page a write; *n counts them. */
static int
content_erase_index(content *c, evlog_sub *s, uint64_t x, uint64_t *n)
{
	uint8_t   row[8], idb[8];
	uint64_t  below = 0;
	hb_batch *b = NULL;
	int       rc = hb_batch_new(&b);

	*n = 0;
	while (rc == WB_OK) {
		hb_scan_opts o;
		hb_scan     *sc = NULL;
		hb_cell      cell;
		size_t       k = 0;

		hb_scan_opts_id_row(&o, row, x);
		o.all_versions = true;
		o.limit = CONTENT_ERASE_PAGE;
		o.max_version = below; /* 0: no bound (the first page) */
		if ((rc = hb_scan_open(&sc, c->t, CONTENT_FAM_POST, &o)) != WB_OK) {
			break;
		}
		while (k < CONTENT_ERASE_PAGE && (rc = hb_scan_next(sc, &cell)) == WB_OK) {
			hb_u64_be(idb, cell.version);
			rc = hb_batch_delete_version(b, c->t, CONTENT_FAM_PIDX, idb, 8, NULL, 0, 0);
			below = cell.version - 1;
			k++;
			if (rc != WB_OK) {
				break;
			}
		}
		hb_scan_close(sc);
		if (rc == WB_EEND) {
			rc = WB_OK;
		}
		if (rc == WB_OK && k > 0) {
			rc = hb_write(c->t, b);
		}
		hb_batch_clear(b);
		*n += rc == WB_OK ? k : 0;
		if (k < CONTENT_ERASE_PAGE || below == 0) {
			break;
		}
		if (rc == WB_OK && s != NULL && evlog_sub_stopping(s)) {
			rc = WB_ECLOSED;
		}
	}
	hb_batch_free(b);
	return rc;
}

/* content_erase_event makes the "erased" {uid} event, with the request's id (logs). */
static wb_obj *
content_erase_event(uint64_t x)
{
	wb_obj *ev = wb_msg_new();

	if (ev != NULL && (wb_set_cstr(ev, WB_F_TYPE, wb_event_name(WB_EV_ERASED)) != WB_OK ||
	                      wb_set_u64(ev, WB_F_UID, x) != WB_OK ||
	                      (wb_rid() != NULL && wb_set_cstr(ev, WB_F_RID, wb_rid()) != WB_OK))) {
		wb_msg_free(ev);
		ev = NULL;
	}
	return ev;
}

/* content_erase_account erases everything of x here; b (the position) is the last write. */
static int
content_erase_account(content *c, evlog_sub *s, uint64_t x, hb_batch *b)
{
	static const int rows[] = { CONTENT_FAM_POST, CONTENT_FAM_PCAT, CONTENT_FAM_MEDIA,
		CONTENT_FAM_MEDIA_PREVIEW, CONTENT_FAM_UPLOAD, CONTENT_FAM_UPLOAD_PREVIEW };
	uint8_t          row[8];
	uint64_t         posts = 0, t0 = wb_mono_us();
	wb_obj          *ev = NULL;
	int              rc;

	pthread_mutex_lock(&c->write_mu);
	rc = rt_uidset_add(c->gone, x, wb_now_ms());
	pthread_mutex_unlock(&c->write_mu);
	if (rc == WB_OK) {
		rc = content_erase_index(c, s, x, &posts);
	}
	hb_u64_be(row, x);
	for (size_t i = 0; rc == WB_OK && i < sizeof(rows) / sizeof(rows[0]); i++) {
		rc = hb_batch_delete_row(b, c->t, rows[i], row, 8);
	}
	if (rc == WB_OK && (ev = content_erase_event(x)) == NULL) {
		rc = WB_ENOMEM;
	}
	if (rc == WB_OK) {
		pthread_mutex_lock(&c->write_mu);
		rc = evlog_commit(c->log, b, ev, NULL);
		pthread_mutex_unlock(&c->write_mu);
	}
	wb_msg_free(ev);
	if (rc == WB_OK) {
		atomic_fetch_add(&c->erased_posts, posts);
		RT_INFOF("uid %llu erased here: %llu posts and their images, %.1f ms",
		    (unsigned long long)x, (unsigned long long)posts,
		    (double)(wb_mono_us() - t0) / 1000.0);
	}
	return rc;
}

int
content_erase_apply(void *arg, evlog_sub *s, const wb_obj *ev, hb_batch *b)
{
	content    *c = arg;
	uint64_t    x = wb_u64(ev, WB_F_UID, 0);
	const char *type = wb_str(ev, WB_F_TYPE, "");

	if (strcmp(type, wb_event_name(WB_EV_ERASE)) != 0 || x == 0 ||
	    !wb_shard_owns(c->shard, wb_slot(x))) {
		return hb_write(c->t, b); /* nothing of it here: only the position moves */
	}
	return content_erase_account(c, s, x, b);
}
