#!/usr/bin/env python3
"""train_pairs_check.py OUTDIR [--json FILE] - the what-if against the pairs of
bench/whatif/train_pairs.sh: per case, every profiler cycle's traces (one file
per rank, named by the cycle's last step) analysed on their own by `aorta
analyze --json`; a slowed cycle's prediction for its planted rank
(by_rank[R].step_ms_if_fixed) against the base cycles on either side of it
(their measured step, the mean of the two), within max(1.5 ms, 5 %).

The truth here is the base cycles' step as aorta measures it on their traces
(mean over ranks of the step windows): like for like with the prediction,
which is made on traces of the same shape; on the PyTorch fixtures that
measure agrees with CUDA events within 0.34 % (tests/data/whatif/README.md).
As a check that owes nothing to the traces, the metrics JSONL's per-step GPU
time (profile.total_ms, CUDA events, slowest rank) is printed per cycle kind.
  AORTA_BIN=PATH (default ./build/aorta)
"""
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def analyse(aorta, files, tmp):
    d = tempfile.mkdtemp(dir=tmp)
    for f in files:
        os.symlink(os.path.abspath(f), os.path.join(d, os.path.basename(os.path.dirname(f)) + ".json"))
    out = os.path.join(d, "a.json.out")
    r = subprocess.run([aorta, "analyze", "-q", "--json", out, d], capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1:]
    return json.load(open(out)), None


def main():
    args = sys.argv[1:]
    jout = None
    if "--json" in args:
        i = args.index("--json")
        jout = args[i + 1]
        del args[i:i + 2]
    if len(args) != 1:
        sys.exit(__doc__)
    top = args[0]
    aorta = os.environ.get("AORTA_BIN", os.path.join(ROOT, "build", "aorta"))
    rows, allok = [], True
    with tempfile.TemporaryDirectory() as tmp:
        for case in sorted(os.listdir(top)):
            plan_p = os.path.join(top, case, "plan.json")
            if not os.path.isfile(plan_p):
                continue
            plan = json.load(open(plan_p))
            per, R, W = plan["cycle_steps"], plan["target"]["rank"], plan["world_size"]
            cyc = {}
            for r in range(W):
                d = os.path.join(top, case, "torch_profiler", f"rank{r}")
                for f in os.listdir(d) if os.path.isdir(d) else []:
                    m = re.search(r"\.(\d+)\.pt\.trace\.json(\.gz)?$", f)
                    if m:
                        cyc.setdefault(int(m.group(1)) // per, {})[r] = os.path.join(d, f)
            res = {}
            for k, fs in sorted(cyc.items()):
                if len(fs) != W:
                    print(f"{case}: cycle {k}: {len(fs)} of {W} ranks' traces")
                    continue
                a, err = analyse(aorta, [fs[r] for r in range(W)], tmp)
                if a is None:
                    print(f"{case}: cycle {k}: analyze failed: {err}")
                    continue
                w = a["across_ranks"].get("what_if") or {}
                if not w.get("ok"):
                    print(f"{case}: cycle {k}: no what-if: {w.get('reason')}")
                    continue
                fx = [x for x in w["by_rank"] if x["rank"] == R]
                res[k] = {"measured": w["measured_step_ms"], "replay_err": w["replay_error_pct"],
                          "pred": fx[0]["step_ms_if_fixed"] if fx else None,
                          "host_wait_pct": statistics.mean(x["steps_total"]["host_wait_ms"] / x["steps_total"]["step_ms"] * 100
                                                          for x in a["ranks"] if x.get("steps_total", {}).get("step_ms"))
                          if all(x.get("steps_total", {}).get("step_ms") for x in a["ranks"]) else None}
            # events: per step the slowest rank's GPU time (metrics JSONL), by cycle kind
            ev = {}
            for r in range(W):
                p = os.path.join(top, case, f"rank_{r:02d}_metrics.jsonl")
                for line in open(p) if os.path.isfile(p) else []:
                    if line.startswith("{"):
                        j = json.loads(line)
                        s = j["global_step"]
                        ev[s] = max(ev.get(s, 0), j["profile"]["total_ms"])
            evk = {"base": [v for s, v in ev.items() if s >= per and (s // per) % 2 == 0],
                   "slowed": [v for s, v in ev.items() if (s // per) % 2 == 1]}
            print(f"{case}: rank {R} plants {plan['planted']['ms']} ms before each forward in odd cycles; "
                  f"{len(res)} cycles analysed; events (GPU time per step, slowest rank, median): base "
                  f"{statistics.median(evk['base']):.2f} ms, slowed {statistics.median(evk['slowed']):.2f} ms")
            print(f"  {'cycle':>5s} {'slowed':>8s} {'replay':>7s} {'predicted':>9s} {'base k-1, k+1':>15s} {'truth':>7s} {'error':>14s}")
            errs, preds, truths = [], [], []
            for k in sorted(res):
                if k % 2 == 0 or k - 1 not in res or k + 1 not in res:
                    continue
                b0, b1 = res[k - 1]["measured"], res[k + 1]["measured"]
                truth = (b0 + b1) / 2
                p = res[k]["pred"]
                e = p - truth
                ok = abs(e) <= max(1.5, 0.05 * truth)
                errs.append(e)
                preds.append(p)
                truths.append(truth)
                print(f"  {k:5d} {res[k]['measured']:8.2f} {res[k]['replay_err']:6.2f}% {p:9.2f} {b0:7.2f},{b1:7.2f} "
                      f"{truth:7.2f} {e:+7.2f} {'ok' if ok else 'FAIL'}")
                rows.append({"case": case, "cycle": k, "slowed_ms": res[k]["measured"], "replay_error_pct": res[k]["replay_err"],
                             "predicted_ms": p, "base_before_ms": b0, "base_after_ms": b1, "truth_ms": truth,
                             "error_ms": round(e, 3), "ok": ok})
            if not errs:
                print(f"  no slowed cycle with base cycles on both sides")
                allok = False
                continue
            mp, mt = statistics.median(preds), statistics.median(truths)
            agg = abs(mp - mt) <= max(1.5, 0.05 * mt)
            allok &= agg
            hw = [v["host_wait_pct"] for v in res.values() if v["host_wait_pct"] is not None]
            print(f"  {sum(abs(e) <= max(1.5, 0.05 * t) for e, t in zip(errs, truths))} of {len(errs)} cycles within "
                  f"max(1.5 ms, 5 %); median error {statistics.median(errs):+.2f} ms; median prediction {mp:.2f} ms "
                  f"against median truth {mt:.2f} ms: {'ok' if agg else 'FAIL'}"
                  + (f"; GPU waiting for the host {statistics.median(hw):.0f} % of the step" if hw else ""))
    if jout:
        with open(jout + ".tmp", "w") as f:
            json.dump(rows, f, indent=1)
        os.replace(jout + ".tmp", jout)
    sys.exit(0 if allok else 1)


if __name__ == "__main__":
    main()
