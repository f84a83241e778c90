#!/usr/bin/env python3
"""bench/train_dist/repeats.py W - repeated runs side by side.

Reads every `aorta analyze --json` file W/<name>_<repeat>.json
(aorta.analysis/1), groups the runs by <name>, and prints one table row per
name: per repeat the median step (step_stats.step_ms.p50, mean of the ranks)
with the min-max of the kept steps over the ranks, then the mean of the
medians, GPU busy / step (busy_ms p50 / step_ms p50, mean of the ranks) and
exposed / comm (ratio of sums over the kept steps and ranks).  Used by
bench/train_dist/{default_vs_fsdp2,overlaps_batch8_ab,threads_vs_mpi}.sh.  Standard library only.
"""
import glob
import json
import os
import statistics
import sys


def run_figures(path):
    d = json.load(open(path))
    ranks = d["ranks"]
    st = [r["step_stats"] for r in ranks]
    med = sum(s["step_ms"]["p50"] for s in st) / len(st)
    lo = min(s["step_ms"]["min"] for s in st)
    hi = max(s["step_ms"]["max"] for s in st)
    busy = sum(s["busy_ms"]["p50"] / s["step_ms"]["p50"] for s in st) / len(st)
    comm = sum(r["steps_total"]["comm_ms"] for r in ranks)
    exp = sum(r["steps_total"]["exposed_comm_ms"] for r in ranks) / comm if comm > 0 else float("nan")
    return med, lo, hi, busy, exp


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: repeats.py WORKDIR")
    rows = {}
    for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
        name = os.path.basename(f)[:-5]
        rows.setdefault(name.rsplit("_", 1)[0], []).append(run_figures(f))
    print("| run | median step (min-max of steps), per repeat | mean | GPU busy / step | exposed / comm |")
    print("| --- | --- | --- | --- | --- |")
    for k in sorted(rows):
        v = rows[k]
        print("| %s | %s ms | %.3f ms | %s | %s |" % (
            k, " / ".join("%.3f (%.2f-%.2f)" % x[:3] for x in v), statistics.mean(x[0] for x in v),
            " / ".join("%.1f %%" % (100 * x[3]) for x in v), " / ".join("%.1f %%" % (100 * x[4]) for x in v)))


if __name__ == "__main__":
    main()
