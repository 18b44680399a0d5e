/* rt_log_test.c - log lines as logfmt with the service and request id, and the size cap of a log file. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rt_log.h"
#include "wbt.h"
#include "wb_proto.h"

static char lt_dir[] = "/tmp/rt_log_test.XXXXXX";
static char lt_path[sizeof(lt_dir) + 16];
static int  lt_saved = -1;

/* lt_capture sends stderr to a fresh file in a temp dir. */
static void
lt_capture(void)
{
	int fd;

	cr_assert_not_null(mkdtemp(lt_dir));
	snprintf(lt_path, sizeof(lt_path), "%s/log", lt_dir);
	cr_assert((fd = open(lt_path, O_WRONLY | O_CREAT | O_APPEND, 0644)) >= 0);
	cr_assert((lt_saved = dup(STDERR_FILENO)) >= 0);
	cr_assert(dup2(fd, STDERR_FILENO) >= 0);
	close(fd);
}

/* lt_read returns what path holds (malloc'd, NUL-terminated). */
static char *
lt_read(const char *path)
{
	char *buf = wbt_read_file(path);

	cr_assert_not_null(buf, "cannot read %s", path);
	return buf;
}

static void
lt_fini(void)
{
	char old[sizeof(lt_path) + 4];

	if (lt_saved >= 0) {
		dup2(lt_saved, STDERR_FILENO);
		close(lt_saved);
	}
	snprintf(old, sizeof(old), "%s.1", lt_path);
	unlink(lt_path);
	unlink(old);
	rmdir(lt_dir);
}

Test(rt_log, levels_parse)
{
	cr_assert_eq(rt_log_level_parse("debug"), RT_DEBUG);
	cr_assert_eq(rt_log_level_parse("INFO"), RT_INFO);
	cr_assert_eq(rt_log_level_parse("warn"), RT_WARN);
	cr_assert_eq(rt_log_level_parse("warning"), RT_WARN);
	cr_assert_eq(rt_log_level_parse("error"), RT_ERROR);
	cr_assert_eq(rt_log_level_parse("loud"), -1);
	cr_assert_eq(rt_log_level_parse(NULL), -1);
}

Test(rt_log, logfmt_with_service_and_request, .fini = lt_fini)
{
	lt_capture();
	rt_log_init("warble", RT_INFO);
	RT_DEBUGF("hidden");
	RT_INFOF("plain %d", 1);
	const char *prev = rt_log_swap_service("inbox");
	wb_rid_swap("r-1.a");
	RT_WARNF("quote \" back\\slash\ttab\x01 ctl\n");
	wb_rid_swap(NULL);
	rt_log_swap_service(prev);
	RT_ERRORF("after");

	char *s = lt_read(lt_path);
	cr_assert_null(strstr(s, "hidden"));
	cr_assert_not_null(strstr(s, " level=info svc=warble msg=\"plain 1\"\n"), "%s", s);
	cr_assert_not_null(strstr(s, " level=warn svc=inbox rid=r-1.a msg=\"quote \\\" "
	                             "back\\\\slash\\ttab\\x01 ctl\"\n"),
	    "%s", s);
	cr_assert_not_null(strstr(s, " level=error svc=warble msg=\"after\"\n"), "%s", s);
	/* time=2026-11-22T10:04:05.123Z level=... */
	cr_assert_eq(strncmp(s, "time=", 5), 0);
	cr_assert_eq(s[15], 'T');
	cr_assert_eq(s[24], '.');
	cr_assert_eq(strncmp(s + 28, "Z level=", 8), 0, "%s", s);
	free(s);
}

Test(rt_log, a_log_file_is_rotated_at_its_cap, .fini = lt_fini)
{
	char        old[sizeof(lt_path) + 4];
	struct stat st;

	lt_capture();
	rt_log_init("warble", RT_INFO);
	rt_log_cap(4096);
	for (int i = 0; i < 1000; i++) {
		RT_INFOF("line %d of a log that outgrows its cap", i);
	}
	rt_log_cap(RT_LOG_MAX_BYTES);
	snprintf(old, sizeof(old), "%s.1", lt_path);
	cr_assert_eq(stat(old, &st), 0, "no rotated file");
	cr_assert_lt(
	    st.st_size, 4096 + 4096 / 16 + 256, "rotated at %lld bytes", (long long)st.st_size);
	cr_assert_eq(stat(lt_path, &st), 0);
	cr_assert_lt(st.st_size, 4096 + 4096 / 16 + 256);
	char *s = lt_read(lt_path);
	cr_assert_not_null(strstr(s, "line 999 of"), "the newest lines are in the log");
	free(s);
}
