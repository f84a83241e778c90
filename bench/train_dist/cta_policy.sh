#!/usr/bin/env bash
# device call (nvidia-h200-x2): NCCL_CTA_POLICY and copy-engine
# all-gathers (symmetric windows) for `aorta train`.
#   1. tests/gpu/test_nccl (symmetric windows: exact all-gathers, policy parsing)
#   2. bench/train_dist/policy.sh: overlap per CTA policy, batch 64 and 8
#   3. tests/gpu/dist_equal.sh with NCCL_CTA_POLICY=zero (losses = world 1)
#   4. one mpirun run with the CUPTI window and NCCL_CTA_POLICY=zero: are the
#      all-gathers copy-engine copies (no AllGather kernels)?
# Everything under timeout -s KILL; results in $OUT (at most 8 files).
#   bash bench/train_dist/cta_policy.sh [BUILD]
set -u
B=${1:-build}
O=${OUT:-/tmp/device_out}; mkdir -p "$O"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
L="$O/log.txt"
{
	nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
	echo "== 1. test_nccl"
	NCCL_DEBUG=${NCCL_DEBUG:-} timeout -s KILL 150 ./$B/gpu-tests/test_nccl > /tmp/test_nccl.txt 2>&1
	grep -v "NCCL INFO" /tmp/test_nccl.txt | tail -n 25
	grep -i "symmetric\|window\|cumem\| CE \|copy engine\|ctapolicy\|WARN" /tmp/test_nccl.txt | sort | uniq -c | sort -rn | head -n 25
	echo "== 2. policy bench"
	AORTA=./$B/aorta STRATEGIES=${STRATEGIES:-full_shard ddp} POLICIES=${POLICIES:-nccl efficiency zero} \
		timeout -s KILL 300 bash bench/train_dist/policy.sh /tmp/policy 2>&1 | tail -n 60
	echo "== 3. dist_equal with NCCL_CTA_POLICY=zero"
	NCCL_CTA_POLICY=zero STRATEGIES="full_shard shard_grad_op" PRECISIONS=fp32 STEPS=20 \
		timeout -s KILL 120 bash tests/gpu/dist_equal.sh "$B" 2>&1 | tail -n 20
	echo "== 4. CUPTI trace under mpirun, NCCL_CTA_POLICY=zero"
	d=/tmp/ce_trace; rm -rf "$d"
	NCCL_CTA_POLICY=zero AORTA_COMM_TIMEOUT_MS=20000 timeout -s KILL 90 mpirun --allow-run-as-root -np 2 \
		-x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x NCCL_CTA_POLICY -x AORTA_COMM_TIMEOUT_MS \
		./$B/aorta train -q --override training.max_steps=16 training.batch_size=64 \
		training.output_dir="$d" profiling.enabled=true profiling.wait=8 profiling.warmup=2 \
		profiling.active=4 profiling.repeat=1 > /tmp/ce_train.txt 2>&1
	echo "train rc=$?"; tail -n 3 /tmp/ce_train.txt
	for f in $(find "$d" -name '*.pt.trace.json*' | head -2); do
		echo "$f: AllGather kernels $(grep -o '"name": *"[^"]*AllGather[^"]*"' "$f" | grep -vc cuda) ReduceScatter kernels $(grep -o '"name": *"[^"]*ReduceScatter[^"]*"' "$f" | grep -vc cuda) peer copies $(grep -c 'Memcpy PtoP\|Memcpy DtoD' "$f") memcpy names: $(grep -o '"name": *"Memcpy[^"]*"' "$f" | sort | uniq -c | tr '\n' ';')"
	done
	timeout -s KILL 60 ./$B/aorta analyze -q "$d/torch_profiler" 2>&1 | head -n 30
	tar czf "$O/policy_raw.tar.gz" -C /tmp policy/manifest.tsv $(cd /tmp && ls policy/*.json 2>/dev/null) 2>/dev/null
} > "$L" 2>&1
cat "$L" | tail -n 150
