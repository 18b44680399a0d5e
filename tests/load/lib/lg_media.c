/*
 * lg_media.c - the media phase: PNGs made in memory, and the upload,
 * publish and download passes any system's lg_media_backend runs
 * (lg_warble_media.c, lg_pg.c).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "lg_media.h"

#define LG_MEDIA_MAX_THREADS 256
#define LG_MEDIA_PER_POST    4     /* images in one post: Warble's limit */
#define LG_STORED_MAX        65535 /* bytes in one stored deflate block */

/* The size mix, cycled through each user's images: about 64, 256 and 900 KiB. */
static const struct {
	uint32_t w, h;
} lg_media_sizes[] = { { 160, 136 }, { 320, 273 }, { 600, 512 } };

static uint32_t       lg_crc_table[256];
static pthread_once_t lg_crc_once = PTHREAD_ONCE_INIT;

static void
lg_crc_init(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;
		for (int k = 0; k < 8; k++) {
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		}
		lg_crc_table[n] = c;
	}
}

/* lg_crc32 is the CRC of PNG chunks (and zlib's), over n bytes. */
static uint32_t
lg_crc32(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	pthread_once(&lg_crc_once, lg_crc_init);
	for (size_t i = 0; i < n; i++) {
		c = lg_crc_table[(c ^ p[i]) & 0xff] ^ (c >> 8);
	}
	return c ^ 0xffffffffu;
}

static uint8_t *
lg_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

/* lg_chunk_end writes the CRC of the chunk whose length field is at start; returns the byte after it. */
static uint8_t *
lg_chunk_end(uint8_t *start, uint32_t len)
{
	return lg_put32(start + 8 + len, lg_crc32(start + 4, 4 + (size_t)len));
}

/* lg_idat_len is the zlib stream's length: header, stored blocks (5 bytes each), raw, Adler-32. */
static size_t
lg_idat_len(size_t raw)
{
	return 2 + raw + 5 * ((raw + LG_STORED_MAX - 1) / LG_STORED_MAX) + 4;
}

size_t
lg_png_size(uint32_t w, uint32_t h)
{
	size_t raw = (size_t)h * (1 + 3 * (size_t)w);

	return 8 + (12 + 13) + (12 + lg_idat_len(raw)) + 12;
}

size_t
lg_png(uint8_t *out, size_t cap, uint32_t w, uint32_t h, uint64_t *seed)
{
	size_t   raw = (size_t)h * (1 + 3 * (size_t)w), left = raw, len = lg_png_size(w, h);
	uint32_t a = 1, b = 0; /* Adler-32 of the raw scanlines */
	uint8_t *p = out, *c;

	if (w == 0 || h == 0 || cap < len || lg_idat_len(raw) > UINT32_MAX) {
		return 0;
	}
	memcpy(p, "\x89PNG\r\n\x1a\n", 8);
	p += 8;
	c = p;
	p = lg_put32(p, 13);
	memcpy(p, "IHDR", 4);
	p = lg_put32(p + 4, w);
	p = lg_put32(p, h);
	memcpy(p, "\x08\x02\x00\x00\x00", 5); /* 8 bits, RGB, deflate, filter 0, no interlace */
	p = lg_chunk_end(c, 13);
	c = p;
	p = lg_put32(p, (uint32_t)lg_idat_len(raw));
	memcpy(p, "IDAT", 4);
	p += 4;
	*p++ = 0x78; /* zlib: deflate, 32 KiB window */
	*p++ = 0x01; /* no preset dictionary, fastest; (0x78 << 8 | 0x01) % 31 == 0 */
	for (size_t col = 0; left > 0;) {
		size_t k = left < LG_STORED_MAX ? left : LG_STORED_MAX;
		*p++ = k == left; /* BFINAL on the last block, BTYPE 00: stored */
		*p++ = (uint8_t)k;
		*p++ = (uint8_t)(k >> 8);
		*p++ = (uint8_t)~k;
		*p++ = (uint8_t)(~k >> 8);
		for (size_t i = 0; i < k; i++) {
			uint8_t v;
			if (col == 0) {
				v = 0; /* the scanline's filter: none */
			} else {
				v = (uint8_t)(lg_rand(seed) >> 56);
			}
			if (++col == 1 + 3 * (size_t)w) {
				col = 0;
			}
			*p++ = v;
			a = (a + v) % 65521;
			b = (b + a) % 65521;
		}
		left -= k;
	}
	p = lg_put32(p, b << 16 | a);
	p = lg_chunk_end(c, (uint32_t)lg_idat_len(raw));
	p = lg_put32(p, 0);
	memcpy(p, "IEND", 4);
	p = lg_chunk_end(p - 4, 0);
	return (size_t)(p - out) == len ? len : 0;
}

int
lg_media_make(lg_media_set *s, uint32_t users, uint32_t per_user, uint64_t seed)
{
	uint64_t r = seed * 2654435761u + 1;
	size_t   nsizes = sizeof(lg_media_sizes) / sizeof(lg_media_sizes[0]);

	memset(s, 0, sizeof(*s));
	s->users = users;
	s->per_user = per_user;
	s->n = (size_t)users * per_user;
	s->data = calloc(s->n, sizeof(*s->data));
	s->len = calloc(s->n, sizeof(*s->len));
	if (s->data == NULL || s->len == NULL) {
		lg_media_free(s);
		return -1;
	}
	for (size_t k = 0; k < s->n; k++) {
		uint32_t w = lg_media_sizes[k % per_user % nsizes].w;
		uint32_t h = lg_media_sizes[k % per_user % nsizes].h;
		size_t   len = lg_png_size(w, h);
		if ((s->data[k] = malloc(len)) == NULL ||
		    (s->len[k] = lg_png(s->data[k], len, w, h, &r)) == 0) {
			lg_media_free(s);
			return -1;
		}
		s->bytes += s->len[k];
	}
	return 0;
}

void
lg_media_free(lg_media_set *s)
{
	for (size_t k = 0; s->data != NULL && k < s->n; k++) {
		free(s->data[k]);
	}
	free(s->data);
	free(s->len);
	memset(s, 0, sizeof(*s));
}

/* ---- the passes ---- */

enum { LG_PASS_UP, LG_PASS_PUBLISH, LG_PASS_DOWN };

typedef struct lg_media_job {
	const lg_media_backend *b;
	const lg_media_set     *s;
	char (*refs)[LG_MEDIA_REF_MAX];
	size_t  *stored, *preview; /* per image, from its upload */
	uint32_t tid, threads;
	int      pass;
	lg_hist  h;
	uint64_t errors;
} lg_media_job;

/* lg_media_fail counts a failed call and reports the first of each thread. */
static void
lg_media_fail(lg_media_job *j, const char *what, size_t k)
{
	if (j->errors++ == 0) {
		fprintf(stderr, "warble-load: %s: %s of image %zu failed\n", j->b->name, what, k);
	}
}

static void *
lg_media_main(void *arg)
{
	lg_media_job       *j = arg;
	const lg_media_set *s = j->s;
	lg_conn            *c = j->b->conn_open(j->b->ctx);

	if (c == NULL) {
		j->errors++;
		return NULL;
	}
	if (j->pass == LG_PASS_UP) { /* the images of users tid, tid + T, ... */
		for (uint32_t u = j->tid; u < s->users; u += j->threads) {
			for (size_t k = (size_t)u * s->per_user; k < (size_t)(u + 1) * s->per_user;
			     k++) {
				uint64_t t0 = lg_now_us();
				if (j->b->put(c, u, s->data[k], s->len[k], j->refs[k],
				        &j->stored[k], &j->preview[k]) != 0) {
					lg_media_fail(j, "upload", k);
				}
				lg_hist_add(&j->h, lg_now_us() - t0);
			}
		}
	} else if (j->pass == LG_PASS_PUBLISH) {
		for (uint32_t u = j->tid; u < s->users; u += j->threads) {
			for (size_t i = 0; i < s->per_user; i += LG_MEDIA_PER_POST) {
				size_t k = (size_t)u * s->per_user + i;
				size_t n = s->per_user - i < LG_MEDIA_PER_POST ? s->per_user - i
				                                               : LG_MEDIA_PER_POST;
				if (j->b->publish(c, u, j->refs + k, n) != 0) {
					lg_media_fail(j, "publish", k);
				}
			}
		}
	} else { /* round r: images tid + r, tid + r + T, ...: every user's, mostly uploaded by other threads */
		for (uint32_t r = 0; r < LG_MEDIA_DOWN_ROUNDS; r++) {
			for (size_t k = (j->tid + r) % j->threads; k < s->n; k += j->threads) {
				uint64_t t0 = lg_now_us();
				if (j->b->get(c, j->refs[k], s->data[k], s->len[k], j->stored[k]) !=
				    0) {
					lg_media_fail(j, "download", k);
				}
				lg_hist_add(&j->h, lg_now_us() - t0);
			}
		}
	}
	j->b->conn_close(c);
	return NULL;
}

/* lg_media_srv_cpu sums the CPU of srv's processes (0 without srv). */
static uint64_t
lg_media_srv_cpu(const lg_servers *srv)
{
	uint64_t sum = 0;

	for (int i = 0; srv != NULL && i < srv->n; i++) {
		sum += lg_servers_cpu(srv, i);
	}
	return sum;
}

/* lg_media_pass runs one pass on threads threads; *secs gets its wall time, h (if not NULL) the latencies, *cpu_us the servers' CPU. */
static uint64_t
lg_media_pass(const lg_media_backend *b, const lg_media_set *s, char (*refs)[LG_MEDIA_REF_MAX],
    size_t *stored, size_t *preview, uint32_t threads, int pass, const lg_servers *srv,
    double *secs, lg_hist *h, uint64_t *cpu_us)
{
	pthread_t     th[LG_MEDIA_MAX_THREADS];
	lg_media_job *jobs = calloc(threads, sizeof(*jobs));
	uint64_t      errors = 0, cpu0 = lg_media_srv_cpu(srv), t0 = lg_now_us();
	uint32_t      started = 0;

	if (jobs == NULL) {
		return 1;
	}
	for (uint32_t i = 0; i < threads; i++) {
		jobs[i] = (lg_media_job) { .b = b,
			.s = s,
			.refs = refs,
			.stored = stored,
			.preview = preview,
			.tid = i,
			.threads = threads,
			.pass = pass };
		if (pthread_create(&th[i], NULL, lg_media_main, &jobs[i]) != 0) {
			errors++;
			break;
		}
		started++;
	}
	for (uint32_t i = 0; i < started; i++) {
		pthread_join(th[i], NULL);
		errors += jobs[i].errors;
		if (h != NULL) {
			lg_hist_merge(h, &jobs[i].h);
		}
	}
	*secs = (lg_now_us() - t0) / 1e6;
	if (cpu_us != NULL) {
		uint64_t cpu1 = lg_media_srv_cpu(srv);
		*cpu_us = cpu1 > cpu0 ? cpu1 - cpu0 : 0;
	}
	free(jobs);
	return errors;
}

int
lg_media_run(const lg_media_backend *b, const lg_media_set *s, uint32_t threads,
    const lg_servers *srv, lg_media_result *r)
{
	char(*refs)[LG_MEDIA_REF_MAX] = calloc(s->n, sizeof(*refs));
	size_t *stored = calloc(s->n, sizeof(*stored)), *preview = calloc(s->n, sizeof(*preview));

	memset(r, 0, sizeof(*r));
	if (refs == NULL || stored == NULL || preview == NULL) {
		free(refs);
		free(stored);
		free(preview);
		return -1;
	}
	threads = threads < 1 ? 1 : threads > LG_MEDIA_MAX_THREADS ? LG_MEDIA_MAX_THREADS : threads;
	r->images = s->n;
	r->bytes = s->bytes;
	r->errors = lg_media_pass(b, s, refs, stored, preview, threads, LG_PASS_UP, srv, &r->up_s,
	    &r->up, &r->srv_up_cpu_us);
	for (size_t k = 0; k < s->n; k++) {
		r->stored_bytes += stored[k];
		r->preview_bytes += preview[k];
	}
	if (r->errors == 0 && b->publish != NULL) {
		r->errors += lg_media_pass(b, s, refs, stored, preview, threads, LG_PASS_PUBLISH,
		    NULL, &r->publish_s, NULL, NULL);
	}
	if (r->errors == 0) {
		r->errors += lg_media_pass(b, s, refs, stored, preview, threads, LG_PASS_DOWN, srv,
		    &r->down_s, &r->down, &r->srv_down_cpu_us);
	}
	free(refs);
	free(stored);
	free(preview);
	return r->errors == 0 ? 0 : -1;
}

/* ---- report ---- */

static double
lg_mib_s(uint64_t bytes, double secs)
{
	return secs > 0 ? bytes / 1048576.0 / secs : 0.0;
}

/* lg_cpu_ms_per_mib is the servers' CPU per MiB moved, ms. */
static double
lg_cpu_ms_per_mib(uint64_t cpu_us, uint64_t bytes)
{
	return bytes > 0 ? cpu_us / 1e3 / (bytes / 1048576.0) : 0.0;
}

/* lg_down_bytes is what the download pass moved: every image as stored, each round. */
static uint64_t
lg_down_bytes(const lg_media_result *r)
{
	return (r->stored_bytes > 0 ? r->stored_bytes : r->bytes) * LG_MEDIA_DOWN_ROUNDS;
}

void
lg_media_print(const char *name, const lg_media_result *r)
{
	double n = r->images ? (double)r->images : 1.0;

	printf("%-9s %5llu %9.1f %9.1f %8.2f / %-7.2f %8.2f / %-7.2f %11.0f %9.0f %9.0f %9.0f "
	       "%6.3f  %5.1f / %.1f\n",
	    name, (unsigned long long)r->images, lg_mib_s(r->bytes, r->up_s),
	    lg_mib_s(lg_down_bytes(r), r->down_s), lg_hist_q(&r->up, 0.5) / 1e3,
	    lg_hist_q(&r->up, 0.99) / 1e3, lg_hist_q(&r->down, 0.5) / 1e3,
	    lg_hist_q(&r->down, 0.99) / 1e3, (double)r->disk_bytes / n, (double)r->bytes / n,
	    (double)r->stored_bytes / n, (double)r->preview_bytes / n,
	    r->bytes ? (double)r->disk_bytes / r->bytes : 0.0,
	    lg_cpu_ms_per_mib(r->srv_up_cpu_us, r->bytes),
	    lg_cpu_ms_per_mib(r->srv_down_cpu_us, lg_down_bytes(r)));
}

json_t *
lg_media_json(const lg_media_result *r)
{
	double  n = r->images ? (double)r->images : 1.0;
	json_t *o = json_pack(
	    "{s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I}",
	    "images", (json_int_t)r->images, "raw_bytes", (json_int_t)r->bytes, "upload_mib_s",
	    lg_mib_s(r->bytes, r->up_s), "download_mib_s", lg_mib_s(lg_down_bytes(r), r->down_s),
	    "upload_s", r->up_s, "download_s", r->down_s, "upload_p50_ms",
	    lg_hist_q(&r->up, 0.5) / 1e3, "upload_p99_ms", lg_hist_q(&r->up, 0.99) / 1e3,
	    "download_p50_ms", lg_hist_q(&r->down, 0.5) / 1e3, "download_p99_ms",
	    lg_hist_q(&r->down, 0.99) / 1e3, "raw_bytes_per_image", (double)r->bytes / n,
	    "disk_bytes_per_image", (double)r->disk_bytes / n, "disk_over_raw",
	    r->bytes ? (double)r->disk_bytes / r->bytes : 0.0, "server_cpu_ms_per_mib_up",
	    lg_cpu_ms_per_mib(r->srv_up_cpu_us, r->bytes), "server_cpu_ms_per_mib_down",
	    lg_cpu_ms_per_mib(r->srv_down_cpu_us, lg_down_bytes(r)), "errors",
	    (json_int_t)r->errors);

	if (o != NULL) {
		json_object_set_new(o, "download_rounds", json_integer(LG_MEDIA_DOWN_ROUNDS));
		json_object_set_new(
		    o, "stored_bytes_per_image", json_real((double)r->stored_bytes / n));
		json_object_set_new(
		    o, "preview_bytes_per_image", json_real((double)r->preview_bytes / n));
	}
	if (o != NULL && r->publish_s > 0) {
		json_object_set_new(o, "publish_s", json_real(r->publish_s));
	}
	if (o != NULL && r->disk_compacted_bytes > 0) {
		json_object_set_new(o, "disk_bytes_per_image_compacted",
		    json_real((double)r->disk_compacted_bytes / n));
	}
	if (o != NULL && r->live_growth_bytes > 0) {
		json_object_set_new(
		    o, "live_growth_bytes_per_image", json_real((double)r->live_growth_bytes / n));
	}
	return o;
}
