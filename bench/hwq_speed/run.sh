#!/usr/bin/env bash
# bench/hwq_speed/run.sh - aorta hwq's launch speed against PyTorch on one GPU,
# in one device command:
#   tiny_kernel_stress at 1 and 16 streams, hetero_kernels at 8 streams;
#   aorta direct launches and --graph, PyTorch eager and CUDA-graph replay.
# "direct" launches tiny_kernel_stress's kernels through cuLaunchKernel (the
# default), "<<<>>>" through the runtime (AORTA_HWQ_LAUNCH=runtime).
# Kernels/s: --sync-mode end_only (enqueue all iterations, one sync), from the
# result's kernels_per_second; per-iteration latency: --sync-mode
# per_iteration, latency_ms.p50.  The timing pass is off (--timing-iters 0)
# so no CUPTI is loaded while measuring.  Targets: direct >= 2.5x PyTorch
# eager; --graph within 10% of PyTorch's graph replay.
#
# Usage: bench/hwq_speed/run.sh [OUTDIR]   (AORTA_BIN: the binary; ITERS)
set -u
cd "$(dirname "$0")/../.."
A=${AORTA_BIN:-./build/aorta}
D=${1:-${OUT:-/tmp}/hwq_speed}
ITERS=${ITERS:-100}
mkdir -p "$D"
fail=0
run() { # name workload streams extra...
	local name=$1 w=$2 s=$3; shift 3
	timeout -s KILL 60 "$A" hwq run "$w" -s "$s" -i "$ITERS" -w 10 --timing-iters 0 -q "$@" \
		-o "$D/$name.json" >"$D/$name.txt" 2>&1 || { echo "aorta $name failed: $(tail -n 3 "$D/$name.txt")"; fail=1; }
}
for cfg in "tiny_kernel_stress 1" "tiny_kernel_stress 16" "hetero_kernels 8"; do
	set -- $cfg
	it=$ITERS; [ "$1 $2" = "tiny_kernel_stress 1" ] && it=$((ITERS * 4))
	ITERS=$it run "$1-$2-direct-rate" "$1" "$2" --sync-mode end_only
	AORTA_HWQ_LAUNCH=runtime ITERS=$it run "$1-$2-rt-rate" "$1" "$2" --sync-mode end_only
	ITERS=$it run "$1-$2-direct-lat" "$1" "$2" --sync-mode per_iteration
	ITERS=$it run "$1-$2-graph-rate" "$1" "$2" --sync-mode end_only --graph
	ITERS=$it run "$1-$2-graph-lat" "$1" "$2" --sync-mode per_iteration --graph
done
timeout -s KILL 120 python3 bench/hwq_speed/torch_peer.py --iters "$ITERS" >"$D/torch.json" 2>"$D/torch.err" ||
	{ echo "torch peer failed: $(tail -n 5 "$D/torch.err")"; fail=1; }
python3 - "$D" <<'PY'
import json, os, sys
d = sys.argv[1]
def load(p):
    try:
        return json.load(open(os.path.join(d, p)))
    except Exception:
        return None
t = load("torch.json") or {}
tc = {(c["workload"], c["streams"]): c for c in t.get("configs", [])}
rows = []
hdr = "| config | aorta direct k/s | aorta <<<>>> k/s | torch eager k/s | ratio (>= 2.5) | aorta graph k/s | torch graph k/s | ratio (>= 0.9) | p50 ms direct / eager / graph / torch graph |"
rows.append(hdr)
rows.append("|" + "---|" * 9)
verdict = {}
for w, s in (("tiny_kernel_stress", 1), ("tiny_kernel_stress", 16), ("hetero_kernels", 8)):
    k = f"{w}-{s}"
    dr, dl, gr, gl, rt = (load(f"{k}-{m}.json") for m in ("direct-rate", "direct-lat", "graph-rate", "graph-lat", "rt-rate"))
    c = tc.get((w, s), {})
    te, tg = c.get("eager", {}), c.get("graph", {})
    f = lambda r: r["kernels_per_second"] if r else float("nan")
    p = lambda r: r["latency_ms"]["p50"] if r else float("nan")
    r1 = f(dr) / te.get("kernels_per_s", float("nan"))
    r2 = f(gr) / tg.get("kernels_per_s", float("nan"))
    verdict[k] = {"direct_vs_eager": r1, "graph_vs_graph": r2}
    rows.append(f"| {w} s={s} | {f(dr):,.0f} | {f(rt):,.0f} | {te.get('kernels_per_s', float('nan')):,.0f} | {r1:.2f} | "
                f"{f(gr):,.0f} | {tg.get('kernels_per_s', float('nan')):,.0f} | {r2:.2f} | "
                f"{p(dl):.3f} / {te.get('latency_ms_p50', float('nan')):.3f} / {p(gl):.3f} / {tg.get('latency_ms_p50', float('nan')):.3f} |")
table = "\n".join(rows)
dev = t.get("device", "?")
open(os.path.join(d, "table.md"), "w").write(f"device: {dev}, torch {t.get('torch', '?')}\n\n{table}\n")
json.dump(verdict, open(os.path.join(d, "ratios.json"), "w"), indent=1)
print(f"device: {dev}, torch {t.get('torch', '?')}")
print(table)
PY
exit $fail
