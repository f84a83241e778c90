#!/usr/bin/env bash
# Runs upstream's analysis/overlap_report.py (ROCm/aorta, never copied into
# this repository) on the runs tests/cli/report_upstream.sh checks aorta
# report against, and writes its summary.json as the test's fixture
# tests/data/upstream/overlap_report_summary.json.
#   UPSTREAM=/path/to/ROCm-aorta-checkout PYTHON=python-with-matplotlib bench/upstream_report/run.sh
# The runs: data/h200x4/aorta_ddp (upstream's own JSONL from its train.py),
# and two synthetic runs of bench/report_speed/gen.py (3 ranks x 40 steps,
# 2 x 25: non-zero overlaps of both collective types), the second two
# compared (--reference gen3x40 --candidate gen2x25).
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${UPSTREAM:?set UPSTREAM to a checkout of ROCm/aorta (analysis/overlap_report.py)}"
PYTHON=${PYTHON:-python3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
python3 bench/report_speed/gen.py "$T/gen3x40" 3 40
python3 bench/report_speed/gen.py "$T/gen2x25" 2 25
MPLBACKEND=Agg "$PYTHON" "$UPSTREAM/analysis/overlap_report.py" \
	--log-dir data/h200x4/aorta_ddp --label ddp --log-dir "$T/gen3x40" --label gen3x40 \
	--log-dir "$T/gen2x25" --label gen2x25 --reference gen3x40 --candidate gen2x25 --output "$T/out"
cp "$T/out/summary.json" tests/data/upstream/overlap_report_summary.json
echo "wrote tests/data/upstream/overlap_report_summary.json (upstream at $(git -C "$UPSTREAM" rev-parse --short HEAD 2>/dev/null || echo '?'))"
