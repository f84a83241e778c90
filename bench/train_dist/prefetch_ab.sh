#!/usr/bin/env bash
# second verification (nvidia-h200-x2): the cross-step batch
# prefetch of the distributed executor (the next step's batch uploaded into
# spare buffers during this step) and the CTA policies, A/B.
#   1. tests/gpu/dist_equal.sh: losses of world 2 = world 1 (full_shard,
#      shard_grad_op, ddp; fp32), with gradient accumulation 2, and with
#      NCCL_CTA_POLICY=zero
#   2. bench/train_dist/policy.sh with the prefetch (default) and without
#      (AORTA_TRAIN_PREFETCH_NEXT=0): batch 64 and 8, full_shard nccl / zero,
#      ddp nccl
#   bash bench/train_dist/prefetch_ab.sh [BUILD]
set -u
B=${1:-build}
O=${OUT:-/tmp/device_out}; mkdir -p "$O"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
{
	echo "== 1. dist_equal"
	STRATEGIES="full_shard shard_grad_op ddp" PRECISIONS=fp32 STEPS=20 \
		timeout -s KILL 150 bash tests/gpu/dist_equal.sh "$B" 2>&1 | tail -n 6
	ACCUM=2 STRATEGIES="full_shard ddp" PRECISIONS=fp32 STEPS=20 \
		timeout -s KILL 100 bash tests/gpu/dist_equal.sh "$B" 2>&1 | tail -n 4
	NCCL_CTA_POLICY=zero STRATEGIES="full_shard" PRECISIONS="fp32 bf16" STEPS=20 \
		timeout -s KILL 100 bash tests/gpu/dist_equal.sh "$B" 2>&1 | tail -n 4
	for pf in 1 0; do
		echo "== 2. policy bench, AORTA_TRAIN_PREFETCH_NEXT=$pf"
		for st in full_shard ddp; do
			pol="nccl zero"; [ $st = ddp ] && pol=nccl
			AORTA_TRAIN_PREFETCH_NEXT=$pf AORTA=./$B/aorta STRATEGIES=$st POLICIES="$pol" \
				timeout -s KILL 200 bash bench/train_dist/policy.sh /tmp/pf${pf}_$st 2>&1 | grep '^|'
		done
	done
	cd /tmp && tar czf "$O/pf_raw.tar.gz" pf*/manifest.tsv pf*/*.json 2>/dev/null
} > "$O/log.txt" 2>&1
tail -n 80 "$O/log.txt"
