/*
 * rt_log.c - leveled logging to stderr, one write(2) per line so that
 * lines from many threads (and processes sharing a log file) never mix.
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "rt_log.h"

#define RT_LOG_LINE 2048

static char       rt_log_name[64] = "warble";
static atomic_int rt_log_min = RT_INFO;

static const char *const rt_log_names[] = { "DEBUG", "INFO ", "WARN ", "ERROR" };

/* rt_log_init sets the program name shown on each line and the minimum level. */
void
rt_log_init(const char *name, rt_level min)
{
	if (name != NULL) {
		snprintf(rt_log_name, sizeof(rt_log_name), "%s", name);
	}
	atomic_store(&rt_log_min, (int)min);
}

/* rt_log_level_parse maps "debug", "info", "warn", "error" to a level; -1 if unknown. */
int
rt_log_level_parse(const char *s)
{
	static const char *const names[] = { "debug", "info", "warn", "error" };

	if (s == NULL) {
		return -1;
	}
	for (int i = 0; i < 4; i++) {
		if (strcasecmp(s, names[i]) == 0) {
			return i;
		}
	}
	if (strcasecmp(s, "warning") == 0) {
		return RT_WARN;
	}
	return -1;
}

/* rt_log writes one line at level if it is at or above the minimum; thread-safe. */
void
rt_log(rt_level level, const char *fmt, ...)
{
	char            line[RT_LOG_LINE];
	struct timespec ts;
	struct tm       tm;
	va_list         ap;
	size_t          n;
	int             rv;

	if ((int)level < atomic_load(&rt_log_min)) {
		return;
	}
	if (level < RT_DEBUG || level > RT_ERROR) {
		level = RT_ERROR;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
	rv = snprintf(line + n, sizeof(line) - n, ".%03ldZ %s %s: ", ts.tv_nsec / 1000000,
	    rt_log_names[level], rt_log_name);
	if (rv > 0) {
		n += (size_t)rv;
	}
	if (n < sizeof(line) - 1) {
		va_start(ap, fmt);
		rv = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
		va_end(ap);
		if (rv > 0) {
			n += (size_t)rv;
		}
	}
	if (n > sizeof(line) - 2) {
		n = sizeof(line) - 2; /* truncated: keep room for the newline */
	}
	while (n > 0 && line[n - 1] == '\n') {
		n--;
	}
	line[n++] = '\n';
	for (size_t off = 0; off < n;) {
		ssize_t w = write(STDERR_FILENO, line + off, n - off);
		if (w <= 0) {
			break; /* nowhere to report a failing stderr */
		}
		off += (size_t)w;
	}
}
