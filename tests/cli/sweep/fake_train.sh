#!/usr/bin/env bash
# tests/cli/sweep/fake_train.sh - a stand-in workload for `aorta sweep run`
# tests: writes aorta JSONL (2 ranks x STEPS steps) into $AORTA_SWEEP_OUT
# whose step time is planted from the cell's variables, so the tests know
# what the sweep must measure and rank.
#   step ms = 20 - 2 (NCCL_NTHREADS=512) + 0.05 (NCCL_MIN_NCHANNELS=4)
#             - 1.5 (FAKE_LIB=new) + trial jitter (t1 -0.1, t2 +0.1, t3 0)
#   FAKE_NOISY_CELL=cNN: that cell's jitter is x20 and it is 1 ms faster
#   FAKE_DRIFT=1: the confound re-run is 2 ms slower
#   FAKE_MODE: ok | fail (exit 3) | hang (sleep 60, a child too) | crash
#              (SIGSEGV) | empty (exit 0, nothing written)
#   FAKE_SLEEP=S: sleep S seconds first;  FAKE_COUNTER=FILE: appends "cell trial"
set -u
out=${AORTA_SWEEP_OUT:?}
cell=${AORTA_SWEEP_CELL:-c00}
trial=${AORTA_SWEEP_TRIAL:-1}
[ -n "${FAKE_COUNTER:-}" ] && echo "$cell $trial" >> "$FAKE_COUNTER"
[ -n "${FAKE_SLEEP:-}" ] && sleep "$FAKE_SLEEP"
case "${FAKE_MODE:-ok}" in
fail) echo "fake: failing on purpose" >&2; exit 3 ;;
hang) sleep 60 & echo $! > "$out/child.pid"; sleep 60; exit 0 ;;
crash) kill -SEGV $$ ;;
empty) exit 0 ;;
esac
awk -v nt="${NCCL_NTHREADS:-256}" -v ch="${NCCL_MIN_NCHANNELS:-2}" -v lib="${FAKE_LIB:-old}" \
    -v trial="$trial" -v cell="$cell" -v noisy="${FAKE_NOISY_CELL:-}" -v drift="${FAKE_DRIFT:-0}" \
    -v steps="${STEPS:-10}" -v out="$out" 'BEGIN {
	s = 20.0
	if (nt == 512) s -= 2
	if (ch == 4) s += 0.05
	if (lib == "new") s -= 1.5
	j = (trial == 1) ? -0.1 : (trial == 2) ? 0.1 : 0
	if (cell == noisy) { j *= 20; s -= 1 }
	if (trial == "confound" && drift == 1) s += 2
	s += j
	for (r = 0; r < 2; r++) {
		f = sprintf("%s/rank_%02d_metrics.jsonl", out, r)
		for (k = 0; k < steps; k++) {
			c1 = 0.5 + 0.6 * s; a0 = 0.5 + 0.5 * s; a1 = a0 + 0.3 * s
			printf("{\"rank\": %d, \"world_size\": 2, \"epoch\": 0, \"step\": %d, \"global_step\": %d, \"profile\": {\"total_ms\": %.6f, \"ranges\": [{\"stream\": \"compute\", \"tag\": \"epoch0_step%d_forward\", \"start_ms\": 0.5, \"end_ms\": %.6f, \"duration_ms\": 0}, {\"stream\": \"allreduce\", \"tag\": \"epoch0_step%d_all_reduce\", \"start_ms\": %.6f, \"end_ms\": %.6f, \"duration_ms\": 0, \"metadata\": {\"bytes\": 4194304}}]}}\n", r, k, k, s, k, c1, k, a0, a1) > f
		}
		close(f)
	}
}'
