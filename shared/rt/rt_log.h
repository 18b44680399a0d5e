/*
 * rt_log.h - leveled logging, one line per event, to stderr, as
 * key=value pairs (logfmt):
 *
 *   time=2026-11-22T10:04:05.123Z level=info svc=content rid=g5f3a-1c msg="listening on ipc:///tmp/c.ipc"
 *
 * svc is the service whose work the line is about (the program's name
 * outside a request, rt_log_swap_service inside one), rid the calling
 * thread's request id (wb_rid; absent outside a request).  When stderr is
 * a regular file, it is rotated as it passes its size cap: renamed to
 * FILE.1 (the one before is dropped) and begun again.
 *
 * Never log passwords, hashes or tokens.
 */
#ifndef RT_LOG_H
#define RT_LOG_H

#include <stdint.h>

typedef enum rt_level {
	RT_DEBUG = 0,
	RT_INFO,
	RT_WARN,
	RT_ERROR,
} rt_level;

#define RT_LOG_MAX_BYTES (64u << 20) /* default size cap of a log file */

/* rt_log_init sets the program name shown on each line and the minimum level. */
void rt_log_init(const char *name, rt_level min);

/* rt_log_cap sets the size at which a log file on stderr is rotated (0: never). */
void rt_log_cap(uint64_t max_bytes);

/* rt_log_level_parse maps "debug", "info", "warn", "error" to a level; -1 if unknown. */
int rt_log_level_parse(const char *s);

/* rt_log_swap_service makes name (NULL: the program's; kept by pointer) the calling thread's svc and returns the one before. */
const char *rt_log_swap_service(const char *name);

/* rt_log writes one line at level if it is at or above the minimum; thread-safe. */
void rt_log(rt_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define RT_DEBUGF(...) rt_log(RT_DEBUG, __VA_ARGS__)
#define RT_INFOF(...)  rt_log(RT_INFO, __VA_ARGS__)
#define RT_WARNF(...)  rt_log(RT_WARN, __VA_ARGS__)
#define RT_ERRORF(...) rt_log(RT_ERROR, __VA_ARGS__)

#endif
