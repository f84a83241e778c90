#!/usr/bin/env bash
# analyze speed and memory: aorta vs Holistic Trace Analysis on a >= 2 GB, 8-rank Kineto set.
# One command:  bench/analyze_speed/run.sh
#   1. generates bench/data/analyze_speed/{plain,gz} with gen.py if missing (8 ranks, >2 GB)
#   2. aorta on the plain set and on the gz set (REPS runs each, median), default threads
#   3. aorta -j 1 on one plain file and on its .gz (throughput per core, gz vs plain)
#   4. HTA (get_comm_comp_overlap + get_temporal_breakdown) on the plain set, in the background
#      (nohup), polled; killed and redone on a 2-rank subset if its memory passes HTA_LIMIT_GB
#   5. prints the figures and the ratios vs targets; everything lands in $OUT (bench/data/analyze_speed/results)
#   (also: the Kineto reader alone, per CPU-second, with scan_bench.sh: $OUT/scan_bench.txt)
# Env: REPS (3), HTA_LIMIT_GB (20), SKIP_HTA=1 (reuse the last HTA result)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$ROOT"
D="$ROOT/bench/data/analyze_speed"
OUT="$D/results"
REPS="${REPS:-3}"
HTA_LIMIT_GB="${HTA_LIMIT_GB:-20}"
VENV="$ROOT/bench/.venv"
M="$ROOT/bench/analyze_speed/measure.py"
mkdir -p "$OUT"

[ -x /usr/bin/time ] || { apt-get update -qq && apt-get install -y -qq time; }
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import hta, pandas' 2>/dev/null; then
	python3 -m venv "$VENV"
	"$VENV/bin/pip" install -q -r "$ROOT/bench/requirements.txt"
fi
[ -x build/aorta ] || make -j"$(nproc)" >/dev/null

n_plain=$(ls "$D"/plain/rank*.json 2>/dev/null | wc -l)
n_gz=$(ls "$D"/gz/rank*.json.gz 2>/dev/null | wc -l)
if [ "$n_plain" -lt 8 ] || [ "$n_gz" -lt 8 ]; then
	echo "== generating the benchmark set"
	python3 "$ROOT/bench/analyze_speed/gen.py" --out "$D"
fi
BIG=$(ls -S "$D"/plain/rank*.json | head -1)
BIGGZ="$D/gz/$(basename "$BIG").gz"

{
	echo "date: $(date -u +%FT%TZ)"
	echo "nproc: $(nproc)"
	grep -m1 'model name' /proc/cpuinfo
	grep MemTotal /proc/meminfo
	. /etc/os-release && echo "os: $PRETTY_NAME, kernel $(uname -r)"
	echo "aorta: $(git -C "$ROOT" rev-parse --short HEAD) (working tree; build/aorta $(stat -c %y build/aorta | cut -d. -f1))"
	echo "hta: $("$VENV/bin/pip" show traceinsight 2>/dev/null | awk '/^Version/{print $2}'), pandas $("$VENV/bin/python" -c 'import pandas; print(pandas.__version__)')"
	ls -l "$D"/plain "$D"/gz
} > "$OUT/machine.txt"
cat "$OUT/machine.txt"

echo "== warming the page cache"
cat "$D"/plain/*.json "$D"/gz/*.json.gz > /dev/null

run_reps() { # name, then the command
	local name="$1"; shift
	for i in $(seq 1 "$REPS"); do
		python3 "$M" --out "$OUT/$name.$i.json" -- "$@"
	done
}
echo "== aorta, plain set (default threads = $(nproc))"
run_reps aorta_plain build/aorta analyze -q --json "$OUT/aorta_plain.analysis.json" "$D/plain"
echo "== aorta, gz set"
run_reps aorta_gz build/aorta analyze -q --json "$OUT/aorta_gz.analysis.json" "$D/gz"
echo "== aorta -j 1, one plain file: $BIG"
run_reps aorta_1plain build/aorta analyze -q -j 1 --json "$OUT/aorta_1plain.analysis.json" "$BIG"
echo "== aorta -j 1, the same file gzipped"
run_reps aorta_1gz build/aorta analyze -q -j 1 --json "$OUT/aorta_1gz.analysis.json" "$BIGGZ"

# The reader alone, per CPU-second of its thread (steadier than wall time on a
# shared machine).
echo "== Kineto reader alone (scan_bench, CPU time of the reading thread)"
BUILD=build REPS="${REPS}" bench/analyze_speed/scan_bench.sh "$BIG" | tee "$OUT/scan_bench.txt" ||
	echo "   scan_bench failed"

# Fixed cost: the GPU build links cudart/cuBLAS/cuBLASLt/NCCL, which the loader maps at start-up.
echo "== aorta start-up RSS (tiny trace), GPU build and host-only build (make BUILD_GPU=0)"
HOSTB="$D/build-host"
rm -f "$OUT"/host_*.json
[ -x "$HOSTB/aorta" ] || make -s BUILD_GPU=0 BUILD="$HOSTB" -j"$(nproc)" "$HOSTB/aorta" >"$OUT/host_build.log" 2>&1 ||
	echo "   host-only build failed (tree being edited?), skipped: see $OUT/host_build.log"
TINY=/work/shared/data/kineto/hta/call_stack/backward_thread.json
run_reps aorta_tiny build/aorta analyze -q --json "$OUT/aorta_tiny.analysis.json" "$TINY"
if [ -x "$HOSTB/aorta" ]; then
	run_reps host_tiny "$HOSTB/aorta" analyze -q --json "$OUT/host_tiny.analysis.json" "$TINY"
	echo "== host-only build: plain set, and -j 1 on one plain file"
	run_reps host_plain "$HOSTB/aorta" analyze -q --json "$OUT/host_plain.analysis.json" "$D/plain"
	run_reps host_1plain "$HOSTB/aorta" analyze -q -j 1 --json "$OUT/host_1plain.analysis.json" "$BIG"
	run_reps host_1gz "$HOSTB/aorta" analyze -q -j 1 --json "$OUT/host_1gz.analysis.json" "$BIGGZ"
fi

if [ "${SKIP_HTA:-0}" != 1 ]; then
	echo "== HTA on the plain set (background; polled every 30 s)"
	rm -f "$OUT"/hta_full.json "$OUT"/hta_full.result.json "$OUT"/hta_subset.*
	nohup python3 "$M" --limit-gb "$HTA_LIMIT_GB" --interval 0.5 --out "$OUT/hta_full.json" -- \
		"$VENV/bin/python" "$ROOT/bench/hta_crosscheck/compare.py" hta-worker "$D/plain" "$OUT/hta_full.result.json" \
		> "$OUT/hta_full.log" 2>&1 &
	HPID=$!
	t0=$(date +%s)
	while kill -0 "$HPID" 2>/dev/null; do
		sleep 30
		echo "   HTA running, $(( $(date +%s) - t0 )) s"
	done
	if python3 -c "import json,sys; sys.exit(0 if json.load(open('$OUT/hta_full.json'))['killed_for_memory'] else 1)"; then
		echo "== HTA passed ${HTA_LIMIT_GB} GB: redoing it on ranks 0-1 and extrapolating"
		mkdir -p "$D/subset2"; rm -f "$D"/subset2/*
		ln -s "$D/plain/rank0.bench.pt.trace.json" "$D/plain/rank1.bench.pt.trace.json" "$D/subset2/"
		python3 "$M" --limit-gb "$HTA_LIMIT_GB" --interval 0.5 --out "$OUT/hta_subset.json" -- \
			"$VENV/bin/python" "$ROOT/bench/hta_crosscheck/compare.py" hta-worker "$D/subset2" "$OUT/hta_subset.result.json"
	fi
fi

python3 - "$D" "$OUT" "$BIG" "$BIGGZ" <<'EOF'
import glob, json, os, statistics, sys
D, OUT, BIG, BIGGZ = sys.argv[1:5]
MB = 1e6
def reps(name):
    rs = [json.load(open(p)) for p in sorted(glob.glob(f"{OUT}/{name}.[0-9]*.json"))]
    bad = [r for r in rs if r["rc"] != 0]
    if bad:
        print(f"!! {name}: {len(bad)} run(s) failed")
    return rs
def med(rs, k): return statistics.median(r[k] for r in rs)
plain = sorted(glob.glob(f"{D}/plain/*.json")); gz = sorted(glob.glob(f"{D}/gz/*.json.gz"))
tot = sum(map(os.path.getsize, plain)); totgz = sum(map(os.path.getsize, gz))
big = os.path.getsize(BIG); biggz = os.path.getsize(BIGGZ)
nproc = os.cpu_count()
ap, ag, a1, a1g = (reps(n) for n in ("aorta_plain", "aorta_gz", "aorta_1plain", "aorta_1gz"))
at, ht, hp, h1, h1g = (reps(n) for n in ("aorta_tiny", "host_tiny", "host_plain", "host_1plain", "host_1gz"))
an = json.load(open(f"{OUT}/aorta_plain.analysis.json"))
L = []
p = L.append
p(f"set: {len(plain)} ranks, {tot/MB:.1f} MB plain JSON (largest file {big/MB:.1f} MB), {totgz/MB:.1f} MB gz; aorta read {len(an['ranks'])} ranks")
p(f"{'run':34} {'wall s (median)':>16} {'min':>7} {'user s':>7} {'sys s':>6} {'peak RSS MB':>12} {'MB/s':>8}")
for name, rs, size in (("aorta plain set", ap, tot), ("aorta gz set", ag, tot),
                       ("aorta -j1 one plain file", a1, big), ("aorta -j1 same file .gz", a1g, big),
                       ("aorta tiny trace (start-up)", at, 1), ("host-only build: tiny trace", ht, 1),
                       ("host-only build: plain set", hp, tot), ("host-only: -j1 one plain file", h1, big),
                       ("host-only: -j1 same file .gz", h1g, big)):
    if not rs:
        continue
    w = med(rs, "wall_s")
    p(f"{name:34} {w:16.3f} {min(r['wall_s'] for r in rs):7.3f} {med(rs,'user_s'):7.2f} {med(rs,'sys_s'):6.2f} "
      f"{max(r['maxrss_kb'] for r in rs)/1024:12.1f} {(size/MB/w if w and size > 1 else 0):8.1f}")
hta = None
if os.path.exists(f"{OUT}/hta_full.json"):
    h = json.load(open(f"{OUT}/hta_full.json"))
    if not h["killed_for_memory"] and h["rc"] == 0:
        hta = dict(wall=h["wall_s"], rss=h["maxrss_kb"], pss=h["tree_peak_pss_kb"], how="measured on the full set")
    elif os.path.exists(f"{OUT}/hta_subset.json"):
        s = json.load(open(f"{OUT}/hta_subset.json"))
        sub = sum(os.path.getsize(f"{D}/plain/rank{i}.bench.pt.trace.json") for i in (0, 1))
        hta = dict(wall=s["wall_s"] * tot / sub, rss=s["maxrss_kb"], pss=s["tree_peak_pss_kb"],
                   how=f"EXTRAPOLATED from ranks 0-1 ({s['wall_s']:.0f} s x {tot/sub:.2f})")
    if hta:
        r = json.load(open(f"{OUT}/hta_full.result.json")) if os.path.exists(f"{OUT}/hta_full.result.json") else {}
        p(f"{'HTA plain set (' + hta['how'] + ')':34} {hta['wall']:16.1f}    user {h['user_s']} s sys {h['sys_s']} s; "
          f"largest process RSS {hta['rss']/1024:.0f} MB, whole tree peak PSS {hta['pss']/1024:.0f} MB; "
          f"{tot/MB/hta['wall']:.1f} MB/s; HTA load {r.get('load_s', 0):.1f} s, errors {r.get('errors')}")
wp, wg, w1, w1g = med(ap, "wall_s"), med(ag, "wall_s"), med(a1, "wall_s"), med(a1g, "wall_s")
def verdict(ok): return "PASS" if ok else "MISS"
p("")
p("ratio                                             value      target   verdict")
if hta:
    sp = hta["wall"] / wp
    p(f"aorta vs HTA speedup (plain set, wall)      {sp:11.1f}x    >= 100x   {verdict(sp >= 100)}")
mbs = big / MB / w1
p(f"aorta plain MB/s per core (-j 1, one file)  {mbs:11.1f}     >= 800    {verdict(mbs >= 800)}")
p(f"   (per CPU-second: {big/MB/(med(a1,'user_s')+med(a1,'sys_s')):.1f} MB/s; the gz run uses a 2nd thread to inflate)")
p(f"   (whole plain set: {tot/MB/wp:.1f} MB/s on {nproc} cores = {tot/MB/wp/nproc:.1f} MB/s per core)")
rm = max(r["maxrss_kb"] for r in ap) * 1024 / big
rm1 = max(r["maxrss_kb"] for r in a1) * 1024 / big
p(f"aorta peak RSS / largest file (plain set)   {rm:11.3f}     <= 0.25   {verdict(rm <= 0.25)}")
p(f"   (-j 1 one file: {rm1:.3f}; gz set: {max(r['maxrss_kb'] for r in ag)*1024/big:.3f})")
base = max(r["maxrss_kb"] for r in at)
p(f"   start-up RSS of the GPU build {base/1024:.0f} MB (CUDA libraries mapped); GPU build minus it: set "
  f"{(max(r['maxrss_kb'] for r in ap)-base)*1024/big:.3f}, one file {(max(r['maxrss_kb'] for r in a1)-base)*1024/big:.3f}")
if ht and hp and h1 and h1g:
  hb = max(r["maxrss_kb"] for r in ht)
  p(f"   host-only build start-up RSS {hb/1024:.0f} MB")
  p(f"   host-only build: plain set {max(r['maxrss_kb'] for r in hp)*1024/big:.3f}, -j 1 one file "
  f"{max(r['maxrss_kb'] for r in h1)*1024/big:.3f}")
  p(f"   host-only build -j 1: {big/MB/med(h1,'wall_s'):.1f} MB/s plain (user+sys {big/MB/(med(h1,'user_s')+med(h1,'sys_s')):.1f} MB/s per CPU-second), "
  f"gz/plain {med(h1,'wall_s')/med(h1g,'wall_s'):.3f}")
g = w1 / w1g
p(f"aorta gz speed / plain speed (-j 1, per file) {g:9.3f}     >= 0.8    {verdict(g >= 0.8)}")
p(f"   (whole sets: {wp/wg:.3f})")
txt = "\n".join(L)
print(txt)
open(f"{OUT}/summary.txt", "w").write(txt + "\n")
EOF
echo "results in $OUT (summary.txt, machine.txt, per-run JSON)"
