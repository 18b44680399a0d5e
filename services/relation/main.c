/* main.c - warble-relation: follows, fans, counts and the follow event log. */
#include "rel.h"
#include "rel_schema.h"

int
main(int argc, char **argv)
{
	static const rt_service service = {
		.name = "relation",
		.summary = "the Warble relation service",
		.listen = RT_OPT_URL(WB_EP_RELATION, "listen URL", NULL),
		.opts = rel_daemon_opts,
		.nfams = REL_FAM_NFAMS,
		.families = rel_schema,
		.open = rel_daemon_open,
		.close = rel_daemon_close,
	};

	return rt_daemon_main(&service, argc, argv);
}
