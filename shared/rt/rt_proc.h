/*
 * rt_proc.h - the process's own figures, as every server reports them in
 * its stats (the gauges process_cpu_us, process_rss_bytes,
 * process_start_ms and process_open_fds), which /metrics exports under
 * the names Prometheus clients use: process_cpu_seconds_total,
 * process_resident_memory_bytes, process_start_time_seconds and
 * process_open_fds.  In one process with several services each reports
 * the same process.  Each is an rt_gauge_fn (the argument is unused).
 */
#ifndef RT_PROC_H
#define RT_PROC_H

#include <stdint.h>

/* rt_proc_cpu_us returns the CPU time the process has used, user and system, in microseconds. */
uint64_t rt_proc_cpu_us(void *unused);

/* rt_proc_rss_bytes returns the process's resident memory in bytes (0 if unknown). */
uint64_t rt_proc_rss_bytes(void *unused);

/* rt_proc_start_ms returns when the process started, Unix ms (0 if unknown). */
uint64_t rt_proc_start_ms(void *unused);

/* rt_proc_open_fds returns the number of open file descriptors (0 if unknown). */
uint64_t rt_proc_open_fds(void *unused);

#endif
