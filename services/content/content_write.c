/*
 * content_write.c - post.publish and post.delete: the post, its index entry and
 * its event commit in one batch through the event log.
 *
 * Both run under write_mu, so ids are issued in seq order, the newest id
 * in meta never goes backwards, and a post is deleted (and its delete
 * event logged) at most once.
 */
#include <stdlib.h>

#include "content_int.h"
#include "rt_log.h"
#include "content_schema.h"
#include "content_text.h"
#include "wb_services.h"
#include "wb_clock.h"

int
content_open(content **out, hb_table *t, evlog *log, unsigned node)
{
	*out = NULL;
	content *c = calloc(1, sizeof(*c));
	if (c == NULL) {
		return WB_ENOMEM;
	}
	c->t = t;
	c->log = log;
	c->ids = wb_idgen_new(node);
	if (c->ids == NULL) {
		free(c);
		return WB_EINVAL;
	}
	hb_cell *cell = NULL;
	int rc = hb_get(t, CONTENT_FAM_META, CONTENT_META_LAST_ID, sizeof(CONTENT_META_LAST_ID) - 1,
	    NULL, 0, &cell);
	if (rc == WB_OK) {
		if (cell->value_len == 8) {
			wb_idgen_floor(c->ids, hb_be_u64(cell->value));
		}
		hb_cell_free(cell);
	} else if (rc != WB_ENOTFOUND) {
		wb_idgen_free(c->ids);
		free(c);
		return rc;
	}
	pthread_mutex_init(&c->write_mu, NULL);
	*out = c;
	return WB_OK;
}

void
content_close(content *c)
{
	if (c == NULL) {
		return;
	}
	pthread_mutex_destroy(&c->write_mu);
	wb_idgen_free(c->ids);
	free(c);
}

/* content_gauge_last_seq is the sequence number of the newest content event (the inbox's lag is this less its content_applied). */
static uint64_t
content_gauge_last_seq(void *arg)
{
	content *c = arg;
	return evlog_last(c->log);
}

int
content_register(content *c, rt_server *s)
{
	int rc = rt_server_handle(s, WB_OP_POST_PUBLISH, content_publish, c);
	if (rc == WB_OK) {
		rc = rt_server_gauge(s, "log_last_seq", content_gauge_last_seq, c);
	}
	if (rc == WB_OK) {
		rc = rt_server_handle(s, WB_OP_POST_DELETE, content_delete, c);
	}
	if (rc == WB_OK) {
		rc = rt_server_handle(s, WB_OP_POST_GET, content_get, c);
	}
	if (rc == WB_OK) {
		rc = rt_server_handle(s, WB_OP_POST_TIMELINE, content_timeline, c);
	}
	if (rc == WB_OK) {
		rc = rt_server_handle(s, WB_OP_POST_LOG, content_log, c);
	}
	return rc;
}

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

int
content_publish(void *arg, const wb_obj *req, wb_obj *rep)
{
	content    *c = arg;
	uint64_t    uid = wb_u64(req, WB_F_UID, 0);
	const char *text = NULL;
	size_t      len = 0;
	(void)wb_get_str(req, WB_F_TEXT, &text, &len);
	int rc = text_check(text, len);
	if (rc == WB_ETOOLONG) {
		wb_reply_error(rep, rc, "post text longer than %d characters", TEXT_MAX_CODEPOINTS);
		return rc;
	}
	if (rc != WB_OK) {
		wb_reply_error(rep, rc, "post text must be 1 to %d characters of valid UTF-8",
		    TEXT_MAX_CODEPOINTS);
		return rc;
	}
	if (uid == 0) {
		wb_reply_error(rep, WB_EINVAL, "uid must be nonzero");
		return WB_EINVAL;
	}

	hb_batch *b = NULL;
	wb_obj   *ev = NULL;
	uint8_t   urow[8], irow[8], idv[8];
	uint64_t  id = 0, time = 0;
	if ((rc = hb_batch_new(&b)) != WB_OK) {
		return rc;
	}
	hb_u64_be(urow, uid);
	pthread_mutex_lock(&c->write_mu);
	id = wb_id_next(c->ids, wb_now_ms());
	time = wb_id_ms(id);
	hb_u64_be(irow, id);
	hb_u64_be(idv, id);
	rc = hb_batch_put(b, c->t, CONTENT_FAM_POST, urow, 8, NULL, 0, id, text, len);
	if (rc == WB_OK) {
		rc = hb_batch_put(b, c->t, CONTENT_FAM_PIDX, irow, 8, NULL, 0, 0, urow, 8);
	}
	if (rc == WB_OK) {
		rc = hb_batch_put(b, c->t, CONTENT_FAM_META, CONTENT_META_LAST_ID,
		    sizeof(CONTENT_META_LAST_ID) - 1, NULL, 0, 0, idv, 8);
	}
	if (rc == WB_OK && (ev = content_event_new(WB_EV_POST, uid, id, time)) == NULL) {
		rc = WB_ENOMEM;
	}
	if (rc == WB_OK) {
		rc = evlog_commit(c->log, b, ev, NULL);
	}
	pthread_mutex_unlock(&c->write_mu);
	wb_msg_free(ev);
	hb_batch_free(b);
	if (rc != WB_OK) {
		RT_ERRORF("post.publish uid %llu: %s %s", (unsigned long long)uid, wb_strerror(rc),
		    hb_last_error());
		return rc;
	}
	wb_reply_ok(rep);
	wb_set_u64(rep, WB_F_ID, id);
	wb_set_u64(rep, WB_F_TIME, time);
	return WB_OK;
}

int
content_delete(void *arg, const wb_obj *req, wb_obj *rep)
{
	content  *c = arg;
	uint64_t  uid = wb_u64(req, WB_F_UID, 0);
	uint64_t  id = wb_u64(req, WB_F_ID, 0);
	uint64_t  author = 0;
	hb_batch *b = NULL;
	wb_obj   *ev = NULL;
	uint8_t   urow[8], irow[8];
	int       rc = hb_batch_new(&b);
	if (rc != WB_OK) {
		return rc;
	}
	pthread_mutex_lock(&c->write_mu);
	rc = content_author(c, id, &author);
	if (rc == WB_OK && author != uid) {
		rc = WB_EPERM;
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
