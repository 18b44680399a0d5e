/*
 * content_media.c - images: media.put (an upload), media.get, and moving
 * uploads into a post's batch (layout in content_schema.h).
 *
 *   media.put   bytes -> limits -> one of the decoders (content_decode.c):
 *               decoded whole, written again with no metadata, and a
 *               preview (content_image.h) -> upload and upload_preview
 *               families (TTL) in one batch, under a new id
 *   publish     upload and upload_preview cells -> media and
 *               media_preview, in the post's own batch; the post's image
 *               record carries both sizes
 *   media.get   media family (anyone), else upload family (its uploader);
 *               with preview, the preview families
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "content_int.h"
#include "content_schema.h"
#include "rt_log.h"
#include "wb_clock.h"
#include "wb_slot.h"

/* content_be32 reads 4 big-endian bytes. */
static uint32_t
content_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

uint8_t *
content_media_value(const content_image_file *f, size_t *len)
{
	uint8_t *v = malloc(CONTENT_MEDIA_HEAD + f->len);

	if (v == NULL) {
		return NULL;
	}
	v[0] = (uint8_t)f->type;
	for (int i = 0; i < 4; i++) {
		v[1 + i] = (uint8_t)(f->width >> (24 - 8 * i));
		v[5 + i] = (uint8_t)(f->height >> (24 - 8 * i));
	}
	memcpy(v + CONTENT_MEDIA_HEAD, f->data, f->len);
	*len = CONTENT_MEDIA_HEAD + f->len;
	return v;
}

bool
content_media_header(const void *val, size_t len, content_image_file *f)
{
	const uint8_t *p = val;

	if (len < CONTENT_MEDIA_HEAD || content_image_mime((content_image_type)p[0]) == NULL) {
		return false;
	}
	f->type = (content_image_type)p[0];
	f->width = content_be32(p + 1);
	f->height = content_be32(p + 5);
	f->frames = 1;
	f->data = (void *)(p + CONTENT_MEDIA_HEAD);
	f->len = len - CONTENT_MEDIA_HEAD;
	return true;
}

/* content_media_find hands image id of author in family fam to fill (content_cell); WB_ENOMEDIA if absent. */
static int
content_media_find(content *c, int fam, uint64_t author, uint64_t id,
    int (*fill)(void *arg, uint64_t id, uint64_t author, const void *val, size_t len), void *arg)
{
	int rc = content_cell(c, fam, author, id, fill, arg);
	return rc == WB_ENOTFOUND ? WB_ENOMEDIA : rc;
}

/* content_media_exists is content_media_find's fill that only says the image is there. */
static int
content_media_exists(void *arg, uint64_t id, uint64_t author, const void *val, size_t len)
{
	(void)arg;
	(void)id;
	(void)author;
	(void)val;
	(void)len;
	return WB_OK;
}

/* content_media_record fills o with an image record {media, type, width, height, preview's?}. */
static int
content_media_record(wb_obj *o, uint64_t author, uint64_t id, const content_image_file *im,
    const content_image_file *pv)
{
	char mid[WB_MEDIA_ID_MAX];
	int  rc = wb_set_cstr(o, WB_F_MEDIA, wb_media_id_format(mid, author, id));

	if (rc == WB_OK) {
		rc = wb_set_cstr(o, WB_F_TYPE, content_image_mime(im->type));
	}
	if (rc == WB_OK) {
		rc = wb_set_u64(o, WB_F_WIDTH, im->width);
	}
	if (rc == WB_OK) {
		rc = wb_set_u64(o, WB_F_HEIGHT, im->height);
	}
	if (rc == WB_OK && pv != NULL) {
		rc = wb_set_u64(o, WB_F_PREVIEW_WIDTH, pv->width);
	}
	if (rc == WB_OK && pv != NULL) {
		rc = wb_set_u64(o, WB_F_PREVIEW_HEIGHT, pv->height);
	}
	return rc;
}

/* content_media_store writes an upload's image, preview and the newest id under a new id, *id. */
static int
content_media_store(content *c, uint64_t uid, const content_image_file *orig,
    const content_image_file *preview, uint64_t *id)
{
	uint8_t  *val = NULL, *pval = NULL, urow[8], idv[8];
	size_t    len = 0, plen = 0;
	hb_batch *b = NULL;
	int       rc;

	if ((val = content_media_value(orig, &len)) == NULL ||
	    (pval = content_media_value(preview, &plen)) == NULL ||
	    (rc = hb_batch_new(&b)) != WB_OK) {
		free(val);
		free(pval);
		return WB_ENOMEM;
	}
	hb_u64_be(urow, uid);
	pthread_mutex_lock(&c->write_mu);
	*id = wb_id_next(c->ids, wb_slot_group(wb_slot(uid)), wb_now_ms());
	hb_u64_be(idv, *id);
	/* a deleted account's upload would outlive its erasure (content_erase.c) */
	rc = content_gone(c, uid) ? WB_ENOUSER : WB_OK;
	if (rc == WB_OK) {
		rc = hb_batch_put(b, c->t, CONTENT_FAM_UPLOAD, urow, 8, NULL, 0, *id, val, len);
	}
	if (rc == WB_OK) {
		rc = hb_batch_put(
		    b, c->t, CONTENT_FAM_UPLOAD_PREVIEW, urow, 8, NULL, 0, *id, pval, plen);
	}
	if (rc == WB_OK) {
		rc = hb_batch_put(b, c->t, CONTENT_FAM_META, CONTENT_META_LAST_ID,
		    sizeof(CONTENT_META_LAST_ID) - 1, NULL, 0, 0, idv, 8);
	}
	if (rc == WB_OK) {
		rc = hb_write(c->t, b);
	}
	pthread_mutex_unlock(&c->write_mu);
	hb_batch_free(b);
	free(val);
	free(pval);
	return rc;
}

int
content_media_put(void *arg, const wb_obj *req, wb_obj *rep)
{
	content           *c = arg;
	uint64_t           uid = wb_u64(req, WB_F_UID, 0), retry_ms = 0, id = 0;
	const void        *data = NULL;
	size_t             len = 0;
	content_image_file orig, preview;
	char               why[256];
	int                rc;

	(void)wb_get_bin(req, WB_F_DATA, &data, &len);
	if (uid == 0) {
		wb_reply_error(rep, WB_EINVAL, "uid must be nonzero");
		return WB_EINVAL;
	}
	if (len > c->media_max) {
		wb_reply_error(rep, WB_ETOOBIG,
		    "an image of %zu bytes exceeds the limit of %zu bytes", len, c->media_max);
		return WB_ETOOBIG;
	}
	/* every upload counts; the one past the limit waits with the rest */
	if (rt_rate_check(c->uploads, &uid, sizeof(uid), wb_now_ms(), &retry_ms) != WB_OK ||
	    (retry_ms = rt_rate_fail(c->uploads, &uid, sizeof(uid), wb_now_ms())) > 0) {
		wb_reply_error(rep, WB_ERATE, "too many uploads: try again in %llu s",
		    (unsigned long long)(retry_ms + 999) / 1000);
		wb_set_u64(rep, WB_F_RETRY, retry_ms);
		return WB_ERATE;
	}
	rc = content_decode(
	    c, data, len, false, CONTENT_DECODE_WAIT_MS, &orig, &preview, why, sizeof(why));
	if (rc != WB_OK) {
		wb_reply_error(rep, rc, "%s", why);
		return rc;
	}
	if ((rc = content_media_store(c, uid, &orig, &preview, &id)) == WB_ENOUSER) {
		wb_reply_error(rep, rc, NULL);
	} else if (rc != WB_OK) {
		RT_ERRORF("media.put uid %llu: %s %s", (unsigned long long)uid, wb_strerror(rc),
		    hb_last_error());
	}
	if (rc == WB_OK && (rc = wb_reply_ok(rep)) == WB_OK &&
	    (rc = content_media_record(rep, uid, id, &orig, &preview)) == WB_OK &&
	    (rc = wb_set_u64(rep, WB_F_SIZE, orig.len)) == WB_OK) {
		rc = wb_set_u64(rep, WB_F_PREVIEW_SIZE, preview.len);
	}
	content_image_file_free(&orig);
	content_image_file_free(&preview);
	return rc;
}

/* A media.get reply being filled from the image's cell. */
typedef struct content_media_out {
	wb_obj *rep;
	bool public;
	bool preview;
} content_media_out;

/* content_media_reply is content_media_find's fill for media.get: the image's record and bytes, copied once from the cell into the reply. */
static int
content_media_reply(void *arg, uint64_t id, uint64_t author, const void *val, size_t len)
{
	content_media_out *o = arg;
	content_image_file im;
	int                rc = content_media_header(val, len, &im) ? WB_OK : WB_ECORRUPT;

	if (rc == WB_OK && (rc = wb_reply_ok(o->rep)) == WB_OK &&
	    (rc = content_media_record(o->rep, author, id, &im, NULL)) == WB_OK &&
	    (rc = wb_set_u64(o->rep, WB_F_SIZE, im.len)) == WB_OK &&
	    (rc = wb_set_bool(o->rep, WB_F_PUBLIC, o->public)) == WB_OK &&
	    (!o->preview || (rc = wb_set_bool(o->rep, WB_F_PREVIEW, true)) == WB_OK)) {
		rc = wb_set_bin(o->rep, WB_F_DATA, im.data, im.len);
	}
	return rc;
}

int
content_media_get(void *arg, const wb_obj *req, wb_obj *rep)
{
	content          *c = arg;
	const char       *s = "";
	size_t            n = 0;
	uint64_t          author, id, reader = wb_u64(req, WB_F_UID, 0);
	bool              preview = false;
	content_media_out out = { rep, true, false };
	int               rc;

	(void)wb_get_str(req, WB_F_MEDIA, &s, &n);
	(void)wb_get_bool(req, WB_F_PREVIEW, &preview);
	if (!wb_media_id_parse(s, n, &author, &id)) {
		wb_reply_error(rep, WB_EINVAL, "a media id is <author>-<id>, both decimal");
		return WB_EINVAL;
	}
	out.preview = preview;
	rc = content_media_find(c, preview ? CONTENT_FAM_MEDIA_PREVIEW : CONTENT_FAM_MEDIA, author,
	    id, content_media_reply, &out);
	if (rc == WB_ENOMEDIA && reader == author) {
		out.public = false;
		rc =
		    content_media_find(c, preview ? CONTENT_FAM_UPLOAD_PREVIEW : CONTENT_FAM_UPLOAD,
		        author, id, content_media_reply, &out);
	}
	if (rc == WB_ENOMEDIA) {
		wb_reply_error(rep, rc,
		    "no %s %.*s (an upload is visible to its uploader only "
		    "until a post attaches it)",
		    preview ? "preview of media" : "media", (int)(n < 48 ? n : 48), s);
	}
	return rc;
}

/* An upload being moved into a post: where its record and its cells go. */
typedef struct content_media_move {
	content           *c;
	hb_batch          *b;
	wb_obj            *image; /* the post's record of it */
	const wb_obj      *given; /* the request's {media, alt?} */
	bool               has_preview;
	content_image_file preview; /* its size, once read */
} content_media_move;

/* content_preview_moved is content_media_find's fill for an upload's preview: its cell into
 * media_preview, out of upload_preview. */
static int
content_preview_moved(void *arg, uint64_t id, uint64_t author, const void *val, size_t len)
{
	content_media_move *m = arg;
	uint8_t             urow[8];
	int                 rc = content_media_header(val, len, &m->preview) ? WB_OK : WB_ECORRUPT;

	hb_u64_be(urow, author);
	if (rc == WB_OK) {
		rc = hb_batch_put(
		    m->b, m->c->t, CONTENT_FAM_MEDIA_PREVIEW, urow, 8, NULL, 0, id, val, len);
	}
	if (rc == WB_OK) {
		rc = hb_batch_delete_version(
		    m->b, m->c->t, CONTENT_FAM_UPLOAD_PREVIEW, urow, 8, NULL, 0, id);
	}
	m->has_preview = rc == WB_OK;
	return rc;
}

/* content_media_moved is content_media_find's fill for an upload: its record into the post, its cell into media (copied by the batch), out of upload. */
static int
content_media_moved(void *arg, uint64_t id, uint64_t author, const void *val, size_t len)
{
	content_media_move *m = arg;
	content_image_file  im;
	const char         *alt;
	size_t              altn;
	uint8_t             urow[8];
	int                 rc = content_media_header(val, len, &im) ? WB_OK : WB_ECORRUPT;

	hb_u64_be(urow, author);
	if (rc == WB_OK) {
		rc = content_media_record(
		    m->image, author, id, &im, m->has_preview ? &m->preview : NULL);
	}
	if (rc == WB_OK && wb_get_str(m->given, WB_F_ALT, &alt, &altn) && altn > 0) {
		rc = wb_set_str(m->image, WB_F_ALT, alt, altn);
	}
	if (rc == WB_OK) {
		rc = hb_batch_put(m->b, m->c->t, CONTENT_FAM_MEDIA, urow, 8, NULL, 0, id, val, len);
	}
	if (rc == WB_OK) {
		rc = hb_batch_delete_version(
		    m->b, m->c->t, CONTENT_FAM_UPLOAD, urow, 8, NULL, 0, id);
	}
	return rc;
}

int
content_media_attach(
    content *c, uint64_t uid, const content_draft *d, wb_obj *images, hb_batch *b, wb_obj *rep)
{
	char mid[WB_MEDIA_ID_MAX];
	int  rc = WB_OK;

	for (size_t i = 0; rc == WB_OK && i < d->nimages; i++) {
		content_media_move m = { c, b, &images[i], &d->images[i] };

		/* the preview first, for its size in the record; an upload stored
		 * before previews has none until the re-encode pass gives it one */
		rc = content_media_find(
		    c, CONTENT_FAM_UPLOAD_PREVIEW, uid, d->media[i], content_preview_moved, &m);
		if (rc == WB_OK || rc == WB_ENOMEDIA) {
			rc = content_media_find(
			    c, CONTENT_FAM_UPLOAD, uid, d->media[i], content_media_moved, &m);
		}
		if (rc != WB_ENOMEDIA) {
			continue;
		}
		wb_media_id_format(mid, uid, d->media[i]);
		if (content_media_find(c, CONTENT_FAM_MEDIA, uid, d->media[i], content_media_exists,
		        NULL) == WB_OK) {
			wb_reply_error(rep, WB_EINVAL, "image %s is already in a post", mid);
			return WB_EINVAL;
		}
		wb_reply_error(rep, rc,
		    "no upload %s (an upload not attached to a post within %llu h expires)", mid,
		    (unsigned long long)(CONTENT_UPLOAD_TTL_MS / 3600000));
	}
	return rc;
}
