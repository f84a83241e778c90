#!/usr/bin/env bash
# launch_rocm.sh - the ROCm twin of launch_cuda.sh, with upstream AORTA's
# ROCm defaults.  UNTESTED: `make hip` compiles the GPU code that needs no
# BLAS, RCCL or CUPTI for gfx90a, but no HIP plug-in is linked yet
# (docs/rocm.md), and no AMD machine has run this script.  It is kept so the upstream workflow maps
# one to one.
#
#   scripts/launch_rocm.sh [aorta train options ...]
#   NPROC=8 USE_MPI=1 scripts/launch_rocm.sh ...
#
# As upstream: HIP_VISIBLE_DEVICES=0..NPROC-1 and --enable-rocm-metrics
# (aorta's name for it is --enable-gpu-metrics).  Also set unless already
# set: CUDA_DEVICE_MAX_CONNECTIONS=1 (HIP honours it too),
# GPU_MAX_HW_QUEUES=4 (HIP's default), NCCL_DEBUG=WARN (RCCL reads NCCL_*),
# TORCH_NCCL_HIGH_PRIORITY=1 (parity only; HIGH_PRIORITY=1 adds
# --override streams.high_priority=true).  RCCL's knobs pass through:
# RCCL_ENABLE_SDMA, RCCL_MIN_NCHANNELS / RCCL_MAX_NCHANNELS, NCCL_ALGO,
# NCCL_PROTO, RCCL_THREADS_PER_BLOCK, ... (UPSTREAM.md section 9).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
AORTA=${AORTA:-$here/../build/aorta}

export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-1}
export GPU_MAX_HW_QUEUES=${GPU_MAX_HW_QUEUES:-4}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export TORCH_NCCL_HIGH_PRIORITY=${TORCH_NCCL_HIGH_PRIORITY:-1}

if [ -z "${NPROC:-}" ]; then
	if [ -n "${HIP_VISIBLE_DEVICES:-}" ]; then
		NPROC=$(echo "$HIP_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
	elif command -v rocm-smi >/dev/null 2>&1; then
		NPROC=$(rocm-smi --showid 2>/dev/null | grep -cE '^GPU\[[0-9]+\]' || true)
		[ "$NPROC" -gt 0 ] || NPROC=1
	else
		NPROC=1
	fi
fi
if [ -z "${HIP_VISIBLE_DEVICES:-}" ]; then
	HIP_VISIBLE_DEVICES=$(seq -s, 0 $((NPROC - 1)))
	export HIP_VISIBLE_DEVICES
fi

extra=(--enable-rocm-metrics)
if [ "${HIGH_PRIORITY:-0}" = 1 ]; then
	extra+=(--override streams.high_priority=true)
fi

if [ "${USE_MPI:-0}" = 1 ] && [ "$NPROC" -gt 1 ]; then
	# shellcheck disable=SC2086
	exec mpirun -np "$NPROC" ${MPIRUN_ARGS:-} \
		-x CUDA_DEVICE_MAX_CONNECTIONS -x GPU_MAX_HW_QUEUES -x NCCL_DEBUG -x TORCH_NCCL_HIGH_PRIORITY \
		-x HIP_VISIBLE_DEVICES \
		"$AORTA" train "$@" "${extra[@]}"
fi
exec "$AORTA" train "$@" "${extra[@]}"
