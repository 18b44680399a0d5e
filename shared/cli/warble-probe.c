/*
 * warble-probe - health check of one Warble daemon: sends the built-in
 * ping over nng REQ/REP and exits 0 if it is answered in time.
 *
 *   warble-probe tcp://127.0.0.1:7101          (deadline 2000 ms)
 *   warble-probe --timeout-ms 500 ipc:///tmp/user.ipc
 *
 * It speaks the real protocol (a full nng handshake and one request), so
 * a healthy answer means the service itself answers, not just its port.
 * docker-compose uses it as the healthcheck.  With WARBLE_TLS_DIR (or
 * --tls-dir) it speaks TLS as the identity --tls-name (default admin; in
 * a service's pod, that service's own: ping is open to every identity);
 * --plain probes a port without TLS (the gateway's public one).
 * Exit status: 0 answered, 1 no answer or an error reply, 2 usage error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rt_client.h"
#include "rt_config.h"
#include "rt_tls.h"

#define PROBE_EXIT_FAIL  1
#define PROBE_EXIT_USAGE 2

/* probe_usage prints how to call the probe to f. */
static void
probe_usage(FILE *f)
{
	fprintf(f,
	    "usage: warble-probe [--timeout-ms MS] [--tls-dir DIR] [--tls-name NAME] [--plain] "
	    "URL\n"
	    "Pings the Warble daemon listening on URL; exit 0 if it answers.\n"
	    "  --timeout-ms MS  whole deadline, 1..60000 (default 2000)\n"
	    "  --tls-dir DIR    mutual TLS with DIR/ca.pem, DIR/NAME.pem and DIR/NAME.key\n"
	    "                   (default $WARBLE_TLS_DIR; unset or empty: none)\n"
	    "  --tls-name NAME  the identity to present (default admin)\n"
	    "  --plain          no TLS, whatever WARBLE_TLS_DIR says (a public port)\n");
}

int
main(int argc, char **argv)
{
	const char *url = NULL, *msg = NULL, *tls_dir = getenv("WARBLE_TLS_DIR"), *name = "admin";
	uint64_t    tmo = 2000;
	rt_tls     *tls = NULL;
	rt_client  *c;
	wb_obj     *req, *rep = NULL;
	int         rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			probe_usage(stdout);
			return 0;
		}
		if (strcmp(argv[i], "--timeout-ms") == 0 && i + 1 < argc) {
			if (rt_config_u64("timeout-ms", argv[++i], 1, 60000, &tmo) != 0) {
				return PROBE_EXIT_USAGE;
			}
		} else if (strcmp(argv[i], "--tls-dir") == 0 && i + 1 < argc) {
			tls_dir = argv[++i];
		} else if (strcmp(argv[i], "--tls-name") == 0 && i + 1 < argc) {
			name = argv[++i];
		} else if (strcmp(argv[i], "--plain") == 0) {
			tls_dir = NULL;
		} else if (argv[i][0] != '-' && url == NULL) {
			url = argv[i];
		} else {
			probe_usage(stderr);
			return PROBE_EXIT_USAGE;
		}
	}
	if (url == NULL) {
		probe_usage(stderr);
		return PROBE_EXIT_USAGE;
	}

	if (tls_dir != NULL && tls_dir[0] != '\0' && rt_tls_open(&tls, tls_dir, name) != WB_OK) {
		fprintf(stderr, "warble-probe: no usable %s certificate in %s\n", name, tls_dir);
		return PROBE_EXIT_USAGE;
	}
	rt_client_opts o = { .timeout_ms = (int)tmo, .tls = tls };
	if ((rc = rt_client_open(&c, url, &o)) != WB_OK) {
		fprintf(stderr, "warble-probe: %s: %s\n", url, wb_strerror(rc));
		rt_tls_close(tls);
		return rc == WB_EINVAL ? PROBE_EXIT_USAGE : PROBE_EXIT_FAIL;
	}
	if ((req = wb_request(WB_OP_PING)) == NULL) {
		rt_client_close(c);
		fprintf(stderr, "warble-probe: out of memory\n");
		return PROBE_EXIT_FAIL;
	}
	rc = rt_call(c, req, &rep);
	if (rc != WB_OK && rep != NULL) {
		wb_reply_code(rep, &msg);
	}
	if (rc != WB_OK) {
		fprintf(stderr, "warble-probe: %s: %s%s%s\n", url, wb_strerror(rc),
		    msg != NULL ? ": " : "", msg != NULL ? msg : "");
	}
	wb_msg_free(rep);
	wb_msg_free(req);
	rt_client_close(c);
	rt_tls_close(tls);
	return rc == WB_OK ? 0 : PROBE_EXIT_FAIL;
}
