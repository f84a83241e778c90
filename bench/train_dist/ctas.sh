#!/usr/bin/env bash
# NCCL CTA budget against overlap: batch 64, full_shard, default knobs, with
# NCCL_MAX_CTAS unset / 16 / 8 / 4 / 2 (passed to ncclConfig_t maxCTAs by
# src/comm/nccl_comm.c): normal and comm-only runs per setting, one
# compute-only run; prints T_step, T_comm alone, exposed/comm and the overlap
# efficiency (T_compute + T_comm - T_step) / min(T_compute, T_comm).
#   bash bench/train_dist/ctas.sh [WORKDIR]      (on the GPU machine)
set -u
cd "$(dirname "$0")/../.."
. bench/train_dist/common.sh
W=${1:-/tmp/aorta_ctas}
mkdir -p "$W"; : > "$W/manifest.tsv"
one_run "$W" compute compute 64 full_shard compute true BACKWARD_PRE true false 30
for c in default 16 8 4 2; do
	if [ "$c" = default ]; then unset NCCL_MAX_CTAS; else export NCCL_MAX_CTAS=$c; fi
	one_run "$W" "n_$c" ctas 64 full_shard normal true BACKWARD_PRE true false 30
	one_run "$W" "c_$c" ctas 64 full_shard comm true BACKWARD_PRE true false 30
done
unset NCCL_MAX_CTAS
python3 - "$W" <<'PY'
import json, sys, os
W = sys.argv[1]
def fig(name, key):
    p = os.path.join(W, name + ".json")
    if not os.path.exists(p): return float("nan")
    d = json.load(open(p)); v = [r["step_stats"][key]["p50"] for r in d["ranks"] if key in r["step_stats"]]
    return sum(v) / len(v) if v else float("nan")
def tot(name, key):
    p = os.path.join(W, name + ".json")
    if not os.path.exists(p): return float("nan")
    d = json.load(open(p)); return sum(r["steps_total"][key] for r in d["ranks"])
tc = fig("compute", "step_ms")
print("| NCCL_MAX_CTAS | T_step | T_comm alone | exposed / comm | efficiency |")
print("| --- | --- | --- | --- | --- |")
for c in ("default", "16", "8", "4", "2"):
    ts, tm = fig("n_" + c, "step_ms"), fig("c_" + c, "step_ms")
    ex = tot("n_" + c, "exposed_comm_ms") / tot("n_" + c, "comm_ms")
    eff = (tc + tm - ts) / min(tc, tm)
    print("| %s | %.3f ms | %.3f ms | %.1f %% | %.2f |" % (c, ts, tm, 100 * ex, eff))
print("T_compute alone: %.3f ms" % tc)
PY
