/*
 * content_decode.c - the bound on image decodes in flight.
 *
 * Memory: one decode holds at most CONTENT_IMAGE_PER_PIX (16) bytes a
 * pixel of the pixel limit (content_image.h), so the content service's
 * image memory is at most
 *
 *     media-decodes x media-pixels x 16 B   (2 x 25 MP x 16 B = 800 MB
 *                                            at the defaults)
 *
 * beyond libvips' own few MB (no operation cache, one worker thread a
 * decode).  An upload waits at most CONTENT_DECODE_WAIT_MS for a free
 * decoder, then is refused with UNAVAILABLE (503: try again shortly):
 * waiting longer would hold the gateway's call past its deadline.  The
 * re-encode pass waits as long as it takes, so uploads and the pass
 * share the same decoders.  The wait and the decode are one slow call
 * (rt_loop_slow_begin): a spare thread serves the service's other
 * requests meanwhile.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "content_int.h"
#include "rt_loop.h"
#include "wb_clock.h"

/* content_decode_enter takes a decoder, waiting at most wait_ms (-1: no bound); false if none. */
static bool
content_decode_enter(content *c, int wait_ms)
{
	struct timespec until;
	bool            ok = true;

	clock_gettime(CLOCK_MONOTONIC, &until);
	if (wait_ms >= 0) {
		until.tv_sec += wait_ms / 1000;
		until.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
	}
	pthread_mutex_lock(&c->decode_mu);
	while (c->decodes >= c->decodes_max && ok) {
		if (wait_ms < 0) {
			pthread_cond_wait(&c->decode_cv, &c->decode_mu);
		} else {
			ok = pthread_cond_timedwait(&c->decode_cv, &c->decode_mu, &until) == 0 ||
			     c->decodes < c->decodes_max;
		}
	}
	if (ok) {
		c->decodes++;
	}
	pthread_mutex_unlock(&c->decode_mu);
	return ok;
}

static void
content_decode_leave(content *c)
{
	pthread_mutex_lock(&c->decode_mu);
	c->decodes--;
	pthread_cond_signal(&c->decode_cv);
	pthread_mutex_unlock(&c->decode_mu);
}

int
content_decode(content *c, const uint8_t *p, size_t n, bool lenient, int wait_ms,
    content_image_file *orig, content_image_file *preview, char *why, size_t why_len)
{
	content_image_opts o = {
		.max_pixels = c->media_pixels,
		.max_bytes = WB_MEDIA_MAX_LIMIT,
		.lenient = lenient,
	};
	int rc;

	memset(orig, 0, sizeof(*orig));
	memset(preview, 0, sizeof(*preview));
	rt_loop_slow_begin();
	if (!content_decode_enter(c, wait_ms)) {
		rt_loop_slow_end();
		atomic_fetch_add(&c->decode_busy, 1);
		snprintf(why, why_len, "%u images are being decoded already: try again shortly",
		    c->decodes_max);
		return WB_EUNAVAIL;
	}
	rc = content_image_encode(orig, preview, p, n, &o, why, why_len);
	content_decode_leave(c);
	rt_loop_slow_end();
	return rc;
}
