/*
 * lg_sys.c - clock, machine facts, process memory, folder sizes and the
 * progress bar.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "lg.h"
#include "wb_clock.h"

uint64_t
lg_now_us(void)
{
	return wb_mono_us();
}

void
lg_sleep_us(uint64_t us)
{
	struct timespec ts = { (time_t)(us / 1000000), (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

long
lg_rss_kb(int pid, const char *key)
{
	char  path[64], line[256];
	long  kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if ((f = fopen(path, "r")) == NULL) {
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, key, strlen(key)) == 0) {
			kb = strtol(line + strlen(key), NULL, 10);
		}
	}
	fclose(f);
	return kb;
}

/*
 * lg_stat_fields reads /proc/PID/stat's utime, stime, cutime, cstime (in
 * clock ticks) and ppid; false if the process is gone.  The command name
 * (field 2) may hold spaces and parentheses, so fields count from the
 * last ')'.
 */
static bool
lg_stat_fields(int pid, uint64_t t[4], int *ppid)
{
	char  path[64], buf[1024], *p;
	FILE *f;
	bool  ok = false;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if ((f = fopen(path, "r")) == NULL) {
		return false;
	}
	if (fgets(buf, sizeof(buf), f) != NULL && (p = strrchr(buf, ')')) != NULL) {
		unsigned long long u, s, cu, cs;
		/* after ')': state ppid pgrp session tty tpgid flags minflt
		 * cminflt majflt cmajflt utime stime cutime cstime */
		ok =
		    sscanf(p + 1, " %*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
		        ppid, &u, &s, &cu, &cs) == 5;
		t[0] = u, t[1] = s, t[2] = cu, t[3] = cs;
	}
	fclose(f);
	return ok;
}

uint64_t
lg_cpu_us(int pid, bool reaped)
{
	uint64_t       t[4], ticks;
	int            ppid;
	long           hz = sysconf(_SC_CLK_TCK);
	DIR           *d;
	struct dirent *e;

	if (pid <= 0 || !lg_stat_fields(pid, t, &ppid)) {
		return 0;
	}
	ticks = t[0] + t[1];
	if (reaped && (d = opendir("/proc")) != NULL) {
		ticks += t[2] + t[3];
		while ((e = readdir(d)) != NULL) {
			int      child = atoi(e->d_name);
			uint64_t ct[4];
			int      cp;
			if (child > 0 && lg_stat_fields(child, ct, &cp) && cp == pid) {
				ticks += ct[0] + ct[1];
			}
		}
		closedir(d);
	}
	return ticks * 1000000 / (uint64_t)(hz > 0 ? hz : 100);
}

int
lg_parent_pid(int pid)
{
	uint64_t t[4];
	int      ppid = 0;

	return lg_stat_fields(pid, t, &ppid) ? ppid : 0;
}

uint64_t
lg_self_cpu_us(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* lg_du_depth sums file sizes under path, at most 8 folders deep. */
static uint64_t
lg_du_depth(const char *path, int depth)
{
	DIR           *d;
	struct dirent *e;
	uint64_t       sum = 0;
	char           p[4096];
	struct stat    st;

	if (depth > 8 || (d = opendir(path)) == NULL) {
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
			continue;
		}
		if (snprintf(p, sizeof(p), "%s/%s", path, e->d_name) >= (int)sizeof(p) ||
		    lstat(p, &st) != 0) {
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			sum += lg_du_depth(p, depth + 1);
		} else if (S_ISREG(st.st_mode)) {
			sum += (uint64_t)st.st_size;
		}
	}
	closedir(d);
	return sum;
}

uint64_t
lg_du(const char *path)
{
	return lg_du_depth(path, 0);
}

void
lg_machine(int *cores, long *mem_mib, char *kernel, size_t klen, char *cpu, size_t clen)
{
	struct utsname u;
	char           line[512];
	FILE          *f;

	*cores = (int)sysconf(_SC_NPROCESSORS_ONLN);
	*mem_mib = (long)(sysconf(_SC_PHYS_PAGES) / 1024 * sysconf(_SC_PAGESIZE) / 1024);
	snprintf(kernel, klen, "?");
	if (uname(&u) == 0) {
		snprintf(kernel, klen, "%s %s %s", u.sysname, u.release, u.machine);
	}
	snprintf(cpu, clen, "?");
	if ((f = fopen("/proc/cpuinfo", "r")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL) {
			char *c = strchr(line, ':');
			if (strncmp(line, "model name", 10) == 0 && c != NULL) {
				snprintf(cpu, clen, "%s", c + 2);
				cpu[strcspn(cpu, "\n")] = '\0';
				break;
			}
		}
		fclose(f);
	}
}

void
lg_progress(const char *what, uint64_t done, uint64_t total)
{
	static int      tty = -1;
	static uint64_t last_us;
	uint64_t        now = lg_now_us();
	char            bar[41];

	if (tty < 0) {
		tty = isatty(2);
	}
	if (!tty || total == 0 || (done < total && now - last_us < 100000)) {
		return;
	}
	last_us = now;
	size_t k = (size_t)(done * 40 / total);
	memset(bar, '#', k);
	memset(bar + k, ' ', 40 - k);
	bar[40] = '\0';
	fprintf(stderr, "\r%-24s [%s] %llu/%llu%s", what, bar, (unsigned long long)done,
	    (unsigned long long)total, done >= total ? "\n" : "");
	fflush(stderr);
}
