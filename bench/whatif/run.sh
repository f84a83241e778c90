#!/usr/bin/env bash
# bench/whatif/run.sh OUTDIR - makes the what-if validation pairs of
# tests/data/whatif/ on a machine with 4 GPUs and PyTorch (one process per
# GPU, NCCL, NVLink multicast off): DDP, FSDP2 and a 2-stage x 2-replica
# pipeline, each run with and without a planted slowdown, profiled by the
# PyTorch profiler, each case with its truth.json (make_fixtures.py says
# which cases), then trimmed into OUTDIR/trimmed by trim.py.
# The fixtures in the repository were made by this script on 4 GPUs (see
# bench/RESULTS.md, "What-if fixtures").
#   WHATIF_JOBS="ddp fsdp pp"   the jobs to run (each its own process group)
#   WHATIF_CPU=1                 gloo on the CPU, tiny sizes (tests the scripts)
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: bench/whatif/run.sh OUTDIR}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
cpu=()
if [ "${WHATIF_CPU:-0}" = 1 ]; then cpu=(--cpu); else
	python3 -c 'import torch; n = torch.cuda.device_count(); assert n >= 4, f"{n} GPUs: need 4"' || exit 1
fi
mkdir -p "$OUT/full"
rc=0 port=29711
for job in ${WHATIF_JOBS:-ddp fsdp pp}; do
	t0=$(date +%s)
	# a job that hangs (a send/recv mismatch, say) must not eat the others' time
	timeout -k 10 "${WHATIF_JOB_TIMEOUT:-180}" python3 -W ignore::UserWarning \
		bench/whatif/make_fixtures.py "$OUT/full" --job "$job" --port $port "${cpu[@]}" || { echo "job $job failed: $?"; rc=1; }
	echo "job $job: $(($(date +%s) - t0)) s"
	port=$((port + 1))
done
python3 bench/whatif/trim.py "$OUT/full" "$OUT/trimmed" || rc=1
exit $rc
