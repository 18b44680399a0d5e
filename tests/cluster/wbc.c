/*
 * wbc.c - the multi-host test harness (see wbc.h): namespaces, veths and
 * a bridge made with iproute2's ip, daemons spawned into them
 * (wbt_spawn_netns), and the guard that removes them all if the test
 * process dies before it can.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wbc.h"

#define WBC_SUBNETS   512 /* the /24s of 198.18.0.0/15 */
#define WBC_HOST_LO   10  /* host i is .10 + i; the bridge is .1 */
#define WBC_ARGS_MAX  32  /* words of one ip command */
#define WBC_EXIT_MS   10000
#define WBC_NAMES_MAX 64 /* names acted on per folder and sweep */

struct wbc_host {
	wbc_net    *net;
	char        name[24];
	char        netns[48];
	char        veth[32]; /* the root side (at most IFNAMSIZ - 1 characters); eth0 inside */
	char        addr[24];
	char        prog[64];
	char      **args, **env; /* copies kept for wbc_restart, NULL-terminated */
	char       *ready_url;
	wbt_daemon *d;
};

struct wbc_net {
	pid_t    owner;
	char     prefix[24]; /* "wbc-<pid>-" */
	char     bridge[32];
	char     gw[24];   /* the bridge's address: the test's side */
	unsigned subnet;   /* 0..511 */
	int      guard_fd; /* the write end of the guard's pipe */
	pid_t    guard;
	int      nhosts;
	wbc_host hosts[WBC_HOSTS_MAX];
};

static wbc_net *wbc_cur; /* the network of this process, for wbc_fini and exit */
static bool     wbc_atexit_set;

/* wbc_ip_path returns where iproute2's ip is (NULL if it is not installed). */
static const char *
wbc_ip_path(void)
{
	static const char *const paths[] = { "/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip" };

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		if (access(paths[i], X_OK) == 0) {
			return paths[i];
		}
	}
	return NULL;
}

void
wbc_prefix(char *buf, size_t n, int pid)
{
	snprintf(buf, n, "wbc-%d-", pid);
}

/*
 * wbc_ipv runs ip with the space-separated words of fmt; its exit status (or -1), its output in
 * out.
 */
static int
wbc_ipv(char *out, size_t out_len, bool quiet, const char *fmt, va_list ap)
{
	const char *ip = wbc_ip_path();
	char        line[1024], words[1024], buf[2048], *argv[WBC_ARGS_MAX + 2], *save = NULL;
	size_t      got = 0;
	int         na = 0, p[2], st = 0;
	pid_t       pid;
	ssize_t     r;

	if (ip == NULL) {
		snprintf(buf, sizeof(buf), "iproute2's ip is not installed");
		goto fail;
	}
	vsnprintf(line, sizeof(line), fmt, ap);
	snprintf(words, sizeof(words), "%s", line);
	argv[na++] = "ip";
	for (char *w = strtok_r(words, " ", &save); w != NULL && na <= WBC_ARGS_MAX;
	     w = strtok_r(NULL, " ", &save)) {
		argv[na++] = w;
	}
	argv[na] = NULL;
	if (pipe2(p, O_CLOEXEC) != 0) {
		snprintf(buf, sizeof(buf), "pipe: %s", strerror(errno));
		goto fail;
	}
	fflush(NULL);
	if ((pid = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		snprintf(buf, sizeof(buf), "fork: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		dup2(p[1], STDERR_FILENO);
		execv(ip, argv);
		_exit(127);
	}
	close(p[1]);
	while (
	    (r = read(p[0], buf + got, sizeof(buf) - 1 - got)) > 0 || (r < 0 && errno == EINTR)) {
		got += r > 0 ? (size_t)r : 0;
		if (got == sizeof(buf) - 1) { /* keep the head, drain the rest */
			char sink[512];
			while (read(p[0], sink, sizeof(sink)) > 0) {
			}
			break;
		}
	}
	while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == ' ')) {
		got--; /* one line, to quote in a message */
	}
	buf[got] = '\0';
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
	}
	st = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (st != 0 && !quiet) {
		fprintf(stderr, "wbc: ip %s: exit %d: %s\n", line, st, buf);
	}
	if (out != NULL && out_len > 0) {
		snprintf(out, out_len, "%s", buf);
	}
	return st;
fail:
	if (!quiet) {
		fprintf(stderr, "wbc: ip: %s\n", buf);
	}
	if (out != NULL && out_len > 0) {
		snprintf(out, out_len, "%s", buf);
	}
	return -1;
}

/*
 * wbc_ip runs ip with the words of fmt, printing its output if it fails; returns its exit status.
 */
static int __attribute__((format(printf, 1, 2))) wbc_ip(const char *fmt, ...)
{
	va_list ap;
	int     rc;

	va_start(ap, fmt);
	rc = wbc_ipv(NULL, 0, false, fmt, ap);
	va_end(ap);
	return rc;
}

/* wbc_ip_quiet is wbc_ip for removals, where "not there" is not an error. */
static int __attribute__((format(printf, 1, 2))) wbc_ip_quiet(const char *fmt, ...)
{
	va_list ap;
	int     rc;

	va_start(ap, fmt);
	rc = wbc_ipv(NULL, 0, true, fmt, ap);
	va_end(ap);
	return rc;
}

int
wbc_ip_run(char *out, size_t out_len, const char *fmt, ...)
{
	va_list ap;
	int     rc;

	va_start(ap, fmt);
	rc = wbc_ipv(out, out_len, true, fmt, ap);
	va_end(ap);
	return rc;
}

/* wbc_name_pid reads the pid of a name "wbc-<pid>-..." (0 if the name is not of that form). */
static int
wbc_name_pid(const char *name)
{
	char *end;
	long  pid;

	if (strncmp(name, "wbc-", 4) != 0 || !isdigit((unsigned char)name[4])) {
		return 0;
	}
	pid = strtol(name + 4, &end, 10);
	return *end == '-' && pid > 0 && pid < INT32_MAX ? (int)pid : 0;
}

/*
 * wbc_each calls fn(netns, name, out) for every link (/sys/class/net), then every namespace
 * (/run/netns), whose name passes match; returns how many passed.
 */
static int
wbc_each(bool (*match)(const char *name, const void *arg), const void *arg,
    void (*fn)(bool netns, const char *name, void *out), void         *out)
{
	static const char *const dirs[] = { "/sys/class/net", "/run/netns" };
	char                     names[WBC_NAMES_MAX][NAME_MAX + 1];
	int                      total = 0;

	/* links first: a veth's root side and the bridge go before the namespaces */
	for (int k = 0; k < 2; k++) {
		DIR           *d = opendir(dirs[k]);
		struct dirent *e;
		int            n = 0;

		while (d != NULL && (e = readdir(d)) != NULL) {
			if (e->d_name[0] != '.' && match(e->d_name, arg)) {
				if (n < WBC_NAMES_MAX) { /* read the folder whole, then act */
					snprintf(names[n++], sizeof(names[0]), "%s", e->d_name);
				}
				total++;
			}
		}
		if (d != NULL) {
			closedir(d);
		}
		for (int i = 0; fn != NULL && i < n; i++) {
			fn(k == 1, names[i], out);
		}
	}
	return total;
}

/* wbc_match_prefix tells whether name starts with the prefix arg. */
static bool
wbc_match_prefix(const char *name, const void *arg)
{
	return strncmp(name, arg, strlen(arg)) == 0;
}

/* wbc_match_stale tells whether name is a wbc name of a process that is gone. */
static bool
wbc_match_stale(const char *name, const void *arg)
{
	int pid = wbc_name_pid(name);

	(void)arg;
	return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
}

/* wbc_remove deletes one namespace or link. */
static void
wbc_remove(bool netns, const char *name, void *out)
{
	(void)out;
	if (netns) {
		wbc_ip_quiet("netns del %s", name);
	} else {
		wbc_ip_quiet("link del %s", name);
	}
}

/* wbc_first keeps the first name seen. */
static void
wbc_first(bool netns, const char *name, void *out)
{
	char *what = out;

	if (what[0] == '\0') {
		snprintf(what, 64, "%s %s", netns ? "namespace" : "link", name);
	}
}

int
wbc_leftovers(const char *prefix, char *what, size_t what_len)
{
	char first[64] = "";
	int  n = wbc_each(wbc_match_prefix, prefix, wbc_first, first);

	if (what != NULL && what_len > 0) {
		snprintf(what, what_len, "%s", first);
	}
	return n;
}

/*
 * The guard: /bin/sh reading the pipe whose only writer is the test
 * process, in a session of its own and deaf to INT, TERM and HUP, so that
 * it outlives the test whatever ends it.  When the test process is gone
 * (cat sees the end of the pipe) it deletes every link, then every
 * namespace, named with the test's prefix ($1), with ip ($2).  After a
 * wbc_close there is nothing left for it to do.
 */
static const char wbc_guard_sh[] =
    "cat >/dev/null\n"
    "for l in $(ls /sys/class/net); do\n"
    "\tcase $l in \"$1\"*) \"$2\" link del \"$l\" 2>/dev/null ;; esac\n"
    "done\n"
    "for n in $(ls /run/netns 2>/dev/null); do\n"
    "\tcase $n in \"$1\"*) \"$2\" netns del \"$n\" 2>/dev/null ;; esac\n"
    "done\n";

/* wbc_guard_start forks the guard of n; 0 or -1. */
static int
wbc_guard_start(wbc_net *n)
{
	char            *argv[] = { "sh", "-c", (char *)wbc_guard_sh, "wbc-guard", n->prefix,
		           (char *)wbc_ip_path(), NULL };
	extern char    **environ;
	struct sigaction ign;
	sigset_t         none;
	int              p[2];

	if (pipe2(p, O_CLOEXEC) != 0) {
		return -1;
	}
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&none);
	fflush(NULL);
	if ((n->guard = fork()) < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (n->guard == 0) {
		/* async-signal-safe calls only until execve */
		setsid();
		sigaction(SIGINT, &ign, NULL);
		sigaction(SIGTERM, &ign, NULL);
		sigaction(SIGHUP, &ign, NULL);
		sigprocmask(SIG_SETMASK, &none, NULL);
		dup2(p[0], STDIN_FILENO);
		execve("/bin/sh", argv, environ);
		_exit(127);
	}
	close(p[0]);
	n->guard_fd = p[1];
	return 0;
}

/* wbc_guard_end lets the guard run and waits (bounded) for it to finish. */
static void
wbc_guard_end(wbc_net *n)
{
	long long end = wbt_now_ms() + WBC_EXIT_MS;

	if (n->guard_fd >= 0) {
		close(n->guard_fd);
		n->guard_fd = -1;
	}
	while (n->guard > 0 && waitpid(n->guard, NULL, WNOHANG) == 0) {
		if (wbt_now_ms() > end) {
			fprintf(
			    stderr, "wbc: the guard (pid %d) is still sweeping\n", (int)n->guard);
			break;
		}
		wbt_sleep_ms(5);
	}
	n->guard = 0;
}

/* wbc_subnet_addr writes the address .last of subnet s (198.18.0.0/15 cut into /24s) into buf. */
static void
wbc_subnet_addr(char *buf, size_t n, unsigned s, unsigned last)
{
	snprintf(buf, n, "198.%u.%u.%u", 18 + s / 256, s % 256, last);
}

/* wbc_subnet_used tells whether an interface other than except has an address in subnet s. */
static bool
wbc_subnet_used(unsigned s, const char *except)
{
	char            base[24];
	struct in_addr  a;
	struct ifaddrs *all, *i;
	bool            used = false;

	wbc_subnet_addr(base, sizeof(base), s, 0);
	inet_pton(AF_INET, base, &a);
	if (getifaddrs(&all) != 0) {
		return true;
	}
	for (i = all; i != NULL; i = i->ifa_next) {
		if (i->ifa_addr != NULL && i->ifa_addr->sa_family == AF_INET &&
		    strcmp(i->ifa_name, except) != 0) {
			uint32_t v = ntohl(((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr);
			used |= (v & 0xffffff00u) == ntohl(a.s_addr);
		}
	}
	freeifaddrs(all);
	return used;
}

/* wbc_subnet_take gives the bridge the .1 of a /24 no other interface uses; 0 or -1. */
static int
wbc_subnet_take(wbc_net *n)
{
	unsigned start = (unsigned)n->owner % WBC_SUBNETS;

	for (unsigned k = 0; k < WBC_SUBNETS; k++) {
		unsigned s = (start + k) % WBC_SUBNETS;

		if (wbc_subnet_used(s, n->bridge)) {
			continue;
		}
		wbc_subnet_addr(n->gw, sizeof(n->gw), s, 1);
		if (wbc_ip("addr add %s/24 dev %s", n->gw, n->bridge) != 0) {
			return -1;
		}
		if (!wbc_subnet_used(s, n->bridge)) { /* nobody took it meanwhile */
			n->subnet = s;
			return 0;
		}
		wbc_ip("addr del %s/24 dev %s", n->gw, n->bridge);
	}
	return -1;
}

static void
wbc_atexit(void)
{
	if (wbc_cur != NULL && wbc_cur->owner == getpid()) {
		wbc_close(wbc_cur);
	}
}

int
wbc_open(wbc_net **out, char *why, size_t why_len)
{
	char     msg[512];
	wbc_net *n;
	int      rc;

	*out = NULL;
	snprintf(why, why_len, "%s", "");
	if (geteuid() != 0) {
		snprintf(why, why_len,
		    "the cluster suite makes network namespaces and a bridge, which needs root "
		    "(CI runs it as root)");
		return WBC_SKIP;
	}
	if (wbc_ip_path() == NULL) {
		snprintf(
		    why, why_len, "iproute2's ip is not installed (tests/deps.sh installs it)");
		return WBC_SKIP;
	}
	if (wbc_cur != NULL && wbc_cur->owner == getpid()) {
		snprintf(why, why_len, "this process has a network open already");
		return -1;
	}
	if ((n = calloc(1, sizeof(*n))) == NULL) {
		snprintf(why, why_len, "out of memory");
		return -1;
	}
	n->owner = getpid();
	n->guard_fd = -1;
	wbc_prefix(n->prefix, sizeof(n->prefix), (int)n->owner);
	snprintf(n->bridge, sizeof(n->bridge), "%sbr", n->prefix);
	wbc_each(wbc_match_stale, NULL, wbc_remove, NULL); /* an earlier run's, if it crashed */
	if (!wbc_atexit_set) {
		wbc_atexit_set = true;
		atexit(wbc_atexit);
	}
	if (wbc_guard_start(n) != 0) {
		snprintf(why, why_len, "cannot start the guard: %s", strerror(errno));
		free(n);
		return -1;
	}
	wbc_cur = n;
	if ((rc = wbc_ip_run(msg, sizeof(msg), "link add %s type bridge", n->bridge)) != 0) {
		bool denied = strstr(msg, "not permitted") != NULL ||
		              strstr(msg, "not supported") != NULL || rc == 127;
		snprintf(why, why_len, "cannot make a bridge here (ip link add: %s)", msg);
		wbc_close(n);
		return denied ? WBC_SKIP : -1;
	}
	if (wbc_subnet_take(n) != 0 || wbc_ip("link set %s up", n->bridge) != 0) {
		snprintf(
		    why, why_len, "cannot give bridge %s a free /24 of 198.18.0.0/15", n->bridge);
		wbc_close(n);
		return -1;
	}
	*out = n;
	return 0;
}

int
wbc_host_add(wbc_net *n, const char *name, wbc_host **out)
{
	wbc_host *h;
	size_t    len = strlen(name);

	*out = NULL;
	for (size_t i = 0; i < len; i++) {
		if (!isalnum((unsigned char)name[i])) {
			len = 0;
		}
	}
	if (len == 0 || len >= sizeof(h->name) || n->nhosts == WBC_HOSTS_MAX) {
		fprintf(stderr, "wbc: cannot add host '%s' (a-z0-9, at most %d hosts)\n", name,
		    WBC_HOSTS_MAX);
		return -1;
	}
	h = &n->hosts[n->nhosts];
	memset(h, 0, sizeof(*h));
	h->net = n;
	snprintf(h->name, sizeof(h->name), "%s", name);
	snprintf(h->netns, sizeof(h->netns), "%s%s", n->prefix, name);
	snprintf(h->veth, sizeof(h->veth), "%sv%d", n->prefix, n->nhosts);
	wbc_subnet_addr(h->addr, sizeof(h->addr), n->subnet, WBC_HOST_LO + (unsigned)n->nhosts);
	n->nhosts++; /* counted now: wbc_close removes a host made halfway */
	if (strlen(h->veth) >= IFNAMSIZ) {
		fprintf(stderr, "wbc: link name %s is too long\n", h->veth);
		return -1;
	}
	if (wbc_ip("netns add %s", h->netns) != 0 ||
	    wbc_ip("link add %s type veth peer name eth0 netns %s", h->veth, h->netns) != 0 ||
	    wbc_ip("link set %s master %s up", h->veth, n->bridge) != 0 ||
	    wbc_ip("-n %s link set lo up", h->netns) != 0 ||
	    wbc_ip("-n %s addr add %s/24 dev eth0", h->netns, h->addr) != 0 ||
	    wbc_ip("-n %s link set eth0 up", h->netns) != 0) {
		fprintf(stderr, "wbc: host %s was not made\n", name);
		return -1;
	}
	*out = h;
	return 0;
}

const char *
wbc_host_name(const wbc_host *h)
{
	return h->name;
}

const char *
wbc_host_netns(const wbc_host *h)
{
	return h->netns;
}

const char *
wbc_host_addr(const wbc_host *h)
{
	return h->addr;
}

int
wbc_url(char *buf, size_t n, const wbc_host *h, const char *scheme, int port)
{
	int rv = snprintf(buf, n, "%s://%s:%d", scheme, h->addr, port);

	return rv < 0 || (size_t)rv >= n ? -1 : 0;
}

/* wbc_strv_free frees a copy made by wbc_strv_dup. */
static void
wbc_strv_free(char **v)
{
	for (size_t i = 0; v != NULL && v[i] != NULL; i++) {
		free(v[i]);
	}
	free(v);
}

/*
 * wbc_strv_dup copies a NULL-terminated list of strings (NULL stays NULL); false if out of memory.
 */
static bool
wbc_strv_dup(const char *const *v, char ***out)
{
	size_t n = 0;

	*out = NULL;
	while (v != NULL && v[n] != NULL) {
		n++;
	}
	if (v == NULL) {
		return true;
	}
	if ((*out = calloc(n + 1, sizeof(char *))) == NULL) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		if (((*out)[i] = strdup(v[i])) == NULL) {
			wbc_strv_free(*out);
			*out = NULL;
			return false;
		}
	}
	return true;
}

/* wbc_spawn starts h's program as kept and waits until it answers. */
static int
wbc_spawn(wbc_host *h, int timeout_ms)
{
	h->d = wbt_spawn_netns(
	    h->netns, h->prog, (const char *const *)h->args, (const char *const *)h->env);
	if (h->d == NULL) {
		return -1;
	}
	if (wbt_wait_ready(h->d, h->ready_url, timeout_ms) != 0) {
		fprintf(stderr, "wbc: %s on host %s (%s) did not answer on %s\n", h->prog, h->name,
		    h->addr, h->ready_url);
		return -1;
	}
	return 0;
}

int
wbc_start(wbc_host *h, const char *prog, const char *const *args, const char *const *env,
    const char *ready_url, int timeout_ms)
{
	if (h->d != NULL && wbt_alive(h->d)) {
		fprintf(stderr, "wbc: host %s runs %s already\n", h->name, h->prog);
		return -1;
	}
	wbc_strv_free(h->args);
	wbc_strv_free(h->env);
	free(h->ready_url);
	h->args = h->env = NULL;
	snprintf(h->prog, sizeof(h->prog), "%s", prog);
	if ((h->ready_url = strdup(ready_url)) == NULL || !wbc_strv_dup(args, &h->args) ||
	    !wbc_strv_dup(env, &h->env)) {
		return -1;
	}
	return wbc_spawn(h, timeout_ms);
}

wbt_daemon *
wbc_daemon(const wbc_host *h)
{
	return h->d;
}

int
wbc_kill(wbc_host *h, int sig)
{
	wbt_daemon *d = h->d;

	if (d == NULL) {
		return -1;
	}
	d->stopping = true; /* asked for: no log tail */
	if (d->pid != 0 && sig != 0) {
		kill(d->pid, sig);
	}
	if (wbt_wait_exit(d, WBC_EXIT_MS) < 0) {
		fprintf(stderr, "wbc: %s on host %s (pid %d) did not exit after signal %d\n",
		    h->prog, h->name, (int)d->pid, sig);
		return -1;
	}
	return 0;
}

int
wbc_restart(wbc_host *h, int sig, int timeout_ms)
{
	if (h->ready_url == NULL || wbc_kill(h, sig) != 0) {
		return -1;
	}
	return wbc_spawn(h, timeout_ms);
}

int
wbc_cut(wbc_host *h)
{
	return wbc_ip("link set %s down", h->veth) == 0 ? 0 : -1;
}

int
wbc_heal(wbc_host *h)
{
	return wbc_ip("link set %s up", h->veth) == 0 ? 0 : -1;
}

int
wbc_block(wbc_host *a, wbc_host *b)
{
	if (wbc_ip("-n %s route add blackhole %s/32", a->netns, b->addr) != 0) {
		return -1;
	}
	if (wbc_ip("-n %s route add blackhole %s/32", b->netns, a->addr) != 0) {
		wbc_ip_quiet("-n %s route del blackhole %s/32", a->netns, b->addr);
		return -1;
	}
	return 0;
}

int
wbc_unblock(wbc_host *a, wbc_host *b)
{
	int rc = wbc_ip("-n %s route del blackhole %s/32", a->netns, b->addr);

	rc |= wbc_ip("-n %s route del blackhole %s/32", b->netns, a->addr);
	return rc == 0 ? 0 : -1;
}

int
wbc_partition(wbc_host *h, int ms)
{
	if (wbc_cut(h) != 0) {
		return -1;
	}
	wbt_sleep_ms(ms);
	return wbc_heal(h);
}

int
wbc_close(wbc_net *n)
{
	char what[64];
	int  left;

	if (n == NULL || n->owner != getpid()) {
		return 0; /* a forked child leaves its parent's network alone */
	}
	for (int i = 0; i < n->nhosts; i++) {
		wbc_host *h = &n->hosts[i];

		if (h->d != NULL && h->d->pid != 0) {
			wbc_kill(h, SIGKILL);
		}
	}
	for (int i = 0; i < n->nhosts; i++) {
		wbc_ip_quiet("link del %s", n->hosts[i].veth); /* both ends of the veth */
		wbc_ip_quiet("netns del %s", n->hosts[i].netns);
	}
	wbc_ip_quiet("link del %s", n->bridge);
	wbc_each(wbc_match_prefix, n->prefix, wbc_remove, NULL); /* anything made halfway */
	wbc_guard_end(n);
	if ((left = wbc_leftovers(n->prefix, what, sizeof(what))) > 0) {
		fprintf(
		    stderr, "wbc: %d of this run's names are left, %s among them\n", left, what);
	}
	for (int i = 0; i < n->nhosts; i++) {
		wbc_strv_free(n->hosts[i].args);
		wbc_strv_free(n->hosts[i].env);
		free(n->hosts[i].ready_url);
	}
	if (wbc_cur == n) {
		wbc_cur = NULL;
	}
	free(n);
	return left == 0 ? 0 : -1;
}

void
wbc_fini(void)
{
	if (wbc_cur != NULL && wbc_cur->owner == getpid()) {
		wbc_close(wbc_cur);
	}
	wbt_cleanup();
}
