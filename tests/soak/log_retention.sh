#!/usr/bin/env bash
# Does an event log's disk level off under a retention?  A soak of posts.
#
#   tests/soak/log_retention.sh       (make soak-log) about 2 minutes
#
# Starts the one-process warble on loopback (its internal addresses on
# ipc:// in a folder of its own, HTTP and the admin port on free ports),
# with WARBLE_LOG_RETENTION=$RETENTION seconds, registers a few users who
# follow each other, and posts $RATE posts a second (one curl connection
# a second; fewer if the machine cannot keep up) for $DURATION seconds.
# Every $EVERY seconds it prints the content log's figures from
# /metrics: its last and first seq, the events it holds, log_bytes (its
# SST files; a log never trimmed may stay in the memtable, 0 bytes) and
# the disk the whole content store uses (the posts themselves, which
# stay, and RocksDB's write-ahead log).  At the end it compares the
# peaks over the last third of the run with those over the middle
# third: levelled off if the events held grew by no more than a quarter
# and log_bytes by no more than half (a steady growth gives a half for
# both; exit 1 otherwise).  RETENTION=0 keeps every event, for a run
# that shows the growth instead (its verdict is then printed, not
# enforced).
#
# Environment: BUILD (build), DURATION (120), RETENTION (3), MAX_AGE (30),
# RATE (500), EVERY (5).
set -eu
BUILD=${BUILD:-build}
DURATION=${DURATION:-120}
RETENTION=${RETENTION:-3}
MAX_AGE=${MAX_AGE:-30}
RATE=${RATE:-500}
EVERY=${EVERY:-5}

for b in warble; do
	[ -x "$BUILD/bin/$b" ] || { echo "soak-log: $BUILD/bin/$b not built" >&2; exit 1; }
done
command -v curl >/dev/null || { echo "soak-log: curl missing" >&2; exit 1; }
command -v ss >/dev/null || { echo "soak-log: ss missing (iproute2)" >&2; exit 1; }

tmp=$(mktemp -d /tmp/wsoaklog.XXXXXX)
pid=""
cleanup() {
	if [ -n "$pid" ]; then
		kill -TERM "$pid" 2>/dev/null || true
		for _ in $(seq 1 300); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# free_port prints a loopback TCP port nothing listens on (ss, from iproute2), not $1.
free_port() {
	local p
	for _ in $(seq 1 100); do
		p=$((20000 + RANDOM % 40000))
		[ "$p" != "${1:-}" ] && [ -z "$(ss -Hltn "sport = :$p")" ] && { echo "$p"; return 0; }
	done
	return 1
}
http_port=$(free_port)
admin_port=$(free_port "$http_port")
ipc=ipc://$tmp
W=http://127.0.0.1:$http_port
M=http://127.0.0.1:$admin_port/metrics

env WARBLE_DATA="$tmp/data" WARBLE_LOG_LEVEL=warn \
	WARBLE_USER_URL="$ipc/user" WARBLE_RELATION_URL="$ipc/relation" \
	WARBLE_RELATION_PUB_URL="$ipc/relation.pub" WARBLE_CONTENT_URL="$ipc/content" \
	WARBLE_CONTENT_PUB_URL="$ipc/content.pub" WARBLE_INBOX_URL="$ipc/inbox" \
	WARBLE_GATEWAY_URL="$ipc/gateway" WARBLE_HTTP_URL="$W" \
	WARBLE_METRICS_URL="http://127.0.0.1:$admin_port" \
	WARBLE_LOG_RETENTION="$RETENTION" WARBLE_LOG_MAX_AGE="$MAX_AGE" \
	WARBLE_REGISTER_RATE=0 \
	"$BUILD/bin/warble" >"$tmp/warble.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do
	curl -fsS "$W/readyz" >/dev/null 2>&1 && break
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/warble.log" >&2; exit 1; }
	sleep 0.1
done
curl -fsS "$W/readyz" >/dev/null || { echo "soak-log: not ready" >&2; exit 1; }

# Five users, each following the next two; the first posts.
tokens=()
for i in 0 1 2 3 4; do
	curl -fsS -X POST "$W/api/v1/users" -d "{\"name\":\"soak$i\",\"password\":\"soak-password-$i\"}" >/dev/null
	tokens[i]=$(curl -fsS -X POST "$W/api/v1/sessions" \
		-d "{\"name\":\"soak$i\",\"password\":\"soak-password-$i\"}" |
		sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
done
for i in 0 1 2 3 4; do
	for k in 1 2; do
		curl -fsS -X PUT "$W/api/v1/me/following/soak$(((i + k) % 5))" \
			-H "Authorization: Bearer ${tokens[i]}" >/dev/null
	done
done

# metric NAME prints the content service's gauge warble_content_NAME (0 if none).
metric() {
	curl -fsS "$M" | awk -v n="warble_content_$1" '!f && $1 ~ "^"n"({|$)" { v = $2; f = 1 } END { print f ? v : 0 }'
}

urls=()
for _ in $(seq 1 "$RATE"); do urls+=("$W/api/v1/posts"); done
printf '%6s %8s %8s %8s %8s %10s %10s\n' secs posts last first held log_bytes store_kb
start=$(date +%s)
next=$start
posts=0
samples=()
for ((sec = start; ; sec++)); do
	now=$(date +%s)
	if [ "$now" -ge "$next" ]; then
		t=$((now - start))
		last=$(metric log_last_seq)
		first=$(metric log_first_seq)
		bytes=$(metric log_bytes)
		kb=$(du -sk "$tmp/data/content" | cut -f1)
		held=0
		[ "$first" -gt 0 ] && held=$((last - first + 1))
		printf '%6d %8d %8d %8d %8d %10d %10d\n' "$t" "$posts" "$last" "$first" "$held" "$bytes" "$kb"
		samples+=("$t $bytes $held")
		next=$((next + EVERY))
		[ "$t" -ge "$DURATION" ] && break
	fi
	# this second's posts, over one connection, then wait for the next second
	i=$((sec % 5))
	curl -fsS -X POST -H "Authorization: Bearer ${tokens[i]}" \
		-d '{"text":"a post of the log soak"}' "${urls[@]}" >/dev/null
	posts=$((posts + RATE))
	while [ "$(date +%s)" -le "$sec" ]; do sleep 0.05; done
done
kill -0 "$pid" 2>/dev/null || { echo "soak-log: warble died" >&2; cat "$tmp/warble.log" >&2; exit 1; }
echo "soak-log: $posts posts in ${DURATION}s (${RATE}/s asked), log-retention ${RETENTION}s," \
	"log-max-age ${MAX_AGE}s"
printf '%s\n' "${samples[@]}" | awk -v d="$DURATION" -v r="$RETENTION" -v posts="$posts" '
	{ t = $1; b = $2; h = $3
	  if (t >= d / 3 && t < 2 * d / 3) { if (h > hmid) hmid = h; if (b > bmid) bmid = b }
	  if (t >= 2 * d / 3) { if (h > hend) hend = h; if (b > bend) bend = b }
	  if (h > 0 && b > 0) { per += b / h; nper++ } }
	END {
		printf "soak-log: events held, peak %d over the middle third, %d over the last\n",
		    hmid, hend
		printf "soak-log: log_bytes, peak %d over the middle third, %d over the last\n",
		    bmid, bend
		if (nper > 0)
			printf "soak-log: %.1f bytes an event held; all %d events would be %d bytes\n",
			    per / nper, posts, posts * per / nper
		ok = hmid > 0 && hend <= 1.25 * hmid && bend <= 1.5 * bmid
		print "soak-log: " (ok ? "levelled off" : "still growing")
		exit (ok || r == 0) ? 0 : 1
	}'
