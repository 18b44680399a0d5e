/*
 * content_post.h - a post's columns: the rules a new post must meet, and
 * the stored value (content_schema.h): plain text, or 0xFF and a msgpack
 * map of only the columns the post has.
 */
#ifndef CONTENT_POST_H
#define CONTENT_POST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wb_limits.h"
#include "wb_proto.h"

#define POST_TITLE_MAX    WB_TITLE_MAX    /* code points */
#define POST_CATEGORY_MAX WB_CATEGORY_MAX /* bytes of a-z 0-9 _ */
#define POST_IMAGES_MAX   WB_IMAGES_MAX
#define POST_ALT_MAX      WB_ALT_MAX /* code points */
#define POST_RICH_MARK    0xFF       /* first byte of a rich post's value */

/* A post to publish, checked: its columns, pointing into the request. */
typedef struct content_draft {
	const char   *text, *title, *category;
	size_t        text_len, title_len, category_len;
	const wb_obj *images; /* the request's {media, alt?} */
	size_t        nimages;
	uint64_t      media[POST_IMAGES_MAX]; /* their ids (author: the poster) */
} content_draft;

/* content_draft_check reads and checks post.publish's columns into d; on error rep is the error reply. */
int content_draft_check(const wb_obj *req, uint64_t uid, content_draft *d, wb_obj *rep);

/* content_category_ok tells whether s (n bytes) is a category: 1-32 of a-z 0-9 _. */
bool content_category_ok(const char *s, size_t n);

/* content_post_encode makes the stored value of a post (images: records {media, type, width,
 * height, preview_width?, preview_height?, alt?}) into a malloc'd buffer. */
int content_post_encode(const content_draft *d, const wb_obj *images, uint8_t **val, size_t *len);

/* content_post_encode_rich makes the stored value of the rich post v ({text?, title?, category?,
 * images?}) into a malloc'd buffer. */
int content_post_encode_rich(const wb_obj *v, uint8_t **val, size_t *len);

/* content_post_fill writes the record {id, author, text, time, title?, category?, images?} of a stored post into o. */
int content_post_fill(wb_obj *o, uint64_t id, uint64_t author, const void *val, size_t len);

/* content_post_decode reads a rich post's value into a new root object (*out NULL for a text-only post). */
int content_post_decode(const void *val, size_t len, wb_obj **out);

#endif
