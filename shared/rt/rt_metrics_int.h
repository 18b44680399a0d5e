/*
 * rt_metrics_int.h - what the admin port's files share: the request head
 * and its parser (rt_metrics_head.c), used by the responder
 * (rt_metrics.c).  No other module includes it.
 */
#ifndef RT_METRICS_INT_H
#define RT_METRICS_INT_H

#include <stdbool.h>
#include <stddef.h>

#define RT_METRICS_HEAD_MAX 8192 /* a request head's bytes (431 above) */

/* A parsed request head (strings point into the head's copy). */
typedef struct rt_metrics_req {
	const char *method;
	const char *path;  /* without the query */
	bool        close; /* the connection ends after the reply */
} rt_metrics_req;

/*
 * rt_metrics_head_end returns the length of the head at the front of p
 * (its blank line included), or 0 if it has not all arrived.
 */
size_t rt_metrics_head_end(const char *p, size_t n);

/*
 * rt_metrics_head_parse parses the head in buf (n bytes, NUL-terminated,
 * cut in place) into r; 0, or the status to refuse it with and *why.
 */
int rt_metrics_head_parse(char *buf, size_t n, rt_metrics_req *r, const char **why);

#endif
