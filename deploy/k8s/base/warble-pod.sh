#!/bin/sh
# warble-pod - how every Warble container starts under Kubernetes
# (deploy/k8s): it works out what a pod's manifest cannot say by itself,
# then runs the program in its place (exec: the daemon is the container's
# first process and takes SIGTERM itself).
#
#   warble-pod PROGRAM [ARG...]    run PROGRAM (warble-relation, ..., warblectl)
#   warble-pod --env PROGRAM       print the variables it would add, and exit
#
# What it adds, from the shard counts of the ConfigMap warble-shards
# (RELATION_SHARDS, CONTENT_SHARDS, INBOX_SHARDS: the overlay copies them
# from the StatefulSets' replicas) and the StatefulSets' stable names
# (shard i of relation is the pod relation-i of the headless Service
# relation, so relation-i.relation in the pod's own namespace):
#
#   WARBLE_USER_URL          tcp://user-0.user:7101
#   WARBLE_RELATION_URLS     tcp://relation-0.relation:7102,tcp://relation-1.relation:7102,...
#   WARBLE_CONTENT_URLS      tcp://content-0.content:7103,...
#   WARBLE_INBOX_URLS        tcp://inbox-0.inbox:7104,...
#   WARBLE_RELATION_PUB_URLS tcp://relation-0.relation:7112,...
#   WARBLE_CONTENT_PUB_URLS  tcp://content-0.content:7113,...
#   WARBLE_USER_PUB_URL      tcp://user-0.user:7111
#   WARBLE_SHARD             i/N in a StatefulSet's pod (POD_NAME, from the
#                            downward API, ends in its ordinal i; N is the
#                            count of its service)
#
# so that no address is written by hand anywhere.  A variable is set only
# if PROGRAM reads it (its --print-defaults lists it; a program without
# that flag, warblectl, gets them all) and the container does not set it
# already: a daemon's own listen address (tcp://0.0.0.0:PORT, in its
# manifest) stays.  A pod whose ordinal is not below its service's count
# refuses to start: the StatefulSet's replicas and the count must agree,
# and a store never changes its shard count (resharding is not built).
# The ports are the daemons' defaults (proto/wb_services.h);
# tests/k8s/k8s_test.c checks them against the daemons and the manifests.
set -eu

warble_pod_fail() {
	echo "warble-pod: $*" >&2
	exit 1
}

dry=
if [ "${1:-}" = --env ]; then
	dry=1
	shift
fi
if [ $# -lt 1 ]; then
	echo "usage: warble-pod [--env] PROGRAM [ARG...]" >&2
	exit 2
fi
prog=$1

# The variables PROGRAM reads ("*": it cannot say, so all of them).
reads=$("$prog" --print-defaults 2>/dev/null | sed -n 's/^\(WARBLE_[A-Z0-9_]*\)=.*/\1/p' |
	tr '\n' ' ') || reads=
[ -n "$reads" ] || reads='*'

# warble_pod_set NAME VALUE exports NAME if PROGRAM reads it and it is unset.
warble_pod_set() {
	case " $reads " in
	" * " | *" $1 "*) ;;
	*) return 0 ;;
	esac
	eval "warble_pod_cur=\${$1:-}"
	[ -z "$warble_pod_cur" ] || return 0
	export "$1=$2"
	if [ -n "$dry" ]; then
		printf '%s=%s\n' "$1" "$2"
	fi
}

# warble_pod_count VAR prints the shard count in $VAR, 1 to 64.
warble_pod_count() {
	eval "warble_pod_n=\${$1:-}"
	case $warble_pod_n in
	'' | *[!0-9]*) warble_pod_fail "$1 is '$warble_pod_n', not a shard count (ConfigMap warble-shards)" ;;
	esac
	if [ "$warble_pod_n" -lt 1 ] || [ "$warble_pod_n" -gt 64 ]; then
		warble_pod_fail "$1 is $warble_pod_n: a service runs as 1 to 64 shards"
	fi
	echo "$warble_pod_n"
}

# warble_pod_list NAME COUNT PORT prints tcp://NAME-0.NAME:PORT,... (COUNT addresses).
warble_pod_list() {
	i=0
	out=
	while [ "$i" -lt "$2" ]; do
		out="${out:+$out,}tcp://$1-$i.$1:$3"
		i=$((i + 1))
	done
	echo "$out"
}

nrelation=$(warble_pod_count RELATION_SHARDS)
ncontent=$(warble_pod_count CONTENT_SHARDS)
ninbox=$(warble_pod_count INBOX_SHARDS)

if [ -n "${POD_NAME:-}" ]; then
	set_name=${POD_NAME%-*}
	ordinal=${POD_NAME##*-}
	case $set_name in
	user) n=1 ;;
	relation) n=$nrelation ;;
	content) n=$ncontent ;;
	inbox) n=$ninbox ;;
	*) warble_pod_fail "POD_NAME=$POD_NAME is no pod of the user, relation, content or inbox StatefulSet" ;;
	esac
	case $ordinal in
	'' | *[!0-9]*) warble_pod_fail "POD_NAME=$POD_NAME does not end in a pod ordinal" ;;
	esac
	if [ "$ordinal" -ge "$n" ]; then
		warble_pod_fail "$POD_NAME would be $set_name shard $ordinal, but $set_name has $n" \
			"shard(s) (ConfigMap warble-shards): the StatefulSet's replicas must equal the" \
			"count, set once in the overlay; a store never changes its shard count"
	fi
	warble_pod_set WARBLE_SHARD "$ordinal/$n"
fi

warble_pod_set WARBLE_USER_URL "$(warble_pod_list user 1 7101)"
warble_pod_set WARBLE_RELATION_URLS "$(warble_pod_list relation "$nrelation" 7102)"
warble_pod_set WARBLE_CONTENT_URLS "$(warble_pod_list content "$ncontent" 7103)"
warble_pod_set WARBLE_INBOX_URLS "$(warble_pod_list inbox "$ninbox" 7104)"
warble_pod_set WARBLE_RELATION_PUB_URLS "$(warble_pod_list relation "$nrelation" 7112)"
warble_pod_set WARBLE_CONTENT_PUB_URLS "$(warble_pod_list content "$ncontent" 7113)"
warble_pod_set WARBLE_USER_PUB_URL "$(warble_pod_list user 1 7111)"

if [ -n "$dry" ]; then
	exit 0
fi
exec "$@"
