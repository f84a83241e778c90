#!/usr/bin/env bash
# HTA cross-check: aorta analyze vs Holistic Trace Analysis (traceinsight 0.6.1) on the shared traces.
# Usage: bench/hta_crosscheck/run.sh            (from anywhere; needs PyPI the first time)
# Env:   AORTA_SHARED_DATA (default /work/shared/data), WORK (default bench/data/hta_crosscheck)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
VENV="$ROOT/bench/.venv"
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import hta, pandas' 2>/dev/null; then
	python3 -m venv "$VENV"
	"$VENV/bin/pip" install -q --upgrade pip >/dev/null 2>&1 || true
	"$VENV/bin/pip" install -q -r "$ROOT/bench/requirements.txt"
fi
if [ ! -x build/aorta ]; then
	make -j"$(nproc)" >/dev/null
fi
WORK="${WORK:-$ROOT/bench/data/hta_crosscheck}"
mkdir -p "$WORK"
"$VENV/bin/python" "$ROOT/bench/hta_crosscheck/compare.py" --aorta "$ROOT/build/aorta" --work "$WORK" "$@"
echo "table saved to $WORK/table.txt (per-rank details: $WORK/rows.json)"
