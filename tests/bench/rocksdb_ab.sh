#!/usr/bin/env bash
# Debian's librocksdb (A: build/, shared, assertions on) against the
# release RocksDB of deploy/rocksdb/build.sh (B: build-rel/, static,
# -DNDEBUG), in one run on one machine.
#
#   tests/bench/rocksdb_ab.sh    fanout_bench 1M x 3, then hb_bench, each
#                                A,B,A,B (about a minute once built)
#
# Builds both variants' benches first if needed (make -j2, with
# ROCKSDB=release for B: the first one builds the release RocksDB, about
# 8 minutes on 2 cores; docs/operations.md).  Each benchmark then runs A and B in turns,
# ROUNDS times each, so that a machine getting busier or quieter weighs
# on both alike.  Printed per variant: fanout_bench's median post ms (each
# run's, then their median), the inbox's CPU per cell and its peak RSS;
# hb_bench's rates (per second of CPU time, raw RocksDB and hb) and its
# own peak RSS; and the load average before and after.
#
# Environment: ROUNDS (2), FANS (1000000), POSTS (3), OUT (build-rel/rocksdb-ab:
# each run's whole output).
set -eu
cd "$(dirname "$0")/../.."
ROUNDS=${ROUNDS:-2}
FANS=${FANS:-1000000}
POSTS=${POSTS:-3}
OUT=${OUT:-build-rel/rocksdb-ab}

make --no-print-directory -j2 build/bench/fanout_bench build/bench/hb_bench >/dev/null
make --no-print-directory -j2 ROCKSDB=release build-rel/bench/fanout_bench \
	build-rel/bench/hb_bench >/dev/null
mkdir -p "$OUT"
rm -f "$OUT"/*.out

echo "rocksdb_ab: before: $(uptime)"
# run NAME VARIANT ROUND CMD... keeps a run's output and its peak RSS.
run() {
	local f="$OUT/$1.$2.$3.out"
	shift 3
	/usr/bin/time -f 'rocksdb_ab: peak RSS %M KiB' -a -o "$f" "$@" >"$f" 2>&1 || {
		echo "rocksdb_ab: $* failed:" >&2
		tail -5 "$f" >&2
		exit 1
	}
}
for r in $(seq "$ROUNDS"); do
	for v in build build-rel; do
		echo "rocksdb_ab: fanout_bench $v round $r"
		FANOUT_BENCH_NO_DISK=1 run fanout "$v" "$r" "$v/bench/fanout_bench" "$FANS" "$POSTS"
	done
done
for r in $(seq "$ROUNDS"); do
	for v in build build-rel; do
		echo "rocksdb_ab: hb_bench $v round $r"
		run hb "$v" "$r" "$v/bench/hb_bench"
	done
done
echo "rocksdb_ab: after: $(uptime)"

# median of the numbers on stdin (the mean of the middle two for an even count)
median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2];
		else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
echo
echo "fanout_bench $FANS x $POSTS (A = build, Debian's; B = build-rel, release), per run:"
printf '%-10s %-18s %7s %-18s %-16s %s\n' variant "median post ms" median \
	"inbox us/cell" "inbox RSS MiB" "min post ms"
for v in build build-rel; do
	meds="" cpus="" rss="" mins=""
	for f in "$OUT"/fanout."$v".*.out; do
		meds="$meds $(sed -n 's/.*median \([0-9]*\) ms.*/\1/p' "$f")"
		mins="$mins $(sed -n "s/.*fan-out: min \([0-9]*\) ms.*/\1/p" "$f")"
		cpus="$cpus $(sed -n 's/.*CPU: inbox .* s (\([0-9.]*\) us\/cell.*/\1/p' "$f")"
		rss="$rss $(sed -n 's/.*inbox peak RSS \([0-9]*\) MiB.*/\1/p' "$f")"
	done
	printf '%-10s %-18s %7s %-18s %-16s %s\n' "$v" "${meds# }" \
		"$(echo "$meds" | tr ' ' '\n' | grep . | median)" "${cpus# }" "${rss# }" "${mins# }"
done
echo
echo "hb_bench: rates per second of CPU time, the median of the runs (raw RocksDB, hb),"
echo "and B's over A's"
printf '%-28s %10s %10s %10s %10s %6s %6s\n' operation "A raw" "B raw" "A hb" "B hb" raw hb
for op in "batched puts" "gets" "scan cells" "single puts"; do
	row="$op"
	for col in 2 1; do # raw/s and hb/s: the third and second fields from the end
		for v in build build-rel; do
			row="$row $(for f in "$OUT"/hb."$v".*.out; do
				awk -v op="$op" -v c="$col" 'index($0, op) == 1 { print $(NF - c) }' "$f"
			done | median)"
		done
	done
	echo "$row" | awk -v op="$op" '{ n = split(op, w, " "); a = $(n + 1); b = $(n + 2);
		c = $(n + 3); d = $(n + 4); printf "%-28s %10.0f %10.0f %10.0f %10.0f %6.2f %6.2f\n",
		op, a, b, c, d, b / a, d / c }'
done
for v in build build-rel; do
	echo "hb_bench $v peak RSS (KiB, per run):" $(sed -n 's/rocksdb_ab: peak RSS \([0-9]*\) KiB/\1/p' \
		"$OUT"/hb."$v".*.out)
done
