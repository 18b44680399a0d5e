/*
 * content_post_test.c - a post's stored value: text-only posts are stored
 * and read exactly as before rich posts existed, rich ones keep only the
 * columns they have, a damaged value is reported, and the rules of a new
 * post's columns.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "content_post.h"
#include "wb_id.h"

#define ID ((UINT64_C(170000000000) << 22) | 5)

Test(content_post, text_only_value_is_the_text)
{
	content_draft d = { .text = "hello", .text_len = 5 };
	uint8_t      *val;
	size_t        len;
	wb_obj       *o = wb_msg_new();

	cr_assert_eq(content_post_encode(&d, NULL, &val, &len), WB_OK);
	cr_assert_eq(len, 5);
	cr_assert_eq(memcmp(val, "hello", 5), 0, "the value posts had before rich posts");
	cr_assert_eq(content_post_fill(o, ID, 7, val, len), WB_OK);
	cr_assert_eq(o->n, 4, "id, author, text, time and nothing else");
	cr_assert_str_eq(wb_str(o, WB_F_TEXT, ""), "hello");
	cr_assert_eq(wb_u64(o, WB_F_TIME, 0), wb_id_ms(ID));
	free(val);
	wb_msg_free(o);
}

Test(content_post, rich_value_keeps_only_its_columns)
{
	wb_obj       *req = wb_request(WB_OP_POST_PUBLISH), *rep = wb_msg_new(), *o = wb_msg_new();
	wb_obj       *images = wb_msg_new(), *im;
	content_draft d;
	uint8_t      *val;
	size_t        len;

	wb_set_u64(req, WB_F_UID, 7);
	wb_set_cstr(req, WB_F_CATEGORY, "food");
	im = wb_add_objs(req, WB_F_IMAGES, 1);
	wb_set_cstr(&im[0], WB_F_MEDIA, "7-99");
	cr_assert_eq(content_draft_check(req, 7, &d, rep), WB_OK, "%s", wb_str(rep, WB_F_MSG, ""));
	cr_assert_eq(d.media[0], 99);
	im = wb_add_objs(images, WB_F_IMAGES, 1);
	wb_set_cstr(&im[0], WB_F_MEDIA, "7-99");
	wb_set_cstr(&im[0], WB_F_TYPE, "image/gif");
	wb_set_u64(&im[0], WB_F_WIDTH, 3);
	wb_set_u64(&im[0], WB_F_HEIGHT, 2);
	cr_assert_eq(content_post_encode(&d, im, &val, &len), WB_OK);
	cr_assert_eq(val[0], POST_RICH_MARK);
	cr_assert_eq(content_post_fill(o, ID, 7, val, len), WB_OK);
	cr_assert_str_eq(wb_str(o, WB_F_TEXT, "?"), "", "no text column: an empty text");
	cr_assert_str_eq(wb_str(o, WB_F_CATEGORY, ""), "food");
	cr_assert_not(wb_has(o, WB_F_TITLE));
	const wb_obj *got;
	size_t        n;
	cr_assert(wb_get_objs(o, WB_F_IMAGES, &got, &n));
	cr_assert_eq(n, 1);
	cr_assert(wb_equal(&got[0], &im[0]));
	/* a damaged rich value is an error, never a wrong post */
	val[len - 1] ^= 0xff;
	wb_reset(o);
	cr_assert_eq(content_post_fill(o, ID, 7, val, len - 3), WB_ECORRUPT);
	free(val);
	wb_msg_free(req);
	wb_msg_free(rep);
	wb_msg_free(o);
	wb_msg_free(images);
}

/* check runs content_draft_check on a request built by fill and returns its code. */
static int
check(void (*fill)(wb_obj *req))
{
	wb_obj       *req = wb_request(WB_OP_POST_PUBLISH), *rep = wb_msg_new();
	content_draft d;
	int           rc;

	wb_set_u64(req, WB_F_UID, 7);
	fill(req);
	rc = content_draft_check(req, 7, &d, rep);
	cr_assert_eq(rc == WB_OK, wb_reply_code(rep, NULL) == WB_OK || !wb_has(rep, WB_F_ERR));
	wb_msg_free(req);
	wb_msg_free(rep);
	return rc;
}

static void
images(wb_obj *req, int n, const char *first)
{
	wb_obj *im = wb_add_objs(req, WB_F_IMAGES, (size_t)n);
	for (int i = 0; i < n; i++) {
		char id[32];
		snprintf(id, sizeof(id), "7-%d", 100 + i);
		wb_set_cstr(&im[i], WB_F_MEDIA, i == 0 && first != NULL ? first : id);
	}
}

static void
f_text(wb_obj *r)
{
	wb_set_cstr(r, WB_F_TEXT, "x");
}
static void
f_none(wb_obj *r)
{
	(void)r;
}
static void
f_empty_with_image(wb_obj *r)
{
	wb_set_cstr(r, WB_F_TEXT, "");
	images(r, 1, NULL);
}
static void
f_blank(wb_obj *r)
{
	wb_set_cstr(
	    r, WB_F_TEXT, " \t\n\xc2\xa0\xe3\x80\x80"); /* space, tab, newline, NBSP, U+3000 */
}
static void
f_blank_with_image(wb_obj *r)
{
	f_blank(r);
	images(r, 1, NULL);
}
static void
f_blank_with_title(wb_obj *r)
{
	f_blank(r);
	wb_set_cstr(r, WB_F_TITLE, "A title shows, the text does not");
}
static void
f_four(wb_obj *r)
{
	images(r, 4, NULL);
}
static void
f_five(wb_obj *r)
{
	images(r, 5, NULL);
}
static void
f_theirs(wb_obj *r)
{
	images(r, 1, "8-100");
}
static void
f_bad_id(wb_obj *r)
{
	images(r, 1, "7-0");
}
static void
f_twice(wb_obj *r)
{
	images(r, 2, "7-101");
}
static void
f_cat_upper(wb_obj *r)
{
	f_text(r);
	wb_set_cstr(r, WB_F_CATEGORY, "Food");
}
static void
f_cat_long(wb_obj *r)
{
	f_text(r);
	wb_set_cstr(r, WB_F_CATEGORY, "a23456789012345678901234567890123");
}
static void
f_title_bad_utf8(wb_obj *r)
{
	f_text(r);
	wb_set_cstr(r, WB_F_TITLE, "\xc3");
}

Test(content_post, draft_rules)
{
	cr_assert_eq(check(f_text), WB_OK);
	cr_assert_eq(check(f_none), WB_EBADTEXT);
	cr_assert_eq(check(f_empty_with_image), WB_OK);
	cr_assert_eq(check(f_blank), WB_EBADTEXT);
	cr_assert_eq(check(f_blank_with_image), WB_OK, "blank text beside an image is fine");
	cr_assert_eq(check(f_blank_with_title), WB_EBADTEXT, "a title is no image");
	cr_assert_eq(check(f_four), WB_OK);
	cr_assert_eq(check(f_five), WB_EINVAL);
	cr_assert_eq(check(f_theirs), WB_EPERM);
	cr_assert_eq(check(f_bad_id), WB_EINVAL);
	cr_assert_eq(check(f_twice), WB_EINVAL);
	cr_assert_eq(check(f_cat_upper), WB_EINVAL);
	cr_assert_eq(check(f_cat_long), WB_EINVAL);
	cr_assert_eq(check(f_title_bad_utf8), WB_EINVAL);
	cr_assert(content_category_ok("a_1", 3));
	cr_assert_not(content_category_ok("", 0));
}
