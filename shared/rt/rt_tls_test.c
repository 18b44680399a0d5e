/*
 * rt_tls_test.c - mutual TLS on a server and its event links, in process:
 * who gets in (a certificate of the CA naming an identity), who does not
 * (no certificate, another CA, expired, no identity), which ops each
 * identity may call, certificates read again without a request dropped,
 * and events only to the identities allowed to subscribe.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_client.h"
#include "rt_pubsub.h"
#include "rt_server.h"
#include "rt_tls.h"
#include "wbt.h"
#include "wbt_tls.h"

static char dir[256], other[256], url[128];

/* A handler that answers anyone it is routed to. */
static int
echo(void *arg, const wb_obj *req, wb_obj *rep)
{
	(void)arg;
	(void)req;
	wb_reply_ok(rep);
	return WB_OK;
}

/* certs makes dir (the CA of the server) and other (another CA), each with identities. */
static void
certs(void)
{
	cr_assert_eq(wbt_path(dir, sizeof(dir), "tls"), 0);
	cr_assert_eq(wbt_path(other, sizeof(other), "other"), 0);
	cr_assert_eq(wbt_tls_dir(dir), 0);
	cr_assert_eq(wbt_tls_cert(dir, "expired", "gateway.warble", -1), 0);
	cr_assert_eq(wbt_tls_cert(dir, "nobody", "nobody.example", 30), 0);
	cr_assert_eq(wbt_tls_dir(other), 0);
}

/* serve starts a relation-like server whose rel.follow only the gateway may call. */
static rt_server *
serve(rt_tls **tls)
{
	rt_server *s;

	cr_assert_eq(rt_tls_open(tls, dir, "relation"), WB_OK);
	cr_assert(wbt_tcp_url(url, sizeof(url)) > 0);
	rt_server_opts o = { .name = "relation", .url = url, .workers = 2, .tls = *tls };
	cr_assert_eq(rt_server_open(&s, &o), WB_OK);
	const rt_route r = { WB_OP_REL_FOLLOW, echo, 0, 0, RT_PEER_GATEWAY };
	cr_assert_eq(rt_server_routes(s, &r, 1, NULL), WB_OK);
	cr_assert_eq(rt_server_start(s), WB_OK);
	return s;
}

/* call makes one call of op as identity name of folder d (name NULL: no TLS); the result. */
static int
call(const char *d, const char *name, wb_op op)
{
	rt_tls        *t = NULL;
	rt_client     *c;
	rt_client_opts o = { .timeout_ms = 3000 };
	wb_obj        *req = wb_request(op), *rep = NULL;
	int            rv;

	if (name != NULL) {
		cr_assert_eq(rt_tls_open(&t, d, name), WB_OK, "identity %s of %s", name, d);
	}
	o.tls = t;
	cr_assert_eq(rt_client_open(&c, url, &o), WB_OK);
	if (op == WB_OP_REL_FOLLOW) {
		wb_set_u64(req, WB_F_UID, 1);
		wb_set_u64(req, WB_F_TARGET, 2);
	}
	rv = rt_call(c, req, &rep);
	wb_msg_free(req);
	wb_msg_free(rep);
	rt_client_close(c);
	rt_tls_close(t);
	return rv;
}

Test(rt_tls, who_gets_in, .fini = wbt_cleanup, .timeout = 60)
{
	rt_tls    *tls;
	rt_server *s;

	certs();
	s = serve(&tls);
	cr_assert_eq(call(dir, "gateway", WB_OP_PING), WB_OK);
	cr_assert_eq(call(dir, "inbox", WB_OP_PING), WB_OK, "ping is open to every identity");
	/* refused before a byte of a request is read */
	cr_assert_eq(call(dir, NULL, WB_OP_PING), WB_EUNAVAIL, "no certificate");
	cr_assert_eq(call(other, "gateway", WB_OP_PING), WB_EUNAVAIL, "another CA");
	cr_assert_eq(call(dir, "expired", WB_OP_PING), WB_EUNAVAIL, "expired");
	cr_assert_eq(call(dir, "nobody", WB_OP_PING), WB_EUNAVAIL, "no identity");
	rt_server_close(s);
	rt_tls_close(tls);
}

Test(rt_tls, each_identity_its_ops, .fini = wbt_cleanup, .timeout = 60)
{
	rt_tls    *tls;
	rt_server *s;

	certs();
	s = serve(&tls);
	cr_assert_eq(call(dir, "gateway", WB_OP_REL_FOLLOW), WB_OK);
	cr_assert_eq(call(dir, "admin", WB_OP_REL_FOLLOW), WB_OK, "admin may call every op");
	cr_assert_eq(call(dir, "inbox", WB_OP_REL_FOLLOW), WB_EPERM);
	cr_assert_eq(call(dir, "content", WB_OP_REL_FOLLOW), WB_EPERM);
	cr_assert_eq(call(dir, "inbox", WB_OP_STATS), WB_EPERM, "stats: gateway and admin");
	cr_assert_eq(call(dir, "admin", WB_OP_STATS), WB_OK);
	rt_server_close(s);
	rt_tls_close(tls);
}

/* Calls in a loop as the gateway of dir until stop; counts failures. */
typedef struct caller {
	atomic_bool stop;
	atomic_int  calls, failures;
} caller;

static void *
caller_main(void *arg)
{
	caller        *k = arg;
	rt_tls        *t;
	rt_client     *c;
	rt_client_opts o = { .timeout_ms = 3000 };

	cr_assert_eq(rt_tls_open(&t, dir, "gateway"), WB_OK);
	o.tls = t;
	cr_assert_eq(rt_client_open(&c, url, &o), WB_OK);
	while (!atomic_load(&k->stop)) {
		wb_obj *req = wb_request(WB_OP_PING), *rep = NULL;
		if (rt_call(c, req, &rep) != WB_OK) {
			atomic_fetch_add(&k->failures, 1);
		}
		atomic_fetch_add(&k->calls, 1);
		wb_msg_free(req);
		wb_msg_free(rep);
	}
	rt_client_close(c);
	rt_tls_close(t);
	return NULL;
}

/* swap replaces path with the bytes of the files given, atomically (a rename), as a Secret update does. */
static void
swap(const char *path, const char *a, const char *b)
{
	char tmp[600], cmd[2048];

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	snprintf(cmd, sizeof(cmd), "cat '%s' %s%s%s > '%s' && mv '%s' '%s'", a, b ? "'" : "",
	    b ? b : "", b ? "'" : "", tmp, tmp, path);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

Test(rt_tls, certificates_read_again_without_a_request_dropped, .fini = wbt_cleanup, .timeout = 90)
{
	rt_tls    *tls;
	rt_server *s;
	caller     k = { 0 };
	pthread_t  th;
	char       ca[300], ca_other[300], old[300], new[300], both[300];

	certs();
	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	snprintf(ca_other, sizeof(ca_other), "%s/ca.pem", other);
	snprintf(old, sizeof(old), "%s/ca-old.pem", dir);
	snprintf(new, sizeof(new), "%s/ca-new.pem", dir);
	snprintf(both, sizeof(both), "%s/ca-both.pem", dir);
	swap(old, ca, NULL);
	swap(new, ca_other, NULL);
	swap(both, old, new);
	s = serve(&tls);
	cr_assert_eq(pthread_create(&th, NULL, caller_main, &k), 0);
	cr_assert_eq(call(other, "gateway", WB_OP_PING), WB_EUNAVAIL);

	/* a rotation's first step: everyone trusts both CAs; the server notices with no signal */
	swap(ca_other, both, NULL);
	swap(ca, both, NULL);
	long long end = wbt_now_ms() + wbt_ms(5 * RT_TLS_CHECK_MS);
	int       rv;
	while ((rv = call(other, "gateway", WB_OP_PING)) != WB_OK && wbt_now_ms() < end) {
		wbt_sleep_ms(100);
	}
	cr_assert_eq(rv, WB_OK, "the new CA was not read within %d ms", 5 * RT_TLS_CHECK_MS);

	/* the last step, read on a reload call (what SIGHUP does): the new CA's clients only */
	swap(ca, new, NULL);
	rt_tls_reload_all();
	cr_assert_eq(call(other, "gateway", WB_OP_PING), WB_OK);
	cr_assert_eq(call(dir, "inbox", WB_OP_PING), WB_EUNAVAIL, "a client of the old CA");
	atomic_store(&k.stop, true);
	pthread_join(th, NULL);
	/* the caller's pooled connection, made under the old CA, went on throughout */
	cr_assert_gt(atomic_load(&k.calls), 10);
	cr_assert_eq(atomic_load(&k.failures), 0, "%d of %d calls failed", atomic_load(&k.failures),
	    atomic_load(&k.calls));
	rt_server_close(s);
	rt_tls_close(tls);
}

typedef struct sink {
	atomic_int got;
} sink;

static void
sink_fn(void *arg, const wb_obj *m)
{
	(void)m;
	atomic_fetch_add(&((sink *)arg)->got, 1);
}

Test(rt_tls, events_only_to_subscribers_allowed, .fini = wbt_cleanup, .timeout = 60)
{
	rt_tls *pt, *inbox, *gateway;
	rt_pub *p;
	rt_sub *in, *gw, *plain;
	sink    a = { 0 }, b = { 0 }, c = { 0 };
	char    purl[128];

	certs();
	cr_assert(wbt_tcp_url(purl, sizeof(purl)) > 0);
	cr_assert_eq(rt_tls_open(&pt, dir, "content"), WB_OK);
	cr_assert_eq(rt_tls_open(&inbox, dir, "inbox"), WB_OK);
	cr_assert_eq(rt_tls_open(&gateway, dir, "gateway"), WB_OK);
	cr_assert_eq(rt_pub_open(&p, purl, pt, RT_PEER_INBOX), WB_OK);
	cr_assert_eq(rt_sub_open(&in, purl, inbox, sink_fn, &a), WB_OK);
	cr_assert_eq(rt_sub_open(&gw, purl, gateway, sink_fn, &b), WB_OK);
	cr_assert_eq(rt_sub_open(&plain, purl, NULL, sink_fn, &c), WB_OK);
	long long end = wbt_now_ms() + wbt_ms(10000);
	while (atomic_load(&a.got) < 20 && wbt_now_ms() < end) {
		wb_obj *m = wb_request(WB_OP_EVENTS);
		wb_set_cstr(m, WB_F_SOURCE, "content/0");
		cr_assert_eq(rt_pub_send(p, m), WB_OK);
		wb_msg_free(m);
		wbt_sleep_ms(20);
	}
	cr_assert_geq(atomic_load(&a.got), 20, "the inbox got %d events", atomic_load(&a.got));
	cr_assert_eq(atomic_load(&b.got), 0, "the gateway may not subscribe");
	cr_assert_eq(atomic_load(&c.got), 0, "a subscriber without a certificate");
	rt_sub_close(in);
	rt_sub_close(gw);
	rt_sub_close(plain);
	rt_pub_close(p);
	rt_tls_close(pt);
	rt_tls_close(inbox);
	rt_tls_close(gateway);
}
