/*
 * main.c - warble: every Warble service in one process.
 *
 * The same services as the five daemons, on the same data folders,
 * addresses and options, opened in the order they depend on each other
 * (user, relation, content, inbox, gateway).  Each still listens on its
 * own address (for warblectl, probes and its peers elsewhere), but a call
 * from one to another runs the callee's handler on the caller's thread
 * (rt_local.h), and the events still travel through each log and its
 * pub/sub socket (inproc:// unless an address is given), so behaviour and
 * guarantees are the five daemons'.
 * docs/operations.md says when to pick which.
 */
#include <stdlib.h>

#include "content.h"
#include "gw.h"
#include "inbox.h"
#include "rel.h"
#include "user.h"

int
main(int argc, char **argv)
{
	static const rt_service *const services[] = {
		&user_service,
		&rel_service,
		&content_service,
		&inbox_service,
		&gw_service,
	};

	/* The event feeds need no socket of the system's when both ends are here. */
	if (setenv("WARBLE_RELATION_PUB_URL", "inproc://warble-relation-events", 0) != 0 ||
	    setenv("WARBLE_CONTENT_PUB_URL", "inproc://warble-content-events", 0) != 0) {
		return 1;
	}
	return rt_daemon_main_all(services, sizeof(services) / sizeof(services[0]), "warble",
	    "every Warble service in one process (user, relation, content, inbox, gateway)", argc,
	    argv);
}
