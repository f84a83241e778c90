#!/usr/bin/env bash
# Builds bench/analyze_speed/scan_bench.c against the objects of a build
# folder (BUILD, default build; make it first) and runs it on the files given
# (default: the largest plain file of the analyze_speed set, and the real
# 56-step trace of ../shared/data, inflated to /tmp).
# Env: BUILD, REPS (7).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
B="${BUILD:-build}"
BIN="$B/bench/scan_bench"
mkdir -p "$B/bench"
# host objects of C sources only (CUDA objects share the .o suffix)
OBJS=$(find "$B"/obj/src -name '*.o' ! -path '*/src/main.o' ! -path '*/src/gpu/*' ! -name '*_gpu.o' \
	! -path '*/src/comm/nccl*' ! -path '*/src/report/plot_*' ! -name '*_mpi.o' |
	while read -r o; do c="${o#"$B"/obj/}"; [ -f "${c%.o}.c" ] && echo "$o"; done)
gcc -std=c11 -D_GNU_SOURCE -O2 -g -Isrc -pthread -o "$BIN" bench/analyze_speed/scan_bench.c $OBJS \
	-Wl,-Bstatic -lsqlite3 -lyaml -lyajl_s -Wl,-Bdynamic -lz -lm -ldl -lpthread
FILES=("$@")
if [ ${#FILES[@]} -eq 0 ]; then
	D="$ROOT/bench/data/analyze_speed/plain"
	[ -d "$D" ] && FILES+=("$(ls -S "$D"/rank*.json | head -1)")
	R=$(ls "$ROOT"/../shared/data/kineto/h200_torch2.11/ddp_4rank_56steps_large/rank0.*.json.gz 2>/dev/null | head -1)
	if [ -n "$R" ]; then
		[ -s /tmp/aorta_scan_bench_r56.json ] || zcat "$R" > /tmp/aorta_scan_bench_r56.json
		FILES+=(/tmp/aorta_scan_bench_r56.json)
	fi
fi
"$BIN" -r "${REPS:-7}" "${FILES[@]}"
