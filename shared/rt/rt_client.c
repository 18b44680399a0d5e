/*
 * rt_client.c - REQ client with a deadline on every call.
 *
 * A client takes one of two paths, chosen at open from the URL:
 *
 *   a server in this process (rt_local.h)  -> its handler, on the caller's thread
 *   tcp:// and ipc://                      -> rt_sp, on the caller's thread
 *
 * Every Warble server listens on tcp:// or ipc:// (rt_listen.h), so
 * there is no third.  rt_sp writes the request and reads the reply with
 * blocking system calls, waiting for a server that is not up yet as
 * nng's dialer would, without nng's hand-offs between threads (several
 * context switches a call through a req0 socket; see docs/benchmarks.md
 * for what that cost the gateway).  A started call (rt_call_start) takes
 * a connection of its own until it is finished, so the server works on
 * calls started together at the same time.  Opening a client connects
 * nothing: connections are made by the first calls and kept idle for the
 * next.
 *
 * A client of a server in its own process (rt_server_opts.local, the
 * services hosted together by warble) dials nothing: each call runs the
 * server's handler on the calling thread, a started call at once, so
 * that its finish only hands over the reply.
 *
 * Coalescing (rt_client_opts.coalesce = N > 0) pipelines synchronous
 * calls under load by leader hand-off:
 *
 *   a call finding fewer than N messages in flight and nobody queued
 *     -> goes out at once, alone (a lone call never waits);
 *   else it queues (a waiter on its own stack, with its own condition
 *     variable) until a message in flight comes back;
 *   the returning caller hands its slot to the first waiter, the leader,
 *     which takes every queued call (up to WB_BATCH_MAX), sends them as
 *     one batch message (rt_server.h), copies each reply out to its
 *     caller and wakes it, then hands the slot on in turn.
 *
 * So at most N messages are in flight, each carrying everything that
 * queued behind it.  A batch's deadline is that of its oldest call (a
 * queued call that reaches its deadline before a leader takes it leaves
 * the queue with WB_ETIMEDOUT); a transport failure of the batch (the
 * server gone: WB_EUNAVAIL; WB_ETIMEDOUT) is every item's result, given
 * once to each (a reply that does not hold one reply per call is
 * WB_EBADMSG for each); an item's own error reply is that item's
 * result.  In-process clients and started
 * calls (rt_call_start) never batch.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "rt_client.h"
#include "rt_local.h"
#include "rt_sp.h"
#include "rt_tls.h"
#include "wb_clock.h"

#define RT_CLIENT_TIMEOUT_MS 5000
#define RT_CLIENT_MAX_MSG    (16u << 20)

/* What a coalesced call waits for (rt_waiter.state). */
enum { RT_WAIT_QUEUED, RT_WAIT_LEAD, RT_WAIT_TAKEN, RT_WAIT_DONE };

/* A coalesced call waiting for its turn, on its caller's stack; every field but req under co_mtx. */
typedef struct rt_waiter {
	struct rt_waiter *next;
	const wb_obj     *req;
	wb_obj           *rep;      /* its reply, set by the leader of its batch */
	int64_t           deadline; /* ms on the monotonic clock */
	int               rv;
	int               state; /* RT_WAIT_* */
	pthread_cond_t    cv;
} rt_waiter;

struct rt_client {
	rt_client  *next, *prev; /* every open client, for rt_client_shutdown_all */
	atomic_bool down;        /* rt_client_shutdown has run */
	int         timeout_ms;
	int         retries;
	size_t      max_msg;
	rt_sp      *sp;    /* the calls, unless the server is in this process */
	rt_sp_layer layer; /* TLS under sp's connections (rt_client_opts.tls) */
	int         local; /* the in-process server's slot (rt_local_find), or 0 */

	int             coalesce; /* messages in flight before calls are batched (0: never) */
	pthread_mutex_t co_mtx;   /* guards the three below */
	int             co_busy;  /* rt_call messages in flight */
	rt_waiter      *co_head, *co_tail; /* calls queued for the next batch */
};

/* Every open client of the process, so that a stopping daemon can end every call in flight. */
static pthread_mutex_t rt_clients_mu = PTHREAD_MUTEX_INITIALIZER;
static rt_client      *rt_clients;
static bool            rt_clients_down; /* rt_client_shutdown_all has run */

/* rt_client_open makes a client of url: in process or rt_sp (tcp://, ipc://). */
int
rt_client_open(rt_client **out, const char *url, const rt_client_opts *opts)
{
	rt_client *c;
	int        rv;

	if (url == NULL) {
		return WB_EINVAL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		return WB_ENOMEM;
	}
	c->timeout_ms =
	    opts != NULL && opts->timeout_ms > 0 ? opts->timeout_ms : RT_CLIENT_TIMEOUT_MS;
	c->retries = opts != NULL && opts->retries > 0 ? opts->retries : 0;
	c->max_msg = opts != NULL && opts->max_msg > 0 ? opts->max_msg : RT_CLIENT_MAX_MSG;
	c->coalesce = opts != NULL && opts->coalesce > 0 ? opts->coalesce : 0;
	atomic_init(&c->down, false);
	c->local = rt_local_find(url);
	if (c->local == 0) {
		rt_sp_opts so = {
			.timeout_ms = c->timeout_ms, .max_msg = c->max_msg, .wait_for_server = true
		};
		rt_tls *tls = opts == NULL        ? rt_tls_default()
		              : opts->plain       ? NULL
		              : opts->tls != NULL ? opts->tls
		                                  : rt_tls_default();
		if (tls != NULL) {
			rt_tls_sp_layer(tls, &c->layer);
			so.layer = &c->layer;
		}
		if ((rv = rt_sp_open(&c->sp, url, &so)) != WB_OK) {
			free(c);
			return rv; /* WB_EINVAL: not a tcp:// or ipc:// URL */
		}
	}
	pthread_mutex_init(&c->co_mtx, NULL);
	pthread_mutex_lock(&rt_clients_mu);
	c->next = rt_clients;
	if (rt_clients != NULL) {
		rt_clients->prev = c;
	}
	rt_clients = c;
	if (rt_clients_down) {
		rt_client_shutdown(c); /* opened while the process stops */
	}
	pthread_mutex_unlock(&rt_clients_mu);
	*out = c;
	return WB_OK;
}

/*
 * rt_client_shutdown ends every call in flight (rt_sp_shutdown: they
 * return WB_ECLOSED) and refuses new ones; the client stays valid until
 * rt_client_close.
 */
void
rt_client_shutdown(rt_client *c)
{
	if (c != NULL && !atomic_exchange(&c->down, true)) {
		rt_sp_shutdown(c->sp);
	}
}

void
rt_client_shutdown_all(void)
{
	pthread_mutex_lock(&rt_clients_mu);
	rt_clients_down = true;
	for (rt_client *c = rt_clients; c != NULL; c = c->next) {
		rt_client_shutdown(c);
	}
	pthread_mutex_unlock(&rt_clients_mu);
}

/* rt_client_close closes the client; NULL is ignored. */
void
rt_client_close(rt_client *c)
{
	if (c == NULL) {
		return;
	}
	pthread_mutex_lock(&rt_clients_mu);
	if (c->prev != NULL) {
		c->prev->next = c->next;
	} else {
		rt_clients = c->next;
	}
	if (c->next != NULL) {
		c->next->prev = c->prev;
	}
	pthread_mutex_unlock(&rt_clients_mu);
	rt_client_shutdown(c);
	rt_sp_close(c->sp);
	pthread_mutex_destroy(&c->co_mtx);
	free(c);
}

/* rt_call_until is rt_call alone (no batching) with the whole-call deadline given, in monotonic ms. */
static int
rt_call_until(rt_client *c, const wb_obj *req, int64_t deadline, wb_obj **rep)
{
	int attempts = c->retries + 1;
	int rv = WB_ETIMEDOUT;

	for (int a = 0; a < attempts; a++) {
		int64_t left = deadline - (int64_t)(wb_mono_us() / 1000);

		if (left <= 0) {
			break;
		}
		if (a + 1 < attempts) {
			left /= attempts -
			        a; /* share what is left fairly between the remaining attempts */
		}
		rv = rt_sp_call_within(c->sp, req, left > 0 ? (int)left : 1, rep);
		if (*rep != NULL || (rv != WB_ETIMEDOUT && rv != WB_EUNAVAIL)) {
			break; /* a reply, or a failure another attempt would not mend */
		}
	}
	return rv;
}

/* rt_batch_until sends reqs[0..n) as one batch message by deadline (a
 * server in this process: on the caller's thread); WB_OK with *rep the
 * reply and *reps its n items in order, else *rep is the refusal of the
 * whole or NULL. */
static int
rt_batch_until(rt_client *c, const wb_obj *const *reqs, size_t n, int64_t deadline, wb_obj **rep,
    const wb_obj **reps)
{
	wb_obj *req = wb_request(WB_OP_BATCH);
	wb_obj *items = req != NULL ? wb_add_objs(req, WB_F_REQS, n) : NULL;
	size_t  nreps = 0;
	int     rv = items != NULL ? WB_OK : WB_ENOMEM;

	*rep = NULL;
	if (rv == WB_OK) {
		wb_del(req, WB_F_RID); /* each item carries its own */
	}
	for (size_t i = 0; i < n && rv == WB_OK; i++) {
		rv = wb_copy(&items[i], reqs[i]);
	}
	if (rv == WB_OK) {
		rv = c->local != 0 ? rt_local_call(c->local, req, rep)
		                   : rt_call_until(c, req, deadline, rep);
	}
	wb_msg_free(req);
	if (rv == WB_OK && (!wb_get_objs(*rep, WB_F_REPS, reps, &nreps) || nreps != n)) {
		wb_msg_free(*rep); /* not one reply per call: none can be trusted */
		*rep = NULL;
		rv = WB_EBADMSG;
	}
	return rv;
}

int
rt_call_batch(rt_client *c, const wb_obj *const *reqs, size_t n, wb_obj **rep, const wb_obj **reps)
{
	*rep = NULL;
	if (n == 0 || n > WB_BATCH_MAX) {
		return WB_EINVAL;
	}
	if (atomic_load(&c->down)) {
		return WB_ECLOSED;
	}
	return rt_batch_until(
	    c, reqs, n, (int64_t)(wb_mono_us() / 1000) + c->timeout_ms, rep, reps);
}

/* rt_client_batch sends the n calls of ws as one batch and sets each one's result. */
static void
rt_client_batch(rt_client *c, rt_waiter **ws, int n)
{
	const wb_obj *reqs[WB_BATCH_MAX];
	const wb_obj *reps = NULL;
	wb_obj       *rep = NULL;
	int64_t       deadline = ws[0]->deadline;
	int           rv;

	for (int i = 0; i < n; i++) {
		reqs[i] = ws[i]->req;
		deadline = ws[i]->deadline < deadline ? ws[i]->deadline : deadline;
	}
	rv = rt_batch_until(c, reqs, (size_t)n, deadline, &rep, &reps);
	for (int i = 0; i < n; i++) {
		const wb_obj *one = rv == WB_OK ? &reps[i] : rep; /* or the refusal of the whole */
		const char   *emsg;

		ws[i]->rv = rv;
		ws[i]->rep = NULL;
		if (one == NULL) {
			continue;
		}
		if ((ws[i]->rep = wb_msg_new()) == NULL || wb_copy(ws[i]->rep, one) != WB_OK) {
			wb_msg_free(ws[i]->rep);
			ws[i]->rep = NULL;
			ws[i]->rv = WB_ENOMEM;
			continue;
		}
		ws[i]->rv = wb_reply_code(ws[i]->rep, &emsg);
	}
	wb_msg_free(rep);
}

/* rt_client_release ends one of c's messages in flight: its slot goes to the first queued call, which leads the next batch. */
static void
rt_client_release(rt_client *c)
{
	rt_waiter *w;

	pthread_mutex_lock(&c->co_mtx);
	if ((w = c->co_head) != NULL) {
		if ((c->co_head = w->next) == NULL) {
			c->co_tail = NULL;
		}
		w->state = RT_WAIT_LEAD;
		pthread_cond_signal(&w->cv);
	} else {
		c->co_busy--;
	}
	pthread_mutex_unlock(&c->co_mtx);
}

/* rt_client_lead sends w's call with every call queued behind it (w holds a slot, co_mtx is held and is released). */
static void
rt_client_lead(rt_client *c, rt_waiter *w)
{
	rt_waiter *ws[WB_BATCH_MAX], *live[WB_BATCH_MAX];
	int        n = 0, nlive = 0;
	int64_t    now = (int64_t)(wb_mono_us() / 1000);

	ws[n++] = w;
	while (c->co_head != NULL && n < WB_BATCH_MAX) {
		ws[n] = c->co_head;
		ws[n++]->state = RT_WAIT_TAKEN;
		if ((c->co_head = c->co_head->next) == NULL) {
			c->co_tail = NULL;
		}
	}
	pthread_mutex_unlock(&c->co_mtx);
	for (int i = 0; i < n; i++) {
		if (ws[i]->deadline > now) {
			live[nlive++] = ws[i];
		} else {
			ws[i]->rv = WB_ETIMEDOUT; /* out of time while queued: not sent */
		}
	}
	if (nlive == 1) {
		live[0]->rv = rt_call_until(c, live[0]->req, live[0]->deadline, &live[0]->rep);
	} else if (nlive > 1) {
		rt_client_batch(c, live, nlive);
	}
	pthread_mutex_lock(&c->co_mtx);
	for (int i = 1; i < n; i++) {
		ws[i]->state = RT_WAIT_DONE;
		pthread_cond_signal(
		    &ws[i]->cv); /* under the lock: the waiter's stack lives until it sees DONE */
	}
	pthread_mutex_unlock(&c->co_mtx);
	rt_client_release(c);
}

/* rt_call_coalesced is rt_call on a client that batches under load. */
static int
rt_call_coalesced(rt_client *c, const wb_obj *req, int64_t deadline, wb_obj **rep)
{
	rt_waiter          w = { .req = req, .deadline = deadline, .state = RT_WAIT_QUEUED };
	pthread_condattr_t ca;
	struct timespec    ts;
	int                rv;

	pthread_mutex_lock(&c->co_mtx);
	if (c->co_busy < c->coalesce && c->co_head == NULL) {
		c->co_busy++; /* a free slot: out at once, alone */
		pthread_mutex_unlock(&c->co_mtx);
		rv = rt_call_until(c, req, deadline, rep);
		rt_client_release(c);
		return rv;
	}
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w.cv, &ca);
	pthread_condattr_destroy(&ca);
	if (c->co_tail != NULL) {
		c->co_tail->next = &w;
	} else {
		c->co_head = &w;
	}
	c->co_tail = &w;
	ts.tv_sec = (time_t)(deadline / 1000);
	ts.tv_nsec = (long)(deadline % 1000) * 1000000;
	while (w.state == RT_WAIT_QUEUED || w.state == RT_WAIT_TAKEN) {
		if (w.state == RT_WAIT_TAKEN) {
			pthread_cond_wait(&w.cv, &c->co_mtx); /* the batch has its own deadline */
		} else if (pthread_cond_timedwait(&w.cv, &c->co_mtx, &ts) == ETIMEDOUT &&
		           w.state == RT_WAIT_QUEUED) {
			rt_waiter **pp = &c->co_head, *prev = NULL;

			while (*pp != &w) {
				prev = *pp;
				pp = &(*pp)->next;
			}
			*pp = w.next;
			if (c->co_tail == &w) {
				c->co_tail = prev;
			}
			w.rv = WB_ETIMEDOUT;
			w.state = RT_WAIT_DONE;
		}
	}
	if (w.state == RT_WAIT_LEAD) {
		rt_client_lead(c, &w); /* unlocks */
	} else {
		pthread_mutex_unlock(&c->co_mtx);
	}
	pthread_cond_destroy(&w.cv);
	*rep = w.rep;
	return w.rv;
}

/*
 * rt_call sends req and waits for the reply.  Returns WB_OK with *rep a
 * success reply, the server's error code with *rep the error reply (its
 * message via wb_reply_code), or a transport error (WB_EUNAVAIL,
 * WB_ETIMEDOUT, WB_EBADMSG) with *rep NULL.  The caller frees *rep.
 */
int
rt_call(rt_client *c, const wb_obj *req, wb_obj **rep)
{
	int64_t deadline = (int64_t)(wb_mono_us() / 1000) + c->timeout_ms;

	*rep = NULL;
	if (atomic_load(&c->down)) {
		return WB_ECLOSED;
	}
	if (c->local != 0) {
		return rt_local_call(c->local, req, rep);
	}
	if (c->coalesce > 0) {
		return rt_call_coalesced(c, req, deadline, rep);
	}
	return rt_call_until(c, req, deadline, rep);
}

struct rt_pending {
	rt_client     *c;
	rt_sp_pending *sp;  /* the call, unless the server is in this process */
	wb_obj        *rep; /* the reply of an in-process call, made at the start */
	int            rv;  /* an in-process call's result */
};

/* rt_call_start sends req and returns at once; end it with rt_call_finish. */
int
rt_call_start(rt_client *c, const wb_obj *req, rt_pending **out)
{
	rt_pending *p;

	if ((p = calloc(1, sizeof(*p))) == NULL) {
		*out = NULL;
		return WB_ENOMEM;
	}
	p->c = c;
	*out = p;
	if (c->local != 0) {
		p->rv = rt_call(c, req, &p->rep);
		return WB_OK;
	}
	return rt_sp_start(c->sp, req, &p->sp);
}

/* rt_call_finish waits for p's reply and frees p; results as rt_call. */
int
rt_call_finish(rt_pending *p, wb_obj **rep)
{
	int rv;

	*rep = NULL;
	if (p == NULL) {
		return WB_ENOMEM;
	}
	if (p->c->local != 0) {
		rv = p->rv;
		*rep = p->rep;
	} else {
		rv = rt_sp_finish(p->sp, rep); /* a failed start is kept in p->sp */
	}
	free(p);
	return rv;
}
