#!/usr/bin/env python3
"""bench/train_dist/summary.py W [--out DIR] - tables of run.sh and sweep.sh.

Reads W/manifest.tsv (one line per run, common.sh) and each run's
`aorta analyze --json` file W/<name>.json (aorta.analysis/1).  Per run and
rank: the medians over the kept steps (step_stats.*.p50) of the step window,
compute, communication and exposed communication, and exposed / comm as a
ratio of sums over the kept steps (steps_total); ranks are averaged (the
maximum over ranks is kept too).

(a) For each batch and strategy, with normal / compute / comm the three runs
of run.sh:
    T_step    = median step of the normal run
    T_compute = median step of the isolate=compute run (no collective)
    T_comm    = median step of the isolate=comm run (collectives only)
    efficiency = (T_compute + T_comm - T_step) / min(T_compute, T_comm)
and, as a stricter variant, the same formula with T_comm = the comm busy time
of the comm run (its step window also holds the batch's host-to-device copy,
which bounds it at batch 64).  A second table puts compute and comm busy time
overlapped (normal run) beside alone (isolated runs): the slowdown each suffers
from sharing the GPU.  Targets (issue "train part 2", stated for 4 GPUs): exposed / comm
<= 20 % and efficiency >= 0.8 at batch 64.
(b) The sweep's rows, then each knob's mean over the runs at each value.

Writes DIR/tables.md and DIR/rows.json (default DIR = W) and prints the
tables.  Standard library only.
"""
import argparse
import json
import os
import statistics
import sys

FIELDS = ["name", "part", "batch", "strategy", "mode", "fp", "bp", "lag", "prio", "steps", "rc", "wall_s"]


def load_manifest(w):
    rows = []
    path = os.path.join(w, "manifest.tsv")
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for line in f:
            parts = line.rstrip("\n").split("\t")
            if len(parts) != len(FIELDS):
                continue
            rows.append(dict(zip(FIELDS, parts)))
    return rows


def figures(w, name):
    """Per-run figures from the analysis JSON, or None."""
    path = os.path.join(w, name + ".json")
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError):
        return None
    ranks = d.get("ranks") or []
    per = []
    for r in ranks:
        ss = r.get("step_stats") or {}
        tot = r.get("steps_total") or {}
        if "step_ms" not in ss:
            continue

        def p50(k):
            return float((ss.get(k) or {}).get("p50") or 0.0)

        comm_t = float(tot.get("comm_ms") or 0.0)
        exp_t = float(tot.get("exposed_comm_ms") or 0.0)
        per.append({
            "rank": r.get("rank"),
            "world": r.get("world_size"),
            "steps": len(r.get("steps") or []),
            "step_ms": p50("step_ms"),
            "compute_ms": p50("compute_ms"),
            "comm_ms": p50("comm_ms"),
            "exposed_ms": p50("exposed_comm_ms"),
            "exposed_frac": exp_t / comm_t if comm_t > 0 else None,
        })
    if not per:
        return None
    out = {"ranks": len(per), "world": per[0]["world"], "steps": min(p["steps"] for p in per), "per_rank": per}
    for k in ("step_ms", "compute_ms", "comm_ms", "exposed_ms"):
        out[k] = statistics.mean(p[k] for p in per)
        out[k + "_max"] = max(p[k] for p in per)
    fr = [p["exposed_frac"] for p in per if p["exposed_frac"] is not None]
    out["exposed_frac"] = statistics.mean(fr) if fr else None
    return out


def fmt(v, spec="%.3f"):
    return "—" if v is None else spec % v


def pct(v):
    return "—" if v is None else "%.1f %%" % (100.0 * v)


def efficiency(tc, tm, ts):
    if tc is None or tm is None or ts is None or min(tc, tm) <= 0:
        return None
    return (tc + tm - ts) / min(tc, tm)


def table_a(rows, w):
    runs = {}
    for r in rows:
        if r["part"] == "a":
            runs[(int(r["batch"]), r["strategy"], r["mode"])] = (r, figures(w, r["name"]) if r["rc"] == "0" else None)
    keys = sorted({(b, s) for (b, s, _m) in runs}, key=lambda k: (k[0], k[1] != "full_shard", k[1]))
    out, data = [], []
    out.append("| batch | strategy | world | T_step | T_compute (alone) | T_comm (alone) | efficiency | "
               "comm / step | exposed / step | exposed / comm | efficiency (T_comm = comm busy alone) | verdict |")
    out.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for b, s in keys:
        n = runs.get((b, s, "normal"), (None, None))[1]
        c = runs.get((b, s, "compute"), (None, None))[1]
        m = runs.get((b, s, "comm"), (None, None))[1]
        ts = n["step_ms"] if n else None
        tc = c["step_ms"] if c else None
        tm = m["step_ms"] if m else None
        eff = efficiency(tc, tm, ts)
        effb = efficiency(tc, m["comm_ms"] if m else None, ts)
        xf = n["exposed_frac"] if n else None
        if eff is None or xf is None:
            missing = ["%s rc=%s" % (mode, runs[(b, s, mode)][0]["rc"]) if (b, s, mode) in runs else mode + " not run"
                       for mode in ("normal", "compute", "comm")
                       if (b, s, mode) not in runs or runs[(b, s, mode)][1] is None]
            verdict = "incomplete (%s)" % ", ".join(missing)
        else:
            verdict = "exposed %s 20 %%, efficiency %s 0.8" % ("≤" if xf <= 0.20 else ">",
                                                               "≥" if eff >= 0.8 else "<")
        out.append("| %d | %s | %s | %s ms | %s ms | %s ms | %s | %s ms | %s ms | %s | %s | %s |" % (
            b, s, n["world"] if n else "—", fmt(ts), fmt(tc), fmt(tm), fmt(eff, "%.2f"),
            fmt(n["comm_ms"] if n else None), fmt(n["exposed_ms"] if n else None), pct(xf),
            fmt(effb, "%.2f"), verdict))
        data.append({"batch": b, "strategy": s, "world": n["world"] if n else None, "T_step_ms": ts,
                     "T_compute_ms": tc, "T_comm_ms": tm, "efficiency": eff, "efficiency_busy": effb,
                     "normal": n, "compute": c, "comm": m, "exposed_frac": xf})
    out.append("")
    out.append("| batch | strategy | compute busy: overlapped / alone | comm busy: overlapped / alone | "
               "T_step - T_compute | of which exposed comm | T_step / T_compute |")
    out.append("| --- | --- | --- | --- | --- | --- | --- |")
    for r in data:
        n, c, m = r["normal"], r["compute"], r["comm"]
        if not (n and c and m):
            continue
        out.append("| %d | %s | %.3f / %.3f ms (%+.1f %%) | %.3f / %.3f ms (%+.1f %%) | %.3f ms | %.3f ms | %s |" % (
            r["batch"], r["strategy"], n["compute_ms"], c["compute_ms"],
            100.0 * (n["compute_ms"] / c["compute_ms"] - 1) if c["compute_ms"] > 0 else 0.0,
            n["comm_ms"], m["comm_ms"], 100.0 * (n["comm_ms"] / m["comm_ms"] - 1) if m["comm_ms"] > 0 else 0.0,
            n["step_ms"] - c["step_ms"], n["exposed_ms"],
            fmt(n["step_ms"] / c["step_ms"] if c["step_ms"] > 0 else None, "%.3f")))
    return out, data


def table_b(rows, w):
    runs = []
    for r in rows:
        if r["part"] != "b":
            continue
        f = figures(w, r["name"]) if r["rc"] == "0" else None
        runs.append((r, f))
    out, data = [], []
    if not runs:
        return out, data
    r0 = runs[0][0]
    out.append("batch %s, %s, %s steps per run (first %s left out), medians per step, mean of the ranks:" % (
        r0["batch"], r0["strategy"], r0["steps"], os.environ.get("SKIP", "10")))
    out.append("")
    out.append("| forward_prefetch | backward_prefetch | limit_all_gathers | high_priority | step | comm / step | "
               "exposed / step | exposed / comm |")
    out.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r, f in runs:
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["fp"], r["bp"], r["lag"], r["prio"],
            fmt(f["step_ms"]) + " ms" if f else "rc=" + r["rc"], fmt(f["comm_ms"]) + " ms" if f else "—",
            fmt(f["exposed_ms"]) + " ms" if f else "—", pct(f["exposed_frac"]) if f else "—"))
        data.append({"forward_prefetch": r["fp"], "backward_prefetch": r["bp"], "limit_all_gathers": r["lag"],
                     "high_priority": r["prio"], "rc": r["rc"], "wall_s": r["wall_s"], "figures": f})
    # each knob's effect: mean over the runs at each of its values
    out.append("")
    out.append("Each knob's effect (mean over the other knobs' combinations that ran):")
    out.append("")
    out.append("| knob | value | runs | step | exposed / step | exposed / comm |")
    out.append("| --- | --- | --- | --- | --- | --- |")
    for key, label in (("fp", "forward_prefetch"), ("bp", "backward_prefetch"), ("lag", "limit_all_gathers"),
                       ("prio", "high_priority")):
        vals = []
        for r, _f in runs:
            if r[key] not in vals:
                vals.append(r[key])
        for v in vals:
            fs = [f for r, f in runs if r[key] == v and f]
            if not fs:
                out.append("| %s | %s | 0 | — | — | — |" % (label, v))
                continue
            xf = [f["exposed_frac"] for f in fs if f["exposed_frac"] is not None]
            out.append("| %s | %s | %d | %.3f ms | %.3f ms | %s |" % (
                label, v, len(fs), statistics.mean(f["step_ms"] for f in fs),
                statistics.mean(f["exposed_ms"] for f in fs), pct(statistics.mean(xf) if xf else None)))
    return out, data


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("w", help="work directory of run.sh / sweep.sh")
    ap.add_argument("--out", help="where tables.md and rows.json go (default: W)")
    a = ap.parse_args()
    out_dir = a.out or a.w
    rows = load_manifest(a.w)
    if not rows:
        print("summary: no runs in %s/manifest.tsv" % a.w, file=sys.stderr)
        return 1
    ta, da = table_a(rows, a.w)
    tb, db = table_b(rows, a.w)
    lines = ["## (a) overlap (normal, isolate=compute, isolate=comm runs; medians per step)", ""] + ta
    lines += ["", "## (b) schedule knobs", ""] + tb
    lines += ["", "## runs", "", "| run | rc | wall s |", "| --- | --- | --- |"]
    lines += ["| %s | %s | %s |" % (r["name"], r["rc"], r["wall_s"]) for r in rows]
    text = "\n".join(lines) + "\n"
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "tables.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out_dir, "rows.json"), "w") as f:
        json.dump({"overlap": da, "sweep": db, "runs": rows}, f, indent=1)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
