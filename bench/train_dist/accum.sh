#!/usr/bin/env bash
# 2-GPU check of gradient accumulation and stress injection in the
# distributed executor (carry build/aorta, build/*.so, build/gpu-tests).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 AORTA_COMM_TIMEOUT_MS=20000
{
echo "== test_dist_gpu"
AORTA_GPU_TEST_BENCH=0 timeout -s KILL 120 build/gpu-tests/test_dist_gpu 2>&1 | tail -8
echo "== world 2 x accum 2 vs world 1"
WORLD=2 DEVICES=0,1 ACCUM=2 PRECISIONS=fp32 DE_DIR=/tmp/de_acc timeout -s KILL 90 bash tests/gpu/dist_equal.sh build 2>&1 | tail -6
echo "== with stress level 2"
WORLD=2 DEVICES=0,1 ACCUM=2 STRESS=2 PRECISIONS=fp32 DE_DIR=/tmp/de_st timeout -s KILL 90 bash tests/gpu/dist_equal.sh build 2>&1 | tail -6
} 2>&1 | tee /tmp/acc.log
