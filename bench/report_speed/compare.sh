#!/usr/bin/env bash
# aorta report's JSONL path, two binaries in the same run: OLD (e.g. main's
# build/aorta) and NEW (this tree's), alternating, TRIES times each, on
# RANKS x STEPS of upstream-format JSONL (gen.py), files in the page cache;
# wall, user and peak RSS from GNU time.  --no-plots is not given: the
# whole report (summary.json, charts, index.html) is timed.  MID, when
# set, is a third binary timed between them (e.g. main's, when OLD is an
# older commit built under bench/out/).
#   OLD=/work/main/build/aorta [MID=...] bench/report_speed/compare.sh [RANKS] [STEPS] [TRIES]
set -euo pipefail
cd "$(dirname "$0")/../.."
RANKS=${1:-64} STEPS=${2:-10000} TRIES=${3:-2}
OLD=${OLD:?set OLD to the binary to compare against}
NEW=${NEW:-./build/aorta}
MID=${MID:-}
BINS="OLD${MID:+ MID} NEW"
DATA=${DATA:-/tmp/aorta_report_speed_${RANKS}x${STEPS}}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
if [ ! -f "$DATA/rank_$(printf %02d $((RANKS - 1)))_metrics.jsonl" ]; then
	python3 bench/report_speed/gen.py "$DATA" "$RANKS" "$STEPS"
fi
du -sh "$DATA" | awk '{print "input: " $1}'
cat "$DATA"/*.jsonl >/dev/null # warm the page cache
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$TRIES"); do
	for b in $BINS; do
		bin=${!b}
		/usr/bin/time -f "$b try $i: wall %e s, user %U s, sys %S s, peak RSS %M KiB" \
			"$bin" report --log-dir "$DATA" --label big --output "$OUT/$b" 2>&1 >/dev/null |
			grep -E "^(OLD|MID|NEW) try"
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
for b in $BINS; do
	echo "$b summary.json upstream keys: $(jq -c '.datasets.big | {count, mean_overlap_ms, mean_compute_ms, overlap_ratio}' "$OUT/$b/summary.json")"
done
