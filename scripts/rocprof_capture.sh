#!/usr/bin/env bash
# rocprof_capture.sh - a rocprofv3 capture of an aorta train run on ROCm,
# as upstream AORTA's script runs it (UPSTREAM.md section 9), with aorta
# in place of torchrun:
#
#   rocprofv3 ${ROCPROF_ARGS:---kernel-trace} \
#     -d ${ROCPROF_OUTPUT_DIR:-rocprof_traces}/run_<timestamp> \
#     --output-format json -- scripts/launch_rocm.sh [aorta train options ...]
#
# Upstream's default ROCPROF_ARGS was "--att --kernel-trace"; thread traces
# (--att) are large and need the ATT decoder, so aorta's default is
# "--kernel-trace" alone (set ROCPROF_ARGS to get upstream's).  Unlike
# upstream's script, which "parses nothing", the JSON output is what
# `aorta analyze <dir>` reads (src/ingest/rocprof_json.c).
# UNTESTED: no AMD machine has run it (see launch_rocm.sh).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
if ! command -v rocprofv3 >/dev/null 2>&1; then
	echo "rocprof_capture.sh: rocprofv3 not found (ROCm 6.2 or later)" >&2
	exit 2
fi
out=${ROCPROF_OUTPUT_DIR:-rocprof_traces}/run_$(date +%Y%m%d_%H%M%S)
mkdir -p "$out"
# shellcheck disable=SC2086
rocprofv3 ${ROCPROF_ARGS:---kernel-trace} -d "$out" --output-format json -- "$here/launch_rocm.sh" "$@"
echo "rocprof_capture.sh: traces under $out"
