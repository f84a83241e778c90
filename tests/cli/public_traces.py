#!/usr/bin/env python3
"""Checks aorta's analysis of each public trace set against the independent
reference figures committed in tests/data/public/<set>.json (made by
bench/public_traces/reference.py from the same files; bench/RESULTS.md "Public
traces against an independent reference").

usage: public_traces.py AORTA DATA_DIR REF_DIR TMP_DIR
For every reference file whose traces are present under DATA_DIR: runs
`AORTA analyze --json` on them and requires
  - the same ranks (file, device);
  - per rank, span, busy, compute, communication, overlapped, exposed, memcpy
    and idle within max(0.01 ms, 1 %) of the reference;
  - where the reference matches collectives across ranks: aorta matches at
    least as many, has cross-rank figures, and each rank's waiting and the
    total are within max(0.01 ms, 1 %);
  - where the reference finds no cross-rank figure, aorta gives none either;
  - every communication kernel is communication (comm calls as many as the
    reference's; no NCCL/RCCL kernel among the compute kernels), and of the
    collective type the reference names (its "unknown" is aorta's "other");
  - the what-if's critical path never names a compute category on a stream
    that runs only communication.
Prints one line per set and ends with "N passed, N failed, N skipped".
"""
import json
import os
import subprocess
import sys

TOL_MS, TOL_REL = 0.01, 0.01
FIGS = (("span_ms", "step_ms"), ("busy_ms", "busy_ms"), ("compute_ms", "compute_ms"), ("comm_ms", "comm_ms"),
        ("overlapped_ms", "overlapped_comm_ms"), ("exposed_ms", "exposed_comm_ms"), ("memcpy_ms", "memcpy_ms"),
        ("idle_ms", "idle_ms"))


def close(a, ref):
    return a is not None and abs(a - ref) <= max(TOL_MS, TOL_REL * abs(ref))


def ax_whatif(a):
    return (a.get("across_ranks") or {}).get("what_if") or {}


def check(aorta, data, ref, tmp):
    files = [os.path.join(data, f) for f in ref["files"]]
    if not all(os.path.exists(f) for f in files):
        return None, "traces not present under %s" % data
    out = os.path.join(tmp, ref["set"] + ".json")
    p = subprocess.run([aorta, "analyze", "-q", "-j", "2", "--json", out] + files,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        return False, "analyze exited %d: %s" % (p.returncode, p.stderr.strip().splitlines()[-1:])
    a = json.load(open(out))
    bad = []
    byk = {(os.path.basename(r["path"]), r["device"]): r for r in a["ranks"]}
    for rr in ref["ranks"]:
        k = (rr["file"], rr["device"])
        r = byk.get(k)
        if r is None:
            bad.append("rank %s of %s device %s: not in aorta's ranks" % (rr["rank"], rr["file"], rr["device"]))
            continue
        for fr, fa in FIGS:
            if not close(r["total"].get(fa), rr[fr]):
                bad.append("%s device %s %s: aorta %s, reference %s" % (rr["file"], rr["device"], fr,
                                                                       r["total"].get(fa), rr[fr]))
        calls = sum(c["count"] for c in r.get("collectives", []))
        if calls != rr["comm_calls"]:
            bad.append("%s device %s: %d communication calls, the reference %d" % (rr["file"], rr["device"],
                                                                                  calls, rr["comm_calls"]))
        types = {}
        for c in r.get("collectives", []):
            t = "unknown" if c["type"] == "other" else c["type"]
            types[t] = types.get(t, 0) + c["count"]
        if types != rr["comm_types"]:
            bad.append("%s device %s: collectives by type %s, the reference %s" % (rr["file"], rr["device"], types,
                                                                                  rr["comm_types"]))
        for cp in (ax_whatif(a).get("critical_path") or []):
            if cp.get("rank") == r["rank"] and cp.get("stream") in rr.get("comm_streams", []) and \
                    cp.get("op") in ("gemm", "attention", "other compute"):
                bad.append("critical path: rank %d stream %d (communication only) named '%s'" %
                           (r["rank"], cp["stream"], cp["op"]))
        for kr in r.get("top_kernels", []):
            n = kr.get("name", "").lower()
            if ("nccl" in n or "rccl" in n) and kr.get("kind") != "comm":
                bad.append("%s: kernel '%s' is %s, not communication" % (rr["file"], kr["name"][:60], kr.get("kind")))
    if len(ref["ranks"]) != len(a["ranks"]):
        bad.append("%d ranks, the reference %d" % (len(a["ranks"]), len(ref["ranks"])))
    x, ax = ref.get("cross"), a.get("across_ranks", {})
    if x and x.get("aligned"):
        if not ax.get("clocks_aligned"):
            bad.append("no cross-rank figures (%s); the reference matches %d" % (ax.get("no_cross_rank_reason"),
                                                                               x["matched"]))
        else:
            if ax.get("matched_collectives", 0) < x["matched"]:
                bad.append("matched %d collectives, the reference %d" % (ax.get("matched_collectives", 0), x["matched"]))
            wa = {str(r["rank"]): r.get("wait", {}).get("wait_ms") for r in a["ranks"]}
            for rk, w in x["wait_ms"].items():
                if not close(wa.get(rk), w):
                    bad.append("rank %s waiting: aorta %s ms, reference %s ms" % (rk, wa.get(rk), w))
            tot = sum(v for v in wa.values() if v is not None)
            if not close(tot, x["wait_total_ms"]):
                bad.append("waiting in all: aorta %.6f ms, reference %.6f ms" % (tot, x["wait_total_ms"]))
    elif x and ax.get("clocks_aligned"):
        bad.append("aorta gives cross-rank figures (%d matched); the reference finds none (%s)" %
                   (ax.get("matched_collectives", 0), x.get("why")))
    if not bad:
        return True, str(ax.get("matched_collectives", 0))
    return False, "; ".join(bad[:6]) + (" (and %d more)" % (len(bad) - 6) if len(bad) > 6 else "")


def main():
    aorta, data, refdir, tmp = sys.argv[1:5]
    passed = failed = skipped = 0
    for fn in sorted(os.listdir(refdir)):
        if not fn.endswith(".json"):
            continue
        ref = json.load(open(os.path.join(refdir, fn)))
        ok, why = check(aorta, data, ref, tmp)
        if ok is None:
            skipped += 1
            print("  SKIP %s: %s" % (ref["set"], why))
        elif ok:
            passed += 1
            x = ref.get("cross")
            print("  ok   %-28s %d rank(s)%s" % (ref["set"], len(ref["ranks"]),
                  ", %d collectives matched (aorta %s), waiting %.3f ms" % (x["matched"], why, x["wait_total_ms"])
                  if x and x.get("aligned") else ""))
        else:
            failed += 1
            print("  FAIL %s: %s" % (ref["set"], why))
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
