#!/usr/bin/env bash
# bench/tune_tp/run.sh [BUILD] [OUTDIR] - on a machine with TP GPUs (TP=2
# by default; TP=4 bash bench/tune_tp/run.sh ...): aorta's
# tune-tp operators for Llama-3-8B fc1 fprop (AG + GEMM) and fc2 fprop
# (GEMM + RS) at 8192 tokens, TP ranks, every method over a grid of TE's keys
# (BUILD/gpu-tests/tp_bench, built by bench/tune_tp/build.sh), then the
# PyTorch peer (torch_peer.py: GEMM, collective, serial, fused async-TP),
# then a side-by-side table (table.py).  Logs and JSON under OUTDIR.
set -u
B=${1:-build-tpg}
O=${2:-${OUT:-/tmp/tune_tp}}
TP=${TP:-2}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$O"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
echo "== aorta tp_bench (TP $TP, Llama-3-8B fc1/fc2, 8192 tokens)"
timeout -s KILL 90 "$B"/gpu-tests/tp_bench --tp "$TP" --tokens 8192 --iters 20 --warmup 5 \
	>"$O"/tp_bench.jsonl 2>"$O"/tp_bench.log
echo "tp_bench exit $?"; tail -n 40 "$O"/tp_bench.log
echo "== torch peer"
PY=${PYTHON:-python3}
timeout -s KILL 90 "$PY" -m torch.distributed.run --standalone --nproc-per-node "$TP" \
	"$here"/torch_peer.py --out "$O"/torch_peer.json >"$O"/torch_peer.log 2>&1
echo "torch_peer exit $?"; tail -n 5 "$O"/torch_peer.log | cut -c1-600
echo "== table"
"$PY" "$here"/table.py "$O"/tp_bench.jsonl "$O"/torch_peer.json | tee "$O"/table.txt
