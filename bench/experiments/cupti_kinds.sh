#!/usr/bin/env bash
# bench/experiments/cupti_kinds.sh - which CUPTI activity kind slows the profiled steps
# (mpirun -np 4, full_shard, batch 8 and 64).  Needs a build with
# cupti_kinds.patch applied (AORTA_CUPTI_SKIP: r = runtime calls, k = kernels,
# m = copies and memsets left out); see README.md.  Prints rank 0's step windows
# (profile.total_ms) of steps 8-21 per run; the window is steps 12-17.
set -u
mkdir -p /tmp/exp
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 NCCL_NVLS_ENABLE=0 AORTA_COMM_TIMEOUT_MS=20000
A=./build/aorta
for bs in 8 64; do
for sk in none r k m rm; do
	d=/tmp/exp/${bs}_$sk; s=$sk; [ $sk = none ] && s=""
	AORTA_CUPTI_SKIP=$s timeout -s KILL 60 mpirun --allow-run-as-root -np 4 -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE \
		-x AORTA_COMM_TIMEOUT_MS -x AORTA_CUPTI_SKIP $A train -q --override training.max_steps=24 training.batch_size=$bs \
		training.output_dir="$d" profiling.enabled=true profiling.wait=10 profiling.warmup=2 \
		profiling.active=6 profiling.repeat=1 > $d.txt 2>&1 || echo "rc=$?"
	python3 - "$d/rank_00_metrics.jsonl" "$bs $sk" <<'PY'
import json, sys
st = []
for l in open(sys.argv[1]):
    l = l.strip()
    if l.startswith("{"):
        d = json.loads(l)
        if "profile" in d: st.append((d["step"], d["profile"]["total_ms"]))
print(sys.argv[2], " ".join("%d:%.1f" % s for s in st[8:22]))
PY
done
done
