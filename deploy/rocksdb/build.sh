#!/usr/bin/env bash
# Builds a release RocksDB (assertions off) from Debian's own rocksdb source
# package, of the version librocksdb-dev has installed, with Debian's
# patches, as a static library: make ROCKSDB=release links it instead of
# Debian's shared library, which is built with assertions on
# (docs/operations.md).  Installs include/ and lib/librocksdb.a in $1, by
# default ${XDG_CACHE_HOME:-$HOME/.cache}/warble/rocksdb-VERSION/, outside
# the tree, so that every clone reuses one build, and prints that folder.
# Does nothing when it is already there; a rerun after an interruption
# resumes the build in the folder's .work sibling.  JOBS (2) sets the
# parallelism.  Needs cmake, dpkg-dev and the compression libraries' -dev
# packages (tests/deps.sh); it never changes the system's apt configuration.
set -euo pipefail
version=$(dpkg-query -W -f='${Version}' librocksdb-dev)
dest=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/warble/rocksdb-$version}
work=$dest.work
if [ -f "$dest/lib/librocksdb.a" ] && [ -f "$dest/VERSION" ]; then
	echo "$dest"
	exit 0
fi
mkdir -p "$work"
cd "$work"

# The source package: an apt of its own (a deb-src list, its own lists and
# cache folders, all in $work) fetches the .dsc and tarballs and checks them
# against the signed index; dpkg-source -x checks them again and applies
# Debian's patches.
if [ ! -f src/CMakeLists.txt ]; then
	rm -rf src src.tmp apt && mkdir -p apt/lists/partial apt/cache/archives/partial apt/parts
	cat >apt/sources.list <<'SRC'
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
SRC
	aptopts=(-o Dir::Etc::SourceList="$work/apt/sources.list"
		-o Dir::Etc::SourceParts="$work/apt/parts" -o Dir::State::Lists="$work/apt/lists"
		-o Dir::Cache="$work/apt/cache" -o APT::Sandbox::User=root -qq)
	echo "rocksdb: fetching Debian's rocksdb $version source" >&2
	apt-get "${aptopts[@]}" update >&2
	apt-get "${aptopts[@]}" source --download-only "rocksdb=$version" >&2
	# (gpgv cannot check the uploader's signature without debian-keyring:
	# the hashes in the signed index above are what vouch for the files.)
	dpkg-source -q -x rocksdb_*.dsc src.tmp >&2
	mv src.tmp src
fi

# Release: -DNDEBUG turns RocksDB's assertions off (Debian builds with
# CMake's build type None, so its library keeps them); -O2 in both flag
# variables, as Debian's, since CMake's Release would add -O3: assertions
# are then the one difference in code generation.  The compression libraries
# are Debian's build's (ldd librocksdb.so.7*): snappy, lz4, zstd, zlib,
# bzip2; no gflags (only its tools use it), no tests, tools or shared
# library.
cmake -S src -B build -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS='-O2 -DNDEBUG' \
	-DCMAKE_CXX_FLAGS_RELEASE='-O2 -DNDEBUG' -DCMAKE_C_FLAGS_RELEASE='-O2 -DNDEBUG' \
	-DCMAKE_POSITION_INDEPENDENT_CODE=ON -DPORTABLE=ON -DFAIL_ON_WARNINGS=OFF \
	-DWITH_TESTS=OFF -DWITH_TOOLS=OFF -DWITH_BENCHMARK_TOOLS=OFF -DWITH_CORE_TOOLS=OFF \
	-DWITH_GFLAGS=OFF -DROCKSDB_BUILD_SHARED=OFF -DWITH_SNAPPY=ON -DWITH_LZ4=ON \
	-DWITH_ZSTD=ON -DWITH_ZLIB=ON -DWITH_BZ2=ON >build.log 2>&1 ||
	{ tail -30 build.log >&2; exit 1; }
echo "rocksdb: building librocksdb.a with ${JOBS:-2} jobs (build.log in $work)" >&2
cmake --build build --target rocksdb -j"${JOBS:-2}" >>build.log 2>&1 ||
	{ tail -30 build.log >&2; exit 1; }

# Installed by hand (headers and the one library), VERSION last: its
# presence says the folder is whole.
rm -rf "$dest/include/rocksdb" "$dest/lib/librocksdb.a" "$dest/VERSION"
mkdir -p "$dest/include" "$dest/lib"
cp -r src/include/rocksdb "$dest/include/"
cp build/librocksdb.a "$dest/lib/"
echo "$version" >"$dest/VERSION"
cd / && rm -rf "$work"
echo "rocksdb: installed in $dest" >&2
echo "$dest"
