/*
 * wbc.h - the multi-host test harness: each Warble daemon on a host of
 * its own (a network namespace), the hosts on one Linux bridge, and a
 * host killed, restarted or cut off from the network in place.
 *
 *   root namespace: the test, 198.18.S.1/24 on bridge wbc-<pid>-br
 *        |
 *        +-- wbc-<pid>-v0 ==veth== eth0  netns wbc-<pid>-user     198.18.S.10
 *        +-- wbc-<pid>-v1 ==veth== eth0  netns wbc-<pid>-relation0 198.18.S.11
 *        +-- ...                         (lo up in each)
 *
 * S is one /24 of 198.18.0.0/15 (the range set aside for benchmark
 * networks), taken from the test's pid and checked to be unused on this
 * machine.  A daemon listens on tcp://<its host's address>:<port> and
 * reaches the others only by their addresses; the test reaches every host
 * over the bridge.
 *
 * Everything the harness makes is named wbc-<pid>-..., and only those
 * names are ever touched.  It is all removed by wbc_close, by wbc_fini
 * (a Criterion .fini), at exit, and, if the test process dies without
 * any of those (a crash, a timeout's SIGKILL), by a guard process that
 * waits for the test's end; wbc_open also removes what an earlier run
 * left behind (names whose pid is no longer alive).
 *
 * Needs root and iproute2's `ip`: wbc_open says WBC_SKIP otherwise, and
 * the test skips (cr_skip_test) with the reason.
 *
 *   Test(cluster, x, .fini = wbc_fini, .timeout = 120) {
 *       char why[256];
 *       wbc_net *n;
 *       int rc = wbc_open(&n, why, sizeof(why));
 *       if (rc == WBC_SKIP) cr_skip_test("%s", why);
 *       cr_assert_eq(rc, 0, "%s", why);
 *       wbc_host *h;
 *       cr_assert_eq(wbc_host_add(n, "user", &h), 0);
 *       ... wbc_start(h, "warble-user", NULL, env, url, wbt_ms(20000)) ...
 *       ... wbc_restart(h, SIGKILL, ...), wbc_cut(h), wbc_heal(h), wbc_block(h, h2) ...
 *       cr_assert_eq(wbc_close(n), 0);
 *   }
 */
#ifndef WBC_H
#define WBC_H

#include <stdbool.h>
#include <stddef.h>

#include "wbt.h"

#define WBC_SKIP      1  /* wbc_open: this machine cannot make hosts (not root, no `ip`) */
#define WBC_HOSTS_MAX 16 /* hosts of one network */
#define WBC_URL_MAX   96

typedef struct wbc_net  wbc_net;
typedef struct wbc_host wbc_host;

/*
 * wbc_open makes the network of this test process (one at a time): the
 * bridge, its /24 and the guard that removes everything if the process
 * dies.  Returns 0, WBC_SKIP with the reason in why, or -1 with the error
 * in why.
 */
int wbc_open(wbc_net **out, char *why, size_t why_len);

/*
 * wbc_host_add makes host name (a few letters and digits): its namespace, veth and address; 0 or
 * -1.
 */
int wbc_host_add(wbc_net *n, const char *name, wbc_host **out);

/* wbc_host_name returns the host's name as given to wbc_host_add. */
const char *wbc_host_name(const wbc_host *h);

/* wbc_host_netns returns the host's namespace ("wbc-<pid>-<name>"), for `ip netns exec`. */
const char *wbc_host_netns(const wbc_host *h);

/* wbc_host_addr returns the host's IPv4 address ("198.18.S.10"). */
const char *wbc_host_addr(const wbc_host *h);

/* wbc_url writes scheme://<host's address>:port into buf; 0, or -1 if it does not fit. */
int wbc_url(char *buf, size_t n, const wbc_host *h, const char *scheme, int port);

/*
 * wbc_start runs prog (a program of the build, as wbt_spawn finds it) in
 * h's namespace with args and env (NULL-terminated, may be NULL; both
 * copied for wbc_restart) and waits up to timeout_ms until ready_url
 * answers ping; 0, or -1 with the daemon's log tail on stderr.
 */
int wbc_start(wbc_host *h, const char *prog, const char *const *args, const char *const *env,
    const char *ready_url, int timeout_ms);

/* wbc_daemon returns the daemon running on h (NULL before wbc_start). */
wbt_daemon *wbc_daemon(const wbc_host *h);

/*
 * wbc_kill sends sig to h's daemon (SIGKILL for kill -9) and waits up to 10 s for it to exit; 0 or
 * -1.
 */
int wbc_kill(wbc_host *h, int sig);

/*
 * wbc_restart sends sig to h's daemon (0: it is gone already), waits for
 * it to exit, and starts it again in place: same program, namespace,
 * arguments and environment (so the same data folder and addresses).
 * Waits up to timeout_ms for it to answer; 0 or -1.
 */
int wbc_restart(wbc_host *h, int sig, int timeout_ms);

/*
 * wbc_cut cuts h off the network (its veth down on the bridge's side): packets to and from it are
 * dropped, its sockets stay open; 0 or -1.
 */
int wbc_cut(wbc_host *h);

/* wbc_heal puts a cut h back on the network; 0 or -1. */
int wbc_heal(wbc_host *h);

/*
 * wbc_block cuts the link between hosts a and b alone (a blackhole route
 * to the other's address in each namespace): neither reaches the other,
 * both still reach every other host and the test; 0 or -1.
 */
int wbc_block(wbc_host *a, wbc_host *b);

/* wbc_unblock lets a and b reach each other again; 0 or -1. */
int wbc_unblock(wbc_host *a, wbc_host *b);

/* wbc_partition cuts h off for ms milliseconds and heals it; 0 or -1. */
int wbc_partition(wbc_host *h, int ms);

/*
 * wbc_close kills every daemon of n's hosts and removes the namespaces,
 * links and bridge; returns 0 if none of the names of this process is
 * left on the machine, -1 (naming them) otherwise.  NULL is ignored.
 */
int wbc_close(wbc_net *n);

/*
 * wbc_fini closes the network this process opened, if any, then wbt_cleanup; for a Criterion .fini.
 */
void wbc_fini(void);

/*
 * wbc_leftovers counts what is on the machine named with prefix (say
 * "wbc-1234-"): namespaces and links, naming the first in what (may be
 * NULL).  For tests of the harness itself.
 */
int wbc_leftovers(const char *prefix, char *what, size_t what_len);

/*
 * wbc_ip_run runs iproute2's ip with the space-separated words of fmt
 * and returns its exit status (-1 if it did not run), its output in out
 * (may be NULL).  For tests of the harness itself, on wbc names only.
 */
int wbc_ip_run(char *out, size_t out_len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* wbc_prefix writes the names' prefix of the process pid ("wbc-<pid>-") into buf. */
void wbc_prefix(char *buf, size_t n, int pid);

#endif
