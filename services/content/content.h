/*
 * content.h - the content service: posts by author and by id, and the
 * post event log that drives inbox fan-out.
 */
#ifndef CONTENT_H
#define CONTENT_H

#include <stdint.h>

#include "evlog.h"
#include "evlog_sub.h"
#include "hb.h"
#include "rt_daemon.h"
#include "rt_server.h"

#define CONTENT_GET_MAX         1000                 /* ids per post.get */
#define CONTENT_PAGE_DEFAULT    20                   /* post.timeline default limit */
#define CONTENT_PAGE_MAX        100                  /* post.timeline largest limit */
#define CONTENT_MEDIA_MAX       WB_MEDIA_MAX_DEFAULT /* default bytes of one image */
#define CONTENT_MEDIA_PIXELS    25000000             /* default pixels of one image */
#define CONTENT_MEDIA_RATE      30                   /* default uploads per user per minute */
#define CONTENT_MEDIA_DECODES   2                    /* default images decoded at once */
#define CONTENT_AUTHORS_DEFAULT 1000                 /* post.authors default limit */
#define CONTENT_AUTHORS_MAX     1000                 /* post.authors largest limit */

typedef struct content content;

/* content_open prepares the service over an open table and log. */
int content_open(content **out, hb_table *t, evlog *log);

/* content_media_limits sets the largest image in bytes and pixels and the uploads a user may make per minute (0: no limit). */
int content_media_limits(content *c, size_t max_bytes, uint64_t max_pixels, unsigned per_minute);

/* content_media_decodes sets how many images may be decoded at once (content_decode.c: each holds
 * up to 16 bytes a pixel of the pixel limit). */
int content_media_decodes(content *c, unsigned n);

/* content_close stops the re-encode pass and frees the service (the table and log stay open). */
void content_close(content *c);

/* content_routes is the service's route table (handlers take the content). */
extern const rt_route content_routes[];

/* content_gauges adds the service's figures to a server's stats. */
int content_gauges(content *c, rt_server *s);

/* content_start begins the re-encode pass if the store has never had one (content_reencode.c). */
int content_start(content *c);

/* content_service describes warble-content to rt_daemon_main (content_daemon.c). */
extern const rt_service content_service;

/* content_publish handles post.publish {uid, text?, title?, category?, images?} -> {id, time}. */
int content_publish(void *arg, const wb_obj *req, wb_obj *rep);

/* content_delete handles post.delete {uid, id}: the author only. */
int content_delete(void *arg, const wb_obj *req, wb_obj *rep);

/* content_get handles post.get {ids} -> {posts, missing}. */
int content_get(void *arg, const wb_obj *req, wb_obj *rep);

/* content_timeline handles post.timeline {uid, before?, limit?, since?, until?, category?} -> {posts, next?}. */
int content_timeline(void *arg, const wb_obj *req, wb_obj *rep);

/* content_media_put handles media.put {uid, data} -> {media, type, width, height, size,
 * preview_width, preview_height, preview_size}: an upload, decoded and written again
 * (content_image.h). */
int content_media_put(void *arg, const wb_obj *req, wb_obj *rep);

/* content_media_get handles media.get {media, uid?, preview?} -> {media, type, width, height, size,
 * public, preview?, data}. */
int content_media_get(void *arg, const wb_obj *req, wb_obj *rep);

/* content_media_reencode handles media.reencode: starts the pass that writes every stored image
 * again (content_reencode.c) unless it runs, and answers as media.reencode_status. */
int content_media_reencode(void *arg, const wb_obj *req, wb_obj *rep);

/* content_media_reencode_status handles media.reencode_status -> {state, done, total, count,
 * errors, elapsed_ms, msg?}. */
int content_media_reencode_status(void *arg, const wb_obj *req, wb_obj *rep);

/* content_erase_open readies the erasure of deleted authors on the shard that keeps shard's authors
 * (content_erase.c). */
int content_erase_open(content *c, wb_shard shard);

/* content_erase_apply applies an event of the user service's log (an evlog_apply_fn; arg is the
 * content): "erase" {uid} erases that author's posts and images (content_erase.c). */
int content_erase_apply(void *arg, evlog_sub *s, const wb_obj *ev, hb_batch *b);

/* content_log handles post.log {from, limit?, consumer?, applied?} -> {events, last, first} (evlog_serve). */
int content_log(void *arg, const wb_obj *req, wb_obj *rep);

/* content_authors handles post.authors {after?, limit?, slots?} -> {uids, next?}: the users with
 * posts here, ascending. */
int content_authors(void *arg, const wb_obj *req, wb_obj *rep);

#endif
