#!/usr/bin/env bash
# Second 2-GPU verification: demo (GPU path), world-2 vs world-1 losses,
# 2-GPU speed against the FSDP2 peer.  Hard time limits on each process.
set -u
W=/tmp/aorta_v2; mkdir -p "$W" "${OUT:-device_out}"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 AORTA_COMM_TIMEOUT_MS=20000
A=./build/aorta
{
echo "== world 2 vs world 1 losses (fp32 and bf16; full_shard, shard_grad_op, ddp)"
STEPS=20 WORLD=2 DEVICES=0,1 timeout -s KILL 150 bash tests/gpu/dist_equal.sh build 2>&1 | tail -12
echo "== aorta, 2 GPUs, batch 8, 100 steps: full_shard, then ddp"
timeout -s KILL 40 $A train -q --override training.max_steps=100 training.output_dir="$W/s2"; echo rc=$?
timeout -s KILL 40 $A train -q --override training.max_steps=100 training.output_dir="$W/s2d" distributed.mode=ddp; echo rc=$?
timeout -s KILL 20 $A analyze -q --skip-steps 10 --json "$W/s2.json" "$W/s2"/rank_*_metrics.jsonl && python3 -c "
import json; d=json.load(open('$W/s2.json'))
for r in d['ranks']:
    s=r['step_stats']; print('rank', r['rank'], 'step p50 %.3f ms, comm %.3f ms, exposed %.3f ms, compute %.3f ms' % (s['step_ms']['p50'], s['comm_ms']['mean'], s['exposed_comm_ms']['mean'], s['compute_ms']['mean']))"
echo "== FSDP2 peer, 2 GPUs, batch 8"
timeout -s KILL 100 torchrun --standalone --nproc_per_node=2 .carry/fsdp2_peer.py 2>&1 | grep -E 'median|Error' | tail -3
echo "== demo (GPU path)"
timeout -s KILL 60 bash scripts/demo.sh > "$W/demo.txt" 2>&1; echo "demo rc=$?"
grep -E "^==|trained|late rank|diagnosis|error|profiling" "$W/demo.txt" | head -20
} > "$W/log.txt" 2>&1
cp "$W/log.txt" "${OUT:-device_out}/"
cp "$W/demo.txt" "${OUT:-device_out}/" 2>/dev/null
tail -c 9000 "$W/log.txt"
