#!/usr/bin/env bash
# device_verify_reduce_dtype.sh - fsdp.reduce_dtype bf16 on the device:
#   1. the GPU tests of the distributed path (tests/gpu/test_dist_gpu.c:
#      the bf16 casts against their CPU twins bit for bit, NCCL's bf16
#      all-reduce / reduce-scatter at world 2 against the CPU backend bit
#      for bit, the executor's bf16 reduce against fp32 at world 1) and
#      of the NCCL backend (test_nccl: comm.h's struct changed);
#   2. tests/gpu/dist_equal.sh with REDUCE_DTYPE=bf16: world 2 reducing in
#      bf16 against world 1, full_shard and ddp, within bf16 tolerance;
#   3. the speed effect: world 2 (thread mode, one rank per GPU), 20 steps
#      at batch 64 of the default model, full_shard and ddp, each with
#      fsdp.reduce_dtype fp32 and bf16; `aorta analyze --json` of rank 0's
#      JSONL (first 5 steps left out) gives the median step time and the
#      communication and exposed communication per step; the bytes per
#      step come from the JSONL ranges' metadata.bytes (what the executor
#      moved, at the real element size) and, where the JSONL reader passes
#      metadata.bytes on, from analyze's per-collective rows.
# Needs 2 GPUs (nvidia-h200-x2); with one, only part 1 runs.
#   bash bench/train_dist/reduce_dtype.sh [BUILD]     (default build-rd)
# PARTS="1 2 3" (default) picks the parts, so that each call stays within a
# 10-minute limit: e.g. PARTS=1, then PARTS="2 3".
set -u
B=${1:-build-rd}
A=./$B/aorta
W=/tmp/aorta_reduce_dtype
rm -rf "$W"; mkdir -p "$W"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 AORTA_COMM_TIMEOUT_MS=60000
fail=0
PARTS=${PARTS:-1 2 3}
part() { case " $PARTS " in *" $1 "*) return 0;; esac; return 1; }

nvidia-smi -L
ngpu=$(nvidia-smi -L | grep -c '^GPU')

if part 1; then
	echo "== 1. GPU tests (test_dist_gpu, test_nccl)"
	timeout -s KILL 360 "$B/gpu-tests/test_dist_gpu" > "$W/test_dist_gpu.txt" 2>&1
	rc=$?
	grep -E '^(ok|FAIL|skip)|passed' "$W/test_dist_gpu.txt" | tail -n 40
	echo "test_dist_gpu rc=$rc"
	[ $rc -eq 0 ] || { fail=1; tail -n 20 "$W/test_dist_gpu.txt"; }
	timeout -s KILL 180 "$B/gpu-tests/test_nccl" > "$W/test_nccl.txt" 2>&1
	rc=$?
	tail -n 3 "$W/test_nccl.txt"
	echo "test_nccl rc=$rc"
	[ $rc -eq 0 ] || fail=1
fi

if [ "$ngpu" -lt 2 ]; then
	echo "world 2 needs 2 GPUs ($ngpu visible): parts 2 and 3 skipped (run on nvidia-h200-x2)"
	exit $fail
fi

if part 2; then
	echo "== 2. dist_equal: world 2 reducing in bf16 vs world 1"
	REDUCE_DTYPE=bf16 STRATEGIES="full_shard ddp" PRECISIONS="fp32" STEPS=20 DEVICES=0,1 DE_DIR="$W/de" \
		timeout -s KILL 300 bash tests/gpu/dist_equal.sh "$B"
	rc=$?
	echo "dist_equal rc=$rc"
	[ $rc -eq 0 ] || fail=1
fi
part 3 || { echo "device_verify_reduce_dtype: $([ $fail -eq 0 ] && echo PASS || echo FAIL)"; exit $fail; }

echo "== 3. speed: world 2, batch 64, 20 steps (default model, bf16 autocast), rank 0, steps 6-20"
printf '%-10s %-5s %12s %10s %12s %14s %14s %s\n' strategy red step_p50_ms comm_ms exp_comm_ms \
	jsonl_MB/step analyze_MB/step loss_last
for strat in full_shard ddp; do
	for rd in fp32 bf16; do
		d=$W/${strat}_$rd
		extra=""
		[ "$strat" = ddp ] && extra="distributed.mode=ddp"
		# shellcheck disable=SC2086
		CUDA_VISIBLE_DEVICES=0,1 timeout -s KILL 100 $A train -q --override training.max_steps=20 \
			training.batch_size=64 training.output_dir="$d" fsdp.reduce_dtype=$rd profiling.enabled=false \
			compile.enabled=false training.log_interval=5 $extra > "$d.txt" 2>&1
		rc=$?
		if [ $rc -ne 0 ]; then
			echo "$strat $rd: aorta train exited $rc"; tail -n 5 "$d.txt"; fail=1; continue
		fi
		timeout -s KILL 60 $A analyze -q --skip-steps 5 --json "$d.analyze.json" "$d/rank_00_metrics.jsonl" ||
			{ echo "$strat $rd: analyze failed"; fail=1; continue; }
		python3 - "$strat" "$rd" "$d/rank_00_metrics.jsonl" "$d.analyze.json" <<'EOF'
import json, statistics, sys
strat, rd, jl, an = sys.argv[1:5]
per_step, loss = [], None
with open(jl) as f:
    for i, line in enumerate(f):
        o = json.loads(line)
        loss = o.get("loss")
        if i < 5:
            continue
        b = 0
        for r in o["profile"]["ranges"]:
            md = r.get("metadata") or {}
            if md.get("function") in ("reduce_scatter", "all_reduce", "all_gather") and "bytes" in md:
                b += md["bytes"]
        per_step.append(b)
a = json.load(open(an))["ranks"][0]
st = a["step_stats"]
nsteps = len(a.get("steps", [])) or 1
ab = sum((c.get("bytes") or 0) * (c.get("count") or 0) for c in a.get("collectives", []))
print("%-10s %-5s %12.3f %10.3f %12.3f %14.2f %14.2f %.5f" % (
    strat, rd, st["step_ms"]["p50"], st["comm_ms"]["p50"], st["exposed_comm_ms"]["p50"],
    (statistics.median(per_step) if per_step else 0) / 1e6, ab / nsteps / 1e6, loss))
for c in a.get("collectives", []):
    print("    %-15s %12d B x %4d  total %8.3f ms  busbw %8.2f GB/s" % (
        c["type"], c.get("bytes") or 0, c.get("count") or 0, c.get("total_ms") or 0, c.get("busbw_gbps") or 0))
EOF
		cat "$d"/rank0.log "$d.txt" 2>/dev/null | grep -m1 "reduce_dtype" | sed 's/^/    log: /'
		[ -n "${OUT:-}" ] && cp "$d.analyze.json" "$OUT/${strat}_$rd.analyze.json" 2>/dev/null
	done
done
echo "device_verify_reduce_dtype: $([ $fail -eq 0 ] && echo PASS || echo FAIL)"
exit $fail
