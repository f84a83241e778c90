#!/usr/bin/env bash
# aorta train against a PyTorch eager peer on the same GPU, in one run.
#   bash bench/train_speed/run.sh OUTDIR      (on the GPU machine, from the repo root,
#                                              with build/aorta built and carried)
# For batch 8 and 64: aorta train (instrumented, with a CUPTI trace window),
# aorta train uninstrumented (AORTA_TRAIN_UNINSTRUMENTED=1), and peer.py.
# Then bench/train_speed/summary.py prints the ratios the issue targets.
set -u
OUT=${1:-bench/out/train_speed}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
A=./build/aorta
STEPS=${STEPS:-120}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$OUT/gpu.txt" 2>&1
for B in 8 64; do
	$A train -q --override training.max_steps=$STEPS training.batch_size=$B \
		training.output_dir="$OUT/ours_b$B" profiling.enabled=true profiling.wait=$((STEPS - 10)) \
		profiling.warmup=2 profiling.active=3 profiling.repeat=1 >"$OUT/ours_b$B.txt" 2>&1
	AORTA_TRAIN_UNINSTRUMENTED=1 $A train -q --override training.max_steps=$STEPS training.batch_size=$B \
		training.output_dir="/tmp/aorta_unins_b$B" >"$OUT/unins_b$B.txt" 2>&1
	python3 bench/train_speed/peer.py --batch $B --out "$OUT/peer_b$B" >"$OUT/peer_b$B.json" 2>"$OUT/peer_b$B.err"
done
python3 bench/train_speed/summary.py "$OUT" | tee "$OUT/summary.txt"
