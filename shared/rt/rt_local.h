/*
 * rt_local.h - calls between modules of one process without a socket.
 *
 * A server of this process that others of it may call directly (an
 * rt_server opened with .local: the services hosted together by warble)
 * adds itself here under its URL, with the function that serves one
 * request; rt_client_open of that URL then dials nothing, and each call
 * runs that function on the caller's thread: no socket, no thread
 * hand-off.  A slot outlives its server: a client keeps the number, and a
 * call through a slot whose server is not serving (not yet, or no longer)
 * fails with WB_EUNAVAIL, as a call to a server that is not there does.
 */
#ifndef RT_LOCAL_H
#define RT_LOCAL_H

#include <stdbool.h>

#include "wb_proto.h"

/* A local server's entry point: serves req, sets *rep (a reply, or NULL), returns as rt_call. */
typedef int (*rt_local_fn)(void *arg, const wb_obj *req, wb_obj **rep);

/* rt_local_add makes fn(arg) the server of url; returns its slot (>= 1), or 0 if url is taken or no slot is free. */
int rt_local_add(const char *url, rt_local_fn fn, void *arg);

/* rt_local_serving starts (on) or stops (off) calls through slot; off waits for the calls running to return. */
void rt_local_serving(int slot, bool on);

/* rt_local_remove stops calls through slot (as rt_local_serving off) and frees it for its URL's next server. */
void rt_local_remove(int slot);

/* rt_local_find returns the slot of url's local server, or 0 if this process has none. */
int rt_local_find(const char *url);

/* rt_local_call serves req by the server of slot on the calling thread; results as rt_call. */
int rt_local_call(int slot, const wb_obj *req, wb_obj **rep);

#endif
