/* main.c - warble-inbox: versioned inbox cells per reader, filled by fan-out of the event logs. */
#include "inbox.h"

int
main(int argc, char **argv)
{
	return rt_daemon_main(&inbox_service, argc, argv);
}
