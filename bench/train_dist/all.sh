#!/usr/bin/env bash
# bench/train_dist/all.sh - the whole "train part 2" measurement in one device
# command (from the repo root, build/aorta and build/libaorta-gpu.so built):
#   bash bench/train_dist/all.sh        (tables to $OUT, default bench/out/train_dist)
# run.sh (overlap, 12 runs) then sweep.sh (24 runs), then summary.py.  Runs
# start only before DEADLINE = start + BUDGET_S (default 150 s), each under
# `timeout -s KILL`, so the command ends well inside 200 s; skipped runs show
# as such in the tables.  Files in $OUT: tables.md, rows.json, log.txt,
# gpu.txt, raw.tar.gz (manifest, analysis JSONs, rank logs).
set -u
OUT=${OUT:-bench/out/train_dist}
W=${W:-/tmp/aorta_train_dist}
rm -rf "$W"
mkdir -p "$W" "$OUT"
OUT=$(cd "$OUT" && pwd)
START=$(date +%s)
export DEADLINE=$((START + ${BUDGET_S:-150}))
D=$(dirname "$0")
{
	nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv,noheader 2>&1
	nvidia-smi topo -m 2>&1 | head -8
} > "$OUT/gpu.txt"
{
	echo "== (a) overlap: $(date -u +%FT%TZ)"
	bash "$D/run.sh" "$W"
	echo "== (b) sweep: $(( $(date +%s) - START )) s in"
	bash "$D/sweep.sh" "$W"
	echo "== summary: $(( $(date +%s) - START )) s in"
	timeout -s KILL 20 python3 "$D/summary.py" "$W" --out "$OUT"
	echo "== done: $(( $(date +%s) - START )) s"
} > "$OUT/log.txt" 2>&1
(cd "$W" && tar czf "$OUT/raw.tar.gz" manifest.tsv ./*.json ./*.out ./*/rank*.log 2>/dev/null) || true
cat "$OUT/log.txt"
cat "$OUT/tables.md" 2>/dev/null
