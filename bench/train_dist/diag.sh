#!/usr/bin/env bash
# Short diagnostic of 2-GPU training with hard time limits on every process
# (timeout -s KILL on aorta itself), logs copied to $OUT.
set -u
W=/tmp/aorta_diag; mkdir -p "$W" "${OUT:-device_out}"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export AORTA_COMM_TIMEOUT_MS=20000 NCCL_DEBUG=WARN
A=./build/aorta
{
echo "== 1 GPU, graph mode, CUPTI"
CUDA_VISIBLE_DEVICES=0 timeout -s KILL 60 $A train -q --override training.max_steps=30 compile.enabled=true \
	training.output_dir="$W/g1" profiling.enabled=true profiling.wait=20 profiling.warmup=2 profiling.active=3; echo "rc=$?"
timeout -s KILL 20 $A analyze "$W/g1/torch_profiler" | sed -n '4,22p'
echo "== 2 GPUs thread mode, 3 steps, full_shard"
timeout -s KILL 50 $A train --override training.max_steps=3 training.output_dir="$W/t2" training.log_interval=1 \
	training.batch_size=8; echo "rc=$?"
tail -n 15 "$W/t2/rank0.log"; echo "-- rank1.log"; tail -n 8 "$W/t2/rank1.log"; wc -l "$W"/t2/*.jsonl
echo "== 2 GPUs thread mode, ddp"
timeout -s KILL 40 $A train -q --override training.max_steps=3 training.output_dir="$W/d2" distributed.mode=ddp; echo "rc=$?"
tail -n 5 "$W/d2/rank0.log"; wc -l "$W"/d2/*.jsonl
echo "== MPI mode ddp"
timeout -s KILL 40 mpirun --allow-run-as-root -np 2 -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x AORTA_COMM_TIMEOUT_MS -x NCCL_DEBUG \
	$A train -q --override training.max_steps=3 training.output_dir="$W/m2" distributed.mode=ddp; echo "rc=$?"
tail -n 5 "$W/m2/rank0.log"; wc -l "$W"/m2/*.jsonl
} > "$W/log.txt" 2>&1
cp "$W/log.txt" "${OUT:-device_out}/"
tail -c 11000 "$W/log.txt"
