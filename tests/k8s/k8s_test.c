/*
 * k8s_test.c - deploy/k8s checked offline (suite "k8s"): no cluster, the
 * manifests as kustomize renders them, held against the Kubernetes API
 * schemas, the daemons and the image.
 *
 *   render      both overlays render with the pinned kustomize and every
 *               object passes the schemas of Kubernetes 1.33, strictly
 *               (k8s_render.js); kubectl kustomize, where installed,
 *               renders the same objects
 *   schema      a broken overlay (an unknown field, a wrong type) fails
 *   layout      the shard counts: replicas = the ConfigMap's counts, the
 *               overlays' shapes, a headless Service and a PDB per
 *               StatefulSet, the HPA's bounds, each pod's own TLS pair
 *   admin       the toolbox warblectl admin runs in: one pod, the admin
 *               identity, no port, no Service, nothing may reach it, and
 *               it may reach the services' ports
 *   security    every pod non-root (the image's uid), read-only root, no
 *               privilege escalation, no capabilities, seccomp
 *   drift_env   every WARBLE_* variable a container is given (its env,
 *               its ConfigMaps, what warble-pod adds) is an option of its
 *               daemon (--print-defaults), WARBLE_TLS_DIR is where the
 *               pod's own identity is mounted; the toolbox gets what
 *               warblectl admin needs
 *   drift_ports every port the manifests name (containers, probes,
 *               Services, NetworkPolicies, scrape annotations, the lists
 *               warble-pod builds) is one the daemon listens on, each
 *               listen address (WARBLE_METRICS_URL too) on its daemon's
 *               default port and scheme
 *   drift_image every command (containers, probes, preStop) is in the image
 *   wrapper     warble-pod refuses a pod beyond the count, a bad count
 *   make_certs  deploy/make-certs: the files, P-256, the SANs, the chain,
 *               --days, no overwrite, and a mutual TLS 1.3 handshake
 *   scrape      deploy/prometheus/prometheus-k8s.yml's relabelling, run
 *               over what Kubernetes discovery would say of every pod,
 *               makes one target a pod, on its metrics port, labelled with
 *               its service and shard; promtool checks the rest of it
 *
 * The render needs build/k8s-tools (tests/deps.sh: npm ci of
 * tests/k8s/package.json); each test skips, saying so, without it.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "k8s_manifest.h"
#include "wbt.h"

#define KT_DEV     "deploy/k8s/overlays/dev"
#define KT_SHARDED "deploy/k8s/overlays/sharded"
#define KT_POD     "deploy/k8s/base/warble-pod.sh"
#define KT_CERTS   "deploy/make-certs"
#define KT_SCRAPE  "deploy/prometheus/prometheus-k8s.yml"
#define KT_RULES   "deploy/prometheus/warble-alerts.yml"
#define KT_RUN_MS  30000
#define KT_ADMIN   "admin" /* the toolbox's Deployment: no daemon, the admin identity */

static const char *const kt_overlays[] = { KT_DEV, KT_SHARDED };

/* kt_load renders overlay (skipping the test if the tools are missing). */
static json_t *
kt_load(const char *overlay)
{
	static char why[1 << 16];
	json_t     *objs = NULL;
	int         rc = k8s_render(&objs, overlay, false, why, sizeof(why));

	if (rc == K8S_SKIP) {
		cr_skip_test("the Kubernetes tools are not installed (tests/deps.sh): %s", why);
	}
	cr_assert_eq(rc, 0, "%s", why);
	return objs;
}

/* kt_toolbox tells whether p is the admin toolbox (it runs no daemon). */
static bool
kt_toolbox(const k8s_pod *p)
{
	return strcmp(p->workload, KT_ADMIN) == 0;
}

/* kt_service returns the service a program serves ("warble-relation" -> "relation"). */
static const char *
kt_service(const char *prog)
{
	return strncmp(prog, "warble-", 7) == 0 ? prog + 7 : prog;
}

/* kt_port_named returns container c's containerPort named name, or -1. */
static int
kt_port_named(json_t *c, const char *name)
{
	size_t  i;
	json_t *p;

	json_array_foreach(json_object_get(c, "ports"), i, p)
	{
		const char *n = k8s_str(p, "name");
		if (n != NULL && strcmp(n, name) == 0) {
			return (int)json_integer_value(json_object_get(p, "containerPort"));
		}
	}
	return -1;
}

/* kt_has_port tells whether container c declares containerPort port. */
static bool
kt_has_port(json_t *c, int port)
{
	size_t  i;
	json_t *p;

	json_array_foreach(json_object_get(c, "ports"), i, p)
	{
		if (json_integer_value(json_object_get(p, "containerPort")) == port) {
			return true;
		}
	}
	return false;
}

/* kt_labels_match tells whether every label of selector is in labels. */
static bool
kt_labels_match(json_t *selector, json_t *labels)
{
	const char *k;
	json_t     *v;

	if (selector == NULL || json_object_size(selector) == 0) {
		return selector != NULL;
	}
	json_object_foreach(selector, k, v)
	{
		if (!json_equal(v, json_object_get(labels, k))) {
			return false;
		}
	}
	return true;
}

/* kt_wrapper_env runs warble-pod --env for prog with env and adds what it prints to env. */
static void
kt_wrapper_env(json_t *env, const char *prog, const char *pod)
{
	char        bindir[512], path[1200], *out = NULL, *err = NULL;
	const char *key;
	json_t     *v;
	char      **envp;
	size_t      n = 0;
	const char *argv[] = { "/bin/sh", KT_POD, "--env", prog, NULL };

	cr_assert_eq(wbt_bin_path(bindir, sizeof(bindir), prog), 0, "no %s in the build", prog);
	*strrchr(bindir, '/') = '\0';
	envp = calloc(json_object_size(env) + 2, sizeof(char *));
	cr_assert_not_null(envp);
	json_object_foreach(env, key, v)
	{
		if (strcmp(key, "PATH") != 0 &&
		    asprintf(&envp[n], "%s=%s", key, json_string_value(v)) > 0) {
			n++;
		}
	}
	snprintf(path, sizeof(path), "PATH=%s:/usr/bin:/bin", bindir);
	envp[n++] = path;
	int rc = k8s_run(argv, (const char *const *)envp, wbt_ms(KT_RUN_MS), &out, &err);
	cr_assert_eq(rc, 0, "%s: warble-pod --env %s exited %d: %s", pod, prog, rc, err);
	for (char *save = NULL, *l = strtok_r(out, "\n", &save); l != NULL;
	     l = strtok_r(NULL, "\n", &save)) {
		char *eq = strchr(l, '=');
		cr_assert_not_null(eq, "%s: warble-pod --env printed '%s'", pod, l);
		*eq = '\0';
		json_object_set_new(env, l, json_string(eq + 1));
	}
	for (size_t i = 0; i + 1 < n; i++) {
		free(envp[i]);
	}
	free(envp);
	free(out);
	free(err);
}

/* kt_full_env returns container c's environment as the daemon sees it: the kubelet's, then warble-pod's. */
static json_t *
kt_full_env(json_t *objs, const k8s_pod *p, json_t *c)
{
	json_t     *env = k8s_env(objs, p, c, "10.0.0.1");
	const char *prog = k8s_program(c);

	cr_assert_not_null(env, "%s: its environment cannot be worked out", p->name);
	cr_assert_not_null(prog, "%s: no command", p->name);
	if (strcmp(prog, json_string_value(json_array_get(json_object_get(c, "command"), 0))) !=
	    0) {
		kt_wrapper_env(env, prog, p->name);
	}
	return env;
}

Test(k8s, render, .timeout = 180)
{
	for (size_t i = 0; i < sizeof(kt_overlays) / sizeof(*kt_overlays); i++) {
		json_t *objs = kt_load(kt_overlays[i]), *other = NULL;
		char    why[1 << 14];
		int     rc;

		cr_assert_gt(json_array_size(objs), 10, "%s rendered %zu objects", kt_overlays[i],
		    json_array_size(objs));
		if (access("/usr/bin/kubectl", X_OK) == 0 ||
		    access("/usr/local/bin/kubectl", X_OK) == 0) {
			rc = k8s_render(&other, kt_overlays[i], true, why, sizeof(why));
			cr_assert_eq(rc, 0, "kubectl kustomize %s: %s", kt_overlays[i], why);
			cr_assert(json_equal(objs, other),
			    "kubectl kustomize and kustomize 4.5.4 render %s differently",
			    kt_overlays[i]);
			json_decref(other);
		} else {
			fprintf(stderr,
			    "k8s::render: no kubectl here: %s rendered by kustomize alone\n",
			    kt_overlays[i]);
		}
		json_decref(objs);
	}
}

Test(k8s, schema, .timeout = 120)
{
	char    dir[600], file[700], why[1 << 14], abs[512], rel[1200] = "";
	json_t *objs = NULL;

	json_decref(kt_load(KT_DEV)); /* skips without the tools */
	cr_assert_not_null(getcwd(abs, sizeof(abs)));
	cr_assert_eq(wbt_path(dir, sizeof(dir), "broken"), 0);
	/* kustomize takes a base by a relative path only */
	for (const char *s = dir; *s != '\0'; s++) {
		if (*s == '/') {
			strcat(rel, "../");
		}
	}
	strcat(rel, abs + 1);
	cr_assert_eq(mkdir(dir, 0755), 0);
	snprintf(file, sizeof(file), "%s/kustomization.yaml", dir);
	FILE *f = fopen(file, "w");
	cr_assert_not_null(f);
	fprintf(f,
	    "resources: [%s/deploy/k8s/base]\n"
	    "patches:\n"
	    "  - target: {kind: StatefulSet, name: relation}\n"
	    "    patch: |-\n"
	    "      - op: add\n"
	    "        path: /spec/template/spec/containers/0/readinesProbe\n"
	    "        value: {periodSeconds: 5}\n"
	    "      - op: replace\n"
	    "        path: /spec/template/spec/containers/0/ports/0/containerPort\n"
	    "        value: rpc\n",
	    rel);
	fclose(f);
	cr_assert_eq(
	    k8s_render(&objs, dir, false, why, sizeof(why)), -1, "a broken overlay passed");
	cr_assert(strstr(why, "readinesProbe: unknown field") != NULL, "%s", why);
	cr_assert(strstr(why, "containerPort must be integer") != NULL, "%s", why);
}

Test(k8s, layout, .timeout = 120)
{
	static const struct {
		const char *overlay;
		int         relation, content, inbox, gw_min, gw_max;
	} shapes[] = { { KT_DEV, 1, 1, 1, 1, 1 }, { KT_SHARDED, 2, 2, 4, 2, 8 } };

	for (size_t s = 0; s < sizeof(shapes) / sizeof(*shapes); s++) {
		json_t     *objs = kt_load(shapes[s].overlay);
		json_t     *counts = k8s_get(k8s_find(objs, "ConfigMap", "warble-shards"), "data");
		json_t     *hpa = k8s_find(objs, "HorizontalPodAutoscaler", "gateway");
		const char *names[] = { "user", "relation", "content", "inbox" };
		const char *keys[] = { NULL, "RELATION_SHARDS", "CONTENT_SHARDS", "INBOX_SHARDS" };
		int         want[] = { 1, shapes[s].relation, shapes[s].content, shapes[s].inbox };

		cr_assert_not_null(counts, "%s: no ConfigMap warble-shards", shapes[s].overlay);
		for (int i = 0; i < 4; i++) {
			json_t *ss = k8s_find(objs, "StatefulSet", names[i]);
			json_t *svc = k8s_find(objs, "Service", names[i]);
			json_t *pdb = k8s_find(objs, "PodDisruptionBudget", names[i]);
			json_t *labels = k8s_get(ss, "spec.template.metadata.labels");
			int     replicas = (int)json_integer_value(k8s_get(ss, "spec.replicas"));

			cr_assert_not_null(
			    ss, "%s: no StatefulSet %s", shapes[s].overlay, names[i]);
			cr_assert_eq(replicas, want[i], "%s: %s has %d replicas, not %d",
			    shapes[s].overlay, names[i], replicas, want[i]);
			if (keys[i] != NULL) {
				const char *n = k8s_str(counts, keys[i]);
				cr_assert(n != NULL && atoi(n) == replicas,
				    "%s: %s=%s but the StatefulSet %s has %d replicas",
				    shapes[s].overlay, keys[i], n ? n : "(none)", names[i],
				    replicas);
			}
			cr_assert_str_eq(k8s_str(ss, "spec.serviceName"), names[i]);
			cr_assert_not_null(svc, "%s: no Service %s", shapes[s].overlay, names[i]);
			cr_assert_str_eq(
			    k8s_str(svc, "spec.clusterIP"), "None", "%s: not headless", names[i]);
			cr_assert(json_is_true(k8s_get(svc, "spec.publishNotReadyAddresses")));
			cr_assert(kt_labels_match(k8s_get(svc, "spec.selector"), labels));
			cr_assert(
			    kt_labels_match(k8s_get(ss, "spec.selector.matchLabels"), labels));
			cr_assert_not_null(
			    pdb, "%s: no PodDisruptionBudget %s", shapes[s].overlay, names[i]);
			cr_assert(
			    kt_labels_match(k8s_get(pdb, "spec.selector.matchLabels"), labels));
			cr_assert_str_eq(
			    k8s_str(json_array_get(k8s_get(ss, "spec.volumeClaimTemplates"), 0),
			        "metadata.name"),
			    "data");
		}
		cr_assert_not_null(hpa);
		cr_assert_str_eq(k8s_str(hpa, "spec.scaleTargetRef.kind"), "Deployment");
		cr_assert_eq(
		    json_integer_value(k8s_get(hpa, "spec.minReplicas")), shapes[s].gw_min);
		cr_assert_eq(
		    json_integer_value(k8s_get(hpa, "spec.maxReplicas")), shapes[s].gw_max);
		cr_assert_null(k8s_get(k8s_find(objs, "Deployment", "gateway"), "spec.replicas"),
		    "the gateway's replicas are the HPA's");

		/* each pod mounts its own TLS pair and the CA, nothing else */
		k8s_pod pods[K8S_PODS_MAX];
		int     n = k8s_pods(objs, pods, K8S_PODS_MAX);
		for (int i = 0; i < n; i++) {
			size_t  j;
			json_t *v, *tls = NULL, *items;
			char    pem[64], key[64];

			json_array_foreach(json_object_get(pods[i].spec, "volumes"), j, v)
			{
				if (k8s_str(v, "secret.secretName") != NULL) {
					cr_assert_str_eq(
					    k8s_str(v, "secret.secretName"), "warble-tls");
					tls = v;
				}
			}
			cr_assert_not_null(tls, "%s mounts no TLS Secret", pods[i].name);
			items = k8s_get(tls, "secret.items");
			snprintf(pem, sizeof(pem), "%s.pem", pods[i].workload);
			snprintf(key, sizeof(key), "%s.key", pods[i].workload);
			cr_assert_eq(json_array_size(items), 3, "%s: %zu TLS files", pods[i].name,
			    json_array_size(items));
			const char *want_keys[] = { "ca.pem", pem, key };
			for (j = 0; j < 3; j++) {
				cr_assert_str_eq(
				    k8s_str(json_array_get(items, j), "key"), want_keys[j]);
				cr_assert_str_eq(
				    k8s_str(json_array_get(items, j), "path"), want_keys[j]);
			}
		}
		json_decref(objs);
	}
}

/* kt_selects tells whether NetworkPolicy np applies to pod p. */
static bool
kt_selects(json_t *np, const k8s_pod *p)
{
	json_t *sel = k8s_get(np, "spec.podSelector.matchLabels");
	json_t *labels = k8s_get(p->obj, "spec.template.metadata.labels");

	return sel == NULL || json_object_size(sel) == 0 || kt_labels_match(sel, labels);
}

/* kt_has_str tells whether JSON array a holds the string s. */
static bool
kt_has_str(json_t *a, const char *s)
{
	size_t  i;
	json_t *v;

	json_array_foreach(a, i, v)
	{
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0) {
			return true;
		}
	}
	return false;
}

Test(k8s, admin, .timeout = 120)
{
	for (size_t o = 0; o < sizeof(kt_overlays) / sizeof(*kt_overlays); o++) {
		json_t     *objs = kt_load(kt_overlays[o]), *dep, *x, *c;
		const char *ov = kt_overlays[o];
		k8s_pod     pods[K8S_PODS_MAX], *admin = NULL;
		int         n = k8s_pods(objs, pods, K8S_PODS_MAX);
		size_t      i;
		bool        closed = false, out_rpc = false;

		/* one toolbox, always there, never two at once */
		dep = k8s_find(objs, "Deployment", KT_ADMIN);
		cr_assert_not_null(dep, "%s: no Deployment %s", ov, KT_ADMIN);
		cr_assert_eq(json_integer_value(k8s_get(dep, "spec.replicas")), 1, "%s", ov);
		cr_assert_str_eq(k8s_str(dep, "spec.strategy.type"), "Recreate", "%s", ov);
		for (int k = 0; k < n; k++) {
			if (kt_toolbox(&pods[k])) {
				cr_assert_null(admin, "%s: two toolboxes", ov);
				admin = &pods[k];
			}
		}
		cr_assert_not_null(admin);
		c = json_array_get(json_object_get(admin->spec, "containers"), 0);
		cr_assert_eq(json_array_size(json_object_get(admin->spec, "containers")), 1);
		/* it idles: the image's shell, which a SIGTERM ends */
		cr_assert_str_eq(
		    k8s_program(c), "/bin/sh", "%s: the toolbox runs %s", ov, k8s_program(c));
		cr_assert(
		    strstr(json_string_value(json_array_get(json_object_get(c, "command"), 2)),
		        "trap ") != NULL,
		    "%s: the toolbox's first process ignores SIGTERM", ov);
		/* it serves nothing: no port, no probe, no Service, no scrape */
		cr_assert_eq(json_array_size(json_object_get(c, "ports")), 0);
		cr_assert_null(json_object_get(c, "readinessProbe"));
		cr_assert_null(json_object_get(c, "livenessProbe"));
		json_array_foreach(objs, i, x)
		{
			const char *kind = k8s_str(x, "kind"), *name = k8s_str(x, "metadata.name");
			json_t     *labels = k8s_get(admin->obj, "spec.template.metadata.labels");

			if (strcmp(kind, "Service") == 0) {
				cr_assert(!kt_labels_match(k8s_get(x, "spec.selector"), labels),
				    "%s: the Service %s reaches the toolbox", ov, name);
			}
			if (strcmp(kind, "HorizontalPodAutoscaler") == 0) {
				cr_assert_str_neq(k8s_str(x, "spec.scaleTargetRef.name"), KT_ADMIN);
			}
			if (strcmp(kind, "NetworkPolicy") != 0 || !kt_selects(x, admin)) {
				continue;
			}
			/* nothing may reach it: a rule that selects it opens only ports
			 * named by the pods that have them, none of which it has */
			json_t *rule, *pp;
			size_t  r, q;
			json_array_foreach(k8s_get(x, "spec.ingress"), r, rule)
			{
				cr_assert_gt(json_array_size(json_object_get(rule, "ports")), 0,
				    "%s: NetworkPolicy %s opens every port of the toolbox", ov,
				    name);
				json_array_foreach(json_object_get(rule, "ports"), q, pp)
				{
					const char *pn = k8s_str(pp, "port");
					cr_assert(pn != NULL && kt_port_named(c, pn) < 0,
					    "%s: NetworkPolicy %s opens a port on the toolbox", ov,
					    name);
				}
			}
			closed = closed || kt_has_str(k8s_get(x, "spec.policyTypes"), "Ingress");
			/* it may reach the services' ports, and only Warble's pods and the DNS */
			if (kt_has_str(k8s_get(x, "spec.policyTypes"), "Egress")) {
				json_t *peer;
				size_t  t;
				json_array_foreach(k8s_get(x, "spec.egress"), r, rule)
				{
					json_t *to = json_object_get(rule, "to");
					json_array_foreach(to, t, peer)
					{
						json_t *ps =
						    k8s_get(peer, "podSelector.matchLabels");
						cr_assert(ps != NULL && json_object_size(peer) == 1,
						    "%s: %s lets the toolbox out beyond Warble's "
						    "pods",
						    ov, name);
						for (int k = 0; k < n; k++) {
							cr_assert(
							    kt_toolbox(&pods[k]) ||
							        kt_labels_match(ps,
							            k8s_get(pods[k].obj,
							                "spec.template.metadata."
							                "labels")),
							    "%s: %s keeps the toolbox from %s", ov,
							    name, pods[k].name);
						}
					}
					json_array_foreach(json_object_get(rule, "ports"), q, pp)
					{
						json_t *port = json_object_get(pp, "port");
						if (json_array_size(to) > 0) {
							out_rpc =
							    out_rpc ||
							    (json_is_string(port) &&
							        strcmp(json_string_value(port),
							            "rpc") == 0);
						} else {
							cr_assert_eq(json_integer_value(port), 53,
							    "%s: %s lets the toolbox out to port "
							    "%lld "
							    "anywhere (the DNS's 53 alone)",
							    ov, name, json_integer_value(port));
						}
					}
				}
			}
		}
		cr_assert(closed, "%s: no NetworkPolicy closes the toolbox to ingress", ov);
		cr_assert(out_rpc, "%s: the toolbox may not reach the services' ports rpc", ov);
		json_decref(objs);
	}
}

Test(k8s, security, .timeout = 120)
{
	json_t *objs = kt_load(KT_SHARDED);
	k8s_pod pods[K8S_PODS_MAX];
	int     n = k8s_pods(objs, pods, K8S_PODS_MAX), uid = -1;
	char    workdir[256] = "";

	cr_assert_eq(k8s_image(NULL, workdir, sizeof(workdir), &uid), 0);
	cr_assert_gt(uid, 0, "deploy/Dockerfile names no --uid for its user");
	for (int i = 0; i < n; i++) {
		json_t *ps = json_object_get(pods[i].spec, "securityContext"), *c;
		size_t  j;

		cr_assert(json_is_true(json_object_get(ps, "runAsNonRoot")), "%s", pods[i].name);
		cr_assert_eq(json_integer_value(json_object_get(ps, "runAsUser")), uid,
		    "%s: runAsUser is not the image's uid %d", pods[i].name, uid);
		cr_assert_eq(json_integer_value(json_object_get(ps, "fsGroup")), uid);
		cr_assert_str_eq(k8s_str(ps, "seccompProfile.type"), "RuntimeDefault");
		cr_assert(
		    json_is_false(json_object_get(pods[i].spec, "automountServiceAccountToken")));
		json_array_foreach(json_object_get(pods[i].spec, "containers"), j, c)
		{
			json_t *sc = json_object_get(c, "securityContext");
			cr_assert(json_is_false(json_object_get(sc, "allowPrivilegeEscalation")));
			cr_assert(json_is_true(json_object_get(sc, "readOnlyRootFilesystem")));
			cr_assert_str_eq(
			    json_string_value(json_array_get(k8s_get(sc, "capabilities.drop"), 0)),
			    "ALL");
			cr_assert_not_null(
			    k8s_get(c, "resources.requests.cpu"), "%s", pods[i].name);
			cr_assert_not_null(
			    k8s_get(c, "resources.requests.memory"), "%s", pods[i].name);
			cr_assert_not_null(k8s_get(c, "resources.limits.cpu"), "%s", pods[i].name);
			cr_assert_not_null(
			    k8s_get(c, "resources.limits.memory"), "%s", pods[i].name);
			if (!kt_toolbox(&pods[i])) { /* the toolbox serves nothing to probe */
				cr_assert_not_null(
				    json_object_get(c, "readinessProbe"), "%s", pods[i].name);
				cr_assert_not_null(
				    json_object_get(c, "livenessProbe"), "%s", pods[i].name);
			}
		}
		cr_assert_lt(
		    json_integer_value(k8s_get(pods[i].spec, "terminationGracePeriodSeconds")), 31,
		    "%s: the daemons stop within a second", pods[i].name);
	}
	json_decref(objs);
}

/* kt_tls_dir returns where c mounts the Secret warble-tls (or NULL), its items in *items. */
static const char *
kt_tls_dir(const k8s_pod *p, json_t *c, json_t **items)
{
	json_t *m, *v;
	size_t  i, j;

	json_array_foreach(json_object_get(c, "volumeMounts"), i, m)
	{
		json_array_foreach(json_object_get(p->spec, "volumes"), j, v)
		{
			const char *sn = k8s_str(v, "secret.secretName");
			if (strcmp(k8s_str(v, "name"), k8s_str(m, "name")) == 0 && sn != NULL &&
			    strcmp(sn, "warble-tls") == 0) {
				*items = k8s_get(v, "secret.items");
				return k8s_str(m, "mountPath");
			}
		}
	}
	return NULL;
}

/* kt_check_tls_env holds WARBLE_TLS_DIR in env to where the pod mounts its own identity's pair. */
static void
kt_check_tls_env(const k8s_pod *p, json_t *c, json_t *env)
{
	const char *dir = json_string_value(json_object_get(env, "WARBLE_TLS_DIR"));
	json_t     *items = NULL, *it;
	const char *mounted = kt_tls_dir(p, c, &items);
	char        pem[80];
	bool        has = false;
	size_t      i;

	cr_assert(dir != NULL && dir[0] != '\0', "%s: no WARBLE_TLS_DIR: TLS is off", p->name);
	cr_assert_not_null(mounted, "%s mounts no TLS Secret", p->name);
	cr_assert_str_eq(
	    dir, mounted, "%s: WARBLE_TLS_DIR=%s, but the Secret is on %s", p->name, dir, mounted);
	snprintf(pem, sizeof(pem), "%s.pem", p->workload);
	json_array_foreach(items, i, it)
	{
		has = has || strcmp(k8s_str(it, "path"), pem) == 0;
	}
	cr_assert(has, "%s: no %s in %s", p->name, pem, dir);
}

/* kt_check_env holds one container's variables to its daemon's options. */
static void
kt_check_env(json_t *objs, const k8s_pod *p, json_t *c)
{
	json_t     *env = kt_full_env(objs, p, c);
	const char *prog = k8s_program(c), *key;
	json_t     *defs = k8s_defaults(prog), *v;

	cr_assert_not_null(defs, "%s: %s has no --print-defaults", p->name, prog);
	json_object_foreach(env, key, v)
	{
		/* the image's own ENV (WARBLE_DATA) reaches every container, as under compose */
		cr_assert(strncmp(key, "WARBLE_", 7) != 0 || json_object_get(defs, key) != NULL ||
		              strcmp(key, "WARBLE_DATA") == 0,
		    "%s: %s is given %s, which it does not read (warble-%s --print-defaults)",
		    p->name, prog, key, kt_service(prog));
	}
	/* what the manifests set on top of the image must be read */
	json_t *mine = k8s_env(objs, p, c, "10.0.0.1");
	json_t *image = json_object();
	k8s_image(image, NULL, 0, NULL);
	json_object_foreach(mine, key, v)
	{
		if (strncmp(key, "WARBLE_", 7) == 0 && json_object_get(image, key) == NULL) {
			cr_assert(json_object_get(defs, key) != NULL,
			    "%s: the manifests set %s, which %s does not read", p->name, key, prog);
		}
	}
	kt_check_tls_env(p, c, env);
	json_decref(image);
	json_decref(mine);
	json_decref(defs);
	json_decref(env);
}

/* kt_toolbox_env returns what warblectl sees in the toolbox: the kubelet's, then warble-pod's. */
static json_t *
kt_toolbox_env(json_t *objs, const k8s_pod *p, json_t *c)
{
	json_t *env = k8s_env(objs, p, c, "10.0.0.1");

	cr_assert_not_null(env, "%s: its environment cannot be worked out", p->name);
	kt_wrapper_env(env, "warblectl", p->name);
	return env;
}

/*
 * kt_check_toolbox_env holds the toolbox's variables to what warblectl
 * admin reads: the daemons' own names for the same things (warblectl
 * takes the services' addresses under the names their daemons listen on,
 * proto/wb_services.h), every service's address list from warble-pod, and
 * WARBLE_TLS_DIR on the admin identity.
 */
static void
kt_check_toolbox_env(json_t *objs, const k8s_pod *p, json_t *c)
{
	const char *daemons[] = { "warble-gateway", "warble-user", "warble-relation",
		"warble-content", "warble-inbox" };
	const char *lists[] = { "WARBLE_USER_URL", "WARBLE_RELATION_URLS", "WARBLE_CONTENT_URLS",
		"WARBLE_INBOX_URLS" };
	json_t     *env = kt_toolbox_env(objs, p, c), *known = json_object(), *v;
	const char *key;

	for (size_t d = 0; d < sizeof(daemons) / sizeof(*daemons); d++) {
		json_t *defs = k8s_defaults(daemons[d]);
		cr_assert_not_null(defs, "%s has no --print-defaults", daemons[d]);
		json_object_update(known, defs);
		json_decref(defs);
	}
	json_object_foreach(env, key, v)
	{
		cr_assert(strncmp(key, "WARBLE_", 7) != 0 || json_object_get(known, key) != NULL,
		    "%s is given %s, which no Warble program reads", p->name, key);
		cr_assert(strncmp(key, "WARBLE_", 7) != 0 ||
		              strncmp(json_string_value(v), "tcp://0.0.0.0", 13) != 0,
		    "%s: %s=%s: the toolbox listens on nothing", p->name, key,
		    json_string_value(v));
	}
	for (size_t l = 0; l < sizeof(lists) / sizeof(*lists); l++) {
		cr_assert_not_null(json_object_get(env, lists[l]),
		    "%s: warblectl admin gets no %s (warble-pod --env warblectl)", p->name,
		    lists[l]);
	}
	kt_check_tls_env(p, c, env);
	json_decref(known);
	json_decref(env);
}

Test(k8s, drift_env, .timeout = 180)
{
	for (size_t o = 0; o < sizeof(kt_overlays) / sizeof(*kt_overlays); o++) {
		json_t *objs = kt_load(kt_overlays[o]);
		k8s_pod pods[K8S_PODS_MAX];
		int     n = k8s_pods(objs, pods, K8S_PODS_MAX), toolboxes = 0;

		for (int i = 0; i < n; i++) {
			json_t *c;
			size_t  j;
			json_array_foreach(json_object_get(pods[i].spec, "containers"), j, c)
			{
				if (kt_toolbox(&pods[i])) {
					kt_check_toolbox_env(objs, &pods[i], c);
					toolboxes++;
				} else {
					kt_check_env(objs, &pods[i], c);
				}
			}
		}
		cr_assert_eq(toolboxes, 1, "%s: %d admin toolboxes", kt_overlays[o], toolboxes);
		json_decref(objs);
	}
}

/* kt_scheme_is tells whether url and other start with the same scheme ("http://"). */
static bool
kt_scheme_is(const char *url, const char *other)
{
	const char *a = strstr(url, "://"), *b = strstr(other, "://");

	return a != NULL && b != NULL && a - url == b - other &&
	       strncmp(url, other, (size_t)(a - url)) == 0;
}

/* kt_check_lists holds each address list warble-pod put in env to the ports of the pods named. */
static void
kt_check_lists(json_t *objs, const k8s_pod *p, json_t *env)
{
	const char *lists[][3] = { { "WARBLE_USER_URL", "user", "rpc" },
		{ "WARBLE_RELATION_URLS", "relation", "rpc" },
		{ "WARBLE_CONTENT_URLS", "content", "rpc" },
		{ "WARBLE_INBOX_URLS", "inbox", "rpc" },
		{ "WARBLE_RELATION_PUB_URLS", "relation", "events" },
		{ "WARBLE_CONTENT_PUB_URLS", "content", "events" },
		{ "WARBLE_USER_PUB_URL", "user", "events" } };
	char        host[128];

	for (size_t l = 0; l < sizeof(lists) / sizeof(*lists); l++) {
		const char *val = json_string_value(json_object_get(env, lists[l][0]));
		json_t     *target = k8s_find(objs, "StatefulSet", lists[l][1]);
		json_t *tc = json_array_get(k8s_get(target, "spec.template.spec.containers"), 0);
		char    buf[4096];
		int     idx = 0;

		if (val == NULL || strncmp(val, "tcp://0.0.0.0", 13) == 0) {
			continue;
		}
		snprintf(buf, sizeof(buf), "%s", val);
		for (char *save = NULL, *u = strtok_r(buf, ",", &save); u != NULL;
		     u = strtok_r(NULL, ",", &save), idx++) {
			char want[128];
			snprintf(want, sizeof(want), "%s-%d.%s", lists[l][1], idx, lists[l][1]);
			cr_assert(
			    k8s_url_host(u, host, sizeof(host)) == 0 && strcmp(host, want) == 0,
			    "%s: %s entry %d is %s", p->name, lists[l][0], idx, u);
			cr_assert_eq(k8s_url_port(u), kt_port_named(tc, lists[l][2]),
			    "%s: %s dials %s, not %s's %s port", p->name, lists[l][0], u,
			    lists[l][1], lists[l][2]);
		}
		cr_assert_eq(idx, (int)json_integer_value(k8s_get(target, "spec.replicas")),
		    "%s: %s lists %d shards", p->name, lists[l][0], idx);
	}
}

/* kt_check_toolbox_ports holds the toolbox to listen on nothing, its lists to the pods' ports. */
static void
kt_check_toolbox_ports(json_t *objs, const k8s_pod *p, json_t *c)
{
	json_t *env = kt_toolbox_env(objs, p, c);
	json_t *anns = k8s_get(p->obj, "spec.template.metadata.annotations");

	cr_assert_eq(
	    json_array_size(json_object_get(c, "ports")), 0, "%s declares a port", p->name);
	cr_assert_null(json_object_get(anns, "prometheus.io/scrape"),
	    "%s has no metrics port to scrape", p->name);
	kt_check_lists(objs, p, env);
	json_decref(env);
}

/* kt_check_ports holds one container's ports to what its daemon listens on. */
static void
kt_check_ports(json_t *objs, const k8s_pod *p, json_t *c)
{
	json_t     *env = kt_full_env(objs, p, c), *defs, *v, *port;
	const char *prog = k8s_program(c), *key;
	size_t      i;
	char        host[128];

	defs = k8s_defaults(prog);
	cr_assert_not_null(defs);
	/* every listen address (0.0.0.0) is declared, at the daemon's default port and scheme */
	json_object_foreach(env, key, v)
	{
		const char *url = json_string_value(v), *def;
		int         want;

		if (strncmp(key, "WARBLE_", 7) != 0 || k8s_url_host(url, host, sizeof(host)) != 0 ||
		    strcmp(host, "0.0.0.0") != 0) {
			continue;
		}
		def = json_string_value(json_object_get(defs, key));
		cr_assert_not_null(def, "%s: %s is no option of %s", p->name, key, prog);
		want = k8s_url_port(def);
		cr_assert_eq(k8s_url_port(url), want, "%s: %s=%s, but %s's default port is %d",
		    p->name, key, url, prog, want);
		cr_assert(kt_scheme_is(url, def), "%s: %s=%s, but %s's default is %s", p->name, key,
		    url, prog, def);
		cr_assert(kt_has_port(c, want), "%s listens on %d (%s) but does not declare it",
		    p->name, want, key);
	}
	/* the admin HTTP port (/metrics, /healthz, /readyz) is the port named metrics */
	const char *murl = json_string_value(json_object_get(env, "WARBLE_METRICS_URL"));
	cr_assert_not_null(
	    murl, "%s: no WARBLE_METRICS_URL: its metrics stay on loopback", p->name);
	cr_assert(k8s_url_host(murl, host, sizeof(host)) == 0 && strcmp(host, "0.0.0.0") == 0,
	    "%s: WARBLE_METRICS_URL=%s is not reached from outside the pod", p->name, murl);
	cr_assert_eq(k8s_url_port(murl), kt_port_named(c, "metrics"),
	    "%s: WARBLE_METRICS_URL=%s, but its port metrics is %d", p->name, murl,
	    kt_port_named(c, "metrics"));
	/* every declared port is listened on */
	json_array_foreach(json_object_get(c, "ports"), i, port)
	{
		int         cp = (int)json_integer_value(json_object_get(port, "containerPort"));
		bool        found = false;
		const char *k2;
		json_t     *v2;

		json_object_foreach(env, k2, v2)
		{
			if (strncmp(k2, "WARBLE_", 7) == 0 &&
			    k8s_url_host(json_string_value(v2), host, sizeof(host)) == 0 &&
			    strcmp(host, "0.0.0.0") == 0 &&
			    k8s_url_port(json_string_value(v2)) == cp) {
				found = true;
			}
		}
		cr_assert(
		    found, "%s declares port %d, on which %s does not listen", p->name, cp, prog);
	}
	/* the probes ping the daemon's main port on loopback */
	const char *probes[] = { "startupProbe", "readinessProbe", "livenessProbe" };
	for (int k = 0; k < 3; k++) {
		json_t *cmd = k8s_get(json_object_get(c, probes[k]), "exec.command");
		if (cmd != NULL) {
			const char *url =
			    json_string_value(json_array_get(cmd, json_array_size(cmd) - 1));
			cr_assert(k8s_url_host(url, host, sizeof(host)) == 0 &&
			              strcmp(host, "127.0.0.1") == 0,
			    "%s %s: %s", p->name, probes[k], url);
			cr_assert(kt_has_port(c, k8s_url_port(url)),
			    "%s %s pings %s, no port of it", p->name, probes[k], url);
		}
	}
	/* the scrape annotations name the metrics port */
	json_t     *anns = k8s_get(p->obj, "spec.template.metadata.annotations");
	const char *ann = json_string_value(json_object_get(anns, "prometheus.io/port"));
	cr_assert_not_null(ann, "%s: no prometheus.io/port", p->name);
	cr_assert_eq(
	    atoi(ann), kt_port_named(c, "metrics"), "%s: prometheus.io/port %s", p->name, ann);
	cr_assert_str_eq(json_string_value(json_object_get(anns, "prometheus.io/scrape")), "true");
	/* each address warble-pod built dials a declared port of that pod */
	kt_check_lists(objs, p, env);
	json_decref(defs);
	json_decref(env);
}

Test(k8s, drift_ports, .timeout = 180)
{
	json_t *objs = kt_load(KT_SHARDED), *o;
	k8s_pod pods[K8S_PODS_MAX];
	int     n = k8s_pods(objs, pods, K8S_PODS_MAX);
	size_t  i;

	for (int k = 0; k < n; k++) {
		json_t *c;
		size_t  j;
		json_array_foreach(json_object_get(pods[k].spec, "containers"), j, c)
		{
			if (kt_toolbox(&pods[k])) {
				kt_check_toolbox_ports(objs, &pods[k], c);
			} else {
				kt_check_ports(objs, &pods[k], c);
			}
		}
	}
	/* Services and NetworkPolicies name ports the pods they select declare */
	json_array_foreach(objs, i, o)
	{
		const char *kind = k8s_str(o, "kind"), *name = k8s_str(o, "metadata.name");
		json_t     *sel = NULL, *rules = NULL, *rule, *pp;
		size_t      r, q;
		int         matched = 0;

		if (strcmp(kind, "Service") == 0) {
			sel = k8s_get(o, "spec.selector");
		} else if (strcmp(kind, "NetworkPolicy") == 0) {
			sel = k8s_get(o, "spec.podSelector.matchLabels");
			rules = k8s_get(o, "spec.ingress");
		} else {
			continue;
		}
		for (int k = 0; k < n; k++) {
			json_t *labels = k8s_get(pods[k].obj, "spec.template.metadata.labels");
			json_t *c = json_array_get(json_object_get(pods[k].spec, "containers"), 0);
			if (sel != NULL && json_object_size(sel) > 0 &&
			    !kt_labels_match(sel, labels)) {
				continue;
			}
			matched++;
			json_array_foreach(k8s_get(o, "spec.ports"), q, pp)
			{
				json_t *tp = json_object_get(pp, "targetPort");
				int     port = json_is_string(tp)
				                   ? kt_port_named(c, json_string_value(tp))
				                   : (int)json_integer_value(tp);
				cr_assert_gt(port, 0,
				    "Service %s: targetPort of %s is no port of it", name,
				    pods[k].name);
				cr_assert_eq(port, json_integer_value(json_object_get(pp, "port")),
				    "Service %s: port %lld reaches %d on %s", name,
				    json_integer_value(json_object_get(pp, "port")), port,
				    pods[k].name);
			}
		}
		cr_assert_gt(matched, 0, "%s %s selects no pod", kind, name);
		json_array_foreach(rules, r, rule)
		{
			json_array_foreach(json_object_get(rule, "ports"), q, pp)
			{
				json_t *port = json_object_get(pp, "port");
				bool    somewhere = false;
				for (int k = 0; k < n; k++) {
					json_t *labels =
					    k8s_get(pods[k].obj, "spec.template.metadata.labels");
					json_t *c = json_array_get(
					    json_object_get(pods[k].spec, "containers"), 0);
					if (kt_labels_match(sel, labels) &&
					    (json_is_string(port)
					            ? kt_port_named(c, json_string_value(port)) > 0
					            : kt_has_port(
					                  c, (int)json_integer_value(port)))) {
						somewhere = true;
					}
				}
				cr_assert(somewhere,
				    "NetworkPolicy %s opens a port no pod it selects has", name);
			}
		}
		/* an egress rule to Warble's pods names ports some of them have */
		json_array_foreach(k8s_get(o, "spec.egress"), r, rule)
		{
			json_t *peer;
			size_t  t;
			json_array_foreach(json_object_get(rule, "to"), t, peer)
			{
				json_t *tsel = k8s_get(peer, "podSelector.matchLabels");
				json_array_foreach(
				    tsel != NULL ? json_object_get(rule, "ports") : NULL, q, pp)
				{
					json_t *port = json_object_get(pp, "port");
					bool    somewhere = false;
					for (int k = 0; k < n; k++) {
						json_t *labels = k8s_get(
						    pods[k].obj, "spec.template.metadata.labels");
						json_t *c = json_array_get(
						    json_object_get(pods[k].spec, "containers"), 0);
						somewhere =
						    somewhere ||
						    (kt_labels_match(tsel, labels) &&
						        (json_is_string(port)
						                ? kt_port_named(c,
						                      json_string_value(port)) > 0
						                : kt_has_port(
						                      c, (int)json_integer_value(
						                             port))));
					}
					cr_assert(somewhere,
					    "NetworkPolicy %s lets out to a port no pod it names "
					    "has",
					    name);
				}
			}
		}
	}
	json_decref(objs);
}

Test(k8s, drift_image, .timeout = 120)
{
	json_t *objs = kt_load(KT_SHARDED);
	k8s_pod pods[K8S_PODS_MAX];
	int     n = k8s_pods(objs, pods, K8S_PODS_MAX);
	char    workdir[256] = "";

	cr_assert(!k8s_image_has("warble-nonesuch"), "the image check finds anything");
	cr_assert(k8s_image_has("warble-probe") && k8s_image_has("warblectl"));
	cr_assert_eq(k8s_image(NULL, workdir, sizeof(workdir), NULL), 0);
	for (int i = 0; i < n; i++) {
		json_t *c, *m, *v;
		size_t  j, k;

		json_array_foreach(json_object_get(pods[i].spec, "containers"), j, c)
		{
			json_t     *cmd = json_object_get(c, "command");
			const char *prog = k8s_program(c);
			const char *probes[] = { "startupProbe", "readinessProbe", "livenessProbe",
				"lifecycle.preStop" };

			cr_assert(k8s_image_has(json_string_value(json_array_get(cmd, 0))),
			    "%s: %s", pods[i].name, json_string_value(json_array_get(cmd, 0)));
			cr_assert(k8s_image_has(prog), "%s runs %s, which the image lacks",
			    pods[i].name, prog);
			for (int p = 0; p < 4; p++) {
				json_t *pc = k8s_get(k8s_get(c, probes[p]), "exec.command");
				if (pc != NULL) {
					const char *what = json_string_value(json_array_get(pc, 0));
					cr_assert(k8s_image_has(what),
					    "%s %s runs %s, which the image lacks", pods[i].name,
					    probes[p], what);
				}
			}
			/* the wrapper is the ConfigMap mounted where the command finds it */
			bool wrapper = false;
			json_array_foreach(json_object_get(c, "volumeMounts"), k, m)
			{
				const char *mp = k8s_str(m, "mountPath"), *vn = k8s_str(m, "name");
				size_t      l;
				json_array_foreach(json_object_get(pods[i].spec, "volumes"), l, v)
				{
					const char *cm = k8s_str(v, "configMap.name");
					if (strcmp(k8s_str(v, "name"), vn) == 0 && cm != NULL &&
					    strcmp(mp, "/etc/warble/pod") == 0) {
						json_t *obj = k8s_find(objs, "ConfigMap", cm);
						wrapper = k8s_str(obj, "data.warble-pod") != NULL;
					}
				}
				/* the store's volume is where the daemon keeps it (WARBLE_DATA, the image's WORKDIR) */
				if (strcmp(vn, "data") == 0) {
					cr_assert_str_eq(
					    mp, workdir, "%s: data on %s", pods[i].name, mp);
				}
			}
			cr_assert(
			    wrapper, "%s: /etc/warble/pod/warble-pod is not mounted", pods[i].name);
		}
	}
	json_decref(objs);
}

/* kt_wrapper runs warble-pod with env and returns its exit status, its stderr in *err. */
static int
kt_wrapper(const char *const *env, char **err)
{
	const char *argv[] = { "/bin/sh", KT_POD, "--env", "warble-inbox", NULL };

	return k8s_run(argv, env, wbt_ms(KT_RUN_MS), NULL, err);
}

Test(k8s, wrapper, .timeout = 60)
{
	const char *beyond[] = { "PATH=/usr/bin:/bin", "RELATION_SHARDS=2", "CONTENT_SHARDS=2",
		"INBOX_SHARDS=4", "POD_NAME=inbox-4", NULL };
	const char *last[] = { "PATH=/usr/bin:/bin", "RELATION_SHARDS=2", "CONTENT_SHARDS=2",
		"INBOX_SHARDS=4", "POD_NAME=inbox-3", NULL };
	const char *bad[] = { "PATH=/usr/bin:/bin", "RELATION_SHARDS=0", "CONTENT_SHARDS=2",
		"INBOX_SHARDS=4", NULL };
	const char *user[] = { "PATH=/usr/bin:/bin", "RELATION_SHARDS=1", "CONTENT_SHARDS=1",
		"INBOX_SHARDS=1", "POD_NAME=user-1", NULL };
	char       *err = NULL;
	char        bin[512];

	cr_assert_eq(k8s_root(), 0);
	cr_assert_eq(wbt_bin_path(bin, sizeof(bin), "warble-inbox"), 0);
	cr_assert_eq(kt_wrapper(beyond, &err), 1, "inbox-4 of 4 started: %s", err);
	cr_assert(
	    strstr(err, "inbox-4 would be inbox shard 4, but inbox has 4") != NULL, "%s", err);
	free(err);
	cr_assert_eq(kt_wrapper(last, &err), 0, "inbox-3 of 4 refused: %s", err);
	free(err);
	cr_assert_eq(kt_wrapper(bad, &err), 1, "a count of 0 was taken");
	cr_assert(strstr(err, "RELATION_SHARDS is 0") != NULL, "%s", err);
	free(err);
	cr_assert_eq(kt_wrapper(user, &err), 1, "a second user pod started");
	free(err);
}

/* kt_openssl runs openssl with args (NULL-terminated) and returns its status, its stdout in *out (may be NULL). */
static int
kt_openssl(char **out, const char *const *args)
{
	const char *argv[16] = { "openssl" };
	int         n = 1;

	while (args[n - 1] != NULL && n < 15) {
		argv[n] = args[n - 1];
		n++;
	}
	argv[n] = NULL;
	return k8s_run(argv, NULL, wbt_ms(KT_RUN_MS), out, NULL);
}

Test(k8s, make_certs, .timeout = 120)
{
	const char *ids[] = { "user", "relation", "content", "inbox", "gateway", "admin" };
	char        dir[600], f[700], ca[700], *out = NULL, *err = NULL, *before, *after;
	struct stat st;

	if (access("/usr/bin/openssl", X_OK) != 0) {
		cr_skip_test("openssl is not installed (tests/deps.sh)");
	}
	cr_assert_eq(k8s_root(), 0);
	cr_assert_eq(wbt_path(dir, sizeof(dir), "certs"), 0);
	const char *mk[] = { KT_CERTS, "--days", "30", dir, NULL };
	cr_assert_eq(k8s_run(mk, NULL, wbt_ms(KT_RUN_MS), &out, &err), 0, "make-certs: %s", err);
	free(out), free(err);
	out = err = NULL;
	snprintf(ca, sizeof(ca), "%s/ca.pem", dir);
	for (size_t i = 0; i < sizeof(ids) / sizeof(*ids); i++) {
		char pem[700], key[700], san[64];

		snprintf(pem, sizeof(pem), "%s/%s.pem", dir, ids[i]);
		snprintf(key, sizeof(key), "%s/%s.key", dir, ids[i]);
		cr_assert_eq(stat(key, &st), 0, "no %s", key);
		cr_assert_eq(st.st_mode & 0777, 0600, "%s is mode %o", key, st.st_mode & 0777);
		const char *verify[] = { "verify", "-CAfile", ca, pem, NULL };
		cr_assert_eq(kt_openssl(NULL, verify), 0, "%s does not chain to the CA", pem);
		const char *text[] = { "x509", "-in", pem, "-noout", "-text", NULL };
		cr_assert_eq(kt_openssl(&out, text), 0);
		snprintf(san, sizeof(san), "DNS:%s.warble", ids[i]);
		cr_assert(strstr(out, san) != NULL, "%s lacks %s", pem, san);
		cr_assert(strstr(out, "NIST CURVE: P-256") != NULL, "%s: not P-256", pem);
		cr_assert(
		    strstr(out, "TLS Web Server Authentication, TLS Web Client Authentication"));
		free(out);
		const char *days[] = { "x509", "-in", pem, "-noout", "-checkend", "2505600", NULL };
		const char *more[] = { "x509", "-in", pem, "-noout", "-checkend", "2678400", NULL };
		cr_assert_eq(kt_openssl(NULL, days), 0, "%s expires within 29 days", pem);
		cr_assert_neq(kt_openssl(NULL, more), 0, "%s outlives 31 days", pem);
	}
	/* two identities speak mutual TLS 1.3, each checking the other's name */
	char port[16], acc[32], srv_pem[700], srv_key[700], cli_pem[700], cli_key[700];
	snprintf(port, sizeof(port), "%d", wbt_free_port());
	snprintf(acc, sizeof(acc), "127.0.0.1:%s", port);
	snprintf(srv_pem, sizeof(srv_pem), "%s/relation.pem", dir);
	snprintf(srv_key, sizeof(srv_key), "%s/relation.key", dir);
	snprintf(cli_pem, sizeof(cli_pem), "%s/gateway.pem", dir);
	snprintf(cli_key, sizeof(cli_key), "%s/gateway.key", dir);
	const char *srv[] = { "s_server", "-accept", acc, "-tls1_3", "-cert", srv_pem, "-key",
		srv_key, "-CAfile", ca, "-Verify", "1", "-verify_return_error", "-naccept", "1",
		"-quiet", NULL };
	wbt_daemon *d = wbt_spawn("/usr/bin/openssl", srv, NULL);
	cr_assert_not_null(d);
	const char *cli[] = { "openssl", "s_client", "-connect", acc, "-tls1_3", "-cert", cli_pem,
		"-key", cli_key, "-CAfile", ca, "-verify_hostname", "relation.warble",
		"-verify_return_error", "-brief", NULL };
	int         rc = -1;
	for (int tries = 0; tries < 50 && rc != 0; tries++) {
		free(err);
		err = NULL;
		if ((rc = k8s_run(cli, NULL, wbt_ms(KT_RUN_MS), NULL, &err)) != 0) {
			usleep(100 * 1000); /* s_server still starting */
		}
	}
	cr_assert_eq(rc, 0, "s_client: %s", err);
	cr_assert(strstr(err, "Protocol version: TLSv1.3") != NULL, "%s", err);
	cr_assert(strstr(err, "Peer certificate: CN = relation.warble") != NULL, "%s", err);
	free(err);
	err = NULL;
	cr_assert_eq(wbt_wait_exit(d, wbt_ms(10000)), 0, "s_server did not accept the client");

	/* no overwrite: a second run fails and changes nothing */
	before = wbt_read_file(ca);
	cr_assert_eq(k8s_run(mk, NULL, wbt_ms(KT_RUN_MS), NULL, &err), 1, "make-certs overwrote");
	cr_assert(strstr(err, "refusing to overwrite") != NULL, "%s", err);
	free(err);
	after = wbt_read_file(ca);
	cr_assert_str_eq(before, after);
	free(before), free(after);
	snprintf(f, sizeof(f), "%s/relation.key", dir);
	cr_assert_eq(access(f, R_OK), 0);
}

/* kt_sanitize writes s with every character but letters, digits and _ as _ (Prometheus' label names). */
static void
kt_sanitize(char *out, size_t n, const char *s)
{
	size_t i = 0;

	for (; s[i] != '\0' && i + 1 < n; i++) {
		out[i] = isalnum((unsigned char)s[i]) ? s[i] : '_';
	}
	out[i] = '\0';
}

/*
 * kt_relabel applies Prometheus relabel rules to labels (a JSON object,
 * changed in place): keep, drop and replace, regexes anchored at both
 * ends, $N in a replacement.  False if the target is dropped.  (The rules'
 * regexes are written in the part of RE2 that POSIX ERE shares.)
 */
static bool
kt_relabel(json_t *rules, json_t *labels)
{
	size_t  i, j;
	json_t *r, *sl;

	json_array_foreach(rules, i, r)
	{
		const char *action = k8s_str(r, "action") ? k8s_str(r, "action") : "replace";
		const char *re = k8s_str(r, "regex") ? k8s_str(r, "regex") : "(.*)";
		const char *sep = k8s_str(r, "separator") ? k8s_str(r, "separator") : ";";
		const char *repl = k8s_str(r, "replacement") ? k8s_str(r, "replacement") : "$1";
		char        src[1024] = "", anchored[600], out[512];
		regex_t     rx;
		regmatch_t  m[10];
		bool        hit;
		size_t      o = 0;

		json_array_foreach(json_object_get(r, "source_labels"), j, sl)
		{
			const char *v =
			    json_string_value(json_object_get(labels, json_string_value(sl)));
			snprintf(src + strlen(src), sizeof(src) - strlen(src), "%s%s",
			    j > 0 ? sep : "", v != NULL ? v : "");
		}
		snprintf(anchored, sizeof(anchored), "^(%s)$", re);
		cr_assert_eq(regcomp(&rx, anchored, REG_EXTENDED), 0, "regex %s", re);
		hit = regexec(&rx, src, 10, m, 0) == 0;
		regfree(&rx);
		if (strcmp(action, "keep") == 0 && !hit) {
			return false;
		}
		if (strcmp(action, "drop") == 0 && hit) {
			return false;
		}
		if (strcmp(action, "replace") != 0 || !hit) {
			continue;
		}
		for (const char *p = repl; *p != '\0' && o + 1 < sizeof(out); p++) {
			if (p[0] == '$' && isdigit((unsigned char)p[1])) {
				int g = p[1] - '0' + 1; /* the anchoring group is 1 */
				if (g < 10 && m[g].rm_so >= 0) {
					o += (size_t)snprintf(out + o, sizeof(out) - o, "%.*s",
					    (int)(m[g].rm_eo - m[g].rm_so), src + m[g].rm_so);
				}
				p++;
			} else {
				out[o++] = *p;
			}
		}
		out[o < sizeof(out) ? o : sizeof(out) - 1] = '\0';
		if (out[0] == '\0') {
			json_object_del(labels, k8s_str(r, "target_label"));
		} else {
			json_object_set_new(labels, k8s_str(r, "target_label"), json_string(out));
		}
	}
	return true;
}

Test(k8s, scrape, .timeout = 120)
{
	json_t     *objs = kt_load(KT_SHARDED), *cfg, *job = NULL, *j;
	const char *argv[] = { "node", "tests/k8s/k8s_render.js", "--yaml", KT_SCRAPE, NULL };
	char       *out = NULL, *err = NULL;
	k8s_pod     pods[K8S_PODS_MAX];
	int         n = k8s_pods(objs, pods, K8S_PODS_MAX);
	size_t      i;

	cr_assert_eq(k8s_run(argv, NULL, wbt_ms(KT_RUN_MS), &out, &err), 0, "%s", err);
	cfg = json_loads(out, 0, NULL);
	cr_assert_not_null(cfg);
	free(out), free(err);
	json_array_foreach(json_object_get(cfg, "scrape_configs"), i, j)
	{
		if (strcmp(k8s_str(j, "job_name"), "warble") == 0) {
			job = j;
		}
	}
	cr_assert_not_null(job, "no job warble (the alerts' job) in " KT_SCRAPE);
	json_t *sd = json_array_get(json_object_get(job, "kubernetes_sd_configs"), 0);
	cr_assert_str_eq(k8s_str(sd, "role"), "pod");
	cr_assert_str_eq(
	    json_string_value(json_array_get(k8s_get(sd, "namespaces.names"), 0)), K8S_NAMESPACE);

	/* what discovery says of each declared port of each pod, relabelled (of a
	 * container without ports, one target: the pod's address alone) */
	for (int k = 0; k < n; k++) {
		json_t *c = json_array_get(json_object_get(pods[k].spec, "containers"), 0), *port;
		json_t *meta = k8s_get(pods[k].obj, "spec.template.metadata");
		json_t *ports = json_object_get(c, "ports"), *portless = json_pack("[{}]");
		int     targets = 0;
		size_t  q;

		json_array_foreach(json_array_size(ports) > 0 ? ports : portless, q, port)
		{
			json_t     *l = json_object(), *v;
			const char *key;
			char        name[256], addr[64];
			json_t     *cp = json_object_get(port, "containerPort");

			snprintf(addr, sizeof(addr), "10.1.0.%d", k + 2);
			if (cp != NULL) {
				snprintf(addr + strlen(addr), sizeof(addr) - strlen(addr), ":%lld",
				    json_integer_value(cp));
				json_object_set_new(l, "__meta_kubernetes_pod_container_port_name",
				    json_string(k8s_str(port, "name")));
			}
			json_object_set_new(l, "__address__", json_string(addr));
			json_object_set_new(l, "__metrics_path__", json_string("/metrics"));
			json_object_set_new(
			    l, "__meta_kubernetes_namespace", json_string(K8S_NAMESPACE));
			json_object_set_new(
			    l, "__meta_kubernetes_pod_name", json_string(pods[k].name));
			json_object_foreach(json_object_get(meta, "labels"), key, v)
			{
				char s[200];
				kt_sanitize(s, sizeof(s), key);
				snprintf(name, sizeof(name), "__meta_kubernetes_pod_label_%s", s);
				json_object_set(l, name, v);
			}
			if (strcmp(pods[k].kind, "StatefulSet") == 0) {
				json_object_set_new(l,
				    "__meta_kubernetes_pod_label_statefulset_kubernetes_io_pod_"
				    "name",
				    json_string(pods[k].name));
			}
			json_object_foreach(json_object_get(meta, "annotations"), key, v)
			{
				char s[200];
				kt_sanitize(s, sizeof(s), key);
				snprintf(
				    name, sizeof(name), "__meta_kubernetes_pod_annotation_%s", s);
				json_object_set(l, name, v);
			}
			if (kt_relabel(json_object_get(job, "relabel_configs"), l)) {
				char want[64], shard[16];
				targets++;
				snprintf(want, sizeof(want), "10.1.0.%d:%d", k + 2,
				    kt_port_named(c, "metrics"));
				cr_assert_str_eq(
				    k8s_str(l, "__address__"), want, "%s", pods[k].name);
				cr_assert_str_eq(k8s_str(l, "__metrics_path__"), "/metrics");
				cr_assert_str_eq(
				    k8s_str(l, "service"), pods[k].workload, "%s", pods[k].name);
				cr_assert_str_eq(k8s_str(l, "pod"), pods[k].name);
				snprintf(shard, sizeof(shard), "%d", pods[k].ordinal);
				if (strcmp(pods[k].kind, "StatefulSet") == 0) {
					cr_assert_str_eq(
					    k8s_str(l, "shard"), shard, "%s", pods[k].name);
				} else {
					cr_assert_null(json_object_get(l, "shard"),
					    "%s has a shard", pods[k].name);
				}
			}
			json_decref(l);
		}
		cr_assert_eq(targets, kt_toolbox(&pods[k]) ? 0 : 1, "%s is scraped %d times",
		    pods[k].name, targets);
		json_decref(portless);
	}

	/* promtool checks the rest (Debian's is built without Kubernetes discovery) */
	if (access("/usr/bin/promtool", X_OK) == 0) {
		char        path[600], rules[600], *text = wbt_read_file(KT_RULES);
		const char *check[] = { "promtool", "check", "config", path, NULL };
		json_t     *st = json_pack("[{s:[s]}]", "targets", "10.1.0.2:9102");

		json_object_del(job, "kubernetes_sd_configs");
		json_object_set_new(job, "static_configs", st);
		cr_assert_eq(wbt_path(path, sizeof(path), "prometheus-k8s.yml"), 0);
		cr_assert_eq(json_dump_file(cfg, path, JSON_INDENT(2)), 0);
		cr_assert_eq(wbt_path(rules, sizeof(rules), "warble-alerts.yml"), 0);
		FILE *f = fopen(rules, "w");
		cr_assert(f != NULL && text != NULL);
		fputs(text, f);
		fclose(f);
		free(text);
		cr_assert_eq(k8s_run(check, NULL, wbt_ms(KT_RUN_MS), &out, &err), 0,
		    "promtool: %s%s", out, err);
		free(out), free(err);
	}
	json_decref(cfg);
	json_decref(objs);
}
