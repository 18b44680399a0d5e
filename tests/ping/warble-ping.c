/*
 * warble-ping - the smallest daemon on the Warble runtime: it serves only
 * the built-in ping, stats and batch operations.  The runtime's tests
 * drive it as a real process (--delay-ms makes each ping take that long,
 * so that calls pile up behind it); it also shows the shape of every
 * service's main().
 */
#include <time.h>

#include "rt_daemon.h"

static const char *ping_delay;
static uint64_t    ping_delay_ms;

static rt_opt ping_opts[] = {
	{ "delay-ms", "WARBLE_PING_DELAY_MS", "0", "how long each ping takes, ms (tests)",
	    &ping_delay },
	{ NULL },
};

static int
ping_config(void)
{
	return rt_config_u64("delay-ms", ping_delay, 0, 60000, &ping_delay_ms);
}

static int
ping_slow(void *arg, const wb_obj *req, wb_obj *rep)
{
	struct timespec ts = { .tv_sec = (time_t)(ping_delay_ms / 1000),
		.tv_nsec = (long)(ping_delay_ms % 1000) * 1000000 };

	(void)arg;
	(void)req;
	(void)rep;
	nanosleep(&ts, NULL);
	return WB_OK;
}

static int
ping_open(const rt_env *env, void **svc)
{
	*svc = NULL;
	return ping_delay_ms > 0 ? rt_server_handle(env->srv, WB_OP_PING, ping_slow, NULL) : WB_OK;
}

int
main(int argc, char **argv)
{
	static const rt_service service = {
		.name = "ping",
		.summary = "the Warble runtime's test daemon (ping, stats)",
		.listen = { "url", "WARBLE_PING_URL", "tcp://127.0.0.1:7199", "listen URL" },
		.opts = ping_opts,
		.workers = "4",
		.config = ping_config,
		.open = ping_open,
	};

	return rt_daemon_main(&service, argc, argv);
}
