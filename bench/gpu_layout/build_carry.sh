#!/usr/bin/env bash
# bench/gpu_layout/build_carry.sh [OLD_REV] - on the CPU machine, builds the
# two builds that bench/gpu_layout/run.sh compares on the device:
#   .carry/old/build.tgz  OLD_REV (default: the merge base of HEAD and main),
#                         built in a temporary git worktree
#   .carry/new/build.tgz  this working tree
# each holding aorta, libaorta-gpu.so and gpu-tests/test_* (stripped, then
# gzipped: about 13 MB a build), plus REV (the commit, "+dirty" for a tree
# with changes).  .carry/ is git-ignored; pass both folders as the device
# call's carry.  JOBS (default 2) for make.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
OLD=${1:-$(git merge-base HEAD main)}
JOBS=${JOBS:-2}

pack() { # build-dir out-dir rev
	local b=$1 o=$2 rev=$3 st
	rm -rf "$o"
	mkdir -p "$o/b/gpu-tests"
	strip -o "$o/b/aorta" "$b/aorta"
	strip -o "$o/b/libaorta-gpu.so" "$b/libaorta-gpu.so"
	for t in "$b"/gpu-tests/test_*; do
		strip -o "$o/b/gpu-tests/$(basename "$t")" "$t"
	done
	tar czf "$o/build.tgz" -C "$o" b
	rm -rf "$o/b"
	echo "$rev" >"$o/REV"
	st=$(du -k "$o/build.tgz" | cut -f1)
	echo "packed $o/build.tgz ($rev, $((st / 1024)) MB)"
}

echo "== new: this tree"
make -j"$JOBS" all gpu-tests >/dev/null
rev=$(git rev-parse --short HEAD)
git diff --quiet HEAD -- src tests Makefile || rev="$rev+dirty"
pack build .carry/new "$rev"

echo "== old: $OLD"
tmp=$(mktemp -d /tmp/aorta_carry_old.XXXXXX)
trap 'git worktree remove --force "$tmp/old" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
git worktree add --detach "$tmp/old" "$OLD" >/dev/null
make -C "$tmp/old" -j"$JOBS" all gpu-tests >/dev/null
pack "$tmp/old/build" .carry/old "$(git rev-parse --short "$OLD")"
du -sh .carry/old .carry/new
