#!/usr/bin/env bash
# third verification (nvidia-h200-x2): the cross-step first
# all-gather (dist_gpu_set_next) on top of the cross-step batch prefetch.
#   1. tests/gpu/test_dist_gpu (world-1 executor == single-GPU loop for every
#      strategy with both overlaps on; bit-identical to both off)
#   2. tests/gpu/dist_equal.sh at world 2
#   3. bench/train_dist/policy.sh, batch 64 full_shard nccl / zero, with
#      AORTA_TRAIN_PREGATHER=1 and =0, twice each, interleaved
#   bash bench/train_dist/pregather.sh [BUILD]
set -u
B=${1:-build}
O=${OUT:-/tmp/device_out}; mkdir -p "$O"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
{
	echo "== 1. test_dist_gpu"
	timeout -s KILL 200 ./$B/gpu-tests/test_dist_gpu > /tmp/tdg.txt 2>&1
	grep -v "PASS" /tmp/tdg.txt | tail -n 12
	grep -i "cross-step" /tmp/tdg.txt
	echo "== 2. dist_equal"
	STRATEGIES="full_shard shard_grad_op ddp" PRECISIONS=fp32 STEPS=20 \
		timeout -s KILL 150 bash tests/gpu/dist_equal.sh "$B" 2>&1 | tail -n 5
	ACCUM=2 STRATEGIES="full_shard" PRECISIONS=fp32 STEPS=20 \
		timeout -s KILL 60 bash tests/gpu/dist_equal.sh "$B" 2>&1 | tail -n 2
	NCCL_CTA_POLICY=zero STRATEGIES="full_shard" PRECISIONS="fp32 bf16" STEPS=20 \
		timeout -s KILL 100 bash tests/gpu/dist_equal.sh "$B" 2>&1 | tail -n 3
	for rep in 1 2; do
		for pg in 1 0; do
			echo "== 3. AORTA_TRAIN_PREGATHER=$pg, repeat $rep"
			AORTA_TRAIN_PREGATHER=$pg AORTA=./$B/aorta BATCHES=64 STRATEGIES=full_shard POLICIES="nccl zero" \
				timeout -s KILL 100 bash bench/train_dist/policy.sh /tmp/pg${pg}_r$rep 2>&1 | grep '^| 64'
		done
	done
	cd /tmp && tar czf "$O/pg_raw.tar.gz" pg*/manifest.tsv pg*/*.json 2>/dev/null
} > "$O/log.txt" 2>&1
tail -n 60 "$O/log.txt"
