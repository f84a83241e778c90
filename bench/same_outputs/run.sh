#!/usr/bin/env bash
# run.sh [--check BASEDIR] [BIN] - every deterministic output of analyze,
# compare and report on every bundled set, recorded so a structural change
# can be shown to change none of them, byte for byte.
#
#   run.sh BIN OUTDIR            record BIN's outputs into OUTDIR
#   run.sh --check BASEDIR [BIN] record BIN's (default build/aorta) into a
#                                temporary folder and compare with BASEDIR:
#                                prints each output that differs and
#                                "N outputs, N differ"; exit 1 when any does
#
# The sets: every folder of trace files and every trace file under data/,
# tests/data, tests/fixtures (optable, tp) and ../shared/data (or
# AORTA_SHARED_DATA; reference figures and logs aside), each read as a set
# of its own.  For each:
#   analyze --per-step --json --csv --trace-out: the terminal summary
#     (stdout), stderr (the progress lines "read N/M", whose order is the
#     threads', left out) and exit code, the analysis JSON, the five CSV
#     files and the Chrome trace;
#   analyze of that JSON read back (a saved analysis): summary, JSON, CSV;
#   analyze --no-what-if --json, for the folders (several ranks).
# Then compare (stdout, --json) and report (every file of the folder:
# summary.json, index.html, the charts) on pairs of runs: each what-if
# fixture's base and slowed runs, the straggler cases against the one
# without, the report fixtures, the before/after and control/test pairs of
# the shared data, and a saved analysis against its traces.
#
# BIN runs from this repository's root, so input paths print the same; its
# plug-ins (libaorta-plot.so) are found beside it.  Outputs are written under
# one fixed scratch folder (bench/out/same_outputs/work), so the paths they
# print are the same in every run.  Files over 1 MiB are kept as their
# SHA-256 only.  BIN's own version must be the same as the baseline's.
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$(pwd)
SH=${AORTA_SHARED_DATA:-../shared/data}
check=
if [ "${1:-}" = --check ]; then
	check=$2
	BIN=${3:-build/aorta}
	OUT=$(mktemp -d "${TMPDIR:-/tmp}/same_outputs.XXXXXX")
	trap 'rm -rf "$OUT"' EXIT
else
	BIN=${1:?usage: run.sh BIN OUTDIR | run.sh --check BASEDIR [BIN]}
	OUT=${2:?usage: run.sh BIN OUTDIR}
	mkdir -p "$OUT"
fi
case $BIN in /*) ;; *) BIN=$ROOT/$BIN ;; esac
W=bench/out/same_outputs/work
export LC_ALL=C

# ---- the sets --------------------------------------------------------------
is_trace() { # a file aorta may read (anything but notes, logs and licences)
	case $1 in *.md | *.txt | *.log | *NOTICE* | *LICENSE* | *.py) return 1 ;; esac
	return 0
}
sets=()
roots=(data tests/data tests/fixtures/optable tests/fixtures/tp "$SH")
for r in "${roots[@]}"; do
	[ -d "$r" ] || continue
	while IFS= read -r d; do
		case $d in "$SH"/reference* | tests/data/config*) continue ;; esac
		n=0
		while IFS= read -r f; do
			is_trace "$f" || continue
			sets+=("$f")
			n=$((n + 1))
		done < <(find "$d" -maxdepth 1 -type f | sort)
		[ "$n" -ge 2 ] && sets+=("$d/")
	done < <(find "$r" -type d | sort)
done
# the folders of runs (ranks in sub-folders) read whole
for d in data/h200x4/aorta_ddp "$SH/h200x4/aorta_ddp" "$SH/h200x4/aorta_ddp/torch_profiler"; do
	[ -d "$d" ] && sets+=("$d/")
done

key() { printf '%s' "$1" | sed 's|^\.\./||; s|/$|_dir|; s|[^A-Za-z0-9._-]|_|g'; }

# outputs of one command into $OUT/KEY/NAME.*; stderr without the progress lines
run() { # name, command...
	local name=$1
	shift
	"$@" >"$OUT/$name.out" 2>"$W/err"
	echo "exit $?" >>"$OUT/$name.out"
	grep -Ev '^aorta: read [0-9]+/[0-9]+: ' "$W/err" >"$OUT/$name.err"
}
keep() { # a written file or folder into $OUT/DEST (files over 1 MiB as their hash)
	local src=$1 dst=$2
	[ -e "$src" ] || return 0
	if [ -d "$src" ]; then
		mkdir -p "$OUT/$dst"
		for f in "$src"/*; do [ -e "$f" ] && keep "$f" "$dst/$(basename "$f")"; done
	elif [ "$(stat -c %s "$src")" -gt 1048576 ]; then
		echo "sha256 $(sha256sum <"$src" | cut -d' ' -f1) bytes $(stat -c %s "$src")" >"$OUT/$dst.sha256"
	else
		cp "$src" "$OUT/$dst"
	fi
}

mkdir -p "$W"
total=${#sets[@]}
echo "same outputs: $total sets, $BIN" >&2
i=0
for s in "${sets[@]}"; do
	i=$((i + 1))
	k=analyze/$(key "$s")
	mkdir -p "$OUT/$k"
	rm -rf "${W:?}"/*
	run "$k/analyze" "$BIN" analyze --per-step --json "$W/a.json" --csv "$W/csv" --trace-out "$W/trace.json" "$s"
	keep "$W/a.json" "$k/analysis.json"
	keep "$W/csv" "$k/csv"
	keep "$W/trace.json" "$k/trace.json"
	if [ -f "$W/a.json" ]; then
		run "$k/readback" "$BIN" analyze --per-step --json "$W/b.json" --csv "$W/csv2" "$W/a.json"
		keep "$W/b.json" "$k/readback.json"
		keep "$W/csv2" "$k/readback_csv"
		cp "$W/a.json" "$OUT/$k/.saved.json" # for the pairs below
	fi
	case $s in */)
		run "$k/no_what_if" "$BIN" analyze -q --no-what-if --json "$W/n.json" "$s"
		keep "$W/n.json" "$k/no_what_if.json" ;;
	esac
	[ $((i % 20)) = 0 ] && echo "  $i/$total" >&2
done

# ---- pairs: compare and report ---------------------------------------------
pairs=()
for c in tests/data/whatif/*/; do pairs+=("${c}base/" "${c}slowed/"); done
for c in tests/data/straggler/*/; do
	[ "$c" = tests/data/straggler/ddp_none/ ] || pairs+=(tests/data/straggler/ddp_none/ "$c")
done
pairs+=(tests/data/report/base/ tests/data/report/cand/)
pairs+=(data/h200x4/aorta_ddp/ data/h200x4/fsdp2_bs8/)
for p in "nsys/nsys-ai/mfu_2gpu_before.sqlite nsys/nsys-ai/mfu_2gpu_after.sqlite" \
	"kineto/hta/trace_diff/control/ kineto/hta/trace_diff/test/" \
	"kineto/hta/trace_compare/base/ kineto/hta/trace_compare/test/" \
	"kineto/h200_torch2.11/ddp_4rank_12steps/ kineto/h200_torch2.11/fsdp2_4rank_6steps/" \
	"whatif-artifact/AR/ whatif-artifact/ST/" \
	"h200x4/aorta_ddp/ h200x4/fsdp2_bs8/"; do
	set -- $p
	[ -e "$SH/$1" ] && [ -e "$SH/$2" ] && pairs+=("$SH/$1" "$SH/$2")
done
# a saved analysis against its own traces
for s in tests/data/whatif/ddp_gpu_fwd_r1/base/ tests/data/straggler/ddp_const_r1/ "$SH/h200x4/fsdp2_bs8/"; do
	j=$OUT/analyze/$(key "$s")/.saved.json
	[ -f "$j" ] && cp "$j" "$W/../saved_$(key "$s").json" && pairs+=("$W/../saved_$(key "$s").json" "$s")
done
np=$((${#pairs[@]} / 2))
echo "  compare and report: $np pairs" >&2
for ((p = 0; p < np; p++)); do
	x=${pairs[$((2 * p))]} y=${pairs[$((2 * p + 1))]}
	k=pairs/$(key "$x")__$(key "$y")
	mkdir -p "$OUT/$k"
	rm -rf "${W:?}"/*
	run "$k/compare" "$BIN" compare --per-rank --json "$W/c.json" "$x" "$y"
	keep "$W/c.json" "$k/compare.json"
	run "$k/report" "$BIN" report --log-dir "$x" --label base --log-dir "$y" --label other \
		--reference base --candidate other --output "$W/report"
	keep "$W/report" "$k/report"
done
find "$OUT" -name .saved.json -delete
rm -f bench/out/same_outputs/saved_*.json

if [ -n "$check" ]; then
	bad=0 n=0
	while IFS= read -r f; do
		n=$((n + 1))
		if [ ! -e "$OUT/$f" ]; then
			echo "missing: $f"
			bad=$((bad + 1))
		elif ! cmp -s "$check/$f" "$OUT/$f"; then
			echo "differs: $f"
			bad=$((bad + 1))
		fi
	done < <(cd "$check" && find . -type f | sed 's|^\./||' | sort)
	while IFS= read -r f; do
		[ -e "$check/$f" ] || { echo "new: $f"; bad=$((bad + 1)); }
	done < <(cd "$OUT" && find . -type f | sed 's|^\./||' | sort)
	echo "$n outputs, $bad differ"
	[ "$bad" = 0 ] || { [ -n "${KEEP:-}" ] && cp -r "$OUT" "$KEEP" && echo "new outputs kept in $KEEP"; exit 1; }
fi
