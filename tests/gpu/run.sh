#!/usr/bin/env bash
# Runs every GPU test program (build/gpu-tests/test_*) and the GPU test
# scripts that need more than one program (train_mpi_traces.sh: aorta train
# under mpirun); each skips with a message when no CUDA device (or what else
# it needs) is present.  Prints "N passed, N failed, N skipped".
set -u
B=${1:-build}
passed=0 failed=0 skipped=0
for t in "$B"/gpu-tests/test_* "$(dirname "$0")"/train_mpi_traces.sh; do
	[ -x "$t" ] || [ "${t%.sh}" != "$t" ] || continue
	t0=$SECONDS
	if [ "${t%.sh}" != "$t" ]; then out=$(bash "$t" "$B" 2>&1); rc=$?; else out=$("$t" 2>&1); rc=$?; fi
	printf '%s\n' "$out" | tail -n 40
	echo "  $(basename "$t"): $((SECONDS - t0)) s"
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
	if [ -z "$line" ]; then failed=$((failed + 1)); echo "FAILED: $(basename "$t") (exit $rc, no summary)"; continue; fi
	p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/'); f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	s=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p'); s=${s:-0}
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
	[ "$rc" = 0 ] || { [ "$f" != 0 ] || failed=$((failed + 1)); echo "FAILED: $(basename "$t") exit $rc"; }
done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
