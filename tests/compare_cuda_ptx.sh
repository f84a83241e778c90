#!/usr/bin/env bash
# compare_cuda_ptx.sh - is the CUDA device code of the working tree the
# same as at a git revision?  For changes meant to leave CUDA untouched
# (portable spellings for the HIP build, docs/rocm.md).
#
#   tests/compare_cuda_ptx.sh [REV]        (default HEAD)
#
# Compiles every src/**/*.cu to PTX with the Makefile's nvcc flags
# (sm_90), once from REV's src/ and once from the working tree, and diffs
# them.  Prints one line per file (same / differs / only in one) and
# exits 1 when any file differs; needs nvcc, no GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
[ -x "$NVCC" ] || { echo "compare_cuda_ptx: nvcc not found" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/old"
git archive "$rev" src | tar -x -C "$tmp/old" || { echo "compare_cuda_ptx: no revision $rev" >&2; exit 2; }
flags=(-O2 -std=c++17 -Isrc -arch=sm_90 -DAORTA_GPU=1 -ptx)
rc=0
for f in $( (cd "$tmp/old" && find src -name '*.cu'; find src -name '*.cu') | sort -u); do
	if [ ! -f "$f" ] || [ ! -f "$tmp/old/$f" ]; then
		echo "$f: only in $([ -f "$f" ] && echo the working tree || echo "$rev")"
		continue
	fi
	p=${f//\//_}
	if ! (cd "$tmp/old" && "$NVCC" "${flags[@]}" -o "$tmp/$p.old" "$f") 2> "$tmp/err" ||
	   ! "$NVCC" "${flags[@]}" -o "$tmp/$p.new" "$f" 2>> "$tmp/err"; then
		echo "$f: does not compile: $(head -3 "$tmp/err")"
		rc=1
		continue
	fi
	if cmp -s "$tmp/$p.old" "$tmp/$p.new"; then
		echo "$f: same PTX"
	else
		echo "$f: PTX differs ($(diff "$tmp/$p.old" "$tmp/$p.new" | grep -c '^[<>]') lines)"
		rc=1
	fi
done
exit $rc
