#!/usr/bin/env bash
# make_deb.sh - a Debian package of the build: `make deb` runs it.
#   bash scripts/make_deb.sh [BUILD]      (BUILD: the build folder, default build)
# Stages `make install PREFIX=/usr DESTDIR=BUILD/deb/root`, writes
# DEBIAN/control and builds BUILD/aorta_VERSION_ARCH.deb with dpkg-deb.
# Dependencies are computed from the ELF files, not typed: the shared
# libraries each one needs (objdump -p, NEEDED), each resolved to the
# package that owns it (dpkg -S) at the version installed here (>=):
#   Depends     what bin/aorta needs (libc, zlib): analysing traces needs
#               nothing else
#   Recommends  what the plot plug-in needs (cairo, fontconfig: the charts of
#               aorta report), libisal2 (loaded at run time when present:
#               faster gzip reading) and bash-completion (which loads the
#               completion the package installs)
#   Suggests    what the MPI plug-in needs (Open MPI: mpirun aorta analyze)
#               and openmpi-bin
# Libraries no package owns (the CUDA toolkit's, for the GPU plug-in) are
# not dependencies: the package description says the GPU plug-in needs the
# CUDA runtime, cuBLAS and NCCL.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
[ -x "$B/aorta" ] || { echo "make_deb: no $B/aorta: run make first" >&2; exit 1; }
for t in dpkg-deb dpkg-query objdump; do
	command -v "$t" >/dev/null 2>&1 || { echo "make_deb: '$t' not found (dpkg, binutils)" >&2; exit 1; }
done
ver=$("$B/aorta" --version | awk '{ print $2 }')
rev=$(git rev-parse --short=10 HEAD 2>/dev/null || echo 0)
version="$ver+git$(git log -1 --format=%cd --date=format:%Y%m%d 2>/dev/null || echo 0).$rev"
arch=$(dpkg --print-architecture)
stage=$B/deb/root
rm -rf "$B/deb"
make -s --no-print-directory install PREFIX=/usr DESTDIR="$PWD/$stage" >/dev/null
# make install's record of the folders it made is for make uninstall; dpkg tracks the package's own
rm -f "$stage/usr/share/aorta/made-dirs"
# Debian keeps man pages compressed and the copyright beside the docs
gzip -9n "$stage"/usr/share/man/man1/*.1
cat > "$stage/usr/share/doc/aorta/copyright" <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: aorta
Comment: built from commit $(git rev-parse HEAD 2>/dev/null || echo unknown) of the aorta repository
EOF

# the package of a shared library (a soname the dynamic linker resolves)
lib_pkg() {
	local so=$1 f p
	f=$(ldconfig -p 2>/dev/null | awk -v s="$so" '$1 == s && /x86-64|x86_64|64bit/ { print $NF; exit }')
	[ -n "$f" ] || f=$(gcc -print-file-name="$so" 2>/dev/null)
	case "$f" in /*) ;; *) return 0 ;; esac
	for g in "$f" "$(readlink -f "$f")"; do
		p=$(dpkg -S "$g" 2>/dev/null | grep -v '^diversion' | head -1 | sed 's/: .*//; s/:[a-z0-9_]*$//; s/, .*//')
		[ -z "$p" ] && case "$g" in /usr/*) p=$(dpkg -S "${g#/usr}" 2>/dev/null | head -1 | sed 's/: .*//; s/:[a-z0-9_]*$//; s/, .*//') ;; esac
		[ -n "$p" ] && { echo "$p"; return 0; }
	done
}
deps_of() { # ELF files -> "pkg (>= version)" lines, sorted, unique
	local f so p v
	for f in "$@"; do
		[ -f "$f" ] || continue
		for so in $(objdump -p "$f" | awk '$1 == "NEEDED" { print $2 }'); do
			p=$(lib_pkg "$so")
			[ -n "$p" ] || { echo "make_deb: note: $so (needed by ${f#"$stage"}) belongs to no package; not a dependency" >&2; continue; }
			v=$(dpkg-query -W -f='${Version}' "$p" | sed 's/-[^-]*$//')
			echo "$p (>= $v)"
		done
	done | sort -u | paste -sd, - | sed 's/,/, /g'
}
pkg_ver() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null | sed 's/-[^-]*$//'; }
P=$stage/usr/lib/aorta
depends=$(deps_of "$stage/usr/bin/aorta")
recommends=$(deps_of "$P/libaorta-plot.so")
isal=$(pkg_ver libisal2 || true)
[ -n "$isal" ] && recommends="${recommends:+$recommends, }libisal2 (>= $isal)"
# the completion in /usr/share/bash-completion/completions/ is loaded by bash-completion
bc=$(pkg_ver bash-completion || true)
recommends="${recommends:+$recommends, }bash-completion${bc:+ (>= $bc)}"
suggests=$(deps_of "$P/libaorta-mpi.so")
[ -f "$P/libaorta-mpi.so" ] && suggests="${suggests:+$suggests, }openmpi-bin"
# a package already depended on is not recommended or suggested again
minus() { # LIST MINUS-LIST: the entries of LIST whose package is not in MINUS-LIST
	local e out=() names
	names=" $(printf '%s' "$2" | sed 's/ ([^)]*)//g; s/,/ /g') "
	IFS=',' read -ra es <<< "$1"
	for e in "${es[@]}"; do
		e=${e# }
		[ -n "$e" ] || continue
		case "$names" in *" ${e%% *} "*) continue ;; esac
		out+=("$e")
	done
	local IFS=,
	printf '%s' "${out[*]}" | sed 's/,/, /g'
}
recommends=$(minus "$recommends" "$depends")
suggests=$(minus "$suggests" "$depends, $recommends")
size=$(du -sk "$stage" | cut -f1)
mkdir -p "$stage/DEBIAN"
{
	echo "Package: aorta"
	echo "Version: $version"
	echo "Architecture: $arch"
	echo "Maintainer: aorta developers <aorta@localhost>"
	echo "Installed-Size: $size"
	echo "Section: devel"
	echo "Priority: optional"
	echo "Depends: $depends"
	[ -n "$recommends" ] && echo "Recommends: $recommends"
	[ -n "$suggests" ] && echo "Suggests: $suggests"
	echo "Description: why distributed GPU training does not overlap compute with communication"
	echo " aorta analyses PyTorch profiler (Kineto), Nsight Systems and rocprofv3 traces"
	echo " of every rank of a run: exposed communication, waiting for late peers vs"
	echo " transfer, the late rank and why, host-bound steps."
	echo " ."
	echo " The charts of 'aorta report' need the plot plug-in's cairo (Recommends), the"
	echo " completion of its commands and options bash-completion (Recommends);"
	echo " 'mpirun aorta analyze' needs Open MPI (Suggests); 'aorta train', hwq, sdma"
	[ -f "$P/libaorta-gpu.so" ] && echo " and tune-tp need an NVIDIA GPU with the CUDA runtime, cuBLAS and NCCL." ||
		echo " and tune-tp are not in this build (it was made without the CUDA toolkit)."
} > "$stage/DEBIAN/control"
out=$B/aorta_${version}_${arch}.deb
rm -f "$B"/aorta_*.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$out.tmp" >/dev/null
mv "$out.tmp" "$out"
echo "make_deb: $out"
sed 's/^/  /' "$stage/DEBIAN/control" | grep -E '^  (Package|Version|Depends|Recommends|Suggests):'
