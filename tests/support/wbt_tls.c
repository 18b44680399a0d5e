/*
 * wbt_tls.c - test certificates with the openssl command (wbt_tls.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "rt_tls.h"
#include "wbt.h"
#include "wbt_tls.h"

/* wbt_tls_run runs a shell command quietly; 0, or -1 with the command printed. */
static int
wbt_tls_run(const char *cmd)
{
	char line[4608];

	snprintf(line, sizeof(line), "(%s) >/dev/null 2>&1", cmd);
	if (system(line) != 0) {
		fprintf(stderr, "wbt_tls: failed: %s\n", cmd);
		return -1;
	}
	return 0;
}

int
wbt_tls_ca(const char *dir)
{
	char cmd[4096];

	mkdir(dir, 0700);
	snprintf(cmd, sizeof(cmd),
	    "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
	    "-keyout '%s/ca.key' -out '%s/ca.pem' -days 30 -subj '/CN=Warble test CA'",
	    dir, dir);
	return wbt_tls_run(cmd);
}

int
wbt_tls_cert(const char *dir, const char *name, const char *san, int days)
{
	char cmd[4096], ext[300];

	snprintf(ext, sizeof(ext), "%s/%s.ext", dir, name);
	FILE *f = fopen(ext, "w");
	if (f == NULL) {
		return -1;
	}
	fprintf(f, "basicConstraints=CA:FALSE\n%s%s\n", san != NULL ? "subjectAltName=DNS:" : "",
	    san != NULL ? san : "");
	fclose(f);
	snprintf(cmd, sizeof(cmd),
	    "cd '%s' && openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
	    "-keyout '%s.key' -out '%s.csr' -subj '/CN=%s' && "
	    "openssl x509 -req -in '%s.csr' -CA ca.pem -CAkey ca.key -CAcreateserial "
	    "-out '%s.pem' -days %d -extfile '%s.ext' && rm -f '%s.csr' '%s.ext'",
	    dir, name, name, name, name, name, days, name, name, name);
	return wbt_tls_run(cmd);
}

int
wbt_tls_dir(const char *dir)
{
	static const char *const names[] = { "user", "relation", "content", "inbox", "gateway",
		"admin" };
	char                     san[64];

	if (wbt_tls_ca(dir) != 0) {
		return -1;
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(san, sizeof(san), "%s.warble", names[i]);
		if (wbt_tls_cert(dir, names[i], san, 30) != 0) {
			return -1;
		}
	}
	return 0;
}

const char *
wbt_tls_env(void)
{
	static char    env[300], made_in[256];
	static rt_tls *admin;
	const char    *on = getenv("WBT_TLS"), *d = wbt_dir();
	char           dir[280];

	if (on == NULL || strcmp(on, "1") != 0 || d == NULL) {
		return NULL;
	}
	if (strcmp(made_in, d) != 0) { /* a test's first cluster: its temp dir is new */
		snprintf(dir, sizeof(dir), "%s/tls", d);
		rt_tls_default_set(NULL);
		rt_tls_close(admin);
		admin = NULL;
		if (wbt_tls_dir(dir) != 0 || rt_tls_open(&admin, dir, "admin") != 0) {
			return NULL;
		}
		rt_tls_default_set(admin);
		snprintf(made_in, sizeof(made_in), "%s", d);
		snprintf(env, sizeof(env), "WARBLE_TLS_DIR=%s", dir);
	}
	return env;
}
