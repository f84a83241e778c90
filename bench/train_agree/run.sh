#!/usr/bin/env bash
# JSONL vs CUPTI agreement (issue 4): one training run under mpirun (one rank
# per process, so CUPTI's process-wide activity API sees one rank), with the
# profiler window on; `aorta analyze` of the JSONL metrics and of the CUPTI
# traces of the same run; bench/train_agree/agree.py compares compute,
# communication and exposed communication per (rank, step).
#   bash bench/train_agree/run.sh [BUILD] [NP]
# NCCL_CTA_POLICY=zero (exported) runs the all-gathers on the copy engines and
# counts their Memcpy PtoP records as communication in the CUPTI analysis.
set -u
B=${1:-build}; NP=${2:-2}
W=/tmp/aorta_agree; rm -rf "$W"; mkdir -p "$W" "${OUT:-device_out}"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 AORTA_COMM_TIMEOUT_MS=20000 NCCL_CTA_POLICY=${NCCL_CTA_POLICY:-}
A=./$B/aorta
for cfg in "full_shard batch 64" "ddp batch 64"; do
	set -- $cfg; mode=$1; bs=$3; d="$W/$mode"
	extra=""; [ "$mode" = ddp ] && extra="distributed.mode=ddp"
	echo "== $mode, world $NP, batch $bs: training with the CUPTI window on steps 12-17"
	timeout -s KILL 90 mpirun --allow-run-as-root -np "$NP" -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE \
		-x NCCL_CTA_POLICY -x AORTA_COMM_TIMEOUT_MS $A train -q --override training.max_steps=24 training.batch_size=$bs \
		training.output_dir="$d" profiling.enabled=true profiling.wait=10 profiling.warmup=2 \
		profiling.active=6 profiling.repeat=1 $extra > "$W/$mode.train.txt" 2>&1
	echo "train rc=$?"; tail -n 3 "$W/$mode.train.txt"
	find "$d" -name '*.pt.trace.json*' | head -4
	timeout -s KILL 60 $A analyze -q --json "$W/$mode.jsonl.json" "$d"/rank_*_metrics.jsonl; echo "analyze jsonl rc=$?"
	# NCCL_CTA_POLICY=zero: NCCL's all-gathers are copy-engine copies (Memcpy PtoP records in the
	# CUPTI trace); count them as communication, as the JSONL ranges do
	rules=(); if [ "${NCCL_CTA_POLICY:-}" = zero ] || [ "${NCCL_CTA_POLICY:-}" = 2 ]; then
		printf 'all_gather ^Memcpy PtoP\n' > "$W/ce.rules"; rules=(--rules "$W/ce.rules"); fi
	timeout -s KILL 60 $A analyze -q "${rules[@]}" --json "$W/$mode.cupti.json" "$d/torch_profiler"; echo "analyze cupti rc=$?"
	python3 bench/train_agree/agree.py "$W/$mode.jsonl.json" "$W/$mode.cupti.json" | tail -n 16
done
