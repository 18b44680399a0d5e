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
 *
 * With --shard i/N (N > 1) the process is shard i of relation, content
 * and inbox, and a gateway: a cluster can be N such processes, a reader's
 * relation and inbox shards in one (the fans of a fan-out an in-process
 * call).  The one user service runs in the process given --user.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "content.h"
#include "gw.h"
#include "inbox.h"
#include "rel.h"
#include "user.h"
#include "wb_slot.h"

/* warble_shards reads the shard count of --shard i/N or WARBLE_SHARD (1 if neither, or malformed: the option's own check says so). */
static unsigned
warble_shards(int argc, char **argv)
{
	const char *v = getenv("WARBLE_SHARD");
	wb_shard    s;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--shard") == 0 && i + 1 < argc) {
			v = argv[i + 1];
		} else if (strncmp(argv[i], "--shard=", 8) == 0) {
			v = argv[i] + 8;
		}
	}
	return v != NULL && wb_shard_parse(v, &s) ? s.count : 1;
}

/* warble_take_flag removes flag from argv; whether it was there. */
static bool
warble_take_flag(int *argc, char **argv, const char *flag)
{
	for (int i = 1; i < *argc; i++) {
		if (strcmp(argv[i], flag) == 0) {
			memmove(&argv[i], &argv[i + 1], (size_t)(*argc - i) * sizeof(*argv));
			(*argc)--;
			return true;
		}
	}
	return false;
}

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
	bool   user = warble_take_flag(&argc, argv, "--user") || warble_shards(argc, argv) == 1;
	size_t first = user ? 0 : 1;

	/* The event feeds need no socket of the system's when both ends are here. */
	if (setenv("WARBLE_RELATION_PUB_URL", "inproc://warble-relation-events", 0) != 0 ||
	    setenv("WARBLE_CONTENT_PUB_URL", "inproc://warble-content-events", 0) != 0 ||
	    setenv("WARBLE_USER_PUB_URL", "inproc://warble-user-events", 0) != 0) {
		return 1;
	}
	return rt_daemon_main_all(services + first, sizeof(services) / sizeof(services[0]) - first,
	    "warble",
	    "every Warble service in one process (user, relation, content, inbox, gateway); with "
	    "--shard i/N, shard i of relation, content and inbox, and a gateway (--user: the user "
	    "service too)",
	    argc, argv);
}
