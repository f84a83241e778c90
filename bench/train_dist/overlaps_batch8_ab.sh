#!/usr/bin/env bash
# Batch 8 A/B of the two cross-step overlaps (nvidia-h200-x2): for ddp and
# full_shard, AORTA_TRAIN_PREFETCH_NEXT and AORTA_TRAIN_PREGATHER each on/off
# (11, 01, 10, 00), three interleaved repeats, 40 steps each.
#   bash bench/train_dist/overlaps_batch8_ab.sh [BUILD]
. "$(dirname "$0")/../train_dist/prelude.sh"
W=/tmp/ab8; rm -rf "$W"; mkdir -p "$W"; : > "$W/manifest.tsv"
{
	for rep in 1 2 3; do
		for st in ddp full_shard; do
			for v in 11 01 10 00; do
				AORTA_TRAIN_PREFETCH_NEXT=${v:0:1} AORTA_TRAIN_PREGATHER=${v:1:1} \
					one_run "$W" "${st}_${v}_$rep" ab8 8 "$st" normal true BACKWARD_PRE true false 40
			done
		done
	done
	python3 bench/train_dist/repeats.py "$W"
} > "$O/log.txt" 2>&1
tail -n 14 "$O/log.txt"
