#!/usr/bin/env bash
# bench/whatif/train_pairs.sh OUTDIR [CYCLES] - what-if validation pairs from
# a host-bound FSDP job whose host is C: `aorta train` (full_shard) with a tiny
# model, one MPI process per GPU, each recording its own CUPTI trace.
#
# The host of the lent GPU machines drifts by 10-30 % over seconds while a
# profiler runs (bench/RESULTS.md, "Base and slowed in one run"), so base and
# slowed are not separate runs but alternating profiler cycles of one run:
# CUPTI records CYCLES (default 16) cycles of WAIT + 1 + ACTIVE steps (a trace
# file per rank and cycle, named by its first step), and the planted host
# delay (debug.host_delay_ms on debug.host_delay_rank, a spin before the
# step's forward) is on in every second cycle (debug.host_delay_period = the
# cycle's length): cycles 0, 2, 4, ... are base, 1, 3, 5, ... slowed.  Each
# slowed cycle has a base cycle on either side, a quarter of a second away.
#
# Writes OUTDIR/<case>/ (metrics JSONL, torch_profiler/rank<N>/, stdout.txt)
# and OUTDIR/<case>/plan.json (the plant, the cycles' steps); the traces are
# analysed, anywhere, by bench/whatif/train_pairs_check.py OUTDIR.
# Run on a machine with WORLD GPUs and mpirun.
#   WORLD=2 (GPUs)  AORTA=build/aorta  WAIT=2  ACTIVE=4  CASES="train_host_r1_4ms ..."
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: bench/whatif/train_pairs.sh OUTDIR [CYCLES]}
CYCLES=${2:-16}
A=${AORTA:-./build/aorta}
WORLD=${WORLD:-2}
WAIT=${WAIT:-2}
ACTIVE=${ACTIVE:-4}
PER=$((WAIT + 1 + ACTIVE))
STEPS=$((CYCLES * PER + 1))
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda/lib64} NCCL_NVLS_ENABLE=0 AORTA_COMM_TIMEOUT_MS=60000
export CUDA_DEVICE_MAX_CONNECTIONS=1
# case: the planted rank and its delay (ms)
declare -A RANK=([train_host_r1_4ms]=1 [train_host_r0_2ms]=0) MS=([train_host_r1_4ms]=4 [train_host_r0_2ms]=2)
CASES=${CASES:-train_host_r1_4ms train_host_r0_2ms}
# a tiny model: every kernel a few microseconds, so the GPUs wait for the hosts
TINY=(model.model_dim=64 model.num_heads=2 model.num_layers=8 model.mlp_hidden_dim=128 model.embedding_dim=32
	model.vocab_size=1000 dataset.vocab_size=1000 model.dense_dim=32 dataset.dense_dim=32
	dataset.sequence_length=16 training.batch_size=2 training.max_steps="$STEPS" training.log_interval=100000
	profiling.enabled=true profiling.wait="$WAIT" profiling.warmup=1 profiling.active="$ACTIVE"
	profiling.repeat="$CYCLES" profiling.chrome_trace=true)
rc=0
for c in $CASES; do
	d=$OUT/$c
	rm -rf "$d"
	mkdir -p "$d"
	t0=$(date +%s)
	timeout -k 10 300 mpirun --allow-run-as-root --bind-to none -np "$WORLD" \
		-x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x AORTA_COMM_TIMEOUT_MS -x CUDA_DEVICE_MAX_CONNECTIONS \
		"$A" train -q --override "${TINY[@]}" training.output_dir="$d" debug.host_delay_ms="${MS[$c]}" \
		debug.host_delay_rank="${RANK[$c]}" debug.host_delay_period="$PER" >"$d/stdout.txt" 2>&1 ||
		{ echo "$c: exit $? ($(tail -1 "$d/stdout.txt"))"; rc=1; }
	echo "$c: $(($(date +%s) - t0)) s; $(ls "$d"/torch_profiler/rank*/ 2>/dev/null | grep -c json) trace files; $(grep -h trained "$d/stdout.txt" | head -1)"
	cat >"$d/plan.json" <<EOF
{"case": "$c", "job": "aorta train, full_shard, tiny model (bench/whatif/train_pairs.sh)", "world_size": $WORLD,
 "target": {"rank": ${RANK[$c]}},
 "planted": {"rank": ${RANK[$c]}, "where": "before_fwd", "kind": "host_spin", "ms": ${MS[$c]},
             "in": "steps s with s / $PER odd"},
 "cycle_steps": $PER, "wait": $WAIT, "warmup": 1, "active": $ACTIVE, "cycles": $CYCLES}
EOF
done
exit $rc
