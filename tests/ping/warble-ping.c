/*
 * warble-ping - the smallest daemon on the Warble runtime: it serves only
 * the built-in ping and stats operations.  The runtime's tests drive it as
 * a real process; it also shows the shape of every service's main().
 */
#include "rt_daemon.h"

int
main(int argc, char **argv)
{
	static const rt_service service = {
		.name = "ping",
		.summary = "the Warble runtime's test daemon (ping, stats)",
		.listen = { "url", "WARBLE_PING_URL", "tcp://127.0.0.1:7199", "listen URL" },
		.workers = "4",
	};

	return rt_daemon_main(&service, argc, argv);
}
