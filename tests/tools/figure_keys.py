#!/usr/bin/env python3
"""figure_keys.py KIND=FILE ... - one figure, one name, across commands.

Reads the JSON outputs of several commands on the same run (KIND is
analyze, report, compare, sweep-result or sweep-matrix) and collects every
figure (a key ending in _ms, _gbps, _pct, _share or _ratio) under the
identity of what it measures:
  ("collective", type, bytes): a collective over all ranks.  analyze's rows
      are per rank and process group; a key whose value is the same on
      every row of that (type, bytes) is the collective's figure (the
      join's transfer-time busbw_gbps is), a key that differs between rows
      is a per-rank figure and has no all-ranks identity here;
  ("rank step mean", rank, key): a rank's mean per kept step (analyze's
      step_stats, report's per_rank, compare's ranks[].value).
It fails (exit 1), listing each, when one identity and key has different
values in two commands: one key must mean one quantity everywhere.
"""
import json
import sys
from collections import defaultdict

FIG_SUFFIX = ("_ms", "_gbps", "_pct", "_share", "_ratio")


def is_fig(k):
    return k.endswith(FIG_SUFFIX)


def add(seen, ident, key, cmd, v):
    if v is None or isinstance(v, bool) or not isinstance(v, (int, float)):
        return
    seen[(ident, key)][cmd].add(round(float(v), 4))


def from_analyze(d, seen):
    rows = defaultdict(lambda: defaultdict(set))
    for r in d["ranks"]:
        for c in r.get("collectives", []):
            for k, v in c.items():
                if is_fig(k) and isinstance(v, (int, float)) and not isinstance(v, bool):
                    rows[(c["type"], c["bytes"])][k].add(round(float(v), 4))
        for k, st in r.get("step_stats", {}).items():
            add(seen, ("rank step mean", r["rank"]), k, "analyze", st.get("mean"))
    for (ty, by), keys in rows.items():
        for k, vals in keys.items():
            if len(vals) == 1:  # the same on every rank: the collective's figure
                add(seen, ("collective", ty, by), k, "analyze", next(iter(vals)))


def from_report(d, seen):
    for ds in d["datasets"].values():
        for c in ds.get("collectives", []):
            for k, v in c.items():
                if is_fig(k) and k != "latency_ms":
                    add(seen, ("collective", c["type"], int(c["bytes"])), k, "report", v)
        for pr in ds.get("per_rank", []):
            for k, v in pr.items():
                if is_fig(k) and k != "overlap_ratio":
                    add(seen, ("rank step mean", pr["rank"]), k, "report", v)


def from_compare(d, seen):
    for c in d["comparisons"]:
        for r in c.get("ranks", []):
            for k, v in r.items():
                if isinstance(v, dict):
                    add(seen, ("rank step mean", r["rank"]), k, "compare", v.get("value"))


def from_sweep_result(d, seen):
    for c in d.get("collectives", []):
        for k, v in c.items():
            if is_fig(k) and k != "total_ms":
                add(seen, ("collective", c["type"], c["bytes"]), k, "sweep result.json", v)


def from_sweep_matrix(d, seen):
    for cell in d.get("cells", []):
        for c in cell.get("busbw", []):
            for k, v in c.items():
                if is_fig(k):
                    add(seen, ("collective", c["type"], c["bytes"]), k, "sweep matrix.json", v)


READERS = {"analyze": from_analyze, "report": from_report, "compare": from_compare,
           "sweep-result": from_sweep_result, "sweep-matrix": from_sweep_matrix}


def main(argv):
    seen = defaultdict(lambda: defaultdict(set))
    for a in argv:
        kind, path = a.split("=", 1)
        with open(path) as f:
            READERS[kind](json.load(f), seen)
    bad = shared = 0
    for (ident, key), by_cmd in sorted(seen.items(), key=str):
        if len(by_cmd) < 2:
            continue
        shared += 1
        vals = set()
        for v in by_cmd.values():
            vals |= v
        if len(vals) > 1:
            bad += 1
            print("DIFFERS %s %s: %s" % (ident, key, "; ".join(
                "%s %s" % (c, sorted(v)) for c, v in sorted(by_cmd.items()))))
    print("%d figures shared between commands, %d differ" % (shared, bad))
    return 1 if bad or not shared else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
