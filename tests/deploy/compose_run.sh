#!/usr/bin/env bash
# compose_run.sh - make test-compose: builds deploy/Dockerfile and runs
# deploy/docker-compose.yml for real, then checks it end to end.
#
# The engine is docker compose when `docker info` finds an engine, else
# podman with podman-compose (settings in deploy/podman/containers.conf,
# named by CONTAINERS_CONF).  The project has its own name and its own
# published ports on 127.0.0.1, so it never meets `make run` (8080,
# 7100-7115):
#
#   WARBLE_COMPOSE_PROJECT  project name          (warble-compose-test)
#   WARBLE_COMPOSE_HTTP     published HTTP port   (18080)
#   WARBLE_COMPOSE_API      published msgpack API (17100)
#
# No image registry is needed: the base debian:bookworm (and -slim) image
# is made once with debootstrap and imported, then kept for later runs.
# Checks: every service ready; the seed flows (register, follow, publish,
# home, unfollow) over the published HTTP port and with warblectl inside
# the gateway container; a content container killed with SIGKILL while
# posts are written loses none that were acknowledged; down then up keeps
# the named volumes' data; down -v leaves no container nor volume.
# Every step has a timeout; the project is taken down (-v) on exit.  The
# last line is "compose: N passed, M failed".
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1

project=${WARBLE_COMPOSE_PROJECT:-warble-compose-test}
export WARBLE_PUBLISH_IP=127.0.0.1
export WARBLE_PUBLISH_HTTP=${WARBLE_COMPOSE_HTTP:-18080}
export WARBLE_PUBLISH_API=${WARBLE_COMPOSE_API:-17100}
export CONTAINERS_CONF=${CONTAINERS_CONF:-$root/deploy/podman/containers.conf}
file=deploy/docker-compose.yml
image=warble:latest
mirror=${WARBLE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
http=http://127.0.0.1:$WARBLE_PUBLISH_HTTP
logs=$root/${BUILD:-build}/compose-test
stores="user relation content inbox"
services="$stores gateway"
pw=compose-pass-1
npass=0
nfail=0
t_start=$(date +%s)

mkdir -p "$logs"
rm -f "$logs"/*.log

say() { printf 'compose: %s\n' "$*"; }
ok() {
	npass=$((npass + 1))
	printf 'compose: ok    %s\n' "$*"
}
bad() {
	nfail=$((nfail + 1))
	printf 'compose: FAIL  %s\n' "$*"
}
# check NAME CMD...: one check, passed when CMD succeeds.
check() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else bad "$name"; fi
}
# t SECONDS CMD...: CMD under a timeout (killed 10 s after it expires).
t() {
	local s=$1
	shift
	timeout --kill-after=10 "$s" "$@"
}
since() { echo $(($(date +%s) - $1)); }

# ---- the engine --------------------------------------------------------
if command -v docker >/dev/null 2>&1 && t 20 docker info >/dev/null 2>&1 &&
	t 20 docker compose version >/dev/null 2>&1; then
	engine=docker
	compose=(docker compose -p "$project" -f "$file")
elif command -v podman >/dev/null 2>&1 && command -v podman-compose >/dev/null 2>&1; then
	engine=podman
	compose=(podman-compose -p "$project" -f "$file")
else
	say "no engine: neither docker (with a running engine) nor podman and podman-compose"
	say "install them with:  tests/deps.sh compose   (as root)"
	bad "engine"
	echo "compose: $npass passed, $nfail failed"
	exit 1
fi
say "engine $engine, project $project, http $http, api 127.0.0.1:$WARBLE_PUBLISH_API"

# ctr SERVICE: the id of the project's container of SERVICE (running or not).
ctr() {
	t 30 $engine ps -aq --filter "label=com.docker.compose.project=$project" \
		--filter "label=com.docker.compose.service=$1" | head -n 1
}
count_containers() {
	t 30 $engine ps -aq --filter "label=com.docker.compose.project=$project" | wc -l
}
count_volumes() {
	t 30 $engine volume ls -q --filter "label=com.docker.compose.project=$project" | wc -l
}
running() {
	local c
	c=$(ctr "$1")
	[ -n "$c" ] && [ "$(t 30 $engine inspect -f '{{.State.Running}}' "$c" 2>/dev/null)" = true ]
}

# down_all [-v]: the project down; its networks too with -v.
down_all() {
	local rc=0
	t 300 "${compose[@]}" down "$@" >>"$logs/compose.log" 2>&1 || rc=$?
	if [ "${1:-}" = -v ]; then
		for n in $(t 30 $engine network ls -q --filter "label=com.docker.compose.project=$project" 2>/dev/null); do
			t 30 $engine network rm "$n" >>"$logs/compose.log" 2>&1
		done
	fi
	return $rc
}

finish() {
	trap - EXIT INT TERM
	if [ "$(count_containers)" -gt 0 ]; then
		for s in $services; do
			c=$(ctr "$s")
			[ -n "$c" ] && t 30 $engine logs "$c" >"$logs/$s.log" 2>&1
		done
	fi
	down_all -v
	say "logs in $logs; whole run $(since "$t_start") s"
	echo "compose: $npass passed, $nfail failed"
	[ "$nfail" -eq 0 ] && [ "$npass" -gt 0 ]
	exit
}
trap finish EXIT
trap 'exit 1' INT TERM

# ---- HTTP helpers ------------------------------------------------------
# req METHOD PATH [BODY] [TOKEN]: sets code and body.
code=000
body=
req() {
	local out=$logs/body.$BASHPID
	local args=(-s -o "$out" -w '%{http_code}' --max-time 10 -X "$1")
	[ -n "${3:-}" ] && args+=(-H 'Content-Type: application/json' --data "$3")
	[ -n "${4:-}" ] && args+=(-H "Authorization: Bearer $4")
	code=$(curl "${args[@]}" "$http$2" 2>/dev/null) || code=000
	body=$(cat "$out" 2>/dev/null)
	rm -f "$out"
}
# field NAME: the string value of "NAME" in body (first one).
field() { printf '%s' "$body" | sed -n 's/^.*"'"$1"'":"\([^"]*\)".*$/\1/p' | head -n 1; }
expect_code() {
	if [ "$code" = "$1" ]; then return 0; fi
	echo "    got HTTP $code: $body" | head -c 400
	echo
	return 1
}
register() {
	req POST /api/v1/users "{\"name\":\"$1\",\"password\":\"$pw\"}"
	expect_code 201
}
# login NAME VAR: the session token into VAR.
login() {
	req POST /api/v1/sessions "{\"name\":\"$1\",\"password\":\"$pw\"}"
	expect_code 201 || return 1
	printf -v "$2" '%s' "$(field token)"
	[ -n "${!2}" ]
}
# publish TOKEN TEXT: the new post's id into pid.
pid=
publish() {
	req POST /api/v1/posts "{\"text\":\"$2\"}" "$1"
	expect_code 201 || return 1
	pid=$(field id)
	[ -n "$pid" ]
}
# until_ok SECONDS CMD...: CMD until it succeeds, at most SECONDS.
until_ok() {
	local deadline=$(($(date +%s) + $1))
	shift
	while ! "$@"; do
		[ "$(date +%s)" -ge "$deadline" ] && return 1
		sleep 1
	done
}
ready() {
	req GET /readyz
	[ "$code" = 200 ]
}
# home_has TOKEN ID...: the home timeline holds every ID.
home_has() {
	local tok=$1 id
	shift
	req GET "/api/v1/home?limit=100" "" "$tok"
	[ "$code" = 200 ] || return 1
	for id in "$@"; do
		case $body in *"\"id\":\"$id\""*) ;; *) return 1 ;; esac
	done
}
home_lacks() {
	req GET "/api/v1/home?limit=100" "" "$1"
	[ "$code" = 200 ] && case $body in *"\"id\":\"$2\""*) false ;; *) true ;; esac
}
# timeline_missing NAME ID...: prints the IDs missing from NAME's posts.
timeline_missing() {
	local name=$1 id
	shift
	req GET "/api/v1/users/$name/posts?limit=100"
	[ "$code" = 200 ] || {
		echo "timeline: HTTP $code"
		return
	}
	for id in "$@"; do
		case $body in *"\"id\":\"$id\""*) ;; *) printf '%s ' "$id" ;; esac
	done
}
# all_ready: /readyz answers 200 and every daemon answers its probe.
probe_all() {
	local s port
	for s in $services; do
		case $s in user) port=7101 ;; relation) port=7102 ;; content) port=7103 ;;
		inbox) port=7104 ;; gateway) port=7100 ;; esac
		t 20 $engine exec "$(ctr "$s")" warble-probe "tcp://127.0.0.1:$port" >/dev/null 2>&1 || {
			echo "    $s does not answer its probe"
			return 1
		}
	done
}
all_ready() { until_ok "${1:-180}" ready && probe_all; }
ctl() { t 30 $engine exec "$(ctr gateway)" warblectl --gateway tcp://127.0.0.1:7100 "$@"; }

# ---- the base image (once per machine) ---------------------------------
t0=$(date +%s)
if t 30 $engine image inspect debian:bookworm >/dev/null 2>&1 &&
	t 30 $engine image inspect debian:bookworm-slim >/dev/null 2>&1; then
	say "base image debian:bookworm(-slim) cached"
else
	say "base image: debootstrap --variant=minbase bookworm ($mirror)"
	dir=$(mktemp -d /var/tmp/warble-base.XXXXXX)
	if t 1200 debootstrap --variant=minbase bookworm "$dir" "$mirror" >"$logs/debootstrap.log" 2>&1 &&
		tar -C "$dir" -c . | t 600 $engine import - debian:bookworm >>"$logs/debootstrap.log" 2>&1 &&
		t 60 $engine tag debian:bookworm debian:bookworm-slim; then
		ok "base image made in $(since "$t0") s"
	else
		bad "base image (see $logs/debootstrap.log)"
		rm -rf "$dir"
		exit 1
	fi
	rm -rf "$dir"
fi

# ---- the image ---------------------------------------------------------
t0=$(date +%s)
if t 2400 $engine build -f deploy/Dockerfile -t "$image" . >"$logs/build.log" 2>&1; then
	ok "image $image built in $(since "$t0") s"
else
	tail -n 30 "$logs/build.log"
	bad "image build (see $logs/build.log)"
	exit 1
fi

# ---- up ----------------------------------------------------------------
say "clearing what an earlier run may have left"
down_all -v
t0=$(date +%s)
if ! t 600 "${compose[@]}" up -d >>"$logs/compose.log" 2>&1; then
	tail -n 30 "$logs/compose.log"
	bad "compose up (see $logs/compose.log)"
	exit 1
fi
if all_ready 180; then ok "up: every service ready in $(since "$t0") s"; else bad "up: every service ready"; fi
for s in $services; do
	check "up: $s running" running "$s"
done

# ---- the seed flows over the published HTTP port -----------------------
check "http: register alice, bob, erin" eval 'register alice && register bob && register erin'
check "http: login alice, bob, erin" eval 'login alice ta && login bob tb && login erin te'
req PUT /api/v1/me/following/alice "" "${tb:-x}"
check "http: bob follows alice" expect_code 200
req PUT /api/v1/me/following/alice "" "${te:-x}"
check "http: erin follows alice" expect_code 200
check "http: alice publishes" publish "${ta:-x}" "hello from compose"
p1=$pid
check "http: bob's home shows it" until_ok 30 home_has "${tb:-x}" "${p1:-none}"
req DELETE /api/v1/me/following/alice "" "${tb:-x}"
check "http: bob unfollows alice" expect_code 200
req GET /api/v1/users/bob/following
check "http: bob's following list lacks alice" eval '[ "$code" = 200 ] && ! grep -q alice <<<"$body"'

# ---- warblectl inside the gateway container ----------------------------
check "warblectl: register carol" eval 'ctl register carol --password "$pw" >/dev/null'
check "warblectl: login carol" eval 'ctl login carol --password "$pw" >/dev/null'
check "warblectl: carol follows alice" eval 'ctl follow alice >/dev/null'
check "http: alice publishes again" publish "${ta:-x}" "second from compose"
p2=$pid
check "warblectl: carol's home shows it" until_ok 30 eval 'ctl home | grep -q "second from compose"'
check "http: bob's home (unfollowed) lacks it" home_lacks "${tb:-x}" "${p2:-none}"
check "warblectl: carol posts" eval 'ctl post "carol via warblectl" >/dev/null'
check "warblectl: carol unfollows alice" eval 'ctl unfollow alice >/dev/null'
check "warblectl: carol's following lacks alice" eval 'out=$(ctl following carol) && ! grep -q alice <<<"$out"'
req GET /api/v1/users/carol/posts
check "http: carol's post is on her timeline" eval '[ "$code" = 200 ] && grep -q "carol via warblectl" <<<"$body"'

# ---- kill -9 a store under writes --------------------------------------
# alice posts 40 times in the background; the content daemon (the
# container's first process) gets SIGKILL from the host once some posts
# are acknowledged; the restart policy (or, failing it, start) brings it
# back, and every acknowledged id must be there after.
acked=$logs/acked
: >"$acked"
(
	for i in $(seq 1 40); do
		req POST /api/v1/posts "{\"text\":\"kill test $i\"}" "${ta:-x}"
		[ "$code" = 201 ] && echo "$(field id)" >>"$acked"
		[ "$code" = 201 ] || sleep 0.2
	done
) &
writer=$!
until_ok 60 eval '[ "$(grep -c . "$acked")" -ge 5 ]'
before=$(grep -c . "$acked")
c=$(ctr content)
hostpid=$(t 30 $engine inspect -f '{{.State.Pid}}' "$c" 2>/dev/null)
check "kill: kill -9 content (pid $hostpid) after $before acknowledged posts" \
	eval '[ "${hostpid:-0}" -gt 1 ] && kill -9 "$hostpid"'
until_ok 10 eval '! kill -0 "$hostpid" 2>/dev/null'
if until_ok 30 running content; then
	say "kill: the restart policy brought content back"
else
	say "kill: content stayed down; starting it"
	t 60 $engine start "$c" >/dev/null 2>&1
fi
restarted() {
	running content && [ "$(t 30 $engine inspect -f '{{.State.Pid}}' "$(ctr content)")" != "$hostpid" ]
}
check "kill: content running again (a new process)" until_ok 60 restarted
t 180 tail --pid="$writer" -f /dev/null
wait "$writer" 2>/dev/null
mapfile -t ids < <(grep . "$acked")
say "kill: ${#ids[@]} of 40 posts acknowledged ($before before the kill)"
check "kill: every service ready after the restart" all_ready 120
missing=$(timeline_missing alice "${ids[@]}")
check "kill: every acknowledged post is on alice's timeline" eval '[ -z "$missing" ] || { echo "    missing: $missing"; false; }'
check "kill: erin's home holds every acknowledged post" until_ok 60 home_has "${te:-x}" "${ids[@]}"

# ---- down then up: the named volumes keep the data ---------------------
check "down: project down" eval 'down_all'
check "down: no container left" eval '[ "$(count_containers)" -eq 0 ]'
check "down: the four store volumes and backup kept" eval '[ "$(count_volumes)" -eq 5 ]'
check "up: project up again" eval 't 600 "${compose[@]}" up -d >>"$logs/compose.log" 2>&1'
check "up: every service ready again" all_ready 180
check "up: alice logs in (user store)" login alice ta
req GET /api/v1/users/erin/following
check "up: erin still follows alice (relation store)" eval '[ "$code" = 200 ] && grep -q alice <<<"$body"'
missing=$(timeline_missing alice "${p1:-none}" "${p2:-none}" "${ids[@]}")
check "up: alice's posts kept (content store)" eval '[ -z "$missing" ] || { echo "    missing: $missing"; false; }'
check "up: erin's home kept (inbox store)" home_has "${te:-x}" "${p1:-none}" "${ids[@]}"

# ---- down -v -----------------------------------------------------------
down_all -v
check "down -v: no container of the project" eval '[ "$(count_containers)" -eq 0 ]'
check "down -v: no volume of the project" eval '[ "$(count_volumes)" -eq 0 ]'
