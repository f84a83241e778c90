#!/usr/bin/env python3
"""bench/train_dist/overlap_limit.py W - the tables of overlap_limit.sh.

Reads W/w<world>_<name>.json (`aorta analyze --json`, aorta.analysis/1) and
prints, per run: the median step (step_stats.step_ms.p50, mean of the
ranks), compute busy (compute_ms p50: kernel-range time on the compute
streams), exposed communication per step (exposed_comm_ms p50) and exposed /
comm (ratio of sums over kept steps and ranks).  Then, per world, strategy
and batch: the repeats of the default run against T_compute alone and
T_comm alone (the alone_compute_* / alone_comm_* runs): T_step / T_compute
(issue 27's target at batch 64: <= 1.08 full_shard, <= 1.04 ddp), T_step /
max(T_compute, T_comm) (batch 8: <= 1.10) and compute busy overlapped /
alone.  Standard library only.
"""
import glob
import json
import os
import re
import sys


def figs(path):
    if not os.path.exists(path):
        return None
    d = json.load(open(path))
    rk = d["ranks"]

    def p50(k):
        v = [r["step_stats"][k]["p50"] for r in rk if k in r["step_stats"]]
        return sum(v) / len(v) if v else float("nan")
    comm = sum(r["steps_total"]["comm_ms"] for r in rk)
    exp = sum(r["steps_total"]["exposed_comm_ms"] for r in rk)
    return {"step": p50("step_ms"), "compute": p50("compute_ms"), "comm": p50("comm_ms"),
            "exposed": p50("exposed_comm_ms"), "exp_frac": exp / comm if comm > 0 else float("nan")}


def main():
    W = sys.argv[1]
    runs = {}
    for p in sorted(glob.glob(os.path.join(W, "w*_*.json"))):
        m = re.match(r"w(\d+)_(.*)\.json$", os.path.basename(p))
        f = figs(p)
        if m and f:
            runs[(int(m.group(1)), m.group(2))] = f
    print("\n| world | run | step | compute busy | comm / step | exposed / step | exposed / comm |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for (w, n), f in sorted(runs.items()):
        print("| %d | %s | %.3f ms | %.3f ms | %.3f ms | %.3f ms | %.1f %% |" % (
            w, n, f["step"], f["compute"], f["comm"], f["exposed"], 100 * f["exp_frac"]))
    print("\n| world | run | steps of the repeats | mean | T_compute alone | T_comm alone | T_step / T_compute | "
          "T_step / max(T_compute, T_comm) | compute busy overlapped / alone | exposed / step |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    cfgs = [("fs64", "full_shard", 64), ("fs64nccl", "full_shard", 64), ("fs64late", "full_shard", 64),
            ("ddp64", "ddp", 64), ("ddp64late", "ddp", 64), ("fs8", "full_shard", 8), ("ddp8", "ddp", 8)]
    for w in sorted({k[0] for k in runs}):
        for name, st, bs in cfgs:
            reps = [runs[(w, n)] for n in sorted(k[1] for k in runs if k[0] == w)
                    if re.fullmatch(name + r"_\d+", n)]
            if not reps:
                continue
            mean = sum(r["step"] for r in reps) / len(reps)
            ca = runs.get((w, "alone_compute_%s_%d" % (st, bs)))
            ma = runs.get((w, "alone_comm_%s_%d" % (st, bs)))
            tc = ca["step"] if ca else float("nan")
            tm = ma["step"] if ma else float("nan")
            busy = sum(r["compute"] for r in reps) / len(reps)
            expd = sum(r["exposed"] for r in reps) / len(reps)
            print("| %d | %s | %s | %.3f ms | %.3f ms | %.3f ms | %.3f | %.3f | %.3f / %.3f ms | %.3f ms |" % (
                w, name, " / ".join("%.3f" % r["step"] for r in reps), mean, tc, tm, mean / tc,
                mean / max(tc, tm), busy, ca["compute"] if ca else float("nan"), expd))
    same_numbers(W)


def losses(path):
    out = []
    if os.path.exists(path):
        for line in open(path):
            m = re.search(r'"loss": ?([-0-9.eE+]+)', line)
            if m:
                out.append(float(m.group(1)))
    return out


def same_numbers(W):
    """The losses of a norm_early run against its debug.norm_early=false twin
    (same seed and data: equal up to the order of the norm's additions)."""
    for a, b in (("w4_fs64_1", "w4_fs64late_1"), ("w4_ddp64_1", "w4_ddp64late_1")):
        la = losses(os.path.join(W, a, "rank_00_metrics.jsonl"))
        lb = losses(os.path.join(W, b, "rank_00_metrics.jsonl"))
        if la and len(la) == len(lb):
            d = max(abs(x - y) / abs(y) for x, y in zip(la, lb))
            print("%s vs %s: %d losses, max rel diff %.3g" % (a, b, len(la), d))


if __name__ == "__main__":
    main()
