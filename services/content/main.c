/* main.c - warble-content: posts by author and by id, and the post event log. */
#include "content.h"

int
main(int argc, char **argv)
{
	return rt_daemon_main(&content_service, argc, argv);
}
