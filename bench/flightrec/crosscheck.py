#!/usr/bin/env python3
"""aorta's Flight Recorder diagnosis against torch's own analyzer
(python -m torch.distributed.flight_recorder.fr_trace) on the same dumps,
and against the truth where one is known: the ranks the faults were
injected on in the four nvrx hangs (nvidia-resiliency-ext's
tests/attribution/unit/fr_traces/*/fault_injection.log) and the planted
faults of tests/data/flightrec (their plan.json).

For each dump set: aorta's verdict group, op number and missing (or
mismatched) ranks, its culprits; torch's first "Not all ranks joining
collective" (or mismatch) block: group, sequence number, missing ranks,
or the error it stopped with; the wall time of each (median of --repeat).
Prints a Markdown table (bench/RESULTS.md "Flight Recorder").

    python3 bench/flightrec/crosscheck.py --torch-python /work/venv-torch/bin/python
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NVRX_TRUTH = {"gpu_error_1st": [12, 14], "gpu_error_2nd": [9, 14], "lock_gil_1st": [9, 14], "lock_gil_2nd": [10, 15]}


def timed(cmd, repeat):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        out = p
    return out, statistics.median(times)


def aorta(aorta_bin, d, repeat):
    with tempfile.TemporaryDirectory() as t:
        j = os.path.join(t, "a.json")
        p, s = timed([aorta_bin, "analyze", "-q", "-j", "1", "--json", j, d], repeat)
        if p.returncode:
            return {"error": p.stderr.strip().splitlines()[-1]}, s
        fr = json.load(open(j))["flight_recorder"]
    g = fr["groups"][0] if fr["groups"] else None
    dv = g["first_divergent"] if g else None
    r = {"verdict": fr["verdict"], "culprits": [c["rank"] for c in fr["culprits"]], "kind": fr["kind"]}
    if dv:
        r.update(group=g["pg_id"], seq=dv["collective_seq_id"] if dv["collective_seq_id"] is not None
                 else dv["p2p_seq_id"], missing=dv["missing_ranks"] or dv["mismatched_ranks"],
                 mismatch=dv["mismatch"])
    return r, s


def torch_fr(py, d, prefix, repeat):
    cmd = [py, "-m", "torch.distributed.flight_recorder.fr_trace", d]
    if prefix:
        cmd[3:3] = ["-p", prefix]
    p, s = timed(cmd, repeat)
    out = p.stdout + p.stderr
    if p.returncode:
        last = [l for l in out.splitlines() if l.strip()][-1]
        return {"error": last.strip()[:120]}, s
    m = re.search(r"Not all ranks joining collective, sequence number: (\d+).*?group info: ([^\n]*)\n.*?"
                  r"missing ranks: \{([^}]*)\}", out, re.S)
    if m:
        return {"seq": int(m.group(1)), "group": m.group(2).split(":")[0],
                "missing": sorted(int(x) for x in m.group(3).split(",") if x.strip())}, s
    m = re.search(r"Culprit rank (\d+); Error type: (\w+)", out)
    if m:
        return {"culprit": int(m.group(1)), "error_type": m.group(2)}, s
    return {"none": "no error reported"}, s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aorta", default=os.path.join(ROOT, "build", "aorta"))
    ap.add_argument("--torch-python", default=sys.executable)
    ap.add_argument("--shared", default=os.environ.get("AORTA_SHARED_DATA", os.path.join(ROOT, "..", "shared", "data")))
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    sets = []
    nv = os.path.join(a.shared, "flight-recorder", "nvrx")
    for h in sorted(NVRX_TRUTH):
        if os.path.isdir(os.path.join(nv, h)):
            sets.append((f"nvrx {h}", os.path.join(nv, h), "_dump_", NVRX_TRUTH[h]))
    fx = os.path.join(ROOT, "tests", "data", "flightrec")
    for sc in sorted(os.listdir(fx)):
        if os.path.isdir(os.path.join(fx, sc, "pickle")):
            x = json.load(open(os.path.join(fx, sc, "plan.json")))["expect"]
            sets.append((f"gloo {sc}", os.path.join(fx, sc, "pickle"), None, x.get("culprits", [])))
    print("| dumps | truth | aorta: verdict group, op #, ranks | aorta culprits | aorta s | torch fr_trace | torch s |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, d, prefix, truth in sets:
        ar, at = aorta(a.aorta, d, a.repeat)
        tr, tt = torch_fr(a.torch_python, d, prefix, a.repeat)
        if "error" in ar:
            ad = "error: " + ar["error"]
        elif "group" in ar:
            ad = f"group {ar['group']} #{ar['seq']} {ar['mismatch']} {ar['missing']}"
        else:
            ad = ar["kind"]
        if "error" in tr:
            td = "fails: " + tr["error"]
        elif "seq" in tr:
            td = f"group {tr['group']} #{tr['seq']} missing {tr['missing']}"
        elif "culprit" in tr:
            td = f"culprit {tr['culprit']} {tr['error_type']}"
        else:
            td = tr["none"]
        print(f"| {name} | {truth} | {ad} | {ar.get('culprits', '-')} | {at:.3f} | {td} | {tt:.2f} |")


if __name__ == "__main__":
    main()
