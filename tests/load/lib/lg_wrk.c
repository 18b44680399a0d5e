/*
 * lg_wrk.c - runs wrk against the gateway's GET /api/v1/home with a Lua
 * script that signs each request with a random user's session token, and
 * reads wrk's summary (requests, Requests/sec, the latency distribution
 * of --latency, errors) and its CPU (wait4's rusage).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lg_wrk.h"

/* lg_wrk_path finds wrk on PATH into buf; false if it is not there. */
static bool
lg_wrk_path(char *buf, size_t n)
{
	const char *path = getenv("PATH");

	while (path != NULL && *path != '\0') {
		size_t k = strcspn(path, ":");

		snprintf(buf, n, "%.*s/wrk", (int)k, path);
		if (access(buf, X_OK) == 0) {
			return true;
		}
		path += k + (path[k] == ':');
	}
	return false;
}

/* lg_wrk_script writes the Lua script (every user's token) to a temp file named into path. */
static int
lg_wrk_script(const lg_warble *w, uint32_t users, char *path, size_t n)
{
	FILE *f;
	int   fd;

	snprintf(path, n, "/tmp/warble-wrk-XXXXXX");
	if ((fd = mkstemp(path)) < 0 || (f = fdopen(fd, "w")) == NULL) {
		return -1;
	}
	fprintf(f, "local tokens = {\n");
	for (uint32_t u = 0; u < users; u++) {
		fprintf(f, "\"%s\",\n", w->token[u]);
	}
	fprintf(f, "}\nmath.randomseed(42)\n"
	           "request = function()\n"
	           "  local t = tokens[math.random(#tokens)]\n"
	           "  return wrk.format(\"GET\", \"/api/v1/home?limit=20\", "
	           "{ [\"Authorization\"] = \"Bearer \" .. t })\n"
	           "end\n");
	return fclose(f) == 0 ? 0 : -1;
}

/* lg_wrk_ms reads a wrk duration ("812.00us", "1.23ms", "2.01s") in ms; -1 if it is not one. */
static double
lg_wrk_ms(const char *s)
{
	char  *end;
	double v = strtod(s, &end);

	if (end == s) {
		return -1;
	}
	return strncmp(end, "us", 2) == 0   ? v / 1e3
	       : strncmp(end, "ms", 2) == 0 ? v
	       : strncmp(end, "s", 1) == 0  ? v * 1e3
	       : strncmp(end, "m", 1) == 0  ? v * 60e3
	                                    : -1;
}

/* lg_wrk_parse reads wrk's summary in out into r; -1 if a figure is missing. */
static int
lg_wrk_parse(const char *out, lg_wrk_result *r)
{
	const char *p;
	uint64_t    a, b, c, d;

	r->p50_ms = r->p99_ms = -1;
	if ((p = strstr(out, " 50% ")) != NULL) {
		r->p50_ms = lg_wrk_ms(p + 5 + strspn(p + 5, " "));
	}
	if ((p = strstr(out, " 99% ")) != NULL) {
		r->p99_ms = lg_wrk_ms(p + 5 + strspn(p + 5, " "));
	}
	if ((p = strstr(out, " requests in ")) != NULL) {
		while (p > out && p[-1] >= '0' && p[-1] <= '9') {
			p--;
		}
		r->requests = strtoull(p, NULL, 10);
	}
	if ((p = strstr(out, "Requests/sec:")) != NULL) {
		r->per_s = strtod(p + 13, NULL);
	}
	if ((p = strstr(out, "Non-2xx or 3xx responses:")) != NULL) {
		r->bad += strtoull(p + 26, NULL, 10);
	}
	if ((p = strstr(out, "Socket errors:")) != NULL &&
	    sscanf(p,
	        "Socket errors: connect %" SCNu64 ", read %" SCNu64 ", write %" SCNu64
	        ", timeout %" SCNu64,
	        &a, &b, &c, &d) == 4) {
		r->bad += a + b + c + d;
	}
	return r->per_s > 0 && r->requests > 0 && r->p50_ms >= 0 && r->p99_ms >= 0 ? 0 : -1;
}

int
lg_wrk_home(const lg_warble *w, uint32_t users, uint32_t conns, double secs, lg_wrk_result *r)
{
	char          wrk[512], script[64], url[LG_URL_MAX + 17], nconn[16], dur[16], out[16384];
	int           pipefd[2], status = 0, rc = -1;
	size_t        len = 0;
	ssize_t       k;
	pid_t         pid;
	struct rusage ru;

	memset(r, 0, sizeof(*r));
	if (!lg_wrk_path(wrk, sizeof(wrk))) {
		return 1;
	}
	if (lg_wrk_script(w, users, script, sizeof(script)) != 0 || pipe(pipefd) != 0) {
		return -1;
	}
	snprintf(url, sizeof(url), "%s/", w->http_url);
	snprintf(nconn, sizeof(nconn), "%u", conns);
	snprintf(dur, sizeof(dur), "%.0fs", secs < 1 ? 1 : secs);
	if ((pid = fork()) == 0) {
		dup2(pipefd[1], 1);
		close(pipefd[0]);
		close(pipefd[1]);
		execl(wrk, "wrk", "-t2", "-c", nconn, "-d", dur, "--latency", "-s", script, url,
		    (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	while (pid > 0 && len < sizeof(out) - 1 &&
	       ((k = read(pipefd[0], out + len, sizeof(out) - 1 - len)) > 0 ||
	           (k < 0 && errno == EINTR))) {
		len += k > 0 ? (size_t)k : 0;
	}
	out[len] = '\0';
	close(pipefd[0]);
	if (pid > 0 && wait4(pid, &status, 0, &ru) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0) {
		r->client_cpu_us = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
		                   (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
		rc = lg_wrk_parse(out, r);
	}
	if (rc != 0) {
		fprintf(stderr, "warble-load: wrk failed (status %d):\n%s\n", status, out);
	}
	unlink(script);
	return rc;
}
