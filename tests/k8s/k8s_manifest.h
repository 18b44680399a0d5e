/*
 * k8s_manifest.h - the rendered Kubernetes manifests of deploy/k8s as
 * the tests read them: an overlay rendered by tests/k8s/k8s_render.js
 * (kustomize, then js-yaml, then JSON) into a jansson array of objects,
 * and what one pod of it would be given: its containers' programs,
 * environment, ports and volumes, worked out as the kubelet does.
 *
 *   json_t *objs;
 *   char    why[4096];
 *   int rc = k8s_render(&objs, "deploy/k8s/overlays/sharded", false, why, sizeof(why));
 *   if (rc == K8S_SKIP) cr_skip_test("%s", why);
 *   k8s_pod pods[K8S_PODS_MAX];
 *   int n = k8s_pods(objs, pods, K8S_PODS_MAX);   relation-0, ..., gateway-1
 *   json_t *env = k8s_env(objs, &pods[i], c, "198.18.3.11");   NAME -> value
 *
 * Also a small process runner (k8s_run), the daemons' --print-defaults
 * (k8s_defaults) and the repository root (k8s_root).
 */
#ifndef K8S_MANIFEST_H
#define K8S_MANIFEST_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define K8S_SKIP      1  /* k8s_render: the tools are not installed (tests/deps.sh) */
#define K8S_PODS_MAX  32 /* pods of one overlay */
#define K8S_NAMESPACE "warble"

/* One pod a workload of the overlay makes: a StatefulSet's pod i, or a Deployment's i-th. */
typedef struct k8s_pod {
	char    name[64];     /* relation-1; gateway-0 for a Deployment's first */
	char    workload[64]; /* relation, gateway */
	char    kind[16];     /* StatefulSet or Deployment */
	int     ordinal;
	json_t *obj;  /* the workload (borrowed from the rendered array) */
	json_t *spec; /* its pod template's spec (borrowed) */
} k8s_pod;

/* k8s_root changes to the repository root (the current folder or two above the test binary); 0 or -1. */
int k8s_root(void);

/*
 * k8s_run runs argv (argv[0] found in PATH) with env ("KEY=VALUE",
 * NULL-terminated; NULL: the test's own environment) and no input, for at
 * most timeout_ms; its stdout and stderr (NUL-terminated, malloc'd; may
 * be NULL) go to *out and *err.  Returns its exit status, 128+signal, or
 * -1 if it could not run or ran too long (then killed).
 */
int k8s_run(
    const char *const *argv, const char *const *env, int timeout_ms, char **out, char **err);

/*
 * k8s_render renders overlay (a folder) with the pinned kustomize, or with
 * `kubectl kustomize` if kubectl, validated against the API schemas
 * (k8s_render.js --check), into *out (a JSON array).  0; K8S_SKIP with the
 * reason in why when the tool is missing; -1 with the errors in why.
 */
int k8s_render(json_t **out, const char *overlay, bool kubectl, char *why, size_t why_len);

/* k8s_find returns the object of kind named name (a generated ConfigMap's name may carry its hash suffix); NULL if none. */
json_t *k8s_find(json_t *objs, const char *kind, const char *name);

/* k8s_pods lists the pods of every StatefulSet and Deployment (a Deployment: the HPA's minReplicas, else its replicas); their number. */
int k8s_pods(json_t *objs, k8s_pod *pods, int max);

/* k8s_str returns the string at the dotted path in o ("spec.template.metadata.name"), or NULL. */
const char *k8s_str(json_t *o, const char *path);

/* k8s_get returns the value at the dotted path in o, or NULL. */
json_t *k8s_get(json_t *o, const char *path);

/*
 * k8s_env returns what the kubelet gives container c of pod p: the image's
 * ENV (deploy/Dockerfile), then each envFrom ConfigMap's keys, then its env
 * (values, downward API metadata.name, metadata.namespace and status.podIP
 * from pod_ip, $(VAR) references expanded), as a new JSON object NAME ->
 * value; NULL with a message on stderr if a reference cannot be resolved.
 */
json_t *k8s_env(json_t *objs, const k8s_pod *p, json_t *c, const char *pod_ip);

/*
 * k8s_program returns the program a container runs: its command's program,
 * or the one warble-pod runs (/bin/sh /etc/warble/pod/warble-pod PROGRAM ...);
 * NULL if it has no command.
 */
const char *k8s_program(json_t *c);

/*
 * k8s_defaults returns the variables prog (a daemon of the build) reads, from
 * its --print-defaults, as a new JSON object NAME -> default; NULL if it
 * has no such flag.
 */
json_t *k8s_defaults(const char *prog);

/* k8s_url_port returns the port of a tcp:// or http:// URL ("tcp://0.0.0.0:7102" -> 7102), or -1. */
int k8s_url_port(const char *url);

/* k8s_url_host copies the host of a URL into buf; 0 or -1. */
int k8s_url_host(const char *url, char *buf, size_t n);

/*
 * k8s_image reads deploy/Dockerfile's runtime stage: its ENV variables
 * into env (a JSON object, may be NULL), its WORKDIR and the uid of its
 * user warble (--uid) into workdir and uid (may be NULL); 0 or -1.
 */
int k8s_image(json_t *env, char *workdir, size_t workdir_len, int *uid);

/*
 * k8s_image_has tells whether the image holds program prog (a name looked up
 * in its PATH, or an absolute path): a binary deploy/Dockerfile builds into
 * /usr/local/bin, or a tool of its Debian base that the manifests use
 * (/bin/sh, sleep).
 */
bool k8s_image_has(const char *prog);

#endif
