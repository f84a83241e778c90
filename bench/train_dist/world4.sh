#!/usr/bin/env bash
# first 4-GPU call (nvidia-h200-x4): issue 4's correctness and
# speed at world 4.
#   1. tests/gpu/dist_equal.sh WORLD=4: world 4 x batch 4 against world 1 x
#      batch 16, 20 steps, full_shard / shard_grad_op / ddp, fp32 and bf16
#   2. the default training run, 3 interleaved repeats of 40 steps: batch 8
#      and 64, full_shard (NCCL_CTA_POLICY unset and zero) and ddp, thread per
#      GPU (`aorta train`) and process per GPU (`mpirun -np 4 aorta train`)
#   3. the PyTorch FSDP2 peer (.carry/fsdp2_peer.py) on the same 4 GPUs,
#      batch 8 and 64
#   4. bench/train_dist/policy.sh at batch 64 (T_compute and T_comm alone:
#      the overlap efficiency at world 4)
# Everything under timeout -s KILL; log and raw analyses in $OUT.
#   bash bench/train_dist/world4.sh [BUILD]
. "$(dirname "$0")/../train_dist/prelude.sh"
NP=${NP:-4}
W=/tmp/final4; rm -rf "$W"; mkdir -p "$W"; : > "$W/manifest.tsv"
t0=$(date +%s)
stamp() { echo "   [$(( $(date +%s) - t0 )) s]"; }
# mpi_run NAME BATCH STRATEGY STEPS: one process per GPU, analysed like one_run
mpi_run() {
	local name=$1 bs=$2 st=$3 steps=$4 ov
	ov="training.batch_size=$bs training.max_steps=$steps training.log_interval=1000"
	[ "$st" = ddp ] && ov="$ov distributed.mode=ddp" || ov="$ov fsdp.sharding_strategy=$st"
	timeout -s KILL 40 mpirun --allow-run-as-root -np "$NP" -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE \
		-x AORTA_COMM_TIMEOUT_MS $A train -q --data-batches 2 --override $ov \
		training.output_dir="$W/$name" > "$W/$name.out" 2>&1 || echo "$name: mpirun rc=$?"
	timeout -s KILL 20 $A analyze -q --skip-steps 10 --json "$W/$name.json" \
		"$W/$name"/rank_*_metrics.jsonl >> "$W/$name.out" 2>&1 || echo "$name: analyze failed"
}
{
	nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm --format=csv,noheader
	nvidia-smi topo -m | head -n 6
	echo "== 1. dist_equal, world $NP"
	WORLD=$NP STEPS=20 STRATEGIES="full_shard shard_grad_op ddp" PRECISIONS="fp32 bf16" \
		timeout -s KILL 200 bash tests/gpu/dist_equal.sh "$B" 2>&1 | tail -n 16
	stamp
	echo "== 2. default runs, 3 repeats"
	for rep in 1 2 3; do
		for bs in 8 64; do
			unset NCCL_CTA_POLICY
			one_run "$W" "thr_fs_${bs}_$rep" final "$bs" full_shard normal true BACKWARD_PRE true false 40
			NCCL_CTA_POLICY=zero one_run "$W" "thr_fszero_${bs}_$rep" final "$bs" full_shard normal true BACKWARD_PRE true false 40
			one_run "$W" "thr_ddp_${bs}_$rep" final "$bs" ddp normal true BACKWARD_PRE true false 40
			mpi_run "mpi_fs_${bs}_$rep" "$bs" full_shard 40
			mpi_run "mpi_ddp_${bs}_$rep" "$bs" ddp 40
		done
		stamp
	done
	echo "-- rank 0 log of thr_fs_64_1 (NCCL settings line)"
	head -n 12 "$W/thr_fs_64_1"/rank0.log 2>/dev/null || ls "$W/thr_fs_64_1"
	grep -h "NCCL\|copy engine\|overlap" "$W/thr_fszero_64_1"/rank0.log 2>/dev/null | head -n 6
	echo "== 3. FSDP2 peer, $NP GPUs"
	for bs in 8 64; do
		echo "peer batch $bs: $(BS=$bs OUTDIR=/tmp/peer_$bs timeout -s KILL 120 torchrun --standalone \
			--nproc_per_node=$NP .carry/fsdp2_peer.py 2>&1 | grep -E 'median|Error' | tail -n 2)"
	done
	stamp
	python3 bench/train_dist/repeats.py "$W"
	echo "== 4. policy bench, batch 64"
	AORTA=$A BATCHES=64 STRATEGIES="full_shard ddp" POLICIES="nccl zero" \
		timeout -s KILL 150 bash bench/train_dist/policy.sh /tmp/policy4 2>&1 | grep -E '^\||rc=[^0]'
	stamp
	cd /tmp && tar czf "$O/final4_raw.tar.gz" final4/manifest.tsv final4/*.json final4/*.out \
		policy4/manifest.tsv policy4/*.json 2>/dev/null
} > "$O/log.txt" 2>&1
tail -n 90 "$O/log.txt"
