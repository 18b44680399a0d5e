/*
 * rt_dns.h - a service's host name, resolved in the background.
 *
 * getaddrinfo has no deadline: in a container network whose DNS is still
 * starting, a lookup took 5 to 40 s here, and a request that had to dial
 * waited that long on it.  An rt_dns starts the lookup when it is opened
 * (at daemon start), keeps the addresses it found, and lets a caller wait
 * for a lookup in progress only until its own deadline.
 */
#ifndef RT_DNS_H
#define RT_DNS_H

#include <stdint.h>
#include <sys/socket.h>

#define RT_DNS_ADDRS 4 /* addresses kept per name */

typedef struct rt_dns rt_dns;

/* rt_dns_open starts resolving host (NULL or "": 127.0.0.1) and port; a numeric host is resolved at once. */
int rt_dns_open(rt_dns **out, const char *host, const char *port);

/*
 * rt_dns_get copies the addresses last resolved (up to RT_DNS_ADDRS) into
 * addrs and lens, waiting for a lookup in progress until deadline_us; the
 * count, or 0 with errno ETIMEDOUT (still resolving) or EHOSTUNREACH (the
 * name did not resolve; the next call starts a new lookup).
 */
int rt_dns_get(rt_dns *d, struct sockaddr_storage *addrs, socklen_t *lens, uint64_t deadline_us);

/* rt_dns_refresh starts a new lookup unless one is running or started within the last second (the addresses known stopped answering); they stay until it succeeds. */
void rt_dns_refresh(rt_dns *d);

/* rt_dns_close lets go of d; a lookup still running ends in its own thread, which frees d then. */
void rt_dns_close(rt_dns *d);

#endif
