#!/usr/bin/env bash
# bench/tune_tp/verify.sh [BUILD] - the one device command of the
# tune-tp GPU side: the GPU test (BUILD/gpu-tests/test_tp), then
# bench/tune_tp/run.sh (aorta's operators vs PyTorch's at TP 2, table).
# Needs 2 GPUs; logs under $OUT (or /tmp/tune_tp).  Build first, on the
# CPU machine: bash bench/tune_tp/build.sh BUILD.
set -u
B=${1:-build-tpg}
O=${OUT:-/tmp/tune_tp}
mkdir -p "$O"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} NCCL_NVLS_ENABLE=0
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>&1 | head -n 4
nvidia-smi topo -m 2>/dev/null | head -n 3
echo "== test_tp"
timeout -s KILL 110 "$B"/gpu-tests/test_tp >"$O"/test_tp.log 2>&1
echo "test_tp exit $?"
grep -E "FAIL|SKIP|passed|error|warn" "$O"/test_tp.log | head -n 30
grep -E "^  tp2 .*m8192" "$O"/test_tp.log
bash bench/tune_tp/run.sh "$B" "$O"
