#!/usr/bin/env bash
# run.sh - build and run the JSON parser benchmark (bench/RESULTS.md).
#
#   bash bench/json_parsers/run.sh [GZ_FILE] [RUNS]
#
# GZ_FILE defaults to rank 0 of ../shared/data/kineto/h200_torch2.11/
# ddp_4rank_56steps_large (204 MB of JSON).  It is decompressed once into
# bench/data/ (git-ignored); the page cache is warmed by a first read.
# Rows: aorta's reader on plain JSON and on gzip (ISA-L / zlib, pipelined
# inflater thread or inline), YAJL SAX (streaming, same fields), simdjson
# On-Demand (whole file in memory; only if libsimdjson-dev is installed).
# Each row prints MB/s of JSON text: wall (best, median) and per CPU second
# (process CPU time, all threads), plus peak RSS.  Every row also prints the
# kernel count or span count it found, so the parsers can be cross-checked.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
GZ=${1:-$(ls "${AORTA_SHARED_DATA:-../shared/data}"/kineto/h200_torch2.11/ddp_4rank_56steps_large/rank0.* | head -1)}
RUNS=${2:-5}
OUT=$ROOT/bench/out/json_parsers
DATA=$ROOT/bench/data
mkdir -p "$OUT" "$DATA"
CF="-std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Isrc -pthread"
LIBSRC="src/base/error.c src/base/strtab.c src/base/zread.c src/timeline/timeline.c src/timeline/rules.c src/ingest/kineto.c"

gcc $CF bench/json_parsers/bench_aorta.c $LIBSRC -lz -ldl -lm -o "$OUT/bench_aorta"
gcc $CF bench/json_parsers/bench_yajl.c src/base/error.c src/base/zread.c \
    -Wl,-Bstatic -lyajl_s -Wl,-Bdynamic -lz -ldl -o "$OUT/bench_yajl"
HAVE_SIMDJSON=0
if [ -f /usr/include/simdjson.h ] && g++ -O2 -std=c++17 bench/json_parsers/bench_simdjson.cpp \
       -lsimdjson -o "$OUT/bench_simdjson" 2>/dev/null; then
    HAVE_SIMDJSON=1
fi

PLAIN=$DATA/$(basename "$GZ" .gz)
GZC=$DATA/$(basename "$GZ")
[ -f "$GZC" ] || cp "$GZ" "$GZC"
[ -f "$PLAIN" ] || gzip -dc "$GZ" > "$PLAIN"
cat "$PLAIN" "$GZC" > /dev/null   # warm the page cache

echo "# file: $(basename "$PLAIN") ($(stat -c %s "$PLAIN") bytes JSON, $(stat -c %s "$GZC") bytes gz)"
echo "# cpus: $(nproc)  $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
echo "# isa-l: $(ldconfig -p | grep -c libisal.so.2) libisal.so.2 found"
row() { printf '%-34s ' "$1"; shift; "$@"; }
row "aorta plain"                      "$OUT/bench_aorta" "$PLAIN" "$RUNS"
row "aorta gz isa-l pipelined"         "$OUT/bench_aorta" "$GZC" "$RUNS"
row "aorta gz isa-l inline"            env AORTA_ZREAD_THREAD=0 "$OUT/bench_aorta" "$GZC" "$RUNS"
row "aorta gz zlib pipelined"          env AORTA_ZREAD_INFLATER=zlib "$OUT/bench_aorta" "$GZC" "$RUNS"
row "aorta gz zlib inline"             env AORTA_ZREAD_INFLATER=zlib AORTA_ZREAD_THREAD=0 "$OUT/bench_aorta" "$GZC" "$RUNS"
row "yajl plain"                       "$OUT/bench_yajl" "$PLAIN" "$RUNS"
row "yajl gz isa-l pipelined"          "$OUT/bench_yajl" "$GZC" "$RUNS"
if [ $HAVE_SIMDJSON = 1 ]; then
    row "simdjson on-demand plain"     "$OUT/bench_simdjson" "$PLAIN" "$RUNS"
else
    echo "# simdjson: libsimdjson-dev not installed, row skipped"
fi
if [ -x /usr/bin/time ]; then
    echo "# /usr/bin/time -v, one run each (max resident set size, kB):"
    for f in "$PLAIN" "$GZC"; do
        printf '%-34s ' "aorta $(basename "$f")"
        /usr/bin/time -v "$OUT/bench_aorta" "$f" 1 2>&1 >/dev/null | grep 'Maximum resident'
    done
fi
