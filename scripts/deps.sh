#!/usr/bin/env bash
# Installs what aorta needs to build and test on Debian/Ubuntu, if missing.
#   scripts/deps.sh               install what is missing (apt-get; sudo if not root)
#   scripts/deps.sh --check-only  exit 1 if something is missing, install nothing
#   scripts/deps.sh --list        print the package list, one per line
# Every package whose headers or libraries the build uses is in PKGS (the
# -dev package, not only its run-time library): tests/deps_guard.sh, run by
# make test, fails when a header or a linked library comes from a package
# that is not listed here.
# Open MPI (libopenmpi-dev, openmpi-bin) builds and runs the MPI tests of
# the distributed core (make mpi-tests); the aorta binary does not link it.
# cairo (libcairo2-dev) builds the plot plug-in build/libaorta-plot.so that
# `aorta report` loads; the binary does not link it.  chromium renders the
# report page in `make test` (headless screenshot; skipped if it cannot run).
# Tools the tests and scripts run are listed too (jq, python3, sqlite3,
# time; shfmt parses the shell scripts for the guard's tool check; pkg-config
# gives the Makefile cairo's flags): tests/deps_guard.sh fails when a script
# calls a command whose package is not here (or optional, with its reason).
# The CUDA toolkit is not installed here: the GPU code builds when nvcc is
# found, and the host build and tests need none of it.
# HIP (hipcc, libamdhip64-dev: HIP 5.2, clang-15) compiles the GPU code for
# AMD GPUs in `make test` (make hip-check, docs/rocm.md); librocm-smi-dev
# gives rocm_smi.h, against which the ROCm SMI telemetry is compiled, and
# the library its test loads.
set -euo pipefail

PKGS=(gcc make pkg-config libsqlite3-dev libyaml-dev libyajl-dev zlib1g-dev libisal2 libisal-dev \
      clang libclang-rt-14-dev python3 sqlite3 time jq shfmt bzip2 xz-utils libopenmpi-dev openmpi-bin \
      libcairo2-dev libfontconfig-dev libfreetype-dev fonts-dejavu-core chromium \
      hipcc libamdhip64-dev librocm-smi-dev)

if [ "${1:-}" = "--list" ]; then
	printf '%s\n' "${PKGS[@]}"
	exit 0
fi

missing=()
for p in "${PKGS[@]}"; do
	# any installed variant counts (libclang-rt-14-dev vs a newer one on Ubuntu)
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		case "$p" in
		libclang-rt-14-dev)
			ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 && continue ;;
		esac
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
if [ "${1:-}" = "--check-only" ]; then
	echo "aorta: missing packages: ${missing[*]}" >&2
	exit 1
fi
echo "aorta: installing ${missing[*]}" >&2
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
# on Ubuntu the clang runtime package has another name
if ! apt-cache show libclang-rt-14-dev >/dev/null 2>&1; then
	missing=("${missing[@]/libclang-rt-14-dev/libclang-rt-dev}")
fi
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
