/*
 * content_decode_test.c - the bound on decodes in flight (content_decode.c)
 * on its own: with every decoder taken, an upload waits its bounded time
 * and is refused with UNAVAILABLE (and counted); a decoder given back
 * lets a waiting one through; the pass's unbounded wait waits.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "content_int.h"
#include "wbt.h"
#include "wbt_png.h"

static content c;

static void
setup(void)
{
	pthread_condattr_t ca;

	memset(&c, 0, sizeof(c));
	pthread_mutex_init(&c.decode_mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c.decode_cv, &ca);
	pthread_condattr_destroy(&ca);
	c.decodes_max = 1;
	c.media_pixels = 1000000;
	atomic_init(&c.decode_busy, 0);
	cr_assert_eq(content_image_init(), WB_OK);
}

static void
teardown(void)
{
	pthread_cond_destroy(&c.decode_cv);
	pthread_mutex_destroy(&c.decode_mu);
}

TestSuite(content_decode, .init = setup, .fini = teardown);

/* take and give mark the one decoder busy or free, as a decode in flight would. */
static void
take(void)
{
	pthread_mutex_lock(&c.decode_mu);
	c.decodes++;
	pthread_mutex_unlock(&c.decode_mu);
}

static void *
give_later(void *arg)
{
	wbt_sleep_ms(*(int *)arg);
	pthread_mutex_lock(&c.decode_mu);
	c.decodes--;
	pthread_cond_signal(&c.decode_cv);
	pthread_mutex_unlock(&c.decode_mu);
	return NULL;
}

static int
decode(const uint8_t *p, size_t n, int wait_ms, char *why, size_t why_len)
{
	content_image_file orig, preview;
	int rc = content_decode(&c, p, n, false, wait_ms, &orig, &preview, why, why_len);

	content_image_file_free(&orig);
	content_image_file_free(&preview);
	return rc;
}

Test(content_decode, every_decoder_busy_is_unavailable_after_the_wait)
{
	size_t   n;
	uint8_t *png = wbt_png(32, 16, 1, &n);
	char     why[256];

	cr_assert_not_null(png);
	cr_assert_eq(decode(png, n, 100, why, sizeof(why)), WB_OK, "%s", why);
	cr_assert_eq(c.decodes, 0, "the decoder is given back");
	take();
	long long t0 = wbt_now_ms();
	cr_assert_eq(decode(png, n, 100, why, sizeof(why)), WB_EUNAVAIL);
	cr_assert_geq(wbt_now_ms() - t0, 100, "it waited its time first");
	cr_assert(strstr(why, "try again") != NULL, "%s", why);
	cr_assert_eq(atomic_load(&c.decode_busy), 1, "counted");
	cr_assert_eq(c.decodes, 1, "a refusal takes no decoder");
	free(png);
}

Test(content_decode, a_decoder_given_back_lets_a_waiting_one_through)
{
	size_t    n;
	uint8_t  *png = wbt_png(32, 16, 2, &n);
	char      why[256];
	pthread_t th;
	int       after = 50;

	take();
	cr_assert_eq(pthread_create(&th, NULL, give_later, &after), 0);
	cr_assert_eq(decode(png, n, wbt_ms(10000), why, sizeof(why)), WB_OK, "%s", why);
	pthread_join(th, NULL);
	/* the re-encode pass's wait has no bound */
	take();
	cr_assert_eq(pthread_create(&th, NULL, give_later, &after), 0);
	cr_assert_eq(decode(png, n, -1, why, sizeof(why)), WB_OK, "%s", why);
	pthread_join(th, NULL);
	cr_assert_eq(c.decodes, 0);
	cr_assert_eq(atomic_load(&c.decode_busy), 0);
	/* a refusal of the image itself is not a busy decoder */
	cr_assert_eq(decode(png, n - 5, 100, why, sizeof(why)), WB_EMEDIATYPE);
	cr_assert_eq(c.decodes, 0);
	free(png);
}
