#!/usr/bin/env bash
# aorta report speed: 64 ranks x 10,000 steps of upstream-format JSONL
# (bench/report_speed/gen.py, about 1.5 GB), timed from start to
# summary.json, every chart (PNG + SVG) and index.html; peak memory from
# GNU time.  Two tries with the files in the page cache, then the same
# files read as two runs compared with each other.
#   bench/report_speed/run.sh [RANKS] [STEPS]      (DATA=dir to keep the input)
set -euo pipefail
cd "$(dirname "$0")/../.."
RANKS=${1:-64} STEPS=${2:-10000}
DATA=${DATA:-/tmp/aorta_report_speed_${RANKS}x${STEPS}}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
make -s all
if [ ! -f "$DATA/rank_$(printf %02d $((RANKS - 1)))_metrics.jsonl" ]; then
	echo "generating $RANKS ranks x $STEPS steps into $DATA"
	python3 bench/report_speed/gen.py "$DATA" "$RANKS" "$STEPS"
fi
du -sh "$DATA" | awk '{print "input: " $1}'
cat "$DATA"/*.jsonl >/dev/null # warm the page cache
for i in 1 2; do
	echo "one run ($RANKS ranks x $STEPS steps), try $i:"
	/usr/bin/time -f "  wall %e s, user %U s, sys %S s, peak RSS %M KiB" \
		./build/aorta report --log-dir "$DATA" --label big --output "$OUT/one" 2>&1 | grep -v "^big"
done
echo "two runs (the same files twice, so the comparison charts are drawn too):"
/usr/bin/time -f "  wall %e s, user %U s, sys %S s, peak RSS %M KiB" \
	./build/aorta report --log-dir "$DATA" --label big --log-dir "$DATA" --label again \
	--reference big --candidate again --output "$OUT/two" 2>&1 | grep -v "^big\|^again"
ls "$OUT/one" | wc -l | awk '{print "files written (one run): " $1}'
