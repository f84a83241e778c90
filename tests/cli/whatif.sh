#!/usr/bin/env bash
# The what-if (overlap/whatif.c) through the CLI: across_ranks.what_if
# survives a saved analysis read back (byte for byte), the replay of every
# real straggler fixture (tests/data/straggler) reproduces its measured step
# within 3 %, the planted late rank leads by_rank where a rank was slowed
# every step, and tests/data/whatif (device pairs: a base run and a slowed
# run, truth.json), when present, is checked as docs/metrics.md "What-if"
# says: the replay within 3 % of each run's measured step, and the step
# predicted from the slowed run's fix within max(1.5 ms, 5 %) of the base run.
. "$(dirname "$0")/lib.sh"
# round trip: analyze's JSON read back and written again is the same bytes
for d in tests/data/straggler/ddp_const_r1 tests/data/tiny; do
	"$A" analyze -q --json "$T/a.json" "$d" 2>/dev/null || { bad "analyze $d failed"; continue; }
	"$A" analyze -q --json "$T/b.json" "$T/a.json" 2>/dev/null || { bad "analyze of the saved $d failed"; continue; }
	if cmp -s <(jq 'del(.tool, .inputs, .ranks[].path)' "$T/a.json") <(jq 'del(.tool, .inputs, .ranks[].path)' "$T/b.json"); then
		ok; else bad "the saved analysis of $d does not read back to the same JSON"; fi
done
for d in tests/data/straggler/*/; do
	d=${d%/}
	"$A" analyze -q --json "$T/s.json" "$d" 2>/dev/null || { bad "analyze $d failed"; continue; }
	jq -e '.across_ranks.what_if.ok and .across_ranks.what_if.reproduced and
	       .across_ranks.what_if.replay_error_pct <= 3' "$T/s.json" >/dev/null &&
		ok || bad "$d: replay not within 3 %: $(jq -c '.across_ranks.what_if | {replay_error_pct, reason}' "$T/s.json")"
	case $d in *_const_r1)
		jq -e '.across_ranks.what_if.by_rank | max_by(.gain_ms) | .rank == 1' "$T/s.json" >/dev/null &&
			ok || bad "$d: rank 1 (slowed every step) is not the best fix";;
	esac
done
# compare: the what-ifs side by side
"$A" compare --json "$T/c.json" tests/data/straggler/ddp_none tests/data/straggler/ddp_const_r1 >"$T/c.txt" 2>/dev/null
grep -q "what-if (gain if fixed" "$T/c.txt" && ok || bad "compare shows no what-if"
jq -e '.comparisons[0].what_if.this.best_fix == "rank 1" and (.comparisons[0].what_if.this.slowdown > .comparisons[0].what_if.baseline.slowdown)' \
	"$T/c.json" >/dev/null && ok || bad "compare's what_if: $(jq -c '.comparisons[0].what_if.this' "$T/c.json")"
# report: a chart of the gains per run (where charts are drawn at all)
"$A" report --log-dir tests/data/straggler/ddp_const_r1 --label slowed --skip-steps 0 -o "$T/rep" >/dev/null 2>&1 ||
	bad "report on ddp_const_r1 failed"
if [ -f "$T/rep/slowed_timeline.png" ]; then
	[ -f "$T/rep/slowed_whatif.png" ] && grep -q "What-if: the step if fixed" "$T/rep/index.html" && ok ||
		bad "report draws no what-if chart"
fi
# device pairs (tests/data/whatif/CASE/{base,slowed}/, truth.json with target
# {"rank": R} or {"group": ..., "ranks": [...]} and expected_step_ms_if_fixed:
# the base run's measured step), when present
if [ -d tests/data/whatif ]; then
	for c in tests/data/whatif/*/; do
		c=${c%/}
		[ -f "$c/truth.json" ] && [ -d "$c/base" ] && [ -d "$c/slowed" ] || continue
		"$A" analyze -q --json "$T/base.json" "$c/base" 2>/dev/null &&
		"$A" analyze -q --json "$T/slow.json" "$c/slowed" 2>/dev/null || { bad "analyze $c failed"; continue; }
		python3 - "$c/truth.json" "$T/base.json" "$T/slow.json" >"$T/pair.log" 2>&1 <<'PY' && ok || bad "$c: $(cat "$T/pair.log")"
import json, sys
truth, base, slow = (json.load(open(p)) for p in sys.argv[1:])
wb, ws = base["across_ranks"]["what_if"], slow["across_ranks"]["what_if"]
errs = []
for name, w in (("base", wb), ("slowed", ws)):
    if not w.get("ok") or w["replay_error_pct"] > 3:
        errs.append(f"{name}: replay {w.get('replay_error_pct')} % off ({w.get('reason')})")
t = truth.get("target", {})
measured = truth.get("expected_step_ms_if_fixed")
fixes = ws.get("by_rank", []) + ws.get("by_group", [])
if "rank" in t:
    want = [f for f in fixes if f.get("rank") == t["rank"]]
else:
    ranks = ",".join(str(r) for r in sorted(t.get("ranks", [])))
    want = [f for f in fixes if f.get("ranks") == ranks]
if not want or measured is None:
    errs.append(f"no fix for the target {t} in the slowed run's what-if, or no expected step")
else:
    pred = want[0]["step_ms_if_fixed"]
    if abs(pred - measured) > max(1.5, 0.05 * measured):
        errs.append(f"fixing {want[0]['fix']} predicts {pred:.2f} ms, the base run measured {measured:.2f} ms")
print("; ".join(errs))
sys.exit(1 if errs else 0)
PY
	done
fi
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
