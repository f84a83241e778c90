#!/usr/bin/env bash
# aorta train, eager and as a CUDA graph (compile.enabled), against a PyTorch
# eager peer on the same GPU, in one run.
#   bash bench/train_speed/run.sh OUTDIR      (on the GPU machine, from the repo root,
#                                              with build/aorta built and carried)
# For each batch in BATCHES (default "8 64") and each mode (eager, graph):
#   <mode>_instr_b<B>_r<k>.txt  instrumented (events, recorder, JSONL), no profiler
#   <mode>_unins_b<B>_r<k>.txt  AORTA_TRAIN_UNINSTRUMENTED=1 (host clock only)
#                               (k = 1..REPS, interleaved so drift hits both alike;
#                               their host-wall medians give the instrumentation cost)
#   <mode>_prof_b<B>/           instrumented with a CUPTI trace window of 3 steps
#                               (kernel time per step, GPU busy)
# and peer.py unless PEER=0.  Then summary.py prints the table the issues target.
set -u
OUT=${1:-bench/out/train_speed}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
A=./build/aorta
STEPS=${STEPS:-200}
REPS=${REPS:-2}
BATCHES=${BATCHES:-8 64}
PEER=${PEER:-1}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$OUT/gpu.txt" 2>&1
for B in $BATCHES; do
	for k in $(seq 1 "$REPS"); do
		for mode in eager graph; do
			g=false; [ $mode = graph ] && g=true
			$A train -q --override training.max_steps=$STEPS training.batch_size=$B compile.enabled=$g \
				training.output_dir="/tmp/aorta_${mode}_instr_b$B" >"$OUT/${mode}_instr_b${B}_r$k.txt" 2>&1
			AORTA_TRAIN_UNINSTRUMENTED=1 $A train -q --override training.max_steps=$STEPS \
				training.batch_size=$B compile.enabled=$g \
				training.output_dir="/tmp/aorta_${mode}_unins_b$B" >"$OUT/${mode}_unins_b${B}_r$k.txt" 2>&1
		done
	done
	for mode in eager graph; do
		g=false; [ $mode = graph ] && g=true
		rm -rf "$OUT/${mode}_prof_b$B"
		$A train -q --override training.max_steps=$STEPS training.batch_size=$B compile.enabled=$g \
			training.output_dir="$OUT/${mode}_prof_b$B" profiling.enabled=true \
			profiling.wait=$((STEPS - 10)) profiling.warmup=2 profiling.active=3 profiling.repeat=1 \
			>"$OUT/${mode}_prof_b$B.txt" 2>&1
		cp "/tmp/aorta_${mode}_instr_b$B/rank0.log" "$OUT/${mode}_instr_b$B.log" 2>/dev/null
	done
	if [ "$PEER" != 0 ]; then
		python3 bench/train_speed/peer.py --batch $B --out "$OUT/peer_b$B" >"$OUT/peer_b$B.json" 2>"$OUT/peer_b$B.err"
	fi
done
BATCHES="$BATCHES" python3 bench/train_speed/summary.py "$OUT" | tee "$OUT/summary.txt"
