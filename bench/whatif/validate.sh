#!/usr/bin/env bash
# bench/whatif/validate.sh [FIXTURES_DIR] - the what-if engine against the
# measured counterfactuals of tests/data/whatif/ (bench/whatif/run.sh): for each
# case, `aorta analyze --json` on the slowed run and on the base run, then
#  (a) the replay of the unmodified slowed run: the engine's own check
#      (replay_error_pct, the worst rank-step, within 3 %) and its per-step
#      replay_ms against the step measured by CUDA events (mean over ranks, as
#      the engine averages) within 3 %, every profiled step but the last (whose
#      trace window ends at its last kernel while the events run to the next
#      step's start);
#  (b) the prediction for the planted target (by_rank[R].step_ms_if_fixed, or
#      by_group "stage S" for a stage) against the base run's measured step
#      within max(1.5 ms, 5 %): the step as the engine defines one (per
#      profiled step the mean over ranks, then the mean over steps) from the
#      CUDA events of truth.json's measured.base.by_rank (for a --same-run
#      pair the mean over both base blocks); truth.json's
#      expected_step_ms_if_fixed (the median of the slowest rank's steps) is
#      printed beside it (med.slowest);
#      a fix the engine marks `ideal_unknown` (a stage without a peer outside
#      it) is no prediction: counted apart as "unknown", neither pass nor fail,
#      when the verdict says so too; so is a fix whose gain is within 2
#      standard errors of its per-step gains (gain_sem_ms: "noise", the
#      engine's summary says one run cannot tell it from noise).
# Prints one row per case and the base run's step as the engine measures it
# on the base traces (like for like with its prediction) and the base repeat
# (for a --same-run pair: the base block after the slowed one).
# Exit 0 when every case passes both or is an unknown or noise the engine reports, 1 otherwise.
#   AORTA_BIN=PATH (default ./build/aorta)   WHATIF_JSON=FILE: the rows as JSON
set -uo pipefail
cd "$(dirname "$0")/../.."
A=${AORTA_BIN:-./build/aorta}
D=${1:-tests/data/whatif}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
for c in "$D"/*/; do
	n=$(basename "$c")
	for run in slowed base; do
		if ! "$A" analyze -q --json "$T/$n.$run.json" "$c/$run" 2>"$T/$n.$run.err"; then
			echo "$n: analyze failed on $run: $(tail -1 "$T/$n.$run.err")" >&2
		fi
	done
done
python3 - "$D" "$T" "${WHATIF_JSON:-}" <<'PY'
import json, os, statistics, sys
d, t, jout = sys.argv[1:4]
rows, fails, unknown, noisy = [], 0, 0, 0


def mean_ms(m):
    """A run's step as aorta measures one: per profiled step the mean over ranks, then the mean."""
    steps = m.get("profiled_steps") or sorted(int(s) for s in m["by_rank"][0]["steps"])
    return statistics.mean(statistics.mean(r["steps"][str(s)] for r in m["by_rank"]) for s in steps)


hdr = (f"{'case':26s} {'target':8s} {'replay err':>10s} {'vs events':>9s}  {'predicted':>9s} {'truth':>7s} "
       f"{'error':>13s} {'ok':4s} {'base(aorta)':>11s} {'base rep':>8s} {'slowed':>7s} {'med.slowest':>11s}")
print(hdr)
for n in sorted(os.listdir(d)):
    tp = os.path.join(d, n, "truth.json")
    if not os.path.isfile(tp):
        continue
    tr = json.load(open(tp))
    row = {"case": n}
    try:
        a = json.load(open(os.path.join(t, n + ".slowed.json")))
        b = json.load(open(os.path.join(t, n + ".base.json")))
    except (OSError, ValueError) as e:
        print(f"{n:26s} analyze gave no JSON ({e})"); fails += 1; continue
    w = a["across_ranks"].get("what_if") or {}
    wb = b["across_ranks"].get("what_if") or {}
    if not w.get("ok"):
        print(f"{n:26s} no what-if: {w.get('reason')}"); fails += 1; continue
    # (a) replay: the engine's own worst rank-step, and its steps against the events
    ev = tr["measured"]["slowed"]["by_rank"]
    steps = tr["measured"]["slowed"].get("profiled_steps", tr["profiled_steps"])
    worst = 0.0
    by = {s["step"]: s for s in w["steps"]}
    for s in steps[:-1]:
        if s not in by:
            worst = float("inf"); continue
        truth = statistics.mean(r["steps"][str(s)] for r in ev)
        worst = max(worst, abs(by[s]["replay_ms"] - truth) / truth * 100)
    ok_a = w["replay_error_pct"] <= 3.0 and w["reproduced"] and worst <= 3.0
    # (b) the prediction for the target
    tg = tr["target"]
    if "fix" in tg:  # a fix by its name (the stage balance)
        fix = [x for x in w["by_rank"] + w.get("by_group", []) + w.get("by_op", []) if x["fix"] == tg["fix"]]
        label = "balance" if tg["fix"] == "the stage balance" else tg["fix"]
    elif "rank" in tg:
        fix = [x for x in w["by_rank"] if x["rank"] == tg["rank"]]
        label = f"rank {tg['rank']}"
    else:
        want = ",".join(map(str, tg["ranks"]))
        fix = [x for x in w.get("by_group", []) if x["fix"] == f"stage {tg['index']}" and x["ranks"] == want]
        label = f"stage {tg['index']}"
    # the truth: the base run's step as the engine defines a measured step (the
    # mean over profiled steps of the mean over ranks of the step windows:
    # wall time per step), from the CUDA events; --same-run: both base blocks'.
    # truth.json's expected_step_ms_if_fixed (per step the slowest rank's, their
    # median) is printed beside it: a per-step maximum over ranks is no step
    # time (its sum exceeds the run's wall time) and a jittery host lifts it.
    truth = statistics.mean(mean_ms(tr["measured"][r]) for r in ("base", "base_after") if r in tr["measured"])
    old_truth = tr["expected_step_ms_if_fixed"]
    unk = bool(fix and fix[0].get("ideal_unknown") and "ideal is unknown" in (w.get("verdict") or ""))
    noise = bool(fix and fix[0].get("gain_sem_ms") and fix[0]["gain_ms"] <= 2 * fix[0]["gain_sem_ms"])
    if fix:
        pred = fix[0]["step_ms_if_fixed"]
        err = pred - truth
        ok_b = abs(err) <= max(1.5, 0.05 * truth)
    else:
        pred, err, ok_b = None, None, False
    ok = ok_a and ok_b
    mb = tr["measured"]
    rep_ms = (mb["base_after"] if "base_after" in mb else mb["base"].get("repeat", {})).get("step_ms", float("nan"))
    unknown += ok_a and not ok_b and unk
    noisy += ok_a and not ok_b and noise and not unk
    fails += not ok and not (ok_a and (unk or noise))
    row.update(target=label, replay_error_pct=w["replay_error_pct"], replay_vs_events_pct=round(worst, 3),
               measured_step_ms=w["measured_step_ms"], replay_step_ms=w["replay_step_ms"],
               predicted_ms=pred, truth_base_ms=round(truth, 4), median_slowest_base_ms=old_truth, error_ms=None if err is None else round(err, 3),
               error_pct=None if err is None else round(100 * err / truth, 2),
               base_aorta_ms=wb.get("measured_step_ms"), base_repeat_ms=rep_ms,
               slowed_truth_ms=round(mean_ms(tr["measured"]["slowed"]), 4), verdict=w.get("verdict"),
               replay_ok=ok_a, prediction_ok=ok_b, ideal_unknown=fix[0].get("ideal_unknown") if fix else None,
               gain_ms=fix[0]["gain_ms"] if fix else None, gain_sem_ms=fix[0].get("gain_sem_ms") if fix else None)
    rows.append(row)
    e = "n/a" if err is None else f"{err:+.2f} ({100 * err / truth:+.1f}%)"
    p = "n/a" if pred is None else f"{pred:.2f}"
    ba = wb.get("measured_step_ms")
    print(f"{n:26s} {label:8s} {w['replay_error_pct']:9.2f}% {worst:8.2f}%  {p:>9s} {truth:7.2f} {e:>13s} "
          f"{'ok' if ok else 'unkn' if ok_a and unk else 'nois' if ok_a and noise else 'FAIL':4s} "
          f"{ba if ba is None else round(ba, 2)!s:>11s} "
          f"{rep_ms:8.2f} {mean_ms(tr['measured']['slowed']):7.2f} {old_truth:11.2f}")
print(f"{len(rows) - fails - unknown - noisy} of {len(rows)} cases pass (replay within 3 %, prediction within max(1.5 ms, "
      f"5 %)); {unknown} with an ideal the engine reports unknown (unkn); {noisy} whose gain the engine says one run "
      f"cannot tell from noise (nois: within 2 standard errors of its per-step gains); {fails} fail")
if jout:
    with open(jout + ".tmp", "w") as f:
        json.dump(rows, f, indent=1)
    os.replace(jout + ".tmp", jout)
sys.exit(1 if fails else 0)
PY
