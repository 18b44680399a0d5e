/*
 * lg_wrk.h - home reads over HTTP driven by wrk (Debian's wrk), the usual
 * HTTP server benchmark: it reads every reply but parses no JSON, so it
 * shows what the gateway serves when the client costs little.
 */
#ifndef LG_WRK_H
#define LG_WRK_H

#include <stdint.h>

#include "lg_warble.h"

typedef struct lg_wrk_result {
	double   per_s, p50_ms, p99_ms;
	uint64_t requests, bad; /* replies, and non-2xx replies and socket errors */
	uint64_t client_cpu_us; /* wrk's CPU over the run */
} lg_wrk_result;

/* lg_wrk_home runs wrk on conns connections for secs, each request a random one of users' homes; 0, 1 if wrk is not installed, -1 if it failed. */
int lg_wrk_home(const lg_warble *w, uint32_t users, uint32_t conns, double secs, lg_wrk_result *r);

#endif
