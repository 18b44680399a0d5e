/*
 * compose_test.c - deploy/docker-compose.yml is valid, and it cannot drift
 * from deploy/warble-local or from the daemons.
 *
 * Three sources describe one configuration; this test reads all three and
 * checks that they agree:
 *
 *   deploy/warble-local        services="user relation ..."; its --env prints
 *                              the variables it runs the daemons with
 *   deploy/docker-compose.yml  read through `docker-compose config` (the
 *                              normalized YAML compose itself runs, anchors
 *                              and ${VAR:-default} resolved)
 *   warble-NAME --print-defaults  each daemon's variables and defaults (its
 *                              options; the addresses come from one table,
 *                              proto/wb_services.h)
 *
 * The rules: the same five services; every container gets every variable
 * the launcher exports, plus only variables its daemon reads; a URL
 * variable names the service that owns it (WARBLE_CONTENT_PUB_URL ->
 * content) and has the same port everywhere (launcher default, daemon
 * default, compose peer address tcp://SERVICE:PORT, the owner's listen
 * override --flag tcp://0.0.0.0:PORT, its healthcheck); only the gateway
 * publishes ports; each store has its own named volume on $WARBLE_DATA
 * and mounts the shared volume "backup" on /backup;
 * and no file sets a WARBLE_* variable that no daemon reads.
 * WARBLE_METRICS_URL, the admin port, is each daemon's own: a default of
 * its own on loopback, set by neither the launcher nor compose's
 * environment, and overridden in each compose command on 0.0.0.0 and the
 * same port, never published.
 *
 * deploy/docker-compose.sharded.yml is held to its own rules: it needs
 * WARBLE_TLS_HOST_DIR; every container gets the same shard lists, whose
 * entry i is tcp://KINDi:PORT on the daemon's port; the services KINDi are
 * shards i/N listening there, each with a named volume of its own; each
 * container mounts, read-only, ca.pem and its own identity's pair alone,
 * and its healthcheck presents that identity (the gateways': --plain);
 * only the gateways publish, each on host ports of its own.
 *
 * deploy/Dockerfile is checked too: it builds every daemon, warblectl and
 * warble-probe; its build stage uses the project's -dev packages; its
 * runtime stage installs the package of every library the binaries link.
 *
 * The drift tests need docker-compose (tests/deps.sh installs it) and
 * skip, saying so, when it is not installed.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wbt.h"

#define CT_MAX_OUT    (1 << 20) /* bytes of docker-compose output kept */
#define CT_MAX_FILE   (1 << 20) /* bytes of a source file read */
#define CT_MAX_ITEMS  64
#define CT_COMPOSE    "deploy/docker-compose.yml"
#define CT_SHARDED    "deploy/docker-compose.sharded.yml"
#define CT_CERTS      "/certs"          /* WARBLE_TLS_HOST_DIR while the sharded file is read */
#define CT_TLS_DIR    "/etc/warble/tls" /* where a container finds its certificates */
#define CT_LAUNCHER   "deploy/warble-local"
#define CT_DATA       "/var/lib/warble"
#define CT_BACKUP     "/backup" /* where every store mounts the volume backups go to */
#define CT_BACKUP_VOL "backup"
#define CT_HTTP_PORT  8080                 /* the gateway's HTTP API (WARBLE_HTTP_URL) */
#define CT_ADMIN_VAR  "WARBLE_METRICS_URL" /* each daemon's own admin port */
#define CT_S(s)       ((s) != NULL ? (s) : "(none)")

/* ---- small utilities ---------------------------------------------------- */

/* ct_root changes to the repository root ($WBT_SRC_DIR, the current folder,
 * or two levels above the test binary); fails the test if none has the files. */
static void
ct_root(void)
{
	char        self[512], cand[600];
	const char *src = getenv("WBT_SRC_DIR");
	ssize_t     len;

	if (src != NULL && src[0] != '\0' && chdir(src) != 0) {
		cr_assert_fail("WBT_SRC_DIR=%s: %s", src, strerror(errno));
	}
	if (access(CT_COMPOSE, R_OK) == 0 && access(CT_LAUNCHER, R_OK) == 0) {
		return;
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	cr_assert(len > 0);
	self[len] = '\0';
	snprintf(cand, sizeof(cand), "%s/../..", dirname(self));
	cr_assert_eq(chdir(cand), 0, "cannot find the repository (set WBT_SRC_DIR)");
	cr_assert_eq(access(CT_COMPOSE, R_OK), 0, "no %s under %s", CT_COMPOSE, cand);
}

/* ct_file_read returns the whole file (NUL-terminated, at most CT_MAX_FILE bytes) or NULL. */
static char *
ct_file_read(const char *path)
{
	FILE  *f = fopen(path, "r");
	char  *buf;
	size_t n;

	if (f == NULL) {
		return NULL;
	}
	buf = malloc(CT_MAX_FILE + 1);
	cr_assert_not_null(buf);
	n = fread(buf, 1, CT_MAX_FILE, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* ct_which tells whether prog is an executable in $PATH. */
static bool
ct_which(const char *prog)
{
	const char *path = getenv("PATH");
	char        dirs[4096], file[4200];

	snprintf(dirs, sizeof(dirs), "%s", path != NULL ? path : "/usr/bin:/bin");
	for (char *save, *d = strtok_r(dirs, ":", &save); d != NULL;
	     d = strtok_r(NULL, ":", &save)) {
		snprintf(file, sizeof(file), "%s/%s", d, prog);
		if (access(file, X_OK) == 0) {
			return true;
		}
	}
	return false;
}

/*
 * ct_run runs argv with stdout captured (stderr into *err if err is not
 * NULL), killing it after timeout_ms.  Returns its exit status (128+signal
 * if killed); *out and *err are NUL-terminated and the caller frees them.
 */
static int
ct_run(char *const argv[], char **out, char **err, int timeout_ms)
{
	int       po[2], pe[2], st = 0;
	size_t    no = 0, ne = 0;
	char     *bo = malloc(CT_MAX_OUT + 1), *be = malloc(CT_MAX_OUT + 1);
	long long deadline = wbt_now_ms() + timeout_ms;
	pid_t     pid;
	bool      open_o = true, open_e = true;

	cr_assert(bo != NULL && be != NULL);
	cr_assert_eq(pipe(po), 0);
	cr_assert_eq(pipe(pe), 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		dup2(null, 0);
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]);
		close(pe[0]);
		execvp(argv[0], argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	while ((open_o || open_e) && wbt_now_ms() < deadline) {
		struct pollfd fds[2] = { { open_o ? po[0] : -1, POLLIN, 0 },
			{ open_e ? pe[0] : -1, POLLIN, 0 } };
		int           left = (int)(deadline - wbt_now_ms());
		if (poll(fds, 2, left > 0 ? left : 0) <= 0) {
			continue;
		}
		for (int i = 0; i < 2; i++) {
			char   *b = i == 0 ? bo : be;
			size_t *n = i == 0 ? &no : &ne;
			char    tmp[4096];
			if (fds[i].revents == 0) {
				continue;
			}
			ssize_t r = read(fds[i].fd, tmp, sizeof(tmp));
			if (r <= 0) {
				*(i == 0 ? &open_o : &open_e) = false;
				continue;
			}
			size_t keep = (size_t)r < CT_MAX_OUT - *n ? (size_t)r : CT_MAX_OUT - *n;
			memcpy(b + *n, tmp, keep);
			*n += keep;
		}
	}
	if (open_o || open_e) {
		kill(pid, SIGKILL);
	}
	waitpid(pid, &st, 0);
	close(po[0]);
	close(pe[0]);
	bo[no] = '\0';
	be[ne] = '\0';
	*out = bo;
	if (err != NULL) {
		*err = be;
	} else {
		free(be);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* ct_url_port returns the port of scheme://host:PORT (and the host into host), or -1. */
static int
ct_url_port(const char *url, char *host, size_t hn)
{
	const char *h = strstr(url, "://"), *colon;
	char       *end;
	long        port;

	if (host != NULL && hn > 0) {
		host[0] = '\0';
	}
	if (h == NULL || (colon = strrchr(h + 3, ':')) == NULL) {
		return -1;
	}
	h += 3;
	if (host != NULL) {
		snprintf(host, hn, "%.*s", (int)(colon - h), h);
	}
	port = strtol(colon + 1, &end, 10);
	return (*end == '\0' && port > 0 && port < 65536) ? (int)port : -1;
}

/* ct_owner_by_name writes the service a URL variable names (WARBLE_CONTENT_PUB_URL -> content). */
static void
ct_owner_by_name(const char *var, char *svc, size_t n)
{
	const char *s = var + strlen("WARBLE_");
	size_t      i = 0;

	while (s[i] != '\0' && s[i] != '_' && i + 1 < n) {
		svc[i] = (char)tolower((unsigned char)s[i]);
		i++;
	}
	svc[i] = '\0';
}

/* ct_is_url_var tells whether a variable name is an address (ends in _URL). */
static bool
ct_is_url_var(const char *var)
{
	size_t n = strlen(var);
	return n > 4 && strcmp(var + n - 4, "_URL") == 0;
}

/*
 * ct_is_admin_var tells whether a variable is the admin port's, which
 * every daemon has its own of.
 */
static bool
ct_is_admin_var(const char *var)
{
	return strcmp(var, CT_ADMIN_VAR) == 0;
}

/* ---- the normalized YAML of `docker-compose config` ---------------------- */

/*
 * ct_node is one YAML node: a map entry (key set) or a list item (key
 * NULL), with a scalar value or children.  Only the block style that
 * `docker-compose config` prints is understood: "key: value", "key:" with
 * an indented block, "- item" lists at the key's indent, "- key: v" maps.
 */
typedef struct ct_node {
	char            *key;
	char            *val;
	struct ct_node **kids;
	int              nkids;
} ct_node;

typedef struct ct_line {
	int   indent;
	char *text; /* without indent */
} ct_line;

/* ct_scalar_dup copies a scalar, dropping matching single or double quotes. */
static char *
ct_scalar_dup(const char *s)
{
	size_t n = strlen(s);
	if (n >= 2 && (s[0] == '\'' || s[0] == '"') && s[n - 1] == s[0]) {
		return strndup(s + 1, n - 2);
	}
	return strdup(s);
}

/* ct_node_add appends a child node to parent and returns it. */
static ct_node *
ct_node_add(ct_node *parent, const char *key, const char *val)
{
	ct_node *k = calloc(1, sizeof(*k));
	cr_assert_not_null(k);
	k->key = key != NULL ? strdup(key) : NULL;
	k->val = val != NULL ? ct_scalar_dup(val) : NULL;
	parent->kids = realloc(parent->kids, sizeof(ct_node *) * (size_t)(parent->nkids + 1));
	cr_assert_not_null(parent->kids);
	parent->kids[parent->nkids++] = k;
	return k;
}

/* ct_split_key splits "key: value" / "key:" in place; returns the value ("" if none) or NULL if not a key. */
static char *
ct_split_key(char *text)
{
	char  *c = strstr(text, ": ");
	size_t n = strlen(text);

	if (c != NULL && text[0] != '\'' && text[0] != '"') {
		*c = '\0';
		return c + 2;
	}
	if (n > 0 && text[n - 1] == ':') {
		text[n - 1] = '\0';
		return text + n - 1;
	}
	return NULL;
}

static void ct_yaml_block(ct_node *parent, ct_line *lines, int n, int *i, int indent);

/* ct_yaml_entry parses one "key: value" or "key:" + block at *i into parent. */
static void
ct_yaml_entry(ct_node *parent, char *text, ct_line *lines, int n, int *i, int indent)
{
	char    *val = ct_split_key(text);
	ct_node *k;

	cr_assert_not_null(val, "compose config: not a YAML key: %s", text);
	k = ct_node_add(parent, text, val[0] != '\0' ? val : NULL);
	if (val[0] != '\0') {
		return;
	}
	/* a block: deeper lines, or a list at the same indent */
	if (*i < n && (lines[*i].indent > indent ||
	                  (lines[*i].indent == indent && strncmp(lines[*i].text, "- ", 2) == 0))) {
		ct_yaml_block(k, lines, n, i, lines[*i].indent);
	}
}

/* ct_yaml_block parses the lines at exactly indent (a map or a list) into parent. */
static void
ct_yaml_block(ct_node *parent, ct_line *lines, int n, int *i, int indent)
{
	bool list = strncmp(lines[*i].text, "- ", 2) == 0;

	while (*i < n && lines[*i].indent == indent &&
	       (strncmp(lines[*i].text, "- ", 2) == 0) == list) {
		char *text = lines[(*i)++].text;
		if (!list) {
			ct_yaml_entry(parent, text, lines, n, i, indent);
			continue;
		}
		text += 2;
		char *probe = strdup(text);
		bool  is_map = ct_split_key(probe) != NULL;
		free(probe);
		if (!is_map) {
			ct_node_add(parent, NULL, text);
			continue;
		}
		/* "- key: v" then more keys at indent + 2 */
		ct_node *item = ct_node_add(parent, NULL, NULL);
		ct_yaml_entry(item, text, lines, n, i, indent + 2);
		while (*i < n && lines[*i].indent == indent + 2 &&
		       strncmp(lines[*i].text, "- ", 2) != 0) {
			ct_yaml_entry(item, lines[(*i)++].text, lines, n, i, indent + 2);
		}
	}
	cr_assert(
	    *i >= n || lines[*i].indent < indent ||
	        (lines[*i].indent == indent && list), /* a list ends where its key's map goes on */
	    "compose config: unexpected line: %s", *i < n ? lines[*i].text : "");
}

/* ct_yaml_parse parses text (modified in place) into a root map. */
static ct_node *
ct_yaml_parse(char *text)
{
	ct_line *lines = calloc(CT_MAX_OUT / 2, sizeof(ct_line));
	ct_node *root = calloc(1, sizeof(*root));
	int      n = 0, i = 0;

	cr_assert(lines != NULL && root != NULL);
	for (char *save, *l = strtok_r(text, "\n", &save); l != NULL;
	     l = strtok_r(NULL, "\n", &save)) {
		int ind = 0;
		while (l[ind] == ' ') {
			ind++;
		}
		if (l[ind] == '\0' || l[ind] == '#') {
			continue;
		}
		lines[n++] = (ct_line) { ind, l + ind };
	}
	if (n > 0) {
		ct_yaml_block(root, lines, n, &i, lines[0].indent);
	}
	cr_assert_eq(i, n, "compose config: stopped at line: %s", i < n ? lines[i].text : "");
	free(lines);
	return root;
}

/* ct_get returns the child of n with key, or NULL. */
static ct_node *
ct_get(const ct_node *n, const char *key)
{
	for (int i = 0; n != NULL && i < n->nkids; i++) {
		if (n->kids[i]->key != NULL && strcmp(n->kids[i]->key, key) == 0) {
			return n->kids[i];
		}
	}
	return NULL;
}

/* ct_val returns the scalar at key of n, or NULL. */
static const char *
ct_val(const ct_node *n, const char *key)
{
	ct_node *k = ct_get(n, key);
	return k != NULL ? k->val : NULL;
}

/* ---- the three sources -------------------------------------------------- */

typedef struct ct_var {
	char name[64];
	char flag[64]; /* daemons only */
	char dflt[128];
} ct_var;

typedef struct ct_daemon {
	char   name[32];
	ct_var opts[CT_MAX_ITEMS];
	int    nopts;
} ct_daemon;

typedef struct ct_world {
	ct_node  *compose;               /* normalized config */
	ct_node  *services;              /* compose's services: */
	ct_var    exports[CT_MAX_ITEMS]; /* the launcher's */
	int       nexports;
	char      lservices[CT_MAX_ITEMS][32]; /* the launcher's services="..." */
	int       nlservices;
	ct_daemon daemons[CT_MAX_ITEMS];
	int       ndaemons;
} ct_world;

static ct_world w;

/*
 * ct_config runs `docker-compose -f path config` (with WARBLE_TLS_HOST_DIR
 * set to CT_CERTS, which the sharded file requires) and parses it, or
 * skips the test without the binary.
 */
static ct_node *
ct_config(const char *path)
{
	char *argv[] = { "env", "WARBLE_TLS_HOST_DIR=" CT_CERTS, "docker-compose", "-f",
		(char *)path, "config", NULL };
	char *out, *err;
	int   rc;

	if (!ct_which("docker-compose")) {
		cr_skip_test("docker-compose is not installed (tests/deps.sh installs it)");
	}
	rc = ct_run(argv, &out, &err, 60000);
	cr_assert_eq(rc, 0, "docker-compose -f %s config failed (%d): %s", path, rc, err);
	free(err);
	return ct_yaml_parse(out);
}

/* ct_compose_load loads deploy/docker-compose.yml into w. */
static void
ct_compose_load(void)
{
	w.compose = ct_config(CT_COMPOSE);
	w.services = ct_get(w.compose, "services");
	cr_assert_not_null(w.services, "no services in the compose config");
}

/* ct_launcher_load reads the launcher's service list and runs `warble-local --env` for its variables. */
static void
ct_launcher_load(void)
{
	char *text = ct_file_read(CT_LAUNCHER), *out = NULL, *save = NULL;
	char  bindir[600], list[512];

	cr_assert_not_null(text, "cannot read %s", CT_LAUNCHER);
	for (char *l = strtok_r(text, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
		if (sscanf(l, "services=\"%511[^\"]\"", list) == 1) {
			for (char *s2, *s = strtok_r(list, " ", &s2); s != NULL;
			     s = strtok_r(NULL, " ", &s2)) {
				cr_assert(w.nlservices < CT_MAX_ITEMS);
				snprintf(w.lservices[w.nlservices++], 32, "%s", s);
			}
		}
	}
	free(text);
	cr_assert_gt(w.nlservices, 0, "no services=\"...\" line in %s", CT_LAUNCHER);

	/* a clean environment: only what the launcher itself exports */
	cr_assert_eq(wbt_bin_path(bindir, sizeof(bindir), "warble-gateway"), 0);
	*strrchr(bindir, '/') = '\0';
	char bin_env[640];
	snprintf(bin_env, sizeof(bin_env), "WARBLE_BIN=%s", bindir);
	char *const argv[] = { "env", "-i", "PATH=/usr/bin:/bin", bin_env, CT_LAUNCHER, "--env",
		NULL };
	cr_assert_eq(ct_run(argv, &out, NULL, 20000), 0, "%s --env failed", CT_LAUNCHER);
	for (char *l = strtok_r(out, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
		char name[64], val[128];
		if (sscanf(l, "export %63[A-Z_]=%127s", name, val) == 2 &&
		    strcmp(name, "WARBLE_BIN") != 0) {
			cr_assert(w.nexports < CT_MAX_ITEMS);
			ct_var *v = &w.exports[w.nexports++];
			snprintf(v->name, sizeof(v->name), "%s", name);
			snprintf(v->dflt, sizeof(v->dflt), "%s", val);
		}
	}
	free(out);
	cr_assert_gt(w.nexports, 0, "%s --env printed no WARBLE_* variable", CT_LAUNCHER);
}

/*
 * ct_daemons_load runs every daemon (one per services/NAME/main.c, but
 * for services/warble, the one-process build of them all) with
 * --print-defaults: "# --flag: help" above each "WARBLE_X=default" line.
 */
static void
ct_daemons_load(void)
{
	glob_t g;

	cr_assert_eq(glob("services/*/main.c", 0, NULL, &g), 0, "no services/*/main.c");
	for (size_t i = 0; i < g.gl_pathc; i++) {
		if (strcmp(g.gl_pathv[i], "services/warble/main.c") == 0) {
			continue;
		}
		ct_daemon *d = &w.daemons[w.ndaemons++];
		char       bin[512], prog[64], *out = NULL, *save = NULL;
		char       flag[64] = "";

		sscanf(g.gl_pathv[i], "services/%31[^/]", d->name);
		snprintf(prog, sizeof(prog), "warble-%s", d->name);
		cr_assert_eq(wbt_bin_path(bin, sizeof(bin), prog), 0, "no %s built", prog);
		char *const argv[] = { bin, "--print-defaults", NULL };
		cr_assert_eq(
		    ct_run(argv, &out, NULL, 10000), 0, "%s --print-defaults failed", prog);
		for (char *line = strtok_r(out, "\n", &save); line != NULL;
		     line = strtok_r(NULL, "\n", &save)) {
			ct_var v = { 0 };
			char  *eq = strchr(line, '=');

			if (sscanf(line, "# --%63[^:]:", flag) == 1 || eq == NULL ||
			    strncmp(line, "WARBLE_", 7) != 0) {
				continue;
			}
			snprintf(v.name, sizeof(v.name), "%.*s", (int)(eq - line), line);
			snprintf(v.flag, sizeof(v.flag), "%s", flag);
			snprintf(v.dflt, sizeof(v.dflt), "%s", eq + 1);
			cr_assert(d->nopts < CT_MAX_ITEMS);
			d->opts[d->nopts++] = v;
		}
		cr_assert_gt(d->nopts, 0, "%s --print-defaults printed no variable", prog);
		free(out);
	}
	globfree(&g);
}

static void
ct_init(void)
{
	memset(&w, 0, sizeof(w));
	ct_root();
	ct_launcher_load();
	ct_daemons_load();
}

/* ct_daemon_find returns the daemon of a service, or NULL. */
static const ct_daemon *
ct_daemon_find(const char *name)
{
	for (int i = 0; i < w.ndaemons; i++) {
		if (strcmp(w.daemons[i].name, name) == 0) {
			return &w.daemons[i];
		}
	}
	return NULL;
}

/* ct_daemon_opt returns the daemon's option for a variable, or NULL if it does not read it. */
static const ct_var *
ct_daemon_opt(const ct_daemon *d, const char *var)
{
	for (int i = 0; d != NULL && i < d->nopts; i++) {
		if (strcmp(d->opts[i].name, var) == 0) {
			return &d->opts[i];
		}
	}
	return NULL;
}

/*
 * ct_owner writes the service that listens on a URL variable: the one it
 * names (WARBLE_CONTENT_PUB_URL -> content), else the only daemon that
 * reads it (WARBLE_HTTP_URL -> gateway), else the name (which then names
 * no service, and the test says so).
 */
static void
ct_owner(const char *var, char *svc, size_t n)
{
	const ct_daemon *only = NULL;
	int              readers = 0;

	ct_owner_by_name(var, svc, n);
	if (ct_daemon_find(svc) != NULL) {
		return;
	}
	for (int i = 0; i < w.ndaemons; i++) {
		if (ct_daemon_opt(&w.daemons[i], var) != NULL) {
			only = &w.daemons[i];
			readers++;
		}
	}
	if (readers == 1) {
		snprintf(svc, n, "%s", only->name);
	}
}

/* ct_export returns the launcher's export of a variable, or NULL. */
static const ct_var *
ct_export(const char *var)
{
	for (int i = 0; i < w.nexports; i++) {
		if (strcmp(w.exports[i].name, var) == 0) {
			return &w.exports[i];
		}
	}
	return NULL;
}

/* ct_launcher_port returns the port of the launcher's default for a URL variable (fails the test if none). */
static int
ct_launcher_port(const char *var)
{
	const ct_var *e = ct_export(var);
	char          host[64];
	int           port;

	cr_assert_not_null(e, "%s does not export %s", CT_LAUNCHER, var);
	port = ct_url_port(e->dflt, host, sizeof(host));
	cr_assert_gt(port, 0, "%s: %s=%s has no port", CT_LAUNCHER, var, e->dflt);
	cr_assert_str_eq(
	    host, "127.0.0.1", "%s: %s=%s is not on loopback", CT_LAUNCHER, var, e->dflt);
	return port;
}

/* ct_sources_read tells whether any daemon reads var (it is in its --print-defaults). */
static bool
ct_sources_read(const char *var)
{
	for (int i = 0; i < w.ndaemons; i++) {
		if (ct_daemon_opt(&w.daemons[i], var) != NULL) {
			return true;
		}
	}
	return false;
}

/* ---- tests ------------------------------------------------------------ */

TestSuite(compose, .init = ct_init, .timeout = 120);

Test(compose, config_is_valid)
{
	char *argv[] = { "docker-compose", "-f", CT_COMPOSE, "config", "--quiet", NULL };
	char *out, *err;
	int   rc;

	if (!ct_which("docker-compose")) {
		cr_skip_test("docker-compose is not installed (tests/deps.sh installs it)");
	}
	rc = ct_run(argv, &out, &err, 60000);
	cr_expect_eq(rc, 0, "docker-compose -f %s config: exit %d: %s", CT_COMPOSE, rc, err);
	free(out);
	free(err);
}

Test(compose, config_rejects_a_broken_file)
{
	/* the validation above is only worth something if it can fail: a
	 * build context that does not exist is an error */
	char  path[256], *out, *err;
	char *argv[] = { "docker-compose", "-f", path, "config", "--quiet", NULL };
	FILE *f;
	int   rc;

	if (!ct_which("docker-compose")) {
		cr_skip_test("docker-compose is not installed (tests/deps.sh installs it)");
	}
	cr_assert_eq(wbt_path(path, sizeof(path), "broken-compose.yml"), 0);
	cr_assert_not_null(f = fopen(path, "w"));
	fprintf(f, "version: \"3.8\"\nservices:\n  user:\n    image: warble\n"
	           "    build:\n      context: no-such-folder\n");
	fclose(f);
	rc = ct_run(argv, &out, &err, 60000);
	cr_expect_neq(rc, 0, "docker-compose accepted a missing build context");
	free(out);
	free(err);
	wbt_cleanup();
}

Test(compose, same_services_everywhere)
{
	ct_compose_load();
	cr_expect_eq(w.services->nkids, w.nlservices, "compose has %d services, %s has %d",
	    w.services->nkids, CT_LAUNCHER, w.nlservices);
	cr_expect_eq(w.ndaemons, w.nlservices, "services/*/main.c: %d daemons, %s starts %d",
	    w.ndaemons, CT_LAUNCHER, w.nlservices);
	for (int i = 0; i < w.nlservices; i++) {
		cr_expect_not_null(
		    ct_get(w.services, w.lservices[i]), "compose lacks service %s", w.lservices[i]);
		cr_expect_not_null(
		    ct_daemon_find(w.lservices[i]), "no services/%s/main.c", w.lservices[i]);
	}
}

Test(compose, environment_matches_the_launcher)
{
	ct_compose_load();
	for (int i = 0; i < w.services->nkids; i++) {
		const ct_node   *s = w.services->kids[i];
		const ct_node   *env = ct_get(s, "environment");
		const ct_daemon *d = ct_daemon_find(s->key);

		cr_assert_not_null(env, "compose service %s has no environment", s->key);
		/* the launcher gives every daemon all its exports: so does compose */
		for (int j = 0; j < w.nexports; j++) {
			cr_expect_not_null(ct_get(env, w.exports[j].name),
			    "compose %s lacks %s (%s exports it)", s->key, w.exports[j].name,
			    CT_LAUNCHER);
		}
		/* anything more must be read by that daemon */
		for (int j = 0; j < env->nkids; j++) {
			const char *var = env->kids[j]->key;
			cr_expect(ct_export(var) != NULL || ct_daemon_opt(d, var) != NULL,
			    "compose sets %s for %s, which warble-%s does not read", var, s->key,
			    s->key);
		}
		/* the data folder is where the volumes go */
		cr_expect_str_eq(
		    CT_S(ct_val(env, "WARBLE_DATA")), CT_DATA, "compose %s: WARBLE_DATA", s->key);
	}
}

Test(compose, addresses_and_ports_agree)
{
	ct_compose_load();
	for (int j = 0; j < w.nexports; j++) {
		const char      *var = w.exports[j].name;
		char             owner[32], host[64];
		const ct_daemon *od;
		const ct_var    *opt;
		int              port;

		if (!ct_is_url_var(var)) {
			continue;
		}
		port = ct_launcher_port(var);
		ct_owner(var, owner, sizeof(owner));
		cr_assert_not_null(od = ct_daemon_find(owner), "%s names no service", var);
		/* the owner reads it, with the launcher's default */
		cr_assert_not_null(
		    opt = ct_daemon_opt(od, var), "warble-%s does not read %s", owner, var);
		cr_expect_str_eq(opt->dflt, w.exports[j].dflt, "%s default: warble-%s %s, %s %s",
		    var, owner, opt->dflt, CT_LAUNCHER, w.exports[j].dflt);
		/* every container dials tcp://OWNER:PORT */
		for (int i = 0; i < w.services->nkids; i++) {
			const char *v = ct_val(ct_get(w.services->kids[i], "environment"), var);
			cr_assert_not_null(v, "compose %s lacks %s", w.services->kids[i]->key, var);
			cr_expect_eq(ct_url_port(v, host, sizeof(host)), port,
			    "compose %s: %s=%s, %s has port %d", w.services->kids[i]->key, var, v,
			    CT_LAUNCHER, port);
			cr_expect_str_eq(host, owner, "compose %s: %s=%s should name the host %s",
			    w.services->kids[i]->key, var, v, owner);
			cr_expect(strncmp(v, w.exports[j].dflt, strcspn(v, ":") + 3) == 0,
			    "compose: %s=%s, %s uses another scheme (%s)", var, v, CT_LAUNCHER,
			    w.exports[j].dflt);
		}
	}
}

Test(compose, every_daemon_address_is_configured)
{
	/* a URL a daemon reads but neither file sets would silently use 127.0.0.1 in a container */
	ct_compose_load();
	for (int i = 0; i < w.ndaemons; i++) {
		for (int j = 0; j < w.daemons[i].nopts; j++) {
			const char *var = w.daemons[i].opts[j].name;
			if (!ct_is_url_var(var) || ct_is_admin_var(var)) {
				continue; /* the admin port: admin_ports_are_each_daemons_own */
			}
			cr_expect_not_null(ct_export(var), "warble-%s reads %s; %s does not set it",
			    w.daemons[i].name, var, CT_LAUNCHER);
			const ct_node *s = ct_get(w.services, w.daemons[i].name);
			cr_expect_not_null(ct_val(ct_get(s, "environment"), var),
			    "warble-%s reads %s; compose does not set it", w.daemons[i].name, var);
		}
	}
}

Test(compose, each_daemon_listens_on_its_own_addresses)
{
	ct_compose_load();
	for (int i = 0; i < w.services->nkids; i++) {
		const ct_node   *s = w.services->kids[i];
		const ct_node   *cmd = ct_get(s, "command");
		const ct_daemon *d = ct_daemon_find(s->key);
		char             bin[64], owner[32];
		int              overridden = 0;

		cr_assert_not_null(d, "no daemon for compose service %s", s->key);
		cr_assert(cmd != NULL && cmd->nkids >= 1, "compose %s has no command list", s->key);
		snprintf(bin, sizeof(bin), "warble-%s", s->key);
		cr_expect_str_eq(CT_S(cmd->kids[0]->val), bin, "compose %s runs %s", s->key,
		    CT_S(cmd->kids[0]->val));
		cr_assert_eq(
		    cmd->nkids % 2, 1, "compose %s: flags come as --flag value pairs", s->key);
		/* every flag is one of the daemon's, and a listen URL of its own */
		for (int k = 1; k + 1 < cmd->nkids; k += 2) {
			const char *flag = CT_S(cmd->kids[k]->val),
			           *val = CT_S(cmd->kids[k + 1]->val);
			const ct_var *opt = NULL;
			char          host[64];
			for (int j = 0; j < d->nopts; j++) {
				if (strncmp(flag, "--", 2) == 0 &&
				    strcmp(d->opts[j].flag, flag + 2) == 0) {
					opt = &d->opts[j];
				}
			}
			cr_assert_not_null(
			    opt, "compose %s: warble-%s has no flag %s", s->key, s->key, flag);
			if (ct_is_admin_var(opt->name)) {
				/* its own admin port: its own default's port, on every address */
				cr_expect_eq(ct_url_port(val, host, sizeof(host)),
				    ct_url_port(opt->dflt, NULL, 0),
				    "compose %s: %s %s: warble-%s's default is %s", s->key, flag,
				    val, s->key, opt->dflt);
				cr_expect_str_eq(
				    host, "0.0.0.0", "compose %s: %s %s", s->key, flag, val);
				continue;
			}
			ct_owner(opt->name, owner, sizeof(owner));
			if (!ct_is_url_var(opt->name) || strcmp(owner, s->key) != 0) {
				cr_expect_fail("compose %s: %s (%s) is not a listen URL of its own"
				               " (other settings belong in the environment)",
				    s->key, flag, opt->name);
				continue;
			}
			cr_expect_eq(ct_url_port(val, host, sizeof(host)),
			    ct_launcher_port(opt->name), "compose %s: %s %s: port differs from %s",
			    s->key, flag, val, CT_LAUNCHER);
			cr_expect_str_eq(host, "0.0.0.0", "compose %s: %s %s", s->key, flag, val);
			overridden++;
		}
		/* and every listen URL it owns is overridden, its admin port's too */
		for (int j = 0; j < d->nopts; j++) {
			ct_owner(d->opts[j].name, owner, sizeof(owner));
			if (!ct_is_admin_var(d->opts[j].name) &&
			    (!ct_is_url_var(d->opts[j].name) || strcmp(owner, s->key) != 0)) {
				continue;
			}
			bool found = false;
			for (int k = 1; k < cmd->nkids; k += 2) {
				const char *f = CT_S(cmd->kids[k]->val);
				found |=
				    strncmp(f, "--", 2) == 0 && strcmp(f + 2, d->opts[j].flag) == 0;
			}
			cr_expect(found, "compose %s: listens on %s but its command lacks --%s",
			    s->key, d->opts[j].name, d->opts[j].flag);
		}
		cr_expect_gt(overridden, 0, "compose %s listens on nothing", s->key);
	}
}

Test(compose, admin_ports_are_each_daemons_own)
{
	int ports[CT_MAX_ITEMS];

	ct_compose_load();
	/* every daemon has one, a port of its own on loopback by default */
	for (int i = 0; i < w.ndaemons; i++) {
		const ct_var *opt = ct_daemon_opt(&w.daemons[i], CT_ADMIN_VAR);
		char          host[64];

		cr_assert_not_null(opt, "warble-%s has no %s", w.daemons[i].name, CT_ADMIN_VAR);
		ports[i] = ct_url_port(opt->dflt, host, sizeof(host));
		cr_expect(strncmp(opt->dflt, "http://", 7) == 0 && ports[i] > 0, "warble-%s: %s=%s",
		    w.daemons[i].name, CT_ADMIN_VAR, opt->dflt);
		cr_expect_str_eq(host, "127.0.0.1", "warble-%s: %s=%s is not on loopback",
		    w.daemons[i].name, CT_ADMIN_VAR, opt->dflt);
		for (int k = 0; k < i; k++) {
			cr_expect_neq(ports[k], ports[i],
			    "warble-%s and warble-%s: both admin port %d", w.daemons[k].name,
			    w.daemons[i].name, ports[i]);
		}
	}
	/* one value for every daemon would put five on one port: neither file sets it */
	cr_expect_null(ct_export(CT_ADMIN_VAR), "%s exports %s", CT_LAUNCHER, CT_ADMIN_VAR);
	for (int i = 0; i < w.services->nkids; i++) {
		cr_expect_null(ct_val(ct_get(w.services->kids[i], "environment"), CT_ADMIN_VAR),
		    "compose %s sets %s in its environment", w.services->kids[i]->key,
		    CT_ADMIN_VAR);
	}
}

Test(compose, only_the_gateway_is_published)
{
	ct_compose_load();
	for (int i = 0; i < w.services->nkids; i++) {
		const ct_node *s = w.services->kids[i];
		const ct_node *ports = ct_get(s, "ports");

		if (strcmp(s->key, "gateway") != 0) {
			cr_expect_null(ports, "compose publishes ports of %s", s->key);
			continue;
		}
		cr_assert_not_null(ports, "the gateway publishes nothing");
		bool api = false, http = false;
		for (int k = 0; k < ports->nkids; k++) {
			const char *t = ct_val(ports->kids[k], "target"),
			           *p = ct_val(ports->kids[k], "published");
			char ip[64], pub[16], tgt[16];
			/* with a host address, config prints the short form IP:PUBLISHED:TARGET/tcp */
			if (ports->kids[k]->val != NULL) {
				cr_assert_eq(sscanf(ports->kids[k]->val,
				                 "%63[^:]:%15[0-9]:%15[0-9]", ip, pub, tgt),
				    3, "compose gateway: odd port %s", ports->kids[k]->val);
				cr_expect_str_eq(
				    ip, "127.0.0.1", "compose gateway: published on %s", ip);
				t = tgt;
				p = pub;
			}
			cr_assert(t != NULL && p != NULL, "compose gateway: odd port entry");
			int target = atoi(t);
			cr_expect_str_eq(t, p, "compose gateway: port %s published as %s", t, p);
			api |= target == ct_launcher_port("WARBLE_GATEWAY_URL");
			http |= target == CT_HTTP_PORT;
			cr_expect(target == ct_launcher_port("WARBLE_GATEWAY_URL") ||
			              target == CT_HTTP_PORT,
			    "compose gateway publishes %d, neither its API nor HTTP port", target);
		}
		cr_expect(api, "compose does not publish the gateway API");
		cr_expect(http, "compose does not publish the gateway HTTP port %d", CT_HTTP_PORT);
	}
}

Test(compose, healthchecks_ping_each_daemon)
{
	ct_compose_load();
	for (int i = 0; i < w.services->nkids; i++) {
		const ct_node *s = w.services->kids[i];
		const ct_node *t = ct_get(ct_get(s, "healthcheck"), "test");
		char           var[64], host[64];

		cr_assert(t != NULL && t->nkids == 3,
		    "compose %s: healthcheck test is not [CMD, warble-probe, URL]", s->key);
		cr_expect_str_eq(CT_S(t->kids[0]->val), "CMD");
		cr_expect_str_eq(CT_S(t->kids[1]->val), "warble-probe");
		snprintf(var, sizeof(var), "WARBLE_%s_URL", s->key);
		for (char *c = var; *c; c++) {
			*c = (char)toupper((unsigned char)*c);
		}
		cr_expect_eq(ct_url_port(CT_S(t->kids[2]->val), host, sizeof(host)),
		    ct_launcher_port(var),
		    "compose %s: healthcheck probes %s, the service is on %s's port", s->key,
		    CT_S(t->kids[2]->val), var);
		cr_expect_str_eq(host, "127.0.0.1");
	}
}

Test(compose, one_volume_per_store_and_restart)
{
	ct_compose_load();
	const ct_node *vols = ct_get(w.compose, "volumes");
	char           seen[CT_MAX_ITEMS][64];
	int            nseen = 0;

	for (int i = 0; i < w.services->nkids; i++) {
		const ct_node *s = w.services->kids[i];
		const ct_node *vs = ct_get(s, "volumes");

		cr_expect_str_eq(
		    CT_S(ct_val(s, "restart")), "unless-stopped", "compose %s: restart", s->key);
		if (strcmp(s->key, "gateway") == 0) {
			cr_expect_null(vs, "the gateway has no store, so no volume");
			continue;
		}
		cr_assert(vs != NULL && vs->nkids == 2,
		    "compose %s: wants its store's volume and the backup volume", s->key);
		char bname[64], bpath[128];
		cr_assert_eq(sscanf(CT_S(vs->kids[1]->val), "%63[^:]:%127[^:]", bname, bpath), 2,
		    "compose %s: odd volume %s", s->key, CT_S(vs->kids[1]->val));
		cr_expect(strcmp(bname, CT_BACKUP_VOL) == 0 && strcmp(bpath, CT_BACKUP) == 0,
		    "compose %s: the volume %s on %s, where admin backups go", s->key,
		    CT_BACKUP_VOL, CT_BACKUP);
		cr_expect_not_null(ct_get(vols, CT_BACKUP_VOL), "compose: no named volume backup");
		char name[64], path[128];
		cr_assert_eq(sscanf(CT_S(vs->kids[0]->val), "%63[^:]:%127[^:]", name, path), 2,
		    "compose %s: odd volume %s", s->key, CT_S(vs->kids[0]->val));
		cr_expect_str_eq(path, CT_DATA, "compose %s: volume on %s", s->key, path);
		cr_expect_not_null(
		    ct_get(vols, name), "compose %s: %s is not a named volume", s->key, name);
		for (int k = 0; k < nseen; k++) {
			cr_expect_str_neq(seen[k], name, "volume %s is shared by two stores", name);
		}
		snprintf(seen[nseen++], sizeof(seen[0]), "%s", name);
	}
	cr_expect_eq(nseen, w.nlservices - 1, "one volume per store");
}

Test(compose, no_dead_variables)
{
	/* every WARBLE_* a deploy file mentions is read by some daemon */
	const char *files[] = { CT_COMPOSE, CT_SHARDED, CT_LAUNCHER, "deploy/Dockerfile" };
	int         checked = 0;

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char *text = ct_file_read(files[f]);
		cr_assert_not_null(text, "cannot read %s", files[f]);
		for (char *p = strstr(text, "WARBLE_"); p != NULL; p = strstr(p + 1, "WARBLE_")) {
			char var[64];
			/* a name, not "WARBLE_*" nor the tail of a longer word */
			if (sscanf(p, "%63[A-Z_]", var) != 1 || strlen(var) <= 7 ||
			    var[strlen(var) - 1] == '_' ||
			    (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))) {
				continue;
			}
			/* the launcher's own knobs (where the binaries are) are not daemon settings */
			/* nor are compose's published addresses (WARBLE_PUBLISH_*) and
			 * the host folder of its certificates */
			if (strcmp(var, "WARBLE_BIN") == 0 ||
			    strncmp(var, "WARBLE_PUBLISH_", 15) == 0 ||
			    strcmp(var, "WARBLE_TLS_HOST_DIR") == 0) {
				continue;
			}
			cr_expect(ct_sources_read(var), "%s mentions %s, which no daemon reads",
			    files[f], var);
			checked++;
		}
		free(text);
	}
	cr_expect_gt(checked, 10, "found only %d WARBLE_* mentions", checked);
}

/* ---- the sharded file --------------------------------------------------- */

/* The shard lists of the sharded file, each with the singular address a shard listens on. */
static const struct {
	const char *kind, *list, *one;
} ct_lists[] = {
	{ "relation", "WARBLE_RELATION_URLS", "WARBLE_RELATION_URL" },
	{ "relation", "WARBLE_RELATION_PUB_URLS", "WARBLE_RELATION_PUB_URL" },
	{ "content", "WARBLE_CONTENT_URLS", "WARBLE_CONTENT_URL" },
	{ "content", "WARBLE_CONTENT_PUB_URLS", "WARBLE_CONTENT_PUB_URL" },
	{ "inbox", "WARBLE_INBOX_URLS", "WARBLE_INBOX_URL" },
};

/* ct_kind writes the daemon a service runs (relation1 -> relation); returns its number, or -1. */
static int
ct_kind(const char *svc, char *kind, size_t n)
{
	size_t len = strlen(svc), k = len;

	while (k > 0 && isdigit((unsigned char)svc[k - 1])) {
		k--;
	}
	snprintf(kind, n, "%.*s", (int)k, svc);
	return k < len ? atoi(svc + k) : -1;
}

/* ct_cmd_after returns the item after the one equal to word in a command list, or NULL. */
static const char *
ct_cmd_after(const ct_node *cmd, const char *word)
{
	for (int i = 0; cmd != NULL && i + 1 < cmd->nkids; i++) {
		if (cmd->kids[i]->val != NULL && strcmp(cmd->kids[i]->val, word) == 0) {
			return cmd->kids[i + 1]->val;
		}
	}
	return NULL;
}

/* ct_sharded_load loads deploy/docker-compose.sharded.yml and returns its services. */
static const ct_node *
ct_sharded_load(void)
{
	const ct_node *svcs = ct_get(ct_config(CT_SHARDED), "services");

	cr_assert(svcs != NULL && svcs->nkids > 0, "no services in %s", CT_SHARDED);
	return svcs;
}

Test(sharded, config_needs_the_certificates_folder, .init = ct_init)
{
	char *with[] = { "env", "WARBLE_TLS_HOST_DIR=" CT_CERTS, "docker-compose", "-f", CT_SHARDED,
		"config", "--quiet", NULL };
	char *without[] = { "env", "-u", "WARBLE_TLS_HOST_DIR", "docker-compose", "-f", CT_SHARDED,
		"config", "--quiet", NULL };
	char *out, *err;
	int   rc;

	if (!ct_which("docker-compose")) {
		cr_skip_test("docker-compose is not installed (tests/deps.sh installs it)");
	}
	rc = ct_run(with, &out, &err, 60000);
	cr_expect_eq(rc, 0, "docker-compose -f %s config: exit %d: %s", CT_SHARDED, rc, err);
	free(out);
	free(err);
	rc = ct_run(without, &out, &err, 60000);
	cr_expect_neq(rc, 0, "%s is accepted without WARBLE_TLS_HOST_DIR", CT_SHARDED);
	cr_expect_not_null(strstr(err, "WARBLE_TLS_HOST_DIR"),
	    "the refusal does not name WARBLE_TLS_HOST_DIR: %s", err);
	free(out);
	free(err);
}

Test(sharded, shards_match_their_lists, .init = ct_init)
{
	const ct_node *svcs = ct_sharded_load();
	const ct_node *env0 = ct_get(svcs->kids[0], "environment");

	for (size_t l = 0; l < sizeof(ct_lists) / sizeof(ct_lists[0]); l++) {
		const char      *var = ct_lists[l].list, *list = ct_val(env0, var);
		const ct_daemon *d = ct_daemon_find(ct_lists[l].kind);
		const ct_var    *one = ct_daemon_opt(d, ct_lists[l].one);
		int              port = ct_launcher_port(ct_lists[l].one), n = 0, found = 0;
		char             copy[1024], want[128], flag[80], listen[64];

		cr_assert_not_null(list, "%s: %s lacks %s", CT_SHARDED, svcs->kids[0]->key, var);
		cr_assert_not_null(
		    one, "warble-%s does not read %s", ct_lists[l].kind, ct_lists[l].one);
		/* every container is given the same list */
		for (int i = 0; i < svcs->nkids; i++) {
			cr_expect_str_eq(CT_S(ct_val(ct_get(svcs->kids[i], "environment"), var)),
			    list, "%s: %s has another %s", CT_SHARDED, svcs->kids[i]->key, var);
		}
		/* entry i is tcp://KINDi:PORT, on the daemon's own port */
		snprintf(copy, sizeof(copy), "%s", list);
		for (char *save, *u = strtok_r(copy, ",", &save); u != NULL;
		     u = strtok_r(NULL, ",", &save), n++) {
			snprintf(want, sizeof(want), "tcp://%s%d:%d", ct_lists[l].kind, n, port);
			cr_expect_str_eq(
			    u, want, "%s: %s entry %d is %s, not %s", CT_SHARDED, var, n, u, want);
		}
		cr_expect_gt(n, 1, "%s: %s names %d shard(s)", CT_SHARDED, var, n);
		/* the services KIND0 ... KIND(n-1) are shards i/n, and listen on the singular address */
		snprintf(flag, sizeof(flag), "--%s", one->flag);
		snprintf(listen, sizeof(listen), "tcp://0.0.0.0:%d", port);
		for (int i = 0; i < svcs->nkids; i++) {
			const ct_node *s = svcs->kids[i];
			char           kind[32], shard[32];
			int            idx = ct_kind(s->key, kind, sizeof(kind));

			if (strcmp(kind, ct_lists[l].kind) != 0) {
				continue;
			}
			found++;
			cr_expect(idx >= 0 && idx < n, "%s: %s is no shard of %s", CT_SHARDED,
			    s->key, var);
			snprintf(shard, sizeof(shard), "%d/%d", idx, n);
			const char *got = CT_S(ct_val(ct_get(s, "environment"), "WARBLE_SHARD"));
			cr_expect_str_eq(got, shard, "%s: %s's WARBLE_SHARD is %s, not %s",
			    CT_SHARDED, s->key, got, shard);
			cr_expect_str_eq(CT_S(ct_cmd_after(ct_get(s, "command"), flag)), listen,
			    "%s: %s does not listen on %s %s", CT_SHARDED, s->key, flag, listen);
		}
		cr_expect_eq(found, n, "%s: %d %s services, %s names %d", CT_SHARDED, found,
		    ct_lists[l].kind, var, n);
	}
	/* user and the gateways are not sharded */
	for (int i = 0; i < svcs->nkids; i++) {
		char kind[32];
		ct_kind(svcs->kids[i]->key, kind, sizeof(kind));
		if (strcmp(kind, "user") == 0 || strcmp(kind, "gateway") == 0) {
			cr_expect_null(ct_val(ct_get(svcs->kids[i], "environment"), "WARBLE_SHARD"),
			    "%s: %s has a WARBLE_SHARD", CT_SHARDED, svcs->kids[i]->key);
		}
	}
}

Test(sharded, each_container_holds_its_own_pair, .init = ct_init)
{
	const ct_node *svcs = ct_sharded_load();

	for (int i = 0; i < svcs->nkids; i++) {
		const ct_node *s = svcs->kids[i], *vs = ct_get(s, "volumes");
		const ct_node *test = ct_get(ct_get(s, "healthcheck"), "test");
		char           kind[32], pem[48], key[48];
		int            ntls = 0;

		ct_kind(s->key, kind, sizeof(kind));
		snprintf(pem, sizeof(pem), "%s.pem", kind);
		snprintf(key, sizeof(key), "%s.key", kind);
		cr_expect_str_eq(CT_S(ct_val(ct_get(s, "environment"), "WARBLE_TLS_DIR")),
		    CT_TLS_DIR, "%s: %s's WARBLE_TLS_DIR is not %s", CT_SHARDED, s->key,
		    CT_TLS_DIR);
		/* ca.pem and its own pair, read-only, from the host folder; nothing else */
		for (int k = 0; vs != NULL && k < vs->nkids; k++) {
			char src[256], dst[256], mode[16], want[300];
			if (sscanf(CT_S(vs->kids[k]->val), "%255[^:]:%255[^:]:%15s", src, dst,
			        mode) != 3 ||
			    strncmp(dst, CT_TLS_DIR "/", strlen(CT_TLS_DIR) + 1) != 0) {
				continue;
			}
			const char *base = dst + strlen(CT_TLS_DIR) + 1;
			ntls++;
			cr_expect(strcmp(base, "ca.pem") == 0 || strcmp(base, pem) == 0 ||
			              strcmp(base, key) == 0,
			    "%s: %s mounts %s, not its own", CT_SHARDED, s->key, dst);
			snprintf(want, sizeof(want), "%s/%s", CT_CERTS, base);
			cr_expect_str_eq(
			    src, want, "%s: %s mounts %s from %s", CT_SHARDED, s->key, dst, src);
			cr_expect_str_eq(
			    mode, "ro", "%s: %s mounts %s %s", CT_SHARDED, s->key, dst, mode);
		}
		cr_expect_eq(ntls, 3, "%s: %s mounts %d certificate files, not ca.pem, %s and %s",
		    CT_SHARDED, s->key, ntls, pem, key);
		if (strcmp(kind, "admin") == 0) {
			continue; /* a one-off container: no healthcheck */
		}
		/* the healthcheck presents the container's own identity (the gateway's public port: none) */
		cr_assert(test != NULL && test->nkids >= 3, "%s: %s has no healthcheck", CT_SHARDED,
		    s->key);
		if (strcmp(kind, "gateway") == 0) {
			cr_expect_not_null(
			    ct_cmd_after(test, "warble-probe"), "%s: %s", CT_SHARDED, s->key);
			cr_expect_str_eq(CT_S(ct_cmd_after(test, "warble-probe")), "--plain",
			    "%s: %s probes its public port without --plain", CT_SHARDED, s->key);
		} else {
			cr_expect_str_eq(CT_S(ct_cmd_after(test, "--tls-name")), kind,
			    "%s: %s's probe does not present --tls-name %s", CT_SHARDED, s->key,
			    kind);
		}
	}
}

Test(sharded, one_volume_per_shard_and_only_gateways_published, .init = ct_init)
{
	const ct_node *svcs = ct_sharded_load();
	char           seen[CT_MAX_ITEMS][64], ports[CT_MAX_ITEMS][16];
	int            nseen = 0, nports = 0, ngateways = 0;

	for (int i = 0; i < svcs->nkids; i++) {
		const ct_node *s = svcs->kids[i], *vs = ct_get(s, "volumes"),
		              *ps = ct_get(s, "ports");
		char kind[32], name[64], path[128];

		ct_kind(s->key, kind, sizeof(kind));
		if (strcmp(kind, "gateway") == 0) {
			ngateways++;
			cr_assert_not_null(ps, "%s: %s publishes nothing", CT_SHARDED, s->key);
			for (int k = 0; k < ps->nkids; k++) {
				char ip[64], pub[16], tgt[16];
				cr_assert_eq(sscanf(CT_S(ps->kids[k]->val),
				                 "%63[^:]:%15[0-9]:%15[0-9]", ip, pub, tgt),
				    3, "%s: %s: odd port %s", CT_SHARDED, s->key,
				    CT_S(ps->kids[k]->val));
				cr_expect_str_eq(ip, "127.0.0.1", "%s: %s published on %s",
				    CT_SHARDED, s->key, ip);
				for (int j = 0; j < nports; j++) {
					cr_expect_str_neq(ports[j], pub,
					    "%s: host port %s published twice", CT_SHARDED, pub);
				}
				cr_assert(nports < CT_MAX_ITEMS);
				snprintf(ports[nports++], sizeof(ports[0]), "%s", pub);
			}
			continue;
		}
		cr_expect_null(ps, "%s publishes ports of %s", CT_SHARDED, s->key);
		if (strcmp(kind, "admin") == 0) {
			continue;
		}
		/* a store: its own named volume on the data folder, and the backup volume */
		cr_assert(
		    vs != NULL && vs->nkids >= 2, "%s: %s has no volumes", CT_SHARDED, s->key);
		cr_assert_eq(sscanf(CT_S(vs->kids[0]->val), "%63[^:]:%127[^:]", name, path), 2,
		    "%s: %s: odd volume %s", CT_SHARDED, s->key, CT_S(vs->kids[0]->val));
		cr_expect_str_eq(path, CT_DATA, "%s: %s's store on %s", CT_SHARDED, s->key, path);
		cr_expect_str_eq(
		    name, s->key, "%s: %s's store is the volume %s", CT_SHARDED, s->key, name);
		for (int k = 0; k < nseen; k++) {
			cr_expect_str_neq(
			    seen[k], name, "%s: volume %s is two stores'", CT_SHARDED, name);
		}
		cr_assert(nseen < CT_MAX_ITEMS);
		snprintf(seen[nseen++], sizeof(seen[0]), "%s", name);
		cr_assert_eq(sscanf(CT_S(vs->kids[1]->val), "%63[^:]:%127[^:]", name, path), 2);
		cr_expect(strcmp(name, CT_BACKUP_VOL) == 0 && strcmp(path, CT_BACKUP) == 0,
		    "%s: %s lacks the volume %s on %s", CT_SHARDED, s->key, CT_BACKUP_VOL,
		    CT_BACKUP);
	}
	cr_expect_geq(ngateways, 2, "%s: %d gateway(s)", CT_SHARDED, ngateways);
}

/* ---- the Dockerfile ------------------------------------------------------ */

#define CT_DOCKERFILE "deploy/Dockerfile"
#define CT_RUNTIME    "FROM debian:bookworm-slim"
#define CT_WEB        "/usr/local/share/warble/web"

/* ct_word_in tells whether word appears in text as a whole word (package names, paths; words end at white space or a backslash). */
static bool
ct_word_in(const char *text, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = strstr(text, word); p != NULL; p = strstr(p + 1, word)) {
		bool left = p == text || isspace((unsigned char)p[-1]);
		bool right = p[n] == '\0' || isspace((unsigned char)p[n]) || p[n] == '\\';
		if (left && right) {
			return true;
		}
	}
	return false;
}

Test(dockerfile, builds_every_daemon_and_the_tools, .init = ct_init)
{
	char *text = ct_file_read(CT_DOCKERFILE);
	char  target[64];

	cr_assert_not_null(text, "cannot read %s", CT_DOCKERFILE);
	cr_assert_not_null(
	    strstr(text, CT_RUNTIME), "%s has no %s stage", CT_DOCKERFILE, CT_RUNTIME);
	for (int i = 0; i < w.ndaemons; i++) {
		snprintf(target, sizeof(target), "build/bin/warble-%s", w.daemons[i].name);
		cr_expect(ct_word_in(text, target), "%s does not build %s", CT_DOCKERFILE, target);
	}
	/* warblectl for operators, warble-probe for the compose healthchecks */
	cr_expect(
	    ct_word_in(text, "build/bin/warblectl"), "%s does not build warblectl", CT_DOCKERFILE);
	cr_expect(ct_word_in(text, "build/bin/warble-probe"), "%s does not build warble-probe",
	    CT_DOCKERFILE);
	/* the web page, where the gateway looks for it when installed */
	char *gw = ct_file_read("services/gateway/http/http_static.c");
	cr_assert_not_null(gw);
	cr_expect(ct_word_in(text, "services/gateway/web/") && ct_word_in(text, CT_WEB "/"),
	    "%s does not copy services/gateway/web/ to %s/", CT_DOCKERFILE, CT_WEB);
	cr_expect_not_null(strstr(gw, "\"" CT_WEB "\""),
	    "warble-gateway no longer looks for its web page in %s", CT_WEB);
	free(gw);
	/* the data folder the volumes mount */
	cr_expect_not_null(strstr(text, "WARBLE_DATA=" CT_DATA), "%s: WARBLE_DATA is not %s",
	    CT_DOCKERFILE, CT_DATA);
	free(text);
}

Test(dockerfile, build_packages_are_the_projects, .init = ct_init)
{
	/* the build stage installs -dev packages that tests/deps.sh also lists */
	char *text = ct_file_read(CT_DOCKERFILE), *deps = ct_file_read("tests/deps.sh");
	int   ndev = 0;

	cr_assert(text != NULL && deps != NULL);
	char *runtime = strstr(text, CT_RUNTIME);
	cr_assert_not_null(runtime);
	*runtime = '\0'; /* the build stage only */
	for (char *save, *t = strtok_r(text, " \t\n\\", &save); t != NULL;
	     t = strtok_r(NULL, " \t\n\\", &save)) {
		size_t n = strlen(t);
		if (n > 4 && strcmp(t + n - 4, "-dev") == 0) {
			cr_expect(ct_word_in(deps, t), "%s builds with %s, tests/deps.sh lacks it",
			    CT_DOCKERFILE, t);
			ndev++;
		}
	}
	cr_expect_geq(ndev, 5, "found only %d -dev packages in the build stage", ndev);
	free(text);
	free(deps);
}

Test(dockerfile, runtime_stage_has_every_linked_library, .init = ct_init)
{
	/* every library the binaries link directly (ELF NEEDED) comes from a
	 * package the runtime stage installs (or libc6, in every Debian image) */
	static const char script[] =
	    "set -e\n"
	    "for b in \"$@\"; do\n"
	    "  for so in $(readelf -d \"$b\" | sed -n 's/.*Shared library: \\[\\(.*\\)\\]/\\1/p'); "
	    "do\n"
	    "    p=$(ldd \"$b\" | awk -v s=\"$so\" '$1 == s && $3 ~ /^\\// { print $3 }')\n"
	    "    [ -n \"$p\" ] || continue\n"
	    "    { dpkg -S \"$p\" || dpkg -S \"${p#/usr}\" || dpkg -S \"/usr$p\"; } 2>/dev/null | "
	    "head -n1 |"
	    "      cut -d: -f1 || echo \"?$so\"\n"
	    "  done\n"
	    "done | sort -u\n";
	char  bins[8][512], *out, *err;
	char *argv[16] = { "sh", "-c", (char *)script, "sh" };
	char *text = ct_file_read(CT_DOCKERFILE);
	int   na = 4, rc, npkg = 0;

	if (!ct_which("dpkg") || !ct_which("readelf") || !ct_which("ldd")) {
		cr_skip_test("needs dpkg, readelf and ldd (a Debian machine)");
	}
	cr_assert_not_null(text);
	for (int i = 0; i < w.ndaemons && na < 14; i++) {
		char name[64];
		snprintf(name, sizeof(name), "warble-%s", w.daemons[i].name);
		cr_assert_eq(
		    wbt_bin_path(bins[i], sizeof(bins[i]), name), 0, "%s is not built", name);
		argv[na++] = bins[i];
	}
	cr_assert_eq(wbt_bin_path(bins[6], sizeof(bins[6]), "warblectl"), 0);
	cr_assert_eq(wbt_bin_path(bins[7], sizeof(bins[7]), "warble-probe"), 0);
	argv[na++] = bins[6];
	argv[na++] = bins[7];
	argv[na] = NULL;
	rc = ct_run(argv, &out, &err, 60000);
	cr_assert_eq(rc, 0, "listing the linked packages failed: %s", err);
	const char *runtime = strstr(text, CT_RUNTIME);
	cr_assert_not_null(runtime);
	/* and nothing more: each lib* package the runtime stage names is linked */
	char *linked = strdup(out), *stage = strdup(runtime);
	cr_assert(linked != NULL && stage != NULL);
	for (char *save, *t = strtok_r(stage, " \t\n\\", &save); t != NULL;
	     t = strtok_r(NULL, " \t\n\\", &save)) {
		if (strncmp(t, "lib", 3) == 0 && strchr(t, '/') == NULL) {
			cr_expect(ct_word_in(linked, t),
			    "the runtime stage of %s installs %s, which no binary links",
			    CT_DOCKERFILE, t);
		}
	}
	free(linked);
	free(stage);
	for (char *save, *pkg = strtok_r(out, "\n", &save); pkg != NULL;
	     pkg = strtok_r(NULL, "\n", &save)) {
		/* sanitizer builds link their runtimes; the image is never built that way */
		if (strcmp(pkg, "libc6") == 0 || strncmp(pkg, "libasan", 7) == 0 ||
		    strncmp(pkg, "libubsan", 8) == 0 || strncmp(pkg, "libtsan", 7) == 0) {
			continue;
		}
		cr_expect(ct_word_in(runtime, pkg),
		    "the binaries link %s; the runtime stage of %s does not install it", pkg,
		    CT_DOCKERFILE);
		npkg++;
	}
	cr_expect_geq(npkg, 4, "found only %d linked packages", npkg);
	free(out);
	free(err);
	free(text);
}
