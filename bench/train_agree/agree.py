#!/usr/bin/env python3
"""Per-step agreement of two `aorta analyze --json` outputs of the same run:
one from the JSONL metrics (event ranges on the stream where each phase runs),
one from the CUPTI traces (kernel spans).  For every step both cover, prints
compute, communication and exposed communication from each source and their
relative difference; exits 1 if any figure of any common step differs by more
than the tolerance (default 5 %, the issue's target), 0 otherwise.

    agree.py JSONL_ANALYSIS.json TRACE_ANALYSIS.json [--tol 0.05]
"""
import json
import sys

FIGS = ("compute_ms", "comm_ms", "exposed_comm_ms")


def steps(path):
    d = json.load(open(path))
    out = {}
    for r in d["ranks"]:
        for s in r.get("steps", []):
            out[(r["rank"], s["step"])] = s
    return out


def main():
    args = sys.argv[1:]
    tol = 0.05
    if "--tol" in args:
        i = args.index("--tol")
        tol = float(args[i + 1])
        del args[i:i + 2]
    a, b = steps(args[0]), steps(args[1])
    common = sorted(set(a) & set(b))
    if not common:
        print("no common (rank, step) pairs: jsonl has %s, trace has %s" % (sorted(a)[:6], sorted(b)[:6]))
        return 2
    worst = {f: 0.0 for f in FIGS}
    print("%4s %5s  %-16s %10s %10s %8s" % ("rank", "step", "figure", "jsonl ms", "cupti ms", "diff"))
    for key in common:
        for f in FIGS:
            x, y = float(a[key][f]), float(b[key][f])
            ref = max(abs(x), abs(y), 1e-9)
            d = abs(x - y) / ref
            # exposed communication near zero: compare against the step's communication
            if f == "exposed_comm_ms":
                d = abs(x - y) / max(float(a[key]["comm_ms"]), 1e-9)
            worst[f] = max(worst[f], d)
            print("%4d %5d  %-16s %10.3f %10.3f %7.2f%%" % (key[0], key[1], f, x, y, 100 * d))
    print("worst: " + ", ".join("%s %.2f %%" % (f, 100 * worst[f]) for f in FIGS) +
          " (exposed relative to the step's communication)")
    ok = all(v <= tol for v in worst.values())
    print("AGREE within %.0f %%: %s" % (100 * tol, "yes" if ok else "NO"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
