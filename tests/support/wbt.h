/*
 * wbt.h - the Warble test harness: temp dirs, real daemons, deadlines.
 *
 * Integration tests start daemons as real processes and talk to them
 * over ipc:// (or tcp://127.0.0.1).  The harness makes sure nothing
 * outlives the test:
 *
 *   - every test process gets one temp dir, /tmp/wbt.XXXXXX (short, since
 *     ipc:// paths are limited to about 100 bytes), removed at the end
 *     unless WBT_KEEP=1 is set in the environment;
 *   - each daemon's stdout and stderr go to <dir>/<name>.<n>.log;
 *   - each daemon's admin HTTP port (WARBLE_METRICS_URL) is any free
 *     port of 127.0.0.1 unless the test names one (wbt_metrics_port);
 *   - every daemon is killed (SIGKILL) when the test process exits
 *     (atexit), when the test ends (use `.fini = wbt_cleanup`), and, via
 *     PR_SET_PDEATHSIG, even when the test process crashes or is killed.
 *     Spawn daemons from the test's main thread: the death signal follows
 *     the thread that forked;
 *   - a daemon that fails to start, answer or stop gets the tail of its
 *     log printed to stderr, as does any daemon that died on its own.
 *
 * Binaries are found in $WBT_BIN_DIR, else in ../bin next to the test
 * binary (build/test/x -> build/bin/NAME; build-san likewise).
 *
 *   Test(ping, answers, .init = NULL, .fini = wbt_cleanup, .timeout = 60) {
 *       char url[128];
 *       wbt_ipc_url(url, sizeof(url), "ping");
 *       const char *args[] = { "--url", url, NULL };
 *       wbt_daemon *d = wbt_spawn("warble-ping", args, NULL);
 *       cr_assert(d != NULL);
 *       cr_assert_eq(wbt_wait_ready(d, url, 10000), 0);
 *       ...
 *       cr_assert_eq(wbt_stop(d, SIGTERM, 10000), 0);
 *   }
 */
#ifndef WBT_H
#define WBT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct wbt_daemon {
	char  name[64]; /* binary name, e.g. "warble-ping" */
	char  log[256]; /* its stdout+stderr */
	pid_t pid;      /* 0 once reaped */
	int   status;   /* exit code, 128+signal if killed, -1 while running */
	bool  stopping; /* the harness signalled it (no log dump for that) */
} wbt_daemon;

/*
 * wbt_ms scales a time bound of a test or of the harness by
 * WARBLE_TEST_SLOW (default 1; make sets 4 for SANITIZE=1 and 8 for
 * SANITIZE=thread, whose daemons run that much slower): every deadline a
 * test waits for a daemon goes through it.
 */
int wbt_ms(int base_ms);

/* wbt_dir returns this process's temp dir, creating it on first use (NULL on failure). */
const char *wbt_dir(void);

/* wbt_path writes <dir>/<name> into buf; returns 0, or -1 if it does not fit. */
int wbt_path(char *buf, size_t n, const char *name);

/* wbt_ipc_url writes ipc://<dir>/<name>.ipc into buf; returns 0, or -1 if it does not fit. */
int wbt_ipc_url(char *buf, size_t n, const char *name);

/* wbt_free_port returns a TCP port on 127.0.0.1 that was free a moment ago (-1 on error). */
int wbt_free_port(void);

/* wbt_tcp_url writes tcp://127.0.0.1:<free port> into buf; returns the port or -1. */
int wbt_tcp_url(char *buf, size_t n);

/* wbt_bin_path finds a program of the build (see above) into buf; returns 0 or -1. */
int wbt_bin_path(char *buf, size_t n, const char *name);

/*
 * wbt_spawn starts build/bin/<name> with args (NULL-terminated, may be
 * NULL) and the test's environment plus env ("KEY=VALUE" strings,
 * NULL-terminated, may be NULL; they override).  A name with a slash is
 * a program outside the build, run from that path (/usr/bin/prometheus),
 * its log named after its last part.  Returns the daemon (owned by the
 * harness) or NULL with a message on stderr.
 */
wbt_daemon *wbt_spawn(const char *name, const char *const *args, const char *const *env);

/*
 * wbt_spawn_netns is wbt_spawn in the network namespace netns, as `ip
 * netns exec netns` would run it (the namespace /run/netns/<netns>; NULL:
 * the test's own).  The daemon's pid is the program's: it is signalled,
 * reaped and killed at the end like any other.  Needs root.
 */
wbt_daemon *wbt_spawn_netns(
    const char *netns, const char *name, const char *const *args, const char *const *env);

/* How wbt_spawn_ex starts a program (zero: as wbt_spawn does). */
typedef struct wbt_spawn_opts {
	const char
	    *netns;     /* the network namespace to join, as wbt_spawn_netns (NULL: the test's) */
	bool clean_env; /* the program gets env alone, not the test's environment too */
	/* run in the child after joining netns, before execve: async-signal-safe calls only; a
	 * failure _exits (NULL: none) */
	void (*setup)(void *arg);
	void       *setup_arg;
	const char *log_name; /* the log's name (NULL: the program's) */
} wbt_spawn_opts;

/*
 * wbt_spawn_ex is wbt_spawn with options: another network namespace, an
 * environment of env alone, and a hook that prepares the child (say, a
 * mount namespace and a root of its own) before the program runs there
 * (a name with a slash is then a path under that root).  Returns the
 * daemon (owned by the harness) or NULL with a message on stderr.
 */
wbt_daemon *wbt_spawn_ex(
    const char *name, const char *const *args, const char *const *env, const wbt_spawn_opts *o);

/*
 * wbt_run_capture runs build/bin/<name> with args (NULL-terminated, after
 * argv[0]) and the environment envp (NULL: the test's), stdin from
 * /dev/null, and waits for it to end: what it wrote to stdout and stderr
 * goes, in order, into out (cap bytes, NUL-terminated, the rest cut) and,
 * under a line "<name> <args>: exit N", to the test's stderr.  Returns its
 * exit status (128+signal if a signal ended it), or -1 if it did not run.
 */
int wbt_run_capture(
    char *out, size_t cap, const char *name, const char *const *args, char *const *envp);

/* wbt_ping sends one ping to url with a deadline; returns a wb_err code (0 = answered ok). */
int wbt_ping(const char *url, int timeout_ms);

struct rt_client;
struct wb_obj;

/* wbt_gauge returns the gauge name of a stats reply (UINT64_MAX if rep is NULL or lacks it). */
uint64_t wbt_gauge(const struct wb_obj *rep, const char *name);

/* wbt_op_count returns how many requests of op (its name, "post.get") the server at url has served (0: none; UINT64_MAX if it does not answer). */
uint64_t wbt_op_count(const char *url, const char *op);

/*
 * wbt_metrics_port returns the admin HTTP port (/metrics) of the daemon
 * serving url, from its stats' metrics_port gauge; -1 if it does not
 * answer or has none.
 */
int wbt_metrics_port(const char *url);

/* wbt_repeat returns n copies of s in a fresh NUL-terminated buffer (malloc'd; aborts if out of memory). */
char *wbt_repeat(const char *s, size_t n);

/* wbt_read_file returns the whole of path, NUL-terminated (malloc'd), or NULL if it cannot be read. */
char *wbt_read_file(const char *path);

/* wbt_call sends req (freed) on c and returns rt_call's code (WB_ENOMEM for a NULL req); the reply goes to *rep if rep is not NULL, else it is freed. */
int wbt_call(struct rt_client *c, struct wb_obj *req, struct wb_obj **rep);

/* wbt_register_many registers accounts prefix0 ... prefix<n-1> with password on the user
 * service at c (user.register_many, 10,000 a call), their uids into uids[n]: 0, or -1 said on
 * stderr. */
int wbt_register_many(
    struct rt_client *c, const char *prefix, const char *password, uint64_t *uids, uint64_t n);

/* wbt_rand is xorshift64*: from a fixed seed, the same numbers every run (*s must not be 0). */
uint64_t wbt_rand(uint64_t *s);

/* wbt_cpu_us returns the CPU time (user + system) process pid has used, in us (0 if unknown). */
uint64_t wbt_cpu_us(int pid);

/* wbt_call_retry is wbt_call retrying a transport failure (UNAVAILABLE, TIMEOUT) for up to
 * 20 s: a daemon just restarted, or a host just healed, may take a moment.  For reads and for
 * writes that may be repeated; what the service says is returned as is. */
int wbt_call_retry(struct rt_client *c, struct wb_obj *req, struct wb_obj **rep);

/* wbt_stat asks the service on c for its stats (wbt_call_retry) and returns gauge name (UINT64_MAX if it does not answer or lacks it). */
uint64_t wbt_stat(struct rt_client *c, const char *name);

/* wbt_wait_ready pings url until it answers (0) or timeout_ms passes or d dies (-1, log tail printed). */
int wbt_wait_ready(wbt_daemon *d, const char *url, int timeout_ms);

/* wbt_alive tells whether d is still running (reaping it if it exited). */
bool wbt_alive(wbt_daemon *d);

/* wbt_wait_exit waits up to timeout_ms for d to exit; returns its status or -1 if still running. */
int wbt_wait_exit(wbt_daemon *d, int timeout_ms);

/*
 * wbt_stop sends sig and waits up to timeout_ms for d to exit.  Returns
 * its exit code (128+signal if a signal ended it), or -1 if it did not
 * exit in time, in which case it is killed with SIGKILL and its log tail
 * printed.  A nonzero exit also prints the log tail.
 */
int wbt_stop(wbt_daemon *d, int sig, int timeout_ms);

/*
 * wbt_pause stops d with SIGSTOP and returns 0 once it has stopped (-1 if
 * it exited or did not stop within 5 s).  kill() returns before every
 * thread has stopped: on a busy machine the process can still answer a
 * request that arrives a moment later, so tests pause with this.
 */
int wbt_pause(wbt_daemon *d);

/* wbt_resume lets a paused d run again (SIGCONT); returns kill's result. */
int wbt_resume(wbt_daemon *d);

/* wbt_log_tail prints the last lines of d's log to stderr. */
void wbt_log_tail(const wbt_daemon *d, int lines);

/* wbt_kill_all kills (SIGKILL) and reaps every daemon still running. */
void wbt_kill_all(void);

/* wbt_cleanup kills every daemon and removes the temp dir (unless WBT_KEEP=1); safe to call twice. */
void wbt_cleanup(void);

/* wbt_now_ms returns a monotonic clock in milliseconds, for deadlines. */
long long wbt_now_ms(void);

/* wbt_sleep_ms sleeps for ms milliseconds (for poll loops, never as synchronization). */
void wbt_sleep_ms(int ms);

#endif
