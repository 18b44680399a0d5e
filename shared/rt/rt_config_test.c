/*
 * rt_config_test.c - flag > environment > default, required options,
 * --help, bad flags and number parsing.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdlib.h>

#include "rt_config.h"
#include "wb_errors.h"

static const char *v_url, *v_data, *v_need;

static int
parse(int argc, char **argv, bool with_required)
{
	rt_opt opts[] = {
		{ "url", "WBT_CFG_URL", "ipc:///tmp/default.ipc", "listen URL", &v_url },
		{ "data", "WBT_CFG_DATA", "./var", "data folder", &v_data },
		{ with_required ? "need" : NULL, "WBT_CFG_NEED", NULL, "required knob", &v_need },
		{ NULL },
	};
	return rt_config_parse(opts, "cfgtest", "a config test", argc, argv);
}

Test(rt_config, default_env_flag_precedence)
{
	char *a0[] = { "prog", NULL };
	unsetenv("WBT_CFG_URL");
	cr_assert_eq(parse(1, a0, false), WB_OK);
	cr_assert_str_eq(v_url, "ipc:///tmp/default.ipc");

	setenv("WBT_CFG_URL", "tcp://127.0.0.1:1", 1);
	cr_assert_eq(parse(1, a0, false), WB_OK);
	cr_assert_str_eq(v_url, "tcp://127.0.0.1:1");
	cr_assert_str_eq(v_data, "./var");

	char *a1[] = { "prog", "--url", "tcp://127.0.0.1:2", "--data=/tmp/d", NULL };
	cr_assert_eq(parse(4, a1, false), WB_OK);
	cr_assert_str_eq(v_url, "tcp://127.0.0.1:2");
	cr_assert_str_eq(v_data, "/tmp/d");

	/* an empty variable counts as unset */
	setenv("WBT_CFG_URL", "", 1);
	cr_assert_eq(parse(1, a0, false), WB_OK);
	cr_assert_str_eq(v_url, "ipc:///tmp/default.ipc");
	unsetenv("WBT_CFG_URL");
}

Test(rt_config, required_option, .init = cr_redirect_stderr)
{
	char *a0[] = { "prog", NULL };
	unsetenv("WBT_CFG_NEED");
	cr_assert_eq(parse(1, a0, true), WB_EINVAL);
	setenv("WBT_CFG_NEED", "x", 1);
	cr_assert_eq(parse(1, a0, true), WB_OK);
	cr_assert_str_eq(v_need, "x");
	unsetenv("WBT_CFG_NEED");
	char *a1[] = { "prog", "--need", "y", NULL };
	cr_assert_eq(parse(3, a1, true), WB_OK);
	cr_assert_str_eq(v_need, "y");
	fflush(stderr);
	cr_assert_stderr_eq_str("cfgtest: missing required --need or WBT_CFG_NEED (see --help)\n");
}

Test(rt_config, help_lists_flags_env_and_defaults, .init = cr_redirect_stdout)
{
	char *a[] = { "prog", "--help", NULL };
	cr_assert_eq(parse(2, a, true), RT_CONFIG_HELP);
	fflush(stdout);
	FILE  *f = cr_get_redirected_stdout();
	char   buf[4096];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	cr_assert(strstr(buf, "usage: cfgtest") != NULL, "%s", buf);
	cr_assert(strstr(buf, "--url") != NULL);
	cr_assert(strstr(buf, "WBT_CFG_URL") != NULL);
	cr_assert(strstr(buf, "default \"ipc:///tmp/default.ipc\"") != NULL);
	cr_assert(strstr(buf, "--need") != NULL);
	cr_assert(strstr(buf, "required") != NULL);
	cr_assert(strstr(buf, "--help") != NULL);
}

Test(rt_config, bad_flags_are_errors, .init = cr_redirect_stderr)
{
	char *a1[] = { "prog", "--bogus", "1", NULL };
	cr_assert_eq(parse(3, a1, false), WB_EINVAL);
	char *a2[] = { "prog", "--url", NULL };
	cr_assert_eq(parse(2, a2, false), WB_EINVAL);
	char *a3[] = { "prog", "stray", NULL };
	cr_assert_eq(parse(2, a3, false), WB_EINVAL);
	char *a4[] = { "prog", "-x", NULL };
	cr_assert_eq(parse(2, a4, false), WB_EINVAL);
	fflush(stderr);
	FILE  *f = cr_get_redirected_stderr();
	char   buf[4096];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	cr_assert(strstr(buf, "unknown option '--bogus'") != NULL, "%s", buf);
	cr_assert(strstr(buf, "needs a value") != NULL, "%s", buf);
	cr_assert(strstr(buf, "unexpected argument 'stray'") != NULL, "%s", buf);
}

Test(rt_config, u64_ranges, .init = cr_redirect_stderr)
{
	uint64_t v = 0;
	cr_assert_eq(rt_config_u64("--workers", "8", 1, 256, &v), WB_OK);
	cr_assert_eq(v, 8);
	cr_assert_eq(rt_config_u64("--workers", "0", 1, 256, &v), WB_EINVAL);
	cr_assert_eq(rt_config_u64("--workers", "257", 1, 256, &v), WB_EINVAL);
	cr_assert_eq(rt_config_u64("--workers", "-1", 0, 256, &v), WB_EINVAL);
	cr_assert_eq(rt_config_u64("--workers", "12x", 0, 256, &v), WB_EINVAL);
	cr_assert_eq(rt_config_u64("--workers", "", 0, 256, &v), WB_EINVAL);
	cr_assert_eq(rt_config_u64("--workers", NULL, 0, 256, &v), WB_EINVAL);
	cr_assert_eq(
	    rt_config_u64("--big", "99999999999999999999999", 0, UINT64_MAX, &v), WB_EINVAL);
	cr_assert_eq(rt_config_u64("--big", "18446744073709551615", 0, UINT64_MAX, &v), WB_OK);
	cr_assert_eq(v, UINT64_MAX);
	cr_assert_eq(v, UINT64_MAX);
}
