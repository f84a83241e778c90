#!/usr/bin/env bash
# bench/hwq_speed/verify.sh - aorta hwq on a GPU machine, in one command:
#   1. the GPU test (tests/gpu/test_hwq.c): every workload at min and
#      recommended streams, each sync mode and graph mode, checks and traces
#      (AORTA_HWQ_TEST_ONLY limits it; default: the harness group's four)
#   2. the speed bench (bench/hwq_speed/run.sh) against PyTorch
#   3. smoke runs of hetero_kernels, tiny_kernel_stress, large_gemm_only and
#      comms_compute_overlap (three modes) through the CLI, a sweep, -p with
#      the trace read back by aorta analyze, compare of two results
# Logs go to $OUT (or /tmp/hwq_verify): gpu_test.log, smoke.log, speed.log,
# details.tgz; a summary on stdout.
#
# Usage: BUILD=build-hwq bench/hwq_speed/verify.sh
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
O=${OUT:-/tmp/hwq_verify}
mkdir -p "$O"
W=$(mktemp -d)
export LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-/usr/local/cuda/lib64} NCCL_NVLS_ENABLE=0
export AORTA_HWQ_TEST_ONLY=${AORTA_HWQ_TEST_ONLY:-hetero_kernels,tiny_kernel_stress,large_gemm_only,comms_compute_overlap}
A="$B/aorta"
rc_all=0
nvidia-smi -L 2>&1 | head -n 4

echo "== 1. GPU test"
timeout -s KILL 70 "$B/gpu-tests/test_hwq" >"$O/gpu_test.log" 2>&1; rc=$?
tail -n 1 "$O/gpu_test.log"; grep -E "FAIL" "$O/gpu_test.log" | head -n 10
[ $rc = 0 ] || { echo "gpu test: exit $rc"; rc_all=1; }

echo "== 2. speed"
AORTA_BIN=$A ITERS=${ITERS:-50} timeout -s KILL 80 bench/hwq_speed/run.sh "$W/speed" >"$O/speed.log" 2>&1 || rc_all=1
cat "$O/speed.log"
echo "== 3. smoke"
{
	set -x
	timeout -s KILL 20 $A hwq info
	timeout -s KILL 30 $A hwq run tiny_kernel_stress -s 16 -i 20 -w 5 -p --profile-dir "$W/prof" -o "$W/tiny16.json"
	timeout -s KILL 20 $A hwq run tiny_kernel_stress -s 16 -i 20 -w 5 --graph -o "$W/tiny16g.json"
	timeout -s KILL 30 $A hwq run hetero_kernels -s 8 -i 10 -w 3 -o "$W/hetero8.json"
	timeout -s KILL 40 $A hwq run large_gemm_only -s 4 -i 4 -w 2 -o "$W/large4.json"
	for m in compute_only comms_only comms_compute; do
		timeout -s KILL 40 $A hwq run comms_compute_overlap -s 4 -i 10 -w 3 --mode $m -o "$W/ovl-$m.json"
	done
	timeout -s KILL 40 $A hwq sweep tiny_kernel_stress -s 1,4,16,64 -i 10 -w 3 -o "$W/sweep.json"
	timeout -s KILL 20 $A hwq compare -b "$W/tiny16.json" -t "$W/tiny16g.json"
	echo "compare exit $?"
	t=$(find "$W/prof" -name '*.pt.trace.json*' | head -n 1)
	timeout -s KILL 30 $A analyze "$t" | head -n 40
	timeout -s KILL 10 $A hwq run tiny_kernel_stress -d 99; echo "-d 99 exit $?"
	timeout -s KILL 10 $A hwq run large_gemm_only -s 16 -d 0 -i 1 -w 0 --timing-iters 0 -q -o "$W/large16.json"; echo "large16 exit $?"
	set +x
} >"$O/smoke.log" 2>&1
for f in "$W"/tiny16.json "$W"/tiny16g.json "$W"/hetero8.json "$W"/large4.json "$W"/ovl-*.json; do
	[ -f "$f" ] || { echo "smoke: missing $(basename "$f")"; rc_all=1; continue; }
	python3 - "$f" <<'PY' || rc_all=1
import json, sys
r = json.load(open(sys.argv[1]))
ok = r["check"]["ok"]
print(f"  {r['workload_name']:24s} s={r['stream_count']:2d} {r['throughput']:12.3f} {r['throughput_unit']:9s} "
      f"p50 {r['latency_ms']['p50']:8.3f} ms  k/s {r['kernels_per_second']:10.0f}  switch {r['switch_latency']['estimated_switch_overhead_ms']:.4f} ms "
      f"busy {['%.2f' % x for x in r['per_stream_times_ms'][:4]]}  check {'ok' if ok else 'FAILED'}  "
      f"{r['metadata']['workload_config'].get('mode', '')}")
sys.exit(0 if ok else 1)
PY
done
grep -E "Peak throughput|Inflection|RESULT:|exit|error" "$O/smoke.log" | head -n 20

tar czf "$O/details.tgz" -C "$W" . 2>/dev/null
rm -rf "$W"
echo "verify exit $rc_all"
exit $rc_all
