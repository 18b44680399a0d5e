/*
 * main.c - warble-gateway: Warble's public API.  msgpack REQ/REP for the
 * SDK and warblectl; HTTP/JSON, the web page and /healthz, /readyz; its
 * figures on its admin port; it calls the four services for each request
 * and has no store.
 */
#include "gw.h"

int
main(int argc, char **argv)
{
	return rt_daemon_main(&gw_service, argc, argv);
}
