/*
 * wbt_tls.h - certificates for the TLS tests, made with the openssl
 * command: a CA and identities signed by it, as deploy/make-certs makes
 * them (EC P-256, SAN DNS NAME.warble), and the bad ones a test needs
 * (expired, from another CA, naming no identity).
 *
 *   char dir[256];
 *   wbt_path(dir, sizeof(dir), "tls");
 *   wbt_tls_ca(dir);                                  dir/ca.pem, dir/ca.key
 *   wbt_tls_cert(dir, "inbox", "inbox.warble", 30);   dir/inbox.pem, .key
 */
#ifndef WBT_TLS_H
#define WBT_TLS_H

/* wbt_tls_ca makes dir (if need be) and a CA in it: ca.pem and ca.key; 0, or -1 with a message. */
int wbt_tls_ca(const char *dir);

/*
 * wbt_tls_cert makes dir/name.pem and dir/name.key, signed by dir's CA,
 * naming SAN DNS san (NULL: none) and valid for days from now (negative:
 * expired that long ago); 0, or -1 with a message.
 */
int wbt_tls_cert(const char *dir, const char *name, const char *san, int days);

/*
 * wbt_tls_env returns "WARBLE_TLS_DIR=DIR" when the environment has
 * WBT_TLS=1, else NULL: DIR (in the test's temp dir, made on first use)
 * holds a CA and every identity, and from then on the test process's own
 * clients present the admin identity (rt_tls_default_set).  The cluster
 * harnesses give it to every daemon, so any suite runs with TLS on.
 */
const char *wbt_tls_env(void);

/* wbt_tls_dir makes dir with a CA and an identity for each of user, relation, content, inbox, gateway and admin; 0 or -1. */
int wbt_tls_dir(const char *dir);

#endif
