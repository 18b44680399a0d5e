/*
 * content.c - the content service's state (open, close, the image limits
 * and decoders), its route table and its figures in stats.
 */
#include <stdlib.h>
#include <time.h>

#include "content_int.h"
#include "content_schema.h"
#include "rt_log.h"

int
content_open(content **out, hb_table *t, evlog *log)
{
	*out = NULL;
	content *c = calloc(1, sizeof(*c));
	if (c == NULL) {
		return WB_ENOMEM;
	}
	c->t = t;
	c->log = log;
	c->ids = wb_idgen_new();
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
	pthread_mutex_init(&c->decode_mu, NULL);
	pthread_mutex_init(&c->rc_mu, NULL);
	pthread_cond_init(&c->rc_cv, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* content_decode's timed wait */
	pthread_cond_init(&c->decode_cv, &ca);
	pthread_condattr_destroy(&ca);
	c->decodes_max = CONTENT_MEDIA_DECODES;
	atomic_init(&c->decode_busy, 0);
	if ((rc = content_media_limits(
	         c, CONTENT_MEDIA_MAX, CONTENT_MEDIA_PIXELS, CONTENT_MEDIA_RATE)) != WB_OK ||
	    (rc = content_image_init()) != WB_OK) {
		content_close(c);
		return rc;
	}
	*out = c;
	return WB_OK;
}

int
content_media_decodes(content *c, unsigned n)
{
	if (n == 0) {
		return WB_EINVAL;
	}
	pthread_mutex_lock(&c->decode_mu);
	c->decodes_max = n;
	pthread_cond_broadcast(&c->decode_cv);
	pthread_mutex_unlock(&c->decode_mu);
	return WB_OK;
}

int
content_media_limits(content *c, size_t max_bytes, uint64_t max_pixels, unsigned per_minute)
{
	rt_rate_opts o = { .free = per_minute, .window_ms = 60000, .wait_ms = 60000 };
	rt_rate     *r = NULL;
	int          rc = rt_rate_open(&r, &o);

	if (rc != WB_OK) {
		return rc;
	}
	rt_rate_close(c->uploads);
	c->uploads = r;
	c->media_max = max_bytes;
	c->media_pixels = max_pixels;
	return WB_OK;
}

void
content_close(content *c)
{
	if (c == NULL) {
		return;
	}
	content_reencode_stop(c);
	pthread_mutex_destroy(&c->write_mu);
	pthread_mutex_destroy(&c->decode_mu);
	pthread_cond_destroy(&c->decode_cv);
	pthread_mutex_destroy(&c->rc_mu);
	pthread_cond_destroy(&c->rc_cv);
	rt_rate_close(c->uploads);
	rt_uidset_close(c->gone);
	wb_idgen_free(c->ids);
	free(c);
}

/* content_gauge_decodes is the number of images being decoded now. */
static uint64_t
content_gauge_decodes(void *arg)
{
	content *c = arg;

	pthread_mutex_lock(&c->decode_mu);
	uint64_t n = c->decodes;
	pthread_mutex_unlock(&c->decode_mu);
	return n;
}

/* content_gauge_busy counts the uploads refused because every decoder was busy. */
static uint64_t
content_gauge_busy(void *arg)
{
	content *c = arg;
	return atomic_load(&c->decode_busy);
}

/* content_gauge_erased counts the posts erased with their authors. */
static uint64_t
content_gauge_erased(void *arg)
{
	content *c = arg;
	return atomic_load(&c->erased_posts);
}

/* content_gauge_reencode is the re-encode pass's state: 0 idle, 1 running, 2 done, 3 failed. */
static uint64_t
content_gauge_reencode(void *arg)
{
	content *c = arg;

	pthread_mutex_lock(&c->rc_mu);
	uint64_t st = (uint64_t)c->rc_state;
	pthread_mutex_unlock(&c->rc_mu);
	return st;
}

/*
 * content_routes: the service's operations.  Posts and images live on
 * their author's shard: a publish, a timeline and an upload go by uid, a
 * post by the slot group its id names, an image by the author its media
 * id names; the log, the authors and the re-encode pass are each shard's
 * own.
 */
const rt_route content_routes[] = {
	{ WB_OP_POST_PUBLISH, content_publish, WB_F_UID, 0, RT_PEER_GATEWAY },
	{ WB_OP_POST_DELETE, content_delete, WB_F_ID, 0, RT_PEER_GATEWAY },
	{ WB_OP_POST_GET, content_get, WB_F_IDS, 0, RT_PEER_GATEWAY },
	{ WB_OP_POST_TIMELINE, content_timeline, WB_F_UID, 0, RT_PEER_GATEWAY | RT_PEER_INBOX },
	{ WB_OP_POST_LOG, content_log, 0, 0, RT_PEER_INBOX },
	{ WB_OP_MEDIA_PUT, content_media_put, WB_F_UID, 0,
	    RT_PEER_GATEWAY }, /* waits for a decoder aside */
	{ WB_OP_MEDIA_GET, content_media_get, WB_F_MEDIA, 0, RT_PEER_GATEWAY },
	{ WB_OP_MEDIA_REENCODE, content_media_reencode, 0, 0, 0 },
	{ WB_OP_MEDIA_REENCODE_STATUS, content_media_reencode_status, 0, 0, 0 },
	{ WB_OP_POST_AUTHORS, content_authors, 0, 0, RT_PEER_INBOX },
	{ WB_OP_NONE },
};

int
content_gauges(content *c, rt_server *s)
{
	static const struct {
		const char *name;
		rt_gauge_fn fn;
	} g[] = {
		{ "media_decodes", content_gauge_decodes },
		{ "media_decodes_busy", content_gauge_busy },
		{ "media_reencode_state", content_gauge_reencode },
		{ "erased_posts", content_gauge_erased },
	};
	int rc = WB_OK;

	for (size_t i = 0; rc == WB_OK && i < sizeof(g) / sizeof(g[0]); i++) {
		rc = rt_server_gauge(s, g[i].name, g[i].fn, c);
	}
	return rc;
}

int
content_start(content *c)
{
	hb_cell *cell = NULL;
	int      rc = hb_get(c->t, CONTENT_FAM_META, CONTENT_META_REENCODED,
	         sizeof(CONTENT_META_REENCODED) - 1, NULL, 0, &cell);

	/* a store with images from before they were decoded: write them again */
	if (rc == WB_OK) {
		hb_cell_free(cell);
	} else if (rc == WB_ENOTFOUND) {
		rc = content_reencode_start(c) ? WB_OK : WB_ENOMEM;
	}
	return rc;
}
