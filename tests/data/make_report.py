#!/usr/bin/env python3
"""Writes the small, fixed JSONL runs that `aorta report`'s golden tests read
(tests/data/report/{base,cand}/rank_0N_metrics.jsonl): 2 ranks x 12 steps in
the upstream per-iteration schema, with compute, all-reduce,
reduce-scatter and aux ranges and the profile.overlap block computed as
upstream's stream profiler does (union per stream, compute x comm
intersections).  'cand' overlaps more communication with compute and has a
crashed rank 1 whose last line is cut in half.  Deterministic: no RNG."""
import json, os, sys

def union(iv):
    iv = sorted(iv); out = []
    for a, b in iv:
        if out and a <= out[-1][1]: out[-1][1] = max(out[-1][1], b)
        else: out.append([a, b])
    return out

def length(iv): return sum(b - a for a, b in union(iv))

def inter(x, y):
    x, y, t = union(x), union(y), 0.0
    for a, b in x:
        for c, d in y:
            t += max(0.0, min(b, d) - max(a, c))
    return t

def line(rank, step, shift):
    comp = 20.0 + 0.25 * step + 0.5 * rank
    r = [("aux", "prefetch", 0.1, 0.6),
         ("compute", "forward", 0.7, 0.7 + comp * 0.4),
         ("compute", "backward", 0.8 + comp * 0.4, 0.8 + comp)]
    bwd0, bwd1 = r[2][2], r[2][3]
    ar0 = bwd1 - shift * (bwd1 - bwd0); r.append(("allreduce", "all_reduce", ar0, ar0 + 4.0))
    rs0 = bwd0 + 1.0; r.append(("reducescatter", "reduce_scatter", rs0, rs0 + 2.0 + rank))
    end = max(b for _, _, _, b in r)
    r.append(("aux", "optimizer", end + 0.1, end + 3.0))
    total = end + 3.2
    st = {}
    for s, _, a, b in r: st.setdefault(s, []).append((a, b))
    comm = st["allreduce"] + st["reducescatter"]
    ov = {"compute_comm": inter(st["compute"], comm),
          "compute_allreduce": inter(st["compute"], st["allreduce"]),
          "compute_reducescatter": inter(st["compute"], st["reducescatter"]),
          "idle": max(total - length([x for v in st.values() for x in v]), 0.0)}
    prof = {"index": step, "total_ms": round(total, 6),
            "ranges": [{"stream": s, "tag": f"epoch0_step{step}_{t}", "start_ms": round(a, 6),
                        "end_ms": round(b, 6), "duration_ms": round(b - a, 6), "metadata": {}} for s, t, a, b in r],
            "markers": [],
            "overlap": {"per_stream_ms": {k: round(length(v), 6) for k, v in sorted(st.items())},
                        "overlap_ms": {k: round(v, 6) for k, v in ov.items() if v or k == "idle"},
                        "active_segments": [], "utilization": {}}}
    return json.dumps({"rank": rank, "world_size": 2, "epoch": 0, "step": step, "global_step": step,
                       "loss": round(1.0 / (step + 1), 6), "grad_norm": None, "lr": 0.001, "profile": prof})

def main(out):
    for name, shift in (("base", 0.1), ("cand", 0.6)):
        d = os.path.join(out, name); os.makedirs(d, exist_ok=True)
        for rank in range(2):
            lines = [line(rank, s, shift) for s in range(12)]
            text = "\n".join(lines) + "\n"
            if name == "cand" and rank == 1:   # a crashed run: last line cut in half
                text = "\n".join(lines[:11]) + "\n" + lines[11][: len(lines[11]) // 2]
            with open(os.path.join(d, f"rank_{rank:02d}_metrics.jsonl"), "w") as f:
                f.write(text)

if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "report"))
