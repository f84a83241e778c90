#!/usr/bin/env bash
# Batch 8 spread: full_shard and ddp at batch 8, rank threads of one process
# (plain `aorta train`) against one process per rank (`mpirun -np 2`, Open
# MPI binds each to a core), three interleaved repeats of 40 steps; prints the
# median step (mean of the ranks) per run.
#   bash bench/train_dist/threads_vs_mpi.sh [BUILD]
set -u
B=${1:-build}
O=${OUT:-/tmp/device_out}; mkdir -p "$O"
cd "$(dirname "$0")/../.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 AORTA_COMM_TIMEOUT_MS=15000
A=./$B/aorta
W=/tmp/spread; rm -rf "$W"; mkdir -p "$W"
{
	for rep in 1 2 3; do
		for st in full_shard ddp; do
			ov="training.batch_size=8 training.max_steps=40 training.log_interval=1000"
			[ $st = ddp ] && ov="$ov distributed.mode=ddp" || ov="$ov fsdp.sharding_strategy=$st"
			timeout -s KILL 30 $A train -q --data-batches 2 --override $ov training.output_dir=$W/thr_${st}_$rep \
				> $W/thr_${st}_$rep.txt 2>&1
			timeout -s KILL 40 mpirun --allow-run-as-root -np 2 -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE \
				-x AORTA_COMM_TIMEOUT_MS $A train -q --data-batches 2 --override $ov \
				training.output_dir=$W/mpi_${st}_$rep > $W/mpi_${st}_$rep.txt 2>&1
			for m in thr mpi; do
				timeout -s KILL 20 $A analyze -q --skip-steps 10 --json $W/${m}_${st}_$rep.json \
					$W/${m}_${st}_$rep/rank_*_metrics.jsonl > /dev/null 2>&1 || echo "$m $st $rep: analyze failed"
			done
		done
	done
	python3 bench/train_dist/repeats.py "$W"
	tail -n 2 $W/mpi_full_shard_1.txt
} > "$O/log.txt" 2>&1
tail -n 12 "$O/log.txt"
