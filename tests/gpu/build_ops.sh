#!/bin/sh
# Builds build/gpu/test_gpu_ops (gpu_* ops and the GPU model vs the CPU
# reference) from the repository root, on its own:
#   sh tests/gpu/build_ops.sh && build/gpu/test_gpu_ops
# Needs nvcc (CUDA 13.0, sm_90 = H100/H200).  Override NVCC=, CC=, CUDA_HOME=, OUT=.
set -eu
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
CC=${CC:-gcc}
OUT=${OUT:-build/gpu}
WARN="-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla -Wformat=2 -Wno-format-nonliteral ${WERROR:-}"
CFLAGS="-std=c11 -D_GNU_SOURCE -O2 -g $WARN -Isrc -DAORTA_GPU=1 -I$CUDA_HOME/include"
mkdir -p "$OUT"
"$NVCC" -O2 -std=c++17 -Isrc -arch=sm_90 -Xcompiler -fPIC,-Wall -c -o "$OUT/ops_gpu.o" src/kernels/ops_gpu.cu
for f in src/kernels/ops_cpu.c src/train/model.c src/train/model_gpu.c src/gpu/device.c src/base/error.c; do
	"$CC" $CFLAGS -c -o "$OUT/$(basename "$f" .c).o" "$f"
done
# -lstdc++: the nvcc-compiled object needs the C++ runtime when gcc links
"$CC" $CFLAGS -o "$OUT/test_gpu_ops" tests/gpu/test_gpu_ops.c "$OUT/ops_gpu.o" "$OUT/ops_cpu.o" \
	"$OUT/model.o" "$OUT/model_gpu.o" "$OUT/device.o" "$OUT/error.o" \
	-L"$CUDA_HOME/lib64" -Wl,-rpath,/usr/local/cuda/lib64 -lcublas -lcudart -lstdc++ -lm -lpthread
echo "built $OUT/test_gpu_ops"
