#!/usr/bin/env bash
# third 4-GPU call (nvidia-h200-x4):
#   1. tests/gpu/test_dist_gpu (the executor at world 1 == the single-GPU
#      loop; cross-step overlaps bit-identical to off), test_nccl, and
#      test_tp on 4 GPUs (every tune-tp operator at TP 2 and 4 against the
#      unsplit GEMM + collective)
#   2. the 3 knob-sweep rows world4_sweep_agree.sh's time limit skipped (world 4)
#   3. GPU busy from kernels: `mpirun -np 4 aorta train` at batch 8 and 64
#      with the CUPTI window on steps 12-17, `aorta analyze --json` of the
#      traces (busy = union of kernels and copies per step)
# Everything under timeout -s KILL; results in $OUT.
#   bash bench/gpu_suite/world4_tests.sh [BUILD]
. "$(dirname "$0")/../train_dist/prelude.sh"
t0=$(date +%s)
stamp() { echo "   [$(( $(date +%s) - t0 )) s]"; }
{
	echo "== 1. GPU tests"
	for t in test_dist_gpu test_nccl test_tp; do
		timeout -s KILL 150 ./$B/gpu-tests/$t > /tmp/$t.txt 2>&1
		echo "$t exit $?"; grep -E 'FAIL|passed|skip' /tmp/$t.txt | grep -v NCCL | tail -n 6
		stamp
	done
	echo "== 2. skipped sweep rows"
	W=/tmp/sweep4; rm -rf "$W"; mkdir -p "$W"; : > "$W/manifest.tsv"
	one_run "$W" b_fpfalse_BACKWARD_POST_lagfalse_priotrue b 64 full_shard normal false BACKWARD_POST false true 30
	one_run "$W" b_fptrue_none_lagfalse_priotrue b 64 full_shard normal true none false true 30
	one_run "$W" b_fpfalse_none_lagfalse_priotrue b 64 full_shard normal false none false true 30
	stamp
	echo "== 3. CUPTI busy, mpirun -np 4"
	for cfg in "full_shard 8" "ddp 8" "full_shard 64" "ddp 64"; do
		set -- $cfg; st=$1; bs=$2; d=/tmp/busy/${st}_$bs
		ov="training.batch_size=$bs"; [ $st = ddp ] && ov="$ov distributed.mode=ddp"
		timeout -s KILL 60 mpirun --allow-run-as-root -np 4 -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE \
			-x AORTA_COMM_TIMEOUT_MS $A train -q --override training.max_steps=24 $ov \
			training.output_dir="$d" profiling.enabled=true profiling.wait=10 profiling.warmup=2 \
			profiling.active=6 profiling.repeat=1 > /tmp/busy_${st}_$bs.txt 2>&1
		echo "$st $bs train rc=$?"
		timeout -s KILL 60 $A analyze -q --json "$d.cupti.json" "$d/torch_profiler" || echo "analyze rc=$?"
		timeout -s KILL 60 $A analyze -q --skip-steps 10 --json "$d.jsonl.json" "$d"/rank_*_metrics.jsonl || echo "analyze rc=$?"
		python3 - "$d.cupti.json" "$d.jsonl.json" <<'PY'
import json, sys
for p in sys.argv[1:]:
    d = json.load(open(p))
    for r in d["ranks"]:
        s = r["step_stats"]
        print("%s rank %s: steps %d, step p50 %.3f ms, busy p50 %.3f ms (%.1f %%), compute %.3f, comm %.3f, exposed %.3f ms" % (
            p.rsplit(".", 2)[-2], r.get("rank"), s["step_ms"]["n"] if "n" in s["step_ms"] else -1, s["step_ms"]["p50"],
            s["busy_ms"]["p50"], 100 * s["busy_ms"]["p50"] / s["step_ms"]["p50"], s["compute_ms"]["p50"],
            s["comm_ms"]["p50"], s["exposed_comm_ms"]["p50"]))
PY
	done
	stamp
	cd /tmp && tar czf "$O/l_raw.tar.gz" sweep4/manifest.tsv sweep4/*.json busy/*.json 2>/dev/null
} > "$O/log.txt" 2>&1
tail -n 80 "$O/log.txt"
