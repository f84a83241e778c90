#!/usr/bin/env bash
# bench/train_dist/sweep.sh W - the schedule knob sweep (issue "train part 2",
# item b): batch B (default 64), strategy STRAT (default full_shard), every
# combination of
#   fsdp.forward_prefetch   true false
#   fsdp.backward_prefetch  BACKWARD_PRE BACKWARD_POST none
#   fsdp.limit_all_gathers  true false            (true: at most 2 in flight)
#   streams.high_priority   false true            (true: comm streams first)
# = 24 runs of STEPS (default 30) steps, analysed as run.sh's (common.sh);
# summary.py W tabulates median step, comm, exposed comm and exposed / comm
# and each knob's mean effect.  Nothing assumes 2 GPUs.
set -u
W=${1:-/tmp/aorta_train_dist}
mkdir -p "$W"
. "$(dirname "$0")/common.sh"
STEPS=${STEPS:-30}
B=${B:-64}
STRAT=${STRAT:-full_shard}
for prio in false true; do
	for lag in true false; do
		for bp in BACKWARD_PRE BACKWARD_POST none; do
			for fp in true false; do
				one_run "$W" "b_fp${fp}_${bp}_lag${lag}_prio${prio}" b "$B" "$STRAT" normal "$fp" "$bp" "$lag" \
					"$prio" "$STEPS"
			done
		done
	done
done
