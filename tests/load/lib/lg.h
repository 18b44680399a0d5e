/*
 * lg.h - the modules of warble-load (tests/load/warble-load.c):
 *
 *   lg_hist.c    latency histograms (log-linear, 1/64 relative precision)
 *   lg_graph.c   the social graph: a real .edges file or a seeded power law
 *   lg_sys.c     clock, machine facts, process RSS, folder sizes, progress bar
 *   lg_warble.c  Warble started here or running: bulk setup over the internal ops (split by
 *                shard), gauges over every shard, each process's CPU, SDK ops
 *   lg_redis.c   the Redis peer: fan-out on write into sorted sets (hiredis)
 *   lg_pg.c      the PostgreSQL peer: fan-out on read (libpq)
 *   lg_homes.c   home reads closed loop (the follow-count sweep, HTTP against msgpack)
 *   lg_http.c    Warble's HTTP/JSON API as a backend (home reads only)
 *   lg_media.c   the media phase: PNGs made in memory, upload/publish/download passes
 *   lg_warble_media.c  Warble's side of it (the gateway's upload, publish, media ops)
 *   lg_report.c  results, report.json, summary lines, .dat files and plots
 *
 * Users are numbered 0..n-1 in the graph; each system maps a number to
 * its own account.  A backend (lg_backend) serves the mixed workload the
 * same way for the three systems.
 */
#ifndef LG_H
#define LG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- histograms ---- */

#define LG_HIST_SUB  64 /* sub-buckets per power of two */
#define LG_HIST_POWS 40 /* 1 us .. ~2^40 us */
#define LG_HIST_N    (LG_HIST_SUB * LG_HIST_POWS)

typedef struct lg_hist {
	uint64_t n, sum_us, max_us;
	uint64_t b[LG_HIST_N];
} lg_hist;

/* lg_hist_add records one latency in microseconds. */
void lg_hist_add(lg_hist *h, uint64_t us);

/* lg_hist_merge adds the counts of src to dst. */
void lg_hist_merge(lg_hist *dst, const lg_hist *src);

/* lg_hist_q returns quantile q (0..1) in microseconds (0 if empty). */
double lg_hist_q(const lg_hist *h, double q);

/* lg_hist_dump writes "percentile latency_ms" lines (a log-scaled distribution) for gnuplot. */
void lg_hist_dump(const lg_hist *h, FILE *f);

/* ---- graph ---- */

/* A graph as fan lists: the fans of user t are fan[off[t] .. off[t+1]). */
typedef struct lg_graph {
	uint32_t  n; /* users */
	uint64_t  follows;
	uint64_t *off; /* n + 1 */
	uint32_t *fan;
	char      name[128];
} lg_graph;

/* lg_graph_load reads an .edges file ("a b" lines, each a mutual follow); 0 or -1 with a message. */
int lg_graph_load(lg_graph *g, const char *path);

/* lg_graph_synth builds n users whose follower counts follow a power law (mean about deg), seeded. */
int lg_graph_synth(lg_graph *g, uint32_t n, uint32_t deg, uint64_t seed);

/* lg_graph_free frees the lists. */
void lg_graph_free(lg_graph *g);

/* lg_rand is a seeded xorshift64* step (state must be nonzero). */
uint64_t lg_rand(uint64_t *s);

/* ---- system ---- */

/* lg_now_us returns a monotonic clock in microseconds. */
uint64_t lg_now_us(void);

/* lg_sleep_us sleeps for us microseconds. */
void lg_sleep_us(uint64_t us);

/* lg_rss_kb reads VmHWM: or VmRSS: of a process in KiB (-1 if gone). */
long lg_rss_kb(int pid, const char *key);

/* lg_cpu_us reads the CPU time (user + system, us) a process has used; with
 * reaped set, also what its reaped children used (PostgreSQL's exited
 * backends) and the live children's own (0 if the process is gone). */
uint64_t lg_cpu_us(int pid, bool reaped);

/* lg_parent_pid returns the parent of pid (0 if pid is gone). */
int lg_parent_pid(int pid);

/* lg_self_cpu_us is the CPU time (user + system, us) of this process. */
uint64_t lg_self_cpu_us(void);

/* lg_du returns the bytes of the regular files under path. */
uint64_t lg_du(const char *path);

/* lg_machine fills cores, memory (MiB), kernel and CPU model. */
void lg_machine(int *cores, long *mem_mib, char *kernel, size_t klen, char *cpu, size_t clen);

/* lg_progress draws "what [#####     ] done/total" on stderr when it is a terminal (done == total ends the line). */
void lg_progress(const char *what, uint64_t done, uint64_t total);

/* ---- backends of the mixed workload ---- */

typedef struct lg_backend lg_backend;

/* One client thread's connection to a system. */
typedef struct lg_conn lg_conn;

struct lg_backend {
	const char *name;
	void       *ctx;
	/* conn_open gives a thread its own connection (NULL on failure). */
	lg_conn *(*conn_open)(void *ctx);
	void (*conn_close)(lg_conn *c);
	/* home reads user u's home timeline (20 posts, hydrated); *n gets the posts. */
	int (*home)(lg_conn *c, uint32_t u, size_t *n);
	/* timeline reads user u's own posts (20, hydrated). */
	int (*timeline)(lg_conn *c, uint32_t u, size_t *n);
	/* post publishes text as user u; *id gets the post id. */
	int (*post)(lg_conn *c, uint32_t u, const char *text, uint64_t *id);
};

/* lg_homes_run reads the homes of users u0 .. u0 + nu - 1 (at random) through b on
 * `threads` connections, closed loop, for secs seconds: h gets the latencies,
 * *per_s the reads per second; -1 if a read failed or gave fewer than want posts. */
int lg_homes_run(const lg_backend *b, uint32_t u0, uint32_t nu, size_t want, uint32_t threads,
    double secs, lg_hist *h, double *per_s);

/* lg_post_text writes the deterministic text of post number k by user u (the same for every system). */
void lg_post_text(char *buf, size_t n, uint32_t u, uint64_t k);

#endif
