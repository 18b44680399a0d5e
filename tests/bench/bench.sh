#!/usr/bin/env bash
# Warble's load benchmark with its peers, all on this machine, on loopback.
#
#   tests/bench/bench.sh quick   ego-facebook mix, fan-out to 10k and 100k, follow sweep,
#                                images (32 users x 12: 153 MiB) (< 5 min)
#   tests/bench/bench.sh full    ego-facebook mix, fan-out to 10k, 100k and 1M, follow sweep,
#                                images (64 users x 16: 386 MiB)
#
# Starts, from the Debian packages (tests/deps.sh bench), a private
# redis-server and a private PostgreSQL cluster on free ports in a temp
# dir, runs build/bin/warble-load against a fresh Warble cluster and both
# peers, and stops everything it started (by pid) on exit.
#
# Durability of the three, the same class (an acknowledged write survives
# a killed process, not necessarily a power cut):
#   Warble     RocksDB WAL written on every write, not fsynced (WARBLE_SYNC=0)
#   Redis      appendonly yes, appendfsync no (AOF written before replying)
#   PostgreSQL fsync=off, synchronous_commit=on (WAL written at commit)
#
# PostgreSQL refuses to run as root: as root, initdb and pg_ctl run as the
# "postgres" system user (created by the package) through runuser, on a
# temp dir it owns; as any other user they run as that user.
#
# Environment: BUILD (build), OUT (default $BUILD/bench-out/<mode>),
# LOAD_ARGS (extra warble-load flags).
set -eu
mode=${1:-quick}
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/bench-out/$mode}
graphs=$(cd "$(dirname "$0")/../.." && pwd)/tests/data/graphs
case $mode in
quick) args="--graph $graphs/ego-facebook.edges --fanout 10000,100000 --reps 2
             --duration 10 --rounds 5 --threads 8 --visible 200 --sample 1000 --moderate 200
             --sweep 10,100,1000,5000 --http 50 --media 32x12 --one --timeout 600" ;;
full)  args="--graph $graphs/ego-facebook.edges --fanout 10000,100000,1000000 --reps 3
             --duration 30 --rounds 10 --threads 16 --visible 500 --sample 1000 --moderate 200
             --sweep 10,100,1000,5000 --http 50 --home-secs 10 --media 64x16 --one
             --timeout 3600" ;;
*) echo "usage: $0 quick|full" >&2; exit 2 ;;
esac

pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
for need in redis-server redis-cli gnuplot wrk; do
	command -v $need >/dev/null || { echo "bench: $need missing: run tests/deps.sh bench (as root)" >&2; exit 1; }
done
[ -x "$pgbin/initdb" ] || { echo "bench: PostgreSQL missing: run tests/deps.sh bench (as root)" >&2; exit 1; }
[ -x "$BUILD/bin/warble-load" ] || { echo "bench: $BUILD/bin/warble-load not built" >&2; exit 1; }

tmp=$(mktemp -d /tmp/wbench.XXXXXX)
chmod 755 "$tmp"
redis_pid=
pg_started=
as_pg() {
	if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
cleanup() {
	[ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null
	[ -n "$pg_started" ] && as_pg "$pgbin/pg_ctl" -D "$tmp/pg/data" -m fast -t 60 stop >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# free_port prints a TCP port of 127.0.0.1 that nothing listens on, below
# the kernel's ephemeral range (32768 and up) so that no outgoing
# connection can be holding it when the server binds.
free_port() {
	for _ in $(seq 1 100); do
		p=$((20000 + RANDOM % 12000))
		(exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null || { echo $p; return 0; }
	done
	return 1
}

rport=$(free_port)
mkdir -p "$tmp/redis"
redis-server --port "$rport" --bind 127.0.0.1 --save "" --appendonly yes \
	--appendfsync no --dir "$tmp/redis" --daemonize no >"$tmp/redis.log" 2>&1 &
redis_pid=$!
for _ in $(seq 1 100); do
	redis-cli -p "$rport" ping >/dev/null 2>&1 && break
	sleep 0.1
done
redis-cli -p "$rport" ping >/dev/null || { echo "bench: redis did not start" >&2; cat "$tmp/redis.log" >&2; exit 1; }

pport=$(free_port)
mkdir -p "$tmp/pg"
[ "$(id -u)" -eq 0 ] && chown postgres "$tmp/pg"
as_pg "$pgbin/initdb" -D "$tmp/pg/data" -A trust -U postgres --no-sync >"$tmp/initdb.log" 2>&1 ||
	{ echo "bench: initdb failed" >&2; cat "$tmp/initdb.log" >&2; exit 1; }
pg_started=1
as_pg "$pgbin/pg_ctl" -D "$tmp/pg/data" -l "$tmp/pg/log" -w -t 60 \
	-o "-p $pport -k $tmp/pg -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=on -c shared_buffers=512MB" \
	start >/dev/null || { echo "bench: postgres did not start" >&2; cat "$tmp/pg/log" >&2; exit 1; }

echo "== warble-load ($mode): redis $(redis-server --version | awk '{print $3}') on :$rport," \
	"$("$pgbin/postgres" --version) on :$pport"
mkdir -p "$OUT"
# shellcheck disable=SC2086
"$BUILD/bin/warble-load" $args --redis "127.0.0.1:$rport" \
	--pg "host=127.0.0.1 port=$pport user=postgres dbname=postgres" --out "$OUT" ${LOAD_ARGS:-}
echo "== results in $OUT (report.json, latency.png, fanout.png, home_by_follows.png)"
