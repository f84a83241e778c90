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

Labels, the names a person reads, the same way (one name per figure, for
people too):
  terminal=FILE (with analyze=): analyze's terminal output; each row of a
      rank's figure table (label, whole-trace value, step mean) is matched
      to the analysis JSON keys with both values (total, step_stats);
  html=FILE (with analyze=): report's index.html of the same run (label
      "run"); each row "LABEL (ms)" of its figures table is matched to the
      keys whose mean over every kept step of every rank (the analysis
      JSON's steps) is its value; the row "overlapped comm / compute
      (ratio)" must be the row "overlapped comm" over the row "compute",
      and upstream's overlap_ratio may only appear under its own name;
  csv=DIR (with analyze=): analyze --csv's ranks.csv: each figure column
      is the JSON's whole-trace figure of that name, rank by rank.
A label fails when its occurrences (ranks, runs, front ends) match no key
in common: it shows two figures.  Two labels that match the same one key
only, and a row label that appears twice in one table, fail too: a figure
has one name.  With --labels-state FILE the labels' keys are pooled over
every call of the tool (the runs of a test), and --labels-check checks
them over all of those runs (one run alone can make two figures equal).
"""
import csv
import html as htmlmod
import os
import re
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

TOL = 0.0006  # the terminal and the page print 3 decimals


def num_keys(d):
    return {k: v for k, v in d.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


def labels_terminal(path, analysis, labels, problems):
    ranks = {r["rank"]: r for r in analysis["ranks"]}
    cur, table = None, False
    for line in open(path):
        m = re.match(r"^== rank (\d+) ", line)
        if m:
            cur, table = ranks.get(int(m.group(1))), False
            continue
        if line.startswith("== "):
            cur = None
            continue
        if cur is None:
            continue
        if re.match(r"^   figure +whole trace", line):
            table, seen = True, set()
            continue
        if not table:
            continue
        m = re.match(r"^   (\S.*?) +(-?[\d.]+) ms(?: +(-?[\d.]+) ms)?", line)
        if not m:
            table = False
            continue
        label = m.group(1).strip()
        if label in seen:
            problems.append("terminal: the label '%s' appears twice in rank %d's table" % (label, cur["rank"]))
        seen.add(label)
        whole, mean = float(m.group(2)), m.group(3)
        stats = cur.get("step_stats", {})
        if " / " in label and mean is not None:  # "span / step": the whole trace's name, then the step's
            a, b = label.split(" / ", 1)
            labels.setdefault(a, []).append(("terminal", path, {
                "whole trace " + k for k, v in num_keys(cur["total"]).items() if abs(v - whole) < TOL}))
            labels.setdefault(b, []).append(("terminal", path, {
                k for k in stats if abs(stats[k].get("mean", 1e99) - float(mean)) < TOL}))
            continue
        c = {k for k, v in num_keys(cur["total"]).items() if abs(v - whole) < TOL and
             (mean is None or abs(stats.get(k, {}).get("mean", 1e99) - float(mean)) < TOL)}
        labels.setdefault(label, []).append(("terminal", path, c))


def pooled_means(analysis):
    """Per key, the mean over every step of every rank (the report's figures)."""
    sums, n = {}, 0
    for r in analysis["ranks"]:
        for st in r.get("steps", []):
            n += 1
            for k, v in num_keys(st).items():
                sums[k] = sums.get(k, 0.0) + v
    return {k: v / n for k, v in sums.items()} if n else {}


def labels_html(path, analysis, report, labels, problems):
    text = open(path).read()
    m = re.search(r"<table id=figures>(.*?)</table>", text, re.S)
    if not m:
        problems.append("%s: no figures table" % path)
        return
    rows = re.findall(r"<tr><td class=l>(.*?)</td><td>(.*?)</td>", m.group(1))
    means = pooled_means(analysis)
    seen, vals = set(), {}
    for label, v in rows:
        label = htmlmod.unescape(label)
        if label in seen:
            problems.append("html: the row '%s' appears twice" % label)
        seen.add(label)
        vals[label] = v
        mm = re.match(r"^(.*) \(ms\)$", label)
        if not mm or not re.match(r"^-?[\d.]+$", v):
            continue
        name, x = mm.group(1), float(v)
        if re.search(r"p\d\d$", name):  # a percentile of a figure: its own name
            continue
        c = {k for k, y in means.items() if abs(y - x) < TOL}
        if report:  # the report's own keys too (a collective's overlap has no step key in the analysis)
            for ds in report.get("datasets", {}).values():
                c |= {"report " + k for k, st in ds.get("figures", {}).items() if abs(st.get("mean", 1e99) - x) < TOL}
        labels.setdefault(name, []).append(("html", path, c))
    r = vals.get("overlapped comm / compute (ratio)")
    o, c = vals.get("overlapped comm (ms)"), vals.get("compute (ms)")
    if r is None:
        problems.append("html: no row 'overlapped comm / compute (ratio)'")
    elif o and c and re.match(r"^[\d.]+$", r) and float(c) > 0:
        if abs(float(r) - float(o) / float(c)) > 0.0006 + 0.0006 * float(o) / float(c) ** 2 + 0.0001:
            problems.append("html: 'overlapped comm / compute' is %s, but overlapped comm / compute = %s / %s = %.4f"
                            % (r, o, c, float(o) / float(c)))
    for label in vals:
        if "overlap_ratio" in label and not label.startswith("upstream overlap_ratio"):
            problems.append("html: upstream's overlap_ratio under another name: '%s'" % label)


def labels_csv(path, analysis, problems):
    ranks = {r["rank"]: r for r in analysis["ranks"]}
    n = 0
    with open(os.path.join(path, "ranks.csv")) as f:
        for row in csv.DictReader(f):
            r = ranks.get(int(row["rank"]))
            if r is None:
                problems.append("csv: rank %s is not in the analysis" % row["rank"])
                continue
            for k, v in row.items():
                if k in r["total"] and v not in ("", None):
                    n += 1
                    if abs(float(v) - r["total"][k]) > 1e-6:
                        problems.append("csv: ranks.csv column %s is %s for rank %s, the JSON's %s is %s"
                                        % (k, v, row["rank"], k, r["total"][k]))
    if not n:
        problems.append("csv: no figure column of ranks.csv is a figure of the JSON")


def check_labels(labels, problems):
    """Over every occurrence of every label (all runs): a label names the keys
    all its occurrences match; the analysis's keys first (the report's own
    keys, "report ...", only where no analysis key is left: the same
    quantity under upstream's name)."""
    one = {}
    for label, occ in sorted(labels.items()):
        common = None
        for _, _, c in occ:
            common = set(c) if common is None else common & c
        if common and any(not k.startswith("report ") for k in common):
            common = {k for k in common if not k.startswith("report ")}
        if not common:
            problems.append("the label '%s' shows more than one figure (or none): %s" % (label, "; ".join(
                "%s %s" % (w, sorted(c)) for w, _, c in occ[:4])))
        elif len(common) == 1:
            one.setdefault(next(iter(common)), set()).add(label)
    for k, ls in sorted(one.items()):
        if len(ls) > 1:
            problems.append("the figure %s has %d names: %s" % (k, len(ls), ", ".join(sorted(ls))))


def main(argv):
    seen = defaultdict(lambda: defaultdict(set))
    state = None
    args = []
    for a in argv:
        if a.startswith("--labels-state="):
            state = a.split("=", 1)[1]
        elif a == "--labels-check":
            continue
        else:
            args.append(a.split("=", 1))
    analysis = report = None
    for kind, path in args:
        if kind in ("analyze", "report"):
            with open(path) as f:
                if kind == "analyze":
                    analysis = json.load(f)
                else:
                    report = json.load(f)
    labels, problems = {}, []
    if state and os.path.exists(state):
        with open(state) as f:
            labels = {k: [(w, p, set(c)) for w, p, c in v] for k, v in json.load(f).items()}
    for kind, path in args:
        if kind in ("terminal", "html", "csv"):
            if analysis is None:
                print("%s= needs analyze=" % kind)
                return 2
            if kind == "terminal":
                labels_terminal(path, analysis, labels, problems)
            elif kind == "html":
                labels_html(path, analysis, report, labels, problems)
            else:
                labels_csv(path, analysis, problems)
            continue
        with open(path) as f:
            READERS[kind](json.load(f), seen)
    if labels and (not state or "--labels-check" in argv):  # with a state: when told, over every run
        check_labels(labels, problems)
    if labels:
        if state:
            with open(state, "w") as f:
                json.dump({k: [(w, p, sorted(c)) for w, p, c in v] for k, v in labels.items()}, f)
    for p in problems:
        print("LABEL " + p)
    if not seen:
        print("%d labels, %d label problems" % (len(labels), len(problems)))
        return 1 if problems else 0
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
    print("%d figures shared between commands, %d differ; %d labels, %d label problems"
          % (shared, bad, len(labels), len(problems)))
    return 1 if bad or not shared or problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
