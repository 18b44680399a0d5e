/*
 * rt_log.h - leveled logging, one line per event, to stderr.
 *
 *   2026-11-22T10:04:05.123Z INFO  content: listening on ipc:///tmp/c.ipc
 *
 * Never log passwords, hashes or tokens.
 */
#ifndef RT_LOG_H
#define RT_LOG_H

typedef enum rt_level {
	RT_DEBUG = 0,
	RT_INFO,
	RT_WARN,
	RT_ERROR,
} rt_level;

/* rt_log_init sets the program name shown on each line and the minimum level. */
void rt_log_init(const char *name, rt_level min);

/* rt_log_level_parse maps "debug", "info", "warn", "error" to a level; -1 if unknown. */
int rt_log_level_parse(const char *s);

/* rt_log writes one line at level if it is at or above the minimum; thread-safe. */
void rt_log(rt_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define RT_DEBUGF(...) rt_log(RT_DEBUG, __VA_ARGS__)
#define RT_INFOF(...)  rt_log(RT_INFO, __VA_ARGS__)
#define RT_WARNF(...)  rt_log(RT_WARN, __VA_ARGS__)
#define RT_ERRORF(...) rt_log(RT_ERROR, __VA_ARGS__)

#endif
