#!/usr/bin/env bash
# bench/tune_tp/build.sh [BUILD] - builds the tune-tp GPU test and driver
# (BUILD/gpu-tests/test_tp, BUILD/gpu-tests/tp_bench) on the CPU machine.
# The objects come from the Makefile; the programs are linked against an
# archive of them, so only the objects they need are pulled in (a
# half-finished file elsewhere in the tree cannot break this link).
set -eu
B=${1:-build-tpg}
cd "$(dirname "$0")/../.."
TPO="$B/obj/src/tp/tp_session_gpu.o $B/obj/src/tp/tp_ops_gpu.o $B/obj/src/tp/tp_check_gpu.o"
make -k -j2 BUILD="$B" $TPO "$B"/obj/src/tp/tp_kern.o \
	$(find src -name '*.c' ! -path 'src/main.c' ! -name '*_mpi.c' ! -path 'src/report/plot_*' |
	  sed "s|^\(.*\)\.c$|$B/obj/\1.o|") >/dev/null || echo "build.sh: some objects elsewhere did not build (ignored)" >&2
for o in $TPO "$B"/obj/src/tp/tp_kern.o; do test -f "$o"; done
rm -f "$B"/libtp_all.a
find "$B"/obj/src -name '*.o' ! -name main.o ! -name '*_mpi.o' ! -name tp_gpu.o | sort | xargs ar rcs "$B"/libtp_all.a
CF="-std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla -Wformat=2 -Wno-format-nonliteral -Isrc -pthread -DAORTA_GPU=1 -I/usr/local/cuda/include -Itests/unit -Itests/gpu"
LIBS="-Wl,-Bstatic -lsqlite3 -lyaml -lyajl_s -Wl,-Bdynamic -lz -lm -ldl -lpthread -L/usr/local/cuda/lib64 -Wl,-rpath,/usr/local/cuda/lib64 -lcudart -lcublas -lcublasLt -lnccl -lstdc++"
mkdir -p "$B"/gpu-tests
for p in test_tp tp_bench; do
	gcc $CF ${EXTRA_CFLAGS:-} -rdynamic -o "$B"/gpu-tests/$p tests/gpu/$p.c -Wl,--whole-archive $TPO -Wl,--no-whole-archive "$B"/libtp_all.a $LIBS
done
echo "built $B/gpu-tests/test_tp $B/gpu-tests/tp_bench"
