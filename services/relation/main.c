/* main.c - warble-relation: follows, fans, counts and the follow event log. */
#include "rel.h"

int
main(int argc, char **argv)
{
	return rt_daemon_main(&rel_service, argc, argv);
}
