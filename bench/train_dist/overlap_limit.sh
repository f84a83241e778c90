#!/usr/bin/env bash
# bench/train_dist/overlap_limit.sh - issue 27's measurements in one device
# call: the step against compute alone and communication alone, per strategy
# and batch, at world 2 (CUDA_VISIBLE_DEVICES=0,1) and world 4, with the
# A/B of the gradient norm summed as reductions land (debug.norm_early) and
# of the CTA policy (distributed.cta_policy auto against nccl), and the
# PyTorch FSDP2 peer at batch 8.
#   bash bench/train_dist/overlap_limit.sh [BUILD]        (on the GPU machine)
# PARTS (default "check ab peer final"):
#   check  tests/gpu/run.sh on GPUs 0,1 (timed) beside dist_equal WORLD=2 on
#          GPUs 2,3; then dist_equal WORLD=4 and full_shard fp32 at world 4
#          under NCCL_CTA_POLICY=zero (the symmetric-window path)
#   equal  dist_equal fp32, full_shard and ddp, at world 2 then 4 (quick)
#   ab     world 4, one repeat: full_shard b64 auto / nccl / norm_early off,
#          ddp b64 on / off, full_shard b16 and b32 nccl / zero, and
#          T_compute / T_comm alone for full_shard and ddp at b8 and b64
#   final  WORLDS (default "2 4"), REPEATS (default 3) interleaved repeats of
#          full_shard and ddp at b64 and b8 with the defaults; at world 4 also
#          full_shard b64 with cta_policy nccl (NCCL_AB=1) and full_shard / ddp b64 with
#          debug.norm_early=false; T_compute and T_comm alone once per world
#          (in repeat 2; ALONE lists them, default all eight: MODE_STRATEGY_BATCH);
#          LATE_REPEATS (default 3) limits the norm_early=false runs.
#          DEADLINE (epoch s) skips the runs left after it.
#   peer   the FSDP2 peer (PEER, default .carry/train/fsdp2_peer.py) at b8
#          on PEER_WORLDS (default "2 4") GPUs, before the final runs
# Every run: `aorta train -q --data-batches 2`, STEPS (default 30) steps, the
# first 10 left out (bench/train_dist/common.sh); tables by
# bench/train_dist/overlap_limit.py.  Logs and analyses under $OUT.
. "$(dirname "$0")/../train_dist/prelude.sh"
PARTS=${PARTS:-check ab peer final}
export CTA_DEFAULT=auto   # the trainer's default CTA policy (distributed.cta_policy auto)
STEPS=${STEPS:-30}
W=/tmp/olim; rm -rf "$W"; mkdir -p "$W"; : > "$W/manifest.tsv"
t0=$(date +%s)
stamp() { echo "   [$(( $(date +%s) - t0 )) s] $*"; }
has() { case " $PARTS " in *" $1 "*) return 0;; esac; return 1; }
# run WORLD NAME BATCH STRATEGY MODE [overrides...]
run() {
	local w=$1 name=$2 bs=$3 st=$4 mode=$5
	shift 5
	local dev=0,1,2,3
	[ "$w" = 2 ] && dev=0,1
	CUDA_VISIBLE_DEVICES=$dev one_run "$W" "w${w}_$name" limit "$bs" "$st" "$mode" true BACKWARD_PRE true false \
		"$STEPS" "$@"
}
{
	nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
	if has check; then
		echo "== check: tests/gpu/run.sh on 2 GPUs, dist_equal world 2 beside it"
		( s0=$(date +%s); CUDA_VISIBLE_DEVICES=0,1 timeout -s KILL 290 bash tests/gpu/run.sh "$B" > "$O/check_gpu_2.log" 2>&1
		  echo "rc=$? wall=$(( $(date +%s) - s0 )) s" >> "$O/check_gpu_2.log" ) &
		DE_DIR=/tmp/aorta_dist_equal_w2 DEVICES=2,3 WORLD=2 STEPS=20 timeout -s KILL 250 bash tests/gpu/dist_equal.sh "$B" > "$W/de2.log" 2>&1
		echo "dist_equal world 2 rc=$?"; grep -E "PASS|FAIL" "$W/de2.log" | tail -n 8
		wait
		grep -E "^[0-9]+ passed|FAIL|: [0-9]+ s$|^rc=" "$O/check_gpu_2.log"
		stamp check-gpu
		DE_DIR=/tmp/aorta_dist_equal_w4 WORLD=4 STEPS=20 timeout -s KILL 200 bash tests/gpu/dist_equal.sh "$B" > "$W/de4.log" 2>&1
		echo "dist_equal world 4 rc=$?"; grep -E "PASS|FAIL" "$W/de4.log" | tail -n 8
		DE_DIR=/tmp/aorta_dist_equal_w4z NCCL_CTA_POLICY=zero WORLD=4 STEPS=20 STRATEGIES=full_shard PRECISIONS=fp32 \
			timeout -s KILL 60 bash tests/gpu/dist_equal.sh "$B" > "$W/de4z.log" 2>&1
		echo "dist_equal world 4 zero rc=$?"; grep -E "PASS|FAIL" "$W/de4z.log" | tail -n 2
		grep -rh --include=rank0.log "gradient norm\|CTA policy" /tmp/aorta_dist_equal_w* 2>/dev/null | sed 's/.*NCCL [0-9.]*//' | sort | uniq -c | head -n 8
		stamp dist_equal
	fi
	if has equal; then
		echo "== equal: dist_equal fp32 full_shard and ddp at world 2 and 4"
		for w in 2 4; do
			DE_DIR=/tmp/aorta_dist_equal_q$w WORLD=$w STEPS=20 STRATEGIES="full_shard ddp" PRECISIONS=fp32 \
				timeout -s KILL 90 bash tests/gpu/dist_equal.sh "$B" > "$W/deq$w.log" 2>&1
			echo "world $w rc=$?"; grep -E "PASS|FAIL" "$W/deq$w.log" | tail -n 3
		done
		grep -rh --include=rank0.log "gradient norm" /tmp/aorta_dist_equal_q* 2>/dev/null | sed 's/.*aorta.train | //' | sort | uniq -c
		stamp equal
	fi
	if has ab; then
		echo "== ab: world 4"
		run 4 fs64_auto 64 full_shard normal
		run 4 fs64_nccl 64 full_shard normal distributed.cta_policy=nccl
		run 4 fs64_late 64 full_shard normal debug.norm_early=false
		run 4 ddp64_early 64 ddp normal
		run 4 ddp64_late 64 ddp normal debug.norm_early=false
		for bs in 16 32; do
			run 4 fs${bs}_nccl "$bs" full_shard normal distributed.cta_policy=nccl
			run 4 fs${bs}_zero "$bs" full_shard normal distributed.cta_policy=zero
		done
		for bs in 8 64; do
			for st in full_shard ddp; do
				run 4 "alone_compute_${st}_$bs" "$bs" "$st" compute
				run 4 "alone_comm_${st}_$bs" "$bs" "$st" comm
			done
		done
		grep -h "CTA policy\|gradient norm" "$W"/w4_fs64_auto/rank0.log "$W"/w4_fs64_nccl/rank0.log "$W"/w4_ddp64_late/rank0.log 2>/dev/null
		stamp ab
	fi
	if has peer; then
		for np in ${PEER_WORLDS:-2 4}; do
			dev=0,1,2,3; [ "$np" = 2 ] && dev=0,1
			echo "peer $np GPUs batch 8: $(CUDA_VISIBLE_DEVICES=$dev BS=8 OUTDIR=/tmp/peer_$np timeout -s KILL 100 \
				torchrun --standalone --nproc_per_node=$np "${PEER:-.carry/train/fsdp2_peer.py}" 2>&1 | grep -E 'median|Error' | tail -n 2)"
		done
		stamp peer
	fi
	if has final; then
		echo "== final: ${WORLDS:-2 4}, ${REPEATS:-3} repeats"
		for rep in $(seq 1 "${REPEATS:-3}"); do
			for w in ${WORLDS:-2 4}; do
				run "$w" "fs64_$rep" 64 full_shard normal
				run "$w" "ddp64_$rep" 64 ddp normal
				run "$w" "fs8_$rep" 8 full_shard normal
				run "$w" "ddp8_$rep" 8 ddp normal
				if [ "$w" = 4 ] && [ "$rep" -le "${LATE_REPEATS:-3}" ]; then
					[ -n "${NCCL_AB:-}" ] && run "$w" "fs64nccl_$rep" 64 full_shard normal distributed.cta_policy=nccl
					run "$w" "fs64late_$rep" 64 full_shard normal debug.norm_early=false
					run "$w" "ddp64late_$rep" 64 ddp normal debug.norm_early=false
				fi
				if [ "$rep" = 2 ]; then
					for a in ${ALONE:-compute_full_shard_64 comm_full_shard_64 compute_ddp_64 comm_ddp_64 \
						compute_full_shard_8 comm_full_shard_8 compute_ddp_8 comm_ddp_8}; do
						IFS=_ read -r mode s1 s2 bs <<< "$a"
						st=$s1; [ "$s1" = full ] && st=full_shard || bs=$s2
						run "$w" "alone_$a" "$bs" "$st" "$mode"
					done
				fi
			done
			stamp "repeat $rep"
		done
	fi
	python3 bench/train_dist/overlap_limit.py "$W"
} 2>&1 | tee "$O/overlap_limit.log"
# the analyses and the rank-0 logs (JSONL stays: too large)
tar -C "$W" -czf "$O/olim.tgz" --exclude='*.jsonl' --exclude='torch_profiler' . 2>/dev/null
tar -C /tmp -czf "$O/de.tgz" --exclude='*.jsonl' $(cd /tmp && ls -d aorta_dist_equal* 2>/dev/null) 2>/dev/null || true
