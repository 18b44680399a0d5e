/* rt_proc.c - the process's own figures, from getrusage and /proc (see rt_proc.h). */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "rt_proc.h"

uint64_t
rt_proc_cpu_us(void *unused)
{
	struct rusage ru;

	(void)unused;
	if (getrusage(RUSAGE_SELF, &ru) != 0) {
		return 0;
	}
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

uint64_t
rt_proc_rss_bytes(void *unused)
{
	unsigned long long size, rss;
	FILE              *f = fopen("/proc/self/statm", "r");
	int                n;

	(void)unused;
	if (f == NULL) {
		return 0;
	}
	n = fscanf(f, "%llu %llu", &size, &rss);
	fclose(f);
	return n == 2 ? (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

/* rt_proc_boot_s reads the system's boot time, Unix seconds, from /proc/stat (0 if unknown). */
static uint64_t
rt_proc_boot_s(void)
{
	char               line[256];
	unsigned long long btime = 0;
	FILE              *f = fopen("/proc/stat", "r");

	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		if (sscanf(line, "btime %llu", &btime) == 1) {
			break;
		}
	}
	if (f != NULL) {
		fclose(f);
	}
	return btime;
}

uint64_t
rt_proc_start_ms(void *unused)
{
	char               buf[1024], *p;
	unsigned long long ticks = 0;
	long               hz = sysconf(_SC_CLK_TCK);
	size_t             n;
	FILE              *f = fopen("/proc/self/stat", "r");

	(void)unused;
	if (f == NULL) {
		return 0;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* after the command in parentheses: field 3 on, starttime is field 22 */
	if ((p = strrchr(buf, ')')) == NULL || hz <= 0 ||
	    sscanf(p + 1,
	        " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
	        &ticks) != 1) {
		return 0;
	}
	return rt_proc_boot_s() * 1000 + (uint64_t)ticks * 1000 / (uint64_t)hz;
}

uint64_t
rt_proc_open_fds(void *unused)
{
	DIR           *d = opendir("/proc/self/fd");
	struct dirent *e;
	uint64_t       n = 0;

	(void)unused;
	if (d == NULL) {
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		n += e->d_name[0] != '.';
	}
	closedir(d);
	return n > 0 ? n - 1 : 0; /* less the one reading the folder */
}
