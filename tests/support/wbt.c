/*
 * wbt.c - the Warble test harness (see wbt.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rt_client.h"
#include "rt_tls.h"
#include "wbt.h"
#include "wb_clock.h"

#define WBT_MAX_DAEMONS 1024 /* fault and soak tests restart daemons many times */
#define WBT_TAIL_LINES  40

extern char **environ;

static pthread_mutex_t wbt_mtx = PTHREAD_MUTEX_INITIALIZER;
static char            wbt_tmp[64];
static pid_t           wbt_owner; /* the process that made wbt_tmp */
static wbt_daemon      wbt_daemons[WBT_MAX_DAEMONS];
static int             wbt_ndaemons;
static bool            wbt_atexit_set;

/* wbt_now_ms returns a monotonic clock in milliseconds, for deadlines. */
long long
wbt_now_ms(void)
{
	return (long long)(wb_mono_us() / 1000);
}

/* wbt_sleep_ms sleeps for ms milliseconds (for poll loops, never as synchronization). */
void
wbt_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
}

static void
wbt_atexit(void)
{
	wbt_cleanup();
}

static void
wbt_atexit_ensure(void)
{
	/* caller holds wbt_mtx */
	if (!wbt_atexit_set) {
		wbt_atexit_set = true;
		atexit(wbt_atexit);
	}
}

/* wbt_ms scales base_ms by WARBLE_TEST_SLOW (sanitizer builds raise it). */
int
wbt_ms(int base_ms)
{
	static int slow;

	if (slow == 0) {
		const char *e = getenv("WARBLE_TEST_SLOW");
		int         k = e != NULL ? atoi(e) : 1;
		slow = k >= 1 && k <= 100 ? k : 1;
	}
	return base_ms * slow;
}

/* wbt_dir returns this process's temp dir, creating it on first use (NULL on failure). */
const char *
wbt_dir(void)
{
	const char *d = NULL;

	pthread_mutex_lock(&wbt_mtx);
	wbt_atexit_ensure();
	if (wbt_tmp[0] == '\0' || wbt_owner != getpid()) {
		snprintf(wbt_tmp, sizeof(wbt_tmp), "/tmp/wbt.XXXXXX");
		if (mkdtemp(wbt_tmp) == NULL) {
			fprintf(stderr, "wbt: mkdtemp: %s\n", strerror(errno));
			wbt_tmp[0] = '\0';
		} else {
			wbt_owner = getpid();
		}
	}
	if (wbt_tmp[0] != '\0') {
		d = wbt_tmp;
	}
	pthread_mutex_unlock(&wbt_mtx);
	return d;
}

/* wbt_path writes <dir>/<name> into buf; returns 0, or -1 if it does not fit. */
int
wbt_path(char *buf, size_t n, const char *name)
{
	const char *d = wbt_dir();
	int         rv;

	if (d == NULL) {
		return -1;
	}
	rv = snprintf(buf, n, "%s/%s", d, name);
	return rv < 0 || (size_t)rv >= n ? -1 : 0;
}

/* wbt_ipc_url writes ipc://<dir>/<name>.ipc into buf; returns 0, or -1 if it does not fit. */
int
wbt_ipc_url(char *buf, size_t n, const char *name)
{
	const char *d = wbt_dir();
	int         rv;

	if (d == NULL) {
		return -1;
	}
	rv = snprintf(buf, n, "ipc://%s/%s.ipc", d, name);
	/* sun_path holds 108 bytes including the NUL */
	return rv < 0 || (size_t)rv >= n || rv - 6 >= 104 ? -1 : 0;
}

/*
 * Test ports come from below Linux's ephemeral range (32768-60999 by
 * default): a port the kernel picked for bind(0) is in that range, and an
 * outgoing connection of any process could take it between this check and
 * the daemon's listen ("Address in use", seen once in 14 authz runs).
 */
#define WBT_PORT_LO 20000
#define WBT_PORT_HI 32000

/* wbt_port_free tells whether port can be bound on 127.0.0.1 now. */
static bool
wbt_port_free(int port)
{
	struct sockaddr_in sa;
	int                fd;
	bool               ok;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		return false;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	ok = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

/* wbt_free_port returns a TCP port on 127.0.0.1 that was free a moment ago (-1 on error). */
int
wbt_free_port(void)
{
	static atomic_uint next;
	const unsigned     span = WBT_PORT_HI - WBT_PORT_LO;
	const unsigned     start = ((unsigned)getpid() * 7919u) % span; /* apart per process */

	for (unsigned i = 0; i < span; i++) {
		int port = WBT_PORT_LO + (int)((start + atomic_fetch_add(&next, 1)) % span);

		if (wbt_port_free(port)) {
			return port;
		}
	}
	return -1;
}

/* wbt_tcp_url writes tcp://127.0.0.1:<free port> into buf; returns the port or -1. */
int
wbt_tcp_url(char *buf, size_t n)
{
	int port = wbt_free_port();

	if (port < 0) {
		return -1;
	}
	snprintf(buf, n, "tcp://127.0.0.1:%d", port);
	return port;
}

/* wbt_bin_path finds a program of the build (see wbt.h) into buf; returns 0 or -1. */
int
wbt_bin_path(char *buf, size_t n, const char *name)
{
	const char *dir = getenv("WBT_BIN_DIR");
	char        self[512];
	ssize_t     len;
	int         rv;

	if (dir != NULL && dir[0] != '\0') {
		rv = snprintf(buf, n, "%s/%s", dir, name);
	} else {
		if ((len = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0) {
			return -1;
		}
		self[len] = '\0';
		/* <build>/test/<test> -> <build>/bin/<name> */
		rv = snprintf(buf, n, "%s/../bin/%s", dirname(self), name);
	}
	if (rv < 0 || (size_t)rv >= n) {
		return -1;
	}
	return access(buf, X_OK) == 0 ? 0 : -1;
}

/* wbt_key_is tells whether "KEY=VALUE" a and b name the same KEY. */
static bool
wbt_key_is(const char *a, const char *b)
{
	size_t keylen = strcspn(a, "=");

	return strncmp(a, b, keylen) == 0 && b[keylen] == '=';
}

/*
 * Every daemon's admin port on any free port of loopback, whatever the
 * test's own environment says, unless extra names one: tests run side by
 * side, and beside a `make run` on the default ports (wbt_metrics_port
 * finds it).
 */
static const char wbt_metrics_any[] = "WARBLE_METRICS_URL=http://127.0.0.1:0";

/*
 * wbt_env_build copies environ with each "KEY=VALUE" of extra overriding
 * or added (of two for one KEY in extra, the later), and wbt_metrics_any
 * unless extra sets it.
 */
static char **
wbt_env_build(const char *const *extra)
{
	size_t ne = 0, nx = 0, k = 0;
	char **envp;
	bool   metrics = false;

	while (environ[ne] != NULL) {
		ne++;
	}
	while (extra != NULL && extra[nx] != NULL) {
		nx++;
	}
	if ((envp = calloc(ne + nx + 2, sizeof(char *))) == NULL) {
		return NULL;
	}
	for (size_t j = 0; j < nx; j++) {
		metrics |= wbt_key_is(extra[j], wbt_metrics_any);
	}
	if (!metrics) {
		envp[k++] = (char *)wbt_metrics_any;
	}
	for (size_t i = 0; i < ne; i++) {
		const char *eq = strchr(environ[i], '=');
		size_t      keylen = eq != NULL ? (size_t)(eq - environ[i]) : strlen(environ[i]);
		bool        shadowed = wbt_key_is(environ[i], wbt_metrics_any);

		for (size_t j = 0; j < nx; j++) {
			if (strncmp(extra[j], environ[i], keylen) == 0 && extra[j][keylen] == '=') {
				shadowed = true;
			}
		}
		if (!shadowed) {
			envp[k++] = environ[i];
		}
	}
	for (size_t j = 0; j < nx; j++) {
		bool later = false;

		for (size_t l = j + 1; l < nx && !later; l++) {
			later = wbt_key_is(extra[j], extra[l]);
		}
		if (!later) {
			envp[k++] = (char *)extra[j];
		}
	}
	envp[k] = NULL;
	return envp;
}

/* wbt_spawn starts build/bin/<name> (or the program at a path) with args and extra env; see wbt.h. */
wbt_daemon *
wbt_spawn(const char *name, const char *const *args, const char *const *env)
{
	return wbt_spawn_netns(NULL, name, args, env);
}

/* wbt_spawn_netns is wbt_spawn in the network namespace netns (NULL: the test's own); see wbt.h. */
wbt_daemon *
wbt_spawn_netns(
    const char *netns, const char *name, const char *const *args, const char *const *env)
{
	wbt_spawn_opts o = { .netns = netns };

	return wbt_spawn_ex(name, args, env, &o);
}

/* wbt_spawn_ex starts a program with options (see wbt.h). */
wbt_daemon *
wbt_spawn_ex(
    const char *name, const char *const *args, const char *const *env, const wbt_spawn_opts *o)
{
	const char *netns = o != NULL ? o->netns : NULL;
	char        bin[512], nspath[256];
	char      **argv = NULL, **envp = NULL;
	const char *base = strrchr(name, '/');
	size_t      na = 0;
	wbt_daemon *d = NULL;
	pid_t       parent, pid;
	int         fd = -1, nsfd = -1;

	if (wbt_dir() == NULL) {
		return NULL;
	}
	if (base != NULL) {
		/* a program outside the build, by its path (/usr/bin/prometheus) */
		base++;
		if ((size_t)snprintf(bin, sizeof(bin), "%s", name) >= sizeof(bin) ||
		    ((o == NULL || o->setup == NULL) && access(bin, X_OK) != 0)) {
			fprintf(stderr, "wbt: cannot run %s (not installed?)\n", name);
			return NULL;
		}
	} else if (wbt_bin_path(bin, sizeof(bin), name) != 0) {
		fprintf(stderr, "wbt: cannot find the program %s (build it, or set WBT_BIN_DIR)\n",
		    name);
		return NULL;
	} else {
		base = name;
	}
	while (args != NULL && args[na] != NULL) {
		na++;
	}
	if ((argv = calloc(na + 2, sizeof(char *))) == NULL ||
	    (envp = wbt_env_build(o != NULL && o->clean_env ? NULL : env)) == NULL) {
		goto out;
	}
	if (o != NULL && o->clean_env) {
		size_t ne = 0;
		while (env != NULL && env[ne] != NULL) {
			ne++;
		}
		free(envp);
		if ((envp = calloc(ne + 1, sizeof(char *))) == NULL) {
			goto out;
		}
		for (size_t i = 0; i < ne; i++) {
			envp[i] = (char *)env[i];
		}
	}
	if (o != NULL && o->log_name != NULL) {
		base = o->log_name;
	}
	argv[0] = (char *)name;
	for (size_t i = 0; i < na; i++) {
		argv[i + 1] = (char *)args[i];
	}

	pthread_mutex_lock(&wbt_mtx);
	if (wbt_ndaemons == WBT_MAX_DAEMONS) {
		pthread_mutex_unlock(&wbt_mtx);
		fprintf(stderr, "wbt: more than %d daemons in one test\n", WBT_MAX_DAEMONS);
		goto out;
	}
	d = &wbt_daemons[wbt_ndaemons];
	memset(d, 0, sizeof(*d));
	snprintf(d->name, sizeof(d->name), "%s", base);
	snprintf(d->log, sizeof(d->log), "%s/%s%s%s.%d.log", wbt_tmp, base, netns ? "." : "",
	    netns ? netns : "", wbt_ndaemons); /* warble-inbox.<netns>.7.log */
	d->status = -1;
	pthread_mutex_unlock(&wbt_mtx);

	if ((fd = open(d->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0) {
		fprintf(stderr, "wbt: %s: %s\n", d->log, strerror(errno));
		d = NULL;
		goto out;
	}
	/* what `ip netns exec` joins: the namespace that `ip netns add` bound there */
	if (netns != NULL &&
	    ((size_t)snprintf(nspath, sizeof(nspath), "/run/netns/%s", netns) >= sizeof(nspath) ||
	        (nsfd = open(nspath, O_RDONLY | O_CLOEXEC)) < 0)) {
		fprintf(stderr, "wbt: no network namespace %s: %s\n", netns, strerror(errno));
		d = NULL;
		goto out;
	}
	parent = getpid();
	fflush(NULL);
	if ((pid = fork()) < 0) {
		fprintf(stderr, "wbt: fork: %s\n", strerror(errno));
		d = NULL;
		goto out;
	}
	if (pid == 0) {
		/* Child: async-signal-safe calls only until execve. */
		struct sigaction sa;
		sigset_t         none;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent) {
			_exit(127); /* the test died before we set the death signal */
		}
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGPIPE, &sa, NULL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (nsfd >= 0 && setns(nsfd, CLONE_NEWNET) != 0) {
			_exit(126);
		}
		if (o != NULL && o->setup != NULL) {
			dup2(fd, STDERR_FILENO); /* where the hook's failure shows */
			o->setup(o->setup_arg);
		}
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		execve(bin, argv, envp);
		_exit(127);
	}
	pthread_mutex_lock(&wbt_mtx);
	d->pid = pid;
	wbt_ndaemons++;
	pthread_mutex_unlock(&wbt_mtx);
out:
	if (fd >= 0) {
		close(fd);
	}
	if (nsfd >= 0) {
		close(nsfd);
	}
	free(argv);
	free(envp);
	return d;
}

/* wbt_ping_once sends one ping to url, without TLS if plain; a wb_err code. */
static int
wbt_ping_once(const char *url, int timeout_ms, bool plain)
{
	rt_client_opts o = { .timeout_ms = timeout_ms, .plain = plain };
	rt_client     *c;
	wb_obj        *req, *rep = NULL;
	int            rv;

	if ((rv = rt_client_open(&c, url, &o)) != 0) {
		return rv;
	}
	if ((req = wb_request(WB_OP_PING)) == NULL) {
		rt_client_close(c);
		return WB_ENOMEM;
	}
	rv = rt_call(c, req, &rep);
	wb_msg_free(rep);
	wb_msg_free(req);
	rt_client_close(c);
	return rv;
}

/*
 * wbt_ping sends one ping to url with a deadline; returns a wb_err code
 * (0 = answered ok).  A port that refuses the test's TLS identity
 * (WBT_TLS=1) is asked again without: the gateway's public port.
 */
int
wbt_ping(const char *url, int timeout_ms)
{
	int rv = wbt_ping_once(url, timeout_ms, false);

	return rv == WB_EUNAVAIL && rt_tls_default() != NULL ? wbt_ping_once(url, timeout_ms, true)
	                                                     : rv;
}

uint64_t
wbt_gauge(const wb_obj *rep, const char *name)
{
	const wb_obj *g = NULL;
	size_t        n = 0;

	if (rep != NULL && wb_get_objs(rep, WB_F_GAUGES, &g, &n)) {
		for (size_t i = 0; i < n; i++) {
			if (strcmp(wb_str(&g[i], WB_F_NAME, ""), name) == 0) {
				return wb_u64(&g[i], WB_F_VALUE, 0);
			}
		}
	}
	return UINT64_MAX;
}

uint64_t
wbt_op_count(const char *url, const char *op)
{
	rt_client    *c;
	wb_obj       *req, *rep = NULL;
	const wb_obj *st;
	size_t        n;
	uint64_t      count = UINT64_MAX;

	if (rt_client_open(&c, url, NULL) != WB_OK) {
		return count;
	}
	if ((req = wb_request(WB_OP_STATS)) != NULL && rt_call(c, req, &rep) == WB_OK) {
		count = 0;
		if (wb_get_objs(rep, WB_F_STATS, &st, &n)) {
			for (size_t i = 0; i < n; i++) {
				if (strcmp(wb_str(&st[i], WB_F_NAME, ""), op) == 0) {
					count = wb_u64(&st[i], WB_F_COUNT, 0);
				}
			}
		}
	}
	wb_msg_free(rep);
	wb_msg_free(req);
	rt_client_close(c);
	return count;
}

int
wbt_metrics_port(const char *url)
{
	rt_client *c;
	wb_obj    *req, *rep = NULL;
	uint64_t   port = UINT64_MAX;

	if (rt_client_open(&c, url, NULL) != WB_OK) {
		return -1;
	}
	if ((req = wb_request(WB_OP_STATS)) != NULL && rt_call(c, req, &rep) == WB_OK) {
		port = wbt_gauge(rep, "metrics_port");
	}
	wb_msg_free(rep);
	wb_msg_free(req);
	rt_client_close(c);
	return port > 0 && port < 65536 ? (int)port : -1;
}

char *
wbt_repeat(const char *s, size_t n)
{
	size_t len = strlen(s);
	char  *b = malloc(len * n + 1);

	if (b == NULL) {
		abort();
	}
	for (size_t i = 0; i < n; i++) {
		memcpy(b + i * len, s, len);
	}
	b[len * n] = '\0';
	return b;
}

char *
wbt_read_file(const char *path)
{
	FILE  *f = fopen(path, "r");
	char  *buf = NULL;
	size_t n = 0, cap = 0, got;

	if (f == NULL) {
		return NULL;
	}
	do {
		if (n + 4096 + 1 > cap) {
			char *p = realloc(buf, cap = 2 * cap + 4096 + 1);
			if (p == NULL) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = p;
		}
		n += got = fread(buf + n, 1, cap - n - 1, f);
	} while (got > 0);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

int
wbt_call(rt_client *c, wb_obj *req, wb_obj **rep)
{
	wb_obj *r = NULL;
	int     rc = req != NULL ? rt_call(c, req, &r) : WB_ENOMEM;

	wb_msg_free(req);
	if (rep != NULL) {
		*rep = r;
	} else {
		wb_msg_free(r);
	}
	return rc;
}

uint64_t
wbt_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(0x2545F4914F6CDD1D);
}

uint64_t
wbt_cpu_us(int pid)
{
	char               path[64], buf[1024], *p;
	unsigned long long ut = 0, st = 0;
	FILE              *f;
	size_t             n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (pid <= 0 || (f = fopen(path, "r")) == NULL) {
		return 0;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* fields after the parenthesised command: state is field 3, utime 14, stime 15 */
	if ((p = strrchr(buf, ')')) == NULL ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2) {
		return 0;
	}
	return (ut + st) * 1000000ull / (uint64_t)sysconf(_SC_CLK_TCK);
}

int
wbt_register_many(
    rt_client *c, const char *prefix, const char *password, uint64_t *uids, uint64_t n)
{
	for (uint64_t from = 0; from < n; from += 10000) {
		uint64_t        k = n - from < 10000 ? n - from : 10000;
		wb_obj         *req = wb_request(WB_OP_USER_REGISTER_MANY), *rep = NULL;
		const uint64_t *v;
		size_t          nv = 0;
		int             rc;

		if (req != NULL) {
			wb_set_cstr(req, WB_F_NAME, prefix);
			wb_set_u64(req, WB_F_FROM, from);
			wb_set_u64(req, WB_F_LIMIT, k);
			wb_set_cstr(req, WB_F_PASSWORD, password);
		}
		if ((rc = wbt_call(c, req, &rep)) != WB_OK ||
		    !wb_get_u64s(rep, WB_F_UIDS, &v, &nv) || nv != k) {
			fprintf(stderr, "wbt: user.register_many %s%llu...: %s\n", prefix,
			    (unsigned long long)from, wb_strerror(rc));
			wb_msg_free(rep);
			return -1;
		}
		memcpy(&uids[from], v, k * sizeof(uint64_t));
		wb_msg_free(rep);
	}
	return 0;
}

int
wbt_call_retry(rt_client *c, wb_obj *req, wb_obj **rep)
{
	long long deadline = wbt_now_ms() + wbt_ms(20000);
	int       rc;

	for (;;) {
		*rep = NULL;
		rc = req != NULL ? rt_call(c, req, rep) : WB_ENOMEM;
		if ((rc != WB_EUNAVAIL && rc != WB_ETIMEDOUT) || wbt_now_ms() > deadline) {
			break;
		}
		wbt_sleep_ms(100);
	}
	wb_msg_free(req);
	return rc;
}

uint64_t
wbt_stat(rt_client *c, const char *name)
{
	wb_obj  *rep = NULL;
	uint64_t v = wbt_call_retry(c, wb_request(WB_OP_STATS), &rep) == WB_OK
	                 ? wbt_gauge(rep, name)
	                 : UINT64_MAX;

	wb_msg_free(rep);
	return v;
}

/* wbt_reap records d's exit if it has exited (non-blocking); true if it has. */
static bool
wbt_reap(wbt_daemon *d)
{
	int   st;
	pid_t r;

	if (d->pid == 0) {
		return true;
	}
	r = waitpid(d->pid, &st, WNOHANG);
	if (r == 0) {
		return false;
	}
	if (r < 0) {
		d->status = -1; /* not our child any more: nothing to wait for */
	} else if (WIFEXITED(st)) {
		d->status = WEXITSTATUS(st);
	} else if (WIFSIGNALED(st)) {
		d->status = 128 + WTERMSIG(st);
	}
	d->pid = 0;
	return true;
}

/* wbt_alive tells whether d is still running (reaping it if it exited). */
bool
wbt_alive(wbt_daemon *d)
{
	return d != NULL && !wbt_reap(d);
}

/* wbt_wait_ready pings url until it answers (0) or timeout_ms passes or d dies (-1, log tail printed). */
int
wbt_wait_ready(wbt_daemon *d, const char *url, int timeout_ms)
{
	long long end = wbt_now_ms() + timeout_ms;
	int       rv = WB_EUNAVAIL;

	while (wbt_now_ms() < end) {
		long long left = end - wbt_now_ms();

		if (d != NULL && !wbt_alive(d)) {
			fprintf(stderr, "wbt: %s exited with status %d before answering on %s\n",
			    d->name, d->status, url);
			wbt_log_tail(d, WBT_TAIL_LINES);
			return -1;
		}
		if ((rv = wbt_ping(url, left < 500 ? (int)left : 500)) == 0) {
			return 0;
		}
		wbt_sleep_ms(10);
	}
	fprintf(stderr, "wbt: no answer on %s within %d ms (last: %s)\n", url, timeout_ms,
	    wb_err_name(rv));
	if (d != NULL) {
		wbt_log_tail(d, WBT_TAIL_LINES);
	}
	return -1;
}

/* wbt_wait_exit waits up to timeout_ms for d to exit; returns its status or -1 if still running. */
int
wbt_wait_exit(wbt_daemon *d, int timeout_ms)
{
	long long end = wbt_now_ms() + timeout_ms;

	for (;;) {
		if (wbt_reap(d)) {
			return d->status;
		}
		if (wbt_now_ms() >= end) {
			return -1;
		}
		wbt_sleep_ms(5);
	}
}

/* wbt_stop sends sig and waits up to timeout_ms for d to exit; see wbt.h. */
int
wbt_stop(wbt_daemon *d, int sig, int timeout_ms)
{
	int st;

	if (d == NULL) {
		return -1;
	}
	d->stopping = true;
	if (d->pid != 0) {
		kill(d->pid, sig);
	}
	if ((st = wbt_wait_exit(d, timeout_ms)) < 0) {
		fprintf(stderr,
		    "wbt: %s (pid %d) did not exit within %d ms of signal %d; killing it\n",
		    d->name, (int)d->pid, timeout_ms, sig);
		kill(d->pid, SIGKILL);
		wbt_wait_exit(d, 10000);
		wbt_log_tail(d, WBT_TAIL_LINES);
		return -1;
	}
	if (st != 0) {
		fprintf(
		    stderr, "wbt: %s exited with status %d after signal %d\n", d->name, st, sig);
		wbt_log_tail(d, WBT_TAIL_LINES);
	}
	return st;
}

int
wbt_pause(wbt_daemon *d)
{
	long long end = wbt_now_ms() + 5000;
	int       st;
	pid_t     r;

	if (d == NULL || d->pid == 0 || kill(d->pid, SIGSTOP) != 0) {
		return -1;
	}
	/* WUNTRACED reports the stop once every thread has stopped */
	while ((r = waitpid(d->pid, &st, WUNTRACED | WNOHANG)) == 0 && wbt_now_ms() < end) {
		wbt_sleep_ms(1);
	}
	if (r == d->pid && WIFSTOPPED(st)) {
		return 0;
	}
	if (r == d->pid) {
		d->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		d->pid = 0;
	}
	return -1;
}

int
wbt_resume(wbt_daemon *d)
{
	return d != NULL && d->pid != 0 ? kill(d->pid, SIGCONT) : -1;
}

/* wbt_log_tail prints the last lines of d's log to stderr. */
void
wbt_log_tail(const wbt_daemon *d, int lines)
{
	char   buf[16384];
	FILE  *f;
	long   size, from;
	size_t n;
	char  *p;

	if (d == NULL || (f = fopen(d->log, "r")) == NULL) {
		return;
	}
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	from = size > (long)sizeof(buf) - 1 ? size - (long)sizeof(buf) + 1 : 0;
	fseek(f, from, SEEK_SET);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	p = buf + n;
	for (int seen = 0; p > buf; p--) {
		if (p[-1] == '\n' && p != buf + n && ++seen > lines) {
			break;
		}
	}
	fprintf(stderr, "---- last lines of %s ----\n%s%s---- end of %s ----\n", d->log, p,
	    (n > 0 && buf[n - 1] != '\n') ? "\n" : "", d->name);
}

/* wbt_kill_all kills (SIGKILL) and reaps every daemon still running. */
void
wbt_kill_all(void)
{
	pthread_mutex_lock(&wbt_mtx);
	for (int i = 0; i < wbt_ndaemons; i++) {
		wbt_daemon *d = &wbt_daemons[i];

		if (d->pid == 0) {
			continue;
		}
		if (wbt_reap(d)) {
			if (!d->stopping && d->status != 0) {
				fprintf(stderr, "wbt: %s died on its own (status %d)\n", d->name,
				    d->status);
				wbt_log_tail(d, WBT_TAIL_LINES);
			}
			continue;
		}
		d->stopping = true;
		kill(d->pid, SIGKILL);
		if (waitpid(d->pid, NULL, 0) < 0 && errno != ECHILD) {
			fprintf(stderr, "wbt: waitpid %d: %s\n", (int)d->pid, strerror(errno));
		}
		d->pid = 0;
		d->status = 128 + SIGKILL;
	}
	pthread_mutex_unlock(&wbt_mtx);
}

static int
wbt_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* wbt_cleanup kills every daemon and removes the temp dir (unless WBT_KEEP=1); safe to call twice. */
void
wbt_cleanup(void)
{
	const char *keep = getenv("WBT_KEEP");

	wbt_kill_all();
	pthread_mutex_lock(&wbt_mtx);
	if (wbt_tmp[0] != '\0' && wbt_owner == getpid()) {
		if (keep != NULL && strcmp(keep, "1") == 0) {
			fprintf(stderr, "wbt: keeping %s\n", wbt_tmp);
		} else {
			nftw(wbt_tmp, wbt_rm_one, 16, FTW_DEPTH | FTW_PHYS);
		}
		wbt_tmp[0] = '\0';
	}
	wbt_ndaemons = 0;
	pthread_mutex_unlock(&wbt_mtx);
}

/*
 * __lsan_default_suppressions is read by LeakSanitizer (SANITIZE=1
 * builds): Criterion 2.4's runner leaks a small block of its own when
 * tests run in parallel (-j2); leaks in Warble's code are still reported.
 */
const char *__lsan_default_suppressions(void);
const char *
__lsan_default_suppressions(void)
{
	return "leak:libcriterion.so\n";
}
