#!/usr/bin/env bash
# Builds the GPU runtime test into build/gpu-runtime-test/test_runtime, on its own
# (it compiles only what it needs: base, timeline, ingest, overlap, the
# Kineto writer, src/gpu and tests/gpu/spin.cu), so it builds while other
# parts of the tree are in flux.  Needs nvcc (CUDA 12/13).  Run it with
#   LD_LIBRARY_PATH=/usr/local/cuda/lib64 build/gpu-runtime-test/test_runtime
# (The Makefile builds the same test as build/gpu-tests/test_runtime with
# `make gpu-tests`, and runs it with `make check-gpu`.)
# It skips every test (exit 0) on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/../.."
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
CUDA_HOME=${CUDA_HOME:-$(cd "$(dirname "$NVCC")/.." && pwd)}
CC=${CC:-gcc}
OUT=build/gpu-runtime-test
CFLAGS="-std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Wshadow -Wstrict-prototypes \
 -Wmissing-prototypes -Wvla -Wformat=2 -Wno-format-nonliteral ${WERROR:-} -Isrc -Itests/unit \
 -Itests/gpu -pthread -DAORTA_GPU=1 -I$CUDA_HOME/include"
SRC=$(ls src/base/*.c src/timeline/*.c src/ingest/*.c src/overlap/*.c \
	src/report/figures.c src/gpu/*.c)
mkdir -p "$OUT/obj"
objs=()
for f in $SRC; do
	o="$OUT/obj/$(echo "${f%.c}" | tr / _).o"
	objs+=("$o")
	if [ ! -e "$o" ] || [ "$f" -nt "$o" ] || [ -n "$(find src -name '*.h' -newer "$o" -print -quit)" ]; then
		echo "$CC -c $f"
		$CC $CFLAGS -c -o "$o" "$f" &
	fi
	while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n; done
done
wait
$NVCC -O2 -std=c++17 -Isrc -Itests/gpu -arch=sm_90 -Xcompiler -fPIC,-Wall -c -o "$OUT/obj/spin.o" tests/gpu/spin.cu
$CC $CFLAGS -o "$OUT/test_runtime" tests/gpu/test_runtime.c "${objs[@]}" "$OUT/obj/spin.o" \
	-L"$CUDA_HOME/lib64" -Wl,-rpath,/usr/local/cuda/lib64 -lcudart \
	-Wl,-Bstatic -lsqlite3 -lyaml -lyajl_s -Wl,-Bdynamic -lz -lm -ldl -lpthread -lstdc++
echo "built $OUT/test_runtime"
