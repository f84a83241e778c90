#!/usr/bin/env bash
# bench/gpu_layout/run.sh OLD_DIR NEW_DIR - on a 2-GPU machine, from the
# repository root, in one device call: does the GPU-layout change (issue 18)
# keep every GPU test passing and every figure within noise?  OLD_DIR and
# NEW_DIR each hold build.tgz from bench/gpu_layout/build_carry.sh (aorta,
# libaorta-gpu.so, gpu-tests/test_*).  Old and new alternate in every phase
# (A B B A where there are two runs each) so drift hits both alike:
#   tests2  every GPU test (tests/gpu/run.sh) on both GPUs, old then new
#   tests1  every GPU test on one GPU (CUDA_VISIBLE_DEVICES=0 for old, =1 for
#           new, at the same time: correctness only, nothing timed there)
#   train   aorta train, 1 GPU and 2 GPUs (threads), STEPS steps of batch 8:
#      median step time (recorder) and host wall per step
#   hwq     aorta hwq launch rates (bench/hwq_speed's configurations):
#      tiny_kernel_stress 1 and 16 streams and hetero_kernels 8, direct
#      launches, and tiny_kernel_stress 1 as a CUDA-graph replay: kernels/s
#   tunetp  aorta tune-tp TP 2, Llama-3-8B fc1 and fc2, 3 SM points, 10 iterations:
#      best configuration's e2e time per operator
# SANITIZER=1 adds compute-sanitizer memcheck --leak-check full of the new
# test_trainer (about a minute more; off by default).
# PHASES (default "train hwq tunetp tests2 tests1") picks and orders them.
# Every command has its own timeout and the script stops starting phases
# when BUDGET_S (default 470 s) is near, saying what it skipped.  Logs,
# JSON and the table (table.txt, printed last) under OUT (default /tmp/gpu_layout).
set -u
OLDD=${1:?usage: run.sh OLD_DIR NEW_DIR}
NEWD=${2:?usage: run.sh OLD_DIR NEW_DIR}
O=${OUT:-/tmp}/gpu_layout
BUDGET_S=${BUDGET_S:-470}
STEPS=${STEPS:-60}
mkdir -p "$O"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0 AORTA_GPU_TEST_BENCH=0
T0=$(date +%s)
left() { echo $((BUDGET_S - ($(date +%s) - T0))); }
can() { # phase needs-seconds
	if [ "$(left)" -lt "$2" ]; then
		echo "SKIPPED (time budget): $1" | tee -a "$O/skipped.txt"
		return 1
	fi
}
for v in old new; do
	d=$OLDD; [ $v = new ] && d=$NEWD
	rm -rf "/tmp/gl_$v" && mkdir -p "/tmp/gl_$v"
	tar xzf "$d/build.tgz" -C "/tmp/gl_$v" || { echo "cannot unpack $d/build.tgz"; exit 3; }
	echo "$v: $(cat "$d/REV" 2>/dev/null || echo '?')" | tee -a "$O/revs.txt"
done
B_old=/tmp/gl_old/b B_new=/tmp/gl_new/b
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee "$O/gpus.txt"

# ---- 1, 2: GPU tests
gpu_tests() { # version label env...
	local v=$1 lab=$2; shift 2
	local b; b=$(eval echo "\$B_$v")
	local t=$(date +%s)
	env "$@" timeout -s KILL 200 bash tests/gpu/run.sh "$b" >"$O/tests_${lab}_$v.log" 2>&1
	echo "$? $(( $(date +%s) - t ))" >"$O/tests_${lab}_$v.rc"
}
phase_tests2() {
	for v in old new; do
		can "GPU tests on 2 GPUs ($v)" 150 && gpu_tests $v 2gpu
	done
}
phase_tests1() {
	if can "GPU tests on 1 GPU" 120; then
		gpu_tests old 1gpu CUDA_VISIBLE_DEVICES=0 &
		gpu_tests new 1gpu CUDA_VISIBLE_DEVICES=1 &
		wait
	fi
}

# ---- 3: aorta train
train() { # version gpus rep
	local v=$1 g=$2 r=$3 b; b=$(eval echo "\$B_$v")
	local vis=0; [ "$g" = 2 ] && vis=0,1
	CUDA_VISIBLE_DEVICES=$vis timeout -s KILL 90 "$b/aorta" train -q --override training.max_steps=$STEPS \
		training.batch_size=8 profiling.enabled=false training.output_dir="/tmp/gl_train_${v}_$g" \
		>"$O/train_${g}gpu_${v}_r$r.txt" 2>&1
}
phase_train() {
	for g in 1 2; do
		for r in 1 2; do
			order="old new"; [ $r = 2 ] && order="new old"
			for v in $order; do
				can "aorta train $g GPU ($v, run $r)" 40 && train $v $g $r
			done
		done
	done
}

# ---- 4: aorta hwq launch rates
hwq() { # version rep name workload streams iterations extra...
	local v=$1 r=$2 n=$3 w=$4 s=$5 it=$6 b; shift 6
	b=$(eval echo "\$B_$v")
	CUDA_VISIBLE_DEVICES=0 timeout -s KILL 60 "$b/aorta" hwq run "$w" -s "$s" -i "$it" -w 10 --timing-iters 0 -q \
		--sync-mode end_only "$@" -o "$O/hwq_${n}_${v}_r$r.json" >"$O/hwq_${n}_${v}_r$r.txt" 2>&1
}
phase_hwq() {
	for r in 1 2; do
		order="old new"; [ $r = 2 ] && order="new old"
		for v in $order; do
			can "aorta hwq ($v, run $r)" 25 || continue
			# iterations as bench/hwq_speed (400 for one stream, else 100)
			hwq $v $r tiny1 tiny_kernel_stress 1 400
			hwq $v $r tiny16 tiny_kernel_stress 16 100
			hwq $v $r hetero8 hetero_kernels 8 100
			hwq $v $r tiny1graph tiny_kernel_stress 1 400 --graph
		done
	done
}

# ---- 5: aorta tune-tp TP 2
phase_tunetp() {
	for v in old new; do
		can "aorta tune-tp TP 2 ($v)" 60 || continue
		b=$(eval echo "\$B_$v")
		rm -rf "$O/tunetp_$v"
		CUDA_VISIBLE_DEVICES=0,1 timeout -s KILL 120 "$b/aorta" tune-tp --model-name llama-3-8b --max-tp-size 2 \
			--operators fc1 fc2 --sm-points 3 --iters 10 --warmup 3 --no-trace -q --output-dir "$O/tunetp_$v" \
			>"$O/tunetp_$v.txt" 2>&1
		echo "exit $?" >>"$O/tunetp_$v.txt"
	done
}

# ---- the phases, in PHASES order (default: the bounded measurements first,
# then the test suites, which take what is left of the budget; a second call
# with PHASES="tests2 tests1" runs what was skipped)
for ph in ${PHASES:-train hwq tunetp tests2 tests1}; do
	"phase_$ph"
done

# ---- optional (SANITIZER=1): the new trainer's open/step/close cycles under
# compute-sanitizer's memcheck with leak checking (device allocations left
# at exit, bad accesses); its summary goes to the table
if [ "${SANITIZER:-0}" = 1 ] && command -v compute-sanitizer >/dev/null && can "compute-sanitizer test_trainer" 100; then
	CUDA_VISIBLE_DEVICES=0 timeout -s KILL 90 compute-sanitizer --tool memcheck --leak-check full \
		"$B_new/gpu-tests/test_trainer" >"$O/sanitizer_test_trainer.log" 2>&1
	echo "exit $?" >>"$O/sanitizer_test_trainer.log"
fi
echo "total $(( $(date +%s) - T0 )) s" >"$O/elapsed.txt"

# ---- the table
python3 - "$O" <<'PY' | tee "$O/table.txt"
import glob, json, os, re, statistics, sys
d = sys.argv[1]
def rd(p):
    try:
        return open(os.path.join(d, p)).read()
    except OSError:
        return None
rows = []
def row(what, unit, old, new, better="lower"):
    o = statistics.median(old) if old else None
    n = statistics.median(new) if new else None
    ratio = f"{n / o:.3f}" if o and n else "-"
    f = lambda x: "-" if x is None else (f"{x:.4g}")
    rows.append(f"| {what} | {unit} | {f(o)} | {f(n)} | {ratio} | {better} | "
                f"{' '.join(f'{x:.4g}' for x in old) or '-'} / {' '.join(f'{x:.4g}' for x in new) or '-'} |")
print("revs:", " ".join((rd("revs.txt") or "").split()))
print("gpus:", "; ".join((rd("gpus.txt") or "").strip().splitlines()))
print("elapsed:", (rd("elapsed.txt") or "?").strip())
print()
print("| GPU tests | old | new |")
print("|---|---|---|")
for lab in ("2gpu", "1gpu"):
    cells = []
    for v in ("old", "new"):
        log, rc = rd(f"tests_{lab}_{v}.log"), rd(f"tests_{lab}_{v}.rc")
        if log is None:
            cells.append("not run")
            continue
        m = re.findall(r"^(\d+) passed, (\d+) failed, (\d+) skipped\s*$", log, re.M)
        fails = re.findall(r"^\s*FAIL(?:ED)?[: ].*$", log, re.M)
        s = f"{m[-1][0]} passed, {m[-1][1]} failed, {m[-1][2]} skipped" if m else "no summary"
        r = (rc or "? ?").split()
        cells.append(f"{s} (exit {r[0]}, {r[1] if len(r) > 1 else '?'} s)" + (f"; {len(fails)} FAIL lines" if fails else ""))
    print(f"| {lab} | {cells[0]} | {cells[1]} |")
print()
print("| measure | unit | old | new | new/old | better | runs old / new |")
print("|---|---|---|---|---|---|---|")
for g in (1, 2):
    med, wall = {"old": [], "new": []}, {"old": [], "new": []}
    for v in ("old", "new"):
        for p in sorted(glob.glob(os.path.join(d, f"train_{g}gpu_{v}_r*.txt"))):
            m = re.search(r"median step ([\d.]+) ms \(host wall ([\d.]+) ms\)", open(p).read())
            if m:
                med[v].append(float(m.group(1)))
                wall[v].append(float(m.group(2)))
    row(f"aorta train {g} GPU, median step", "ms", med["old"], med["new"])
    row(f"aorta train {g} GPU, host wall per step", "ms", wall["old"], wall["new"])
for n, label in (("tiny1", "hwq tiny_kernel_stress 1 stream"), ("tiny16", "hwq tiny_kernel_stress 16 streams"),
                 ("hetero8", "hwq hetero_kernels 8 streams"), ("tiny1graph", "hwq tiny_kernel_stress 1, --graph")):
    k = {"old": [], "new": []}
    for v in ("old", "new"):
        for p in sorted(glob.glob(os.path.join(d, f"hwq_{n}_{v}_r*.json"))):
            try:
                k[v].append(float(json.load(open(p))["kernels_per_second"]) / 1e3)
            except Exception:
                pass
    row(label, "kernels/ms", k["old"], k["new"], "higher")
def tp_best(v):
    best = {}
    for p in glob.glob(os.path.join(d, f"tunetp_{v}", "**", "*.json"), recursive=True):
        try:
            j = json.load(open(p))
        except Exception:
            continue
        stack = [j]
        while stack:
            x = stack.pop()
            if isinstance(x, dict):
                if "operator" in x and "e2e_ms" in x and x.get("tp_size", 2) == 2:
                    try:
                        e = float(x["e2e_ms"])
                    except (TypeError, ValueError):
                        e = None
                    if e and e > 0:
                        key = (x["operator"], x.get("phase", ""))
                        best[key] = min(best.get(key, e), e)
                stack.extend(x.values())
            elif isinstance(x, list):
                stack.extend(x)
    return best
bo, bn = tp_best("old"), tp_best("new")
for key in sorted(set(bo) | set(bn)):
    row(f"tune-tp TP 2 {key[0]} {key[1]}, best e2e", "ms", [bo[key]] if key in bo else [], [bn[key]] if key in bn else [])
print("\n".join(rows))
san = rd("sanitizer_test_trainer.log")
if san:
    summ = [l for l in san.splitlines() if "ERROR SUMMARY" in l or "LEAK SUMMARY" in l or l.startswith("exit ")]
    print("\ncompute-sanitizer test_trainer (new): " + "; ".join(summ[-3:]))
sk = rd("skipped.txt")
if sk:
    print("\n" + sk.strip())
PY
