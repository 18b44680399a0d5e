/*
 * rt_client.c - REQ client with a deadline on every call.
 *
 * One req0 socket per client, dialed in the background (NNG_FLAG_NONBLOCK)
 * so that a client can be opened before its server is up; nng redials on
 * its own.  Each rt_call opens a fresh context, so calls from many
 * threads share the connection without sharing state.  Both the send and
 * the receive carry a timeout: a synchronous REQ send waits forever for a
 * pipe once the server is gone, so the send needs one as much as the
 * receive.
 *
 * nng's own resend timer is switched off (NNG_OPT_REQ_RESENDTIME =
 * infinite): rt_call decides about retries itself, and with the timer on,
 * nng 1.5.2 re-queues a request whose connection dropped and nng_close
 * then waits for that timer (seen here: a refused oversized request made
 * rt_client_close hang until the resend time).  With it off, a dropped
 * connection fails the call at once (NNG_ECONNRESET -> WB_EUNAVAIL).
 *
 * A context and its aio are kept for the next call once a call went well
 * (up to RT_CLIENT_IDLE of them, on a locked free list): opening and
 * closing both per call cost allocations and socket-lock round trips on
 * every downstream hop.  A context whose call failed (timeout, reset) is
 * closed, never reused.
 *
 * The client counts its connected pipes (pipe notifications) to tell a
 * server that is not there (WB_EUNAVAIL) from one that is slow
 * (WB_ETIMEDOUT).
 *
 * A synchronous call (rt_call) to a tcp:// or ipc:// server does not go
 * through libnng at all: rt_sp writes the request and reads the reply on
 * the calling thread, waiting for a server that is not up yet as nng's
 * dialer would.  Through nng, the caller's thread hands the request to
 * nng's threads and is woken with the reply, several context switches a
 * call; see docs/benchmarks.md for what that cost the gateway.  A started
 * call (rt_call_start) takes a connection of its own until it is finished,
 * so the server works on calls started together at the same time.
 *
 * A client of a server in its own process (rt_server_opts.local, the
 * services hosted together by warble) dials nothing: each call runs the
 * server's handler on the calling thread (rt_local.h), a started call
 * at once, so that its finish only hands over the reply.
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

#include <nng/nng.h>
#include <nng/protocol/reqrep0/req.h>

#include "rt_client.h"
#include "rt_local.h"
#include "rt_sp.h"
#include "wb_clock.h"

#define RT_CLIENT_TIMEOUT_MS 5000
#define RT_CLIENT_MAX_MSG    (16u << 20)
#define RT_CLIENT_RECONN_MIN 10
#define RT_CLIENT_RECONN_MAX 500
#define RT_CLIENT_IDLE       64  /* idle contexts kept for reuse */
#define RT_CLIENT_MSG_START  256 /* first reservation of a request message */

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

typedef struct rt_client_slot {
	nng_ctx  ctx;
	nng_aio *aio;
} rt_client_slot;

struct rt_client {
	rt_client  *next, *prev; /* every open client, for rt_client_shutdown_all */
	atomic_bool down;        /* rt_client_shutdown has run */
	nng_socket  sock;
	int         timeout_ms;
	int         retries;
	size_t      max_msg;
	atomic_int  npipes;
	rt_sp      *sp;    /* synchronous calls, when the URL is one rt_sp speaks */
	int         local; /* the in-process server's slot (rt_local_find), or 0 */

	pthread_mutex_t idle_mtx;
	rt_client_slot  idle[RT_CLIENT_IDLE];
	int             nidle;

	int             coalesce; /* messages in flight before calls are batched (0: never) */
	pthread_mutex_t co_mtx;   /* guards the three below */
	int             co_busy;  /* rt_call messages in flight */
	rt_waiter      *co_head, *co_tail; /* calls queued for the next batch */
};

/* Every open client of the process, so that a stopping daemon can end every call in flight. */
static pthread_mutex_t rt_clients_mu = PTHREAD_MUTEX_INITIALIZER;
static rt_client      *rt_clients;
static bool            rt_clients_down; /* rt_client_shutdown_all has run */

static void
rt_client_pipe_cb(nng_pipe p, nng_pipe_ev ev, void *arg)
{
	rt_client *c = arg;

	(void)p;
	if (ev == NNG_PIPE_EV_ADD_POST) {
		atomic_fetch_add(&c->npipes, 1);
	} else if (ev == NNG_PIPE_EV_REM_POST) {
		atomic_fetch_sub(&c->npipes, 1);
	}
}

/* rt_client_open dials url (non-blocking: the connection is made in the background). */
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
	atomic_init(&c->npipes, 0);
	atomic_init(&c->down, false);
	pthread_mutex_init(&c->idle_mtx, NULL);
	pthread_mutex_init(&c->co_mtx, NULL);
	if ((rv = nng_req0_open(&c->sock)) != 0) {
		pthread_mutex_destroy(&c->idle_mtx);
		pthread_mutex_destroy(&c->co_mtx);
		free(c);
		return WB_ENOMEM;
	}
	nng_socket_set_size(c->sock, NNG_OPT_RECVMAXSZ, c->max_msg);
	nng_socket_set_ms(c->sock, NNG_OPT_RECONNMINT, RT_CLIENT_RECONN_MIN);
	nng_socket_set_ms(c->sock, NNG_OPT_RECONNMAXT, RT_CLIENT_RECONN_MAX);
	nng_socket_set_ms(c->sock, NNG_OPT_REQ_RESENDTIME, NNG_DURATION_INFINITE);
	nng_socket_set_ms(c->sock, NNG_OPT_SENDTIMEO, c->timeout_ms);
	nng_socket_set_ms(c->sock, NNG_OPT_RECVTIMEO, c->timeout_ms);
	nng_pipe_notify(c->sock, NNG_PIPE_EV_ADD_POST, rt_client_pipe_cb, c);
	nng_pipe_notify(c->sock, NNG_PIPE_EV_REM_POST, rt_client_pipe_cb, c);
	c->local = rt_local_find(url);
	if (c->local == 0 && (rv = nng_dial(c->sock, url, NULL, NNG_FLAG_NONBLOCK)) != 0) {
		nng_close(c->sock);
		pthread_mutex_destroy(&c->idle_mtx);
		pthread_mutex_destroy(&c->co_mtx);
		free(c);
		return WB_EINVAL; /* a URL nng cannot parse or a transport it lacks */
	}
	if (c->local == 0 && rt_sp_supports(url)) {
		rt_sp_opts so = {
			.timeout_ms = c->timeout_ms, .max_msg = c->max_msg, .wait_for_server = true
		};
		(void)rt_sp_open(&c->sp, url, &so); /* without it, calls go through nng */
	}
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
 * rt_client_shutdown closes the socket: nng ends every call in flight on
 * it (NNG_ECLOSED, reported as WB_ECLOSED) and refuses new ones; the
 * client stays valid until rt_client_close.
 */
void
rt_client_shutdown(rt_client *c)
{
	if (c != NULL && !atomic_exchange(&c->down, true)) {
		rt_sp_shutdown(c->sp);
		nng_close(c->sock);
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
	for (int i = 0; i < c->nidle; i++) {
		nng_ctx_close(c->idle[i].ctx);
		nng_aio_free(c->idle[i].aio);
	}
	rt_client_shutdown(c);
	rt_sp_close(c->sp);
	pthread_mutex_destroy(&c->idle_mtx);
	pthread_mutex_destroy(&c->co_mtx);
	free(c);
}

static int
rt_client_err(rt_client *c, int nrv)
{
	switch (nrv) {
	case NNG_ETIMEDOUT:
		return atomic_load(&c->npipes) > 0 ? WB_ETIMEDOUT : WB_EUNAVAIL;
	case NNG_ENOMEM:
		return WB_ENOMEM;
	case NNG_ECLOSED:
		return atomic_load(&c->down) ? WB_ECLOSED : WB_EUNAVAIL;
	default:
		/* ECLOSED, ECONNREFUSED, ECONNRESET, ECONNSHUT, ECANCELED... */
		return WB_EUNAVAIL;
	}
}

static int
rt_client_msg_write(void *arg, const char *buf, size_t len)
{
	size_t need = nng_msg_len(arg) + len;

	/* nng grows a message to exactly the size asked: double it instead */
	if (need > nng_msg_capacity(arg) && nng_msg_reserve(arg, 2 * need) != 0) {
		return WB_ENOMEM;
	}
	return nng_msg_append(arg, buf, len) == 0 ? 0 : WB_ENOMEM;
}

/* rt_client_slot_get takes an idle context (or opens one) for a call. */
static int
rt_client_slot_get(rt_client *c, rt_client_slot *sl)
{
	int rv;

	pthread_mutex_lock(&c->idle_mtx);
	if (c->nidle > 0) {
		*sl = c->idle[--c->nidle];
		pthread_mutex_unlock(&c->idle_mtx);
		return 0;
	}
	pthread_mutex_unlock(&c->idle_mtx);
	if ((rv = nng_aio_alloc(&sl->aio, NULL, NULL)) != 0) {
		return rv;
	}
	if ((rv = nng_ctx_open(&sl->ctx, c->sock)) != 0) {
		nng_aio_free(sl->aio);
		return rv;
	}
	return 0;
}

/* rt_client_slot_put keeps a context whose call went well, or closes it. */
static void
rt_client_slot_put(rt_client *c, rt_client_slot *sl, bool reuse)
{
	if (reuse) {
		pthread_mutex_lock(&c->idle_mtx);
		if (c->nidle < RT_CLIENT_IDLE) {
			c->idle[c->nidle++] = *sl;
			pthread_mutex_unlock(&c->idle_mtx);
			return;
		}
		pthread_mutex_unlock(&c->idle_mtx);
	}
	nng_ctx_close(sl->ctx);
	nng_aio_free(sl->aio);
}

/* rt_client_encode packs req into a new message. */
static int
rt_client_encode(const wb_obj *req, nng_msg **out)
{
	nng_msg *msg = NULL;
	int      rv;

	*out = NULL;
	if (nng_msg_alloc(&msg, 0) != 0 || nng_msg_reserve(msg, RT_CLIENT_MSG_START) != 0) {
		if (msg != NULL) {
			nng_msg_free(msg);
		}
		return WB_ENOMEM;
	}
	if ((rv = wb_encode(req, rt_client_msg_write, msg)) != 0) {
		nng_msg_free(msg);
		return rv;
	}
	*out = msg;
	return WB_OK;
}

/* rt_client_reply decodes reply (consumed) into *rep and returns the reply's code. */
static int
rt_client_reply(rt_client *c, nng_msg *reply, wb_obj **rep)
{
	wb_obj     *r = NULL;
	wb_limits   lim = wb_limits_default;
	char        err[128];
	const char *emsg;
	int         rv;

	lim.max_bytes = c->max_msg;
	rv = wb_decode(&r, nng_msg_body(reply), nng_msg_len(reply), &lim, err, sizeof(err));
	nng_msg_free(reply);
	if (rv != 0) {
		return rv == WB_ENOMEM ? WB_ENOMEM : WB_EBADMSG;
	}
	*rep = r;
	return wb_reply_code(r, &emsg);
}

/* rt_client_attempt sends req through nng on a context and waits up to ms for the reply; results as rt_call. */
static int
rt_client_attempt(rt_client *c, const wb_obj *req, int ms, wb_obj **rep)
{
	rt_client_slot sl;
	nng_aio       *aio;
	nng_msg       *msg, *reply = NULL;
	int64_t        end = (int64_t)(wb_mono_us() / 1000) + ms;
	int64_t        left;
	int            rv;

	if ((rv = rt_client_encode(req, &msg)) != WB_OK) {
		return rv;
	}
	if ((rv = rt_client_slot_get(c, &sl)) != 0) {
		nng_msg_free(msg);
		return rv == NNG_ENOMEM ? WB_ENOMEM : rt_client_err(c, rv);
	}
	aio = sl.aio;
	nng_aio_set_msg(aio, msg);
	nng_aio_set_timeout(aio, ms);
	nng_ctx_send(sl.ctx, aio);
	nng_aio_wait(aio);
	if ((rv = nng_aio_result(aio)) != 0) {
		nng_msg_free(nng_aio_get_msg(aio)); /* a failed send leaves the msg with us */
		nng_aio_set_msg(aio, NULL);
		goto out;
	}
	left = end - (int64_t)(wb_mono_us() / 1000);
	nng_aio_set_timeout(aio, left > 0 ? (nng_duration)left : 1);
	nng_ctx_recv(sl.ctx, aio);
	nng_aio_wait(aio);
	if ((rv = nng_aio_result(aio)) == 0) {
		reply = nng_aio_get_msg(aio);
		nng_aio_set_msg(aio, NULL);
	}
out:
	rt_client_slot_put(c, &sl, rv == 0);
	return rv == 0 ? rt_client_reply(c, reply, rep) : rt_client_err(c, rv);
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
		rv = c->sp != NULL ? rt_sp_call_within(c->sp, req, left > 0 ? (int)left : 1, rep)
		                   : rt_client_attempt(c, req, left > 0 ? (int)left : 1, rep);
		if (*rep != NULL || (rv != WB_ETIMEDOUT && rv != WB_EUNAVAIL)) {
			break; /* a reply, or a failure another attempt would not mend */
		}
	}
	return rv;
}

/* rt_client_batch sends the n calls of ws as one batch and sets each one's result. */
static void
rt_client_batch(rt_client *c, rt_waiter **ws, int n)
{
	wb_obj       *req = wb_request(WB_OP_BATCH), *rep = NULL, *reqs;
	const wb_obj *reps = NULL;
	int64_t       deadline = ws[0]->deadline;
	size_t        nreps = 0;
	int           rv = WB_ENOMEM;

	if (req != NULL && (reqs = wb_add_objs(req, WB_F_REQS, (size_t)n)) != NULL) {
		wb_del(req, WB_F_RID); /* each item carries its own */
		rv = WB_OK;
		for (int i = 0; i < n && rv == WB_OK; i++) {
			rv = wb_copy(&reqs[i], ws[i]->req);
			deadline = ws[i]->deadline < deadline ? ws[i]->deadline : deadline;
		}
		if (rv == WB_OK) {
			rv = rt_call_until(c, req, deadline, &rep);
		}
	}
	wb_msg_free(req);
	if (rv == WB_OK && (!wb_get_objs(rep, WB_F_REPS, &reps, &nreps) || nreps != (size_t)n)) {
		wb_msg_free(rep); /* not one reply per call: none can be trusted */
		rep = NULL;
		rv = WB_EBADMSG;
	}
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
	rt_sp_pending *sp;  /* the call, when c speaks SP itself */
	rt_client_slot sl;  /* else its nng context */
	wb_obj        *rep; /* the reply of an in-process call, made at the start */
	int            rv;  /* WB_OK while the reply is awaited; an in-process call's result */
};

/* rt_call_start sends req and returns at once; end it with rt_call_finish. */
int
rt_call_start(rt_client *c, const wb_obj *req, rt_pending **out)
{
	rt_pending *p;
	nng_msg    *msg = NULL;
	int         rv;

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
	if (c->sp != NULL) {
		return p->rv = rt_sp_start(c->sp, req, &p->sp);
	}
	if ((rv = rt_client_encode(req, &msg)) != WB_OK) {
		p->rv = rv;
		return rv;
	}
	if ((rv = rt_client_slot_get(c, &p->sl)) != 0) {
		nng_msg_free(msg);
		p->rv = rv == NNG_ENOMEM ? WB_ENOMEM : rt_client_err(c, rv);
		return p->rv;
	}
	nng_aio_set_msg(p->sl.aio, msg);
	nng_aio_set_timeout(p->sl.aio, c->timeout_ms);
	nng_ctx_send(p->sl.ctx, p->sl.aio);
	nng_aio_wait(p->sl.aio); /* a REQ context takes its reply only after the send */
	if ((rv = nng_aio_result(p->sl.aio)) != 0) {
		nng_msg_free(nng_aio_get_msg(p->sl.aio));
		nng_aio_set_msg(p->sl.aio, NULL);
		rt_client_slot_put(c, &p->sl, false);
		p->sl.aio = NULL;
		p->rv = rt_client_err(c, rv);
		return p->rv;
	}
	nng_aio_set_timeout(p->sl.aio, c->timeout_ms);
	nng_ctx_recv(p->sl.ctx, p->sl.aio);
	return WB_OK;
}

/* rt_call_finish waits for p's reply and frees p; results as rt_call. */
int
rt_call_finish(rt_pending *p, wb_obj **rep)
{
	nng_msg *reply = NULL;
	int      rv;

	*rep = NULL;
	if (p == NULL) {
		return WB_ENOMEM;
	}
	if (p->c->local != 0) {
		rv = p->rv;
		*rep = p->rep;
		free(p);
		return rv;
	}
	if (p->c->sp != NULL) {
		rv = rt_sp_finish(p->sp, rep); /* a failed start is kept in p->sp */
		free(p);
		return rv;
	}
	if ((rv = p->rv) == WB_OK) {
		/* sent: the slot is ours until the reply (or the deadline) */
		nng_aio_wait(p->sl.aio);
		if ((rv = nng_aio_result(p->sl.aio)) == 0) {
			reply = nng_aio_get_msg(p->sl.aio);
			nng_aio_set_msg(p->sl.aio, NULL);
		}
		rt_client_slot_put(p->c, &p->sl, rv == 0);
		rv = rv == 0 ? WB_OK : rt_client_err(p->c, rv);
	}
	if (rv == WB_OK) {
		rv = rt_client_reply(p->c, reply, rep);
	}
	free(p);
	return rv;
}
