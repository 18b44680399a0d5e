/*
 * wb_codec_bench.c - encode and decode rates of typical messages: a home
 * timeline reply (20 hydrated posts) and a fans page (10,000 uids), plus
 * a small request.  Each case runs for about WB_BENCH_SECONDS (default 1);
 * an argument (request, timeline, fans) runs one case only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wb_proto.h"
#include "wb_clock.h"

static double
bench_now(void)
{
	return (double)wb_mono_us() / 1e6;
}

static wb_obj *
bench_timeline(void)
{
	wb_obj *m = wb_msg_new();
	wb_obj *p;

	wb_reply_ok(m);
	p = wb_add_objs(m, WB_F_POSTS, 20);
	for (int i = 0; i < 20; i++) {
		wb_set_u64(&p[i], WB_F_ID, (UINT64_C(153000000000) + (uint64_t)i) << 22);
		wb_set_u64(&p[i], WB_F_AUTHOR, 100000 + (uint64_t)i * 13);
		wb_set_cstr(&p[i], WB_F_AUTHOR_NAME, "someone_famous");
		wb_set_cstr(&p[i], WB_F_TEXT,
		    "Just shipped the new release: faster timelines, fewer bytes per inbox "
		    "entry, and a codec that refuses hostile input. Details at "
		    "https://example.org/r");
		wb_set_u64(&p[i], WB_F_TIME, UINT64_C(1700000000000) + (uint64_t)i);
	}
	wb_set_u64(m, WB_F_NEXT, UINT64_C(152999999999) << 22);
	return m;
}

static wb_obj *
bench_fans(void)
{
	wb_obj   *m = wb_msg_new();
	uint64_t *u;

	wb_reply_ok(m);
	u = wb_add_u64s(m, WB_F_UIDS, 10000);
	for (int i = 0; i < 10000; i++) {
		u[i] = 1000000 + (uint64_t)i * 7919;
	}
	wb_set_u64(m, WB_F_NEXT, u[9999]);
	return m;
}

static wb_obj *
bench_request(void)
{
	wb_obj *m = wb_request(WB_OP_POST_PUBLISH);
	wb_set_u64(m, WB_F_UID, 123456);
	wb_set_cstr(m, WB_F_TEXT, "hello, warble");
	return m;
}

static void
bench_case(const char *name, wb_obj *m, double seconds)
{
	char  *buf, err[128];
	size_t len;
	long   n;
	double t0, enc, dec;

	if (wb_encode_buf(m, &buf, &len) != WB_OK) {
		fprintf(stderr, "%s: encode failed\n", name);
		exit(1);
	}
	free(buf);
	for (n = 0, t0 = bench_now(); bench_now() - t0 < seconds;) {
		for (int i = 0; i < 16; i++, n++) {
			wb_encode_buf(m, &buf, &len);
			free(buf);
		}
	}
	enc = (double)n / (bench_now() - t0);

	wb_encode_buf(m, &buf, &len);
	for (n = 0, t0 = bench_now(); bench_now() - t0 < seconds;) {
		for (int i = 0; i < 16; i++, n++) {
			wb_obj *d;
			if (wb_decode(&d, buf, len, NULL, err, sizeof(err)) != WB_OK) {
				fprintf(stderr, "%s: decode failed: %s\n", name, err);
				exit(1);
			}
			wb_msg_free(d);
		}
	}
	dec = (double)n / (bench_now() - t0);
	printf(
	    "%-22s %7zu bytes  encode %9.0f msg/s (%7.1f MB/s)  decode %9.0f msg/s (%7.1f MB/s)\n",
	    name, len, enc, enc * (double)len / 1e6, dec, dec * (double)len / 1e6);
	free(buf);
	wb_msg_free(m);
}

int
main(int argc, char **argv)
{
	const char *env = getenv("WB_BENCH_SECONDS");
	double      seconds = env != NULL ? atof(env) : 1.0;

	if (seconds <= 0) {
		seconds = 1.0;
	}
	/* an argument picks one case: request, timeline or fans */
	const char *only = argc > 1 ? argv[1] : "";
	if (only[0] == '\0' || strstr("request", only) != NULL) {
		bench_case("request post.publish", bench_request(), seconds);
	}
	if (only[0] == '\0' || strstr("timeline", only) != NULL) {
		bench_case("timeline (20 posts)", bench_timeline(), seconds);
	}
	if (only[0] == '\0' || strstr("fans", only) != NULL) {
		bench_case("fans page (10k uids)", bench_fans(), seconds);
	}
	return 0;
}
