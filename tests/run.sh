#!/usr/bin/env bash
# The whole test suite: unit tests, CLI golden tests, real-trace tests, the
# MPI tests of the distributed core (mpirun -np 2 and 4; skipped without
# Open MPI), the HIP build for AMD GPUs (make hip + tests/hip_check.sh;
# skipped without hipcc), the unit suite again under ASan+UBSan, and each reader's
# libFuzzer target for a bounded time.  Ends with the line CI reads: "N passed, N failed, N skipped".
#   FUZZ_SECONDS=N   seconds per fuzz target (default 15; 0 skips fuzzing)
#   AORTA_SHARED_DATA=DIR   the real traces (default ../shared/data)
set -u
cd "$(dirname "$0")/.."
export AORTA_SHARED_DATA="${AORTA_SHARED_DATA:-$(cd .. && pwd)/shared/data}"
FUZZ_SECONDS="${FUZZ_SECONDS:-15}"
passed=0 failed=0 skipped=0
failures=()

count() { # name, output of a runner that prints "N passed, N failed, N skipped"
	local name=$1 out=$2 rc=$3 line p f s
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
	if [ -z "$line" ]; then
		failed=$((failed + 1)); failures+=("$name (no summary, exit $rc)")
		printf '%s\n' "$out" | tail -n 20
		return
	fi
	p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	s=$(echo "$line" | sed -nE 's/.* ([0-9]+) skipped.*/\1/p'); s=${s:-0}
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
	if [ "$f" != 0 ] || [ "$rc" != 0 ]; then
		[ "$f" != 0 ] || failed=$((failed + 1))
		failures+=("$name")
		printf '%s\n' "$out" | grep -E 'FAIL|error' | head -n 20
	fi
	echo "  $name: $line"
}

run_units() { # dir label
	for t in "$1"/tests/test_*; do
		[ -x "$t" ] || continue
		out=$("$t" 2>&1); rc=$?
		count "$2$(basename "$t")" "$out" $rc
	done
}

echo "== unit and real-trace tests"
run_units build ""

echo "== GPU tests (built here; they skip without a device)"
if ls build/gpu-tests/test_* >/dev/null 2>&1; then
	out=$(bash tests/gpu/run.sh build 2>&1); rc=$?
	count "gpu" "$out" $rc
fi

echo "== MPI tests (the distributed core on the CPU, mpirun -np 2 and 4)"
if command -v mpirun >/dev/null 2>&1 && command -v mpicc >/dev/null 2>&1; then
	if make -s mpi-tests >/tmp/aorta_mpi_build.log 2>&1; then
		# 4 ranks on 2 cores need --oversubscribe; root needs --allow-run-as-root;
		# containers often forbid the cross-memory-attach single copy
		mpiflags=(--oversubscribe)
		[ "$(id -u)" -ne 0 ] || mpiflags+=(--allow-run-as-root)
		for t in build/mpi-tests/test_*; do
			[ -x "$t" ] || continue
			for np in 2 4; do
				out=$(OMPI_MCA_btl_vader_single_copy_mechanism=none timeout 300 \
					mpirun "${mpiflags[@]}" -np "$np" "$t" 2>&1); rc=$?
				count "mpi-np$np:$(basename "$t")" "$out" $rc
			done
		done
	else
		failed=$((failed + 1)); failures+=("mpi-tests build"); tail -n 20 /tmp/aorta_mpi_build.log
	fi
else
	echo "  skipped: mpirun or mpicc not found (scripts/deps.sh installs openmpi-bin and libopenmpi-dev)"
	skipped=$((skipped + 1))
fi

echo "== sizes (no file under src/ over 1,500 lines, no function over 120: scripts/check_sizes.sh)"
out=$(bash scripts/check_sizes.sh 2>&1); rc=$?
count "sizes" "$out
$([ $rc = 0 ] && echo "1 passed, 0 failed, 0 skipped" || echo "0 passed, 1 failed, 0 skipped")" $rc

echo "== dependency guard (every system header, linked library and tool the scripts run from a package deps.sh installs)"
out=$(bash tests/cli/deps_guard.sh 2>&1); rc=$?
count "cli:deps_guard" "$out" $rc

echo "== HIP build (the GPU code compiled for AMD gfx90a with hipcc; docs/rocm.md)"
if command -v hipcc >/dev/null 2>&1; then
	t0=$(date +%s)
	if make -s -j2 hip >/tmp/aorta_hip_build.log 2>&1; then
		out=$(bash tests/hip_check.sh 2>&1); rc=$?
		echo "  $out (build $(($(date +%s) - t0)) s)"
		if [ $rc -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); failures+=("hip check"); fi
	else
		failed=$((failed + 1)); failures+=("hip build"); tail -n 20 /tmp/aorta_hip_build.log
	fi
else
	echo "  skipped: hipcc not found (scripts/deps.sh installs hipcc, libamdhip64-dev, librocm-smi-dev)"
	skipped=$((skipped + 1))
fi

echo "== CLI golden tests"
out=$(bash tests/cli/run.sh 2>&1); rc=$?
count "cli" "$out" $rc
out=$(bash tests/cli/report.sh 2>&1); rc=$?
count "cli:report" "$out" $rc
for c in onetruth analysis_io report_upstream figure_names report_page summary sdma hwq tune_tp sweep mpi_analyze hostile optable whatif_fixtures whatif whatif_synthetic whatif_artifact p2p_groups whatif_diagnosis public_traces flightrec readme install build_config; do
	[ -f "tests/cli/$c.sh" ] || continue
	out=$(bash "tests/cli/$c.sh" 2>&1); rc=$?
	count "cli:$c" "$out" $rc
done

echo "== unit tests under ASan+UBSan"
if make -s SANITIZE=address,undefined all unit >/tmp/aorta_san_build.log 2>&1; then
	export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
	run_units build-san "asan:"
	out=$(AORTA_BIN=./build-san/aorta bash tests/cli/run.sh 2>&1); rc=$?
	count "asan:cli" "$out" $rc
	out=$(AORTA_BIN=./build-san/aorta bash tests/cli/report.sh 2>&1); rc=$?
	count "asan:cli:report" "$out" $rc
	for c in onetruth analysis_io report_upstream figure_names sdma hwq tune_tp sweep hostile whatif whatif_synthetic p2p_groups flightrec; do
		[ -f "tests/cli/$c.sh" ] || continue
		out=$(AORTA_BIN=./build-san/aorta bash "tests/cli/$c.sh" 2>&1); rc=$?
		count "asan:cli:$c" "$out" $rc
	done
	unset ASAN_OPTIONS UBSAN_OPTIONS
else
	failed=$((failed + 1)); failures+=("sanitizer build"); tail -n 20 /tmp/aorta_san_build.log
fi

echo "== fuzz targets (${FUZZ_SECONDS}s each)"
if [ "$FUZZ_SECONDS" -gt 0 ]; then
	if make -s fuzz >/tmp/aorta_fuzz_build.log 2>&1; then
		for t in build-fuzz/fuzz_*; do
			[ -x "$t" ] || continue
			name=$(basename "$t"); corpus="tests/fuzz/corpus_${name#fuzz_}"
			work=$(mktemp -d)
			[ -d "$corpus" ] && cp -r "$corpus"/. "$work"/ 2>/dev/null
			if (cd "$work" && "$OLDPWD/$t" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 \
				-timeout=10 . >fuzz.log 2>&1); then
				passed=$((passed + 1)); echo "  $name: ok"
			else
				failed=$((failed + 1)); failures+=("$name"); tail -n 30 "$work/fuzz.log"
				mkdir -p build-fuzz/crashes && cp "$work"/crash-* "$work"/timeout-* build-fuzz/crashes/ 2>/dev/null
			fi
			rm -rf "$work"
		done
	else
		failed=$((failed + 1)); failures+=("fuzz build"); tail -n 20 /tmp/aorta_fuzz_build.log
	fi
else
	skipped=$((skipped + 1))
fi

echo
for f in "${failures[@]+"${failures[@]}"}"; do echo "FAILED: $f"; done
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
