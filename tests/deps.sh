#!/usr/bin/env bash
# Installs what Warble needs on Debian 12.  Quick when nothing is missing.
#   tests/deps.sh          build and test dependencies
#   tests/deps.sh bench    plus the benchmark peers (Redis, PostgreSQL, gnuplot)
set -eu
pkgs="build-essential pkg-config clang libclang-rt-14-dev libnng-dev
      libmsgpack-dev librocksdb-dev libsodium-dev libjansson-dev libcriterion-dev
      docker-compose"
if [ "${1:-}" = bench ]; then
	pkgs="$pkgs redis-server libhiredis-dev postgresql libpq-dev gnuplot-nox"
fi
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" -ne 0 ]; then
	echo "warble: missing packages:$missing" >&2
	echo "run as root:  $cmd" >&2
	exit 1
fi
echo "warble: installing$missing"
sh -c "$cmd"
