#!/usr/bin/env bash
# Device verification on a 2-GPU machine (nvidia-h200-x2), one call:
#   GPU tests (ops, runtime, NCCL, the distributed executor), the demo's GPU
#   path, CUDA-graph mode with a CUPTI trace, 2-GPU training in thread and
#   MPI modes, world-2 vs world-1 loss equality, and the FSDP2 peer.
# Carry build/aorta, build/libaorta-gpu.so, build/libaorta-plot.so,
# build/gpu-tests and .carry (fsdp2_peer.py).  Keeps a few files in $OUT.
set -u
FINAL=${OUT:-device_out}
W=${WORK:-/tmp/aorta_dist}
mkdir -p "$W" "$FINAL"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export AORTA_COMM_TIMEOUT_MS=60000
A=./build/aorta
{
	nvidia-smi -L; nvidia-smi topo -m 2>/dev/null | head -5
	echo "== gpu tests"
	AORTA_GPU_TEST_BENCH=0 timeout 300 bash tests/gpu/run.sh build
	echo "== demo (GPU path)"
	timeout 120 bash scripts/demo.sh 2>&1 | grep -vE '^\s+[0-9.]+ ms +[0-9]+ x' | tail -40
	echo "== graph mode with a CUPTI window"
	CUDA_VISIBLE_DEVICES=0 timeout 120 $A train -q --override training.max_steps=60 compile.enabled=true \
		training.output_dir="$W/graph" profiling.enabled=true profiling.wait=40 profiling.warmup=2 profiling.active=3
	$A analyze "$W/graph/torch_profiler" | sed -n '1,25p'
	echo "== 2 GPUs, thread mode, full_shard"
	timeout 180 $A train --override training.max_steps=30 training.output_dir="$W/t2" training.log_interval=10
	$A analyze --skip-steps 5 "$W/t2" | tail -30
	echo "== 2 GPUs, MPI mode, ddp"
	timeout 180 mpirun --allow-run-as-root -np 2 -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x AORTA_COMM_TIMEOUT_MS \
		$A train -q --override training.max_steps=30 training.output_dir="$W/m2" distributed.mode=ddp
	ls -la "$W/m2"
	echo "== world 2 vs world 1 losses"
	WORLD=2 DEVICES=0,1 timeout 240 bash tests/gpu/dist_equal.sh build
	echo "== FSDP2 peer, 2 GPUs, batch 8"
	timeout 120 torchrun --standalone --nproc_per_node=2 .carry/fsdp2_peer.py 2>&1 | grep -E 'median|Error|error' | tail -3
	echo "== aorta, 2 GPUs, batch 8, full_shard, 60 steps"
	timeout 120 $A train -q --override training.max_steps=60 training.output_dir="$W/s2"
} 2>&1 | tee "$W/log.txt"
cp "$W/log.txt" "$FINAL/"
cp "$W/t2/rank_01_metrics.jsonl" "$FINAL/t2_rank1.jsonl" 2>/dev/null
cp "$W/graph/rank_00_metrics.jsonl" "$FINAL/graph_rank0.jsonl" 2>/dev/null
