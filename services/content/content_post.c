/*
 * content_post.c - a post's columns: the checks of a new post and its
 * stored value (layout in content_schema.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "content_post.h"
#include "content_text.h"
#include "wb_id.h"

bool
content_category_ok(const char *s, size_t n)
{
	if (n == 0 || n > POST_CATEGORY_MAX) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
			return false;
		}
	}
	return true;
}

/* content_refuse makes rep the error reply of code with a printf-style message and returns code. */
static int __attribute__((format(printf, 3, 4)))
content_refuse(wb_obj *rep, int code, const char *fmt, ...)
{
	char    msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	wb_reply_error(rep, code, "%s", msg);
	return code;
}

/* content_text_max tells whether s (n bytes) is UTF-8 of at most max code points. */
static bool
content_text_max(const char *s, size_t n, long max)
{
	long cps = text_utf8_count(s, n);
	return cps >= 0 && cps <= max;
}

/* content_draft_images checks the images of a draft: at most 4, the poster's own, no repeats, alt texts in bounds. */
static int
content_draft_images(const wb_obj *req, uint64_t uid, content_draft *d, wb_obj *rep)
{
	const char *s;
	size_t      n;
	uint64_t    author;

	if (!wb_get_objs(req, WB_F_IMAGES, &d->images, &d->nimages)) {
		d->nimages = 0;
		return WB_OK;
	}
	if (d->nimages > POST_IMAGES_MAX) {
		return content_refuse(rep, WB_EINVAL, "a post has at most %d images, not %zu",
		    POST_IMAGES_MAX, d->nimages);
	}
	for (size_t i = 0; i < d->nimages; i++) {
		const wb_obj *im = &d->images[i];
		if (!wb_get_str(im, WB_F_MEDIA, &s, &n) ||
		    !wb_media_id_parse(s, n, &author, &d->media[i])) {
			return content_refuse(rep, WB_EINVAL,
			    "image %zu: media must be a media id <author>-<id>", i + 1);
		}
		if (author != uid) {
			return content_refuse(rep, WB_EPERM,
			    "image %.*s is not yours: attach your own uploads", (int)n, s);
		}
		for (size_t k = 0; k < i; k++) {
			if (d->media[k] == d->media[i]) {
				return content_refuse(
				    rep, WB_EINVAL, "image %.*s is given twice", (int)n, s);
			}
		}
		if (wb_get_str(im, WB_F_ALT, &s, &n) && !content_text_max(s, n, POST_ALT_MAX)) {
			return content_refuse(rep, WB_EINVAL,
			    "image %zu: alt text must be valid UTF-8 of at most %d characters",
			    i + 1, POST_ALT_MAX);
		}
	}
	return WB_OK;
}

int
content_draft_check(const wb_obj *req, uint64_t uid, content_draft *d, wb_obj *rep)
{
	int rc;

	memset(d, 0, sizeof(*d));
	if (uid == 0) {
		return content_refuse(rep, WB_EINVAL, "uid must be nonzero");
	}
	if ((rc = content_draft_images(req, uid, d, rep)) != WB_OK) {
		return rc;
	}
	(void)wb_get_str(req, WB_F_TEXT, &d->text, &d->text_len);
	rc = d->text_len == 0 && d->nimages > 0 ? WB_OK : text_check(d->text, d->text_len);
	if (rc == WB_OK && d->nimages == 0 && text_blank(d->text, d->text_len)) {
		return content_refuse(rep, WB_EBADTEXT,
		    "post text must show something: it is only white space (it may be blank "
		    "only when the post has an image)");
	}
	if (rc == WB_ETOOLONG) {
		return content_refuse(
		    rep, rc, "post text longer than %d characters", TEXT_MAX_CODEPOINTS);
	}
	if (rc != WB_OK) {
		return content_refuse(rep, rc,
		    "post text must be 1 to %d characters of valid UTF-8 (it may be empty "
		    "only when the post has an image)",
		    TEXT_MAX_CODEPOINTS);
	}
	if (wb_get_str(req, WB_F_TITLE, &d->title, &d->title_len) &&
	    (d->title_len == 0 || !content_text_max(d->title, d->title_len, POST_TITLE_MAX))) {
		return content_refuse(rep, WB_EINVAL,
		    "title must be 1 to %d characters of valid UTF-8", POST_TITLE_MAX);
	}
	if (wb_get_str(req, WB_F_CATEGORY, &d->category, &d->category_len) &&
	    !content_category_ok(d->category, d->category_len)) {
		return content_refuse(
		    rep, WB_EINVAL, "category must be 1 to %d of a-z 0-9 _", POST_CATEGORY_MAX);
	}
	return WB_OK;
}

int
content_post_encode(const content_draft *d, const wb_obj *images, uint8_t **val, size_t *len)
{
	wb_obj *v;
	int     rc = WB_OK;

	if (d->title == NULL && d->category == NULL && d->nimages == 0) {
		if ((*val = malloc(d->text_len + 1)) == NULL) {
			return WB_ENOMEM;
		}
		memcpy(*val, d->text, d->text_len);
		*len = d->text_len;
		return WB_OK;
	}
	if ((v = wb_msg_new()) == NULL) {
		return WB_ENOMEM;
	}
	if (d->text_len > 0) {
		rc = wb_set_str(v, WB_F_TEXT, d->text, d->text_len);
	}
	if (rc == WB_OK && d->title != NULL) {
		rc = wb_set_str(v, WB_F_TITLE, d->title, d->title_len);
	}
	if (rc == WB_OK && d->category != NULL) {
		rc = wb_set_str(v, WB_F_CATEGORY, d->category, d->category_len);
	}
	if (rc == WB_OK && d->nimages > 0) {
		wb_obj *im = wb_add_objs(v, WB_F_IMAGES, d->nimages);
		rc = im == NULL ? WB_ENOMEM : WB_OK;
		for (size_t i = 0; rc == WB_OK && i < d->nimages; i++) {
			rc = wb_copy(&im[i], &images[i]);
		}
	}
	if (rc == WB_OK) {
		rc = content_post_encode_rich(v, val, len);
	}
	wb_msg_free(v);
	return rc;
}

int
content_post_encode_rich(const wb_obj *v, uint8_t **val, size_t *len)
{
	char  *buf = NULL;
	size_t n = 0;
	int    rc = wb_encode_buf(v, &buf, &n);

	if (rc == WB_OK && (*val = malloc(n + 1)) == NULL) {
		rc = WB_ENOMEM;
	}
	if (rc == WB_OK) {
		(*val)[0] = POST_RICH_MARK;
		memcpy(*val + 1, buf, n);
		*len = n + 1;
	}
	free(buf);
	return rc;
}

int
content_post_decode(const void *val, size_t len, wb_obj **out)
{
	char err[128];

	*out = NULL;
	if (len == 0 || *(const uint8_t *)val != POST_RICH_MARK) {
		return WB_OK;
	}
	return wb_decode(out, (const uint8_t *)val + 1, len - 1, NULL, err, sizeof(err)) == WB_OK
	           ? WB_OK
	           : WB_ECORRUPT;
}

int
content_post_fill(wb_obj *o, uint64_t id, uint64_t author, const void *val, size_t len)
{
	wb_obj *rich = NULL;
	int     rc = content_post_decode(val, len, &rich);

	if (rc == WB_OK) {
		rc = wb_set_u64(o, WB_F_ID, id);
	}
	if (rc == WB_OK) {
		rc = wb_set_u64(o, WB_F_AUTHOR, author);
	}
	if (rc == WB_OK && rich == NULL) {
		rc = wb_set_str(o, WB_F_TEXT, val, len);
	} else if (rc == WB_OK) {
		rc = wb_has(rich, WB_F_TEXT) ? WB_OK : wb_set_str(o, WB_F_TEXT, "", 0);
		if (rc == WB_OK) {
			rc = wb_copy(o, rich);
		}
	}
	if (rc == WB_OK) {
		rc = wb_set_u64(o, WB_F_TIME, wb_id_ms(id));
	}
	wb_msg_free(rich);
	return rc;
}
