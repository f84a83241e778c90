#!/usr/bin/env bash
# bench/train_dist/run.sh W - overlap at batch 8 and 64 (issue "train part 2", item a).
# For each batch in BATCHES (default "8 64") and strategy in STRATS (default
# "full_shard ddp"), on every visible GPU, with the default schedule knobs
# (forward_prefetch true, BACKWARD_PRE, limit_all_gathers true, normal
# stream priorities): three runs of STEPS (default 40) steps,
#   normal    the overlapped step
#   compute   AORTA_TRAIN_ISOLATE=compute: every collective skipped
#   comm      AORTA_TRAIN_ISOLATE=comm: forward/backward/optimizer skipped
# each analysed with `aorta analyze --skip-steps SKIP --json` (common.sh).
# bench/train_dist/summary.py W turns $W/manifest.tsv and the JSONs into
# the tables (per-step medians of T_step, T_compute, T_comm, the overlap
# efficiency (T_compute + T_comm - T_step) / min(T_compute, T_comm), and
# exposed / comm of the normal run).  Nothing assumes 2 GPUs.
set -u
W=${1:-/tmp/aorta_train_dist}
mkdir -p "$W"
. "$(dirname "$0")/common.sh"
STEPS=${STEPS:-40}
for B in ${BATCHES:-8 64}; do
	for S in ${STRATS:-full_shard ddp}; do
		for M in normal compute comm; do
			one_run "$W" "a_b${B}_${S}_${M}" a "$B" "$S" "$M" true BACKWARD_PRE true false "$STEPS"
		done
	done
done
