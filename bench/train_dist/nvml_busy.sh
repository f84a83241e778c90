#!/usr/bin/env bash
# GPU-busy cross-check (nvidia-h200-x4): NVML's utilization
# counter ("percent of time over the past sample period during which one or
# more kernels was executing"), which needs no CUPTI, against the JSONL's
# busy figure (the union of event ranges), per rank, for the default runs at
# batch 8 and 64 (full_shard, ddp; thread per GPU; 400 steps so that NVML's
# 1/6-1 s sample periods fall inside the training steps).
#   bash bench/train_dist/nvml_busy.sh [BUILD]
set -u
B=${1:-build}
O=${OUT:-/tmp/device_out}; mkdir -p "$O"
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} NCCL_NVLS_ENABLE=0 AORTA_COMM_TIMEOUT_MS=15000
A=./$B/aorta
W=/tmp/busy_nvml; rm -rf "$W"; mkdir -p "$W"
{
	for cfg in "full_shard 8" "ddp 8" "full_shard 64" "ddp 64"; do
		set -- $cfg; st=$1; bs=$2; d=$W/${st}_$bs
		ov="training.batch_size=$bs training.max_steps=400 training.log_interval=1000 training.output_dir=$d"
		[ $st = ddp ] && ov="$ov distributed.mode=ddp" || ov="$ov fsdp.sharding_strategy=$st"
		timeout -s KILL 60 $A train -q --data-batches 2 --enable-gpu-metrics --override $ov > $d.out 2>&1
		echo "$st $bs: train rc=$?"
		timeout -s KILL 30 $A analyze -q --skip-steps 50 --json $d.json $d/rank_*_metrics.jsonl || echo "analyze rc=$?"
		python3 - "$d" "$d.json" <<'PY'
import glob, json, statistics, sys
d, aj = sys.argv[1], json.load(open(sys.argv[2]))
busy = {r["rank"]: r["step_stats"]["busy_ms"]["p50"] / r["step_stats"]["step_ms"]["p50"] for r in aj["ranks"]}
for f in sorted(glob.glob(d + "/rank_*_metrics.jsonl")):
    u, rank = [], None
    for l in open(f):
        if not l.startswith("{"):
            continue
        x = json.loads(l)
        rank = x["rank"]
        t = x.get("telemetry") or {}
        if x["global_step"] >= 50 and t.get("available") and t.get("gpu_util_pct") is not None:
            u.append(t["gpu_util_pct"])
    if u:
        print("  rank %d: NVML gpu util median %.0f %% (min %.0f, %d steps); JSONL busy %.1f %%" % (
            rank, statistics.median(u), min(u), len(u), 100 * busy.get(rank, float("nan"))))
    else:
        print("  rank %s: no NVML samples" % rank)
PY
	done
} > "$O/log.txt" 2>&1
cat "$O/log.txt"
