/*
 * main.c - warble-gateway: Warble's public API.  msgpack REQ/REP for the
 * SDK and warblectl; HTTP/JSON, the web page and /healthz, /readyz,
 * /metrics; it calls the four services for each request and has no store.
 */
#include "gw.h"

int
main(int argc, char **argv)
{
	static const rt_service service = {
		.name = "gateway",
		.summary = "Warble's public API gateway (msgpack over nng REQ/REP)",
		.listen = RT_OPT_URL(WB_EP_GATEWAY, "listen URL (msgpack API)", NULL),
		.opts = gw_daemon_opts,
		.workers = "16",
		.workers_help = "worker threads (each may wait on a downstream call)",
		.max_workers = 1024,
		.config = gw_daemon_config,
		.open = gw_daemon_open,
		.start = gw_daemon_start,
		.close = gw_daemon_close,
	};

	return rt_daemon_main(&service, argc, argv);
}
