#!/usr/bin/env python3
"""fsdp_repeats_check.py DIR [AORTA] - reads bench/whatif/fsdp_repeats.sh's
trimmed output (DIR/p<N>/: one make_fixtures.py --same-run --repeats K process
each) and weighs the what-if's prediction for the planted rank against the
truth, triple by triple and on average.

Triple k of a process is base, slowed, base_after: three profiled blocks of
one run (traces in <top>/<case>/base, <top>/<case>/slowed and
<top>/.after/<case>/base, top = p<N> for k = 1, p<N>/.repeat for 2,
p<N>/.repeatK after).  Per triple:
  predicted  by_rank[target].step_ms_if_fixed of `aorta analyze` on the
             slowed block;
  truth      the mean of both base blocks' mean_ms (CUDA events: per step the
             mean over ranks, then the mean: the step as aorta measures one);
  own        on each base block, where nothing is planted, what fixing the
             target rank would gain (its host's own excess over its peer's),
             the mean of both;
  spread     |base - base_after|: how far the job moves by itself in a second
             (the summary counts the triples whose base blocks agree within
             max(1.5 ms, 5 %): the most a perfect prediction could pass).
Then per case: the mean error and its standard error, how many triples are
within max(1.5 ms, 5 %), and the error against own (the counterfactuals
differ by the target host's own excess: see bench/RESULTS.md).
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile


def analyze(aorta, d, tmp):
    out = os.path.join(tmp, "a.json")
    subprocess.run([aorta, "analyze", "-q", "--json", out, d], check=True)
    return json.load(open(out))["across_ranks"]["what_if"]


def fix_of(w, rank):
    return next(x["step_ms_if_fixed"] for x in w["by_rank"] if x["rank"] == rank)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: fsdp_repeats_check.py DIR [AORTA]")
    d = sys.argv[1]
    aorta = sys.argv[2] if len(sys.argv) == 3 else "./build/aorta"
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for p in sorted(x for x in os.listdir(d) if x.startswith("p")):
            pd = os.path.join(d, p)
            for case in sorted(x for x in os.listdir(pd) if not x.startswith(".")):
                tr = json.load(open(os.path.join(pd, case, "truth.json")))
                rank = tr["target"]["rank"]
                base_runs, after_runs = tr["measured"]["base"]["runs"], tr["measured"]["base_after"]["runs"]
                for k in range(1, len(base_runs) + 1):
                    top = pd if k == 1 else os.path.join(pd, ".repeat" if k == 2 else f".repeat{k}")
                    ws = analyze(aorta, os.path.join(top, case, "slowed"), tmp)
                    wb = analyze(aorta, os.path.join(top, case, "base"), tmp)
                    wa = analyze(aorta, os.path.join(top, ".after", case, "base"), tmp)
                    b, a = base_runs[k - 1]["mean_ms"], after_runs[k - 1]["mean_ms"]
                    truth = (b + a) / 2
                    own = statistics.mean(w["measured_step_ms"] - fix_of(w, rank) for w in (wb, wa))
                    pred = fix_of(ws, rank)
                    rows.append(dict(process=p, case=case, triple=k, target=rank, predicted=pred, truth=truth,
                                     error=pred - truth, own=own, spread=abs(b - a),
                                     noise_ok=abs(b - a) <= max(1.5, 0.05 * a),
                                     slowed=tr["measured"]["slowed"]["runs"][k - 1]["mean_ms"],
                                     ok=abs(pred - truth) <= max(1.5, 0.05 * truth), verdict=ws.get("verdict")))
    print(f"{'process':7s} {'case':18s} {'k':>2s} {'slowed':>7s} {'predicted':>9s} {'truth':>7s} {'error':>7s} "
          f"{'ok':3s} {'own':>6s} {'err+own':>7s} {'spread':>6s}")
    for r in rows:
        print(f"{r['process']:7s} {r['case']:18s} {r['triple']:2d} {r['slowed']:7.2f} {r['predicted']:9.2f} "
              f"{r['truth']:7.2f} {r['error']:+7.2f} {'ok' if r['ok'] else '-':3s} {r['own']:6.2f} "
              f"{r['error'] + r['own']:+7.2f} {r['spread']:6.2f}")
    for case in sorted({r["case"] for r in rows}):
        cr = [r for r in rows if r["case"] == case]
        e = [r["error"] for r in cr]
        eo = [r["error"] + r["own"] for r in cr]
        se = statistics.stdev(e) / len(e) ** 0.5 if len(e) > 1 else float("nan")
        mp, mt = statistics.mean(r["predicted"] for r in cr), statistics.mean(r["truth"] for r in cr)
        print(f"{case}: {len(cr)} triples; mean predicted {mp:.2f} ms, mean truth {mt:.2f} ms: "
              f"{mp - mt:+.2f} ms ({100 * (mp - mt) / mt:+.1f} %), standard error {se:.2f} ms; "
              f"{sum(r['ok'] for r in cr)} of {len(cr)} triples within max(1.5 ms, 5 %) "
              f"(the base blocks of a triple agree that well in {sum(r['noise_ok'] for r in cr)}); "
              f"mean own excess of the target's host {statistics.mean(r['own'] for r in cr):.2f} ms; "
              f"error + own {statistics.mean(eo):+.2f} ms; mean spread of the base blocks "
              f"{statistics.mean(r['spread'] for r in cr):.2f} ms")
    out = os.environ.get("REPEATS_JSON")
    if out:
        with open(out + ".tmp", "w") as f:
            json.dump(rows, f, indent=1)
        os.replace(out + ".tmp", out)


if __name__ == "__main__":
    main()
