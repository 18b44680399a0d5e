#!/usr/bin/env bash
# compose_run.sh - make test-compose: builds deploy/Dockerfile and runs the
# two compose files for real, one after the other, each checked end to end
# by the same checks:
#
#   default  deploy/docker-compose.yml          the five services, one each
#   sharded  deploy/docker-compose.sharded.yml  relation 2, content 2,
#            inbox 3 shards, two gateways, mutual TLS inside
#
#   tests/deploy/compose_run.sh [default] [sharded]   (both when none named)
#
# The engine is docker compose when `docker info` finds an engine, else
# podman with podman-compose (settings in deploy/podman/containers.conf,
# named by CONTAINERS_CONF).  Each file runs under a project name of its
# own and on published ports of its own on 127.0.0.1, so it never meets
# `make run` (8080, 7100-7115):
#
#   WARBLE_COMPOSE_PROJECT  project name   (warble-compose-test; the sharded
#                                           file's gets "-sharded" added)
#   WARBLE_COMPOSE_HTTP     published HTTP port   (18080; a second gateway +1)
#   WARBLE_COMPOSE_API      published msgpack API (17100; a second gateway +1)
#
# No image registry is needed: the base debian:bookworm (and -slim) image
# is made once with debootstrap and imported, then kept for later runs.
# The sharded file's certificates are made with deploy/make-certs into a
# folder of the run's own (its keys owned by the image's user, 999).
#
# Checks, for each file: every service ready; the seed flows (register,
# follow, publish, home, unfollow) over the published HTTP ports, each
# request through the next gateway in turn, and with warblectl inside the
# last gateway's container; the content shard that holds a user's posts,
# killed with SIGKILL while that user posts, loses none that were
# acknowledged; `warblectl admin backup` copies every store (sharded: from
# the one-off admin container, the one with the admin identity); down then
# up keeps the named volumes' data; down -v leaves no container nor
# volume.  The sharded file also: each container holds ca.pem and its own
# service's pair alone, and an internal port refuses a peer without a
# certificate.  Every step has a timeout; each project is taken down (-v)
# at its end and on exit.  The last line is "compose: N passed, M failed".
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1

layouts=${*:-default sharded}
project_base=${WARBLE_COMPOSE_PROJECT:-warble-compose-test}
http_port=${WARBLE_COMPOSE_HTTP:-18080}
api_port=${WARBLE_COMPOSE_API:-17100}
export WARBLE_PUBLISH_IP=127.0.0.1
export WARBLE_PUBLISH_HTTP=$http_port WARBLE_PUBLISH_HTTP1=$((http_port + 1))
export WARBLE_PUBLISH_API=$api_port WARBLE_PUBLISH_API1=$((api_port + 1))
export CONTAINERS_CONF=${CONTAINERS_CONF:-$root/deploy/podman/containers.conf}
image=warble:latest
mirror=${WARBLE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
logs_base=$root/${BUILD:-build}/compose-test
logs=$logs_base
pw=compose-pass-1
npass=0
nfail=0
t_start=$(date +%s)
tag=

for l in $layouts; do
	case $l in default | sharded) ;; *)
		echo "usage: compose_run.sh [default] [sharded]" >&2
		exit 2
		;;
	esac
done
mkdir -p "$logs_base"
rm -rf "${logs_base:?}"/*

say() { printf 'compose: %s%s\n' "$tag" "$*"; }
ok() {
	npass=$((npass + 1))
	printf 'compose: ok    %s%s\n' "$tag" "$*"
}
bad() {
	nfail=$((nfail + 1))
	printf 'compose: FAIL  %s%s\n' "$tag" "$*"
}
# check NAME CMD...: one check, passed when CMD succeeds (its time shown
# when it took 2 s or more).
check() {
	local name=$1 t0=$SECONDS
	shift
	if "$@"; then
		[ $((SECONDS - t0)) -lt 2 ] || name="$name ($((SECONDS - t0)) s)"
		ok "$name"
	else
		bad "$name ($((SECONDS - t0)) s)"
	fi
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
	compose_cmd=(docker compose)
elif command -v podman >/dev/null 2>&1 && command -v podman-compose >/dev/null 2>&1; then
	engine=podman
	compose_cmd=(podman-compose)
else
	say "no engine: neither docker (with a running engine) nor podman and podman-compose"
	say "install them with:  tests/deps.sh compose   (as root)"
	bad "engine"
	echo "compose: $npass passed, $nfail failed"
	exit 1
fi
say "engine $engine; layouts: $layouts"

# ---- the layout under test (set by layout NAME) ------------------------
project=
file=
compose=()
services=  # every service of the file
gateways=  # the gateways, in the order requests take them
stores=    # the services with a store: each its own named volume
ctl_gw=    # the gateway whose container runs warblectl
tls_dir=   # the certificates' folder (mutual TLS), or empty
gw_urls=() # each gateway's published HTTP base URL

# layout NAME: the file, project, services and ports of layout NAME.
layout() {
	case $1 in
	default)
		file=deploy/docker-compose.yml
		project=$project_base
		stores="user relation content inbox"
		gateways="gateway"
		tls_dir=
		gw_urls=("http://127.0.0.1:$WARBLE_PUBLISH_HTTP")
		;;
	sharded)
		file=deploy/docker-compose.sharded.yml
		project=$project_base-sharded
		stores="user relation0 relation1 content0 content1 inbox0 inbox1 inbox2"
		gateways="gateway0 gateway1"
		tls_dir=$logs/tls
		gw_urls=("http://127.0.0.1:$WARBLE_PUBLISH_HTTP" "http://127.0.0.1:$WARBLE_PUBLISH_HTTP1")
		;;
	esac
	services="$stores $gateways"
	ctl_gw=${gateways##* }
	compose=("${compose_cmd[@]}" -p "$project" -f "$file")
	export WARBLE_TLS_HOST_DIR=$tls_dir
}

# kind SERVICE: the daemon a service runs (relation1 -> relation).
kind() { printf '%s' "${1%%[0-9]*}"; }
# port SERVICE: its REQ/REP port inside the container.
port() {
	case $(kind "$1") in
	user) echo 7101 ;; relation) echo 7102 ;; content) echo 7103 ;;
	inbox) echo 7104 ;; gateway) echo 7100 ;; esac
}
# shards KIND: the services of one daemon (content0 content1).
shards() {
	local s out=
	for s in $services; do [ "$(kind "$s")" = "$1" ] && out="$out $s"; done
	printf '%s' "${out# }"
}

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

# cleanup: if a project is up (live), its container logs kept, then down -v.
live=
cleanup() {
	local s c
	[ -n "$live" ] || return 0
	live=
	if [ "$(count_containers)" -gt 0 ]; then
		for s in $services; do
			c=$(ctr "$s")
			[ -n "$c" ] && t 30 $engine logs "$c" >"$logs/$s.log" 2>&1
		done
	fi
	down_all -v
}

finish() {
	trap - EXIT INT TERM
	tag=
	cleanup
	say "logs in $logs_base; whole run $(since "$t_start") s"
	echo "compose: $npass passed, $nfail failed"
	[ "$nfail" -eq 0 ] && [ "$npass" -gt 0 ]
	exit
}
trap finish EXIT
trap 'exit 1' INT TERM

# ---- HTTP helpers ------------------------------------------------------
# req METHOD PATH [BODY] [TOKEN]: sets code and body; each call goes to the
# next gateway in turn (gw_next counts them in this shell).
code=000
body=
gw_next=0
req() {
	local out=$logs/body.$BASHPID
	local url=${gw_urls[gw_next % ${#gw_urls[@]}]}
	local args=(-s -o "$out" -w '%{http_code}' --max-time 10 -X "$1")
	gw_next=$((gw_next + 1))
	[ -n "${3:-}" ] && args+=(-H 'Content-Type: application/json' --data "$3")
	[ -n "${4:-}" ] && args+=(-H "Authorization: Bearer $4")
	code=$(curl "${args[@]}" "$url$2" 2>/dev/null) || code=000
	body=$(cat "$out" 2>/dev/null)
	rm -f "$out"
}
# field NAME: the string value of "NAME" in body (first one).
field() { printf '%s' "$body" | sed -n 's/^.*"'"$1"'":"\([^"]*\)".*$/\1/p' | head -n 1; }
# num_field NAME: the number value of "NAME" in body (first one).
num_field() { printf '%s' "$body" | sed -n 's/^.*"'"$1"'":\([0-9][0-9]*\).*$/\1/p' | head -n 1; }
expect_code() {
	if [ "$code" = "$1" ]; then return 0; fi
	echo "    got HTTP $code: $body" | head -c 400
	echo
	return 1
}
# register NAME [VAR]: a new user; its uid into VAR.
register() {
	req POST /api/v1/users "{\"name\":\"$1\",\"password\":\"$pw\"}"
	expect_code 201 || return 1
	[ -z "${2:-}" ] || printf -v "$2" '%s' "$(num_field uid)"
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
# ready: every gateway's /readyz answers 200 (it names every shard).
ready() {
	local u
	for u in "${gw_urls[@]}"; do
		[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "$u/readyz" 2>/dev/null)" = 200 ] ||
			return 1
	done
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
# probe SERVICE [ARG...]: warble-probe inside SERVICE's container, as its
# own identity under TLS (the gateway's public port: plain).
probe() {
	local s=$1 who=()
	shift
	if [ -n "$tls_dir" ]; then
		if [ "$(kind "$s")" = gateway ]; then who=(--plain); else who=(--tls-name "$(kind "$s")"); fi
	fi
	t 20 $engine exec "$(ctr "$s")" warble-probe "${who[@]}" "$@" "tcp://127.0.0.1:$(port "$s")"
}
# probe_all: every daemon answers its probe.
probe_all() {
	local s
	for s in $services; do
		probe "$s" >/dev/null 2>&1 || {
			echo "    $s does not answer its probe"
			return 1
		}
	done
}
# all_ready [SECONDS]: every gateway's /readyz is 200 and every daemon answers.
all_ready() { until_ok "${1:-180}" ready && probe_all; }
ctl() { t 30 $engine exec "$(ctr "$ctl_gw")" warblectl --gateway tcp://127.0.0.1:7100 "$@"; }

# uid_shard UID COUNT: the shard of COUNT that owns UID's slot (proto/wb_slot.h:
# the splitmix64 finalizer mod 4096, 64 groups; bash's arithmetic is signed,
# so each right shift is masked to a logical one).
uid_shard() {
	local x=$(($1 + 0x9e3779b97f4a7c15))
	x=$(((x ^ ((x >> 30) & ((1 << 34) - 1))) * 0xbf58476d1ce4e5b9))
	x=$(((x ^ ((x >> 27) & ((1 << 37) - 1))) * 0x94d049bb133111eb))
	x=$((x ^ ((x >> 31) & ((1 << 33) - 1))))
	local group=$(((x & 4095) >> 6))
	echo $((((group + 1) * $2 - 1) / 64))
}

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

# ---- one layout, end to end --------------------------------------------
# run_layout NAME: up, the seed flows, the kill, down and up, down -v;
# returns early (after a failed check) when going on would prove nothing.
run_layout() {
	local t0 s c k n want got hostpid before writer missing bk
	local ta= tb= te= p1= p2= uid_a= victim
	local -a ids=()
	logs=$logs_base/$1
	mkdir -p "$logs"
	layout "$1"
	tag="$1: "
	say "project $project, file $file, http ${gw_urls[*]}"

	if [ -n "$tls_dir" ]; then
		rm -rf "$tls_dir"
		if t 60 deploy/make-certs --days 30 "$tls_dir" >"$logs/make-certs.log" 2>&1 &&
			chown 999:999 "$tls_dir"/*.key; then
			ok "certificates made in $tls_dir (keys owned by 999)"
		else
			bad "certificates (see $logs/make-certs.log)"
			return
		fi
	fi

	# ---- up ------------------------------------------------------------
	say "clearing what an earlier run may have left"
	live=1
	down_all -v
	t0=$(date +%s)
	if ! t 600 "${compose[@]}" up -d >>"$logs/compose.log" 2>&1; then
		tail -n 30 "$logs/compose.log"
		bad "compose up (see $logs/compose.log)"
		return
	fi
	if all_ready 240; then ok "up: every service ready in $(since "$t0") s"; else bad "up: every service ready"; fi
	for s in $services; do
		check "up: $s running" running "$s"
	done

	if [ -n "$tls_dir" ]; then
		# each container holds the CA and its own service's pair, nothing else
		for s in $services; do
			want="ca.pem $(kind "$s").key $(kind "$s").pem"
			got=$(t 20 $engine exec "$(ctr "$s")" ls /etc/warble/tls 2>&1 | tr '\n' ' ')
			check "tls: $s holds only $want" eval '[ "${got% }" = "$want" ] || { echo "    holds: $got"; false; }'
		done
		check "tls: relation1 answers the gateway's identity" \
			eval 't 20 $engine exec "$(ctr gateway0)" warble-probe --tls-name gateway tcp://relation1:7102 >/dev/null 2>&1'
		check "tls: content0 refuses a peer without a certificate" \
			eval '! t 20 $engine exec "$(ctr gateway0)" warble-probe --plain --timeout-ms 3000 tcp://content0:7103 2>/dev/null'
	fi

	# ---- the seed flows over the published HTTP ports --------------------
	gw_next=0
	check "http: register alice, bob, erin" eval 'register alice uid_a && register bob && register erin'
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
	# bob's posts live on another content shard than alice's (sharded file)
	req PUT /api/v1/me/following/bob "" "${te:-x}"
	check "http: erin follows bob" expect_code 200
	check "http: bob publishes" publish "${tb:-x}" "bob from compose"
	check "http: erin's home shows alice's and bob's" until_ok 30 home_has "${te:-x}" "${p1:-none}" "${pid:-none}"

	# ---- warblectl inside a gateway container ----------------------------
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
	if [ "${#gw_urls[@]}" -gt 1 ]; then
		say "http: $gw_next requests so far, taking the ${#gw_urls[@]} gateways in turn"
	fi

	# ---- kill -9 a store under writes ------------------------------------
	# alice posts in the background until told to stop (at most 80 posts
	# acknowledged, so that her timeline and erin's home fit one page of
	# 100; at most 120 s); the content shard that owns her uid (its
	# container's first process) gets SIGKILL from the host once 5 are
	# acknowledged; the restart policy (or, failing it, start) brings it
	# back; the writer stops once 5 more are acknowledged after that.
	# Every acknowledged id must be there after.
	n=$(shards content | wc -w)
	victim=content
	if [ "$n" -gt 1 ]; then
		victim=content$(uid_shard "${uid_a:-1}" "$n")
		say "kill: alice (uid ${uid_a:-?}) posts to $victim, one of $n content shards"
	fi
	c=$(ctr "$victim")
	hostpid=$(t 30 $engine inspect -f '{{.State.Pid}}' "$c" 2>/dev/null)
	acked=$logs/acked
	refused=$logs/refused
	stop=$logs/stop
	: >"$acked"
	: >"$refused"
	rm -f "$stop"
	(
		i=0
		deadline=$(($(date +%s) + 120))
		while [ ! -e "$stop" ] && [ "$(grep -c . "$acked")" -lt 80 ] &&
			[ "$(date +%s)" -lt "$deadline" ]; do
			i=$((i + 1))
			req POST /api/v1/posts "{\"text\":\"kill test $i\"}" "${ta:-x}"
			if [ "$code" = 201 ]; then
				echo "$(field id)" >>"$acked"
				sleep 0.05
			else
				echo "$i $code" >>"$refused"
				sleep 0.2
			fi
		done
	) &
	writer=$!
	# acked_at_least N SECONDS: N posts acknowledged within SECONDS (or the writer ended).
	acked_at_least() {
		local deadline=$(($(date +%s) + $2))
		while [ "$(grep -c . "$acked")" -lt "$1" ]; do
			kill -0 "$writer" 2>/dev/null || return 1
			[ "$(date +%s)" -ge "$deadline" ] && return 1
			sleep 0.1
		done
	}
	acked_at_least 5 60
	before=$(grep -c . "$acked")
	check "kill: kill -9 $victim (pid $hostpid) while alice posts, $before acknowledged" \
		eval '[ "${hostpid:-0}" -gt 1 ] && kill -0 "$writer" && kill -9 "$hostpid"'
	until_ok 10 eval '! kill -0 "$hostpid" 2>/dev/null'
	if until_ok 30 running "$victim"; then
		say "kill: the restart policy brought $victim back"
	else
		say "kill: $victim stayed down; starting it"
		t 60 $engine start "$c" >/dev/null 2>&1
	fi
	restarted() {
		running "$victim" && [ "$(t 30 $engine inspect -f '{{.State.Pid}}' "$(ctr "$victim")")" != "$hostpid" ]
	}
	check "kill: $victim running again (a new process)" until_ok 60 restarted
	n=$(grep -c . "$acked")
	check "kill: alice's posts acknowledged again after the restart" acked_at_least $((n + 5)) 90
	touch "$stop"
	t 180 tail --pid="$writer" -f /dev/null
	wait "$writer" 2>/dev/null
	mapfile -t ids < <(grep . "$acked")
	say "kill: ${#ids[@]} posts acknowledged ($before before the kill), $(grep -c . "$refused") refused or failed"
	check "kill: every service ready after the restart" all_ready 120
	missing=$(timeline_missing alice "${ids[@]}")
	check "kill: every acknowledged post is on alice's timeline" eval '[ -z "$missing" ] || { echo "    missing: $missing"; false; }'
	check "kill: erin's home holds every acknowledged post" until_ok 60 home_has "${te:-x}" "${ids[@]}"

	# ---- a backup of every store, as the admin ---------------------------
	# default: warblectl inside the inbox container (no TLS); sharded: the
	# one-off admin container, the one with the admin identity.
	bk=/backup/compose-test
	if [ -n "$tls_dir" ]; then
		check "admin: warblectl admin backup $bk (compose run admin)" \
			eval 't 180 "${compose[@]}" run --rm -T --no-deps admin warblectl admin backup "$bk" >>"$logs/admin.log" 2>&1'
	else
		check "admin: warblectl admin backup $bk (in inbox)" \
			eval 't 180 $engine exec "$(ctr inbox)" warblectl admin backup "$bk" >>"$logs/admin.log" 2>&1'
	fi
	want=$(for s in $stores; do
		k=$(kind "$s")
		if [ "$s" = "$k" ]; then echo "$k"; else echo "$k.${s#"$k"}"; fi
	done
		echo manifest.json)
	want=$(LC_ALL=C sort <<<"$want" | tr '\n' ' ')
	got=$(t 20 $engine exec "$(ctr user)" ls "$bk" 2>&1 | LC_ALL=C sort | tr '\n' ' ')
	check "admin: the backup holds ${want% }" eval '[ "$got" = "$want" ] || { echo "    holds: $got"; false; }'
	check "admin: its manifest says consistent" \
		eval 't 20 $engine exec "$(ctr user)" cat "$bk/manifest.json" | grep -Eq "\"consistent\": ?true"'

	# ---- down then up: the named volumes keep the data -------------------
	n=$(($(echo $stores | wc -w) + 1))
	check "down: project down" eval 'down_all'
	check "down: no container left" eval '[ "$(count_containers)" -eq 0 ]'
	check "down: the $((n - 1)) store volumes and backup kept" eval '[ "$(count_volumes)" -eq $n ]'
	check "up: project up again" eval 't 600 "${compose[@]}" up -d >>"$logs/compose.log" 2>&1'
	check "up: every service ready again" all_ready 240
	check "up: alice logs in (user store)" login alice ta
	req GET /api/v1/users/erin/following
	check "up: erin still follows alice (relation store)" eval '[ "$code" = 200 ] && grep -q alice <<<"$body"'
	missing=$(timeline_missing alice "${p1:-none}" "${p2:-none}" "${ids[@]}")
	check "up: alice's posts kept (content store)" eval '[ -z "$missing" ] || { echo "    missing: $missing"; false; }'
	check "up: erin's home kept (inbox store)" home_has "${te:-x}" "${p1:-none}" "${ids[@]}"

	# ---- down -v ---------------------------------------------------------
	check "down -v: project down with its volumes" cleanup
	check "down -v: no container of the project" eval '[ "$(count_containers)" -eq 0 ]'
	check "down -v: no volume of the project" eval '[ "$(count_volumes)" -eq 0 ]'
}

for l in $layouts; do
	t0=$(date +%s)
	run_layout "$l"
	tag="$l: "
	cleanup
	say "run in $(since "$t0") s"
	tag=
done
