#!/usr/bin/env bash
# bench/whatif/fsdp_repeats.sh OUTDIR [TRIPLES] [PROCESSES] - the host-bound
# FSDP2 pairs measured often enough to tell the what-if's error from the job's
# own spread: PROCESSES runs of make_fixtures.py (one process group each), each
# running TRIPLES triples of profiled blocks (base, slowed, base: --same-run)
# of both world-2 FSDP cases, every block's traces kept and trimmed into
# OUTDIR/trimmed/p<N>/ (N after the processes already there: a second call
# with the same OUTDIR adds to the first); bench/whatif/fsdp_repeats_check.py
# OUTDIR/trimmed reads them all (anywhere, no GPU needed).
# Run on a machine with 2 GPUs and PyTorch.
#   ACTIVE=8 (profiled steps per block)   CASES="fsdp_host_fwd_r0 fsdp_host_bwd_r1"
set -uo pipefail
cd "$(dirname "$0")/../.." || exit
OUT=${1:?usage: bench/whatif/fsdp_repeats.sh OUTDIR [TRIPLES] [PROCESSES]}
TRIPLES=${2:-5}
PROCS=${3:-2}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
rc=0 port=29731 first=1
while [ -e "$OUT/full/p$first" ] || [ -e "$OUT/trimmed/p$first" ]; do first=$((first + 1)); done
for p in $(seq "$first" $((first + PROCS - 1))); do
	t0=$(date +%s)
	# shellcheck disable=SC2086 # CASES is a list
	timeout -k 10 "${WHATIF_JOB_TIMEOUT:-400}" python3 -W ignore::UserWarning bench/whatif/make_fixtures.py \
		"$OUT/full/p$p" --job fsdp --world 2 --same-run --repeats "$TRIPLES" --active "${ACTIVE:-8}" \
		--port $port ${CASES:-fsdp_host_fwd_r0 fsdp_host_bwd_r1} || { echo "process $p failed: $?"; rc=1; }
	echo "process $p: $(($(date +%s) - t0)) s"
	python3 bench/whatif/trim.py --repeats "$OUT/full/p$p" "$OUT/trimmed/p$p" || rc=1
	port=$((port + 1))
done
exit $rc
