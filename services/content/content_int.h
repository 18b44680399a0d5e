/*
 * content_int.h - the content service's state, shared by its handler files.
 */
#ifndef CONTENT_INT_H
#define CONTENT_INT_H

#include <pthread.h>

#include "content.h"
#include "content_post.h"
#include "rt_rate.h"
#include "wb_id.h"

struct content {
	hb_table       *t;
	evlog          *log;
	wb_idgen       *ids;
	pthread_mutex_t write_mu;     /* publish, delete and upload: id order = seq order */
	size_t          media_max;    /* bytes of one image */
	uint64_t        media_pixels; /* pixels of one image */
	rt_rate        *uploads;      /* uploads per user per minute */
};

/* content_author reads the author of post id (WB_ENOPOST if none). */
int content_author(content *c, uint64_t id, uint64_t *author);

/* content_cell finds version id of row author (a fixed 8-byte row) in family fam and hands its value to fill; WB_ENOTFOUND if absent. */
int content_cell(content *c, int fam, uint64_t author, uint64_t id,
    int (*fill)(void *arg, uint64_t id, uint64_t author, const void *val, size_t len), void *arg);

/* content_cell_copy reads version id of row author in family fam into a malloc'd copy (*val, *len); WB_ENOTFOUND if absent. */
int content_cell_copy(
    content *c, int fam, uint64_t author, uint64_t id, uint8_t **val, size_t *len);

/* content_media_attach adds to b the move of d's uploads into the media family and fills images (d->nimages records) for the post's value; on error rep is the reply. */
int content_media_attach(
    content *c, uint64_t uid, const content_draft *d, wb_obj *images, hb_batch *b, wb_obj *rep);

#endif
