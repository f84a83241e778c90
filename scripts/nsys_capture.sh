#!/usr/bin/env bash
# nsys_capture.sh - an Nsight Systems capture of an aorta train run, then
# the SQLite export that `aorta analyze` reads (src/ingest/nsys.c).
#
#   scripts/nsys_capture.sh [aorta train options ...]
#   NSYS_OUTPUT_DIR=traces NPROC=2 scripts/nsys_capture.sh --override training.max_steps=20
#
# Writes ${NSYS_OUTPUT_DIR:-nsys_traces}/run_<timestamp>/aorta.nsys-rep and
# aorta.sqlite (nsys export --type sqlite), then analyse with
#   build/aorta analyze <dir>/aorta.sqlite
# The run goes through launch_cuda.sh (its environment defaults; thread
# mode: one process, all GPUs, one report).  Under USE_MPI=1 nsys wraps
# mpirun and follows its children (--trace-fork-before-exec true).
# NSYS_ARGS adds options (e.g. "--capture-range=cudaProfilerApi").
#
# NOTE: nsys is not installed on our GPU machines (see
# .library/device/KINDS.md: not on the PATH, and the copy inside Nsight
# Compute wrote a .qdstrm it could not turn into a report); this script is
# for machines with Nsight Systems.  It stops with a message when nsys is
# missing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
NSYS=${NSYS:-nsys}
if ! command -v "$NSYS" >/dev/null 2>&1; then
	echo "nsys_capture.sh: '$NSYS' not found (install Nsight Systems or set NSYS=/path/to/nsys)" >&2
	exit 2
fi
out=${NSYS_OUTPUT_DIR:-nsys_traces}/run_$(date +%Y%m%d_%H%M%S)
mkdir -p "$out"
# shellcheck disable=SC2086
"$NSYS" profile --trace=cuda,nvtx,osrt --trace-fork-before-exec=true --force-overwrite=true \
	${NSYS_ARGS:-} -o "$out/aorta" "$here/launch_cuda.sh" "$@"
"$NSYS" export --type sqlite --force-overwrite=true -o "$out/aorta.sqlite" "$out/aorta.nsys-rep"
echo "nsys_capture.sh: $out/aorta.nsys-rep and $out/aorta.sqlite"
