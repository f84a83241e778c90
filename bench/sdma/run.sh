#!/usr/bin/env bash
# bench/sdma/run.sh [BUILD] [OUTDIR] - aorta sdma on a GPU machine.
#
#   1. the GPU test program (BUILD/gpu-tests/test_sdma): every direction and
#      engine at small sizes, verified;
#   2. the CLI tests (tests/cli/sdma.sh), which on a GPU machine also check
#      the machine refusals (missing device, sizes that do not fit) and a
#      small --json run;
#   3. `aorta sdma` at its default sizes (4096^3 GEMM, 64 MiB, 20 + 3
#      iterations) for each direction (d2h h2d d2d p2p) and engine (copy
#      kernel), writing OUTDIR/sdma_<dir>_<engine>.{json,txt}; p2p with one
#      visible GPU must be refused with exit 2 before any GPU work;
#   4. a summary table from the JSON files (OUTDIR/summary.txt).
# BUILD defaults to build, OUTDIR to $OUT/sdma (the device tool's folder)
# or /tmp/sdma.  Exit 0 only if every step passed.
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
O=${2:-${OUT:-/tmp}/sdma}
mkdir -p "$O"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
fails=0
note() { echo "== $*" | tee -a "$O/log.txt"; }
failed() { fails=$((fails + 1)); echo "FAILED: $*" | tee -a "$O/log.txt"; }

nvidia-smi -L 2>&1 | tee "$O/gpus.txt"
nvidia-smi topo -m >"$O/topo.txt" 2>&1
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
note "$ngpu GPU(s); build $B"

note "GPU test"
timeout -s KILL 300 "$B/gpu-tests/test_sdma" >"$O/gpu_test.txt" 2>&1
rc=$?
cat "$O/gpu_test.txt"
[ "$rc" = 0 ] || failed "gpu-tests/test_sdma exit $rc"
grep -qE '^[0-9]+ passed, 0 failed' "$O/gpu_test.txt" || failed "gpu-tests/test_sdma summary"

note "CLI test"
AORTA_BIN="$B/aorta" timeout -s KILL 300 bash tests/cli/sdma.sh >"$O/cli_test.txt" 2>&1
rc=$?
cat "$O/cli_test.txt"
[ "$rc" = 0 ] || failed "tests/cli/sdma.sh exit $rc"

for dir in d2h h2d d2d p2p; do
	for eng in copy kernel; do
		name="sdma_${dir}_${eng}"
		note "aorta sdma --direction $dir --engine $eng"
		timeout -s KILL 120 "$B/aorta" sdma --direction "$dir" --engine "$eng" --json "$O/$name.json" \
			>"$O/$name.txt" 2>&1
		rc=$?
		cat "$O/$name.txt"
		if [ "$dir" = p2p ] && [ "$ngpu" -lt 2 ]; then
			if [ "$rc" = 2 ] && grep -q "needs two GPUs" "$O/$name.txt" && [ ! -e "$O/$name.json" ]; then
				note "p2p refused on one GPU, as it should be"
			else
				failed "$name on one GPU: exit $rc (expected 2, 'needs two GPUs', no JSON)"
			fi
			continue
		fi
		[ "$rc" = 0 ] || failed "$name exit $rc"
	done
done

note "summary"
python3 - "$O" <<'PY' 2>&1 | tee "$O/summary.txt"
import glob, json, os, sys
rows = []
bad = 0
for p in sorted(glob.glob(os.path.join(sys.argv[1], "sdma_*.json"))):
    d = json.load(open(p))
    assert d["schema"] == "aorta.sdma/1", p
    c, g, k, v = d["config"], d["gemm"], d["copy"], d["verification"]
    assert c["copy_bytes"] == c["copy_mb"] * 1048576, p
    n = c["iterations"] + c["cold_iters"]
    assert all(len(x) == n for x in d["iterations_ms"].values()), p
    # the averages exclude the cold iterations: recompute from the series
    it = d["iterations_ms"]
    for key, series in (("sequential_avg_ms", "sequential"), ("overlapped_avg_ms", "overlapped")):
        m = sum(it[series][c["cold_iters"]:]) / c["iterations"]
        if abs(m - d[key]) > 1e-4:
            print(f"{p}: {key} {d[key]} != mean of measured iterations {m}"); bad += 1
    if not v["passed"]:
        print(f"{p}: verification failed: {v}"); bad += 1
    rows.append((c["direction"], c["engine"], d["sequential_avg_ms"], d["overlapped_avg_ms"],
                 d["estimated_savings_pct"], g["alone_tflops"], g["together_tflops"], g["slowdown"],
                 k["alone_gbps"], k["together_gbps"], k["slowdown"], d["copy_hidden_pct"],
                 "ok" if v["passed"] else "FAIL"))
print(f"{'dir':4} {'engine':6} {'seq ms':>8} {'ovl ms':>8} {'save %':>7} {'GEMM TF/s':>10} "
      f"{'together':>9} {'slow':>6} {'copy GB/s':>10} {'together':>9} {'slow':>6} {'hidden%':>8} check")
for r in rows:
    print(f"{r[0]:4} {r[1]:6} {r[2]:8.3f} {r[3]:8.3f} {r[4]:7.2f} {r[5]:10.1f} {r[6]:9.1f} {r[7]:6.3f} "
          f"{r[8]:10.2f} {r[9]:9.2f} {r[10]:6.3f} {r[11]:8.1f} {r[12]}")
sys.exit(1 if bad or not rows else 0)
PY
[ "${PIPESTATUS[0]}" = 0 ] || failed "summary checks"

if [ "$fails" = 0 ]; then note "device_verify_sdma: all passed"; else note "device_verify_sdma: $fails failure(s)"; fi
[ "$fails" = 0 ]
