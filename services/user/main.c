/* main.c - warble-user: accounts, logins and sessions. */
#include "user.h"

int
main(int argc, char **argv)
{
	return rt_daemon_main(&user_service, argc, argv);
}
