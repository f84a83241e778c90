#!/usr/bin/env bash
# One device call that verifies the GPU side and measures it (run by the
# developer through the device tool, from the repo root, with build/aorta,
# build/libaorta-gpu.so and build/gpu-tests carried).  SECTIONS picks parts (default all):
#   tests  GPU tests: every gpu_* op and a whole step against the CPU
#          reference, the runtime (streams, recorder, NVML, CUPTI)
#   runs   short training runs in fp32 / bf16 / fp16 / accumulation, then
#          'aorta analyze' of the run's JSONL and of its CUPTI trace
#   graph  compile.enabled (the step as a CUDA graph) against eager with the
#          same seed: losses (max relative difference over the first 10 and
#          all steps), the JSONL ranges' shape, gradient accumulation 4, a
#          forced capture failure (AORTA_TRAIN_GRAPH_FAIL=1: logs the reason,
#          runs eagerly), and uninstrumented graph mode
#   speed  bench/train_speed (eager and graph, batch 8 then 64; SPEED_PEER=1
#          adds the PyTorch peer)
# Everything is written under $WORK (default /tmp/aorta_verify); the few
# files worth keeping are copied to $OUT.
set -u
FINAL=${OUT:-device_out}
OUT=${WORK:-/tmp/aorta_verify}
mkdir -p "$OUT" "$FINAL"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
A=./build/aorta
SECTIONS=${SECTIONS:-tests runs graph speed}
has() { case " $SECTIONS " in *" $1 "*) return 0 ;; esac; return 1; }

# losses and range shapes of two runs' JSONL: eager (first) vs graph (second)
compare_runs() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
name, a, b = sys.argv[1:4]
def load(p):
    return {r["global_step"]: r for r in map(json.loads, open(p))}
ea, gr = load(a), load(b)
steps = sorted(set(ea) & set(gr))
def rel(s):
    x, y = ea[s]["loss"], gr[s]["loss"]
    return abs(x - y) / max(abs(x), 1e-12)
first = [s for s in steps if s < 10]
print("%s: %d common steps; eager loss %s" % (name, len(steps), " ".join("%.6f" % ea[s]["loss"] for s in first)))
print("%s: graph loss %s" % (name, " ".join("%.6f" % gr[s]["loss"] for s in first)))
print("%s: max relative loss difference: first 10 steps %.3e, all %d steps %.3e (last loss eager %.6f graph %.6f)" % (
    name, max(map(rel, first)), len(steps), max(map(rel, steps)), ea[steps[-1]]["loss"], gr[steps[-1]]["loss"]))
def shape(r):
    p = r["profile"]
    cut = lambda t: t.split("_", 2)[-1]
    return ([(g["stream"], cut(g["tag"]), g["metadata"].get("kind")) for g in p["ranges"]],
            [(m["stream"], cut(m["tag"])) for m in p["markers"]])
s5 = steps[min(5, len(steps) - 1)]
same = shape(ea[s5]) == shape(gr[s5])
print("%s: JSONL ranges/markers of step %d: %s; eager %s" % (name, s5, "same shape" if same else "DIFFER", shape(ea[s5])))
if not same:
    print("%s: graph %s" % (name, shape(gr[s5])))
for k in ("total_ms",):
    print("%s: step %d total_ms eager %s graph %s" % (name, s5, ea[s5]["profile"].get(k), gr[s5]["profile"].get(k)))
PY
}

{
	nvidia-smi -L
	if has tests; then
		echo "== gpu tests"
		AORTA_GPU_TEST_BENCH=0 bash tests/gpu/run.sh build
	fi
	if has runs; then
		echo "== short runs"
		for p in fp32 bf16 fp16; do
			$A train -q --override training.max_steps=40 training.mixed_precision=$p \
				training.output_dir="$OUT/run_$p" training.log_interval=10 || echo "TRAIN $p FAILED"
		done
		$A train --override training.max_steps=30 training.gradient_accumulation=4 training.batch_size=4 \
			training.output_dir="$OUT/run_accum" training.log_interval=10 --enable-gpu-metrics || echo "TRAIN accum FAILED"
		$A train -q --override training.max_steps=300 scheduler.warmup_steps=20 optimizer.lr=1e-3 \
			training.output_dir="$OUT/run_long" profiling.enabled=true profiling.wait=50 profiling.warmup=2 \
			profiling.active=3 || echo "TRAIN long FAILED"
		echo "== analyze the run's JSONL and trace"
		$A analyze "$OUT/run_long/rank_00_metrics.jsonl" --skip-steps 5 | head -40
		$A analyze "$OUT/run_long/torch_profiler" --json "$OUT/run_long_trace_analysis.json" | head -60
		tail -n 1 "$OUT/run_accum/rank_00_metrics.jsonl" | head -c 3000; echo
	fi
	if has graph; then
		echo "== graph mode (compile.enabled) vs eager, same seed"
		G="$OUT/graph"
		rm -rf "$G"; mkdir -p "$G"
		for p in bf16 fp32 fp16; do
			for m in eager graph; do
				c=false; [ $m = graph ] && c=true
				$A train -q --override training.max_steps=40 training.mixed_precision=$p compile.enabled=$c \
					training.output_dir="$G/${p}_$m" training.log_interval=10 || echo "TRAIN $p $m FAILED"
			done
			grep -h "compile.enabled" "$G/${p}_graph/rank0.log"
			compare_runs "$p" "$G/${p}_eager/rank_00_metrics.jsonl" "$G/${p}_graph/rank_00_metrics.jsonl"
		done
		for m in eager graph; do
			c=false; [ $m = graph ] && c=true
			$A train -q --override training.max_steps=20 training.gradient_accumulation=4 training.batch_size=4 \
				compile.enabled=$c training.output_dir="$G/accum_$m" || echo "TRAIN accum $m FAILED"
		done
		grep -h "compile.enabled" "$G/accum_graph/rank0.log"
		compare_runs "accum4" "$G/accum_eager/rank_00_metrics.jsonl" "$G/accum_graph/rank_00_metrics.jsonl"
		echo "-- forced capture failure"
		AORTA_TRAIN_GRAPH_FAIL=1 $A train -q --override training.max_steps=20 compile.enabled=true \
			training.output_dir="$G/forced_fail"; echo "exit $?"
		grep -h "compile.enabled" "$G/forced_fail/rank0.log"
		compare_runs "forced-fail" "$G/bf16_eager/rank_00_metrics.jsonl" "$G/forced_fail/rank_00_metrics.jsonl"
		echo "-- uninstrumented graph"
		AORTA_TRAIN_UNINSTRUMENTED=1 $A train -q --override training.max_steps=40 compile.enabled=true \
			training.output_dir="$G/unins_graph"; echo "exit $?"
		grep -h "compile.enabled" "$G/unins_graph/rank0.log"
		tail -n 1 "$G/bf16_graph/rank_00_metrics.jsonl" | head -c 2500; echo
	fi
	if has speed; then
		echo "== speed"
		for B in 8 64; do
			r=2; n=${STEPS:-200}; [ $B = 64 ] && r=1 && n=$((n / 2))
			BATCHES=$B PEER=${SPEED_PEER:-0} STEPS=$n REPS=$r bash bench/train_speed/run.sh "$OUT/speed$B"
			cp "$OUT/speed$B/summary.txt" "$FINAL/speed_summary_b$B.txt" 2>/dev/null
		done
	fi
} 2>&1 | tee "$FINAL/log.txt"
cp "$OUT/run_long/rank_00_metrics.jsonl" "$FINAL/run_long_metrics.jsonl" 2>/dev/null
cp "$OUT/run_long_trace_analysis.json" "$FINAL/" 2>/dev/null
cp "$OUT/run_accum/rank_00_metrics.jsonl" "$FINAL/run_accum_metrics.jsonl" 2>/dev/null
for f in bf16_eager bf16_graph accum_graph forced_fail; do
	[ -f "$OUT/graph/$f/rank_00_metrics.jsonl" ] && head -n 12 "$OUT/graph/$f/rank_00_metrics.jsonl" > "$FINAL/graph_$f.jsonl"
	cp "$OUT/graph/$f/rank0.log" "$FINAL/graph_$f.log" 2>/dev/null
done
t=$(ls "$OUT"/run_long/torch_profiler/rank0/*.json* 2>/dev/null | head -n 1)
[ -n "$t" ] && gzip -c "$t" > "$FINAL/run_long_trace.json.gz"
exit 0
