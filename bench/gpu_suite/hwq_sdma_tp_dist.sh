#!/usr/bin/env bash
# One device call (nvidia-h200-x2), part A of a whole verification: hwq (all
# 15 workloads' GPU test, speed against PyTorch, CLI smoke), sdma, the
# tune-tp operators (test_tp and the TP-2 bench against PyTorch's fused
# operators), the distributed GPU tests.  Logs under $OUT.
#   bash bench/gpu_suite/hwq_sdma_tp_dist.sh [BUILD]
set -u
B=${1:-build}
O=${OUT:-/tmp/hwq_sdma_tp_dist}; mkdir -p "$O"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} NCCL_NVLS_ENABLE=0 AORTA_COMM_TIMEOUT_MS=30000
nvidia-smi -L
t0=$(date +%s)
stamp() { echo "   [$(( $(date +%s) - t0 )) s]"; }
echo "== hwq GPU test, all 15 workloads"
timeout -s KILL 150 "$B/gpu-tests/test_hwq" >"$O/hwq_test.log" 2>&1; echo "test_hwq exit $?"
grep -E 'FAIL|^[0-9]+ passed' "$O/hwq_test.log" | head -n 30; stamp
echo "== hwq speed and smoke"
AORTA_HWQ_TEST_ONLY=tiny_kernel_stress BUILD=$B OUT=/tmp/hwqv timeout -s KILL 170 bash bench/hwq_speed/verify.sh >"$O/hwq_verify.log" 2>&1
echo "verify exit $?"; grep -vE '^\+' "$O/hwq_verify.log" | tail -n 45; stamp
echo "== tune-tp operators: test_tp and the TP-2 bench"
OUT=/tmp/tpv timeout -s KILL 200 bash bench/tune_tp/verify.sh "$B" >"$O/tp_verify.log" 2>&1
echo "tp verify exit $?"; grep -E 'exit|FAIL|passed' "$O/tp_verify.log" | head; cat /tmp/tpv/table.txt 2>/dev/null; stamp
echo "== sdma"
timeout -s KILL 100 bash bench/sdma/run.sh "$B" /tmp/sdma >"$O/sdma.log" 2>&1; echo "sdma exit $?"
tail -n 25 "$O/sdma.log"; cat /tmp/sdma/summary.txt 2>/dev/null | tail -n 20; stamp
echo "== distributed GPU tests"
for t in test_dist_gpu test_nccl; do
	timeout -s KILL 90 "$B/gpu-tests/$t" >"/tmp/$t.log" 2>&1; echo "$t exit $?: $(tail -n 1 /tmp/$t.log)"
	grep -E 'FAIL' "/tmp/$t.log" | head -n 5
done
cat /tmp/test_dist_gpu.log /tmp/test_nccl.log > "$O/dist_tests.log"; stamp
