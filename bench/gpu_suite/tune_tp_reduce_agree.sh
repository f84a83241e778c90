#!/usr/bin/env bash
# One device call (nvidia-h200-x2), part B: a whole `aorta tune-tp` run for
# Llama-3-8B at TP <= 2 (timed), the bf16-reduce speed effect (world 2,
# batch 64), and the JSONL-vs-CUPTI agreement under mpirun.  Logs in $OUT.
#   bash bench/gpu_suite/tune_tp_reduce_agree.sh [BUILD]
set -u
B=${1:-build}
O=${OUT:-/tmp/tune_tp_reduce_agree}; mkdir -p "$O"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} NCCL_NVLS_ENABLE=0 AORTA_COMM_TIMEOUT_MS=30000
t0=$(date +%s)
stamp() { echo "   [$(( $(date +%s) - t0 )) s]"; }
echo "== tune-tp llama-3-8b --max-tp-size 2"
D=/tmp/tt; rm -rf $D
timeout -s KILL 300 ./$B/aorta tune-tp --model-name llama-3-8b --max-tp-size 2 --output-dir $D 2>"$O/tt_progress.log"
echo "tune-tp exit $?"; stamp; tail -n 5 "$O/tt_progress.log"
cp $D/tuning_report.json $D/summary.txt "$O/" 2>/dev/null; cp $D/optimal_tp_comm_overlap_cfg.yaml "$O/" 2>/dev/null
du -sh $D/traces 2>/dev/null; head -c 6000 $D/summary.txt
echo "== bf16 reduce: speed effect (world 2, batch 64)"
PARTS=3 timeout -s KILL 150 bash bench/train_dist/reduce_dtype.sh "$B" >"$O/reduce_dtype.log" 2>&1; echo "exit $?"
tail -n 30 "$O/reduce_dtype.log"; stamp
echo "== JSONL vs CUPTI agreement (mpirun -np 2)"
timeout -s KILL 200 bash bench/train_agree/run.sh "$B" 2 >"$O/agree.log" 2>&1; echo "exit $?"
grep -E '^==|rc=|worst|AGREE|no common|error' "$O/agree.log" | head -n 30; stamp
