/*
 * warble-ping - the smallest daemon on the Warble runtime: it serves only
 * the built-in ping and stats operations.  The runtime's tests drive it as
 * a real process; it also shows the shape of every service's main().
 */
#include <stdio.h>
#include <stdlib.h>

#include "rt_daemon.h"
#include "rt_log.h"
#include "rt_server.h"

int
main(int argc, char **argv)
{
	static rt_daemon   d = { .name = "ping" };
	static const char *url;
	rt_opt             opts[] = {
		            { "url", "WARBLE_PING_URL", "tcp://127.0.0.1:7199", "listen URL", &url },
		            { "workers", "WARBLE_WORKERS", "4", "worker threads", &d.workers },
		            { "log-level", "WARBLE_LOG_LEVEL", "info", "debug|info|warn|error", &d.level },
		            { NULL },
	};
	rt_server_opts so = { .name = "ping" };
	rt_server     *srv;
	int            rv;

	rv = rt_daemon_init(&d, opts, "the Warble runtime's test daemon (ping, stats)", argc, argv);
	if (rv != RT_DAEMON_RUN) {
		return rv;
	}
	so.url = url;
	so.workers = (int)d.nworkers;
	if ((rv = rt_server_open(&srv, &so)) != 0) {
		RT_ERRORF("cannot create the server: %s", wb_strerror(rv));
		return rt_daemon_exit(1);
	}
	if ((rv = rt_server_start(srv)) != 0) {
		rt_server_close(srv);
		return rt_daemon_exit(1);
	}
	rt_daemon_wait();
	rt_server_close(srv);
	return rt_daemon_exit(0);
}
