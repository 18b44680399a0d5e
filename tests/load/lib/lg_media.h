/*
 * lg_media.h - the media phase of warble-load: images made in memory,
 * uploaded and downloaded through each system with the same bytes and
 * the same concurrency.
 *
 *   images   valid PNGs (signature, IHDR, one IDAT of stored deflate
 *            blocks over random pixels, IEND, every CRC right): as
 *            incompressible as a photo, in a size mix of 64, 256 and
 *            900 KiB files; image k belongs to user k / per_user
 *   upload   each thread stores the images of its users, one call each
 *   publish  (Warble) each user's images go into posts, four to a post,
 *            so that they are public
 *   download each thread reads back a share of every user's images (most
 *            of them uploaded by other threads) and checks them (each
 *            byte where a system stores the bytes sent; Warble stores the
 *            image written again: the size its upload reply gave, and
 *            the type); every image LG_MEDIA_DOWN_ROUNDS times, a pass
 *            being short
 */
#ifndef LG_MEDIA_H
#define LG_MEDIA_H

#include <jansson.h>

#include "lg.h"
#include "lg_report.h"

#define LG_MEDIA_DOWN_ROUNDS 3  /* downloads of each image */
#define LG_MEDIA_REF_MAX     48 /* a stored image's name in its system ("<author>-<id>", a row id) */

/* The images of a run. */
typedef struct lg_media_set {
	uint32_t  users, per_user;
	size_t    n;     /* users * per_user */
	uint8_t **data;  /* image k's bytes */
	size_t   *len;   /* and its length */
	uint64_t  bytes; /* all of them */
} lg_media_set;

/* lg_png writes a w x h RGB PNG of random pixels (stored deflate: incompressible) into out (cap bytes); returns its length, or 0 if cap is too small. */
size_t lg_png(uint8_t *out, size_t cap, uint32_t w, uint32_t h, uint64_t *seed);

/* lg_png_size is the length lg_png gives a w x h image. */
size_t lg_png_size(uint32_t w, uint32_t h);

/* lg_media_make makes users * per_user images, seeded; 0 or -1. */
int lg_media_make(lg_media_set *s, uint32_t users, uint32_t per_user, uint64_t seed);

/* lg_media_free frees the images. */
void lg_media_free(lg_media_set *s);

/* A system's side of the media phase; a connection (lg_conn) per thread. */
typedef struct lg_media_backend {
	const char *name;
	void       *ctx;
	lg_conn *(*conn_open)(void *ctx);
	void (*conn_close)(lg_conn *c);
	/* put stores n bytes as user u; ref (LG_MEDIA_REF_MAX) gets the image's name, *stored
	 * the bytes stored and *preview its preview's (0: none). */
	int (*put)(lg_conn *c, uint32_t u, const void *p, size_t n, char *ref, size_t *stored,
	    size_t *preview);
	/* publish attaches images refs[0..n) (n <= 4) of user u to a new post (NULL: none to do). */
	int (*publish)(lg_conn *c, uint32_t u, char (*refs)[LG_MEDIA_REF_MAX], size_t n);
	/* get reads image ref and checks it is what was stored of the n bytes p (-1 if not). */
	int (*get)(lg_conn *c, const char *ref, const void *p, size_t n, size_t stored);
} lg_media_backend;

/* Results of one system's media phase. */
typedef struct lg_media_result {
	uint64_t images, bytes;                  /* stored, and their raw size */
	uint64_t stored_bytes, preview_bytes;    /* what the system kept of them, and previews */
	double   up_s, publish_s, down_s;        /* wall time of each pass */
	lg_hist  up, down;                       /* per-image latency */
	uint64_t errors;                         /* failed or wrong calls */
	uint64_t srv_up_cpu_us, srv_down_cpu_us; /* the servers' CPU over each pass */
	uint64_t disk_bytes;                     /* the images' bytes on disk (see the caller) */
	uint64_t disk_compacted_bytes; /* Warble: after a full compaction (0: not measured) */
	uint64_t live_growth_bytes;    /* Warble: its content folder's growth while running */
} lg_media_result;

/* lg_media_run uploads every image of s through b on threads connections, publishes them (if b can), downloads and checks them; CPU of srv's processes per pass (srv may be NULL); 0, or -1 if any call failed. */
int lg_media_run(const lg_media_backend *b, const lg_media_set *s, uint32_t threads,
    const lg_servers *srv, lg_media_result *r);

/* lg_media_print prints a system's line of the media table. */
void lg_media_print(const char *name, const lg_media_result *r);

/* lg_media_json is report.json's record of one system's media phase. */
json_t *lg_media_json(const lg_media_result *r);

#endif
