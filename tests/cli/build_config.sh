#!/usr/bin/env bash
# The build records its optional parts in BUILD/features, says what it left
# out and why, and rebuilds when they change (a library that arrives later,
# e.g. through scripts/deps.sh, is not silently missing from the build).
# One object in a temporary build folder, configured three ways.
. "$(dirname "$0")/lib.sh"
B=$T/b
obj=$B/obj/src/base/error.o
mk() { make -s --no-print-directory BUILD="$B" "$@" 2>&1; }
out=$(mk BUILD_GPU=0 MPICC=/nonexistent/mpicc "$obj")
printf '%s' "$out" | grep -q "build configuration of $B/: gpu=0 mpi=0 " && ok || bad "no configuration line: $out"
# the reason: BUILD_GPU=0 where nvcc is found, else that there is no nvcc
printf '%s' "$out" | grep -qE "left out: the GPU plug-in .*: (BUILD_GPU=0|no nvcc \(the CUDA toolkit is not installed)" && ok ||
	bad "GPU left out without its reason: $out"
printf '%s' "$out" | grep -q "left out: MPI .*no /nonexistent/mpicc" && ok || bad "MPI left out without its reason: $out"
grep -q "^gpu=0 mpi=0 " "$B/features" && ok || bad "features file: $(cat "$B/features")"
[ -f "$obj" ] && ok || bad "$obj not built"
# the same configuration again: nothing to do, nothing said
out=$(mk BUILD_GPU=0 MPICC=/nonexistent/mpicc "$obj")
[ -z "$out" ] && ok || bad "an unchanged configuration printed or rebuilt: $out"
make -q BUILD="$B" BUILD_GPU=0 MPICC=/nonexistent/mpicc "$obj" && ok || bad "make -q: the object is not up to date"
# make -n and -q change nothing, even when the configuration differs
make -n -s BUILD="$B" BUILD_GPU=0 MPICC=/nonexistent/other "$obj" >/dev/null 2>&1
grep -q "^gpu=0 mpi=0 " "$B/features" && ok || bad "make -n rewrote the features file"
# another configuration (MPI found under another name is enough): the
# object is rebuilt and the change announced
fake=$T/bin/mpicc
mkdir -p "$T/bin"
printf '#!/bin/sh\ncase "$1" in --showme:compile) echo -I/nonexistent/include ;; --showme:link) echo -lmpi ;; esac\n' > "$fake"
chmod +x "$fake"
out=$(mk BUILD_GPU=0 MPICC="$fake" "$obj")
printf '%s' "$out" | grep -q "gpu=0 mpi=1 .*(was: gpu=0 mpi=0 .*); rebuilding" && ok || bad "the change was not announced: $out"
printf '%s' "$out" | grep -q "CC *src/base/error.c" && ok || bad "the object was not rebuilt: $out"
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
