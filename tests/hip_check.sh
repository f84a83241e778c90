#!/usr/bin/env bash
# hip_check.sh - verifies the HIP build (make hip, into build-hip/) and that
# docs/rocm.md tells the truth about it.
#
#   bash tests/hip_check.sh [BUILD_DIR]     (default build-hip; run after make hip)
#
# 1. Every file the Makefile compiles for HIP has its object, and the
#    compiler's dependency list (.d) names no CUDA-side header (cuda*,
#    cublas*, nccl*, cupti*, nvtx*, anything under /usr/local/cuda or
#    /usr/local/include): a machine with the CUDA toolkit installed cannot
#    make a CUDA header stand in for a missing HIP one unnoticed.
# 2. Every kernel object carries an AMD GPU code object for each HIP_ARCH
#    (its .hip_fatbin bundle lists hipv4-amdgcn-amd-amdhsa--<arch>), and that
#    code object defines kernels (symbols <name>.kd, counted).
# 3. docs/rocm.md lists each compiled file under "## Compiled for ROCm" and
#    each skipped one under "## Not compiled for ROCm", and no other file.
# Exit 0 when all hold, 1 otherwise (each failure named).
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-hip}
fail=0
bad() { echo "hip_check: $*" >&2; fail=1; }

files=$(make -s --no-print-directory print-hip-files HIP_BUILD="$B") || { bad "make print-hip-files failed"; exit 1; }
arch=$(sed -n 's/^arch //p' <<< "$files")
c=$(sed -n 's/^c //p' <<< "$files")
cu=$(sed -n 's/^cu //p' <<< "$files")
skip=$(sed -n 's/^skip //p' <<< "$files")

BUNDLER=$(command -v clang-offload-bundler-15 || command -v clang-offload-bundler || true)
READELF=$(command -v llvm-readelf-15 || command -v llvm-readelf || true)
[ -n "$BUNDLER" ] || bad "clang-offload-bundler not found (package clang-15, a dependency of hipcc)"
[ -n "$READELF" ] || bad "llvm-readelf not found (package llvm-15, a dependency of hipcc)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

nobj=0 nkern=0
for src in $c $cu; do
	o="$B/obj/${src%.*}.o"
	d="$B/obj/${src%.*}.d"
	if [ ! -s "$o" ] || [ ! -s "$d" ]; then
		bad "$src: no object $o (run make hip first)"
		continue
	fi
	nobj=$((nobj + 1))
	leak=$(tr ' \\' '\n\n' < "$d" | grep -E '^/' | grep -E '/usr/local/(cuda|include)|/(cuda|cublas|nccl|cupti|nvtx|nvToolsExt)[^/]*$' | head -1)
	[ -z "$leak" ] || bad "$src: the HIP build used a CUDA-side header: $leak"
	case "$src" in *.cu) ;; *) continue ;; esac
	[ -n "$BUNDLER" ] && [ -n "$READELF" ] || continue
	if ! objcopy -O binary --only-section=.hip_fatbin "$o" "$tmp/fb" 2>/dev/null || [ ! -s "$tmp/fb" ]; then
		bad "$src: $o has no .hip_fatbin section (no device code)"
		continue
	fi
	targets=$("$BUNDLER" --list --type=o --input="$tmp/fb" 2>&1)
	for a in $arch; do
		t="hipv4-amdgcn-amd-amdhsa--$a"
		if ! grep -qx "$t" <<< "$targets"; then
			bad "$src: no $a code object in $o (bundle holds: $(tr '\n' ' ' <<< "$targets"))"
			continue
		fi
		"$BUNDLER" --unbundle --type=o --input="$tmp/fb" --targets="$t" --output="$tmp/co" 2>/dev/null
		k=$("$READELF" -s "$tmp/co" 2>/dev/null | grep -c '\.kd$')
		[ "$k" -gt 0 ] || bad "$src: the $a code object defines no kernel"
		nkern=$((nkern + k))
	done
done

# docs/rocm.md: the two lists, as `path` in the first column of table rows
doc=docs/rocm.md
section() { # heading -> paths listed under it
	awk -v h="$1" '/^## /{on = ($0 == h)} on && /^\| *`src\//' "$doc" | sed 's/^| *`\([^`]*\)`.*/\1/' | sort -u
}
if [ ! -f "$doc" ]; then
	bad "$doc missing"
else
	section "## Compiled for ROCm" > "$tmp/doc_c"
	section "## Not compiled for ROCm" > "$tmp/doc_s"
	tr ' ' '\n' <<< "$c $cu" | grep . | sort -u > "$tmp/mk_c"
	tr ' ' '\n' <<< "$skip" | grep . | sort -u > "$tmp/mk_s"
	for f in $(comm -23 "$tmp/mk_c" "$tmp/doc_c"); do bad "$f is compiled for HIP but not listed under 'Compiled for ROCm' in $doc"; done
	for f in $(comm -13 "$tmp/mk_c" "$tmp/doc_c"); do bad "$doc lists $f as compiled, but the Makefile does not compile it for HIP"; done
	for f in $(comm -23 "$tmp/mk_s" "$tmp/doc_s"); do bad "$f is not compiled for HIP but missing under 'Not compiled for ROCm' in $doc"; done
	for f in $(comm -13 "$tmp/mk_s" "$tmp/doc_s"); do bad "$doc lists $f as not compiled, but the Makefile does not skip it"; done
fi

if [ $fail = 0 ]; then
	echo "hip_check: ok: $nobj files compiled for $arch ($(wc -w <<< "$cu") kernel files, $nkern kernels in their code objects), no CUDA header used, docs/rocm.md matches ($(wc -w <<< "$skip") files not compiled)"
fi
exit $fail
