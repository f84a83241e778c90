#!/usr/bin/env bash
# closing measurement (nvidia-h200-x2): the default training run
# (thread per GPU, both cross-step overlaps on) at batch 8 and 64, full_shard
# with NCCL_CTA_POLICY unset and zero, and ddp, three interleaved repeats,
# against the PyTorch FSDP2 peer (../shared/bench/fsdp2_peer.py, carried in
# .carry/) on the same 2 GPUs.
#   bash bench/train_dist/default_vs_fsdp2.sh [BUILD]
. "$(dirname "$0")/../train_dist/prelude.sh"
W=/tmp/final; rm -rf "$W"; mkdir -p "$W"; : > "$W/manifest.tsv"
{
	for rep in 1 2 3; do
		for bs in 8 64; do
			unset NCCL_CTA_POLICY
			one_run "$W" "fs_${bs}_nccl_$rep" final "$bs" full_shard normal true BACKWARD_PRE true false 40
			NCCL_CTA_POLICY=zero one_run "$W" "fs_${bs}_zero_$rep" final "$bs" full_shard normal true BACKWARD_PRE true false 40
			one_run "$W" "ddp_${bs}_nccl_$rep" final "$bs" ddp normal true BACKWARD_PRE true false 40
		done
	done
	for bs in 8 64; do
		echo "peer batch $bs: $(BS=$bs timeout -s KILL 120 torchrun --standalone --nproc_per_node=2 .carry/fsdp2_peer.py 2>&1 | grep -E 'median|Error' | tail -n 2)"
	done
	python3 bench/train_dist/repeats.py "$W"
	cd /tmp && tar czf "$O/final_raw.tar.gz" final/manifest.tsv final/*.json
} > "$O/log.txt" 2>&1
tail -n 40 "$O/log.txt"
