/*
 * content_write.c - post.publish and post.delete: the post, its index
 * entries, its images' move out of (or deletion from) the media families
 * and its event commit in one batch through the event log.
 *
 * Both wait first while an inbox is behind (evlog_pace_wait), then run
 * under write_mu, so ids are issued in seq order, the newest id in meta
 * never goes backwards, and a post is deleted (and its delete event
 * logged) at most once.
 */
#include <stdlib.h>
#include <time.h>

#include "content_int.h"
#include "rt_log.h"
#include "content_schema.h"
#include "content_text.h"
#include "wb_services.h"
#include "wb_slot.h"
#include "wb_clock.h"

int
content_author(content *c, uint64_t id, uint64_t *author)
{
	uint8_t  row[8];
	hb_cell *cell = NULL;
	hb_u64_be(row, id);
	int rc = hb_get(c->t, CONTENT_FAM_PIDX, row, 8, NULL, 0, &cell);
	if (rc == WB_ENOTFOUND) {
		return WB_ENOPOST;
	}
	if (rc != WB_OK) {
		return rc;
	}
	if (cell->value_len != 8) {
		rc = WB_ECORRUPT;
	} else {
		*author = hb_be_u64(cell->value);
	}
	hb_cell_free(cell);
	return rc;
}

/* content_event_new makes an event object {type, uid, id, time}, with the request's id (logs). */
static wb_obj *
content_event_new(wb_event type, uint64_t uid, uint64_t id, uint64_t time)
{
	wb_obj *ev = wb_msg_new();
	if (ev == NULL) {
		return NULL;
	}
	if (wb_set_cstr(ev, WB_F_TYPE, wb_event_name(type)) != WB_OK ||
	    wb_set_u64(ev, WB_F_UID, uid) != WB_OK || wb_set_u64(ev, WB_F_ID, id) != WB_OK ||
	    wb_set_u64(ev, WB_F_TIME, time) != WB_OK ||
	    (wb_rid() != NULL && wb_set_cstr(ev, WB_F_RID, wb_rid()) != WB_OK)) {
		wb_msg_free(ev);
		return NULL;
	}
	return ev;
}

/* content_post_rows adds a post's cells to b: the post, its id index, its category index, the newest id. */
static int
content_post_rows(content *c, hb_batch *b, uint64_t uid, uint64_t id, const content_draft *d,
    const uint8_t *val, size_t len)
{
	uint8_t urow[8], irow[8], idv[8];
	int     rc;

	hb_u64_be(urow, uid);
	hb_u64_be(irow, id);
	hb_u64_be(idv, id);
	rc = hb_batch_put(b, c->t, CONTENT_FAM_POST, urow, 8, NULL, 0, id, val, len);
	if (rc == WB_OK) {
		rc = hb_batch_put(b, c->t, CONTENT_FAM_PIDX, irow, 8, NULL, 0, 0, urow, 8);
	}
	if (rc == WB_OK && d->category != NULL) {
		rc = hb_batch_put(
		    b, c->t, CONTENT_FAM_PCAT, urow, 8, d->category, d->category_len, id, "", 0);
	}
	if (rc == WB_OK) {
		rc = hb_batch_put(b, c->t, CONTENT_FAM_META, CONTENT_META_LAST_ID,
		    sizeof(CONTENT_META_LAST_ID) - 1, NULL, 0, 0, idv, 8);
	}
	return rc;
}

int
content_publish(void *arg, const wb_obj *req, wb_obj *rep)
{
	content      *c = arg;
	uint64_t      uid = wb_u64(req, WB_F_UID, 0), id = 0, time = 0;
	content_draft d;
	hb_batch     *b = NULL;
	wb_obj       *ev = NULL, *scratch = NULL, *images = NULL;
	uint8_t      *val = NULL;
	size_t        len = 0;
	bool          refused = false;
	int           rc;

	if ((rc = content_draft_check(req, uid, &d, rep)) != WB_OK) {
		return rc;
	}
	evlog_pace_wait(c->log);
	if ((rc = hb_batch_new(&b)) != WB_OK || (scratch = wb_msg_new()) == NULL ||
	    (d.nimages > 0 && (images = wb_add_objs(scratch, WB_F_IMAGES, d.nimages)) == NULL)) {
		hb_batch_free(b);
		wb_msg_free(scratch);
		return WB_ENOMEM;
	}
	pthread_mutex_lock(&c->write_mu);
	if (content_gone(c, uid)) {
		wb_reply_error(rep, WB_ENOUSER, NULL); /* deleted: content_erase.c */
		rc = WB_ENOUSER;
		refused = true;
	} else if ((rc = content_media_attach(c, uid, &d, images, b, rep)) != WB_OK) {
		refused = wb_has(rep, WB_F_ERR); /* the request's fault, answered */
	}
	if (rc == WB_OK) {
		rc = content_post_encode(&d, images, &val, &len);
	}
	if (rc == WB_OK) {
		id = wb_id_next(c->ids, wb_slot_group(wb_slot(uid)), wb_now_ms());
		time = wb_id_ms(id);
		rc = content_post_rows(c, b, uid, id, &d, val, len);
	}
	if (rc == WB_OK && (ev = content_event_new(WB_EV_POST, uid, id, time)) == NULL) {
		rc = WB_ENOMEM;
	}
	if (rc == WB_OK) {
		rc = evlog_commit(c->log, b, ev, NULL);
	}
	pthread_mutex_unlock(&c->write_mu);
	wb_msg_free(ev);
	wb_msg_free(scratch);
	hb_batch_free(b);
	free(val);
	if (rc != WB_OK) {
		if (!refused) {
			RT_ERRORF("post.publish uid %llu: %s %s", (unsigned long long)uid,
			    wb_strerror(rc), hb_last_error());
		}
		return rc;
	}
	wb_reply_ok(rep);
	wb_set_u64(rep, WB_F_ID, id);
	wb_set_u64(rep, WB_F_TIME, time);
	return WB_OK;
}

/* content_delete_rich adds to b the deletes of a rich post's category index cell and images. */
static int
content_delete_rich(content *c, hb_batch *b, uint64_t author, uint64_t id, const wb_obj *rich)
{
	const char   *s;
	size_t        n, nimages = 0;
	const wb_obj *images;
	uint64_t      a, mid;
	uint8_t       urow[8];
	int           rc = WB_OK;

	hb_u64_be(urow, author);
	if (wb_get_str(rich, WB_F_CATEGORY, &s, &n)) {
		rc = hb_batch_delete_version(b, c->t, CONTENT_FAM_PCAT, urow, 8, s, n, id);
	}
	(void)wb_get_objs(rich, WB_F_IMAGES, &images, &nimages);
	for (size_t i = 0; rc == WB_OK && i < nimages; i++) {
		if (wb_get_str(&images[i], WB_F_MEDIA, &s, &n) &&
		    wb_media_id_parse(s, n, &a, &mid) && a == author) {
			rc = hb_batch_delete_version(
			    b, c->t, CONTENT_FAM_MEDIA, urow, 8, NULL, 0, mid);
			if (rc == WB_OK) {
				rc = hb_batch_delete_version(
				    b, c->t, CONTENT_FAM_MEDIA_PREVIEW, urow, 8, NULL, 0, mid);
			}
		}
	}
	return rc;
}

int
content_delete(void *arg, const wb_obj *req, wb_obj *rep)
{
	content  *c = arg;
	uint64_t  uid = wb_u64(req, WB_F_UID, 0);
	uint64_t  id = wb_u64(req, WB_F_ID, 0);
	uint64_t  author = 0;
	hb_batch *b = NULL;
	wb_obj   *ev = NULL, *rich = NULL;
	uint8_t   urow[8], irow[8], *val = NULL;
	size_t    len = 0;
	int       rc = hb_batch_new(&b);
	if (rc != WB_OK) {
		return rc;
	}
	evlog_pace_wait(c->log);
	pthread_mutex_lock(&c->write_mu);
	rc = content_author(c, id, &author);
	if (rc == WB_OK && author != uid) {
		rc = WB_EPERM;
	}
	if (rc == WB_OK &&
	    (rc = content_cell_copy(c, CONTENT_FAM_POST, author, id, &val, &len)) == WB_OK) {
		rc = content_post_decode(val, len, &rich);
	}
	if (rc == WB_ENOTFOUND) {
		rc = WB_ENOPOST; /* indexed, yet gone: as if never there */
	}
	if (rc == WB_OK && rich != NULL) {
		rc = content_delete_rich(c, b, author, id, rich);
	}
	if (rc == WB_OK) {
		hb_u64_be(urow, author);
		hb_u64_be(irow, id);
		rc = hb_batch_delete_version(b, c->t, CONTENT_FAM_POST, urow, 8, NULL, 0, id);
	}
	if (rc == WB_OK) {
		rc = hb_batch_delete_column(b, c->t, CONTENT_FAM_PIDX, irow, 8, NULL, 0, HB_LATEST);
	}
	if (rc == WB_OK && (ev = content_event_new(WB_EV_DELETE, uid, id, wb_now_ms())) == NULL) {
		rc = WB_ENOMEM;
	}
	if (rc == WB_OK) {
		rc = evlog_commit(c->log, b, ev, NULL);
	}
	pthread_mutex_unlock(&c->write_mu);
	wb_msg_free(ev);
	wb_msg_free(rich);
	free(val);
	hb_batch_free(b);
	if (rc == WB_EPERM) {
		wb_reply_error(rep, rc, "only the author may delete a post");
		return rc;
	}
	if (rc == WB_ENOPOST) {
		wb_reply_error(rep, rc, "no post %llu", (unsigned long long)id);
		return rc;
	}
	if (rc != WB_OK) {
		return rc;
	}
	return wb_reply_ok(rep);
}
