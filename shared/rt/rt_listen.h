/*
 * rt_listen.h - listening sockets for the URLs Warble's servers take, as
 * nng names them: tcp://HOST:PORT (HOST empty or * for every address,
 * [v6] in brackets) and ipc:///PATH.
 */
#ifndef RT_LISTEN_H
#define RT_LISTEN_H

#include <stdbool.h>

/* rt_listen_supports tells whether url is one rt_listen_open takes. */
bool rt_listen_supports(const char *url);

/*
 * rt_listen_open makes a non-blocking listening socket for url into *fd.
 * An ipc path left behind by a process that is gone is replaced; one a
 * live server listens on is not.  Returns WB_EINVAL for a URL it cannot
 * use or an address in use, WB_EUNAVAIL for other failures.
 */
int rt_listen_open(const char *url, int *fd);

/* rt_listen_close closes fd, and removes the socket file of an ipc url. */
void rt_listen_close(const char *url, int fd);

#endif
