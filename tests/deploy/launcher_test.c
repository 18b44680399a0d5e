/*
 * launcher_test.c - deploy/warble-local really runs the five daemons with
 * the WARBLE_* variables it is given, and stops them all on SIGTERM; and
 * warble-probe, the containers' healthcheck, tells a live daemon from a
 * dead or stuck one by its exit status; and a daemon refuses an admin
 * port it cannot use.
 *
 * The launcher runs on ipc:// addresses in the test's temp dir (never the
 * default ports, which a developer's own cluster may hold), in a process
 * group of its own so that the test can always kill it and its daemons.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wbt.h"

#define LT_NVARS 8

static pid_t lt_group; /* the launcher's process group, 0 if none */

/* lt_fini kills the launcher's whole process group (if any) and the harness's daemons. */
static void
lt_fini(void)
{
	if (lt_group > 0) {
		kill(-lt_group, SIGKILL);
		while (waitpid(-lt_group, NULL, WNOHANG) > 0) {
		}
		lt_group = 0;
	}
	wbt_cleanup();
}

/* lt_root changes to the repository root ($WBT_SRC_DIR, here, or two levels above the test binary). */
static void
lt_root(void)
{
	char        self[512], cand[600];
	const char *src = getenv("WBT_SRC_DIR");
	ssize_t     len;

	if (src != NULL && src[0] != '\0') {
		cr_assert_eq(chdir(src), 0, "WBT_SRC_DIR=%s: %s", src, strerror(errno));
	}
	if (access("deploy/warble-local", X_OK) == 0) {
		return;
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	cr_assert(len > 0);
	self[len] = '\0';
	snprintf(cand, sizeof(cand), "%s/../..", dirname(self));
	cr_assert_eq(chdir(cand), 0);
	cr_assert_eq(access("deploy/warble-local", X_OK), 0, "cannot find deploy/warble-local");
}

/* lt_probe runs warble-probe with args (NULL-terminated) and returns its exit status; *ms gets how long it took. */
static int
lt_probe(const char *const *args, long long *ms)
{
	char        bin[512];
	const char *argv[8] = { bin };
	int         n = 1, st;
	long long   t0 = wbt_now_ms();
	pid_t       pid;

	cr_assert_eq(
	    wbt_bin_path(bin, sizeof(bin), "warble-probe"), 0, "build/bin/warble-probe is missing");
	while (args[n - 1] != NULL && n < 7) {
		argv[n] = args[n - 1];
		n++;
	}
	argv[n] = NULL;
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	/* the probe has its own deadline; this one only catches a hang */
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid) {
			break;
		}
		if (wbt_now_ms() - t0 > 20000) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			cr_assert_fail("warble-probe hung past its deadline");
		}
		wbt_sleep_ms(10);
	}
	if (ms != NULL) {
		*ms = wbt_now_ms() - t0;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* lt_http_get sends GET path to 127.0.0.1:port and returns the status code (-1 on error); 2 s deadline. */
static int
lt_http_get(int port, const char *path)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval     tv = { .tv_sec = 2 };
	char               buf[256];
	int                code = -1, fd = socket(AF_INET, SOCK_STREAM, 0);
	ssize_t            n;

	if (fd < 0) {
		return -1;
	}
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		n = snprintf(buf, sizeof(buf),
		    "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path);
		if (write(fd, buf, (size_t)n) == n && (n = read(fd, buf, sizeof(buf) - 1)) > 0) {
			buf[n] = '\0';
			if (sscanf(buf, "HTTP/1.%*d %d", &code) != 1) {
				code = -1;
			}
		}
	}
	close(fd);
	return code;
}

/* lt_wait_up pings url until it answers or timeout_ms passes; true if it answered. */
static bool
lt_wait_up(const char *url, int timeout_ms)
{
	long long deadline = wbt_now_ms() + timeout_ms;

	while (wbt_now_ms() < deadline) {
		if (wbt_ping(url, 500) == 0) {
			return true;
		}
		wbt_sleep_ms(50);
	}
	return false;
}

TestSuite(probe, .fini = lt_fini, .timeout = 90);

Test(probe, exit_status_follows_the_daemon)
{
	char      url[160], pub[160], data[160];
	long long ms;
	int       rc;

	cr_assert_eq(wbt_ipc_url(url, sizeof(url), "user"), 0);
	cr_assert_eq(wbt_ipc_url(pub, sizeof(pub), "userpub"), 0);
	cr_assert_eq(wbt_path(data, sizeof(data), "data"), 0);

	/* usage errors */
	rc = lt_probe((const char *[]) { NULL }, NULL);
	cr_expect_eq(rc, 2, "no URL: exit %d", rc);
	rc = lt_probe((const char *[]) { "--timeout-ms", "0", url, NULL }, NULL);
	cr_expect_eq(rc, 2, "--timeout-ms 0: exit %d", rc);
	rc = lt_probe((const char *[]) { "nosuch://x", NULL }, NULL);
	cr_expect_eq(rc, 2, "bad URL: exit %d", rc);
	rc = lt_probe((const char *[]) { "--help", NULL }, NULL);
	cr_expect_eq(rc, 0, "--help: exit %d", rc);

	/* nobody listening: fails, within its deadline */
	rc = lt_probe((const char *[]) { "--timeout-ms", "300", url, NULL }, &ms);
	cr_expect_eq(rc, 1, "probe of nothing: %d", rc);
	cr_expect_lt(ms, 5000, "probe of nothing took %lld ms", ms);

	/* a live daemon answers */
	const char *args[] = { "--user-url", url, "--user-pub-url", pub, "--data", data,
		"--workers", "1", NULL };
	wbt_daemon *d = wbt_spawn("warble-user", args, NULL);
	cr_assert_not_null(d);
	cr_assert_eq(wbt_wait_ready(d, url, 15000), 0);
	cr_expect_eq(lt_probe((const char *[]) { url, NULL }, NULL), 0, "live daemon");

	/* a stuck daemon (stopped) does not, and the probe still ends in time */
	cr_assert_eq(wbt_pause(d), 0);
	rc = lt_probe((const char *[]) { "--timeout-ms", "500", url, NULL }, &ms);
	cr_assert_eq(wbt_resume(d), 0);
	cr_expect_eq(rc, 1, "stopped daemon: %d", rc);
	cr_expect_lt(ms, 5000, "probe of a stopped daemon took %lld ms", ms);

	/* after it comes back it answers again at once: the probe that gave
	 * up mid-handshake must not have broken the listener (nng is built
	 * with the fix for upstream #1518, see deploy/nng/) */
	for (int i = 0; i < 20; i++) {
		cr_assert_eq(lt_probe((const char *[]) { "--timeout-ms", "5000", url, NULL }, NULL),
		    0, "probe %d after SIGCONT", i);
	}
	cr_expect_eq(wbt_stop(d, SIGTERM, 10000), 0, "warble-user did not exit 0 on SIGTERM");
	cr_expect_eq(lt_probe((const char *[]) { "--timeout-ms", "300", url, NULL }, NULL), 1,
	    "a stopped daemon still answered");
}

TestSuite(admin, .fini = lt_fini, .timeout = 90);

/* A daemon's admin port: a URL that is not http:// is a usage error, a port in use ends it. */
Test(admin, bad_url_and_port_in_use)
{
	char               url[160], data[160], murl[64], *log;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t          len = sizeof(sa);
	int                fd = socket(AF_INET, SOCK_STREAM, 0);

	cr_assert_eq(wbt_ipc_url(url, sizeof(url), "user"), 0);
	cr_assert_eq(wbt_path(data, sizeof(data), "data"), 0);
	const char *bad[] = { "--user-url", url, "--data", data, "--metrics-url",
		"tcp://127.0.0.1:0", NULL };
	wbt_daemon *d = wbt_spawn("warble-user", bad, NULL);
	cr_assert_not_null(d);
	cr_expect_eq(wbt_wait_exit(d, 10000), 2, "--metrics-url tcp://...: not a usage error");

	/* a port another process holds */
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	cr_assert(
	    fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(fd, 1) == 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	snprintf(murl, sizeof(murl), "http://127.0.0.1:%d", ntohs(sa.sin_port));
	const char *taken[] = { "--user-url", url, "--data", data, "--metrics-url", murl, NULL };
	d = wbt_spawn("warble-user", taken, NULL);
	cr_assert_not_null(d);
	cr_expect_eq(wbt_wait_exit(d, 10000), 1, "a daemon started with its admin port taken");
	log = wbt_read_file(d->log);
	cr_expect(log != NULL && strstr(log, "cannot serve the admin port on") != NULL &&
	              strstr(log, murl) != NULL,
	    "the log does not say why: %s", log != NULL ? log : "");
	free(log);
	close(fd);
}

TestSuite(launcher, .fini = lt_fini, .timeout = 120);

Test(launcher, runs_the_five_daemons_on_its_variables)
{
	static const char *vars[LT_NVARS][2] = {
		{ "WARBLE_USER_URL", "user" },
		{ "WARBLE_RELATION_URL", "relation" },
		{ "WARBLE_CONTENT_URL", "content" },
		{ "WARBLE_INBOX_URL", "inbox" },
		{ "WARBLE_GATEWAY_URL", "gateway" },
		{ "WARBLE_RELATION_PUB_URL", "relpub" },
		{ "WARBLE_CONTENT_PUB_URL", "conpub" },
		{ "WARBLE_USER_PUB_URL", "userpub" },
	};
	char  urls[LT_NVARS][160], data[160], gw[512], bindir[512], out[200], path[300];
	char  http[64];
	int   st, http_port;
	pid_t pid;

	lt_root();
	cr_assert_eq(wbt_path(data, sizeof(data), "data"), 0);
	cr_assert_eq(wbt_path(out, sizeof(out), "launcher.out"), 0);
	cr_assert_eq(wbt_bin_path(gw, sizeof(gw), "warble-gateway"), 0);
	snprintf(bindir, sizeof(bindir), "%s", dirname(gw));
	for (int i = 0; i < LT_NVARS; i++) {
		cr_assert_eq(wbt_ipc_url(urls[i], sizeof(urls[i]), vars[i][1]), 0);
	}
	/* HTTP is TCP only: a port that was free a moment ago */
	http_port = wbt_free_port();
	cr_assert_gt(http_port, 0);
	snprintf(http, sizeof(http), "http://127.0.0.1:%d", http_port);

	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fd, 1);
		dup2(fd, 2);
		for (int i = 0; i < LT_NVARS; i++) {
			setenv(vars[i][0], urls[i], 1);
		}
		setenv("WARBLE_HTTP_URL", http, 1);
		/* each daemon's admin port on any free port (not 9100-9104: tests run side by side) */
		setenv("WARBLE_METRICS_URL", "http://127.0.0.1:0", 1);
		setenv("WARBLE_DATA", data, 1);
		setenv("WARBLE_BIN", bindir, 1);
		setenv("WARBLE_PWHASH_OPS", "1", 1);
		setenv("WARBLE_PWHASH_MEM", "8192", 1);
		execl("/bin/bash", "bash", "deploy/warble-local", (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid); /* either side may get there first */
	lt_group = pid;

	/* every daemon comes up on the address the launcher was given */
	for (int i = 0; i < 5; i++) {
		cr_assert(lt_wait_up(urls[i], 20000), "%s=%s never answered; launcher output in %s",
		    vars[i][0], urls[i], out);
		cr_expect_eq(lt_probe((const char *[]) { urls[i], NULL }, NULL), 0,
		    "warble-probe %s", urls[i]);
	}
	/* the gateway's HTTP server is on WARBLE_HTTP_URL */
	int code = -1;
	for (long long end = wbt_now_ms() + 10000; code != 200 && wbt_now_ms() < end;
	     wbt_sleep_ms(50)) {
		code = lt_http_get(http_port, "/healthz");
	}
	cr_expect_eq(code, 200, "GET %s/healthz: %d", http, code);
	/* and each daemon its own admin port, the variable passed on */
	for (int i = 0; i < 5; i++) {
		int admin = wbt_metrics_port(urls[i]);
		cr_expect_gt(admin, 0, "%s=%s: no metrics_port in its stats", vars[i][0], urls[i]);
		cr_expect_eq(lt_http_get(admin, "/metrics"), 200, "%s=%s: GET /metrics on port %d",
		    vars[i][0], urls[i], admin);
	}
	/* which the launcher names */
	char *said = NULL;
	for (long long end = wbt_now_ms() + 10000; wbt_now_ms() < end; wbt_sleep_ms(50)) {
		free(said);
		said = wbt_read_file(out);
		if (said != NULL && strstr(said, "press Ctrl-C") != NULL) {
			break;
		}
	}
	cr_expect(said != NULL && strstr(said, "metrics for Prometheus") != NULL &&
	              strstr(said, "  inbox: http://127.0.0.1:0 (any free port") != NULL,
	    "the launcher does not name the admin ports: %s", said != NULL ? said : "");
	free(said);
	/* with their stores and logs under WARBLE_DATA */
	const char *stores[] = { "user", "relation", "content", "inbox" };
	for (int i = 0; i < 4; i++) {
		struct stat sb;
		snprintf(path, sizeof(path), "%s/%s", data, stores[i]);
		cr_expect(stat(path, &sb) == 0 && S_ISDIR(sb.st_mode), "no store folder %s", path);
	}
	const char *logs[] = { "user", "relation", "content", "inbox", "gateway" };
	for (int i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/log/%s.log", data, logs[i]);
		cr_expect_eq(access(path, R_OK), 0, "no log %s", path);
	}
	/* the events addresses were used too: every source listens there */
	for (int i = 5; i < LT_NVARS; i++) {
		char       *sock = strstr(urls[i], "ipc://") + strlen("ipc://");
		struct stat sb;
		cr_expect(stat(sock, &sb) == 0 && S_ISSOCK(sb.st_mode), "%s=%s: nobody listens",
		    vars[i][0], urls[i]);
	}

	/* SIGTERM stops everything cleanly */
	cr_assert_eq(kill(pid, SIGTERM), 0);
	long long deadline = wbt_now_ms() + 30000;
	pid_t     r;
	while ((r = waitpid(pid, &st, WNOHANG)) == 0 && wbt_now_ms() < deadline) {
		wbt_sleep_ms(20);
	}
	cr_assert_eq(r, pid, "the launcher did not stop within 30 s");
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "launcher exit status %d", st);
	/* no daemon is left: the group is empty (or holds only zombies being reaped by init) */
	deadline = wbt_now_ms() + 10000;
	while (kill(-pid, 0) == 0 && wbt_now_ms() < deadline) {
		wbt_sleep_ms(20);
	}
	cr_expect_eq(kill(-pid, 0), -1, "daemons outlived the launcher");
	lt_group = 0;
	for (int i = 0; i < 5; i++) {
		cr_expect_neq(wbt_ping(urls[i], 300), 0, "%s still answers", urls[i]);
	}
}
