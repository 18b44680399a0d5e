#!/usr/bin/env bash
# make-store.sh - makes the data folder of an earlier Warble release for
# the upgrade test (tests/integration/upgrade_test.c): it runs that
# release's five daemons on an empty folder, writes a small data set
# through its own warblectl, records what the release then answers in a
# manifest, stops the daemons cleanly and packs the folder.
#
#   tests/data/stores/make-store.sh COMMIT           builds COMMIT in a scratch worktree
#   tests/data/stores/make-store.sh --bin DIR NAME   a release built already (DIR/warble-user ...)
#
# Writes tests/data/stores/NAME.tar.gz (the folder: user/ relation/
# content/ inbox/, without RocksDB's text logs) and NAME.json (the
# manifest); NAME is release-<short commit>.  Needs jq and curl.
#
# The data set: users user01..user20, password "old-pass-NAME" (user20's
# hashed at the release's default argon2id cost, the others' at the
# tests' cost, 1 pass and 8 KiB, to keep the test quick); user01 is
# followed by everyone else (19 fans, fanned out 4 to a page: the
# release runs with WARBLE_INBOX_FANOUT_PAGE=4), each of user02..user20
# follows the next two; posts before and after the follows (so follows
# backfill), a post with a title and a category, one with an image, three
# posts deleted, one follow undone (a purge) and one made after the
# followee's posts.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
scratch=
work=
pids=()
cleanup() {
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		kill -KILL "${pids[i]}" 2>/dev/null || true
	done
	[ -z "$work" ] || rm -rf "$work"
	if [ -n "$scratch" ]; then
		git -C "$root" worktree remove --force "$scratch/src" 2>/dev/null || true
		rm -rf "$scratch"
	fi
}
trap cleanup EXIT
for tool in jq curl; do
	command -v $tool >/dev/null || { echo "make-store.sh: needs $tool" >&2; exit 1; }
done
if [ "${1:-}" = --bin ]; then
	bin=$(cd "${2:?usage: make-store.sh --bin DIR NAME}" && pwd)
	name=${3:?usage: make-store.sh --bin DIR NAME}
	commit=$(git -C "$bin" rev-parse HEAD 2>/dev/null || echo unknown)
else
	rev=${1:?usage: make-store.sh COMMIT | --bin DIR NAME}
	commit=$(git -C "$root" rev-parse --verify "$rev^{commit}")
	name=release-$(git -C "$root" rev-parse --short=7 "$commit")
	scratch=$(mktemp -d /tmp/warble-rel.XXXXXX)
	git -C "$root" worktree add --detach "$scratch/src" "$commit" >/dev/null
	if [ -d "$root/build/nng" ]; then # the patched nng, built already: saves a minute
		mkdir -p "$scratch/src/build"
		cp -a "$root/build/nng" "$scratch/src/build/"
	fi
	echo "make-store.sh: building $commit"
	make -C "$scratch/src" -j2 daemons >"$scratch/build.log" 2>&1 ||
		{ tail -20 "$scratch/build.log" >&2; exit 1; }
	bin=$scratch/src/build/bin
fi

work=$(mktemp -d /tmp/warble-store.XXXXXX)
data=$work/data

export WARBLE_DATA=$data
export WARBLE_USER_URL=ipc://$work/user.ipc
export WARBLE_RELATION_URL=ipc://$work/relation.ipc
export WARBLE_CONTENT_URL=ipc://$work/content.ipc
export WARBLE_INBOX_URL=ipc://$work/inbox.ipc
export WARBLE_GATEWAY_URL=ipc://$work/gateway.ipc
export WARBLE_RELATION_PUB_URL=ipc://$work/relation-pub.ipc
export WARBLE_CONTENT_PUB_URL=ipc://$work/content-pub.ipc
export WARBLE_HTTP_URL=http://127.0.0.1:0
export WARBLE_INBOX_FANOUT_PAGE=4
export WARBLE_LOGIN_FAILS=1000
export WARBLE_CLIENT_LOGIN_FAILS=1000
# passwords hashed at the tests' cost (argon2id, 1 pass, 8 KiB), but for
# user20's: the release's default cost (the user service restarted for it)
cheap="WARBLE_PWHASH_OPS=1 WARBLE_PWHASH_MEM=8192"
mkdir -p "$data/log" "$work/cfg"
# ready NAME: waits until the daemon of service NAME answers
ready() {
	local url=WARBLE_${1^^}_URL
	for i in $(seq 100); do
		"$bin/warble-probe" --timeout-ms 500 "${!url}" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "make-store.sh: $1 never answered" >&2
	tail "$data"/log/*.log >&2
	exit 1
}
for s in user relation content inbox gateway; do
	env $cheap "$bin/warble-$s" 2>>"$data/log/$s.log" &
	pids+=($!)
done
for s in user relation content inbox gateway; do
	ready $s
done
port=$(sed -n 's/.*HTTP on .* (port \([0-9]*\)).*/\1/p' "$data/log/gateway.log" | tail -1)

# ctl NAME ARGS...: warblectl as NAME (each user has a config folder of its own)
ctl() {
	local who=$1
	shift
	mkdir -p "$work/cfg/$who"
	XDG_CONFIG_HOME=$work/cfg/$who "$bin/warblectl" --json "$@"
}
u() { printf 'user%02d' "$1"; }
declare -A uid
posts='[]'
follows='[]'
# post NAME TEXT [warblectl options]: publishes and records the post
post() {
	local who=$1 text=$2 id
	shift 2
	id=$(ctl "$who" post "$@" "$text" | jq -r .id)
	posts=$(jq -c --arg a "$who" --arg id "$id" --arg t "$text" --argjson o "$(opts_json "$@")" \
		'. + [{id: $id, author: $a, text: $t, deleted: false} + $o]' <<<"$posts")
	last_post=$id
}
opts_json() {
	local o='{}'
	while [ $# -gt 0 ]; do
		case $1 in
		--title) o=$(jq -c --arg v "$2" '. + {title: $v}' <<<"$o") ;;
		--category) o=$(jq -c --arg v "$2" '. + {category: $v}' <<<"$o") ;;
		--image) o=$(jq -c '. + {images: 1}' <<<"$o") ;;
		esac
		shift 2
	done
	echo "$o"
}
delete() {
	ctl "$1" delete "$2" >/dev/null
	posts=$(jq -c --arg id "$2" 'map(if .id == $id then .deleted = true else . end)' <<<"$posts")
}
follow() {
	ctl "$1" follow "$2" >/dev/null
	follows=$(jq -c --arg a "$1" --arg b "$2" '. + [[$a, $b]]' <<<"$follows")
}
unfollow() {
	ctl "$1" unfollow "$2" >/dev/null
	follows=$(jq -c --arg a "$1" --arg b "$2" 'map(select(. != [$a, $b]))' <<<"$follows")
}

# join NAME: registers and logs in
join() {
	uid[$1]=$(ctl "$1" register "$1" --password "old-pass-$1" | jq -r .uid)
	ctl "$1" login "$1" --password "old-pass-$1" >/dev/null
}
for i in $(seq 19); do
	join "$(u "$i")"
done
kill -TERM "${pids[0]}"
wait "${pids[0]}"
"$bin/warble-user" 2>>"$data/log/user.log" &
pids[0]=$!
ready user
join user20
# posts before any follow: a follow backfills them
for i in $(seq 20); do
	post "$(u "$i")" "first words of $(u "$i")"
done
post user01 "a post of user01 deleted before anyone follows"
delete user01 "$last_post"
for i in $(seq 2 20); do
	follow "$(u "$i")" user01
	follow "$(u "$i")" "$(u $(((i - 1) % 19 + 2)))"
	follow "$(u "$i")" "$(u $((i % 19 + 2)))"
done
# posts after the follows: fanned out
for i in $(seq 20); do
	post "$(u "$i")" "second post of $(u "$i"), to $(u "$i")'s fans"
done
post user01 "titled, with a category" --title "A title from the old release" --category news
post user02 "a picture" --image "$root/tests/data/media/photo.png" --alt "a gradient"
post user01 "a post of user01 deleted once fanned out"
delete user01 "$last_post"
post user04 "user04 regrets this one"
delete user04 "$last_post"
unfollow user20 user01
follow user03 user10
post user01 "the last post of user01 in the old release"

# wait until the inbox has applied every event of both logs
metric() { curl -s "http://127.0.0.1:$port/metrics" | awk -v m="$1" '$1 == m { print $2 }'; }
for i in $(seq 200); do
	ca=$(metric warble_inbox_content_applied)
	cl=$(metric warble_content_log_last_seq)
	ra=$(metric warble_inbox_relation_applied)
	rl=$(metric warble_relation_log_last_seq)
	[ -n "$ca" ] && [ "$ca" = "$cl" ] && [ -n "$ra" ] && [ "$ra" = "$rl" ] && break
	if [ "$i" = 200 ]; then
		echo "make-store.sh: the inbox never caught up ($ca/$cl, $ra/$rl)" >&2
		exit 1
	fi
	sleep 0.1
done

# what the release answers now, for each user
users='[]'
for i in $(seq 20); do
	n=$(u "$i")
	home=$(ctl "$n" home --limit 100 | jq -c '[.posts[].id]')
	tl=$(ctl "$n" timeline "$n" --limit 100 | jq -c '[.posts[].id]')
	fol=$(ctl "$n" following "$n" --limit 100 | jq -c '[.users[].uid]')
	fans=$(ctl "$n" fans "$n" --limit 100 | jq -c '[.users[].uid]')
	prof=$(ctl "$n" profile "$n")
	tok=$(cat "$work/cfg/$n/warble/token")
	users=$(jq -c --arg n "$n" --argjson uid "${uid[$n]}" --arg tok "$tok" \
		--argjson home "$home" --argjson tl "$tl" --argjson fol "$fol" --argjson fans "$fans" \
		--argjson prof "$prof" \
		'. + [{name: $n, uid: $uid, password: ("old-pass-" + $n), token: $tok, home: $home,
		  timeline: $tl, following: $fol, fans: $fans,
		  following_count: $prof.following, followers_count: $prof.followers}]' <<<"$users")
done
media=$(jq -r '[.[] | select(.images)][0].id' <<<"$posts")
media=$(ctl user02 timeline user02 --limit 100 |
	jq -c --arg id "$media" '.posts[] | select(.id == $id) | .images')
posts=$(jq -c --argjson m "$media" 'map(if .images then .images = $m else . end)' <<<"$posts")

for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
	kill -TERM "${pids[i]}"
	wait "${pids[i]}" || { echo "make-store.sh: a daemon exited with $?" >&2; exit 1; }
done
pids=()

jq -n --arg commit "$commit" --arg made "$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
	--argjson capplied "$ca" --argjson rapplied "$ra" \
	--argjson users "$users" --argjson posts "$posts" --argjson follows "$follows" \
	'{release: $commit, made: $made, inbox_fanout_page: 4, default_cost_user: "user20",
	  content_applied: $capplied, relation_applied: $rapplied,
	  users: $users, posts: $posts, follows: $follows}' >"$here/$name.json"
# RocksDB's text logs (LOG, LOG.old.*) and the daemons' logs are not part of a store
find "$data" -name 'LOG*' -delete
rm -rf "$data/log"
tar -C "$data" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -c . |
	gzip -9n >"$here/$name.tar.gz"
size=$(stat -c %s "$here/$name.tar.gz")
echo "make-store.sh: $here/$name.tar.gz ($size bytes), $here/$name.json"
