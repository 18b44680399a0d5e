/*
 * lg_sys.c - clock, machine facts, process memory, folder sizes and the
 * progress bar.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "lg.h"
#include "wb_id.h"

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
