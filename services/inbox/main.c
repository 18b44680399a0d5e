/* main.c - warble-inbox: versioned inbox cells per reader, filled by fan-out of the event logs. */
#include "inbox.h"
#include "inbox_schema.h"

int
main(int argc, char **argv)
{
	static const rt_service service = {
		.name = "inbox",
		.summary = "the Warble inbox service",
		.listen = RT_OPT_URL(WB_EP_INBOX, "listen URL", NULL),
		.opts = inbox_daemon_opts,
		.workers = "4",
		.workers_help = "worker threads (inbox.home)",
		.config = inbox_daemon_config,
		.nfams = INBOX_FAM_COUNT,
		.families = inbox_daemon_families,
		.open = inbox_daemon_open,
		.start = inbox_daemon_start,
		.close = inbox_daemon_close,
	};

	return rt_daemon_main(&service, argc, argv);
}
