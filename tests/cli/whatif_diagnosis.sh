#!/usr/bin/env bash
# The diagnosis weighs the join's late rank by the what-if
# (overlap/diagnosis.c reconcile_late; docs/metrics.md "Late rank against the
# what-if"): a late rank whose fix is worth nothing material is qualified in
# the headline, in analyze's terminal and JSON and in report's summary; a
# late rank whose fix is worth something is not.
. "$(dirname "$0")/lib.sh"
# a trace set we wrote: rank 7 sleeps 3 ms before every forward, but every
# host starts its step at a fixed time and the GPU idles most of the step,
# so the waiting it causes is absorbed
python3 bench/analyze_scale/gen.py "$T/tt" 8 --steps 4 --layers 2 || bad "gen.py failed"
"$A" analyze --json "$T/tt.json" "$T/tt" >"$T/tt.txt" 2>/dev/null || bad "analyze of the generated set failed"
jq -e '.across_ranks.late_rank == 7' "$T/tt.json" >/dev/null && ok ||
	bad "the join does not name rank 7: $(jq -c '.across_ranks.late_rank' "$T/tt.json")"
jq -e '.across_ranks.what_if.verdict | startswith("fixing") | not' "$T/tt.json" >/dev/null && ok ||
	bad "no fix should be material on the complete steps: $(jq -c '.across_ranks.what_if.verdict' "$T/tt.json")"
grep -q "diagnosis: .*rank 7 caused 100.0% of the waiting, yet the what-if finds no fix worth 1 % of a complete step" "$T/tt.txt" && ok ||
	bad "the diagnosis does not qualify late rank 7: $(grep diagnosis: "$T/tt.txt")"
# report's summary carries the same sentence
"$A" report --log-dir "$T/tt" --label tt --skip-steps 0 -o "$T/rep" >/dev/null 2>&1 || bad "report on the generated set failed"
jq -e '[.. | objects | .diagnosis_text? // empty | select(test("rank 7 caused .* yet the what-if finds no fix"))] | length > 0' \
	"$T/rep/summary.json" >/dev/null && ok || bad "report's summary.json lacks the qualified diagnosis"
# a late rank whose fix is worth something keeps its diagnosis unqualified
"$A" analyze "tests/data/straggler/ddp_const_r1" >"$T/c.txt" 2>/dev/null || bad "analyze ddp_const_r1 failed"
grep -q "diagnosis: fixing rank 1 would make the step" "$T/c.txt" && ! grep -q "yet fixing it" "$T/c.txt" && ok ||
	bad "ddp_const_r1: $(grep diagnosis: "$T/c.txt")"
# the run with nothing planted: rank 1 is named by its waiting, the what-if finds little in fixing it
"$A" analyze --json "$T/n.json" "tests/data/straggler/ddp_none" >"$T/n.txt" 2>/dev/null || bad "analyze ddp_none failed"
g=$(jq '[.across_ranks.what_if.by_rank[] | select(.rank == 1) | .gain_pct][0]' "$T/n.json")
if grep -q "rank 1 caused .* yet fixing it" "$T/n.txt"; then
	awk -v g="$g" 'BEGIN { exit !(g < 1) }' && ok || bad "ddp_none qualified although rank 1's gain is $g %"
else
	awk -v g="$g" 'BEGIN { exit !(g >= 1) }' && ok || bad "ddp_none: rank 1's gain $g % is immaterial but the diagnosis says nothing"
fi
echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
