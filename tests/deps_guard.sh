#!/usr/bin/env bash
# deps_guard.sh - every system header the C sources include and every
# library the link lines name must come from a package that
# scripts/deps.sh installs (or from libc / the compiler / the CUDA toolkit).
#
#   bash tests/deps_guard.sh [--pkgs FILE] [--src FILE]...
#
# A machine set up by hand cannot fool it: it asks the compiler which file
# each `#include <...>` resolves to (gcc -H on every C file under src/,
# tests/ and bench/, with the build's include paths and every optional
# feature defined; the HIP build's files once more with -DAORTA_HIP), asks
# dpkg which package owns that file, and fails
# naming the header, the source that includes it and the package when the
# package is not in the list.  Headers that other system headers include
# (cairo.h's freetype) are the listed package's business, not ours.
# Libraries: each -lNAME of the link lines (make print-link-libs) is
# resolved the way the linker would (static or shared per -Bstatic) and
# checked the same way.
#   --pkgs FILE   the package list to check against (default: deps.sh --list)
#   --src FILE    check this C file too (the guard's own test uses it)
#   --script FILE check the commands of this shell script too
# Tools: every command that the tests, scripts/, .ci/ and the Makefile's
# recipes run and every Python module they import must come from a listed
# package (or one it depends on), the base system a set-up starts from, the
# CUDA toolkit, or be optional with a reason and checked for by its caller
# (tests/deps_tools.py, which parses the scripts with shfmt).
# Exit 0 when every dependency is covered, 1 otherwise (each one named).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

pkgs_file=""
extra=() extra_sh=()
while [ $# -gt 0 ]; do
	case "$1" in
	--pkgs) pkgs_file=$2; shift 2 ;;
	--src) extra+=("$2"); shift 2 ;;
	--script) extra_sh+=("$2"); shift 2 ;;
	*) echo "deps_guard: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
if ! command -v dpkg >/dev/null 2>&1; then
	echo "deps_guard: skipped: no dpkg (not a Debian/Ubuntu machine)"
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "$pkgs_file" ]; then
	grep -v '^\s*$' "$pkgs_file" > "$tmp/pkgs"
else
	bash scripts/deps.sh --list > "$tmp/pkgs"
fi

CUDA_HOME=${CUDA_HOME:-$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")")}
have_cuda=0
[ -f "$CUDA_HOME/include/cuda_runtime_api.h" ] && have_cuda=1
cuda_skipped=()
is_cuda_header() {
	case "$1" in
	cuda*|cublas*|cufft*|curand*|cusparse*|cusolver*|cupti*|nccl*|nvml*|nvtx*|nvToolsExt*|nvrtc*|crt/*|cub/*|thrust/*|\
	driver_types.h|vector_types.h|library_types.h|cooperative_groups*|generated_cuda*|nvperf*) return 0 ;;
	esac
	return 1
}
flags=(-std=c11 -D_GNU_SOURCE -Isrc -Itests/unit -Itests/gpu -Itests/fuzz -DAORTA_GPU=1 -DAORTA_MPI=1)
[ -d "$CUDA_HOME/include" ] && flags+=(-I"$CUDA_HOME/include")
# shellcheck disable=SC2207
command -v mpicc >/dev/null 2>&1 && flags+=($(mpicc --showme:compile 2>/dev/null))
# shellcheck disable=SC2207
flags+=($(pkg-config --cflags cairo fontconfig 2>/dev/null))

# Allowed without listing: libc, the kernel headers, the compiler's own
# headers and runtime, and the CUDA toolkit (preinstalled, never apt-get'ed).
base_pkg() {
	case "$1" in
	libc6-dev|libc6|linux-libc-dev|libgcc-*|gcc-*|cpp-*|libstdc++*|libclang-common-*|libgomp*) return 0 ;;
	cuda-*|libcublas*|libnccl*|libcu*|libnv*|libnpp*) return 0 ;;
	esac
	return 1
}
in_cuda() {
	case "$1" in "$CUDA_HOME"/*|/usr/local/cuda*) return 0 ;; esac
	return 1
}
# the package owning a file, tried as named then through its links
owner() {
	local p
	for f in "$(realpath -s "$1")" "$(readlink -f "$1")"; do
		p=$(dpkg -S "$f" 2>/dev/null | grep -v '^diversion' | head -1 | sed 's/: .*//; s/:[a-z0-9_]*$//; s/, .*//')
		[ -n "$p" ] && { echo "$p"; return; }
	done
}

fail=0
report() { echo "deps_guard: $*" >&2; fail=1; }

check_file() { # path what-includes-or-links-it label
	local f=$1 who=$2 label=$3 pkg
	case "$f" in "$ROOT"/*) return ;; esac
	if in_cuda "$f"; then return; fi
	pkg=$(owner "$f")
	if [ -z "$pkg" ]; then
		report "$label ($f, used by $who) belongs to no package: installed by hand? add the package that provides it to scripts/deps.sh"
		return
	fi
	base_pkg "$pkg" && return
	grep -qx "$pkg" "$tmp/pkgs" && return
	report "$label comes from package $pkg ($f, used by $who), which scripts/deps.sh does not install"
}

# ---- headers --------------------------------------------------------------
mapfile -t srcs < <( (git ls-files 'src/*.c' 'tests/*.c' 'bench/*.c' 2>/dev/null || \
	find src tests bench -name '*.c') | sort -u)
srcs+=("${extra[@]}")
# the HIP build's C files (make print-hip-files) once more as that build
# sees them: -DAORTA_HIP selects the HIP runtime and ROCm SMI headers
mapfile -t hipsrcs < <(make -s --no-print-directory print-hip-files 2>/dev/null | sed -n 's/^c //p' | tr ' ' '\n' | grep .)
: > "$tmp/direct"
for entry in "${srcs[@]/#/-:}" "${hipsrcs[@]/#/hip:}"; do
	s=${entry#*:}
	xf=()
	[ "${entry%%:*}" = hip ] && xf=(-D__HIP_PLATFORM_AMD__ -DAORTA_HIP)
	[ -f "$s" ] || continue
	if ! gcc "${flags[@]}" "${xf[@]}" -H -E -o /dev/null "$s" 2> "$tmp/h"; then
		miss=$(grep -oE "fatal error: [^:]+: No such file" "$tmp/h" | head -1 | sed 's/fatal error: //; s/: No such file//')
		# a CUDA toolkit header where there is no toolkit: the toolkit is
		# optional (never apt-get'ed), so such a file is not checked here
		if [ -n "$miss" ] && [ "$have_cuda" = 0 ] && is_cuda_header "$miss"; then
			cuda_skipped+=("$s")
			continue
		fi
		if [ -n "$miss" ]; then
			report "<$miss> (included by $s${xf[*]:+ with ${xf[*]}}) is not installed: scripts/deps.sh must install the package that provides it"
		else
			report "cannot preprocess $s: $(head -3 "$tmp/h" | tr '\n' ' ')"
		fi
		continue
	fi
	# gcc -H: one line per opened header, depth in leading dots; a header is
	# a direct include of ours when its parent is a file of the repository
	awk -v src="$s" -v root="$ROOT" '
		/^\.+ / {
			d = index($0, " ") - 1; p = substr($0, d + 2)
			stack[d] = p
			par = d == 1 ? src : stack[d - 1]
			ours = d == 1 || par !~ /^\// || index(par, root "/") == 1
			if (ours && p ~ /^\// && index(p, root "/") != 1) print p "\t" (d == 1 ? src : par)
		}' "$tmp/h" >> "$tmp/direct"
done
sort -u -t "$(printf '\t')" -k1,1 "$tmp/direct" > "$tmp/direct.u"
while IFS=$'\t' read -r hdr who; do
	name=$hdr
	for d in /usr/include/x86_64-linux-gnu /usr/include /usr/lib/x86_64-linux-gnu/openmpi/include "$CUDA_HOME/include"; do
		case "$hdr" in "$d"/*) name=${hdr#"$d"/}; break ;; esac
	done
	check_file "$hdr" "$who" "<$name>"
done < "$tmp/direct.u"
nh=$(wc -l < "$tmp/direct.u")

# ---- libraries ------------------------------------------------------------
links=$(make -s --no-print-directory print-link-libs 2>/dev/null)
ldirs=()
static=0
nl=0
for w in $links; do
	case "$w" in
	-L*) ldirs+=("${w#-L}") ;;
	-Wl,-Bstatic) static=1 ;;
	-Wl,-Bdynamic) static=0 ;;
	-l*)
		lib=${w#-l}
		exts="so a"; [ $static = 1 ] && exts=a
		f=""
		for ext in $exts; do
			for d in "${ldirs[@]}"; do
				[ -e "$d/lib$lib.$ext" ] && { f="$d/lib$lib.$ext"; break 2; }
			done
			f=$(gcc -print-file-name="lib$lib.$ext")
			case "$f" in /*) break ;; esac
		done
		nl=$((nl + 1))
		case "$f" in
		/*) check_file "$f" "the link line" "-l$lib" ;;
		*) report "-l$lib: lib$lib.so/.a is not installed: scripts/deps.sh must install the package that provides it" ;;
		esac ;;
	esac
done

# ---- tools -----------------------------------------------------------------
# every command the tests, scripts, CI entry and Makefile run, and every
# Python module they import (tests/deps_tools.py: shfmt parses the scripts)
mapfile -t tfiles < <( (git ls-files 'tests/*.sh' 'scripts/*.sh' '.ci/*' 'tests/*.c' Makefile 2>/dev/null ||
	find tests scripts .ci -name '*.sh' -o -name '*.c' -o -name run; echo Makefile) | sort -u)
tfiles+=("${extra_sh[@]}")
nt=0 nm=0
if ! command -v shfmt >/dev/null 2>&1 || ! command -v python3 >/dev/null 2>&1; then
	report "shfmt and python3 are needed to check the tools the scripts run: scripts/deps.sh installs them"
else
	python3 tests/deps_tools.py --check "$tmp/pkgs" "${tfiles[@]}" > "$tmp/tools"
	while IFS=$'\t' read -r a b c _; do
		if [ "$a" = tools ]; then nt=$b nm=$c; else report "${a#deps_guard: }"; fi
	done < "$tmp/tools"
fi

if [ ${#cuda_skipped[@]} -gt 0 ]; then
	echo "deps_guard: note: no CUDA toolkit ($CUDA_HOME/include/cuda_runtime_api.h absent): ${#cuda_skipped[@]} C files that include its headers not checked: ${cuda_skipped[*]}"
fi
if [ $fail = 0 ]; then
	echo "deps_guard: ok: $nh system headers of ${#srcs[@]} C files (${#hipsrcs[@]} of them also as the HIP build), $nl linked libraries, and $nt commands and $nm Python modules that ${#tfiles[@]} scripts and tests run come from scripts/deps.sh's packages, the base system, libc, the compiler or the CUDA toolkit"
fi
exit $fail
