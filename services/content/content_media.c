/*
 * content_media.c - images: media.put (an upload), media.get, and moving
 * uploads into a post's batch (layout in content_schema.h).
 *
 *   media.put   bytes -> type and size from the header (never the
 *               client's claim) -> limits -> JPEG metadata stripped ->
 *               upload family (TTL), under a new id
 *   publish     upload cell -> media family, in the post's own batch
 *   media.get   media family (anyone), else upload family (its uploader)
 */
#include <stdlib.h>
#include <string.h>

#include "content_image.h"
#include "content_int.h"
#include "content_schema.h"
#include "rt_log.h"
#include "wb_clock.h"
#include "wb_slot.h"

#define MEDIA_HEAD 9 /* type (1), width (4 BE), height (4 BE) */

/* A stored image: its header and bytes, pointing into a cell. */
typedef struct content_image {
	content_image_info info;
	const uint8_t     *data;
	size_t             len;
} content_image;

/* content_media_head writes an image's header into h. */
static void
content_media_head(uint8_t h[MEDIA_HEAD], const content_image_info *info)
{
	h[0] = (uint8_t)info->type;
	for (int i = 0; i < 4; i++) {
		h[1 + i] = (uint8_t)(info->width >> (24 - 8 * i));
		h[5 + i] = (uint8_t)(info->height >> (24 - 8 * i));
	}
}

/* content_be32 reads 4 big-endian bytes. */
static uint32_t
content_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* content_media_parse reads a stored value into im; WB_ECORRUPT if it is not one. */
static int
content_media_parse(const void *val, size_t len, content_image *im)
{
	const uint8_t *p = val;

	if (len < MEDIA_HEAD || content_image_mime((content_image_type)p[0]) == NULL) {
		return WB_ECORRUPT;
	}
	im->info.type = (content_image_type)p[0];
	im->info.width = content_be32(p + 1);
	im->info.height = content_be32(p + 5);
	im->data = p + MEDIA_HEAD;
	im->len = len - MEDIA_HEAD;
	return WB_OK;
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

/* content_media_record fills o with an image record {media, type, width, height, size}. */
static int
content_media_record(wb_obj *o, uint64_t author, uint64_t id, const content_image *im)
{
	char mid[WB_MEDIA_ID_MAX];
	int  rc = wb_set_cstr(o, WB_F_MEDIA, wb_media_id_format(mid, author, id));

	if (rc == WB_OK) {
		rc = wb_set_cstr(o, WB_F_TYPE, content_image_mime(im->info.type));
	}
	if (rc == WB_OK) {
		rc = wb_set_u64(o, WB_F_WIDTH, im->info.width);
	}
	if (rc == WB_OK) {
		rc = wb_set_u64(o, WB_F_HEIGHT, im->info.height);
	}
	return rc;
}

int
content_media_put(void *arg, const wb_obj *req, wb_obj *rep)
{
	content           *c = arg;
	uint64_t           uid = wb_u64(req, WB_F_UID, 0), retry_ms = 0, id;
	const void        *data = NULL;
	size_t             len = 0, kept;
	content_image_info info;
	uint8_t           *val = NULL, urow[8], idv[8];
	hb_batch          *b = NULL;
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
	if (content_image_probe(data, len, &info) != WB_OK) {
		wb_reply_error(rep, WB_EMEDIATYPE,
		    "not a PNG, JPEG, GIF or WebP image, or its header is damaged (the type is "
		    "read from the bytes, whatever the file is called)");
		return WB_EMEDIATYPE;
	}
	if ((uint64_t)info.width * info.height > c->media_pixels) {
		wb_reply_error(rep, WB_ETOOBIG,
		    "an image of %ux%u pixels exceeds the limit of %llu pixels", info.width,
		    info.height, (unsigned long long)c->media_pixels);
		return WB_ETOOBIG;
	}
	if ((val = malloc(MEDIA_HEAD + len)) == NULL || (rc = hb_batch_new(&b)) != WB_OK) {
		free(val);
		return WB_ENOMEM;
	}
	content_media_head(val, &info);
	memcpy(val + MEDIA_HEAD, data, len);
	if ((rc = content_image_strip(val + MEDIA_HEAD, len, &kept)) != WB_OK) {
		kept = len; /* the probe read the header: keep the bytes as they came */
	}
	hb_u64_be(urow, uid);
	pthread_mutex_lock(&c->write_mu);
	id = wb_id_next(c->ids, wb_slot_group(wb_slot(uid)), wb_now_ms());
	hb_u64_be(idv, id);
	rc =
	    hb_batch_put(b, c->t, CONTENT_FAM_UPLOAD, urow, 8, NULL, 0, id, val, MEDIA_HEAD + kept);
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
	if (rc != WB_OK) {
		RT_ERRORF("media.put uid %llu: %s %s", (unsigned long long)uid, wb_strerror(rc),
		    hb_last_error());
		return rc;
	}
	content_image im = { .info = info, .len = kept };
	if ((rc = wb_reply_ok(rep)) == WB_OK &&
	    (rc = content_media_record(rep, uid, id, &im)) == WB_OK) {
		rc = wb_set_u64(rep, WB_F_SIZE, kept);
	}
	return rc;
}

/* A media.get reply being filled from the image's cell. */
typedef struct content_media_out {
	wb_obj *rep;
	bool public;
} content_media_out;

/* content_media_reply is content_media_find's fill for media.get: the image's record and bytes, copied once from the cell into the reply. */
static int
content_media_reply(void *arg, uint64_t id, uint64_t author, const void *val, size_t len)
{
	content_media_out *o = arg;
	content_image      im;
	int                rc = content_media_parse(val, len, &im);

	if (rc == WB_OK && (rc = wb_reply_ok(o->rep)) == WB_OK &&
	    (rc = content_media_record(o->rep, author, id, &im)) == WB_OK &&
	    (rc = wb_set_u64(o->rep, WB_F_SIZE, im.len)) == WB_OK &&
	    (rc = wb_set_bool(o->rep, WB_F_PUBLIC, o->public)) == WB_OK) {
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
	content_media_out out = { rep, true };
	int               rc;

	(void)wb_get_str(req, WB_F_MEDIA, &s, &n);
	if (!wb_media_id_parse(s, n, &author, &id)) {
		wb_reply_error(rep, WB_EINVAL, "a media id is <author>-<id>, both decimal");
		return WB_EINVAL;
	}
	rc = content_media_find(c, CONTENT_FAM_MEDIA, author, id, content_media_reply, &out);
	if (rc == WB_ENOMEDIA && reader == author) {
		out.public = false;
		rc = content_media_find(
		    c, CONTENT_FAM_UPLOAD, author, id, content_media_reply, &out);
	}
	if (rc == WB_ENOMEDIA) {
		wb_reply_error(rep, rc,
		    "no media %.*s (an upload is visible to its uploader only "
		    "until a post attaches it)",
		    (int)(n < 48 ? n : 48), s);
	}
	return rc;
}

/* An upload being moved into a post: where its record and its cells go. */
typedef struct content_media_move {
	content      *c;
	hb_batch     *b;
	wb_obj       *image; /* the post's record of it */
	const wb_obj *given; /* the request's {media, alt?} */
} content_media_move;

/* content_media_moved is content_media_find's fill for an upload: its record into the post, its cell into media (copied by the batch), out of upload. */
static int
content_media_moved(void *arg, uint64_t id, uint64_t author, const void *val, size_t len)
{
	content_media_move *m = arg;
	content_image       im;
	const char         *alt;
	size_t              altn;
	uint8_t             urow[8];
	int                 rc = content_media_parse(val, len, &im);

	hb_u64_be(urow, author);
	if (rc == WB_OK) {
		rc = content_media_record(m->image, author, id, &im);
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

		rc = content_media_find(
		    c, CONTENT_FAM_UPLOAD, uid, d->media[i], content_media_moved, &m);
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
