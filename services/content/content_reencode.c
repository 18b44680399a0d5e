/*
 * content_reencode.c - the re-encode pass: every image stored before
 * uploads were decoded (kept as uploaded, metadata and all, without a
 * preview) written again through libvips (content_image.h), with its
 * preview.
 *
 * It runs on its own thread, started when the service registers its
 * routes on a store without the "reencoded" mark in meta (the first start
 * after an upgrade; a new store finds nothing and gets the mark at once),
 * and by media.reencode (warblectl admin reencode-media).  The service
 * serves throughout.
 *
 *   1. upload family: each upload without a preview cell is decoded and
 *      written again with its preview in one batch (under write_mu, if
 *      the upload is still there: not attached or expired meanwhile).
 *   2. post family: each post with an image record lacking a preview
 *      size.  Each of its images (media cell) is decoded and written
 *      again with a preview (or, if it has a preview already, only its
 *      size is read); then under write_mu, if the post's value is still
 *      the one read (not deleted meanwhile), one batch writes the images,
 *      the previews and the post with its new records: type, width,
 *      height (a turned JPEG swaps them) and the preview's size.
 *   3. step 2 again until a round finds nothing left (at most
 *      CONTENT_RC_ROUNDS): a post published during step 1 with an upload
 *      the pass had not reached yet is caught by the next round.
 *   4. the mark in meta.
 *
 * Decoding is lenient here (content_image_opts.lenient): the image was
 * accepted once, so a decoder warning or bytes after its end do not lose
 * it; what follows its end is dropped all the same.  An image libvips
 * cannot decode at all (the header check of old took anything with a
 * right header) is deleted, with its record: it could not be shown, and
 * must not be served with what it carries.  Each is logged and counted
 * (errors).
 *
 * A crash mid-pass loses nothing: each image is written in one batch
 * with its preview (and its post); the next start finds no mark and goes
 * on, skipping every image that has a preview.  Decodes take one of the
 * service's decoders (content_decode.c), waiting as long as it takes, so
 * uploads and the pass together stay within media-decodes.  Memory
 * beyond the decode: one page of cells (CONTENT_RC_PAGE values: uploads
 * of up to 3 MiB each) and one post's images.
 *
 * The gateway's post cache may serve a post's old record (sizes before
 * the turn, no preview) until its entry expires.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "content_int.h"
#include "content_schema.h"
#include "rt_log.h"
#include "wb_clock.h"

#define CONTENT_RC_PAGE   8 /* cells read per scan page */
#define CONTENT_RC_ROUNDS 3 /* rounds of step 2 at most */

static const char *const content_rc_states[] = { "idle", "running", "done", "failed" };

/* A cell copied out of a scan page. */
typedef struct content_rc_cell {
	uint64_t author, id;
	uint8_t *val;
	size_t   len;
} content_rc_cell;

static bool
content_rc_stopping(content *c)
{
	pthread_mutex_lock(&c->rc_mu);
	bool stop = c->rc_stop;
	pthread_mutex_unlock(&c->rc_mu);
	return stop;
}

/* content_rc_count adds to the pass's figures. */
static void
content_rc_count(content *c, uint64_t done, uint64_t failed, uint64_t posts)
{
	pthread_mutex_lock(&c->rc_mu);
	c->rc_done += done;
	c->rc_failed += failed;
	c->rc_posts += posts;
	pthread_mutex_unlock(&c->rc_mu);
}

/* content_rc_page reads up to CONTENT_RC_PAGE cells of fam from *resume (NULL: the start) into out;
 * *resume then names the next page (NULL: none). */
static int
content_rc_page(
    content *c, int fam, uint8_t **resume, size_t *resume_len, content_rc_cell *out, size_t *n)
{
	hb_scan     *s = NULL;
	hb_scan_opts o = { .limit = CONTENT_RC_PAGE, .resume = *resume, .resume_len = *resume_len };
	hb_cell      cell;
	const void  *key = NULL;
	size_t       klen = 0;
	int          rc = hb_scan_open(&s, c->t, fam, &o);

	*n = 0;
	while (rc == WB_OK && (rc = hb_scan_next(s, &cell)) == WB_OK) {
		content_rc_cell *k = &out[(*n)++];
		k->author = cell.row_len == 8 ? hb_be_u64(cell.row) : 0;
		k->id = cell.version;
		k->len = cell.value_len;
		if ((k->val = malloc(cell.value_len + 1)) == NULL) {
			rc = WB_ENOMEM;
			break;
		}
		memcpy(k->val, cell.value, cell.value_len);
	}
	if (rc == WB_EEND) {
		rc = hb_scan_resume(s, &key, &klen);
	}
	free(*resume);
	*resume = NULL;
	*resume_len = 0;
	if (rc == WB_OK && klen > 0) {
		if ((*resume = malloc(klen)) == NULL) {
			rc = WB_ENOMEM;
		} else {
			memcpy(*resume, key, klen);
			*resume_len = klen;
		}
	}
	hb_scan_close(s);
	return rc;
}

static void
content_rc_page_free(content_rc_cell *cells, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(cells[i].val);
		cells[i].val = NULL;
	}
}

/* content_rc_header is content_cell's fill that reads a media cell's header into a
 * content_image_file. */
static int
content_rc_header(void *arg, uint64_t id, uint64_t author, const void *val, size_t len)
{
	content_image_file *f = arg;

	(void)id;
	(void)author;
	if (!content_media_header(val, len, f)) {
		return WB_ECORRUPT;
	}
	f->data = NULL; /* the cell's bytes go with the scan */
	return WB_OK;
}

/* content_rc_encode decodes a stored cell's image leniently into new cell values; WB_EMEDIATYPE or
 * WB_ETOOBIG if it is no image libvips decodes. */
static int
content_rc_encode(content *c, const content_rc_cell *k, uint8_t **val, size_t *len, uint8_t **pval,
    size_t *plen, content_image_file *orig, content_image_file *preview)
{
	content_image_file old;
	char               why[256], mid[WB_MEDIA_ID_MAX];
	int                rc;

	*val = *pval = NULL;
	if (!content_media_header(k->val, k->len, &old)) {
		rc = WB_EMEDIATYPE;
		snprintf(why, sizeof(why), "%s", "its cell's header is damaged");
	} else {
		rc =
		    content_decode(c, old.data, old.len, true, -1, orig, preview, why, sizeof(why));
	}
	if (rc == WB_EMEDIATYPE || rc == WB_ETOOBIG) {
		RT_WARNF("media %s: no image libvips decodes (%s): deleted",
		    wb_media_id_format(mid, k->author, k->id), why);
		return rc;
	}
	if (rc != WB_OK) {
		return rc;
	}
	if ((*val = content_media_value(orig, len)) == NULL ||
	    (*pval = content_media_value(preview, plen)) == NULL) {
		free(*val);
		*val = NULL;
		return WB_ENOMEM;
	}
	return WB_OK;
}

/* content_rc_exists finds version id of author in fam: WB_OK, WB_ENOTFOUND or an error. */
static int
content_rc_exists(content *c, int fam, uint64_t author, uint64_t id)
{
	uint8_t *v = NULL;
	size_t   n = 0;
	int      rc = content_cell_copy(c, fam, author, id, &v, &n);

	free(v);
	return rc;
}

/* content_rc_upload writes one upload again with its preview (step 1). */
static int
content_rc_upload(content *c, const content_rc_cell *k)
{
	content_image_file orig, preview;
	uint8_t           *val = NULL, *pval = NULL, urow[8];
	size_t             len = 0, plen = 0;
	hb_batch          *b = NULL;
	int                rc = content_rc_exists(c, CONTENT_FAM_UPLOAD_PREVIEW, k->author, k->id);

	if (rc != WB_ENOTFOUND) {
		return rc; /* WB_OK: it has its preview */
	}
	rc = content_rc_encode(c, k, &val, &len, &pval, &plen, &orig, &preview);
	content_image_file_free(&orig);
	content_image_file_free(&preview);
	if (rc != WB_OK && rc != WB_EMEDIATYPE && rc != WB_ETOOBIG) {
		return rc;
	}
	bool dropped = rc != WB_OK;
	hb_u64_be(urow, k->author);
	if ((rc = hb_batch_new(&b)) != WB_OK) {
		free(val);
		free(pval);
		return rc;
	}
	if (dropped) {
		rc = hb_batch_delete_version(b, c->t, CONTENT_FAM_UPLOAD, urow, 8, NULL, 0, k->id);
	} else if ((rc = hb_batch_put(
	                b, c->t, CONTENT_FAM_UPLOAD, urow, 8, NULL, 0, k->id, val, len)) == WB_OK) {
		rc = hb_batch_put(
		    b, c->t, CONTENT_FAM_UPLOAD_PREVIEW, urow, 8, NULL, 0, k->id, pval, plen);
	}
	pthread_mutex_lock(&c->write_mu);
	int there = content_rc_exists(c, CONTENT_FAM_UPLOAD, k->author, k->id);
	if (rc == WB_OK && there == WB_OK) {
		rc = hb_write(c->t, b);
	} else if (rc == WB_OK && there != WB_ENOTFOUND) {
		rc = there;
	}
	pthread_mutex_unlock(&c->write_mu);
	hb_batch_free(b);
	free(val);
	free(pval);
	if (rc == WB_OK) {
		content_rc_count(c, 1, dropped ? 1 : 0, 0);
	}
	return rc;
}

/* content_rc_image brings one image of a post up to date in b and its record; *drop: it goes. */
static int
content_rc_image(content *c, uint64_t author, wb_obj *im, hb_batch *b, bool *drop, bool *did)
{
	const char        *s;
	size_t             n;
	uint64_t           a, mid;
	content_image_file orig = { 0 }, preview = { 0 };
	content_rc_cell    k = { 0 };
	uint8_t           *pval = NULL, *val = NULL, urow[8];
	size_t             plen = 0, len = 0;
	int                rc;

	*drop = *did = false;
	if (wb_has(im, WB_F_PREVIEW_WIDTH) || !wb_get_str(im, WB_F_MEDIA, &s, &n) ||
	    !wb_media_id_parse(s, n, &a, &mid) || a != author) {
		return WB_OK; /* up to date, or not this author's (never attached) */
	}
	hb_u64_be(urow, author);
	*did = true;
	rc = content_cell(c, CONTENT_FAM_MEDIA_PREVIEW, author, mid, content_rc_header, &preview);
	if (rc == WB_OK) {
		rc = content_cell(c, CONTENT_FAM_MEDIA, author, mid, content_rc_header, &orig);
		if (rc == WB_ENOTFOUND) { /* a preview of nothing: it goes too */
			*drop = true;
			rc = hb_batch_delete_version(
			    b, c->t, CONTENT_FAM_MEDIA_PREVIEW, urow, 8, NULL, 0, mid);
		}
	} else if (rc == WB_ENOTFOUND) {
		k.author = author;
		k.id = mid;
		rc = content_cell_copy(c, CONTENT_FAM_MEDIA, author, mid, &k.val, &k.len);
		if (rc == WB_ENOTFOUND) {
			*drop = true; /* its image is gone: a record of nothing */
			return WB_OK;
		}
		if (rc == WB_OK) {
			rc = content_rc_encode(c, &k, &val, &len, &pval, &plen, &orig, &preview);
		}
		free(k.val);
		if (rc == WB_EMEDIATYPE || rc == WB_ETOOBIG) {
			*drop = true;
			content_image_file_free(&orig);
			content_image_file_free(&preview);
			return hb_batch_delete_version(
			    b, c->t, CONTENT_FAM_MEDIA, urow, 8, NULL, 0, mid);
		}
		if (rc == WB_OK && (rc = hb_batch_put(b, c->t, CONTENT_FAM_MEDIA, urow, 8, NULL, 0,
		                        mid, val, len)) == WB_OK) {
			rc = hb_batch_put(
			    b, c->t, CONTENT_FAM_MEDIA_PREVIEW, urow, 8, NULL, 0, mid, pval, plen);
		}
	}
	if (rc == WB_OK && !*drop) {
		if ((rc = wb_set_cstr(im, WB_F_TYPE, content_image_mime(orig.type))) == WB_OK &&
		    (rc = wb_set_u64(im, WB_F_WIDTH, orig.width)) == WB_OK &&
		    (rc = wb_set_u64(im, WB_F_HEIGHT, orig.height)) == WB_OK &&
		    (rc = wb_set_u64(im, WB_F_PREVIEW_WIDTH, preview.width)) == WB_OK) {
			rc = wb_set_u64(im, WB_F_PREVIEW_HEIGHT, preview.height);
		}
	}
	content_image_file_free(&orig);
	content_image_file_free(&preview);
	free(val);
	free(pval);
	return rc;
}

/* content_rc_post brings one post's images up to date (step 2); *left if the post changed meanwhile
 * and waits for the next round. */
static int
content_rc_post(content *c, const content_rc_cell *k, bool *left)
{
	wb_obj       *rich = NULL;
	const wb_obj *images;
	size_t        nimages = 0, kept = 0, done = 0, failed = 0;
	hb_batch     *b = NULL;
	uint8_t      *val = NULL, *now = NULL, urow[8];
	size_t        len = 0, nlen = 0;
	int           rc = content_post_decode(k->val, k->len, &rich);

	*left = false;
	if (rc != WB_OK || rich == NULL || !wb_get_objs(rich, WB_F_IMAGES, &images, &nimages)) {
		wb_msg_free(rich);
		return rc == WB_ECORRUPT ? WB_OK : rc; /* not this pass's to mend */
	}
	bool stale = false;
	for (size_t i = 0; i < nimages; i++) {
		stale |= !wb_has(&images[i], WB_F_PREVIEW_WIDTH);
	}
	if (!stale || (rc = hb_batch_new(&b)) != WB_OK) {
		wb_msg_free(rich);
		return rc;
	}
	wb_obj *ims = (wb_obj *)images; /* rich's own, to change in place */
	for (size_t i = 0; rc == WB_OK && i < nimages; i++) {
		bool drop, did;
		rc = content_rc_image(c, k->author, &ims[i], b, &drop, &did);
		done += did && !drop;
		failed += drop;
		if (rc == WB_OK && !drop) {
			ims[kept++] = ims[i];
		}
	}
	if (rc == WB_OK) {
		wb_shrink(rich, WB_F_IMAGES, kept);
		rc = content_post_encode_rich(rich, &val, &len);
	}
	hb_u64_be(urow, k->author);
	if (rc == WB_OK) {
		rc = hb_batch_put(b, c->t, CONTENT_FAM_POST, urow, 8, NULL, 0, k->id, val, len);
	}
	if (rc == WB_OK) {
		pthread_mutex_lock(&c->write_mu);
		rc = content_cell_copy(c, CONTENT_FAM_POST, k->author, k->id, &now, &nlen);
		if (rc == WB_OK && nlen == k->len && memcmp(now, k->val, nlen) == 0) {
			rc = hb_write(c->t, b);
		} else if (rc == WB_OK || rc == WB_ENOTFOUND) {
			*left = rc == WB_OK; /* changed meanwhile: the next round reads it again */
			rc = WB_OK;
			done = failed = 0;
		}
		pthread_mutex_unlock(&c->write_mu);
	}
	if (rc == WB_OK && !*left && (done > 0 || failed > 0)) {
		content_rc_count(c, done, failed, 1);
	}
	free(now);
	free(val);
	hb_batch_free(b);
	wb_msg_free(rich);
	return rc;
}

/* content_rc_family runs step 1 (fam upload) or one round of step 2 (fam post); *left counts the
 * posts to read again. */
static int
content_rc_family(content *c, int fam, size_t *left)
{
	content_rc_cell cells[CONTENT_RC_PAGE];
	uint8_t        *resume = NULL;
	size_t          resume_len = 0, n = 0;
	int             rc = WB_OK;

	*left = 0;
	do {
		if (content_rc_stopping(c)) {
			rc = WB_ECLOSED;
			break;
		}
		if ((rc = content_rc_page(c, fam, &resume, &resume_len, cells, &n)) != WB_OK) {
			content_rc_page_free(cells, n);
			break;
		}
		for (size_t i = 0; rc == WB_OK && i < n; i++) {
			bool again = false;
			if (fam == CONTENT_FAM_UPLOAD) {
				rc = content_rc_upload(c, &cells[i]);
			} else {
				rc = content_rc_post(c, &cells[i], &again);
			}
			*left += again;
		}
		content_rc_page_free(cells, n);
	} while (rc == WB_OK && resume != NULL);
	free(resume);
	return rc;
}

/* content_rc_pass runs the whole pass (steps 1 to 4). */
static int
content_rc_pass(content *c)
{
	size_t left = 0;
	int    rc = content_rc_family(c, CONTENT_FAM_UPLOAD, &left);

	for (int round = 0; rc == WB_OK && round < CONTENT_RC_ROUNDS; round++) {
		if ((rc = content_rc_family(c, CONTENT_FAM_POST, &left)) == WB_OK && left == 0) {
			break;
		}
	}
	if (rc == WB_OK) {
		rc = hb_put(c->t, CONTENT_FAM_META, CONTENT_META_REENCODED,
		    sizeof(CONTENT_META_REENCODED) - 1, NULL, 0, 0, "\1", 1);
	}
	return rc;
}

static void *
content_rc_run(void *arg)
{
	content *c = arg;
	int      rc = content_rc_pass(c);

	pthread_mutex_lock(&c->rc_mu);
	c->rc_state = rc == WB_OK ? CONTENT_RC_DONE : CONTENT_RC_FAILED;
	c->rc_end_ms = wb_mono_us() / 1000;
	if (rc != WB_OK) {
		snprintf(c->rc_error, sizeof(c->rc_error), "%s %s", wb_strerror(rc),
		    rc == WB_EIO || rc == WB_ECORRUPT ? hb_last_error() : "");
	}
	RT_INFOF("media re-encode pass %s: %llu images written again, %llu deleted (no image), "
	         "%llu posts updated, %.1f s%s%s",
	    content_rc_states[c->rc_state], (unsigned long long)c->rc_done,
	    (unsigned long long)c->rc_failed, (unsigned long long)c->rc_posts,
	    (double)(c->rc_end_ms - c->rc_start_ms) / 1000.0, rc != WB_OK ? ": " : "",
	    rc != WB_OK ? c->rc_error : "");
	pthread_cond_broadcast(&c->rc_cv);
	pthread_mutex_unlock(&c->rc_mu);
	return NULL;
}

bool
content_reencode_start(content *c)
{
	uint64_t disk, keys, total = 0;
	bool     ok = true;

	for (int fam = CONTENT_FAM_UPLOAD; fam <= CONTENT_FAM_MEDIA; fam++) {
		if (hb_family_stats(c->t, fam, &disk, &keys) == WB_OK) {
			total += keys;
		}
	}
	pthread_mutex_lock(&c->rc_mu);
	if (c->rc_state != CONTENT_RC_RUNNING && !c->rc_stop) {
		if (c->rc_started) {
			pthread_join(c->rc_thread, NULL); /* finished: its state is not running */
			c->rc_started = false;
		}
		c->rc_state = CONTENT_RC_RUNNING;
		c->rc_done = c->rc_failed = c->rc_posts = 0;
		c->rc_total = total;
		c->rc_error[0] = '\0';
		c->rc_start_ms = c->rc_end_ms = wb_mono_us() / 1000;
		ok = c->rc_started = pthread_create(&c->rc_thread, NULL, content_rc_run, c) == 0;
		if (!ok) {
			c->rc_state = CONTENT_RC_FAILED;
			snprintf(c->rc_error, sizeof(c->rc_error), "%s", "no thread");
		}
	}
	pthread_mutex_unlock(&c->rc_mu);
	return ok;
}

void
content_reencode_stop(content *c)
{
	pthread_mutex_lock(&c->rc_mu);
	c->rc_stop = true;
	bool started = c->rc_started;
	c->rc_started = false;
	pthread_mutex_unlock(&c->rc_mu);
	if (started) {
		pthread_join(c->rc_thread, NULL);
	}
}

int
content_media_reencode_status(void *arg, const wb_obj *req, wb_obj *rep)
{
	content *c = arg;
	int      rc;

	(void)req;
	pthread_mutex_lock(&c->rc_mu);
	uint64_t end = c->rc_state == CONTENT_RC_RUNNING ? wb_mono_us() / 1000 : c->rc_end_ms;
	if ((rc = wb_reply_ok(rep)) == WB_OK &&
	    (rc = wb_set_cstr(rep, WB_F_STATE, content_rc_states[c->rc_state])) == WB_OK &&
	    (rc = wb_set_u64(rep, WB_F_DONE, c->rc_done)) == WB_OK &&
	    (rc = wb_set_u64(rep, WB_F_TOTAL, c->rc_total)) == WB_OK &&
	    (rc = wb_set_u64(rep, WB_F_COUNT, c->rc_posts)) == WB_OK &&
	    (rc = wb_set_u64(rep, WB_F_ERRORS, c->rc_failed)) == WB_OK &&
	    (rc = wb_set_u64(rep, WB_F_ELAPSED, end - c->rc_start_ms)) == WB_OK &&
	    c->rc_error[0] != '\0') {
		rc = wb_set_cstr(rep, WB_F_MSG, c->rc_error);
	}
	pthread_mutex_unlock(&c->rc_mu);
	return rc;
}

int
content_media_reencode(void *arg, const wb_obj *req, wb_obj *rep)
{
	content *c = arg;

	if (!content_reencode_start(c)) {
		wb_reply_error(rep, WB_EUNAVAIL, "the re-encode pass cannot start: no thread");
		return WB_EUNAVAIL;
	}
	return content_media_reencode_status(c, req, rep);
}
