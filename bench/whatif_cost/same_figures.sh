#!/usr/bin/env bash
# same_figures.sh OLD_BIN [NEW_BIN] - a speed or memory change to the what-if
# must not change a figure: `aorta analyze --json` (the what-if block
# included) and its stderr, byte for byte, from both binaries on every
# what-if fixture (tests/data/whatif/*/{base,slowed}), every straggler
# fixture, the real traces of ../shared/data/h200x4, the op-table fixtures
# and a generated 64-rank set (bench/analyze_scale/gen.py, 10 steps, into
# bench/data/whatif_cost/, git-ignored).  NEW_BIN defaults to build/aorta.
# Prints each set that differs and "N sets, N differ"; exit 1 when any does.
#   THREADS=N   NEW_BIN runs with -j N (the what-if's replays run on the
#               analysis's threads: its figures must not depend on how many)
set -uo pipefail
cd "$(dirname "$0")/../.."
OLD=$1
NEW=${2:-build/aorta}
G=bench/data/whatif_cost/gen64s10
[ -f "$G/rank63.json.gz" ] || python3 bench/analyze_scale/gen.py "$G" 64 --steps 10 >/dev/null
sets=()
for c in tests/data/whatif/*/; do for run in base slowed; do sets+=("${c%/}/$run"); done; done
for c in tests/data/straggler/*/; do sets+=("${c%/}"); done
for c in ../shared/data/h200x4/*/; do [ -d "$c" ] && sets+=("${c%/}"); done
for f in tests/fixtures/optable/*.csv; do sets+=("$f"); done
sets+=("$G")
T=$(mktemp -d "${TMPDIR:-/tmp}/same_figures.XXXXXX")
trap 'rm -rf "$T"' EXIT
bad=0
for s in "${sets[@]}"; do
	for b in old new; do
		bin=$OLD; args=(); [ $b = new ] && bin=$NEW && args=(${THREADS:+-j "$THREADS"})
		"$bin" analyze -q "${args[@]}" --json "$T/$b.json" "$s" 2>"$T/$b.err"
		echo "exit $?" >>"$T/$b.err"
	done
	if ! cmp -s "$T/old.json" "$T/new.json" || ! cmp -s "$T/old.err" "$T/new.err"; then
		echo "differs: $s"
		bad=$((bad + 1))
	fi
done
echo "${#sets[@]} sets, $bad differ"
[ "$bad" = 0 ]
