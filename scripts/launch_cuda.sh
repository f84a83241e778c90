#!/usr/bin/env bash
# launch_cuda.sh - runs `aorta train` on NVIDIA GPUs with upstream AORTA's
# environment defaults (its launch_cuda.sh used torchrun; aorta needs none).
#
#   scripts/launch_cuda.sh [aorta train options ...]
#   NPROC=2 scripts/launch_cuda.sh --override training.max_steps=20
#   NPROC=8 USE_MPI=1 MPIRUN_ARGS="--hostfile hosts" scripts/launch_cuda.sh ...
#
# Two modes (src/comm/launch.h):
#   threads (default)  one process drives NPROC GPUs, a thread each; the
#                      script sets CUDA_VISIBLE_DEVICES=0..NPROC-1 unless it
#                      is set already;
#   USE_MPI=1          mpirun -np NPROC, one process per GPU, NCCL
#                      bootstrapped through MPI: the multi-node mode.  Under
#                      srun, call build/aorta train directly (srun -n N).
# NPROC defaults to the GPUs nvidia-smi lists (or CUDA_VISIBLE_DEVICES).
#
# Environment set here unless already set (export your own to override):
#   CUDA_DEVICE_MAX_CONNECTIONS=1   as upstream: one hardware work queue, so
#                                   kernels start in the order they were
#                                   enqueued across streams
#   NCCL_NVLS_ENABLE=0              no NVLink SHARP / multicast objects (also
#   TORCH_SYMM_MEM_DISABLE_MULTICAST=1, NVSHMEM_DISABLE_NVLS=1 for any torch
#                                   or NVSHMEM code started alongside)
#   NCCL_DEBUG=WARN                 upstream's TORCH_DISTRIBUTED_DEBUG=DETAIL
#                                   has no NCCL twin; WARN prints NCCL's own
#                                   failure reasons
#   TORCH_NCCL_HIGH_PRIORITY=1      upstream's Docker default, exported for
#                                   parity; aorta reads streams.high_priority
#                                   instead: HIGH_PRIORITY=1 adds
#                                   --override streams.high_priority=true
# NCCL's own knobs pass through untouched: NCCL_ALGO, NCCL_PROTO,
# NCCL_MIN_CTAS / NCCL_MAX_CTAS (also given to ncclConfig_t), NCCL_MIN_NCHANNELS /
# NCCL_MAX_NCHANNELS, NCCL_CGA_CLUSTER_SIZE, NCCL_CTA_POLICY (default |
# efficiency | zero; zero puts FSDP's all-gathers on the copy engines, see
# docs/cli.md).  AORTA_COMM_TIMEOUT_MS (or
# upstream's HANG_TIMEOUT, seconds) bounds every collective wait.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
AORTA=${AORTA:-$here/../build/aorta}

export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-1}
export NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-0}
export TORCH_SYMM_MEM_DISABLE_MULTICAST=${TORCH_SYMM_MEM_DISABLE_MULTICAST:-1}
export NVSHMEM_DISABLE_NVLS=${NVSHMEM_DISABLE_NVLS:-1}
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export TORCH_NCCL_HIGH_PRIORITY=${TORCH_NCCL_HIGH_PRIORITY:-1}

if [ -z "${NPROC:-}" ]; then
	if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
		NPROC=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
	elif command -v nvidia-smi >/dev/null 2>&1; then
		NPROC=$(nvidia-smi -L | grep -c '^GPU')
	else
		NPROC=1
	fi
fi

extra=()
if [ "${HIGH_PRIORITY:-0}" = 1 ]; then
	extra+=(--override streams.high_priority=true)
fi

if [ "${USE_MPI:-0}" = 1 ] && [ "$NPROC" -gt 1 ]; then
	# -x carries the variables to ranks on other nodes
	# shellcheck disable=SC2086
	exec mpirun -np "$NPROC" ${MPIRUN_ARGS:-} \
		-x CUDA_DEVICE_MAX_CONNECTIONS -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST \
		-x NVSHMEM_DISABLE_NVLS -x NCCL_DEBUG -x TORCH_NCCL_HIGH_PRIORITY \
		"$AORTA" train "$@" "${extra[@]}"
fi

if [ -z "${CUDA_VISIBLE_DEVICES:-}" ]; then
	CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((NPROC - 1)))
	export CUDA_VISIBLE_DEVICES
fi
exec "$AORTA" train "$@" "${extra[@]}"
