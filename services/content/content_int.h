/*
 * content_int.h - the content service's state, shared by its handler files.
 */
#ifndef CONTENT_INT_H
#define CONTENT_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "content.h"
#include "content_image.h"
#include "content_post.h"
#include "rt_rate.h"
#include "rt_uidset.h"
#include "wb_id.h"
#include "wb_slot.h"

/* The states of the re-encode pass (content_reencode.c), as media.reencode_status names them. */
enum { CONTENT_RC_IDLE, CONTENT_RC_RUNNING, CONTENT_RC_DONE, CONTENT_RC_FAILED };

struct content {
	hb_table            *t;
	evlog               *log;
	wb_idgen            *ids;
	pthread_mutex_t      write_mu;     /* publish, delete and upload: id order = seq order */
	size_t               media_max;    /* bytes of one image */
	uint64_t             media_pixels; /* pixels of one image (every frame) */
	rt_rate             *uploads;      /* uploads per user per minute */
	wb_shard             shard;        /* the authors it keeps (content_erase.c) */
	rt_uidset           *gone; /* deleted authors: no publish or upload (content_erase.c) */
	atomic_uint_fast64_t erased_posts; /* posts erased with their authors (stats gauge) */

	/* the decodes in flight (content_decode.c): at most decodes_max */
	pthread_mutex_t      decode_mu;
	pthread_cond_t       decode_cv;
	unsigned             decodes, decodes_max;
	atomic_uint_fast64_t decode_busy; /* uploads refused: every decoder busy */

	/* the re-encode pass (content_reencode.c): asked and reported under rc_mu */
	pthread_mutex_t rc_mu;
	pthread_cond_t  rc_cv;
	pthread_t       rc_thread;
	bool            rc_started, rc_stop;
	int             rc_state;
	uint64_t        rc_done, rc_total, rc_failed, rc_posts, rc_start_ms, rc_end_ms;
	char            rc_error[160];
};

#define CONTENT_DECODE_WAIT_MS 2000 /* an upload's wait for a free decoder */
#define CONTENT_MEDIA_HEAD     9    /* a media cell's type (1), width (4 BE), height (4 BE) */

/* content_decode runs content_image_encode on p[0..n) in one of the decoders, waiting at most
 * wait_ms for one (-1: as long as it takes): WB_EUNAVAIL if none came free. */
int content_decode(content *c, const uint8_t *p, size_t n, bool lenient, int wait_ms,
    content_image_file *orig, content_image_file *preview, char *why, size_t why_len);

/* content_media_value makes a media cell's value (header and bytes) of f into a malloc'd buffer. */
uint8_t *content_media_value(const content_image_file *f, size_t *len);

/* content_media_header reads a media cell's header: false if val is not one. */
bool content_media_header(const void *val, size_t len, content_image_file *f);

/* content_reencode_start starts the re-encode pass on its own thread unless it runs already; false
 * if it could not start. */
bool content_reencode_start(content *c);

/* content_reencode_stop asks a running pass to stop and waits for its thread. */
void content_reencode_stop(content *c);

/* content_gone tells whether uid's account is being (or was just) erased: call under write_mu. */
bool content_gone(content *c, uint64_t uid);

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
