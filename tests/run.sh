#!/usr/bin/env bash
# Runs every test binary in $BUILD/test (Criterion, TAP output), each
# under a time limit, and ends with one line: "tests: N passed, M failed"
# (", K skipped" after it when a test skipped itself: cr_skip_test, say
# the cluster suite when not root).  A binary that crashes or times out
# counts as one failed test more.
#   TESTS="hb_test codec_test" tests/run.sh    runs only those binaries
# A whole run then runs the suites of $TLS_RUNS again with TLS on every
# internal port (WBT_TLS=1: tests/support/wbt_tls.h), each "binary" or
# "binary:filter", shown as "name (tls)"; TLS_RUNS= skips them.
set -u
BUILD=${BUILD:-build}
LIMIT=${TEST_TIMEOUT:-900}
JOBS=${TEST_JOBS:-2}
cd "$(dirname "$0")/.."
bins=()
if [ -n "${TESTS:-}" ]; then
	for t in $TESTS; do bins+=("$BUILD/test/$t"); done
else
	for t in "$BUILD"/test/*; do [ -x "$t" ] && bins+=("$t"); done
fi
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
passed=0 failed=0 skipped=0
# run_one BIN NAME [criterion args...]: runs one binary and counts its tests.
run_one() {
	local bin=$1 name=$2 start rc s p f
	shift 2
	start=$(date +%s)
	# TAP to a file: with --tap=- Criterion swallows the tests' own stderr
	# (the harness's diagnostics: a daemon's exit status, its log tail)
	timeout --kill-after=10 "$LIMIT" "$bin" --tap="$log/$name.tap" -j"$JOBS" "$@" >/dev/null 2>"$log/$name.err"
	rc=$?
	touch "$log/$name.tap" # a binary that died early wrote none
	s=$(grep -c '^ok .*# SKIP' "$log/$name.tap")
	p=$(($(grep -c '^ok ' "$log/$name.tap") - s))
	f=$(grep -c '^not ok ' "$log/$name.tap")
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		f=1 # crashed, timed out or failed outside a test
		echo "not ok - $name exited with status $rc" >>"$log/$name.tap"
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	printf '%-28s %4d passed %4d failed  %3ds%s\n' "$name" "$p" "$f" $(($(date +%s) - start)) \
		"$([ "$s" -gt 0 ] && echo "  ($s skipped)")"
	if [ "$s" -gt 0 ]; then
		grep '^ok .*# SKIP' "$log/$name.tap" | sed 's/^/    /'
	fi
	if [ "$f" -ne 0 ]; then
		grep -A12 '^not ok' "$log/$name.tap" | sed 's/^/    /'
		tail -n 30 "$log/$name.err" | sed 's/^/    stderr: /'
	fi
}
for bin in "${bins[@]}"; do
	run_one "$bin" "$(basename "$bin")"
done
if [ -z "${TESTS:-}" ]; then
	for t in ${TLS_RUNS-seed_test fault_test:fault/workload cluster_test cluster_fault_test cluster_gateway_test cluster_admin_test cluster_one_test}; do
		bin=$BUILD/test/${t%%:*}
		[ -x "$bin" ] || continue
		if [ "$t" = "${t#*:}" ]; then
			WBT_TLS=1 run_one "$bin" "${t%%:*} (tls)"
		else
			WBT_TLS=1 run_one "$bin" "${t%%:*} (tls)" --filter "${t#*:}"
		fi
	done
fi
echo "tests: $passed passed, $failed failed$([ "$skipped" -gt 0 ] && echo ", $skipped skipped")"
[ "$failed" -eq 0 ] && [ $((passed + skipped)) -gt 0 ]
