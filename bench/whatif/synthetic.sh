#!/usr/bin/env bash
# bench/whatif/synthetic.sh [RANKS STEPS LAYERS DELAY_MS] - the what-if against a
# counterfactual we simulate: bench/analyze_scale/gen.py with a late rank (the
# last; its host sleeps DELAY_MS before every forward, or before the middle
# layer's backward) and without it (--late none), for a time-triggered host
# (--host timed) and one paced by a device sync at the end of each step
# (--host synced).  Per case: the measured step of the late set, the step
# predicted for fixing the late rank, the no-late set's measured step (the
# truth), the error against max(1.5 ms, 5 %), and the verdict.  Defaults: 8
# ranks, 4 steps, 4 layers, 3 ms (the issue's /tmp/s8 set).
#   AORTA_BIN=PATH (default ./build/aorta)
set -uo pipefail
cd "$(dirname "$0")/../.."
A=${AORTA_BIN:-./build/aorta}
N=${1:-8} S=${2:-4} L=${3:-4} D=${4:-3}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
for host in timed synced; do
	python3 bench/analyze_scale/gen.py "$T/$host.none" "$N" --steps "$S" --layers "$L" --host $host --late none
	for w in fwd bwd; do
		python3 bench/analyze_scale/gen.py "$T/$host.$w" "$N" --steps "$S" --layers "$L" --host $host \
			--delay-ms "$D" --late-where $w
	done
	for c in none fwd bwd; do "$A" analyze -q --json "$T/$host.$c.json" "$T/$host.$c" 2>/dev/null || echo "analyze $host.$c failed" >&2; done
done
python3 - "$T" "$N" "$S" "$L" "$D" <<'PY'
import json, os, sys
t, n, s, l, d = sys.argv[1:]
late = int(n) - 1
print(f"# {n} ranks, {s} steps, {l} layers; rank {late}'s host {d} ms late")
print(f"{'host':7s} {'delay':6s} {'late rank':>9s} {'measured':>9s} {'predicted':>9s} {'truth':>8s} {'error':>7s} ok  verdict")
bad = 0
for host in ("timed", "synced"):
    tr = json.load(open(os.path.join(t, f"{host}.none.json")))["across_ranks"]["what_if"]["measured_step_ms"]
    for w in ("fwd", "bwd"):
        a = json.load(open(os.path.join(t, f"{host}.{w}.json")))["across_ranks"]
        wi = a["what_if"]
        p = [f["step_ms_if_fixed"] for f in wi["by_rank"] if f["rank"] == late][0]
        ok = abs(p - tr) <= max(1.5, 0.05 * tr)
        bad += not ok
        print(f"{host:7s} {w:6s} {a.get('late_rank')!s:>9s} {wi['measured_step_ms']:9.3f} {p:9.3f} {tr:8.3f} "
              f"{p - tr:+7.3f} {'ok' if ok else 'FAIL':3s} {wi['verdict']}")
sys.exit(1 if bad else 0)
PY
