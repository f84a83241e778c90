#!/usr/bin/env bash
# run.sh [RANKS [STEPS [REPEATS]]] - what the what-if replay adds to
# `aorta analyze`'s time (issue 25, item 9: at most 30 %), bench/RESULTS.md
# "What-if cost".
#
# A synthetic FSDP rank set (bench/analyze_scale/gen.py: 8 layers, one
# planted late rank, 8 ranks per node with a clock offset per node; default
# 1,024 ranks x 10 steps) is generated once into bench/data/whatif_cost/
# (git-ignored).  Then, in the same run, alternating, REPEATS times each:
#   with:    AORTA_BIN (default build/aorta: a build that has the what-if)
#   without: the same binary with --no-what-if when its help offers that
#            switch (the measure), else BASE_BIN (default: main's HEAD, built
#            here into bench/out/whatif_cost/main, the analysis before the
#            what-if)
#   base:    with --no-what-if measured, BASE_BIN too when it is given (a
#            build before the what-if existed, for the rows of RESULTS.md
#            against it): its medians and what the what-if adds over it
# Prints every run's wall time, CPU time (user + sys) and peak RSS (GNU
# time), the what-if phase (AORTA_TIMING=1: the pipeline's last stage), the
# medians and the added cost
# in percent (CPU time is the steadier figure on a shared machine), and whether the what-if's JSON exists in one and
# not the other.  The machine's load matters: run it on an idle machine.
#   MAIN_REPO=/work/main   where main's HEAD is taken from (git archive, built
#                          with MAKE_ARGS, e.g. CC="ccache gcc")
#   TIME_BIN=path          GNU time, where /usr/bin/time is not it
#   PREV_BIN=path          a third binary alternated in the same runs (e.g. the
#                          what-if before a change): its medians and RSS too
set -euo pipefail
cd "$(dirname "$0")/../.."
RANKS=${1:-1024}
STEPS=${2:-10}
REPEATS=${3:-5}
A=${AORTA_BIN:-./build/aorta}
TIME=${TIME_BIN:-/usr/bin/time} # GNU time (a copy where the machine has none)
D=bench/data/whatif_cost/r${RANKS}s${STEPS}
OUT=bench/out/whatif_cost
mkdir -p "$OUT"
[ -f "$D/rank$((RANKS - 1)).json.gz" ] || python3 bench/analyze_scale/gen.py "$D" "$RANKS" --steps "$STEPS"

R=
if "$A" analyze -h 2>&1 | grep -q -- '--no-what-if'; then
	B=$A
	BFLAGS=(--no-what-if)
	bwhat="$A --no-what-if"
	R=${BASE_BIN:-}
else
	B=${BASE_BIN:-}
	BFLAGS=()
	if [ -z "$B" ]; then
		MAIN_REPO=${MAIN_REPO:-/work/main}
		W=$OUT/main
		rev=$(git -C "$MAIN_REPO" rev-parse --short HEAD)
		if [ ! -x "$W/build/aorta" ] || [ "$(cat "$W/REV" 2>/dev/null)" != "$rev" ]; then
			rm -rf "$W"
			mkdir -p "$W"
			git -C "$MAIN_REPO" archive HEAD | tar -x -C "$W"
			echo "$rev" >"$W/REV"
			# shellcheck disable=SC2086
			make -C "$W" -s -j2 ${MAKE_ARGS:-} build/aorta >/dev/null
		fi
		B=$W/build/aorta
	fi
	bwhat="$B (main $(cat "$(dirname "$B")/../REV" 2>/dev/null || echo '?'))"
fi
arev=$(git -C "$(dirname "$A")/.." log -1 --format='%h %s' 2>/dev/null | cut -c1-60 || echo '?')
echo "with what-if:    $A ($arev)"
echo "without what-if: $bwhat"
echo "input: $D ($RANKS ranks x $STEPS steps)"
P=${PREV_BIN:-}
[ -z "$P" ] || echo "previous:        $P"
[ -z "$R" ] || echo "base:            $R (no what-if; for reference)"
printf '%-8s %-8s %10s %10s %14s\n' run what "wall (s)" "CPU (s)" "peak RSS (MB)"
with=() without=() cwith=() cwithout=() prev=() cprev=() base=() cbase=()
for i in $(seq 1 "$REPEATS"); do
	AORTA_TIMING=1 "$TIME" -f "%e %U %S %M" -o "$OUT/t" "$A" analyze -q --json "$OUT/with.json" "$D" 2>"$OUT/with.log"
	read -r w u sy kb < "$OUT/t"
	c=$(awk -v a="$u" -v b="$sy" 'BEGIN {print a + b}')
	with+=("$w") cwith+=("$c")
	printf '%-8s %-8s %10s %10s %14d   %s\n' "$i" with "$w" "$c" $((kb / 1024)) "$(sed -n 's/.*timing: what-if of .*: \([0-9.]*\) ms/what-if phase \1 ms/p' "$OUT/with.log")"
	AORTA_TIMING=1 "$TIME" -f "%e %U %S %M" -o "$OUT/t" "$B" analyze -q "${BFLAGS[@]}" --json "$OUT/without.json" "$D" 2>"$OUT/without.log"
	read -r w u sy kb < "$OUT/t"
	c=$(awk -v a="$u" -v b="$sy" 'BEGIN {print a + b}')
	without+=("$w") cwithout+=("$c")
	printf '%-8s %-8s %10s %10s %14d\n' "$i" without "$w" "$c" $((kb / 1024))
	if [ -n "$R" ]; then
		"$TIME" -f "%e %U %S %M" -o "$OUT/t" "$R" analyze -q --json "$OUT/base.json" "$D" 2>"$OUT/base.log"
		read -r w u sy kb < "$OUT/t"
		c=$(awk -v a="$u" -v b="$sy" 'BEGIN {print a + b}')
		base+=("$w") cbase+=("$c")
		printf '%-8s %-8s %10s %10s %14d\n' "$i" base "$w" "$c" $((kb / 1024))
	fi
	[ -n "$P" ] || continue
	AORTA_TIMING=1 "$TIME" -f "%e %U %S %M" -o "$OUT/t" "$P" analyze -q --json "$OUT/prev.json" "$D" 2>"$OUT/prev.log"
	read -r w u sy kb < "$OUT/t"
	c=$(awk -v a="$u" -v b="$sy" 'BEGIN {print a + b}')
	prev+=("$w") cprev+=("$c")
	printf '%-8s %-8s %10s %10s %14d   %s\n' "$i" previous "$w" "$c" $((kb / 1024)) "$(sed -n 's/.*timing: what-if of .*: \([0-9.]*\) ms/what-if phase \1 ms/p' "$OUT/prev.log")"
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
mw=$(median "${with[@]}")
mo=$(median "${without[@]}")
echo "median wall: with $mw s, without $mo s; the what-if adds $(awk -v a="$mw" -v b="$mo" 'BEGIN {printf "%.1f", (a - b) / b * 100}') % (target <= 30 %)"
cw=$(median "${cwith[@]}")
co=$(median "${cwithout[@]}")
echo "median CPU (user + sys): with $cw s, without $co s; the what-if adds $(awk -v a="$cw" -v b="$co" 'BEGIN {printf "%.1f", (a - b) / b * 100}') %"
if [ -n "$R" ]; then
	mr=$(median "${base[@]}")
	cr=$(median "${cbase[@]}")
	echo "base (reference): median wall $mr s, the what-if adds $(awk -v a="$mw" -v b="$mr" 'BEGIN {printf "%.1f", (a - b) / b * 100}') % over it; median CPU $cr s, adds $(awk -v a="$cw" -v b="$cr" 'BEGIN {printf "%.1f", (a - b) / b * 100}') %"
fi
if [ -n "$P" ]; then
	mp=$(median "${prev[@]}")
	cp=$(median "${cprev[@]}")
	echo "previous: median wall $mp s (adds $(awk -v a="$mp" -v b="$mo" 'BEGIN {printf "%.1f", (a - b) / b * 100}') %), median CPU $cp s (adds $(awk -v a="$cp" -v b="$co" 'BEGIN {printf "%.1f", (a - b) / b * 100}') %)"
	cmp -s "$OUT/with.json" "$OUT/prev.json" && echo "with and previous: the same JSON" || echo "with and previous: the JSON differs"
fi
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
echo "what_if in the JSON: with $(jq -r '.across_ranks.what_if | if .ok then "yes (slowdown \(.slowdown))" else "no" end' "$OUT/with.json"), without $(jq -r '.across_ranks.what_if | if .ok then "yes" elif . then "no (\(.reason))" else "no" end' "$OUT/without.json")"
