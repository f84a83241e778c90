#!/usr/bin/env bash
# One device call that verifies the GPU side and measures it (run by the
# developer through the device tool, from the repo root, with build/aorta and
# build/gpu-tests carried):
#   1. GPU tests: every gpu_* op and a whole step against the CPU reference,
#      the runtime (streams, recorder, NVML, CUPTI)
#   2. short training runs in fp32 / bf16 / fp16 / accumulation, then
#      'aorta analyze' of the run's JSONL and of its CUPTI trace
#   3. bench/train_speed (aorta vs PyTorch eager, batch 8 and 64)
# Everything is written under $WORK (default /tmp/aorta_verify); the few
# files worth keeping are copied to $OUT (the device tool returns 8 files).
set -u
FINAL=${OUT:-device_out}
OUT=${WORK:-/tmp/aorta_verify}
mkdir -p "$OUT" "$FINAL"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
A=./build/aorta
{
	nvidia-smi -L
	echo "== gpu tests"
	AORTA_GPU_TEST_BENCH=0 bash tests/gpu/run.sh build
	echo "== short runs"
	for p in fp32 bf16 fp16; do
		$A train -q --override training.max_steps=40 training.mixed_precision=$p \
			training.output_dir="$OUT/run_$p" training.log_interval=10 || echo "TRAIN $p FAILED"
	done
	$A train --override training.max_steps=30 training.gradient_accumulation=4 training.batch_size=4 \
		training.output_dir="$OUT/run_accum" training.log_interval=10 --enable-gpu-metrics || echo "TRAIN accum FAILED"
	$A train -q --override training.max_steps=300 scheduler.warmup_steps=20 optimizer.lr=1e-3 \
		training.output_dir="$OUT/run_long" profiling.enabled=true profiling.wait=50 profiling.warmup=2 \
		profiling.active=3 || echo "TRAIN long FAILED"
	echo "== analyze the run's JSONL and trace"
	$A analyze "$OUT/run_long/rank_00_metrics.jsonl" --skip-steps 5 | head -40
	$A analyze "$OUT/run_long/torch_profiler" --json "$OUT/run_long_trace_analysis.json" | head -60
	tail -n 1 "$OUT/run_accum/rank_00_metrics.jsonl" | head -c 3000; echo
	echo "== speed"
	STEPS=120 bash bench/train_speed/run.sh "$OUT/speed"
} 2>&1 | tee "$OUT/log.txt"
cp "$OUT/log.txt" "$FINAL/"
cp "$OUT/speed/summary.txt" "$FINAL/speed_summary.txt" 2>/dev/null
cp "$OUT/run_long/rank_00_metrics.jsonl" "$FINAL/run_long_metrics.jsonl" 2>/dev/null
cp "$OUT/run_long_trace_analysis.json" "$FINAL/" 2>/dev/null
cp "$OUT/run_accum/rank_00_metrics.jsonl" "$FINAL/run_accum_metrics.jsonl" 2>/dev/null
t=$(ls "$OUT"/run_long/torch_profiler/rank0/*.json* 2>/dev/null | head -n 1)
[ -n "$t" ] && gzip -c "$t" > "$FINAL/run_long_trace.json.gz"
