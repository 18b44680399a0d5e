/*
 * rel_daemon.c - warble-relation's options and what it opens around the
 * service: the event log, its publisher and its retention, a client of
 * the user service, clients of the other relation shards (blocks across
 * shards), and the follower of the user service's deletions (rel_erase.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "rel.h"
#include "rt_log.h"
#include "rt_pubsub.h"
#include "rel_schema.h"

static const char *rel_pub_url, *rel_user_url, *rel_peer_urls, *rel_user_pub_url,
    *rel_log_retention, *rel_log_max_age;
static evlog_retention rel_retention;

static rt_opt rel_daemon_opts[] = {
	RT_OPT_URL(WB_EP_RELATION_PUB, "event PUB URL", &rel_pub_url),
	RT_OPT_URL(WB_EP_USER, "user service URL", &rel_user_url),
	RT_OPT_URL(WB_EP_RELATION_URLS,
	    "every relation shard, in order, comma-separated (with more than one: blocks "
	    "across shards)",
	    &rel_peer_urls),
	RT_OPT_URL(WB_EP_USER_PUB, "user service's events (deletions)", &rel_user_pub_url),
	EVLOG_OPT_RETENTION(&rel_log_retention),
	EVLOG_OPT_MAX_AGE(&rel_log_max_age),
	{ NULL },
};

static int
rel_daemon_config(void)
{
	return evlog_retention_config(&rel_retention, rel_log_retention, rel_log_max_age);
}

/* Everything warble-relation opens, closed in reverse. */
typedef struct rel_daemon {
	rt_pub    *pub;
	evlog     *log;
	rt_client *users, *bulk_users;
	rt_shards *peers;
	rel_svc   *svc;
	evlog_sub *deletions; /* the user service's log */
} rel_daemon;

static void
rel_daemon_close(void *arg)
{
	rel_daemon *d = arg;

	if (d == NULL) {
		return;
	}
	evlog_sub_close(d->deletions);
	rel_svc_close(d->svc);
	rt_shards_close(d->peers);
	rt_client_close(d->bulk_users);
	rt_client_close(d->users);
	evlog_close(d->log);
	rt_pub_close(d->pub);
	free(d);
}

static int
rel_daemon_open(const rt_env *env, void **out)
{
	rel_daemon *d = calloc(1, sizeof(*d));
	/* user.get is idempotent: one resend rides out a user service restart,
	 * and the whole check stays well inside a caller's 5 s deadline */
	rt_client_opts uopts = { .timeout_ms = 1500, .retries = 1 };
	/* rel.follow_many asks 1000 uids at a time: a busy or sanitized user
	 * service took more than 750 ms for one batch (CI, ASan) */
	rt_client_opts bopts = { .timeout_ms = 60000 };
	/* rel.block_peer: the blocker's request waits on it once; the outbox
	 * sends it again on any failure, so a short deadline and no resend */
	rt_client_opts popts = { .timeout_ms = 1000 };
	char           source[24]; /* the log's name, as the inbox knows it */
	int            rc;

	snprintf(source, sizeof(source), "relation/%u", env->shard.index);

	if (d == NULL) {
		return WB_ENOMEM;
	}
	if (env->upgrade && (rc = rel_upgrade(env->store, env->dir)) != WB_OK) {
		free(d);
		return rc;
	}
	uopts.tls = bopts.tls = popts.tls = env->tls;
	if (env->shard.count > 1 && rt_shards_list_count(rel_peer_urls) != env->shard.count) {
		RT_ERRORF("this is relation shard %u/%u, but relation-urls (WARBLE_RELATION_URLS) "
		          "lists %u: blocks between users of two shards need every shard's address",
		    env->shard.index, env->shard.count, rt_shards_list_count(rel_peer_urls));
		free(d);
		return WB_EINVAL;
	}
	if (env->shard.count > 1 &&
	    (rc = rt_shards_open(&d->peers, rel_peer_urls, env->url, &popts)) != WB_OK) {
		free(d);
		return rc;
	}
	if ((rc = rt_pub_open(&d->pub, rel_pub_url, env->tls, RT_PEER_INBOX)) != WB_OK ||
	    (rc = evlog_open(&d->log, env->store, REL_FAM_LOG, source, d->pub)) != WB_OK ||
	    (rc = evlog_gauges(d->log, env->srv)) != WB_OK ||
	    (rc = evlog_retain(d->log, &rel_retention)) != WB_OK ||
	    (rc = rt_client_open(&d->users, rel_user_url, &uopts)) != WB_OK ||
	    (rc = rt_client_open(&d->bulk_users, rel_user_url, &bopts)) != WB_OK ||
	    (rc = rel_svc_open(&d->svc, env->store, d->log, env->shard, d->users, d->bulk_users,
	         d->peers)) != WB_OK ||
	    (rc = rel_svc_gauges(d->svc, env->srv)) != WB_OK ||
	    (rc = evlog_sub_open(&d->deletions, &(evlog_sub_opts) { .source = "user",
	                                            .pub_url = rel_user_pub_url,
	                                            .tls = env->tls,
	                                            .client = d->users,
	                                            .log_op = WB_OP_USER_LOG,
	                                            .t = env->store,
	                                            .fam = REL_FAM_META,
	                                            .apply = rel_erase_apply,
	                                            .arg = d->svc })) != WB_OK ||
	    (rc = rt_server_gauge(env->srv, "user_applied", evlog_sub_applied, d->deletions)) !=
	        WB_OK ||
	    (rc = rt_server_gauge(env->srv, "user_behind", evlog_sub_behind, d->deletions)) !=
	        WB_OK) {
		RT_ERRORF("cannot open (events on %s): %s", rel_pub_url, wb_strerror(rc));
		rel_daemon_close(d);
		return rc;
	}
	rt_admin_logs(env->admin, evlog_backup_logs, d->log, false);
	RT_INFOF("events on %s", rel_pub_url);
	*out = d;
	return WB_OK;
}

/* rel_daemon_start starts the service's outbox and follows the user service's deletions,
 * once the server listens. */
static int
rel_daemon_start(void *arg)
{
	rel_daemon *d = arg;
	int         rc = rel_svc_start(d->svc);

	return rc == WB_OK ? evlog_sub_start(d->deletions) : rc;
}

/* rel_daemon_svc gives the handlers' argument: the service inside d. */
static void *
rel_daemon_svc(void *arg)
{
	rel_daemon *d = arg;

	return d->svc;
}

const rt_service rel_service = {
	.name = "relation",
	.summary = "the Warble relation service",
	.metrics_url = "http://127.0.0.1:9102",
	.listen = RT_OPT_URL(WB_EP_RELATION, "listen URL", NULL),
	.opts = rel_daemon_opts,
	.config = rel_daemon_config,
	.nfams = REL_FAM_NFAMS,
	.families = rel_schema,
	.open = rel_daemon_open,
	.routes = rel_routes,
	.route_arg = rel_daemon_svc,
	.sharded = true,
	.start = rel_daemon_start,
	.close = rel_daemon_close,
};
