#!/usr/bin/env bash
# second 4-GPU call (nvidia-h200-x4):
#   1. bench/train_dist/all.sh at world 4: overlap at batch 8/64 (normal,
#      compute alone, comm alone) and the knob sweep (forward_prefetch x
#      backward_prefetch x limit_all_gathers x stream priorities)
#   2. bench/train_agree/run.sh at world 4 (JSONL vs CUPTI)
#   3. issue 7 at TP 4: `aorta tune-tp --model-name llama-3-8b
#      --max-tp-size 4`, then TP=4 bench/tune_tp/run.sh (aorta's operators
#      against PyTorch's on the same 4 GPUs)
# Everything under timeout -s KILL; results in $OUT (at most 8 files).
#   bash bench/train_dist/world4_sweep_agree.sh [BUILD]
set -u
B=${1:-build}
O=${OUT:-/tmp/device_out}; mkdir -p "$O"
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-} NCCL_NVLS_ENABLE=0
t0=$(date +%s)
stamp() { echo "   [$(( $(date +%s) - t0 )) s]"; }
{
	echo "== 1. bench/train_dist/all.sh, world 4"
	AORTA=./$B/aorta BUDGET_S=${BUDGET_S:-170} OUT=/tmp/td4 timeout -s KILL 260 bash bench/train_dist/all.sh \
		> /tmp/td4.log 2>&1
	echo "all.sh rc=$?"; sed -n '/^|/p' /tmp/td4/tables.md 2>/dev/null | head -n 80
	grep -E 'skip|rc=[^0]' /tmp/td4.log | head -n 5
	cp /tmp/td4/raw.tar.gz "$O/td4_raw.tar.gz" 2>/dev/null; cp /tmp/td4/tables.md "$O/td4_tables.md" 2>/dev/null
	stamp
	echo "== 2. JSONL vs CUPTI, world 4"
	OUT=/tmp/agree timeout -s KILL 150 bash bench/train_agree/run.sh "$B" 4 2>&1 | tail -n 40
	stamp
	echo "== 3a. tune-tp llama-3-8b --max-tp-size 4"
	rm -rf /tmp/tt4
	AORTA_COMM_TIMEOUT_MS=30000 timeout -s KILL 200 ./$B/aorta tune-tp --model-name llama-3-8b --max-tp-size 4 \
		--output-dir /tmp/tt4 2>/tmp/tt4_progress.log
	echo "tune-tp exit $?"; stamp
	grep -c 'not checked' /tmp/tt4_progress.log; grep -iE 'warning|error|fail' /tmp/tt4_progress.log | head -n 5
	tail -n 3 /tmp/tt4_progress.log
	sed -n '/DETAILED/,$p' /tmp/tt4/summary.txt | head -n 60
	cd /tmp && tar czf "$O/tt4.tar.gz" tt4/summary.txt tt4/tuning_report.json tt4/*.yaml tt4_progress.log 2>/dev/null
	cd - > /dev/null
	echo "== 3b. TP=4 bench/tune_tp/run.sh"
	TP=4 timeout -s KILL 200 bash bench/tune_tp/run.sh "$B" /tmp/tpb4 > /tmp/tpb4.log 2>&1; echo "bench exit $?"
	cat /tmp/tpb4/table.txt 2>/dev/null || tail -n 20 /tmp/tpb4.log
	cd /tmp && tar czf "$O/tpb4.tar.gz" tpb4 tpb4.log 2>/dev/null
	stamp
} > "$O/log.txt" 2>&1
tail -n 150 "$O/log.txt"
