/*
 * rt_config.h - daemon configuration: WARBLE_* environment variables,
 * overridden by --long-flags, with --help and --print-defaults generated
 * from the same table.  An address row names its endpoint in
 * wb_services.h, which gives its flag, variable and default.
 *
 *   static const char *url, *node;
 *   static rt_opt opts[] = {
 *       RT_OPT_URL(WB_EP_CONTENT, "listen URL", &url),
 *       { "node", "WARBLE_NODE", "0", "post id node number", &node },
 *       { NULL },
 *   };
 *   int rc = rt_config_parse(opts, "warble-content", "the content service", argc, argv);
 *   if (rc != 0) return rc == RT_CONFIG_HELP ? 0 : 2;
 */
#ifndef RT_CONFIG_H
#define RT_CONFIG_H

#include <stdint.h>

#include "wb_services.h"

#define RT_CONFIG_HELP (-1) /* --help or --print-defaults was printed; exit 0 */

typedef struct rt_opt {
	const char  *flag;  /* long flag name, without "--" */
	const char  *env;   /* environment variable, or NULL */
	const char  *dflt;  /* default value, or NULL (required) */
	const char  *help;  /* one line */
	const char **value; /* receives the value (static storage) */
	int          ep;    /* 1 + a wb_endpoint: flag, env and dflt come from wb_endpoints */
} rt_opt;

/* RT_OPT_URL is the row of an endpoint's address option. */
#define RT_OPT_URL(endpoint, help_, dst)                              \
	{                                                             \
		.help = (help_), .value = (dst), .ep = 1 + (endpoint) \
	}

/* rt_opt_end tells whether o is the table's { NULL } terminator. */
#define rt_opt_end(o) ((o)->flag == NULL && (o)->ep == 0)

/* rt_config_parse fills every option from flag, env or default (in that order); prints and
 * returns RT_CONFIG_HELP on --help or --print-defaults, a message and WB_EINVAL on bad flags. */
int rt_config_parse(rt_opt *opts, const char *prog, const char *summary, int argc, char **argv);

/* rt_config_export sets the environment variable of every flag given in argv, for a later
 * rt_config_parse of another table naming the same variables; results as rt_config_parse. */
int rt_config_export(rt_opt *opts, const char *prog, const char *summary, int argc, char **argv);

/* rt_config_u64 parses a decimal option value within [min, max], naming it in the error message. */
int rt_config_u64(const char *name, const char *s, uint64_t min, uint64_t max, uint64_t *out);

#endif
