/*
 * content_daemon.c - warble-content's options and what it opens around
 * the service: the post event log, its publisher and its retention; the
 * image limits and decoders (content_decode.c states the memory they
 * bound); the pace of publishes while the inbox is behind (evlog_pace.c);
 * the follower of the user service's deletions (content_erase.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "content.h"
#include "content_image.h"
#include "content_schema.h"
#include "rt_log.h"
#include "rt_pubsub.h"
#include "wb_id.h"

static const char *content_pub_url, *content_media_max, *content_media_pixels, *content_media_rate,
    *content_media_decodes_opt, *content_user_url, *content_user_pub_url, *content_log_retention,
    *content_log_max_age, *content_publish_lag, *content_publish_wait;
static uint64_t        content_max_bytes, content_max_pixels, content_per_minute, content_decodes;
static evlog_pace      content_pace;
static evlog_retention content_retention;

static rt_opt content_daemon_opts[] = {
	RT_OPT_URL(WB_EP_CONTENT_PUB, "events PUB URL", &content_pub_url),
	RT_OPT_URL(WB_EP_USER, "user service URL (its log of deletions)", &content_user_url),
	RT_OPT_URL(WB_EP_USER_PUB, "user service's events (deletions)", &content_user_pub_url),
	{ "media-max", "WARBLE_MEDIA_MAX", "1048576", "largest image upload, bytes (at most 3 MiB)",
	    &content_media_max },
	{ "media-pixels", "WARBLE_MEDIA_PIXELS", "25000000",
	    "largest image, width x height (refuses decompression bombs)", &content_media_pixels },
	{ "media-rate", "WARBLE_MEDIA_RATE", "30",
	    "image uploads per user per minute (0: no limit)", &content_media_rate },
	{ "media-decodes", "WARBLE_MEDIA_DECODES", "2",
	    "images decoded at once, each holding up to 16 bytes a pixel of media-pixels",
	    &content_media_decodes_opt },
	{ "publish-lag", "WARBLE_PUBLISH_LAG", "50",
	    "ms: a publish or delete waits while an inbox has not applied a post this old "
	    "(0: never waits)",
	    &content_publish_lag },
	{ "publish-wait", "WARBLE_PUBLISH_WAIT", "1000",
	    "ms: the longest a publish or delete waits for the inbox; then it goes on",
	    &content_publish_wait },
	EVLOG_OPT_RETENTION(&content_log_retention),
	EVLOG_OPT_MAX_AGE(&content_log_max_age),
	{ NULL },
};

static int
content_daemon_config(void)
{
	int rc = rt_config_u64(
	    "media-max", content_media_max, 1, WB_MEDIA_MAX_LIMIT, &content_max_bytes);

	if (rc == WB_OK) {
		rc = rt_config_u64(
		    "media-pixels", content_media_pixels, 1, UINT32_MAX, &content_max_pixels);
	}
	if (rc == WB_OK) {
		rc = rt_config_u64(
		    "media-rate", content_media_rate, 0, 1000000, &content_per_minute);
	}
	if (rc == WB_OK) {
		rc = rt_config_u64(
		    "media-decodes", content_media_decodes_opt, 1, 64, &content_decodes);
	}
	if (rc == WB_OK) {
		rc = rt_config_u64(
		    "publish-lag", content_publish_lag, 0, 3600000, &content_pace.lag_ms);
	}
	if (rc == WB_OK) {
		rc = rt_config_u64(
		    "publish-wait", content_publish_wait, 0, 3600000, &content_pace.wait_ms);
	}
	if (rc == WB_OK) {
		rc = evlog_retention_config(
		    &content_retention, content_log_retention, content_log_max_age);
	}
	return rc;
}

/* Everything warble-content opens, closed in reverse. */
typedef struct content_daemon {
	rt_pub    *pub;
	evlog     *log;
	content   *svc;
	rt_client *users;     /* user.log */
	evlog_sub *deletions; /* the user service's log */
} content_daemon;

static void
content_daemon_close(void *arg)
{
	content_daemon *d = arg;

	if (d == NULL) {
		return;
	}
	evlog_sub_close(d->deletions);
	rt_client_close(d->users);
	content_close(d->svc);
	evlog_close(d->log);
	rt_pub_close(d->pub);
	free(d);
}

static int
content_daemon_open(const rt_env *env, void **out)
{
	content_daemon *d = calloc(1, sizeof(*d));
	char            source[24]; /* the log's name, as the inbox knows it */
	int             rc;

	if (d == NULL) {
		return WB_ENOMEM;
	}
	snprintf(source, sizeof(source), "content/%u", env->shard.index);
	if ((rc = rt_pub_open(&d->pub, content_pub_url, env->tls, RT_PEER_INBOX)) != WB_OK ||
	    (rc = evlog_open(&d->log, env->store, CONTENT_FAM_LOG, source, d->pub)) != WB_OK ||
	    (rc = evlog_gauges(d->log, env->srv)) != WB_OK ||
	    (rc = evlog_retain(d->log, &content_retention)) != WB_OK ||
	    (rc = content_open(&d->svc, env->store, d->log)) != WB_OK ||
	    (rc = content_media_limits(d->svc, content_max_bytes, content_max_pixels,
	         (unsigned)content_per_minute)) != WB_OK ||
	    (rc = content_media_decodes(d->svc, (unsigned)content_decodes)) != WB_OK ||
	    (rc = content_gauges(d->svc, env->srv)) != WB_OK ||
	    (rc = content_erase_open(d->svc, env->shard)) != WB_OK ||
	    (rc = rt_client_open(&d->users, content_user_url,
	         &(rt_client_opts) { .timeout_ms = 5000, .tls = env->tls })) != WB_OK ||
	    (rc = evlog_sub_open(&d->deletions, &(evlog_sub_opts) { .source = "user",
	                                            .pub_url = content_user_pub_url,
	                                            .tls = env->tls,
	                                            .client = d->users,
	                                            .log_op = WB_OP_USER_LOG,
	                                            .t = env->store,
	                                            .fam = CONTENT_FAM_META,
	                                            .apply = content_erase_apply,
	                                            .arg = d->svc })) != WB_OK ||
	    (rc = rt_server_gauge(env->srv, "user_applied", evlog_sub_applied, d->deletions)) !=
	        WB_OK ||
	    (rc = rt_server_gauge(env->srv, "user_behind", evlog_sub_behind, d->deletions)) !=
	        WB_OK) {
		RT_ERRORF("cannot open (events on %s): %s", content_pub_url, wb_strerror(rc));
		content_daemon_close(d);
		return rc;
	}
	/* waiters are stood in for by the spares, so the inbox's reports are still served */
	content_pace.waiters = (unsigned)(env->nspares > 0 ? env->nspares : env->nworkers / 2);
	evlog_pace_set(d->log, &content_pace);
	rt_admin_logs(env->admin, evlog_backup_logs, d->log, false);
	RT_INFOF(
	    "events on %s, last seq %llu", content_pub_url, (unsigned long long)evlog_last(d->log));
	RT_INFOF("images: %llu decoded at once, each up to %llu pixels: at most %llu MB of pixels",
	    (unsigned long long)content_decodes, (unsigned long long)content_max_pixels,
	    (unsigned long long)(content_decodes * content_max_pixels * CONTENT_IMAGE_PER_PIX /
	                         1000000));
	*out = d;
	return WB_OK;
}

/* content_daemon_svc gives the handlers' argument: the service inside d. */
static void *
content_daemon_svc(void *arg)
{
	content_daemon *d = arg;

	return d->svc;
}

/* content_daemon_start begins what runs once the server listens. */
static int
content_daemon_start(void *arg)
{
	content_daemon *d = arg;
	int             rc = content_start(d->svc);

	return rc == WB_OK ? evlog_sub_start(d->deletions) : rc;
}

const rt_service content_service = {
	.name = "content",
	.summary = "the Warble content service",
	.metrics_url = "http://127.0.0.1:9103",
	.listen = RT_OPT_URL(WB_EP_CONTENT, "listen URL", NULL),
	.opts = content_daemon_opts,
	.config = content_daemon_config,
	.nfams = CONTENT_FAM_COUNT,
	.families = content_schema_families,
	.open = content_daemon_open,
	.routes = content_routes,
	.route_arg = content_daemon_svc,
	.sharded = true,
	.start = content_daemon_start,
	.close = content_daemon_close,
	.spares = 1, /* a worker waiting on a decoder (content_decode.c) is stood in for */
};
