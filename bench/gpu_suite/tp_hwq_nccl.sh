#!/usr/bin/env bash
# One device call (nvidia-h200-x2), part C: the re-verification after the
# fixes of part A/B: the tune-tp operators (test_tp, the TP-2 bench against
# PyTorch, a whole tune-tp run), hwq's P1-P3 workloads and
# comms_compute_overlap (graph mode included), test_nccl.  Logs in $OUT.
#   bash bench/gpu_suite/tp_hwq_nccl.sh [BUILD]
set -u
B=${1:-build}
O=${OUT:-/tmp/tp_hwq_nccl}; mkdir -p "$O"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} NCCL_NVLS_ENABLE=0 AORTA_COMM_TIMEOUT_MS=30000
t0=$(date +%s)
stamp() { echo "   [$(( $(date +%s) - t0 )) s]"; }
echo "== test_tp"
timeout -s KILL 90 "$B/gpu-tests/test_tp" >"$O/test_tp.log" 2>&1; echo "test_tp exit $?"
grep -E 'FAIL|passed|overlap ratio|did not' "$O/test_tp.log" | head -n 20; stamp
echo "== TP-2 bench against PyTorch"
timeout -s KILL 150 bash bench/tune_tp/run.sh "$B" /tmp/tpb >"$O/tp_bench.log" 2>&1; echo "bench exit $?"
cat /tmp/tpb/table.txt 2>/dev/null; stamp
echo "== tune-tp llama-3-8b --max-tp-size 2"
rm -rf /tmp/tt
timeout -s KILL 100 ./$B/aorta tune-tp --model-name llama-3-8b --max-tp-size 2 --output-dir /tmp/tt 2>/tmp/tt_progress.log
echo "tune-tp exit $?"; stamp; grep -c 'not checked' /tmp/tt_progress.log; grep -E 'warning|error' /tmp/tt_progress.log | head -n 5
cp /tmp/tt/summary.txt "$O/"; cp /tmp/tt/optimal_tp_comm_overlap_cfg.yaml "$O/" 2>/dev/null
sed -n '/DETAILED/,$p' /tmp/tt/summary.txt | head -n 30
echo "== hwq GPU test: P1-P3 and comms_compute_overlap"
AORTA_HWQ_TEST_ONLY=fsdp_tp,moe,speculative_decode,continuous_batch,activation_ckpt,grad_accum,rag_pipeline,graph_subgraphs,async_dataload,zero_offload,torch_compile,comms_compute_overlap \
	timeout -s KILL 200 "$B/gpu-tests/test_hwq" >"$O/hwq_test.log" 2>&1; echo "test_hwq exit $?"
grep -E 'FAIL|^[0-9]+ passed' "$O/hwq_test.log" | head -n 25; stamp
echo "== test_nccl"
timeout -s KILL 40 "$B/gpu-tests/test_nccl" >"$O/test_nccl.log" 2>&1; echo "test_nccl exit $?"
grep -E 'FAIL|note: job|passed' "$O/test_nccl.log" | head; stamp
