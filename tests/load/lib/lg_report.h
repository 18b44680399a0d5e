/*
 * lg_report.h - what warble-load measures and how it reports it: the
 * results of each phase, report.json's pieces, the summary lines, the
 * .dat files and the gnuplot plots.
 */
#ifndef LG_REPORT_H
#define LG_REPORT_H

#include <jansson.h>

#include "lg.h"

#define LG_MAX_SERVERS 5
#define LG_MAX_PEERS   4                  /* lg_peers.h's LG_PEERS */
#define LG_MAX_SYSTEMS (1 + LG_MAX_PEERS) /* Warble and its peers */

#define LG_VIS_MAX 32 /* bounds of the inbox's posts_visible_within histogram, at most */

/* Posts by ms from their commit to visible in every inbox (the inbox's posts_visible_within
 * gauges, summed over its shards): count[i] posts within le_ms[i] ms (the last bound: any). */
typedef struct lg_vis {
	int      n;
	double   le_ms[LG_VIS_MAX]; /* the last may be INFINITY */
	uint64_t count[LG_VIS_MAX];
} lg_vis;

/* lg_vis_add adds b's counts to a's (sign > 0) or takes them away (the same bounds; a with n 0
 * takes b's). */
void lg_vis_add(lg_vis *a, const lg_vis *b, int sign);

/* lg_vis_q gives the bound within which a fraction q of the posts were visible (0: none). */
double lg_vis_q(const lg_vis *v, double q);

/* The server processes whose CPU a mixed run charges to its system. */
typedef struct lg_servers {
	int         n;
	int         pid[LG_MAX_SERVERS];
	const char *name[LG_MAX_SERVERS];
	bool        reaped; /* also reaped and live children (PostgreSQL's backends) */
	/* settle waits until these processes have done the work a run left
	 * queued (Warble's fan-out), charged to the run; NULL: none; false:
	 * it never came */
	bool (*settle)(void);
	/* cpu_us reads entry i's CPU (us) some other way than /proc/PID/stat
	 * (a running deployment's stats: lg_warble_role_cpu); NULL: the pid */
	uint64_t (*cpu_us)(void *ctx, int i);
	void *cpu_ctx;
	/* visible reads the histogram of posts' commit to visible so far (Warble's; NULL: none) */
	bool (*visible)(lg_vis *v);
} lg_servers;

/* lg_servers_cpu reads the CPU (us) entry i of s has used so far. */
uint64_t lg_servers_cpu(const lg_servers *s, int i);

/* Results of one system's mixed run. */
typedef struct lg_mix {
	lg_hist    home, tl, post;
	uint64_t   ops, errors, empty_home;
	double     secs;     /* until the work was done: the requests' time, then the settle's */
	double     req_secs; /* the requests' own time (the rounds' windows) */
	lg_servers srv;      /* whose CPU was measured (n = 0: none) */
	uint64_t   srv_cpu_us[LG_MAX_SERVERS]; /* each server's CPU over the run */
	uint64_t   client_cpu_us;              /* this process's CPU over the run */
	double     settle_max_ms; /* longest wait for srv.settle after a run (fan-out lag) */
	double     settle_secs;   /* the waits of every run, in secs */
	lg_vis     visible;       /* posts of the runs by commit to visible (srv.visible) */
} lg_mix;

/* Home reads of one sweep reader, in each system (per_s 0: it did not run). */
typedef struct lg_sweep_point {
	uint64_t follows;
	double   p50_ms[LG_MAX_SYSTEMS], p99_ms[LG_MAX_SYSTEMS], per_s[LG_MAX_SYSTEMS];
} lg_sweep_point;

/* One peer's share of a fan-out size. */
typedef struct lg_fan_peer {
	double   s[8];      /* each publish's time until every home had it */
	uint64_t cells;     /* the homes the last publish wrote (0: fan-out on read) */
	uint64_t checked;   /* homes sampled after the last publish */
	uint64_t missing;   /* of them, those whose newest post was not it */
	uint64_t mem_bytes; /* the server's memory growth over the first publish (Redis) */
} lg_fan_peer;

/* Results of one fan-out size. */
typedef struct lg_fan {
	uint64_t    f;
	double      w_s[8], w_ack_ms[8], w_inbox_ms[8];
	uint64_t    w_cells, w_missing, w_rss_kb;
	uint64_t    w_cpu_us, w_cells_all; /* the inbox processes' CPU and cells over every rep */
	uint64_t    w_polls; /* the inbox stats calls that waited for them, in that CPU */
	lg_fan_peer peer[LG_MAX_PEERS];
	int         reps;
} lg_fan;

#define LG_HTTP_RUNS 3 /* the SDK (msgpack), HTTP/JSON with warble-load's client, HTTP with wrk */

/* Home reads of every graph user over the SDK and over HTTP (per_s 0: not run); CPU per read of the gateway, of all five services and of the client. */
typedef struct lg_http_cmp {
	double p50_ms[LG_HTTP_RUNS], p99_ms[LG_HTTP_RUNS], per_s[LG_HTTP_RUNS];
	double gw_cpu_us[LG_HTTP_RUNS], srv_cpu_us[LG_HTTP_RUNS], client_cpu_us[LG_HTTP_RUNS];
} lg_http_cmp;

/* lg_http_json is report.json's home_http: {connections, msgpack, http, wrk (if run): {per_s, p50_ms, p99_ms, cpu_us_per_op: {gateway, total, client}}, http_over_msgpack, wrk_over_msgpack}. */
json_t *lg_http_json(const lg_http_cmp *hc, int conns);

/* lg_median is the median of v[0..n) (n <= 8; 0 if n is 0). */
double lg_median(const double *v, int n);

/* lg_hist_json is a histogram's count, quantiles and mean (and rate over secs). */
json_t *lg_hist_json(const lg_hist *h, double secs);

/* lg_mix_add adds the run m (of the same servers) to sum. */
void lg_mix_add(lg_mix *sum, const lg_mix *m);

/* lg_mix_cpu_per_op is a server's (i >= 0), all servers' (-1) or the client's (-2) CPU per request, us. */
double lg_mix_cpu_per_op(const lg_mix *m, int i);

/* lg_mix_json is report.json's record of one mixed run. */
json_t *lg_mix_json(const lg_mix *m);

/* lg_mix_print prints a mixed run's summary lines. */
void lg_mix_print(const char *name, const lg_mix *m);

/* lg_sweep_json is report.json's home_by_follows (names: each system's, NULL if it did not run). */
json_t *lg_sweep_json(const lg_sweep_point *pt, int n, const char *const *names);

/* lg_write_dat writes a latency distribution for gnuplot to out/name. */
void lg_write_dat(const char *out, const char *name, const lg_hist *h);

/* lg_write_plots writes out/plot.gp and its data and runs gnuplot if it is installed; names
 * are the systems' (Warble first, NULL for a peer that did not run), fans_out[i] whether
 * peer i has a fan-out time. */
void lg_write_plots(const char *out, const lg_fan *fr, int nfan, const lg_sweep_point *sw,
    int nsweep, const char *const *names, const bool *fans_out);

#endif
