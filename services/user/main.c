/* main.c - warble-user: accounts, logins and sessions. */
#include "user.h"
#include "user_schema.h"

int
main(int argc, char **argv)
{
	static const rt_service service = {
		.name = "user",
		.summary = "the Warble user service",
		.listen = RT_OPT_URL(WB_EP_USER, "listen URL", NULL),
		.opts = user_daemon_opts,
		.workers_help = "worker threads (password hashing runs there)",
		.config = user_daemon_config,
		.nfams = USER_FAM_COUNT,
		.families = user_daemon_families,
		.open = user_daemon_open,
		.close = user_daemon_close,
	};

	return rt_daemon_main(&service, argc, argv);
}
