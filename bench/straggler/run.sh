#!/usr/bin/env bash
# bench/straggler/run.sh OUTDIR - makes the held-out straggler fixtures of
# tests/data/straggler/ on a machine with 2 GPUs and PyTorch (one process
# per GPU, NCCL, NVLink multicast off): PyTorch DDP and FSDP2 runs with known
# host delays planted on chosen ranks, profiled by the PyTorch profiler,
# each case with its truth.json (make_fixtures.py says which cases).
# The fixtures in the repository were made by this script on 2 x H100 (see
# bench/RESULTS.md, "Straggler fixtures").
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: bench/straggler/run.sh OUTDIR}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
python3 -c 'import torch; n = torch.cuda.device_count(); assert n >= 2, f"{n} GPUs: need 2"'
python3 bench/straggler/make_fixtures.py "$OUT"
