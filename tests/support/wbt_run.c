/*
 * wbt_run.c - running a program of the build to its end and keeping what
 * it printed (wbt_run_capture, wbt.h): warblectl as an operator runs it.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wbt.h"

#define WBT_RUN_ARGS 64 /* argv's room, the program and the NULL included */

extern char **environ;

int
wbt_run_capture(char *out, size_t cap, const char *name, const char *const *args, char *const *envp)
{
	char                       bin[512], path[512], file[96], *argv[WBT_RUN_ARGS];
	int                        n = 0, st = 0, fd, rc;
	size_t                     got = 0;
	pid_t                      pid;
	posix_spawn_file_actions_t fa;

	if (cap > 0) {
		out[0] = '\0';
	}
	snprintf(file, sizeof(file), "%s.out", name);
	if (wbt_bin_path(bin, sizeof(bin), name) != 0 || wbt_path(path, sizeof(path), file) != 0) {
		fprintf(stderr, "wbt_run_capture: no %s in the build\n", name);
		return -1;
	}
	argv[n++] = bin;
	for (int i = 0; args[i] != NULL && n < WBT_RUN_ARGS - 1; i++) {
		argv[n++] = (char *)args[i];
	}
	argv[n] = NULL;
	if (posix_spawn_file_actions_init(&fa) != 0) {
		return -1;
	}
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	rc = posix_spawn(&pid, bin, &fa, NULL, argv, envp != NULL ? envp : environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0) {
		fprintf(stderr, "wbt_run_capture: %s: %s\n", bin, strerror(rc));
		return -1;
	}
	while (waitpid(pid, &st, 0) != pid) {
		if (errno != EINTR) {
			return -1;
		}
	}
	if (cap > 0 && (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		ssize_t k;
		while (got < cap - 1 && (k = read(fd, out + got, cap - 1 - got)) > 0) {
			got += (size_t)k;
		}
		out[got] = '\0';
		close(fd);
	}
	rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	fprintf(stderr, "%s %s %s: exit %d\n%s", name, args[0] != NULL ? args[0] : "",
	    args[0] != NULL && args[1] != NULL ? args[1] : "", rc, cap > 0 ? out : "");
	return rc;
}
