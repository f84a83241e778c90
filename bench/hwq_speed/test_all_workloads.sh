#!/usr/bin/env bash
# hwq re-verification after the ops-table change (samples_per_iter,
# kern_offset): tests/gpu/test_hwq over every workload (CPU-reference checks,
# kernels per iteration against the timing pass's trace), on 2 GPUs
#
#   bash bench/hwq_speed/test_all_workloads.sh [BUILD]
set -u
B=${1:-build}
O=${OUT:-/tmp/device_out}; mkdir -p "$O"
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} NCCL_NVLS_ENABLE=0 AORTA_COMM_TIMEOUT_MS=30000
t0=$(date +%s)
{
	CUDA_VISIBLE_DEVICES=0,1 timeout -s KILL 280 ./$B/gpu-tests/test_hwq > /tmp/test_hwq.txt 2>&1
	echo "test_hwq exit $? ($(( $(date +%s) - t0 )) s)"
	grep -E 'FAIL|passed| ok$|BAD' /tmp/test_hwq.txt | grep -v "^  (" | awk '!seen[$0]++' | tail -n 60
} > "$O/log.txt" 2>&1
cat "$O/log.txt"
