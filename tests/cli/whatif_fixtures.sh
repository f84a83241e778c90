#!/usr/bin/env bash
# The what-if validation fixtures of tests/data/whatif/ (bench/whatif/run.sh on
# 4 GPUs, make_fixtures.py --world 2 on 2; README.md there): every case has its
# truth.json (the target, what was planted, the step of both runs measured by
# CUDA events on every rank) and base/ and slowed/ with the traces of its
# world's ranks; `aorta analyze` reads each run (exit 0, every rank, the
# profiled steps) and its step windows agree with the
# truth's measured steps within max(0.5 ms, 2 %) on every rank and step but the
# last (the trace's last window ends at its last kernel; the truth adds the
# gap to the next step); where analyze has the what-if engine, its replay of
# each run reproduces every step within 3 %.  How well the engine predicts
# the fixed step is bench/whatif/validate.sh's business, not a test's.
# Ends with "N passed, N failed, 0 skipped".
. "$(dirname "$0")/lib.sh"
D=tests/data/whatif
n=0
for c in "$D"/*/; do
	c=${c%/}; name=$(basename "$c"); n=$((n + 1))
	if ! python3 - "$c/truth.json" <<'PY' >"$T/truth.log" 2>&1; then bad "$name: truth.json: $(tail -1 "$T/truth.log")"; continue; fi
import json, sys
t = json.load(open(sys.argv[1]))
W = t["world_size"]
assert W in (2, 4), "world_size"
tg = t["target"]
assert ("rank" in tg and 0 <= tg["rank"] < W) or (tg.get("group") == "stage" and tg["ranks"] in t["groups"]["stage"]) \
    or tg.get("fix") == "the stage balance", "target"
assert t["planted"]["slowed"] and t["planted"]["slowed"] != t["planted"]["base"], "nothing planted"
import statistics
same = "same_run" in t  # base, slowed, base_after: profiled blocks of one run (make_fixtures.py --same-run)
for run in ("base", "slowed") + (("base_after",) if same else ()):
    m = t["measured"][run]
    ps = m.get("profiled_steps", t["profiled_steps"])
    assert m["source"] == "cuda_events", "source"
    assert m["step_ms"] > 0 and sorted(map(int, m["steps"])) == ps, f"{run} steps"
    assert [r["rank"] for r in m["by_rank"]] == list(range(W)), f"{run} by_rank"
    for r in m["by_rank"]:
        assert sorted(map(int, r["steps"])) == ps, f"{run} rank {r['rank']} steps"
if same:
    b, s = t["measured"]["base"]["profiled_steps"], t["measured"]["slowed"]["profiled_steps"]
    assert b[-1] < s[0] < s[-1] < t["measured"]["base_after"]["profiled_steps"][0], "blocks out of order"
    both = list(t["measured"]["base"]["steps"].values()) + list(t["measured"]["base_after"]["steps"].values())
    assert abs(t["expected_step_ms_if_fixed"] - statistics.median(both)) < 1e-3, "expected_step_ms_if_fixed"
else:
    assert t["expected_step_ms_if_fixed"] == t["measured"]["base"]["step_ms"], "expected_step_ms_if_fixed"
PY
	ok
	W=$(jq -r .world_size "$c/truth.json")
	for run in base slowed; do
		for r in $(seq 0 $((W - 1))); do [ -f "$c/$run/rank$r.json.gz" ] || bad "$name/$run: no rank$r.json.gz"; done
		if ! "$A" analyze -q --json "$T/a.json" "$c/$run" 2>"$T/err"; then
			bad "$name/$run: analyze failed: $(tail -2 "$T/err")"; continue
		fi
		ok
		if python3 - "$T/a.json" "$c/truth.json" "$run" <<'PY' >"$T/cmp.log" 2>&1; then ok; else bad "$name/$run: $(tail -1 "$T/cmp.log")"; fi
import json, sys
a, t, run = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
assert len(a["ranks"]) == t["world_size"], f"{len(a['ranks'])} ranks"
bad = []
for r in a["ranks"]:
    win = {s["step"]: s["step_ms"] for s in r["steps"]}
    truth = t["measured"][run]["by_rank"][r["rank"]]["steps"]
    steps = t["measured"][run].get("profiled_steps", t["profiled_steps"])
    missing = [s for s in steps if s not in win]
    if missing:
        bad.append(f"rank {r['rank']}: steps {missing} not in the trace")
        continue
    for s in steps[:-1]:
        d = abs(win[s] - truth[str(s)])
        if d > max(0.5, 0.02 * truth[str(s)]):
            bad.append(f"rank {r['rank']} step {s}: trace {win[s]:.3f} ms, CUDA events {truth[str(s)]:.3f} ms")
# with the what-if engine (aorta.analysis/3 and later): the replay of the
# unmodified run reproduces it (docs/metrics.md "What-if"), every step within 3 %
w = a["across_ranks"].get("what_if")
if w is not None:
    if not w.get("ok"):
        bad.append(f"no what-if: {w.get('reason')}")
    elif not (w["reproduced"] and w["replay_error_pct"] <= 3.0 and w["steps_used"] == len(steps)):
        bad.append(f"replay off: {w['replay_error_pct']} % over {w['steps_used']} steps, reproduced {w['reproduced']}")
if bad:
    sys.exit("; ".join(bad))
PY
	done
done
[ "$n" -ge 13 ] && ok || bad "$n cases in $D, expected 13"
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
