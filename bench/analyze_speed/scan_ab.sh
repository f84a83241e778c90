#!/usr/bin/env bash
# A/B of the Kineto reader alone: scan_bench built against the working
# tree's objects (new) and against the same objects with src/ingest/kineto.c
# taken from git revision REV (old), run in alternating rounds on FILE.
#   bench/analyze_speed/scan_ab.sh REV FILE [ROUNDS]
# Env: BUILD (default build; make it first), REPS (5).  Prints one line per
# program per round (MB per CPU-second of the reading thread).
# The RESULTS.md figures of the key-layout fast path: REV = fbc5243~1.
set -euo pipefail
REV=$1 FILE=$2 ROUNDS=${3:-3}
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
B="${BUILD:-build}"
OLD=$(mktemp -d)
trap 'rm -rf "$OLD"' EXIT
BUILD="$B" REPS=1 bench/analyze_speed/scan_bench.sh "$FILE" >/dev/null
cp "$B/bench/scan_bench" "$OLD/scan_new"
cp -a "$B" "$OLD/b"
git show "$REV:src/ingest/kineto.c" > "$OLD/kineto_old.c"
gcc -std=c11 -D_GNU_SOURCE -O2 -g -Isrc -pthread -c -o "$OLD/b/obj/src/ingest/kineto.o" "$OLD/kineto_old.c"
BUILD="$OLD/b" REPS=1 bench/analyze_speed/scan_bench.sh "$FILE" >/dev/null
for r in $(seq "$ROUNDS"); do
	"$OLD/b/bench/scan_bench" -r "${REPS:-5}" "$FILE" | sed 's/^/old /'
	"$OLD/scan_new" -r "${REPS:-5}" "$FILE" | sed 's/^/new /'
done
