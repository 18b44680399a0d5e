/*
 * tls_test.c - a cluster with WARBLE_TLS_DIR set: the seed flow through
 * the gateway (whose public port stays plain), every internal port
 * refusing a peer without a certificate of the CA (logged), each
 * identity held to the operations it needs, events reaching the inbox
 * over TLS, and certificates read again on SIGHUP.  The other suites run
 * with TLS on too under WBT_TLS=1 (make test-tls).
 */
#include <signal.h>

#include "it.h"
#include "rt_tls.h"
#include "wbt_tls.h"

static char    tl_dir[256], tl_env_dir[300];
static rt_tls *tl_admin;

/* tl_start makes the certificates and starts the cluster with TLS on, the test presenting admin. */
static void
tl_start(void)
{
	static const char *env[3];

	cr_assert_eq(wbt_path(tl_dir, sizeof(tl_dir), "certs"), 0);
	cr_assert_eq(wbt_tls_dir(tl_dir), 0);
	snprintf(tl_env_dir, sizeof(tl_env_dir), "WARBLE_TLS_DIR=%s", tl_dir);
	env[0] = tl_env_dir;
	env[1] = "WARBLE_LOG_LEVEL=info";
	cr_assert_eq(rt_tls_open(&tl_admin, tl_dir, "admin"), WB_OK);
	rt_tls_default_set(tl_admin);
	it_start(env);
}

static void
tl_fini(void)
{
	it_fini();
	rt_tls_default_set(NULL);
	rt_tls_close(tl_admin);
	tl_admin = NULL;
}

/* tl_call calls url once as identity name (NULL: no TLS at all); the result code. */
static int
tl_call(const char *url, const char *name, wb_obj *req)
{
	rt_tls        *t = NULL;
	rt_client     *c;
	rt_client_opts o = { .timeout_ms = wbt_ms(5000), .plain = name == NULL };
	wb_obj        *rep = NULL;
	int            rc;

	if (name != NULL) {
		cr_assert_eq(rt_tls_open(&t, tl_dir, name), WB_OK);
	}
	o.tls = t;
	cr_assert_eq(rt_client_open(&c, url, &o), WB_OK);
	rc = rt_call(c, req, &rep);
	rt_client_close(c);
	rt_tls_close(t);
	wb_msg_free(req);
	wb_msg_free(rep);
	return rc;
}

/* tl_log_has waits up to ms for text in d's log. */
static bool
tl_log_has(const wbt_daemon *d, const char *text, int ms)
{
	long long end = wbt_now_ms() + wbt_ms(ms);

	do {
		char *log = wbt_read_file(d->log);
		bool  found = log != NULL && strstr(log, text) != NULL;
		free(log);
		if (found) {
			return true;
		}
		wbt_sleep_ms(50);
	} while (wbt_now_ms() < end);
	return false;
}

Test(tls, seed_flow_and_refusals, .fini = tl_fini, .timeout = 120)
{
	uint64_t       a, b, id = 0, ids[4], authors[4];
	warble_client *ca, *cb;

	tl_start();
	/* the seed flow, through the gateway's plain public port */
	ca = it_client();
	cb = it_client();
	free(it_join(ca, "tls_a", "password-a", &a));
	free(it_join(cb, "tls_b", "password-b", &b));
	cr_assert_eq(warble_follow(cb, "tls_a"), WARBLE_OK, "%s", warble_errmsg(cb));
	cr_assert_eq(warble_post(ca, "over TLS", &id), WARBLE_OK, "%s", warble_errmsg(ca));
	it_wait_inbox(20000);
	long n = it_home_all(cb, "tls_b", ids, authors, 4);
	cr_assert_eq(n, 1);
	cr_assert_eq(ids[0], id);
	/* the inbox subscribed to content's and relation's events over TLS, as itself */
	cr_assert(tl_log_has(it_cl.content, "subscriber inbox ready", 5000));
	cr_assert(tl_log_has(it_cl.relation, "subscriber inbox ready", 5000));

	/* internal ports: a peer without a certificate is refused, and logged */
	cr_assert_eq(tl_call(it_cl.relation_url, NULL, wb_request(WB_OP_PING)), WB_EUNAVAIL);
	cr_assert(tl_log_has(it_cl.relation, "refused TLS peer", 5000),
	    "relation's log does not name the refused peer");
	cr_assert_eq(tl_call(it_cl.user_url, NULL, wb_request(WB_OP_PING)), WB_EUNAVAIL);

	/* each identity its operations */
	wb_obj *many = wb_request(WB_OP_USER_REGISTER_MANY);
	wb_set_cstr(many, WB_F_NAME, "tlsmany");
	wb_set_u64(many, WB_F_FROM, 0);
	wb_set_u64(many, WB_F_LIMIT, 1);
	wb_set_cstr(many, WB_F_PASSWORD, "password-many");
	cr_assert_eq(tl_call(it_cl.user_url, "gateway", many), WB_EPERM,
	    "a bulk registration is the admin's");
	wb_obj *get = wb_request(WB_OP_USER_GET);
	wb_set_u64s(get, WB_F_UIDS, &a, 1);
	cr_assert_eq(tl_call(it_cl.user_url, "relation", get), WB_OK);
	get = wb_request(WB_OP_USER_GET);
	wb_set_u64s(get, WB_F_UIDS, &a, 1);
	cr_assert_eq(tl_call(it_cl.user_url, "inbox", get), WB_EPERM);
	wb_obj *home = wb_request(WB_OP_INBOX_HOME);
	wb_set_u64(home, WB_F_UID, b);
	cr_assert_eq(tl_call(it_cl.inbox_url, "content", home), WB_EPERM);
	cr_assert_eq(tl_call(it_cl.inbox_url, "admin", wb_request(WB_OP_STATS)), WB_OK);
	cr_assert_eq(tl_call(it_cl.inbox_url, "inbox", wb_request(WB_OP_STATS)), WB_EPERM);

	/* SIGHUP reads the certificates again; the daemon serves on */
	cr_assert_eq(kill(it_cl.relation->pid, SIGHUP), 0);
	cr_assert(tl_log_has(it_cl.relation, "SIGHUP: reading the TLS certificates again", 5000));
	cr_assert_eq(tl_call(it_cl.relation_url, "gateway", wb_request(WB_OP_PING)), WB_OK);
	warble_close(ca);
	warble_close(cb);
}
