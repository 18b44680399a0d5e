#!/usr/bin/env bash
# Builds the nng that Warble links: Debian 12's nng 1.5.2 source package
# with Debian's own patches, plus the patches in this folder (see each
# patch's header for the bug it fixes), as a static library installed
# under $1 (default build/nng).  Needs deb-src entries for bookworm, cmake
# and dpkg-dev, which tests/deps.sh sets up.  NNG_CFLAGS adds compiler
# flags (the ThreadSanitizer build passes -fsanitize=thread).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
prefix=$(mkdir -p "${1:-build/nng}" && cd "${1:-build/nng}" && pwd)
version=1.5.2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
echo "nng: fetching Debian's nng $version source"
apt-get source --download-only -qq "nng=$version-2" >/dev/null 2>&1 ||
	apt-get source --download-only -qq nng >/dev/null
dpkg-source -q -x nng_"$version"-*.dsc src >/dev/null
cd src
for p in "$here"/*.patch; do
	echo "nng: applying $(basename "$p")"
	patch -s -p1 <"$p"
done
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
	-DCMAKE_C_FLAGS="${NNG_CFLAGS:-}" \
	-DCMAKE_POSITION_INDEPENDENT_CODE=ON -DNNG_ENABLE_TLS=OFF \
	-DNNG_TESTS=OFF -DNNG_TOOLS=OFF -DNNG_ENABLE_NNGCAT=OFF \
	-DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib >/dev/null
cmake --build build -j"$(nproc)" >/dev/null 2>&1
cmake --install build >/dev/null
echo "nng: installed in $prefix"
