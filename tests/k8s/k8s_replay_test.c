/*
 * k8s_replay_test.c - the sharded overlay of deploy/k8s run as a cluster
 * would run it, without a cluster (suite "k8s_replay").
 *
 * Every pod of the rendered overlay (admin-0, user-0, relation-0..1,
 * content-0..1, inbox-0..3, gateway-0..1) becomes a host of wbc.h (a
 * network namespace on a bridge, an address of 198.18.0.0/15), and its
 * container's command runs there with exactly the environment the
 * kubelet would give it (k8s_env: the image's ENV, the ConfigMaps of
 * envFrom, env with the downward API) and as its securityContext says
 * (uid and fsGroup, a read-only root).  The filesystem is the image's as far as the daemons
 * can tell: each pod process gets a mount namespace and a root of its own
 * (a folder under the test's temp dir, chroot): /usr bound read-only from
 * this machine, the build's binaries on /usr/local/bin (where
 * deploy/Dockerfile puts them) and the web page under /usr/local/share,
 * /etc made for the pod, and each volume at its mountPath: the
 * volumeClaimTemplate and emptyDirs as folders of the pod, the ConfigMaps
 * and the Secret warble-tls (certificates from deploy/make-certs) as the
 * files their items name, owned by the fsGroup.  Names resolve as the
 * cluster DNS would answer them: each pod's /etc/hosts maps
 * relation-1.relation.warble.svc.cluster.local and its shorter forms
 * (relation-1.relation, the forms warble-pod writes) to that pod's host,
 * and the Service gateway to a gateway pod (the daemons resolve with
 * getaddrinfo, shared/rt/rt_dns.c, which reads /etc/hosts).
 *
 * A pod is ready when its own readinessProbe command, run in its
 * namespaces, exits 0 (the admin toolbox, which has none, once it runs).
 * Then the seed flows go through the gateway Service's port, to each
 * gateway pod in turn: register, follow, publish, home timelines on every
 * inbox shard, unfollow.  Mutual TLS is on as rendered (WARBLE_TLS_DIR
 * from the ConfigMap): a client without a certificate, in a pod, is
 * refused by relation-0, which logs the pod's address; the gateway's
 * identity may ping a service but not call an admin operation
 * (FORBIDDEN), which the admin identity may.  Each pod's /metrics,
 * scraped on its pod address and the port its annotations name, labels
 * the process with its service and shard.  A backup of every shard is
 * taken as docs/operations.md takes it (warblectl through warble-pod in
 * the admin toolbox; a service pod, without the admin identity, cannot);
 * a pod beyond the shard count refuses to start; every pod stops within
 * its terminationGracePeriodSeconds.  Needs root (namespaces, mounts); skips
 * otherwise, and without the Kubernetes tools (tests/deps.sh).  Under the
 * sanitizers the daemons also get the test's ASAN_OPTIONS and the like,
 * and see the repository at its own path (tests/tsan.supp).
 */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "k8s_manifest.h"
#include "rt_client.h"
#include "rt_tls.h"
#include "warble.h"
#include "wb_slot.h"
#include "../cluster/wbc.h"
#include "wbt.h"

#define KR_OVERLAY  "deploy/k8s/overlays/sharded"
#define KR_MOUNTS   24
#define KR_PATH     512
#define KR_READY_MS 60000
#define KR_SDK_MS   15000
#define KR_HOME_MS  20000
#define KR_READERS  16 /* readers of one author, at most: until every inbox shard has one */
#define KR_TRIES    3  /* calls of a password operation that timed out */
#define KR_PASSWORD "replay-pass-1"
#define KR_ENV_MAX  96
#define KR_LOG_MS   10000 /* for a line to reach a pod's log */
#define KR_HTTP_MAX (4 << 20)

/* A bind mount of the pod's root: src onto root/dst. */
typedef struct kr_mount {
	char src[KR_PATH], dst[KR_PATH];
	bool ro;
} kr_mount;

/* What the child does before the pod's program runs: all paths made by the test first. */
typedef struct kr_plan {
	char     root[KR_PATH], workdir[KR_PATH];
	kr_mount m[KR_MOUNTS];
	int      nm;
	uid_t    uid;
	gid_t    gid, fsgroup;
} kr_plan;

/* One replayed pod. */
typedef struct kr_pod {
	k8s_pod     pod;
	json_t     *c; /* its container (one a pod) */
	wbc_host   *host;
	kr_plan     plan;
	char        dir[KR_PATH]; /* its folder: root/, volumes */
	char       *envs[KR_ENV_MAX];
	int         nenv;
	wbt_daemon *d;
} kr_pod;

static kr_pod  kr_pods[K8S_PODS_MAX];
static int     kr_n;
static json_t *kr_objs;
static char    kr_certs[KR_PATH], kr_repo[KR_PATH];

/* kr_setup runs in the child: a mount namespace, the pod's root, its user (async-signal-safe). */
static void
kr_setup(void *arg)
{
	const kr_plan *p = arg;
	gid_t          groups[1] = { p->fsgroup };

	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount(p->root, p->root, NULL, MS_BIND | MS_REC, NULL) != 0) {
		_exit(125);
	}
	for (int i = 0; i < p->nm; i++) {
		if (mount(p->m[i].src, p->m[i].dst, NULL, MS_BIND | MS_REC, NULL) != 0 ||
		    (p->m[i].ro && mount(NULL, p->m[i].dst, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY,
		                       NULL) != 0)) {
			_exit(124);
		}
	}
	/* readOnlyRootFilesystem */
	if (mount(NULL, p->root, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0 ||
	    chroot(p->root) != 0 || chdir(p->workdir) != 0 || setgroups(1, groups) != 0 ||
	    setgid(p->gid) != 0 || setuid(p->uid) != 0) {
		_exit(123);
	}
}

/* kr_mkdirs makes path and its parents (mode 0755). */
static void
kr_mkdirs(const char *path)
{
	char p[KR_PATH * 2];

	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + 1; *s != '\0'; s++) {
		if (*s == '/') {
			*s = '\0';
			mkdir(p, 0755);
			*s = '/';
		}
	}
	mkdir(p, 0755);
}

/* kr_write writes text into path with mode, owned by root and group gid. */
static void
kr_write(const char *path, const char *text, mode_t mode, gid_t gid)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s: %s", path, strerror(errno));
	fputs(text, f);
	fclose(f);
	cr_assert_eq(chmod(path, mode), 0);
	cr_assert_eq(chown(path, 0, gid), 0);
}

/*
 * kr_bind adds a mount of src onto the pod's root at dst, its mount point
 * made in the root and, when dst lies inside an earlier mount (the
 * repository under /tmp, a volume there), in that mount's source too,
 * which is what the path shows once that one is mounted.
 */
static void
kr_bind(kr_pod *k, const char *src, const char *dst, bool ro)
{
	kr_mount *m = &k->plan.m[k->plan.nm++];

	cr_assert_leq(k->plan.nm, KR_MOUNTS);
	snprintf(m->src, sizeof(m->src), "%s", src);
	snprintf(m->dst, sizeof(m->dst), "%s%s", k->plan.root, dst);
	m->ro = ro;
	kr_mkdirs(m->dst);
	for (int i = 0; i < k->plan.nm - 1; i++) {
		const kr_mount *o = &k->plan.m[i];
		size_t          n = strlen(o->dst);
		if (strncmp(m->dst, o->dst, n) == 0 && m->dst[n] == '/') {
			char in[KR_PATH * 3];
			snprintf(in, sizeof(in), "%s%s", o->src, m->dst + n);
			kr_mkdirs(in);
		}
	}
}

/* kr_volume makes volume name of pod k (a folder of the pod, filled as its source says) and returns it in dir. */
static void
kr_volume(kr_pod *k, const char *name, char *dir, size_t n)
{
	json_t *v = NULL, *vol, *items, *it;
	size_t  i;
	gid_t   g = k->plan.fsgroup;

	cr_assert_lt((size_t)snprintf(dir, n, "%s/vol-%s", k->dir, name), n);
	kr_mkdirs(dir);
	cr_assert_eq(chown(dir, 0, g), 0);
	cr_assert_eq(chmod(dir, 02770), 0);
	json_array_foreach(json_object_get(k->pod.spec, "volumes"), i, vol)
	{
		if (strcmp(k8s_str(vol, "name"), name) == 0) {
			v = vol;
		}
	}
	if (v == NULL) {
		/* a volumeClaimTemplate: the pod's own persistent folder */
		return;
	}
	if (json_object_get(v, "emptyDir") != NULL) {
		return;
	}
	json_t *src = json_object_get(v, "secret") ? json_object_get(v, "secret")
	                                           : json_object_get(v, "configMap");
	cr_assert_not_null(
	    src, "%s: volume %s of a kind the replay does not make", k->pod.name, name);
	json_t *dm = json_object_get(src, "defaultMode");
	mode_t  mode = dm != NULL ? (mode_t)json_integer_value(dm) : 0644;
	items = json_object_get(src, "items");
	if (json_object_get(v, "secret") != NULL) {
		/* the Secret warble-tls, made from deploy/make-certs' files */
		cr_assert_str_eq(k8s_str(src, "secretName"), "warble-tls");
		json_array_foreach(items, i, it)
		{
			char from[KR_PATH * 2], to[KR_PATH * 2], *text;
			snprintf(from, sizeof(from), "%s/%s", kr_certs, k8s_str(it, "key"));
			snprintf(to, sizeof(to), "%s/%s", dir, k8s_str(it, "path"));
			cr_assert_not_null(
			    text = wbt_read_file(from), "the Secret has no %s", k8s_str(it, "key"));
			kr_write(to, text, mode, g);
			free(text);
		}
	} else {
		json_t     *cm = k8s_find(kr_objs, "ConfigMap", k8s_str(src, "name"));
		const char *key;
		json_t     *val;
		cr_assert_not_null(cm, "%s: no ConfigMap %s", k->pod.name, k8s_str(src, "name"));
		cr_assert_null(items, "ConfigMap items are not replayed");
		json_object_foreach(json_object_get(cm, "data"), key, val)
		{
			char to[KR_PATH * 2];
			snprintf(to, sizeof(to), "%s/%s", dir, key);
			kr_write(to, json_string_value(val), mode, g);
		}
	}
}

/* kr_prepare makes pod k's root, volumes and /etc (hosts as given), and its environment. */
static void
kr_prepare(kr_pod *k, const char *hosts)
{
	char        d[KR_PATH * 2], bin[KR_PATH * 2], workdir[KR_PATH] = "/";
	const char *links[] = { "bin", "sbin", "lib", "lib64", "lib32" };
	json_t     *ps = json_object_get(k->pod.spec, "securityContext"), *m, *env, *val;
	size_t      i;
	const char *key;
	int         uid = -1;

	cr_assert_eq(wbt_path(k->dir, sizeof(k->dir), k->pod.name), 0);
	cr_assert_lt((size_t)snprintf(k->plan.root, sizeof(k->plan.root), "%s/root", k->dir),
	    sizeof(k->plan.root));
	kr_mkdirs(k->plan.root);
	cr_assert_eq(k8s_image(NULL, workdir, sizeof(workdir), &uid), 0);
	snprintf(k->plan.workdir, sizeof(k->plan.workdir), "%s", workdir);
	k->plan.uid = (uid_t)json_integer_value(json_object_get(ps, "runAsUser"));
	k->plan.gid = (gid_t)json_integer_value(json_object_get(ps, "runAsGroup"));
	k->plan.fsgroup = (gid_t)json_integer_value(json_object_get(ps, "fsGroup"));
	cr_assert_gt(k->plan.uid, 0, "%s runs as root", k->pod.name);

	/* the image: Debian's /usr, the build's binaries and web page where the Dockerfile puts them */
	for (size_t l = 0; l < sizeof(links) / sizeof(*links); l++) {
		char target[64], where[KR_PATH * 2], host[16];
		snprintf(host, sizeof(host), "/%s", links[l]);
		ssize_t len = readlink(host, target, sizeof(target) - 1);
		snprintf(where, sizeof(where), "%s/%s", k->plan.root, links[l]);
		if (len > 0) {
			target[len] = '\0';
			cr_assert_eq(symlink(target, where), 0);
		} else if (access(host, F_OK) == 0) {
			kr_bind(k, host, host, true);
		}
	}
	kr_bind(k, "/usr", "/usr", true);
	snprintf(d, sizeof(d), "%s/usr-local", k->dir);
	kr_mkdirs(d);
	kr_bind(k, d, "/usr/local", true);
	cr_assert_eq(wbt_bin_path(bin, sizeof(bin), "warble-probe"), 0);
	*strrchr(bin, '/') = '\0';
	snprintf(d, sizeof(d), "%s/usr-local/bin", k->dir);
	kr_mkdirs(d);
	kr_bind(k, bin, "/usr/local/bin", true);
	snprintf(d, sizeof(d), "%s/usr-local/share/warble/web", k->dir);
	kr_mkdirs(d);
	snprintf(bin, sizeof(bin), "%s/services/gateway/web", kr_repo);
	kr_bind(k, bin, "/usr/local/share/warble/web", true);
	kr_bind(k, "/proc", "/proc", false);
	kr_bind(k, "/dev", "/dev", false);
	kr_bind(k, "/sys", "/sys", true);
	snprintf(d, sizeof(d), "%s/home/warble", k->plan.root);
	kr_mkdirs(d);
	snprintf(d, sizeof(d), "%s%s", k->plan.root, workdir);
	kr_mkdirs(d);

	/* /etc of the pod: its hosts file, a passwd naming warble, names from files only */
	snprintf(d, sizeof(d), "%s/etc", k->plan.root);
	kr_mkdirs(d);
	snprintf(d, sizeof(d), "%s/etc/hosts", k->plan.root);
	kr_write(d, hosts, 0644, 0);
	snprintf(d, sizeof(d), "%s/etc/nsswitch.conf", k->plan.root);
	kr_write(d, "passwd: files\ngroup: files\nhosts: files\n", 0644, 0);
	snprintf(d, sizeof(d), "%s/etc/resolv.conf", k->plan.root);
	kr_write(d, "", 0644, 0);
	snprintf(d, sizeof(d), "%s/etc/passwd", k->plan.root);
	kr_write(d,
	    "root:x:0:0:root:/root:/bin/sh\n"
	    "warble:x:999:999::/home/warble:/usr/sbin/nologin\n",
	    0644, 0);
	snprintf(d, sizeof(d), "%s/etc/group", k->plan.root);
	kr_write(d, "root:x:0:\nwarble:x:999:\n", 0644, 0);
	char *cache = wbt_read_file("/etc/ld.so.cache");
	if (cache != NULL) {
		/* binary: copy it whole */
		char  to[KR_PATH * 2];
		FILE *in = fopen("/etc/ld.so.cache", "rb"), *out;
		snprintf(to, sizeof(to), "%s/etc/ld.so.cache", k->plan.root);
		out = fopen(to, "wb");
		cr_assert(in != NULL && out != NULL);
		char   buf[65536];
		size_t r;
		while ((r = fread(buf, 1, sizeof(buf), in)) > 0) {
			cr_assert_eq(fwrite(buf, 1, r, out), r);
		}
		fclose(in);
		fclose(out);
		free(cache);
	}

	/* the volumes at their mount paths */
	json_array_foreach(json_object_get(k->c, "volumeMounts"), i, m)
	{
		char dir[KR_PATH];
		kr_volume(k, k8s_str(m, "name"), dir, sizeof(dir));
		kr_bind(
		    k, dir, k8s_str(m, "mountPath"), json_is_true(json_object_get(m, "readOnly")));
	}

	/* the environment; and a sanitized build's settings, the one thing
	 * added, with the repository at its own path for their suppressions */
	env = k8s_env(kr_objs, &k->pod, k->c, wbc_host_addr(k->host));
	cr_assert_not_null(env, "%s: its environment cannot be worked out", k->pod.name);
	const char *san[] = { "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "TSAN_OPTIONS" };
	bool        sanitized = false;
	for (size_t v = 0; v < sizeof(san) / sizeof(*san); v++) {
		if (getenv(san[v]) != NULL) {
			json_object_set_new(env, san[v], json_string(getenv(san[v])));
			sanitized = true;
		}
	}
	if (sanitized) {
		kr_bind(k, kr_repo, kr_repo, true);
	}
	json_object_foreach(env, key, val)
	{
		cr_assert_lt(k->nenv, KR_ENV_MAX - 1);
		cr_assert_gt(
		    asprintf(&k->envs[k->nenv++], "%s=%s", key, json_string_value(val)), 0);
	}
	k->envs[k->nenv] = NULL;
	json_decref(env);
}

/* kr_exec runs argv (argv[0] a path in the pod) as pod k: its namespaces, root and environment. */
static wbt_daemon *
kr_exec(kr_pod *k, const char *const *argv, const char *log)
{
	wbt_spawn_opts o = { .netns = wbc_host_netns(k->host),
		.clean_env = true,
		.setup = kr_setup,
		.setup_arg = &k->plan,
		.log_name = log };
	char           prog[KR_PATH];

	/* a name without a slash is looked up in the image's PATH, as the runtime does */
	if (strchr(argv[0], '/') == NULL) {
		snprintf(prog, sizeof(prog), "/usr/local/bin/%s", argv[0]);
		if (strcmp(argv[0], "sleep") == 0 || strcmp(argv[0], "sh") == 0) {
			snprintf(prog, sizeof(prog), "/usr/bin/%s", argv[0]);
		}
	} else {
		snprintf(prog, sizeof(prog), "%s", argv[0]);
	}
	return wbt_spawn_ex(prog, argv + 1, (const char *const *)k->envs, &o);
}

/* kr_argv returns the container's command and args (NULL-terminated, malloc'd). */
static const char **
kr_argv(json_t *c)
{
	json_t      *cmd = json_object_get(c, "command"), *args = json_object_get(c, "args");
	size_t       n = json_array_size(cmd) + json_array_size(args), i, k = 0;
	const char **argv = calloc(n + 1, sizeof(char *));
	json_t      *v;

	cr_assert_not_null(argv);
	json_array_foreach(cmd, i, v)
	{
		argv[k++] = json_string_value(v);
	}
	json_array_foreach(args, i, v)
	{
		argv[k++] = json_string_value(v);
	}
	return argv;
}

/* kr_probe runs pod k's readiness probe once, in the pod: its exit status (none: 0 if k runs). */
static int
kr_probe(kr_pod *k)
{
	json_t     *probe = json_object_get(k->c, "readinessProbe");
	json_t     *cmd = k8s_get(probe, "exec.command");
	const char *argv[16];
	size_t      i, n = 0;
	json_t     *v;
	wbt_daemon *d;
	char        log[96];

	if (probe == NULL) {
		return wbt_alive(k->d) ? 0 : 1; /* as the kubelet: Ready once started */
	}
	cr_assert_not_null(cmd, "%s: no exec readinessProbe", k->pod.name);
	json_array_foreach(cmd, i, v)
	{
		if (n < 15) {
			argv[n++] = json_string_value(v);
		}
	}
	argv[n] = NULL;
	snprintf(log, sizeof(log), "probe-%.60s", k->pod.name);
	if ((d = kr_exec(k, argv, log)) == NULL) {
		return -1;
	}
	return wbt_wait_exit(d, wbt_ms(10000));
}

/* kr_gateway_url writes the gateway Service's port api, as reached on gateway pod i, into buf. */
static void
kr_gateway_url(char *buf, size_t n, int i)
{
	json_t *svc = k8s_find(kr_objs, "Service", "gateway"), *p;
	size_t  j;
	int     count = 0;

	cr_assert_not_null(svc);
	for (int k = 0; k < kr_n; k++) {
		if (strcmp(kr_pods[k].pod.workload, "gateway") != 0 || count++ != i) {
			continue;
		}
		json_array_foreach(k8s_get(svc, "spec.ports"), j, p)
		{
			const char *tp = k8s_str(p, "targetPort");
			json_t     *cp;
			size_t      l;
			if (tp == NULL || strcmp(k8s_str(p, "name"), "api") != 0) {
				continue;
			}
			json_array_foreach(json_object_get(kr_pods[k].c, "ports"), l, cp)
			{
				if (strcmp(k8s_str(cp, "name"), tp) == 0) {
					snprintf(buf, n, "tcp://%s:%lld",
					    wbc_host_addr(kr_pods[k].host),
					    json_integer_value(
					        json_object_get(cp, "containerPort")));
					return;
				}
			}
		}
	}
	cr_assert_fail("the Service gateway reaches no gateway pod %d on its port api", i);
}

/*
 * kr_user registers and logs in name through gateway pod gw; the client,
 * its uid in *uid.  The pods hash passwords at the manifests' cost
 * (argon2id, interactive: 64 MiB), so on a machine shared with other
 * builds a call can outlast the gateway's 5 s deadline: a timed-out call
 * is made again, as a client would, at most KR_TRIES times (a register
 * that went through the first time then finds its name taken).
 */
static warble_client *
kr_user(const char *name, int gw, uint64_t *uid)
{
	char           url[128];
	warble_client *c;
	int            rc = WARBLE_ETIMEDOUT;

	kr_gateway_url(url, sizeof(url), gw);
	cr_assert_eq(warble_open(&c, url, wbt_ms(KR_SDK_MS)), WARBLE_OK, "open %s", url);
	for (int t = 0; t < KR_TRIES && (rc == WARBLE_ETIMEDOUT || rc == WARBLE_EUNAVAIL); t++) {
		rc = warble_register(c, name, KR_PASSWORD, uid);
		rc = rc == WARBLE_EEXIST && t > 0 ? WARBLE_OK : rc;
	}
	cr_assert_eq(rc, WARBLE_OK, "register %s: %s", name, warble_errmsg(c));
	rc = WARBLE_ETIMEDOUT;
	for (int t = 0; t < KR_TRIES && (rc == WARBLE_ETIMEDOUT || rc == WARBLE_EUNAVAIL); t++) {
		rc = warble_login(c, name, KR_PASSWORD, uid);
	}
	cr_assert_eq(rc, WARBLE_OK, "login %s: %s", name, warble_errmsg(c));
	return c;
}

/* kr_home_has waits until c's home does (want) or does not hold post id; true if it came to pass. */
static bool
kr_home_has(warble_client *c, uint64_t id, bool want)
{
	for (int waited = 0; waited < wbt_ms(KR_HOME_MS); waited += 100) {
		warble_posts_t *home = NULL;
		bool            has = false;

		if (warble_home(c, 0, 20, &home) == WARBLE_OK) {
			for (size_t i = 0; i < home->n; i++) {
				has = has || home->posts[i].id == id;
			}
			warble_posts_free(home);
			if (has == want) {
				return true;
			}
		}
		usleep(100 * 1000);
	}
	return false;
}

/* kr_pod_named returns the replayed pod name (the test fails if there is none). */
static kr_pod *
kr_pod_named(const char *name)
{
	for (int i = 0; i < kr_n; i++) {
		if (strcmp(kr_pods[i].pod.name, name) == 0) {
			return &kr_pods[i];
		}
	}
	cr_assert_fail("the overlay has no pod %s", name);
	return NULL;
}

/* kr_env returns the value of name in pod k's environment, or NULL. */
static const char *
kr_env(const kr_pod *k, const char *name)
{
	size_t n = strlen(name);

	for (int e = 0; e < k->nenv; e++) {
		if (strncmp(k->envs[e], name, n) == 0 && k->envs[e][n] == '=') {
			return k->envs[e] + n + 1;
		}
	}
	return NULL;
}

/* kr_port returns the containerPort of pod k named name (the test fails if there is none). */
static int
kr_port(const kr_pod *k, const char *name)
{
	json_t *p;
	size_t  i;

	json_array_foreach(json_object_get(k->c, "ports"), i, p)
	{
		if (strcmp(k8s_str(p, "name"), name) == 0) {
			return (int)json_integer_value(json_object_get(p, "containerPort"));
		}
	}
	cr_assert_fail("%s has no port %s", k->pod.name, name);
	return -1;
}

/*
 * kr_run runs argv in pod k (its log named name, the path in log) and
 * returns its exit status, or -1 if it ran past timeout_ms (then killed).
 */
static int
kr_run(
    kr_pod *k, const char *const *argv, const char *name, int timeout_ms, char *log, size_t log_len)
{
	wbt_daemon *d = kr_exec(k, argv, name);
	int         st;

	cr_assert_not_null(d, "%s: %s did not start", k->pod.name, argv[0]);
	snprintf(log, log_len, "%s", d->log);
	if ((st = wbt_wait_exit(d, timeout_ms)) < 0) {
		wbt_stop(d, SIGKILL, wbt_ms(10000));
	}
	return st;
}

/* kr_log_has waits up to timeout_ms for the file log to hold text; whether it came. */
static bool
kr_log_has(const char *log, const char *text, int timeout_ms)
{
	for (int waited = 0; waited <= timeout_ms; waited += 100) {
		char *t = wbt_read_file(log);
		bool  has = t != NULL && strstr(t, text) != NULL;

		free(t);
		if (has) {
			return true;
		}
		usleep(100 * 1000);
	}
	return false;
}

/*
 * kr_http_get GETs path from addr:port as a scraper outside the pod does
 * (5 s deadline); the status in *code and the body (malloc'd), or NULL
 * with *code 0 if nothing answered.
 */
static char *
kr_http_get(const char *addr, int port, const char *path, int *code)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval     tv = { .tv_sec = 5 };
	size_t             len = 0;
	char               req[256], *buf = malloc(KR_HTTP_MAX), *body;
	int                fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), n;
	ssize_t            k;

	*code = 0;
	cr_assert(buf != NULL && fd >= 0);
	cr_assert_eq(inet_pton(AF_INET, addr, &sa.sin_addr), 1);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		close(fd);
		free(buf);
		return NULL;
	}
	n = snprintf(req, sizeof(req),
	    "GET %s HTTP/1.1\r\nHost: %s:%d\r\nConnection: close\r\n\r\n", path, addr, port);
	cr_assert_eq(write(fd, req, (size_t)n), n);
	while (len + 1 < KR_HTTP_MAX && (k = read(fd, buf + len, KR_HTTP_MAX - len - 1)) > 0) {
		len += (size_t)k;
	}
	close(fd);
	buf[len] = '\0';
	if (sscanf(buf, "HTTP/1.%*d %d", code) != 1 || (body = strstr(buf, "\r\n\r\n")) == NULL) {
		*code = 0;
		free(buf);
		return NULL;
	}
	body = strdup(body + 4);
	free(buf);
	return body;
}

/*
 * kr_check_tls: mutual TLS as the manifests turn it on.  A client without
 * a certificate (warble-probe --plain, in content-0, which never calls
 * relation) is refused by relation-0, which logs content-0's address; the
 * gateway's identity pings a service from the gateway's pod, and may not
 * call an admin operation there (FORBIDDEN) where the admin identity may.
 */
static void
kr_check_tls(void)
{
	kr_pod *rel = kr_pod_named("relation-0"), *con = kr_pod_named("content-0");
	kr_pod *gw = kr_pod_named("gateway-0"), *in = kr_pod_named("inbox-0");
	char    url[128], log[KR_PATH], want[160], dir[KR_PATH * 2];
	int     st;

	for (int i = 0; i < kr_n; i++) {
		const char *tls = kr_env(&kr_pods[i], "WARBLE_TLS_DIR");
		cr_assert(
		    tls != NULL && tls[0] != '\0', "%s runs without TLS", kr_pods[i].pod.name);
	}
	snprintf(url, sizeof(url), "tcp://relation-0.relation:%d", kr_port(rel, "rpc"));
	const char *plain[] = { "warble-probe", "--plain", "--timeout-ms", "2000", url, NULL };
	st = kr_run(con, plain, "probe-plain", wbt_ms(20000), log, sizeof(log));
	cr_assert_eq(
	    st, 1, "relation-0 answered a client without a certificate (exit %d: %s)", st, log);
	snprintf(want, sizeof(want), "refused TLS peer %s port ", wbc_host_addr(con->host));
	cr_assert(kr_log_has(rel->d->log, want, wbt_ms(KR_LOG_MS)),
	    "relation-0 did not log '%s' (its log: %s)", want, rel->d->log);

	snprintf(url, sizeof(url), "tcp://inbox-0.inbox:%d", kr_port(in, "rpc"));
	const char *ping[] = { "warble-probe", "--timeout-ms", "5000", "--tls-name", "gateway", url,
		NULL };
	st = kr_run(gw, ping, "probe-gateway", wbt_ms(20000), log, sizeof(log));
	cr_assert_eq(st, 0, "the gateway's identity could not ping inbox-0 (exit %d: %s)", st, log);

	/* an admin operation, as the gateway (its pair, from the Secret's files) and as admin */
	const char *names[] = { "gateway", "admin" };
	snprintf(url, sizeof(url), "tcp://%s:%d", wbc_host_addr(in->host), kr_port(in, "rpc"));
	for (int a = 0; a < 2; a++) {
		rt_tls        *t = NULL;
		rt_client     *c = NULL;
		rt_client_opts o = { .timeout_ms = wbt_ms(KR_SDK_MS) };
		wb_obj        *rep = NULL, *req;
		const char    *msg = NULL;
		bool           admin = a == 1;

		cr_assert_eq(rt_tls_open(&t, kr_certs, names[a]), WB_OK, "the %s pair", names[a]);
		o.tls = t;
		cr_assert_eq(rt_client_open(&c, url, &o), WB_OK);
		cr_assert_eq(
		    wbt_call(c, wb_request(WB_OP_PING), NULL), WB_OK, "%s: ping", names[a]);
		int rc = wbt_call(c, wb_request(WB_OP_INBOX_REBUILD_STATUS), &rep);
		if (rep != NULL) {
			wb_reply_code(rep, &msg);
		}
		cr_assert_eq(rc, admin ? WB_OK : WB_EPERM, "inbox.rebuild_status as %s: %s (%s)",
		    names[a], wb_strerror(rc), msg != NULL ? msg : "");
		wb_msg_free(rep);
		rep = NULL;
		if (!admin) {
			req = wb_request(WB_OP_ADMIN_BACKUP);
			cr_assert_not_null(req);
			wb_set_cstr(req, WB_F_DIR, "/var/lib/warble/forbidden");
			rc = wbt_call(c, req, &rep);
			cr_assert_eq(
			    rc, WB_EPERM, "admin.backup as the gateway: %s", wb_strerror(rc));
			wb_msg_free(rep);
			snprintf(dir, sizeof(dir), "%s/vol-data/forbidden", in->dir);
			cr_assert_neq(access(dir, F_OK), 0, "a refused backup wrote %s", dir);
		}
		rt_client_close(c);
		rt_tls_close(t);
	}
}

/* kr_check_metrics scrapes each pod's admin port, as its annotations name it, on its address. */
static void
kr_check_metrics(void)
{
	for (int i = 0; i < kr_n; i++) {
		kr_pod     *k = &kr_pods[i];
		json_t     *anns = k8s_get(k->pod.obj, "spec.template.metadata.annotations");
		const char *port = json_string_value(json_object_get(anns, "prometheus.io/port"));
		const char *path = json_string_value(json_object_get(anns, "prometheus.io/path"));
		char        want[160], *body;
		int         code = 0;
		bool        sts = strcmp(k->pod.kind, "StatefulSet") == 0;

		if (json_object_get(anns, "prometheus.io/scrape") == NULL) {
			cr_assert_eq(json_array_size(json_object_get(k->c, "ports")), 0,
			    "%s has ports and is not scraped", k->pod.name);
			continue; /* the toolbox: nothing to scrape */
		}
		cr_assert(
		    port != NULL && path != NULL, "%s: no prometheus.io/port or path", k->pod.name);
		cr_assert_eq(atoi(port), kr_port(k, "metrics"));
		body = kr_http_get(wbc_host_addr(k->host), atoi(port), path, &code);
		cr_assert_eq(code, 200, "%s: GET http://%s:%s%s: %d", k->pod.name,
		    wbc_host_addr(k->host), port, path, code);
		snprintf(want, sizeof(want),
		    "\nprocess_cpu_seconds_total{service=\"%s\",shard=\"%d\"} ", k->pod.workload,
		    sts ? k->pod.ordinal : 0);
		cr_assert(strstr(body, want) != NULL, "%s: no%.*s in its /metrics", k->pod.name,
		    (int)strlen(want) - 1, want);
		free(body);
		body = kr_http_get(wbc_host_addr(k->host), atoi(port), "/healthz", &code);
		cr_assert_eq(code, 200, "%s: /healthz: %d", k->pod.name, code);
		free(body);
	}
}

Test(k8s_replay, sharded, .fini = wbc_fini, .timeout = 300)
{
	static char why[1 << 16];
	wbc_net    *net = NULL;
	char        hosts[8192];
	size_t      hn = 0;
	int         rc;

	const char *mode = getenv("WARBLE_TEST_MODE");
	if (mode != NULL && strcmp(mode, "one") == 0) {
		cr_skip_test("the pods run one daemon each whatever the mode: make test runs it");
	}
	if (geteuid() != 0) {
		cr_skip_test("needs root (network and mount namespaces)");
	}
	rc = k8s_render(&kr_objs, KR_OVERLAY, false, why, sizeof(why));
	if (rc == K8S_SKIP) {
		cr_skip_test("the Kubernetes tools are not installed (tests/deps.sh): %s", why);
	}
	cr_assert_eq(rc, 0, "%s", why);
	cr_assert_not_null(getcwd(kr_repo, sizeof(kr_repo)));
	rc = wbc_open(&net, why, sizeof(why));
	if (rc == WBC_SKIP) {
		cr_skip_test("%s", why);
	}
	cr_assert_eq(rc, 0, "%s", why);

	/* the Secret's files */
	cr_assert_eq(wbt_path(kr_certs, sizeof(kr_certs), "certs"), 0);
	const char *mk[] = { "deploy/make-certs", kr_certs, NULL };
	char       *err = NULL;
	cr_assert_eq(k8s_run(mk, NULL, wbt_ms(30000), NULL, &err), 0, "make-certs: %s", err);
	free(err);

	/* a host per pod, and the names the cluster DNS would give them */
	k8s_pod pods[K8S_PODS_MAX];
	kr_n = k8s_pods(kr_objs, pods, K8S_PODS_MAX);
	cr_assert_eq(kr_n, 12, "the sharded overlay makes %d pods, not 1+1+2+2+4+2", kr_n);
	hn += (size_t)snprintf(hosts + hn, sizeof(hosts) - hn, "127.0.0.1 localhost\n");
	for (int i = 0; i < kr_n; i++) {
		kr_pod     *k = &kr_pods[i];
		char        hname[32];
		const char *w = pods[i].workload;

		k->pod = pods[i];
		k->c = json_array_get(json_object_get(pods[i].spec, "containers"), 0);
		snprintf(hname, sizeof(hname), "%.8s%d", w, pods[i].ordinal);
		cr_assert_eq(wbc_host_add(net, hname, &k->host), 0, "host %s", hname);
		if (strcmp(pods[i].kind, "StatefulSet") == 0) {
			hn += (size_t)snprintf(hosts + hn, sizeof(hosts) - hn,
			    "%s %s.%s.%s.svc.cluster.local %s.%s.%s.svc %s.%s.%s %s.%s\n",
			    wbc_host_addr(k->host), pods[i].name, w, K8S_NAMESPACE, pods[i].name, w,
			    K8S_NAMESPACE, pods[i].name, w, K8S_NAMESPACE, pods[i].name, w);
		} else if (pods[i].ordinal == 0 && k8s_find(kr_objs, "Service", w) != NULL) {
			hn += (size_t)snprintf(hosts + hn, sizeof(hosts) - hn,
			    "%s %s.%s.svc.cluster.local %s.%s.svc %s.%s %s\n",
			    wbc_host_addr(k->host), w, K8S_NAMESPACE, w, K8S_NAMESPACE, w,
			    K8S_NAMESPACE, w);
		}
		cr_assert_lt(hn, sizeof(hosts));
	}

	/* every pod's container, as its manifest says */
	for (int i = 0; i < kr_n; i++) {
		kr_pod      *k = &kr_pods[i];
		const char **argv;

		kr_prepare(k, hosts);
		argv = kr_argv(k->c);
		k->d = kr_exec(k, argv, k->pod.name);
		cr_assert_not_null(k->d, "%s did not start", k->pod.name);
		free(argv);
	}
	/* ready: each pod's readiness probe, run in the pod, answers */
	for (int i = 0; i < kr_n; i++) {
		kr_pod *k = &kr_pods[i];
		int     st = -1;

		for (int waited = 0; waited < wbt_ms(KR_READY_MS) && st != 0; waited += 250) {
			cr_assert(
			    wbt_alive(k->d), "%s exited (its log: %s)", k->pod.name, k->d->log);
			if ((st = kr_probe(k)) != 0) {
				usleep(250 * 1000);
			}
		}
		cr_assert_eq(st, 0, "%s never became ready (its log: %s)", k->pod.name, k->d->log);
	}

	/* the seed flows through the gateway Service, on both gateway pods:
	 * readers until each of the inbox shards has one, each following the
	 * author through its relation shard */
	json_t        *counts = k8s_get(k8s_find(kr_objs, "ConfigMap", "warble-shards"), "data");
	unsigned       ninbox = (unsigned)atoi(k8s_str(counts, "INBOX_SHARDS"));
	uint64_t       uid = 0, id = 0;
	warble_client *author = kr_user("author", 0, &uid), *readers[KR_READERS];
	unsigned       covered = 0, nr = 0;
	char           name[32];

	cr_assert(ninbox >= 2 && ninbox <= 8, "INBOX_SHARDS=%u", ninbox);
	while (covered != (1u << ninbox) - 1 && nr < KR_READERS) {
		snprintf(name, sizeof(name), "reader%u", nr);
		readers[nr] = kr_user(name, (int)(nr % 2), &uid);
		covered |= 1u << wb_uid_shard(uid, ninbox);
		cr_assert_eq(warble_follow(readers[nr], "author"), WARBLE_OK, "follow: %s",
		    warble_errmsg(readers[nr]));
		nr++;
	}
	cr_assert_eq(covered, (1u << ninbox) - 1, "%u readers left an inbox shard without one", nr);
	cr_assert_eq(warble_post(author, "hello from a pod", &id), WARBLE_OK, "post: %s",
	    warble_errmsg(author));
	for (unsigned r = 0; r < nr; r++) {
		cr_assert(kr_home_has(readers[r], id, true), "reader%u's home lacks the post", r);
	}
	cr_assert_eq(warble_unfollow(readers[0], "author"), WARBLE_OK, "unfollow: %s",
	    warble_errmsg(readers[0]));
	cr_assert(kr_home_has(readers[0], id, false), "the post stayed in reader0's home");
	cr_assert(kr_home_has(readers[1], id, true), "the post left reader1's home");
	for (unsigned r = 0; r < nr; r++) {
		warble_close(readers[r]);
	}
	warble_close(author);

	kr_check_tls();
	kr_check_metrics();

	/* a backup as docs/operations.md runs it: DIR made in every store pod,
	 * then warblectl through warble-pod in the admin toolbox; a service's
	 * pod, without the admin identity, cannot run it */
	const char *bdir = "/var/lib/warble/backup-replay";
	kr_pod     *admin = kr_pod_named("admin-0"), *inbox0 = kr_pod_named("inbox-0");
	char        blog[KR_PATH];
	for (int i = 0; i < kr_n; i++) {
		kr_pod *k = &kr_pods[i];
		if (strcmp(k->pod.kind, "StatefulSet") == 0) {
			const char *mkdir_argv[] = { "/bin/mkdir", "-p", bdir, NULL };
			cr_assert_eq(
			    kr_run(k, mkdir_argv, "mkdir", wbt_ms(10000), blog, sizeof(blog)), 0,
			    "mkdir in %s", k->pod.name);
		}
	}
	const char *backup[] = { "/bin/sh", "/etc/warble/pod/warble-pod", "warblectl", "admin",
		"backup", bdir, NULL };
	rc = kr_run(inbox0, backup, "backup-inbox0", wbt_ms(60000), blog, sizeof(blog));
	cr_assert_eq(
	    rc, 2, "warblectl admin ran in inbox-0, without the admin identity (%s)", blog);
	cr_assert(kr_log_has(blog, "no usable admin certificate", 0), "%s", blog);
	rc = kr_run(admin, backup, "backup", wbt_ms(60000), blog, sizeof(blog));
	cr_assert_eq(rc, 0, "warblectl admin backup failed (%s)", blog);
	for (int i = 0; i < kr_n; i++) {
		kr_pod *k = &kr_pods[i];
		char    copy[KR_PATH * 2];
		if (strcmp(k->pod.kind, "StatefulSet") != 0) {
			continue;
		}
		if (strcmp(k->pod.workload, "user") == 0) {
			snprintf(
			    copy, sizeof(copy), "%s/vol-data/backup-replay/user/CURRENT", k->dir);
		} else {
			snprintf(copy, sizeof(copy), "%s/vol-data/backup-replay/%s.%d/CURRENT",
			    k->dir, k->pod.workload, k->pod.ordinal);
		}
		cr_assert_eq(access(copy, R_OK), 0, "no backup of %s: %s", k->pod.name, copy);
	}
	/* the manifest is the toolbox's, in its work folder */
	char manifest[KR_PATH * 2];
	snprintf(manifest, sizeof(manifest), "%s/vol-work/backup-replay/manifest.json", admin->dir);
	char *mtext = wbt_read_file(manifest);
	cr_assert(mtext != NULL && strstr(mtext, "\"consistent\": true") != NULL, "%s: %s",
	    manifest, mtext);
	free(mtext);

	/* a pod beyond the shard count refuses to start, saying why */
	for (int i = 0; i < kr_n; i++) {
		kr_pod *k = &kr_pods[i];
		if (strcmp(k->pod.name, "inbox-3") == 0) {
			kr_pod       extra = *k;
			const char **argv = kr_argv(k->c);
			char        *log;

			for (int e = 0; e < extra.nenv; e++) {
				if (strncmp(extra.envs[e], "POD_NAME=", 9) == 0) {
					extra.envs[e] = "POD_NAME=inbox-4";
				}
			}
			wbt_daemon *d = kr_exec(&extra, argv, "inbox-4");
			cr_assert_not_null(d);
			cr_assert_eq(
			    wbt_wait_exit(d, wbt_ms(10000)), 1, "inbox-4 did not refuse to start");
			log = wbt_read_file(d->log);
			cr_assert(
			    log != NULL && strstr(log, "inbox-4 would be inbox shard 4") != NULL,
			    "inbox-4's log: %s", log);
			free(log);
			free(argv);
		}
	}

	/* every pod stops within its grace period, cleanly */
	for (int i = kr_n - 1; i >= 0; i--) {
		kr_pod *k = &kr_pods[i];
		int     grace =
		    (int)json_integer_value(k8s_get(k->pod.spec, "terminationGracePeriodSeconds"));

		cr_assert_eq(wbt_stop(k->d, SIGTERM, wbt_ms(grace * 1000)), 0,
		    "%s did not stop cleanly", k->pod.name);
	}
	for (int i = 0; i < kr_n; i++) {
		for (int e = 0; e < kr_pods[i].nenv; e++) {
			free(kr_pods[i].envs[e]);
		}
	}
	cr_assert_eq(wbc_close(net), 0);
	json_decref(kr_objs);
}
