/*
 * warble-ping - the smallest daemon on the Warble runtime: it serves only
 * the built-in ping and stats operations.  The runtime's tests drive it as
 * a real process; it also shows the shape of every service's main().
 */
#include <stdio.h>
#include <stdlib.h>

#include "rt_config.h"
#include "rt_log.h"
#include "rt_server.h"

int
main(int argc, char **argv)
{
	static const char *url, *workers, *contexts, *level;
	rt_opt             opts[] = {
                { "url", "WARBLE_PING_URL", "tcp://127.0.0.1:7199", "listen URL", &url },
                { "workers", "WARBLE_WORKERS", "4", "worker threads", &workers },
                { "contexts", "WARBLE_CONTEXTS", "64", "requests in flight", &contexts },
                { "log-level", "WARBLE_LOG_LEVEL", "info", "debug|info|warn|error", &level },
                { NULL },
	};
	rt_server_opts so = { .name = "ping" };
	rt_server     *srv;
	uint64_t       nworkers, ncontexts;
	int            lvl, rv;

	rv = rt_config_parse(opts, "warble-ping", "the Warble runtime's test daemon (ping, stats)",
	    argc, argv);
	if (rv != 0) {
		return rv == RT_CONFIG_HELP ? 0 : 2;
	}
	if ((lvl = rt_log_level_parse(level)) < 0) {
		fprintf(stderr, "warble-ping: unknown log level '%s'\n", level);
		return 2;
	}
	if (rt_config_u64("--workers", workers, 1, 256, &nworkers) != 0 ||
	    rt_config_u64("--contexts", contexts, 1, 4096, &ncontexts) != 0) {
		return 2;
	}
	rt_log_init("ping", (rt_level) lvl);
	rt_signal_init();

	so.url      = url;
	so.workers  = (int) nworkers;
	so.contexts = (int) ncontexts;
	if ((rv = rt_server_open(&srv, &so)) != 0) {
		RT_ERRORF("cannot create the server: %s", wb_strerror(rv));
		return 1;
	}
	if ((rv = rt_server_start(srv)) != 0) {
		rt_server_close(srv);
		return 1;
	}
	rt_wait_for_signal();
	RT_INFOF("signal received, shutting down");
	rt_server_close(srv);
	rt_fini();
	return 0;
}
