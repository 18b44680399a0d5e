/*
 * k8s_manifest.c - the rendered manifests and what a pod is given (see
 * k8s_manifest.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "k8s_manifest.h"
#include "wbt.h"

#define K8S_OUT_MAX    (32 << 20) /* bytes of a program's output kept */
#define K8S_RENDER_MS  60000
#define K8S_DOCKERFILE "deploy/Dockerfile"
#define K8S_RENDER_JS  "tests/k8s/k8s_render.js"
/* the PATH of the image's Debian base (its image config), which deploy/Dockerfile keeps */
#define K8S_IMAGE_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define K8S_IMAGE_HOME "/home/warble"

/* The tools of debian:bookworm-slim the manifests run: dash as /bin/sh, coreutils' sleep. */
static const char *const k8s_base_tools[] = { "/bin/sh", "/usr/bin/sh", "/bin/sleep",
	"/usr/bin/sleep", NULL };

int
k8s_root(void)
{
	char    self[512], cand[600];
	ssize_t len;

	if (access(K8S_RENDER_JS, R_OK) == 0) {
		return 0;
	}
	if ((len = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0) {
		return -1;
	}
	self[len] = '\0';
	snprintf(cand, sizeof(cand), "%s/../..", dirname(self));
	return chdir(cand) == 0 && access(K8S_RENDER_JS, R_OK) == 0 ? 0 : -1;
}

/* k8s_now_ms is a monotonic clock in ms. */
static int64_t
k8s_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A growing buffer a child's output goes to. */
typedef struct k8s_buf {
	char  *b;
	size_t n, cap;
} k8s_buf;

/* k8s_buf_read appends what fd has (up to K8S_OUT_MAX in all); 0 at its end, 1 if more may come. */
static int
k8s_buf_read(k8s_buf *b, int fd)
{
	char    chunk[65536];
	ssize_t k = read(fd, chunk, sizeof(chunk));

	if (k < 0 && (errno == EINTR || errno == EAGAIN)) {
		return 1;
	}
	if (k <= 0) {
		return 0;
	}
	if (b->n + (size_t)k + 1 > b->cap && b->n < K8S_OUT_MAX) {
		size_t cap = b->cap == 0 ? 65536 : b->cap;
		while (cap < b->n + (size_t)k + 1) {
			cap *= 2;
		}
		char *nb = realloc(b->b, cap);
		if (nb == NULL) {
			return 1;
		}
		b->b = nb;
		b->cap = cap;
	}
	if (b->n + (size_t)k + 1 <= b->cap) {
		memcpy(b->b + b->n, chunk, (size_t)k);
		b->n += (size_t)k;
		b->b[b->n] = '\0';
	}
	return 1;
}

int
k8s_run(const char *const *argv, const char *const *env, int timeout_ms, char **out, char **err)
{
	int           po[2] = { -1, -1 }, pe[2] = { -1, -1 }, st = 0;
	k8s_buf       bo = { 0 }, be = { 0 };
	pid_t         pid;
	int64_t       end = k8s_now_ms() + timeout_ms;
	bool          open_o = true, open_e = true, late = false;
	extern char **environ;

	if (out != NULL) {
		*out = NULL;
	}
	if (err != NULL) {
		*err = NULL;
	}
	if (pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0) {
		goto fail;
	}
	fflush(NULL);
	if ((pid = fork()) < 0) {
		goto fail;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		dup2(null, STDIN_FILENO);
		dup2(po[1], STDOUT_FILENO);
		dup2(pe[1], STDERR_FILENO);
		if (env != NULL) {
			environ = (char **)env;
		}
		execvp(argv[0], (char *const *)argv);
		fprintf(stderr, "cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	po[1] = pe[1] = -1;
	while (open_o || open_e) {
		struct pollfd fds[2] = { { .fd = open_o ? po[0] : -1, .events = POLLIN },
			{ .fd = open_e ? pe[0] : -1, .events = POLLIN } };
		int64_t       left = end - k8s_now_ms();

		if (left <= 0) {
			late = true;
			kill(pid, SIGKILL);
			break;
		}
		if (poll(fds, 2, (int)left) < 0 && errno != EINTR) {
			break;
		}
		if (open_o && (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
			open_o = k8s_buf_read(&bo, po[0]) != 0;
		}
		if (open_e && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
			open_e = k8s_buf_read(&be, pe[0]) != 0;
		}
	}
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
	}
	close(po[0]);
	close(pe[0]);
	if (out != NULL) {
		*out = bo.b != NULL ? bo.b : strdup("");
	} else {
		free(bo.b);
	}
	if (err != NULL) {
		*err = be.b != NULL ? be.b : strdup("");
	} else {
		free(be.b);
	}
	if (late) {
		return -1;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
fail:
	for (int i = 0; i < 2; i++) {
		if (po[i] >= 0) {
			close(po[i]);
		}
		if (pe[i] >= 0) {
			close(pe[i]);
		}
	}
	return -1;
}

/* The content hash of what a render reads, summed by k8s_hash_file (FNV-1a over paths and bytes). */
static uint64_t k8s_hash;

static void
k8s_hash_bytes(const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		k8s_hash = (k8s_hash ^ ((const unsigned char *)p)[i]) * 1099511628211ULL;
	}
}

static int
k8s_hash_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	char *text;

	(void)st, (void)ftw;
	if (type == FTW_F && (text = wbt_read_file(path)) != NULL) {
		k8s_hash_bytes(path, strlen(path) + 1);
		k8s_hash_bytes(text, strlen(text));
		free(text);
	}
	return 0;
}

/*
 * k8s_cache_path names the file where a render of overlay is kept, under
 * build/k8s-tools/cache, named by a hash of everything the render reads
 * (deploy/k8s, the overlay, the renderer and its lock file): the tests
 * of one run render each overlay once.
 */
static void
k8s_cache_path(char *buf, size_t n, const char *overlay, bool kubectl)
{
	k8s_hash = 14695981039346656037ULL;
	k8s_hash_bytes(overlay, strlen(overlay) + 1);
	k8s_hash_bytes(kubectl ? "k" : "-", 1);
	nftw("deploy/k8s", k8s_hash_file, 16, FTW_PHYS);
	if (overlay[0] == '/') {
		nftw(overlay, k8s_hash_file, 16, FTW_PHYS);
	}
	k8s_hash_file(K8S_RENDER_JS, NULL, FTW_F, NULL);
	k8s_hash_file("tests/k8s/package-lock.json", NULL, FTW_F, NULL);
	snprintf(buf, n, "build/k8s-tools/cache/%016llx.json", (unsigned long long)k8s_hash);
}

int
k8s_render(json_t **out, const char *overlay, bool kubectl, char *why, size_t why_len)
{
	char         cache[256], tmp[300];
	const char  *argv[] = { "node", K8S_RENDER_JS, "--check", kubectl ? "--kubectl" : overlay,
                kubectl ? overlay : NULL, NULL };
	char        *o = NULL, *e = NULL;
	json_error_t jerr;
	int          rc;

	*out = NULL;
	why[0] = '\0';
	if (k8s_root() != 0) {
		snprintf(why, why_len, "cannot find the repository root");
		return -1;
	}
	k8s_cache_path(cache, sizeof(cache), overlay, kubectl);
	if ((*out = json_load_file(cache, 0, &jerr)) != NULL && json_is_array(*out)) {
		return 0;
	}
	json_decref(*out);
	*out = NULL;
	rc = k8s_run(argv, NULL, wbt_ms(K8S_RENDER_MS), &o, &e);
	if (rc == 2 || rc == 127) {
		snprintf(
		    why, why_len, "%s", e != NULL && e[0] != '\0' ? e : "node is not installed");
		free(o), free(e);
		return K8S_SKIP;
	}
	if (rc != 0) {
		snprintf(why, why_len, "k8s_render.js %s exited %d: %s", overlay, rc, e ? e : "");
		free(o), free(e);
		return -1;
	}
	*out = json_loads(o, 0, &jerr);
	if (*out == NULL || !json_is_array(*out)) {
		snprintf(
		    why, why_len, "k8s_render.js %s: not a JSON array: %s", overlay, jerr.text);
		json_decref(*out);
		*out = NULL;
		rc = -1;
	} else {
		/* only a render that passed its checks is kept */
		snprintf(tmp, sizeof(tmp), "%s.%d", cache, (int)getpid());
		mkdir("build/k8s-tools/cache", 0755);
		if (json_dump_file(*out, tmp, JSON_COMPACT) != 0 || rename(tmp, cache) != 0) {
			unlink(tmp);
		}
	}
	free(o), free(e);
	return rc;
}

json_t *
k8s_get(json_t *o, const char *path)
{
	char buf[256], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *k = strtok_r(buf, ".", &save); k != NULL && o != NULL;
	     k = strtok_r(NULL, ".", &save)) {
		o = json_object_get(o, k);
	}
	return o;
}

const char *
k8s_str(json_t *o, const char *path)
{
	return json_string_value(k8s_get(o, path));
}

/* k8s_name_is tells whether a rendered name is base, or base with a generator's hash suffix. */
static bool
k8s_name_is(const char *name, const char *base)
{
	size_t n = strlen(base);

	if (strcmp(name, base) == 0) {
		return true;
	}
	return strncmp(name, base, n) == 0 && name[n] == '-' && strlen(name + n + 1) == 10;
}

json_t *
k8s_find(json_t *objs, const char *kind, const char *name)
{
	size_t  i;
	json_t *o;

	json_array_foreach(objs, i, o)
	{
		const char *k = k8s_str(o, "kind"), *n = k8s_str(o, "metadata.name");
		if (k != NULL && n != NULL && strcmp(k, kind) == 0 &&
		    (strcmp(kind, "ConfigMap") == 0 ? k8s_name_is(n, name)
		                                    : strcmp(n, name) == 0)) {
			return o;
		}
	}
	return NULL;
}

/* k8s_hpa_min returns the minReplicas of the HPA scaling Deployment name, or -1. */
static int
k8s_hpa_min(json_t *objs, const char *name)
{
	size_t  i;
	json_t *o;

	json_array_foreach(objs, i, o)
	{
		const char *k = k8s_str(o, "kind"), *t = k8s_str(o, "spec.scaleTargetRef.name");
		if (k != NULL && strcmp(k, "HorizontalPodAutoscaler") == 0 && t != NULL &&
		    strcmp(t, name) == 0) {
			json_t *m = k8s_get(o, "spec.minReplicas");
			return m != NULL ? (int)json_integer_value(m) : 1;
		}
	}
	return -1;
}

int
k8s_pods(json_t *objs, k8s_pod *pods, int max)
{
	size_t  i;
	json_t *o;
	int     n = 0;

	json_array_foreach(objs, i, o)
	{
		const char *k = k8s_str(o, "kind"), *name = k8s_str(o, "metadata.name");
		json_t     *r = k8s_get(o, "spec.replicas");
		int         count;

		if (k == NULL || name == NULL ||
		    (strcmp(k, "StatefulSet") != 0 && strcmp(k, "Deployment") != 0)) {
			continue;
		}
		count = r != NULL ? (int)json_integer_value(r) : 1;
		if (strcmp(k, "Deployment") == 0 && k8s_hpa_min(objs, name) > 0) {
			count = k8s_hpa_min(objs, name);
		}
		for (int j = 0; j < count && n < max; j++, n++) {
			k8s_pod *p = &pods[n];
			memset(p, 0, sizeof(*p));
			snprintf(p->name, sizeof(p->name), "%s-%d", name, j);
			snprintf(p->workload, sizeof(p->workload), "%s", name);
			snprintf(p->kind, sizeof(p->kind), "%s", k);
			p->ordinal = j;
			p->obj = o;
			p->spec = k8s_get(o, "spec.template.spec");
		}
	}
	return n;
}

/* k8s_expand writes value with $(NAME) replaced from env (kept as is if unknown; $$ is $) into a new string. */
static char *
k8s_expand(const char *value, json_t *env)
{
	size_t cap = strlen(value) * 2 + 256, n = 0;
	char  *out = malloc(cap);

	if (out == NULL) {
		return NULL;
	}
	for (const char *s = value; *s != '\0';) {
		const char *v = NULL, *end = NULL;
		size_t      add;

		if (s[0] == '$' && s[1] == '$') {
			v = "$", add = 1, s += 2;
		} else if (s[0] == '$' && s[1] == '(' && (end = strchr(s + 2, ')')) != NULL) {
			char key[128];
			snprintf(key, sizeof(key), "%.*s", (int)(end - s - 2), s + 2);
			v = json_string_value(json_object_get(env, key));
			if (v == NULL) {
				v = s, add = (size_t)(end - s + 1);
			} else {
				add = strlen(v);
			}
			s = end + 1;
		} else {
			v = s, add = 1, s++;
		}
		if (n + add + 1 > cap) {
			char *nb = realloc(out, cap = (n + add + 1) * 2);
			if (nb == NULL) {
				free(out);
				return NULL;
			}
			out = nb;
		}
		memcpy(out + n, v, add);
		n += add;
	}
	out[n] = '\0';
	return out;
}

json_t *
k8s_env(json_t *objs, const k8s_pod *p, json_t *c, const char *pod_ip)
{
	json_t *env = json_object(), *e;
	size_t  i;

	if (env == NULL || k8s_image(env, NULL, 0, NULL) != 0) {
		fprintf(stderr, "k8s: cannot read %s\n", K8S_DOCKERFILE);
		json_decref(env);
		return NULL;
	}
	json_object_set_new(env, "PATH", json_string(K8S_IMAGE_PATH));
	json_object_set_new(env, "HOME", json_string(K8S_IMAGE_HOME));
	json_object_set_new(env, "HOSTNAME", json_string(p->name));
	json_array_foreach(json_object_get(c, "envFrom"), i, e)
	{
		const char *cm = k8s_str(e, "configMapRef.name");
		json_t     *obj = cm != NULL ? k8s_find(objs, "ConfigMap", cm) : NULL;
		const char *key;
		json_t     *val;

		if (obj == NULL) {
			fprintf(stderr, "k8s: %s: envFrom names no ConfigMap of the overlay\n",
			    p->name);
			json_decref(env);
			return NULL;
		}
		json_object_foreach(json_object_get(obj, "data"), key, val)
		{
			json_object_set(env, key, val);
		}
	}
	json_array_foreach(json_object_get(c, "env"), i, e)
	{
		const char *name = k8s_str(e, "name"), *value = k8s_str(e, "value");
		const char *field = k8s_str(e, "valueFrom.fieldRef.fieldPath");
		char       *v = NULL;

		if (name == NULL) {
			continue;
		}
		if (value != NULL) {
			v = k8s_expand(value, env);
		} else if (field != NULL && strcmp(field, "metadata.name") == 0) {
			v = strdup(p->name);
		} else if (field != NULL && strcmp(field, "metadata.namespace") == 0) {
			v = strdup(K8S_NAMESPACE);
		} else if (field != NULL && strcmp(field, "status.podIP") == 0) {
			v = strdup(pod_ip);
		} else {
			fprintf(
			    stderr, "k8s: %s: %s: a value the replay cannot give\n", p->name, name);
			json_decref(env);
			return NULL;
		}
		json_object_set_new(env, name, json_string(v != NULL ? v : ""));
		free(v);
	}
	return env;
}

const char *
k8s_program(json_t *c)
{
	json_t     *cmd = json_object_get(c, "command");
	const char *a0 = json_string_value(json_array_get(cmd, 0));
	const char *a1 = json_string_value(json_array_get(cmd, 1));

	if (a0 != NULL && a1 != NULL && strcmp(a0, "/bin/sh") == 0 &&
	    strcmp(a1, "/etc/warble/pod/warble-pod") == 0) {
		return json_string_value(json_array_get(cmd, 2));
	}
	return a0;
}

json_t *
k8s_defaults(const char *prog)
{
	char        bin[512], *out = NULL;
	const char *argv[] = { bin, "--print-defaults", NULL };
	json_t     *d;

	if (wbt_bin_path(bin, sizeof(bin), prog) != 0 ||
	    k8s_run(argv, NULL, wbt_ms(10000), &out, NULL) != 0 || strstr(out, "WARBLE_") == NULL) {
		free(out);
		return NULL;
	}
	d = json_object();
	for (char *save = NULL, *l = strtok_r(out, "\n", &save); l != NULL;
	     l = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(l, '=');
		if (l[0] != '#' && eq != NULL) {
			*eq = '\0';
			json_object_set_new(d, l, json_string(eq + 1));
		}
	}
	free(out);
	return d;
}

int
k8s_url_port(const char *url)
{
	const char *c = url != NULL ? strstr(url, "://") : NULL;
	const char *colon;

	if (c == NULL || (colon = strrchr(c + 3, ':')) == NULL ||
	    !isdigit((unsigned char)colon[1])) {
		return -1;
	}
	return atoi(colon + 1);
}

int
k8s_url_host(const char *url, char *buf, size_t n)
{
	const char *c = url != NULL ? strstr(url, "://") : NULL;
	const char *colon;

	if (c == NULL || (colon = strrchr(c + 3, ':')) == NULL) {
		return -1;
	}
	return (size_t)snprintf(buf, n, "%.*s", (int)(colon - c - 3), c + 3) < n ? 0 : -1;
}

/* k8s_dockerfile returns deploy/Dockerfile's text (malloc'd) or NULL. */
static char *
k8s_dockerfile(void)
{
	return k8s_root() == 0 ? wbt_read_file(K8S_DOCKERFILE) : NULL;
}

int
k8s_image(json_t *env, char *workdir, size_t workdir_len, int *uid)
{
	char *text = k8s_dockerfile(), *stage, *save = NULL;

	if (text == NULL) {
		return -1;
	}
	/* the runtime stage: after the last FROM */
	stage = text;
	for (char *f = strstr(text, "\nFROM "); f != NULL; f = strstr(f + 1, "\nFROM ")) {
		stage = f + 1;
	}
	if (uid != NULL) {
		char *u = strstr(stage, "--uid ");
		*uid = u != NULL ? atoi(u + 6) : -1;
	}
	for (char *l = strtok_r(stage, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
		if (strncmp(l, "ENV ", 4) == 0 && env != NULL) {
			char *eq = strchr(l + 4, '=');
			if (eq != NULL) {
				*eq = '\0';
				json_object_set_new(env, l + 4, json_string(eq + 1));
			}
		} else if (strncmp(l, "WORKDIR ", 8) == 0 && workdir != NULL) {
			snprintf(workdir, workdir_len, "%s", l + 8);
		}
	}
	free(text);
	return 0;
}

bool
k8s_image_has(const char *prog)
{
	char *text = k8s_dockerfile(), pat[256];
	bool  has = false;

	if (text == NULL || prog == NULL) {
		free(text);
		return false;
	}
	for (int i = 0; k8s_base_tools[i] != NULL; i++) {
		const char *base = strrchr(k8s_base_tools[i], '/') + 1;
		if (strcmp(prog, k8s_base_tools[i]) == 0 || strcmp(prog, base) == 0) {
			has = true;
		}
	}
	/* the build stage's make line names each binary the runtime stage copies
	 * from build/bin/ into /usr/local/bin/ */
	if (!has && strstr(text, "COPY --from=build /src/build/bin/ /usr/local/bin/") != NULL) {
		const char *name = strncmp(prog, "/usr/local/bin/", 15) == 0 ? prog + 15 : prog;
		snprintf(pat, sizeof(pat), "build/bin/%s ", name);
		has = strchr(name, '/') == NULL && strstr(text, pat) != NULL;
		snprintf(pat, sizeof(pat), "build/bin/%s\n", name);
		has = has || (strchr(name, '/') == NULL && strstr(text, pat) != NULL);
		snprintf(pat, sizeof(pat), "build/bin/%s \\", name);
		has = has || (strchr(name, '/') == NULL && strstr(text, pat) != NULL);
	}
	free(text);
	return has;
}
