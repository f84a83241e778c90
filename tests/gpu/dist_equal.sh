#!/usr/bin/env bash
# dist_equal.sh - world W with local batch b gives the losses of world 1
# with batch W*b (train part 2), on the device, through `aorta train`.
#
# For each of full_shard, shard_grad_op (distributed.mode fsdp) and ddp,
# and each precision (fp32, bf16), it runs
#   world 1: CUDA_VISIBLE_DEVICES=<first GPU>   batch_size = W*b  (the single-GPU loop)
#   world W: CUDA_VISIBLE_DEVICES=<first W GPUs> batch_size = b   (thread mode: one rank per GPU)
# with model.dropout=0 (dropout masks are drawn per rank, so only dropout 0
# is comparable) and compares the "loss" of every step in the two
# rank_00_metrics.jsonl files: it prints the max relative difference and
# PASS or FAIL against the precision's tolerance (fp32 1e-4, bf16 2e-2 over
# the 20 steps: the ranks sum their halves of every batch reduction in
# another order, and Adam carries the rounding on).  It also checks that
# every rank wrote its rank_NN_metrics.jsonl with the same (all-reduced)
# losses as rank 0.
#
# ACCUM=k > 1: gradient accumulation.  The world-W runs take k micro-batches
# of b per step (training.gradient_accumulation=k) and are compared with
# world 1 at batch W*k*b (k = 1); --data-batches is STEPS*k for world W and
# STEPS for world 1, so micro-batch j of step s (cached batch s*k + j,
# samples (s*k + j)*W*b + r*b on rank r) tiles world 1's batch s exactly.
# STRESS=N > 0: the world-W runs also inject upstream's all-reduce stress
# (training.inject_allreduce_copies=true, allreduce_stress_level=N), which
# must not change the losses; rank 0's JSONL must hold 3*N stress
# all-reduce ranges (function all_reduce) per step.
# REDUCE_DTYPE=bf16: the world-W runs reduce their gradients in bf16
# (fsdp.reduce_dtype=bf16, in ddp mode too); world 1 (the single-GPU loop)
# reduces nothing, so the comparison is bf16-reduce world W against world
# 1, with the bf16 tolerance for every precision (TOL_REDUCE_BF16), and
# rank 0's JSONL must tag its gradient collectives "dtype":"bf16".
#
# Usage: tests/gpu/dist_equal.sh [BUILD_DIR]     (default build)
# Environment:
#   WORLD=2          ranks of the distributed runs (2 or 4)
#   LOCAL_B=4        b, the batch per rank
#   STEPS=20         steps per run
#   DEVICES=0,1,2,3  GPUs to take the first WORLD from
#   CONFIG=config/default.yaml
#   STRATEGIES="full_shard shard_grad_op ddp"   PRECISIONS="fp32 bf16"
#   TOL_FP32=1e-4 TOL_BF16=2e-2
#   DE_DIR=/tmp/aorta_dist_equal   (outputs; removed and rewritten)
#   EXTRA="--override fsdp.forward_prefetch=true ..."  (added to both runs)
#   ACCUM=1          micro-batches per step of the world-W runs
#   STRESS=0         stress level of the world-W runs (0: off)
#   REDUCE_DTYPE=fp32  fsdp.reduce_dtype of the world-W runs (fp32 | bf16)
#   TOL_REDUCE_BF16=2e-2
# Exit 0 when every comparison passed, 1 otherwise.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${1:-build}
AORTA=$B/aorta
WORLD=${WORLD:-2}
LOCAL_B=${LOCAL_B:-4}
STEPS=${STEPS:-20}
DEVICES=${DEVICES:-0,1,2,3}
CONFIG=${CONFIG:-config/default.yaml}
STRATEGIES=${STRATEGIES:-full_shard shard_grad_op ddp}
PRECISIONS=${PRECISIONS:-fp32 bf16}
TOL_FP32=${TOL_FP32:-1e-4}
TOL_BF16=${TOL_BF16:-2e-2}
# not OUT: the device tool sets $OUT to the folder that brings results back
DE_DIR=${DE_DIR:-/tmp/aorta_dist_equal}
EXTRA=${EXTRA:-}
ACCUM=${ACCUM:-1}
STRESS=${STRESS:-0}
REDUCE_DTYPE=${REDUCE_DTYPE:-fp32}
TOL_REDUCE_BF16=${TOL_REDUCE_BF16:-2e-2}

[ -x "$AORTA" ] || { echo "dist_equal: no $AORTA (run make first)"; exit 2; }
IFS=, read -r -a devs <<< "$DEVICES"
[ "${#devs[@]}" -ge "$WORLD" ] || { echo "dist_equal: WORLD=$WORLD but DEVICES=$DEVICES"; exit 2; }
one=${devs[0]}
many=$(IFS=,; echo "${devs[*]:0:$WORLD}")
rm -rf "$DE_DIR"
mkdir -p "$DE_DIR"

# losses FILE: one loss per line, in step order
losses() { grep -o '"loss":[-+0-9.eE]*' "$1" | cut -d: -f2; }

# run NAME DEVICES BATCH STRATEGY PRECISION [ACCUM [STRESS]]: aorta train into $DE_DIR/NAME
run() {
	local name=$1 devices=$2 batch=$3 strat=$4 prec=$5 acc=${6:-1} stress=${7:-0} mode=fsdp shard=$4
	local more=()
	if [ "$strat" = ddp ]; then mode=ddp; shard=full_shard; fi
	# accumulation: enough distinct batches that none repeats within the run
	[ "$ACCUM" -gt 1 ] && more+=(--data-batches $((STEPS * acc)))
	more+=(--override training.gradient_accumulation="$acc")
	[ "$stress" -gt 0 ] && more+=(training.inject_allreduce_copies=true training.allreduce_stress_level="$stress")
	# the reduce dtype of the distributed runs (world 1 has no reduction)
	[ "$devices" != "$one" ] && more+=(fsdp.reduce_dtype="$REDUCE_DTYPE")
	# shellcheck disable=SC2086
	CUDA_VISIBLE_DEVICES=$devices "$AORTA" train --config "$CONFIG" --quiet "${more[@]}" \
		--override training.batch_size="$batch" training.max_steps="$STEPS" training.log_interval=5 \
		model.dropout=0 training.mixed_precision="$prec" distributed.mode="$mode" \
		fsdp.sharding_strategy="$shard" training.output_dir="$DE_DIR/$name" compile.enabled=false \
		profiling.enabled=false $EXTRA > "$DE_DIR/$name.out" 2>&1
	local rc=$?
	[ $rc -eq 0 ] || { echo "  $name: aorta train exited $rc:"; tail -n 5 "$DE_DIR/$name.out" | sed 's/^/    /'; }
	return $rc
}

# maxrel A B: max over steps of |a - b| / |a| (prints "inf" on a length mismatch)
maxrel() {
	paste <(losses "$1") <(losses "$2") | awk -v n1="$(losses "$1" | wc -l)" -v n2="$(losses "$2" | wc -l)" '
		{ d = $1 - $2; if (d < 0) d = -d; a = $1; if (a < 0) a = -a; r = a > 0 ? d / a : d; if (r > m) m = r }
		END { if (n1 != n2 || n1 == 0) print "inf"; else printf "%.3g\n", m + 0 }'
}

pass=0 fail=0
printf '# world %d x %d micro-batches x batch %d vs world 1 x batch %d, %d steps, dropout 0, stress %d, reduce %s\n' \
	"$WORLD" "$ACCUM" "$LOCAL_B" $((WORLD * ACCUM * LOCAL_B)) "$STEPS" "$STRESS" "$REDUCE_DTYPE"
printf '# %-14s %-5s %12s %10s %s\n' strategy prec max_rel_diff tolerance verdict
for prec in $PRECISIONS; do
	tol=$TOL_FP32
	[ "$prec" = bf16 ] && tol=$TOL_BF16
	[ "$REDUCE_DTYPE" = bf16 ] && tol=$(awk -v a="$tol" -v b="$TOL_REDUCE_BF16" 'BEGIN { print (a + 0 > b + 0) ? a : b }')
	for strat in $STRATEGIES; do
		w1=w1_${strat}_$prec wn=w${WORLD}_${strat}_$prec
		if ! run "$w1" "$one" $((WORLD * ACCUM * LOCAL_B)) "$strat" "$prec" 1 0 ||
		   ! run "$wn" "$many" "$LOCAL_B" "$strat" "$prec" "$ACCUM" "$STRESS"; then
			printf '  %-14s %-5s %12s %10s FAIL (run failed)\n' "$strat" "$prec" - "$tol"
			fail=$((fail + 1))
			continue
		fi
		m=$(maxrel "$DE_DIR/$w1/rank_00_metrics.jsonl" "$DE_DIR/$wn/rank_00_metrics.jsonl")
		ok=$(awk -v m="$m" -v t="$tol" 'BEGIN { print (m != "inf" && m + 0 <= t + 0) ? 1 : 0 }')
		# every rank wrote its file, with rank 0's (all-reduced) losses
		ranks_ok=1
		for ((r = 1; r < WORLD; r++)); do
			f=$(printf '%s/%s/rank_%02d_metrics.jsonl' "$DE_DIR" "$wn" "$r")
			if [ ! -s "$f" ] || [ "$(maxrel "$DE_DIR/$wn/rank_00_metrics.jsonl" "$f")" != 0 ]; then
				ranks_ok=0
				echo "  $wn: $f missing or its losses differ from rank 0's"
			fi
		done
		# the stress all-reduces are in the JSONL (3 per repetition per step)
		if [ "$STRESS" -gt 0 ]; then
			f=$DE_DIR/$wn/rank_00_metrics.jsonl
			got=$(grep -oE '"tag": ?"epoch[0-9]+_step[0-9]+_stress_allreduce_[a-z0-9_]+", ?"[^}]*"function": ?"all_reduce"' \
				"$f" | wc -l)
			if [ "$got" -ne $((3 * STRESS * STEPS)) ]; then
				ranks_ok=0
				echo "  $wn: $got stress all_reduce ranges in $f, expected $((3 * STRESS * STEPS))"
			fi
		fi
		# bf16 reduce: the gradient collectives' ranges say so
		if [ "$REDUCE_DTYPE" = bf16 ]; then
			f=$DE_DIR/$wn/rank_00_metrics.jsonl
			got=$(grep -o '"dtype":"bf16"' "$f" | wc -l)
			if [ "$got" -lt "$STEPS" ]; then
				ranks_ok=0
				echo "  $wn: $got ranges tagged dtype bf16 in $f, expected at least one per step"
			fi
		fi
		if [ "$ok" = 1 ] && [ "$ranks_ok" = 1 ]; then v=PASS; pass=$((pass + 1)); else v=FAIL; fail=$((fail + 1)); fi
		printf '  %-14s %-5s %12s %10s %s\n' "$strat" "$prec" "$m" "$tol" "$v"
	done
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
