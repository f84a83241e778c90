#!/usr/bin/env bash
# bench/train_launch/torchrun.sh [BUILD] [NPROC] - `aorta train` under
# torchrun on a GPU machine: the same 20-step run (batch 32, fp32) launched
# as threads of one process and as NPROC processes by torchrun
# (python3 -m torch.distributed.run --no-python); both must write every
# rank's JSONL, and rank 0's loss must agree at every step within 1e-4
# relative (the same model and data; NCCL may pick another reduction order
# for ranks in one process than for ranks in separate processes, so fp32
# sums differ in the last digits and the difference grows over the steps).
# Prints the largest difference and the step-time medians of both.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${1:-build}
N=${2:-2}
W=${W:-/tmp/aorta_torchrun}
rm -rf "$W"; mkdir -p "$W"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
ov=(training.max_steps=20 training.batch_size=32 training.log_interval=10 profiling.enabled=false)
timeout -s KILL 120 "$B/aorta" train -q --override "${ov[@]}" training.output_dir="$W/threads" >"$W/threads.log" 2>&1
echo "threads: exit $?"
timeout -s KILL 150 python3 -m torch.distributed.run --standalone --nproc_per_node="$N" --no-python \
	"$B/aorta" train -q --override "${ov[@]}" training.output_dir="$W/torchrun" >"$W/torchrun.log" 2>&1
rc=$?
echo "torchrun: exit $rc"
tail -n 5 "$W/torchrun.log"
python3 - "$W" "$N" <<'PY'
import json, sys, glob, statistics
w, n = sys.argv[1], int(sys.argv[2])
def load(d):
    out = {}
    for f in sorted(glob.glob(f"{w}/{d}/rank_*_metrics.jsonl")):
        rows = [json.loads(l) for l in open(f) if l.strip()]
        out[f.split("/")[-1]] = rows
    return out
t, r = load("threads"), load("torchrun")
ok = len(t) == n and len(r) == n
print(f"JSONL files: threads {len(t)}, torchrun {len(r)} (want {n} each)")
if ok:
    a, b = t["rank_00_metrics.jsonl"], r["rank_00_metrics.jsonl"]
    la = [x.get("loss") for x in a]; lb = [x.get("loss") for x in b]
    rel = [abs(x - y) / max(1e-12, abs(x)) for x, y in zip(la, lb) if x is not None and y is not None]
    same = len(la) == len(lb) and len(rel) == len(la) and max(rel) <= 1e-4
    print(f"rank 0 losses agree at all {len(la)} steps within 1e-4: {same}; largest relative difference {max(rel):.2e}")
    for name, d in (("threads", a), ("torchrun", b)):
        st = [x["profile"]["total_ms"] for x in d[5:]]
        print(f"{name}: median step {statistics.median(st):.3f} ms over {len(st)} steps")
    ok = same
print("PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
