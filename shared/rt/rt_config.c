/*
 * rt_config.c - WARBLE_* environment variables overridden by --flags, with
 * usage generated from the same rt_opt table.  A value comes from, in
 * order: the flag, the environment (an empty variable counts as unset),
 * the default; an option without a default is required.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_config.h"
#include "wb_errors.h"

#define RT_CONFIG_MAX 64

/* rt_config_resolve fills the flag, variable and default of every endpoint row. */
static void
rt_config_resolve(rt_opt *opts)
{
	for (rt_opt *o = opts; !rt_opt_end(o); o++) {
		if (o->ep > 0 && o->ep <= WB_EP_COUNT) {
			o->flag = wb_endpoints[o->ep - 1].flag;
			o->env = wb_endpoints[o->ep - 1].env;
			o->dflt = wb_endpoints[o->ep - 1].url;
		}
	}
}

/* rt_config_defaults prints every variable with its default, as an environment file. */
static void
rt_config_defaults(const rt_opt *opts, const char *prog, FILE *f)
{
	fprintf(f, "# %s: each variable and its default (a --flag overrides it)\n", prog);
	for (const rt_opt *o = opts; o->flag != NULL; o++) {
		if (o->env != NULL) {
			fprintf(f, "# --%s: %s\n%s=%s\n", o->flag, o->help != NULL ? o->help : "",
			    o->env, o->dflt != NULL ? o->dflt : "");
		}
	}
}

static void
rt_config_usage(const rt_opt *opts, const char *prog, const char *summary, FILE *f)
{
	fprintf(f, "usage: %s [--flag=value ...]\n", prog);
	if (summary != NULL) {
		fprintf(f, "%s\n", summary);
	}
	fprintf(f, "\nflags (a flag overrides its environment variable):\n");
	for (const rt_opt *o = opts; o->flag != NULL; o++) {
		fprintf(f, "  --%-22s %s\n", o->flag, o->help != NULL ? o->help : "");
		fprintf(f, "  %-24s env %s, ", "", o->env != NULL ? o->env : "(none)");
		if (o->dflt != NULL) {
			fprintf(f, "default \"%s\"\n", o->dflt);
		} else {
			fprintf(f, "required\n");
		}
	}
	fprintf(f, "  --%-22s %s\n", "print-defaults",
	    "print each variable and its default (an environment file) and exit");
	fprintf(f, "  --%-22s %s\n", "help", "print this help and exit");
}

/* rt_config_flags reads argv's flags into flagval (one per option, NULL where not given). */
static int
rt_config_flags(rt_opt *opts, const char *prog, const char *summary, int argc, char **argv,
    const char **flagval)
{
	struct option lopts[RT_CONFIG_MAX + 3];
	int           n = 0;
	int           c, idx;

	rt_config_resolve(opts);
	for (const rt_opt *o = opts; o->flag != NULL; o++) {
		if (n == RT_CONFIG_MAX) {
			fprintf(stderr, "%s: too many options (max %d)\n", prog, RT_CONFIG_MAX);
			return WB_EINVAL;
		}
		lopts[n].name = o->flag;
		lopts[n].has_arg = required_argument;
		lopts[n].flag = NULL;
		lopts[n].val = 0;
		flagval[n] = NULL;
		n++;
	}
	lopts[n] = (struct option) { "help", no_argument, NULL, 'h' };
	lopts[n + 1] = (struct option) { "print-defaults", no_argument, NULL, 'd' };
	lopts[n + 2] = (struct option) { NULL, 0, NULL, 0 };

	optind = 0; /* GNU: full reinitialisation, so parse can run again */
	opterr = 0;
	for (;;) {
		idx = -1;
		c = getopt_long(argc, argv, ":h", lopts, &idx);
		if (c == -1) {
			break;
		}
		if (c == 'h') {
			rt_config_usage(opts, prog, summary, stdout);
			return RT_CONFIG_HELP;
		}
		if (c == 'd') {
			rt_config_defaults(opts, prog, stdout);
			return RT_CONFIG_HELP;
		}
		if (c == ':') {
			fprintf(stderr, "%s: option '%s' needs a value (see --help)\n", prog,
			    argv[optind - 1]);
			return WB_EINVAL;
		}
		if (c == '?' || idx < 0 || idx >= n) {
			fprintf(stderr, "%s: unknown option '%s' (see --help)\n", prog,
			    argv[optind - 1]);
			return WB_EINVAL;
		}
		flagval[idx] = optarg;
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s' (see --help)\n", prog, argv[optind]);
		return WB_EINVAL;
	}
	return WB_OK;
}

/* rt_config_parse fills every option from flag, env or default (in that order);
 * prints usage and returns RT_CONFIG_HELP on --help, a message and WB_EINVAL on bad flags. */
int
rt_config_parse(rt_opt *opts, const char *prog, const char *summary, int argc, char **argv)
{
	const char *flagval[RT_CONFIG_MAX];
	int         rc, idx = 0;

	if (prog == NULL) {
		prog = "warble";
	}
	if ((rc = rt_config_flags(opts, prog, summary, argc, argv, flagval)) != WB_OK) {
		return rc;
	}
	for (rt_opt *o = opts; o->flag != NULL; o++, idx++) {
		const char *v = flagval[idx];

		if (v == NULL && o->env != NULL) {
			v = getenv(o->env);
			if (v != NULL && v[0] == '\0') {
				v = NULL;
			}
		}
		if (v == NULL) {
			v = o->dflt;
		}
		if (v == NULL) {
			fprintf(stderr, "%s: missing required --%s%s%s (see --help)\n", prog,
			    o->flag, o->env != NULL ? " or " : "", o->env != NULL ? o->env : "");
			return WB_EINVAL;
		}
		if (o->value != NULL) {
			*o->value = v;
		}
	}
	return WB_OK;
}

/* rt_config_export sets the environment variable of every flag given in argv, for a later
 * rt_config_parse of another table naming the same variables; results as rt_config_parse. */
int
rt_config_export(rt_opt *opts, const char *prog, const char *summary, int argc, char **argv)
{
	const char *flagval[RT_CONFIG_MAX];
	int         rc, idx = 0;

	if ((rc = rt_config_flags(opts, prog, summary, argc, argv, flagval)) != WB_OK) {
		return rc;
	}
	for (const rt_opt *o = opts; o->flag != NULL; o++, idx++) {
		if (flagval[idx] != NULL && o->env != NULL &&
		    setenv(o->env, flagval[idx], 1) != 0) {
			return WB_ENOMEM;
		}
	}
	return WB_OK;
}

/* rt_config_u64 parses a decimal option value within [min, max], naming it in the error message. */
int
rt_config_u64(const char *name, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	char              *end;
	unsigned long long v;

	if (s == NULL || s[0] < '0' || s[0] > '9') {
		fprintf(stderr, "%s: '%s' is not a number\n", name, s != NULL ? s : "");
		return WB_EINVAL;
	}
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0') {
		fprintf(stderr, "%s: '%s' is not a number in range\n", name, s);
		return WB_EINVAL;
	}
	if (v < min || v > max) {
		fprintf(
		    stderr, "%s: %s out of range [%" PRIu64 ", %" PRIu64 "]\n", name, s, min, max);
		return WB_EINVAL;
	}
	*out = v;
	return WB_OK;
}
