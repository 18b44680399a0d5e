#!/usr/bin/env bash
# Warble sharded on this one machine: what shards cost.
#
#   tests/bench/cluster.sh     layouts 1,1,1 1,1,2 2,2,4, each run twice, and
#                              2,2,4 with TLS twice (< 7 min)
#
# A layout R,C,I is R relation, C content and I inbox shards; R,C,I,tls
# the same with mutual TLS on every internal port (WARBLE_TLS_DIR: the
# certificates of deploy/make-certs, warble-load's set-up and the probes
# presenting the admin identity).  For each
# run the script starts a deployment of separate daemons on loopback TCP
# ports: one user service, the R + C + I shards (each its own process,
# data folder and --shard i/N) and one gateway; then it runs
# build/bin/warble-load against it as a running deployment (--gateway; the
# shards' addresses in WARBLE_*_URLS, as the daemons read them): the
# ego-Facebook graph, a celebrity with 100,000 fans publishing LOAD_REPS
# times, and the mix on 8 threads for LOAD_DURATION s.  Then it stops
# every daemon (by pid; on exit too) and starts the next.  The runs go
# 1,1,1 1,1,2 2,2,4 2,2,4 1,1,2 1,1,1, so that a machine getting busier
# or quieter over the minutes weighs on every layout alike.
#
# Printed for each layout, its runs added up: the mix's req/s, its
# server CPU per request (every process's own process_cpu_us, summed over
# all of them) and the inbox processes' CPU per cell written during the
# 100,000-fan fan-outs (summed over the inbox shards, divided by the
# cells), each also as a ratio to the first layout (one shard of each);
# then the last plain layout's two ratios, each on a line of its own, and
# for a layout run both ways, TLS's CPU per request against it without.  On 2
# cores shards bring no speed-up: the figures are what they cost.
#
# Environment: BUILD (build), OUT (default $BUILD/bench-out/cluster),
# RUNS (the layouts in run order; the first named is what the ratios
# divide by, the last named the one of the closing lines), LOAD_DURATION (mix seconds,
# 20), LOAD_REPS (fan-out publishes a run, 3), LOAD_ARGS (more warble-load
# flags).
set -eu
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/bench-out/cluster}
RUNS=${RUNS:-"1,1,1 1,1,2 2,2,4 2,2,4,tls 2,2,4,tls 2,2,4 1,1,2 1,1,1"}
LOAD_DURATION=${LOAD_DURATION:-20}
LOAD_REPS=${LOAD_REPS:-3}
graphs=$(cd "$(dirname "$0")/../.." && pwd)/tests/data/graphs

for b in warble-user warble-relation warble-content warble-inbox warble-gateway warble-probe warble-load; do
	[ -x "$BUILD/bin/$b" ] || { echo "bench-cluster: $BUILD/bin/$b not built" >&2; exit 1; }
done
command -v jq >/dev/null || { echo "bench-cluster: jq missing: run tests/deps.sh bench (as root)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/wcluster.XXXXXX)
pids=""
used_ports=" "

# stop_all stops the daemons of the layout running now, gateway first, each within 30 s.
stop_all() {
	for p in $pids; do
		kill -TERM "$p" 2>/dev/null || true
		for _ in $(seq 1 300); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	pids=""
}
cleanup() {
	stop_all
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# next_port sets $port to a TCP port of 127.0.0.1 that nothing listens on
# and this script has not handed out, below the kernel's ephemeral range
# (32768 and up) so that no outgoing connection can be holding it.  (Not
# through $(...): the ports handed out are remembered in this shell.)
next_port() {
	for _ in $(seq 1 200); do
		port=$((20000 + RANDOM % 12000))
		case $used_ports in *" $port "*) continue ;; esac
		(exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && continue
		used_ports="$used_ports$port "
		return 0
	done
	echo "bench-cluster: no free port" >&2
	exit 1
}

# next_urls N sets $urls to N fresh tcp:// addresses, comma-separated.
next_urls() {
	urls=""
	for _ in $(seq 1 "$1"); do
		next_port
		urls="$urls${urls:+,}tcp://127.0.0.1:$port"
	done
}

# start NAME URL PROGRAM ARGS... starts a daemon (log in $tmp/log/NAME.log)
# and waits until URL answers (warble-probe, with $PROBE_ARGS), so that no two start in the same clock tick
# (warble-load tells processes apart by their start time).
start() {
	name=$1 url=$2
	shift 2
	"$@" >"$tmp/log/$name.log" 2>&1 &
	pids="$! $pids" # stopped in reverse: the gateway first
	# shellcheck disable=SC2086
	"$BUILD/bin/warble-probe" --timeout-ms 20000 ${PROBE_ARGS:-} "$url" >/dev/null ||
		{ echo "bench-cluster: $name did not answer on $url" >&2; tail -20 "$tmp/log/$name.log" >&2; exit 1; }
}

# nth LIST I prints the I-th (from 0) address of a comma-separated list.
nth() {
	echo "$1" | cut -d, -f$(($2 + 1))
}

# run_layout K R C I [tls] starts that layout, runs warble-load against it into $OUT/K-R-C-I[-tls] and stops it.
run_layout() {
	k=$1 nr=$2 nc=$3 ni=$4 tls=${5:-}
	dir="$tmp/$k"
	if [ -n "$tls" ]; then
		[ -d "$tmp/tls" ] || deploy/make-certs "$tmp/tls" >/dev/null
		export WARBLE_TLS_DIR=$tmp/tls
	else
		unset WARBLE_TLS_DIR
	fi
	mkdir -p "$dir" "$tmp/log"
	next_urls 1 && export WARBLE_USER_URL=$urls
	next_urls 1 && export WARBLE_GATEWAY_URL=$urls
	next_port && export WARBLE_HTTP_URL=http://127.0.0.1:$port
	next_urls "$nr" && export WARBLE_RELATION_URLS=$urls
	next_urls "$nr" && export WARBLE_RELATION_PUB_URLS=$urls
	next_urls "$nc" && export WARBLE_CONTENT_URLS=$urls
	next_urls "$nc" && export WARBLE_CONTENT_PUB_URLS=$urls
	next_urls "$ni" && export WARBLE_INBOX_URLS=$urls
	# as the cluster warble-load starts itself (tests/support/wbt_cluster.c and
	# warble-load's own settings), on TCP instead of ipc://
	export WARBLE_PWHASH_OPS=1 WARBLE_PWHASH_MEM=8192 WARBLE_LOG_LEVEL=warn \
		WARBLE_REGISTER_RATE=0 WARBLE_GATEWAY_TIMEOUT_MS=15000 WARBLE_INBOX_MAX=800 \
		WARBLE_BACKFILL=0 WARBLE_MEDIA_RATE=0
	export WARBLE_METRICS_URL=http://127.0.0.1:0 # many daemons of a kind: any free admin port

	start user "$WARBLE_USER_URL" "$BUILD/bin/warble-user" --data "$dir/user"
	for i in $(seq 0 $((nr - 1))); do
		u=$(nth "$WARBLE_RELATION_URLS" "$i")
		start "relation-$i" "$u" "$BUILD/bin/warble-relation" --shard "$i/$nr" \
			--data "$dir/relation-$i" --relation-url "$u" \
			--relation-pub-url "$(nth "$WARBLE_RELATION_PUB_URLS" "$i")"
	done
	for i in $(seq 0 $((nc - 1))); do
		u=$(nth "$WARBLE_CONTENT_URLS" "$i")
		start "content-$i" "$u" "$BUILD/bin/warble-content" --shard "$i/$nc" \
			--data "$dir/content-$i" --content-url "$u" \
			--content-pub-url "$(nth "$WARBLE_CONTENT_PUB_URLS" "$i")"
	done
	for i in $(seq 0 $((ni - 1))); do
		u=$(nth "$WARBLE_INBOX_URLS" "$i")
		start "inbox-$i" "$u" "$BUILD/bin/warble-inbox" --shard "$i/$ni" \
			--data "$dir/inbox-$i" --inbox-url "$u"
	done
	PROBE_ARGS=--plain start gateway "$WARBLE_GATEWAY_URL" "$BUILD/bin/warble-gateway"

	out="$OUT/$k-$nr-$nc-$ni${tls:+-tls}"
	mkdir -p "$out"
	echo "== run $k: relation $nr, content $nc, inbox $ni${tls:+, TLS}; load average $(cut -d' ' -f1-3 /proc/loadavg)"
	# shellcheck disable=SC2086
	"$BUILD/bin/warble-load" --gateway "$WARBLE_GATEWAY_URL" --http-url "$WARBLE_HTTP_URL" \
		--graph "$graphs/ego-facebook.edges" --fanout 100000 --reps "$LOAD_REPS" --sample 1000 \
		--visible 0 --seed-posts 2 --threads 8 --duration "$LOAD_DURATION" --timeout 300 \
		--out "$out" ${LOAD_ARGS:-} >"$out/stdout.txt" 2>"$out/stderr.txt" ||
		{ echo "bench-cluster: warble-load failed on $nr,$nc,$ni:" >&2; tail -20 "$out/stderr.txt" >&2; exit 1; }
	grep -E "^(deployment|fan-out|mix warble|    cpu per request)" "$out/stdout.txt"
	stop_all
	rm -rf "$dir"
}

# ratio A B prints A / B.
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.4f", (b > 0 ? a / b : 0) }'
}

echo "== bench-cluster: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f MiB", $2/1024}' /proc/meminfo)," \
	"$(uname -sr); load average $(cut -d' ' -f1-3 /proc/loadavg)"
mkdir -p "$OUT"
rm -rf "$OUT"/[0-9]*-*-*-* # the runs of an earlier bench-cluster
k=0
layouts=""
for l in $RUNS; do
	k=$((k + 1))
	IFS=, read -r nr nc ni tls <<<"$l"
	run_layout "$k" "$nr" "$nc" "$ni" "$tls"
	case " $layouts " in *" $l "*) ;; *) layouts="$layouts $l" ;; esac
done

# the table: each layout's runs added up (CPU per request weighed by requests), against the first
first=""
printf '\n%-15s %5s %4s %8s %16s %-32s %14s %9s\n' "layout (r,c,i)" "procs" "runs" "req/s" \
	"cpu us/request" "(gw/user/relation/content/inbox)" "inbox us/cell" "fan-out s"
declare -A plain_cpu tls_cpu
for l in $layouts; do
	IFS=, read -r nr nc ni tls <<<"$l"
	read -r runs procs rps cpu gw us rel co ib cell fs <<<"$(jq -rs '
		def w(f): (map(f * .mix.warble.ops) | add) / (map(.mix.warble.ops) | add);
		[length, .[0].deployment.processes,
		 (map(.mix.warble.ops) | add) / (map(.mix.warble.seconds) | add),
		 w(.mix.warble.cpu_us_per_op.total), w(.mix.warble.cpu_us_per_op.gateway),
		 w(.mix.warble.cpu_us_per_op.user), w(.mix.warble.cpu_us_per_op.relation),
		 w(.mix.warble.cpu_us_per_op.content), w(.mix.warble.cpu_us_per_op.inbox),
		 (map(.fanout[0].warble_inbox_cpu_us_per_cell) | add / length),
		 (map(.fanout[0].warble_s) | add / length)] | @tsv' "$OUT"/*-"$nr-$nc-$ni${tls:+-tls}"/report.json)"
	[ -z "$first" ] && { first=1 rps0=$rps cpu0=$cpu cell0=$cell; }
	printf '%-15s %5s %4s %8.0f %8.1f (%4.2fx) %-32s %6.3f (%4.2fx) %9.3f\n' "$l" "$procs" \
		"$runs" "$rps" "$cpu" "$(ratio "$cpu" "$cpu0")" \
		"$(printf '%.1f/%.1f/%.1f/%.1f/%.1f' "$gw" "$us" "$rel" "$co" "$ib")" \
		"$cell" "$(ratio "$cell" "$cell0")" "$fs"
	if [ -n "$tls" ]; then
		tls_cpu[$nr,$nc,$ni]=$cpu
		continue
	fi
	plain_cpu[$nr,$nc,$ni]=$cpu
	last_ni=$ni last_cpu=$cpu last_cell=$cell last_rps=$rps
done
echo "load average now $(cut -d' ' -f1-3 /proc/loadavg); reports in $OUT/<run>-<r>-<c>-<i>[-tls]/"
if [ -n "${last_ni:-}" ]; then
	echo "req/s of the last layout $(printf '%.2f' "$(ratio "$last_rps" "$rps0")")x one shard"
	printf 'cpu per request, %s inbox shards: %.2fx one shard\n' "$last_ni" "$(ratio "$last_cpu" "$cpu0")"
	printf 'inbox cpu per cell, %s inbox shards: %.2fx one shard\n' "$last_ni" "$(ratio "$last_cell" "$cell0")"
fi
for l in "${!tls_cpu[@]}"; do
	[ -n "${plain_cpu[$l]:-}" ] &&
		printf 'cpu per request, TLS on %s: %.2fx TLS off\n' "$l" "$(ratio "${tls_cpu[$l]}" "${plain_cpu[$l]}")"
done
