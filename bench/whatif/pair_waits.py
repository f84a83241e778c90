#!/usr/bin/env python3
"""pair_waits.py - an independent pairing of a Kineto trace's recorded
stream waits (shares no code with aorta: the reference the tests' counts
come from), and copies of traces without them.

    python3 bench/whatif/pair_waits.py TRACE...        per file: the waits, how many
        pair and why the others do not, and each pair (waiting op's correlation <- the
        correlation of the op it waits for)
    python3 bench/whatif/pair_waits.py --strip IN_DIR OUT_DIR
        copies IN_DIR's *.json.gz without their "Stream Wait Event" records: the same
        run with its waits guessed instead of recorded (bench/RESULTS.md "What-if
        fidelity")

A wait ("Stream Wait Event", cuda_sync) links the first device op launched
on its stream after its cudaStreamWaitEvent call with the last device op
launched on the recorded stream before the cudaEventRecord call its
wait_on_cuda_event_record_corr_id names; where the profiler wrote -1
(CUPTI 13 without cudaEventRecord's records) the record call is the last
cudaEventRecord* call of the wait call's thread before it and the op the
last one that thread launched before the record, on another stream
(docs/formats.md).
"""
import bisect
import collections
import glob
import gzip
import json
import os
import sys


def load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def pair(path):
    ev = load(path)["traceEvents"]
    rt = {e["args"]["correlation"]: e for e in ev
          if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    ops = [e for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and e["args"].get("correlation") in rt]
    launch = lambda o: rt[o["args"]["correlation"]]["ts"]
    by_stream = collections.defaultdict(list)
    for o in ops:
        by_stream[o["args"]["stream"]].append((launch(o), o["args"]["correlation"]))
    for v in by_stream.values():
        v.sort()
    by_launch = sorted(ops, key=launch)
    keys = [launch(o) for o in by_launch]
    recs = sorted((e["tid"], e["ts"], e["args"]["correlation"]) for e in rt.values() if e["name"].startswith(("cudaEventRecord", "hipEventRecord")))
    pairs, why = [], collections.Counter()
    waits = [e for e in ev if e.get("cat") == "cuda_sync" and e.get("name") == "Stream Wait Event"]
    for w in waits:
        a = w["args"]
        wc = rt.get(a.get("correlation"))
        wt = wc["ts"] if wc else w["ts"]
        if a.get("wait_on_stream", -1) >= 0 and a.get("wait_on_cuda_event_record_corr_id", -1) >= 0:
            rec = rt.get(a["wait_on_cuda_event_record_corr_id"])
            if rec is None:
                why["record call not in the trace"] += 1
                continue
            L = by_stream[a["wait_on_stream"]]
            i = bisect.bisect_left(L, (rec["ts"], -1))
            if i == 0:
                why["nothing launched on the recorded stream before the record"] += 1
                continue
            to = L[i - 1][1]
        else:
            if wc is None:
                why["wait call not in the trace"] += 1
                continue
            i = bisect.bisect_left(recs, (wc["tid"], wt, -1))
            if i == 0 or recs[i - 1][0] != wc["tid"]:
                why["no record call on the wait's thread before it"] += 1
                continue
            j = bisect.bisect_left(keys, recs[i - 1][1])
            to = None
            for o in reversed(by_launch[max(0, j - 4096):j]):
                if rt[o["args"]["correlation"]]["tid"] == wc["tid"]:
                    to = None if o["args"]["stream"] == a["stream"] else o["args"]["correlation"]
                    break
            if to is None:
                why["the thread's last launch before the record is on the waiting stream, or none"] += 1
                continue
        M = by_stream[a["stream"]]
        j = bisect.bisect_right(M, (wt, float("inf")))
        if j == len(M):
            why["nothing launched on the waiting stream after the wait"] += 1
            continue
        pairs.append((M[j][1], to))
    return len(waits), pairs, why


def strip(src, dst):
    os.makedirs(dst, exist_ok=True)
    for p in sorted(glob.glob(os.path.join(src, "*.json.gz"))):
        d = load(p)
        d["traceEvents"] = [e for e in d["traceEvents"] if not (e.get("cat") == "cuda_sync" and e.get("name") == "Stream Wait Event")]
        with gzip.open(os.path.join(dst, os.path.basename(p)), "wt") as f:
            json.dump(d, f)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--strip":
        strip(sys.argv[2], sys.argv[3])
        sys.exit(0)
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    total = 0
    for p in sys.argv[1:]:
        n, pairs, why = pair(p)
        total += len(pairs)
        print(f"{p}: {n} stream waits, {len(pairs)} paired" + "".join(f"; {v} {k}" for k, v in why.items()))
        print("  " + ", ".join(f"{a}<-{b}" for a, b in pairs[:12]) + (" ..." if len(pairs) > 12 else ""))
    print(f"total {total} paired")
