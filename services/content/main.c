/* main.c - warble-content: posts by author and by id, and the post event log. */
#include "content.h"
#include "content_schema.h"

int
main(int argc, char **argv)
{
	static const rt_service service = {
		.name = "content",
		.summary = "the Warble content service",
		.listen = RT_OPT_URL(WB_EP_CONTENT, "listen URL", NULL),
		.opts = content_daemon_opts,
		.config = content_daemon_config,
		.nfams = CONTENT_FAM_COUNT,
		.families = content_schema_families,
		.open = content_daemon_open,
		.close = content_daemon_close,
	};

	return rt_daemon_main(&service, argc, argv);
}
