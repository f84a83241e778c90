# Summarises bench/train_speed/run.sh output: step time vs the peer, GPU busy
# share, kernel time per step from both traces, instrumentation cost.
import glob, json, os, re, subprocess, sys

out = sys.argv[1]
A = "./build/aorta"

def analyze(path):
    j = os.path.join(out, "an_%d.json" % abs(hash(path)))
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

print("gpu:", open(os.path.join(out, "gpu.txt")).read().strip())
for B in (8, 64):
    ours = open(os.path.join(out, "ours_b%d.txt" % B)).read()
    unins = open(os.path.join(out, "unins_b%d.txt" % B)).read()
    m = re.search(r"median step ([0-9.]+) ms \(host wall ([0-9.]+) ms\)", ours)
    u = re.search(r"host wall ([0-9.]+) ms", unins)
    loss = re.search(r"loss ([0-9.]+) -> ([0-9.]+)", ours)
    try:
        peer = json.loads(open(os.path.join(out, "peer_b%d.json" % B)).read().strip().splitlines()[-1])
    except Exception as ex:
        peer = {"median_step_ms": float("nan"), "error": str(ex)}
    print("\n== batch %d" % B)
    if not m:
        print("aorta train failed:", ours[-2000:])
        continue
    ev_ms, wall = float(m.group(1)), float(m.group(2))
    print("aorta step (events) %.3f ms, host wall %.3f ms; uninstrumented wall %s ms" % (ev_ms, wall, u.group(1) if u else "?"))
    if u:
        print("instrumentation cost: %+.2f%% of the step" % (100.0 * (wall - float(u.group(1))) / float(u.group(1))))
    print("loss %s -> %s" % (loss.group(1), loss.group(2)) if loss else "loss ?")
    print("pytorch eager %.3f ms -> aorta is %.2fx faster (wall vs wall)" % (peer["median_step_ms"], peer["median_step_ms"] / wall))
    traces = glob.glob(os.path.join(out, "ours_b%d" % B, "torch_profiler", "rank0", "*.json*"))
    pt = glob.glob(os.path.join(out, "peer_b%d" % B, "*.json"))
    if traces:
        d, err = analyze(traces[-1])
        if d:
            k, busy, n = kernel_ms_per_step(d)
            print("ours: kernel time %.3f ms/step over %d traced steps; GPU busy %.1f%% of the step windows" % (k, n, 100 * busy))
        else:
            print("ours: trace not analysable:", err)
            k = float("nan")
    else:
        print("ours: no trace written"); k = float("nan")
    if pt:
        dp, err = analyze(pt[0])
        if dp:
            kp, busyp, n2 = kernel_ms_per_step(dp)
            print("peer: kernel time %.3f ms/step over %d steps; GPU busy %.1f%%" % (kp, n2, 100 * busyp))
            print("kernel time ratio ours/peer: %.2f (target <= 1.3)" % (k / kp))
        else:
            print("peer: trace not analysable:", err)
