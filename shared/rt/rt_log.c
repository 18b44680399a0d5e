/*
 * rt_log.c - leveled logging to stderr as logfmt, one write(2) per line
 * so that lines from many threads (and processes sharing a log file)
 * never mix; a log file on stderr is rotated at its size cap.
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "rt_log.h"
#include "wb_proto.h"

#define RT_LOG_LINE 2048

static char                      rt_log_name[64] = "warble";
static atomic_int                rt_log_min = RT_INFO;
static _Thread_local const char *rt_log_svc; /* NULL: rt_log_name */
static atomic_uint_fast64_t      rt_log_cap_bytes = RT_LOG_MAX_BYTES;
static atomic_uint_fast64_t      rt_log_written; /* bytes since the last size check */
static pthread_mutex_t           rt_log_rotate_mu = PTHREAD_MUTEX_INITIALIZER;

static const char *const rt_log_names[] = { "debug", "info", "warn", "error" };

/* rt_log_init sets the program name shown on each line and the minimum level. */
void
rt_log_init(const char *name, rt_level min)
{
	if (name != NULL) {
		snprintf(rt_log_name, sizeof(rt_log_name), "%s", name);
	}
	atomic_store(&rt_log_min, (int)min);
}

/* rt_log_cap sets the size at which a log file on stderr is rotated (0: never). */
void
rt_log_cap(uint64_t max_bytes)
{
	atomic_store(&rt_log_cap_bytes, max_bytes);
}

/* rt_log_level_parse maps "debug", "info", "warn", "error" to a level; -1 if unknown. */
int
rt_log_level_parse(const char *s)
{
	if (s == NULL) {
		return -1;
	}
	for (int i = 0; i < 4; i++) {
		if (strcasecmp(s, rt_log_names[i]) == 0) {
			return i;
		}
	}
	if (strcasecmp(s, "warning") == 0) {
		return RT_WARN;
	}
	return -1;
}

const char *
rt_log_swap_service(const char *name)
{
	const char *prev = rt_log_svc;

	rt_log_svc = name;
	return prev;
}

/*
 * rt_log_rotate renames the log file on stderr to FILE.1 and opens FILE
 * again on stderr once it has passed the cap; checked once a sixteenth of
 * the cap has been written, so a line costs no fstat.
 */
static void
rt_log_rotate(size_t n)
{
	uint64_t    cap = atomic_load(&rt_log_cap_bytes);
	struct stat st;
	char        path[PATH_MAX], old[PATH_MAX + 3];
	ssize_t     len;
	int         fd;

	if (cap == 0 || atomic_fetch_add(&rt_log_written, n) + n < cap / 16 ||
	    pthread_mutex_trylock(&rt_log_rotate_mu) != 0) {
		return;
	}
	atomic_store(&rt_log_written, 0);
	if (fstat(STDERR_FILENO, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size >= cap &&
	    (len = readlink("/proc/self/fd/2", path, sizeof(path) - 1)) > 0) {
		path[len] = '\0';
		snprintf(old, sizeof(old), "%s.1", path);
		if (rename(path, old) == 0 &&
		    (fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) >= 0) {
			dup2(fd, STDERR_FILENO);
			close(fd);
		}
	}
	pthread_mutex_unlock(&rt_log_rotate_mu);
}

/* rt_log_quote appends s as a logfmt value (quoted, with \" \\ \n \t and \xNN escapes) within cap. */
static size_t
rt_log_quote(char *line, size_t n, size_t cap, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	if (n + 2 >= cap) {
		return n;
	}
	line[n++] = '"';
	for (; *s != '\0' && n + 5 < cap; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			line[n++] = '\\';
			line[n++] = (char)c;
		} else if (c == '\n') {
			line[n++] = '\\';
			line[n++] = 'n';
		} else if (c == '\t') {
			line[n++] = '\\';
			line[n++] = 't';
		} else if (c < 0x20 || c == 0x7f) {
			line[n++] = '\\';
			line[n++] = 'x';
			line[n++] = hex[c >> 4];
			line[n++] = hex[c & 15];
		} else {
			line[n++] = (char)c;
		}
	}
	line[n++] = '"';
	return n;
}

/* rt_log writes one line at level if it is at or above the minimum; thread-safe. */
void
rt_log(rt_level level, const char *fmt, ...)
{
	char            line[RT_LOG_LINE], msg[RT_LOG_LINE];
	const char     *rid = wb_rid();
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
	n = strftime(line, sizeof(line), "time=%Y-%m-%dT%H:%M:%S", &tm);
	rv = snprintf(line + n, sizeof(line) - n,
	    ".%03ldZ level=%s svc=%s%s%s msg=", ts.tv_nsec / 1000000, rt_log_names[level],
	    rt_log_svc != NULL ? rt_log_svc : rt_log_name, rid != NULL ? " rid=" : "",
	    rid != NULL ? rid : "");
	if (rv > 0) {
		n += (size_t)rv;
	}
	va_start(ap, fmt);
	rv = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (rv < 0) {
		msg[0] = '\0';
	}
	for (size_t m = strnlen(msg, sizeof(msg)); m > 0 && msg[m - 1] == '\n'; m--) {
		msg[m - 1] = '\0'; /* a message's own trailing newline */
	}
	n = rt_log_quote(line, n < sizeof(line) - 1 ? n : sizeof(line) - 1, sizeof(line) - 1, msg);
	if (n > sizeof(line) - 1) {
		n = sizeof(line) - 1; /* never: rt_log_quote keeps within its cap */
	}
	line[n++] = '\n';
	for (size_t off = 0; off < n;) {
		ssize_t w = write(STDERR_FILENO, line + off, n - off);
		if (w <= 0) {
			break; /* nowhere to report a failing stderr */
		}
		off += (size_t)w;
	}
	rt_log_rotate(n);
}
