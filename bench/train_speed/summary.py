# Summarises bench/train_speed/run.sh output, per batch size and mode
# (eager, graph = compile.enabled):
#   step     median step by the recorder's events (ms), mean over the REPS runs
#   wall     median host wall per step, instrumented (ms)
#   unins    median host wall per step with AORTA_TRAIN_UNINSTRUMENTED=1 (ms)
#   instr    instrumentation cost = (wall - unins) / unins
#   kern     kernel time per step in the CUPTI trace of the profiled run (sum of
#            kernel durations / traced steps); for graph mode, when its trace
#            holds no kernels, the eager trace's (the same kernels run)
#   busy_k   kern / step: the share of the step the GPU runs kernels (kernels on
#            different streams rarely overlap in this step, so this is close to
#            the union)
#   busy_t   the analyzer's busy share of the traced step windows
# and, when run.sh ran it, the PyTorch eager peer.
import glob, json, os, re, statistics, subprocess, sys

out = sys.argv[1]
A = "./build/aorta"
batches = [int(b) for b in os.environ.get("BATCHES", "8 64").split()]


def analyze(path):
    j = os.path.join(out, "an_%s.json" % re.sub(r"[^A-Za-z0-9]+", "_", os.path.relpath(path, out)))
    r = subprocess.run([A, "analyze", "-q", "--top", "1000000", "--json", j, path], capture_output=True, text=True)
    if r.returncode:
        return None, r.stderr.strip()
    return json.load(open(j)), None


def kernel_ms_per_step(doc):
    r = doc["ranks"][0]
    total = sum(k["total_ms"] for k in r["top_kernels"])
    nsteps = max(1, len(r["steps"]))
    busy = r["steps_total"]["busy_ms"] / max(r["steps_total"]["step_ms"], 1e-9) if r["steps"] else float("nan")
    return total / nsteps, busy, nsteps


def medians(pattern):
    """(events step ms, host wall ms) of every run matching pattern."""
    ev, wall = [], []
    for f in sorted(glob.glob(os.path.join(out, pattern))):
        t = open(f).read()
        m = re.search(r"median step ([0-9.]+) ms \(host wall ([0-9.]+) ms\)", t)
        if m:
            ev.append(float(m.group(1)))
            wall.append(float(m.group(2)))
        else:
            print("  run failed: %s: %s" % (os.path.basename(f), t.strip()[-600:]))
    return ev, wall


def mean(v):
    return statistics.fmean(v) if v else float("nan")


def trace_of(mode, B):
    t = glob.glob(os.path.join(out, "%s_prof_b%d" % (mode, B), "torch_profiler", "rank0", "*.json*"))
    if not t:
        return None
    d, err = analyze(sorted(t)[-1])
    if not d:
        print("  %s trace not analysable: %s" % (mode, err))
        return None
    return kernel_ms_per_step(d)


print("gpu:", open(os.path.join(out, "gpu.txt")).read().strip())
for B in batches:
    print("\n== batch %d" % B)
    rows = {}
    for mode in ("eager", "graph"):
        ev, wall = medians("%s_instr_b%d_r*.txt" % (mode, B))
        _, uw = medians("%s_unins_b%d_r*.txt" % (mode, B))
        rows[mode] = dict(step=mean(ev), wall=mean(wall), unins=mean(uw), runs=(wall, uw), trace=trace_of(mode, B))
        log = os.path.join(out, "%s_instr_b%d.log" % (mode, B))
        if mode == "graph" and os.path.exists(log):
            for line in open(log):
                if "compile.enabled" in line:
                    print("  graph log:", line.split("aorta.train | ", 1)[-1].strip())
                    break
    ek = rows["eager"]["trace"][0] if rows["eager"]["trace"] else float("nan")
    print("%-6s %9s %9s %9s %8s %9s %8s %8s" % ("mode", "step ms", "wall ms", "unins ms", "instr %",
                                                 "kern ms", "busy_k %", "busy_t %"))
    for mode, r in rows.items():
        tr = r["trace"]
        kern, busy_t, src = (tr[0], tr[1], "") if tr and tr[0] > 0 else (ek, float("nan"), "*")
        cost = 100.0 * (r["wall"] - r["unins"]) / r["unins"] if r["unins"] == r["unins"] else float("nan")
        print("%-6s %9.3f %9.3f %9.3f %+8.2f %8.3f%1s %8.1f %8.1f" % (mode, r["step"], r["wall"], r["unins"], cost,
                                                                   kern, src, 100.0 * kern / r["step"],
                                                                   100.0 * busy_t))
        print("       runs: wall %s, unins %s" % (["%.3f" % w for w in r["runs"][0]], ["%.3f" % w for w in r["runs"][1]]))
    if rows["graph"]["wall"] == rows["graph"]["wall"]:
        print("graph vs eager: step %.3f -> %.3f ms by events (%.2fx), host wall %.3f -> %.3f ms (%.2fx)" % (
            rows["eager"]["step"], rows["graph"]["step"], rows["eager"]["step"] / rows["graph"]["step"],
            rows["eager"]["wall"], rows["graph"]["wall"], rows["eager"]["wall"] / rows["graph"]["wall"]))
    print("(* kernel time from the eager trace: the graph trace had none)")
    pj = os.path.join(out, "peer_b%d.json" % B)
    if os.path.exists(pj):
        try:
            peer = json.loads(open(pj).read().strip().splitlines()[-1])
            print("pytorch eager %.3f ms -> aorta graph is %.2fx faster (wall vs wall)" % (
                peer["median_step_ms"], peer["median_step_ms"] / rows["graph"]["wall"]))
            pt = glob.glob(os.path.join(out, "peer_b%d" % B, "*.json"))
            if pt:
                dp, err = analyze(pt[0])
                if dp:
                    kp, busyp, n2 = kernel_ms_per_step(dp)
                    print("peer: kernel time %.3f ms/step over %d steps; GPU busy %.1f%%; kernel time ratio "
                          "ours/peer %.2f (target <= 1.3)" % (kp, n2, 100 * busyp, ek / kp))
        except Exception as ex:
            print("peer: no result (%s)" % ex)
