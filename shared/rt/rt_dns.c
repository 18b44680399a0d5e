/*
 * rt_dns.c - background lookups (see rt_dns.h).  Each lookup runs in a
 * detached thread holding a reference to the rt_dns, so closing never
 * waits for a name server: the last of the owner and a running lookup
 * frees it.
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rt_dns.h"
#include "wb_clock.h"
#include "wb_errors.h"

#define RT_DNS_REFRESH_MS 1000 /* refreshes at most this often */

struct rt_dns {
	pthread_mutex_t         mu;
	pthread_cond_t          cv; /* a lookup ended (CLOCK_MONOTONIC) */
	int                     refs;
	bool                    running; /* a lookup thread is at work */
	bool                    failed;  /* the last lookup found nothing */
	char                    host[256], port[16];
	struct sockaddr_storage addrs[RT_DNS_ADDRS];
	socklen_t               lens[RT_DNS_ADDRS];
	int                     naddr;
	uint64_t                started_us; /* when the last lookup started */
};

/* rt_dns_unref drops one reference, freeing d with the last (called with mu held; unlocks it). */
static void
rt_dns_unref(rt_dns *d)
{
	bool last = --d->refs == 0;

	pthread_mutex_unlock(&d->mu);
	if (last) {
		pthread_cond_destroy(&d->cv);
		pthread_mutex_destroy(&d->mu);
		free(d);
	}
}

/* rt_dns_lookup runs getaddrinfo for d's name with flags; the addresses found (up to RT_DNS_ADDRS), 0 if none. */
static int
rt_dns_lookup(const rt_dns *d, int flags, struct sockaddr_storage *addrs, socklen_t *lens)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = flags }, *res = NULL;
	int             n = 0;

	if (getaddrinfo(d->host, d->port, &hints, &res) != 0) {
		return 0;
	}
	for (struct addrinfo *a = res; a != NULL && n < RT_DNS_ADDRS; a = a->ai_next) {
		if (a->ai_addrlen <= sizeof(addrs[n])) {
			memcpy(&addrs[n], a->ai_addr, a->ai_addrlen);
			lens[n++] = a->ai_addrlen;
		}
	}
	freeaddrinfo(res);
	return n;
}

static void *
rt_dns_main(void *arg)
{
	rt_dns                 *d = arg;
	struct sockaddr_storage addrs[RT_DNS_ADDRS];
	socklen_t               lens[RT_DNS_ADDRS];
	int                     n = rt_dns_lookup(d, AI_ADDRCONFIG, addrs, lens);

	pthread_mutex_lock(&d->mu);
	if (n > 0) {
		memcpy(d->addrs, addrs, sizeof(addrs));
		memcpy(d->lens, lens, sizeof(lens));
		d->naddr = n;
	}
	d->failed = n == 0;
	d->running = false;
	pthread_cond_broadcast(&d->cv);
	rt_dns_unref(d);
	return NULL;
}

/* rt_dns_start starts a lookup thread unless one runs (call with mu held). */
static void
rt_dns_start(rt_dns *d)
{
	pthread_attr_t attr;
	pthread_t      th;

	if (d->running) {
		return;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	d->running = true;
	d->started_us = wb_mono_us();
	d->refs++;
	if (pthread_create(&th, &attr, rt_dns_main, d) != 0) {
		d->running = false;
		d->refs--;
		d->failed = true;
	}
	pthread_attr_destroy(&attr);
}

int
rt_dns_open(rt_dns **out, const char *host, const char *port)
{
	rt_dns            *d;
	pthread_condattr_t ca;

	*out = NULL;
	if (port == NULL || (d = calloc(1, sizeof(*d))) == NULL) {
		return WB_ENOMEM;
	}
	snprintf(
	    d->host, sizeof(d->host), "%s", host != NULL && host[0] != '\0' ? host : "127.0.0.1");
	snprintf(d->port, sizeof(d->port), "%s", port);
	pthread_mutex_init(&d->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->cv, &ca);
	pthread_condattr_destroy(&ca);
	d->refs = 1;
	if ((d->naddr = rt_dns_lookup(d, AI_NUMERICHOST, d->addrs, d->lens)) == 0) {
		pthread_mutex_lock(&d->mu);
		rt_dns_start(d);
		pthread_mutex_unlock(&d->mu);
	}
	*out = d;
	return WB_OK;
}

int
rt_dns_get(rt_dns *d, struct sockaddr_storage *addrs, socklen_t *lens, uint64_t deadline_us)
{
	struct timespec ts = { (time_t)(deadline_us / 1000000),
		(long)(deadline_us % 1000000) * 1000 };
	int             n;

	pthread_mutex_lock(&d->mu);
	if (d->naddr == 0 && !d->running) {
		rt_dns_start(d); /* the last lookup failed: try again */
	}
	while (d->naddr == 0 && d->running &&
	       pthread_cond_timedwait(&d->cv, &d->mu, &ts) != ETIMEDOUT) {
	}
	n = d->naddr;
	memcpy(addrs, d->addrs, sizeof(d->addrs));
	memcpy(lens, d->lens, sizeof(d->lens));
	if (n == 0) {
		errno = d->running ? ETIMEDOUT : EHOSTUNREACH;
	}
	pthread_mutex_unlock(&d->mu);
	return n;
}

void
rt_dns_refresh(rt_dns *d)
{
	pthread_mutex_lock(&d->mu);
	if (wb_mono_us() - d->started_us >= RT_DNS_REFRESH_MS * 1000) {
		rt_dns_start(d); /* a service down is redialled often: look at most once a second */
	}
	pthread_mutex_unlock(&d->mu);
}

void
rt_dns_close(rt_dns *d)
{
	if (d != NULL) {
		pthread_mutex_lock(&d->mu);
		rt_dns_unref(d);
	}
}
