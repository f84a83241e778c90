#!/usr/bin/env bash
# One truth: `aorta analyze`, `aorta report` and `aorta compare` read the
# same inputs through one way in and must say the same thing.  For each
# input (Kineto traces, aorta JSONL, a saved analysis of either) this runs
# all three and asserts:
#  - the same per-step means of step, compute, comm and exposed comm (ms,
#    to the 6 decimals the files carry): analyze --json's step_stats,
#    report's per-rank means (engine figures for traces; for JSONL, the
#    figures the run recorded, checked against analyze's "recorded"),
#    compare's baseline column (a run compared with itself: all "similar");
#  - the same diagnosis sentence: analyze's "diagnosis:" line, report's
#    stdout and summary.json, compare's verdict ("This run: ...");
#  - a saved analysis gives the same JSON back, byte for byte.
# Ends with "N passed, N failed, 0 skipped".
. "$(dirname "$0")/lib.sh"
[ -n "${KEEP_T:-}" ] && echo "kept: $T"

# figure means per rank as "rank key value" lines, 3 decimals
analyze_means() { # analysis.json
	jq -r '.ranks[] | .rank as $r | .step_stats | to_entries[] |
		select(.key == "step_ms" or .key == "compute_ms" or .key == "comm_ms" or .key == "exposed_comm_ms") |
		"\($r) \(.key) \(.value.mean * 1000 | round / 1000)"' "$1" | sort
}
report_means() { # summary.json label
	jq -r --arg l "$2" '.datasets[$l].per_rank[] | .rank as $r | to_entries[] |
		select(.key == "step_ms" or .key == "compute_ms" or .key == "comm_ms" or .key == "exposed_comm_ms") |
		"\($r) \(.key) \(.value * 1000 | round / 1000)"' "$1" | sort
}
compare_means() { # compare.json: the baseline column of a run against itself, averaged over ranks
	jq -r '.comparisons[0].ranks[] | .rank as $r | to_entries[] |
		select(.key == "step_ms" or .key == "compute_ms" or .key == "comm_ms" or .key == "exposed_comm_ms") |
		"\($r) \(.key) \(.value.baseline * 1000 | round / 1000)"' "$1" | sort
}
same() { # NAME FILE1 FILE2
	if [ -s "$2" ] && diff -q "$2" "$3" >/dev/null; then ok; else bad "$1:"; diff "$2" "$3" | head -n 8; fi
}

one() { # NAME INPUT SKIP KIND(traces|jsonl)
	local name=$1 in=$2 skip=$3 kind=$4 d="$T/$1"
	mkdir -p "$d"
	$A analyze --skip-steps "$skip" --json "$d/a.json" "$in" >"$d/analyze.txt" 2>"$d/analyze.err" ||
		{ bad "$name: analyze failed: $(tail -n 2 "$d/analyze.err")"; return; }
	$A report --skip-steps "$skip" --no-plots --log-dir "$in" --label run --output "$d/rep" \
		>"$d/report.txt" 2>"$d/report.err" || { bad "$name: report failed: $(tail -n 2 "$d/report.err")"; return; }
	$A compare --skip-steps "$skip" --json "$d/c.json" "$in" "$in" >"$d/compare.txt" 2>"$d/compare.err" ||
		{ bad "$name: compare failed: $(tail -n 2 "$d/compare.err")"; return; }
	# figures
	analyze_means "$d/a.json" >"$d/am"
	compare_means "$d/c.json" >"$d/cm"
	report_means "$d/rep/summary.json" run >"$d/rm"
	same "$name: analyze and compare, same figures" "$d/am" "$d/cm"
	# one figure, one name: report's per-rank figures are analyze's, for
	# JSONL too (what the JSONL recorded feeds upstream's keys only)
	same "$name: analyze and report, same figures" "$d/am" "$d/rm"
	if jq -e '[.comparisons[0].figures[] | select(.verdict != "similar")] | length == 0' "$d/c.json" >/dev/null; then
		ok; else bad "$name: a run compared with itself is not 'similar' everywhere"; fi
	# diagnosis: one sentence, everywhere
	local diag
	diag=$(sed -n 's/^ *diagnosis: //p' "$d/analyze.txt" | head -n 1)
	if [ -z "$diag" ]; then
		diag=$(jq -r '.datasets.run.diagnosis_text' "$d/rep/summary.json")
		[ "$(jq -r '.datasets.run.diagnosis' "$d/rep/summary.json")" = none ] && ok ||
			bad "$name: analyze prints no diagnosis but report has one: $diag"
	else
		grep -qF "diagnosis: $diag" "$d/report.txt" && ok || bad "$name: report's diagnosis is not analyze's: $diag"
		[ "$(jq -r '.datasets.run.diagnosis_text' "$d/rep/summary.json")" = "$diag" ] && ok ||
			bad "$name: summary.json's diagnosis is not analyze's"
		grep -qF "This run: $diag" "$d/compare.txt" && ok || bad "$name: compare's verdict does not name analyze's diagnosis"
		grep -qF "Diagnosis: $diag" "$d/rep/index.html" 2>/dev/null || grep -qF "$diag" "$d/rep/index.html" && ok ||
			bad "$name: index.html does not name the diagnosis"
	fi
	cp "$d/a.json" "$T/$name.analysis.json"
}

one fsdp2_traces data/h200x4/fsdp2_bs8 0 traces
one ddp_traces data/h200x4/aorta_ddp 0 traces
one ddp_jsonl 'data/h200x4/aorta_ddp/rank_*_metrics.jsonl' 5 jsonl
one tiny tests/data/tiny 0 traces
# a saved analysis is the same run again, for all three
one fsdp2_saved "$T/fsdp2_traces.analysis.json" 0 traces
one ddp_jsonl_saved "$T/ddp_jsonl.analysis.json" 5 jsonl
same "saved analysis read back and written again: byte-identical" "$T/fsdp2_traces.analysis.json" "$T/fsdp2_saved/a.json"
same "saved JSONL analysis read back: byte-identical" "$T/ddp_jsonl.analysis.json" "$T/ddp_jsonl_saved/a.json"

# the truths the issue names
grep -q "rank 3 was late: it caused 99.7% of the waiting" "$T/fsdp2_traces/report.txt" && ok || bad "fsdp2: the report does not name the late rank"
grep -q "because its host was busy" "$T/fsdp2_traces/report.txt" && ok || bad "fsdp2: the report does not name the host"
grep -q "97.6% of all ranks' collective time was waiting" "$T/fsdp2_traces/report.txt" && ok || bad "fsdp2: the report does not name waiting"
grep -q "aorta's keys from the traces (--prefer jsonl reads the JSONL instead)" "$T/ddp_traces/report.err" && ok || bad "ddp folder: report does not say it chose the traces"
grep -q "4 aorta metrics JSONL files beside them left out" "$T/ddp_traces/compare.err" && ok || bad "ddp folder: compare does not say it chose the traces"
grep -q "4 aorta metrics JSONL files beside them left out" "$T/ddp_traces/analyze.err" && ok || bad "ddp folder: analyze does not say it chose the traces"

# DDP -> FSDP2: the step got 53 % slower; less idle is not "better"
expect "ddp -> fsdp2: slower leads the verdict" 0 "The step is slower: 62.760 -> 96.272 ms" -- \
	$A compare data/h200x4/aorta_ddp data/h200x4/fsdp2_bs8
out=$($A compare data/h200x4/aorta_ddp data/h200x4/fsdp2_bs8 2>/dev/null)
printf '%s\n' "$out" | grep -E '^ +idle_ms .* lower$' >/dev/null && ok || bad "ddp -> fsdp2: idle not shown as 'lower'"
printf '%s\n' "$out" | grep -E ' better$' >/dev/null && bad "ddp -> fsdp2: something is 'better' though the step is slower" || ok
printf '%s\n' "$out" | grep -qiE 'nan|inf' && bad "compare prints nan/inf" || ok
printf '%s\n' "$out" | grep -q "This run: .*rank 3 was late" && ok || bad "compare does not name fsdp2's diagnosis"

# report's comparison verdict is compare's, word for word
$A report --log-dir data/h200x4/aorta_ddp --label ddp --log-dir data/h200x4/fsdp2_bs8 --label fsdp2 \
	--skip-steps 0 --no-plots --output "$T/d2f" >/dev/null 2>&1 || bad "report ddp -> fsdp2 failed"
cv=$(printf '%s\n' "$out" | sed -n 's/^ *verdict: //p')
rv=$(jq -r '.comparisons[0].verdict_text' "$T/d2f/summary.json")
[ -n "$cv" ] && [ "$cv" = "$rv" ] && ok || bad "report's comparison verdict differs from compare's: '$rv' vs '$cv'"

# a figure one run lacks is "absent", never better or worse: DDP has no
# reduce-scatter or all-gather, so their overlap is absent on its side
for f in reducescatter_overlap_ms allgather_overlap_ms; do
	jq -e --arg f $f '.comparisons[0].figures[] | select(.figure == $f) |
		.verdict == "absent" and .reference == null and .change_pct == null' "$T/d2f/summary.json" >/dev/null &&
		ok || bad "report: $f of DDP is not absent"
	jq -e --arg f $f '[.comparisons[0].per_rank[] | .[$f].verdict] | all(. == "absent")' "$T/d2f/summary.json" \
		>/dev/null && ok || bad "report: per-rank $f of DDP is not absent"
done
$A compare --json "$T/d2f.json" data/h200x4/aorta_ddp data/h200x4/fsdp2_bs8 >"$T/d2f.txt" 2>/dev/null
jq -e '[.comparisons[0].collectives[] | select(.type == "reduce_scatter") | .verdict == "absent" and
	.baseline_ms_per_call == null and .change_pct == null] | length > 0 and all' "$T/d2f.json" >/dev/null &&
	ok || bad "compare: DDP's missing reduce-scatter is not absent"
grep -E '^ +reduce_scatter +0 +[0-9]+ +absent +[0-9.]+ ms +- ' "$T/d2f.txt" >/dev/null && ok || bad "compare's table does not say absent"
grep -E -- '-100\.00%' "$T/d2f.txt" >/dev/null && bad "compare shows -100% for a collective one run lacks" || ok

# the regression that fails the gate is named with its size; a tiny change is not one
expect "regression named" 1 "regression in 'data/h200x4/fsdp2_bs8': step_ms worse by [+]33.511 ms" -- \
	$A compare --fail-on-regression 5 data/h200x4/aorta_ddp data/h200x4/fsdp2_bs8
# 6 us more communication, exposed (a saved analysis keeps to its rules: the
# exposed and overlapped parts add up to the communication)
jq '(.ranks[] | .steps[]) |= (.comm_ms += 0.006 | .exposed_comm_ms += 0.006) | (.ranks[] | .step_stats) |= {}' \
	"$T/tiny.analysis.json" >"$T/tiny_plus6us.json"
expect "a 6 us change is not a regression (--min-change-ms)" 0 "" -- \
	$A compare --fail-on-regression 1 "$T/tiny.analysis.json" "$T/tiny_plus6us.json"
expect "the floor can be lowered" 1 "comm_ms worse by [+]0.006 ms" -- \
	$A compare --fail-on-regression 1 --min-change-ms 0.001 "$T/tiny.analysis.json" "$T/tiny_plus6us.json"
expect "--fail-on-regression nan is a usage error" 2 "" -- \
	$A compare --fail-on-regression nan tests/data/tiny tests/data/tiny

# malformed analysis JSON: exit 3 naming the field (issue 20 item 7)
jq '.ranks[0].total.compute_ms = "abc"' "$T/tiny.analysis.json" >"$T/abc.json"
expect "figure 'abc' names the field" 3 "ranks\[0\].total.compute_ms: expected a number, got a string" -- \
	$A compare "$T/tiny.analysis.json" "$T/abc.json"
jq '.ranks[1].rank = null' "$T/tiny.analysis.json" >"$T/nullrank.json"
expect "null rank names the field" 3 "ranks\[1\].rank: expected an integer, got null" -- \
	$A compare "$T/tiny.analysis.json" "$T/nullrank.json"
expect "the same checks in report" 3 "ranks\[1\].rank" -- \
	$A report --log-dir "$T/nullrank.json" --label x --output "$T/nr"
jq '.schema = "aorta.analysis/9"' "$T/tiny.analysis.json" >"$T/v9.json"
expect "unknown schema version" 3 "expected 'aorta.analysis/1' to '/4'" -- \
	$A compare "$T/tiny.analysis.json" "$T/v9.json"

# --skip-steps beyond the steps: said and adapted, the host-bound count follows the skip
expect "analyze --skip-steps 10 on 3 steps says so" 0 "would leave none of the 3 steps" -- \
	$A analyze --skip-steps 10 data/h200x4/fsdp2_bs8
out=$($A analyze --skip-steps 1 data/h200x4/fsdp2_bs8 2>&1)
printf '%s\n' "$out" | grep -q "host-bound steps (host wait >= 30% of the step): 2 of 2 kept" && ok ||
	bad "host-bound count ignores --skip-steps"
expect "analyze -q without output is a usage error" 2 "nothing would come out" -- $A analyze -q tests/data/tiny

echo "$pass passed, $fail failed, 0 skipped"
[ "$fail" -eq 0 ]
