#!/usr/bin/env bash
# Bytes on disk per follow edge and per post, for the capacity model in
# docs/operations.md ("Capacity").
#
#   tests/bench/capacity.sh     under 2 minutes on 2 cores
#
# warble-load starts its own five daemons on a fresh data folder, loads a
# synthetic power-law graph of CAP_USERS users with CAP_DEGREE follows
# each on average (rel.follow_many: follow cell, fan cell, both counts
# and a follow event per edge; 1M edges by default), has every graph
# user publish CAP_POSTS text posts (100,000 by default) of CAP_TEXT
# bytes each (warble-load's words padded with seeded random lowercase
# words, which compress far less than repeated ones; 0: about 70 B of a
# few repeated words; the mean length is printed), then runs a
# one-second mix, stops the daemons and, with --store-disk, reopens each stopped
# store with its own family settings, flushes and fully compacts every
# family and sums its table files.  Printed: bytes per edge (relation)
# and per post (content), family by family (the event logs included:
# they are never trimmed), and bytes per inbox entry; all in
# $OUT/report.json (store_disk, inbox_disk, peak_rss_kb).
#
# Environment: BUILD (build), OUT (default $BUILD/bench-out/capacity),
# CAP_USERS (50000), CAP_DEGREE (20), CAP_POSTS (posts a user, 2),
# CAP_TEXT (bytes a post, 140).
set -eu
BUILD=${BUILD:-build}
OUT=${OUT:-$BUILD/bench-out/capacity}
CAP_USERS=${CAP_USERS:-50000}
CAP_DEGREE=${CAP_DEGREE:-20}
CAP_POSTS=${CAP_POSTS:-2}
CAP_TEXT=${CAP_TEXT:-140}

mkdir -p "$OUT"
echo "capacity: $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
"$BUILD/bin/warble-load" --synthetic "$CAP_USERS" --degree "$CAP_DEGREE" \
	--seed-posts "$CAP_POSTS" --post-len "$CAP_TEXT" --fanout 1000 --reps 1 --sample 100 \
	--visible 0 --duration 1 --store-disk --timeout 1800 --out "$OUT"
echo "capacity: $(($(date +%s) - start)) s, load average now $(cut -d' ' -f1-3 /proc/loadavg)"
