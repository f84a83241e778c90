# bench/train_dist/common.sh - sourced by run.sh and sweep.sh: one measured
# `aorta train` run on every visible GPU, then `aorta analyze --json` of its
# ranks' JSONL, one line in $W/manifest.tsv.
#   one_run W NAME PART BATCH STRATEGY MODE FP BP LAG PRIO STEPS [extra overrides...]
# MODE: normal | compute | comm (AORTA_TRAIN_ISOLATE, src/train/dist_gpu.c).
# STRATEGY: full_shard | shard_grad_op | no_shard | hybrid_shard | ddp.
# Every process runs under `timeout -s KILL`; once DEADLINE (epoch seconds,
# optional) is passed, runs are skipped and recorded as such (rc=skip).
# AORTA (default ./build/aorta), SKIP (steps left out of the statistics,
# default 10), RUN_LIMIT_S (default 20), DATA_BATCHES (default 2),
# CTA_DEFAULT (nccl, the default: NCCL_CTA_POLICY unset means NCCL's choice,
# passed as distributed.cta_policy=nccl; auto: the trainer's own default).
A=${AORTA:-./build/aorta}
SKIP=${SKIP:-10}
RUN_LIMIT_S=${RUN_LIMIT_S:-20}
DATA_BATCHES=${DATA_BATCHES:-2}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export AORTA_COMM_TIMEOUT_MS=${AORTA_COMM_TIMEOUT_MS:-15000}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}

one_run() {
	local W=$1 name=$2 part=$3 B=$4 strat=$5 mode=$6 fp=$7 bp=$8 lag=$9 prio=${10} steps=${11}
	shift 11
	local d="$W/$name" rc t0 t1 iso=""
	if [ -n "${DEADLINE:-}" ] && [ "$(date +%s)" -ge "$DEADLINE" ]; then
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\tskip\t0\n' "$name" "$part" "$B" "$strat" "$mode" \
			"$fp" "$bp" "$lag" "$prio" "$steps" >> "$W/manifest.tsv"
		echo "$name: skipped (deadline)"
		return 0
	fi
	rm -rf "$d" "$W/$name.json"
	local ov=(training.batch_size="$B" training.max_steps="$steps" training.output_dir="$d"
		  training.log_interval=1000 fsdp.forward_prefetch="$fp" fsdp.backward_prefetch="$bp"
		  fsdp.limit_all_gathers="$lag" streams.high_priority="$prio")
	if [ "$strat" = ddp ]; then
		ov+=(distributed.mode=ddp)
	else
		ov+=(distributed.mode=fsdp fsdp.sharding_strategy="$strat")
	fi
	# distributed.cta_policy: these scripts' runs with NCCL_CTA_POLICY unset
	# meant NCCL's choice; keep that unless CTA_DEFAULT=auto (the trainer's
	# default since issue 27: zero for sharded FSDP at batch >= 64)
	if [ -z "${NCCL_CTA_POLICY:-}" ] && [ "${CTA_DEFAULT:-nccl}" = nccl ]; then
		ov+=(distributed.cta_policy=nccl)
	fi
	[ "$mode" != normal ] && iso=$mode
	t0=$(date +%s.%N)
	AORTA_TRAIN_ISOLATE=$iso timeout -s KILL "$RUN_LIMIT_S" "$A" train -q --data-batches "$DATA_BATCHES" \
		--override "${ov[@]}" "$@" > "$W/$name.out" 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then
		timeout -s KILL 20 "$A" analyze -q --skip-steps "$SKIP" --json "$W/$name.json" "$d"/rank_*_metrics.jsonl \
			>> "$W/$name.out" 2>&1 || rc=analyze$?
	fi
	t1=$(date +%s.%N)
	local wall
	wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$part" "$B" "$strat" "$mode" \
		"$fp" "$bp" "$lag" "$prio" "$steps" "$rc" "$wall" >> "$W/manifest.tsv"
	echo "$name: rc=$rc ${wall}s $(tail -n 1 "$W/$name.out" 2>/dev/null | cut -c1-160)"
}
