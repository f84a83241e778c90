#!/usr/bin/env python3
"""bench/train_dist/collectives.py ANALYSIS.json [STEPS] - where the exposed
communication of a run is, per collective.

For every rank of an `aorta analyze --json` file (aorta.analysis/1), the
step figures (step, compute, comm, exposed comm and memcpy, idle: medians
of the kept steps) and each collective (type and message size): count, mean
span, and exposed time divided by STEPS (default 30, the steps of the run;
the collectives table covers every step of the trace, warm-up included, so
the per-step figure is an upper bound for the kept steps).  The "where the
remaining gap is" paragraphs of bench/RESULTS.md come from this on the runs
of bench/train_dist/prefetch_ab.sh and pregather.sh.  Standard library only.
"""
import json
import sys


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: collectives.py ANALYSIS.json [STEPS]")
    steps = int(sys.argv[2]) if len(sys.argv) == 3 else 30
    d = json.load(open(sys.argv[1]))
    for r in d["ranks"]:
        ss = r["step_stats"]
        print("rank %d: %s" % (r["rank"], " ".join(
            "%s=%.3f ms" % (k[:-3], ss[k]["p50"]) for k in
            ("step_ms", "compute_ms", "comm_ms", "exposed_comm_ms", "exposed_memcpy_ms", "idle_ms") if k in ss)))
        for c in r["collectives"]:
            print("  %-15s %11d B  count %4d  mean %.3f ms  exposed/step %.3f ms" % (
                c["type"], c["bytes"], c["count"], c["total_ms"] / c["count"], c["exposed_ms"] / steps))


if __name__ == "__main__":
    main()
