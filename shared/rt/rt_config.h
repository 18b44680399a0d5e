/*
 * rt_config.h - daemon configuration: WARBLE_* environment variables,
 * overridden by --long-flags, with --help generated from the same table.
 *
 *   static const char *url, *data;
 *   rt_opt opts[] = {
 *       { "url",  "WARBLE_CONTENT_URL", "ipc:///tmp/warble-content.ipc",
 *         "listen URL", &url },
 *       { "data", "WARBLE_DATA", "./var", "data folder", &data },
 *       { NULL },
 *   };
 *   int rc = rt_config_parse(opts, "warble-content", "the content service", argc, argv);
 *   if (rc != 0) return rc == RT_CONFIG_HELP ? 0 : 2;
 */
#ifndef RT_CONFIG_H
#define RT_CONFIG_H

#include <stdint.h>

#define RT_CONFIG_HELP (-1) /* --help was printed; exit 0 */

typedef struct rt_opt {
	const char  *flag;  /* long flag name, without "--" */
	const char  *env;   /* environment variable, or NULL */
	const char  *dflt;  /* default value, or NULL (required) */
	const char  *help;  /* one line */
	const char **value; /* receives the value (static storage) */
} rt_opt;

/* rt_config_parse fills every option from flag, env or default (in that order);
 * prints usage and returns RT_CONFIG_HELP on --help, a message and WB_EINVAL on bad flags. */
int rt_config_parse(rt_opt *opts, const char *prog, const char *summary, int argc, char **argv);

/* rt_config_u64 parses a decimal option value within [min, max], naming it in the error message. */
int rt_config_u64(const char *name, const char *s, uint64_t min, uint64_t max, uint64_t *out);

#endif
